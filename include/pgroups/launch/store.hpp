#pragma once
/// \file
/// A key-value store that ranks meet in before they have any communicator: torch's TCP
/// store (TcpStoreClient, pgroups/launch/tcp_store.hpp) is the one implementation over a
/// network, PrefixStore puts every key of a user under one prefix (as torch's PrefixStore
/// and gloo's rendezvous PrefixStore do), so that attempts, generations and protocols
/// sharing one store never read each other's keys. The prefixes are named in
/// pgroups/launch/store_keys.hpp. Not copyable; a store is used by one thread at a time.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pgroups {

class Store {
 public:
  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  virtual ~Store() = default;

  virtual void set(std::string_view key, std::string_view value) = 0;
  /// Sets every key to its value: one request where the store's protocol has one (torch's
  /// MULTI_SET), else one set each.
  virtual void set_many(const std::vector<std::pair<std::string, std::string>>& values) {
    for (const auto& [key, value] : values) set(key, value);
  }
  /// The value of `key`, which must exist (wait for it first).
  [[nodiscard]] virtual std::string get(std::string_view key) = 0;
  /// The values of `keys`, which must all exist, in their order: one request where the
  /// store's protocol has one (torch's MULTI_GET), else one get each.
  [[nodiscard]] virtual std::vector<std::string> get_many(const std::vector<std::string>& keys) {
    std::vector<std::string> values;
    values.reserve(keys.size());
    for (const std::string& key : keys) values.push_back(get(key));
    return values;
  }
  /// Adds `delta` to the counter `key` (0 when absent); returns the new value.
  virtual std::int64_t add(std::string_view key, std::int64_t delta) = 0;
  /// Each add in order, their new values in that order: one round trip where the store's
  /// client can send them all before reading the answers (torch's protocol answers in
  /// order), else one add each.
  virtual std::vector<std::int64_t> add_many(const std::vector<std::pair<std::string, std::int64_t>>& deltas) {
    std::vector<std::int64_t> values;
    values.reserve(deltas.size());
    for (const auto& [key, delta] : deltas) values.push_back(add(key, delta));
    return values;
  }
  /// Whether every key exists now.
  [[nodiscard]] virtual bool check(const std::vector<std::string>& keys) = 0;
  /// Waits until every key exists; false when `timeout` (zero: no limit) passed first. The
  /// store stays usable after false: the wait is cancelled, not the connection.
  [[nodiscard]] virtual bool wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  /// Where the store is, for messages ("host:port").
  [[nodiscard]] virtual std::string address() const = 0;
};

/// Every key of `inner` under `prefix` (written as given: "pgroups/attempt0/world8/"
/// ends in its own '/'). `inner` must outlive it.
class PrefixStore final : public Store {
 public:
  PrefixStore(std::string prefix, Store& inner) : prefix_(std::move(prefix)), inner_(inner) {}

  void set(std::string_view key, std::string_view value) override { inner_.set(prefixed(key), value); }
  void set_many(const std::vector<std::pair<std::string, std::string>>& values) override {
    std::vector<std::pair<std::string, std::string>> out;
    out.reserve(values.size());
    for (const auto& [key, value] : values) out.emplace_back(prefixed(key), value);
    inner_.set_many(out);
  }
  [[nodiscard]] std::string get(std::string_view key) override { return inner_.get(prefixed(key)); }
  [[nodiscard]] std::vector<std::string> get_many(const std::vector<std::string>& keys) override {
    return inner_.get_many(prefixed(keys));
  }
  std::int64_t add(std::string_view key, std::int64_t delta) override { return inner_.add(prefixed(key), delta); }
  std::vector<std::int64_t> add_many(const std::vector<std::pair<std::string, std::int64_t>>& deltas) override {
    std::vector<std::pair<std::string, std::int64_t>> out;
    out.reserve(deltas.size());
    for (const auto& [key, delta] : deltas) out.emplace_back(prefixed(key), delta);
    return inner_.add_many(out);
  }
  [[nodiscard]] bool check(const std::vector<std::string>& keys) override { return inner_.check(prefixed(keys)); }
  [[nodiscard]] bool wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    return inner_.wait(prefixed(keys), timeout);
  }
  [[nodiscard]] std::string address() const override { return inner_.address(); }
  [[nodiscard]] const std::string& prefix() const noexcept { return prefix_; }

 private:
  [[nodiscard]] std::string prefixed(std::string_view key) const { return prefix_ + std::string(key); }
  [[nodiscard]] std::vector<std::string> prefixed(const std::vector<std::string>& keys) const {
    std::vector<std::string> out;
    out.reserve(keys.size());
    for (const std::string& key : keys) out.push_back(prefixed(key));
    return out;
  }

  std::string prefix_;
  Store& inner_;
};

}  // namespace pgroups
