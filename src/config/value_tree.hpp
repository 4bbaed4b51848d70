#pragma once
// The neutral value tree that the three format readers produce, and the builder that
// bounds it. Internal to pgroups::config.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/common/printable.hpp"

namespace pgroups::detail {

/// Deepest nesting of tables and arrays (the top level counts as one) that any reader
/// accepts. Real configurations use three levels; the limit keeps every recursive step,
/// ours or a library's, far from the stack's end.
inline constexpr std::size_t kMaxNesting = 64;

/// The top-level entry that holds the settings.
inline constexpr std::string_view kParallelKey = "parallel";

/// The top-level entry that holds a named mesh (ParallelConfig::mesh).
inline constexpr std::string_view kMeshKey = "mesh";

/// The top-level entry that describes a cluster (pgroups/config/cluster_reader.hpp); kept
/// whole, to a depth of kMaxClusterDepth, by every reader, and ignored by the settings.
inline constexpr std::string_view kClusterKey = "cluster";
inline constexpr std::size_t kMaxClusterDepth = 7;
/// The most values a cluster table keeps (host names, levels, traffic entries).
inline constexpr std::size_t kMaxClusterValues = std::size_t{1} << 20;
/// The most entries `parallel.rank_map` keeps; a larger map is given by --rank-map FILE.
inline constexpr std::size_t kMaxRankMapEntries = std::size_t{1} << 20;

/// Whether a top-level key other than `parallel` is close enough to it to be a typo
/// ("parallell", "Parallel", "paralel"); never `mesh`. O(1): keys outside 6..12 bytes are never close.
[[nodiscard]] bool is_misspelled_parallel(std::string_view key);

/// 1-based line and byte column; 0 means "unknown".
struct SourcePosition {
  std::size_t line = 0;
  std::size_t column = 0;
};

/// "source:line:column: message", or "source: message" when the position is unknown.
[[nodiscard]] std::string located(std::string_view source, SourcePosition position, std::string_view message);

/// Throws ParseError(located(source, position, message)).
[[noreturn]] void throw_parse_error(std::string_view source, SourcePosition position, std::string_view message);

enum class ValueKind : std::uint8_t {
  null,
  boolean,
  integer,
  /// An integer literal outside int64; `text` holds its digits.
  big_integer,
  /// `text` holds its spelling.
  floating,
  string,
  /// Elements are kept (with empty keys) only for an array directly under a kept table,
  /// such as `mesh.groups`.
  array,
  table,
  /// TOML only.
  date_time,
};

struct ConfigEntry;

/// One value of a configuration, format-neutral.
struct ConfigValue {
  ValueKind kind = ValueKind::null;
  SourcePosition position;
  bool boolean = false;
  /// An integer's value; for a kept table or array, the number of its entries, kept or
  /// dropped (see ValueTreeBuilder).
  std::int64_t integer = 0;
  /// The string's value; the source spelling of a float or a big integer.
  std::string text;
  /// A table's entries in source order (see ValueTreeBuilder for which ones are kept).
  std::vector<ConfigEntry> entries;

  /// The entry named `key`, or nullptr.
  [[nodiscard]] const ConfigEntry* find(std::string_view key) const;
};

struct ConfigEntry {
  std::string key;
  SourcePosition key_position;
  ConfigValue value;
};

/// Which other top-level keys than `parallel` and `mesh` a file may hold.
enum class OtherTopLevelKeys : std::uint8_t {
  /// None: a TOML or JSON file holds pgroups' settings alone, so any other key is a
  /// mistake (`world_size` written above `[parallel]` in TOML is a top-level key).
  refused,
  /// A training run's other settings: a Colossal-AI .py config holds many. Only a
  /// misspelling of `parallel` is refused.
  allowed,
};

/// Builds a ConfigValue from a stream of events in document order, keeping only what
/// the `parallel` settings can use, so that memory stays bounded whatever the input:
///  - of the top-level table, only the entries `parallel` and `mesh` (a second one is a
///    ParseError) and, without its value, the first other key in document order
///    (OtherTopLevelKeys::refused) or the first that is_misspelled_parallel() (allowed);
///  - tables at depth 2 and 3 (`parallel`, `parallel.tensor`, `mesh`) keep their first
///    kMaxKeptEntries entries, rejecting duplicate keys; deeper tables keep none;
///  - arrays at depth 2 and 3 (`mesh.groups`) keep their first kMaxKeptEntries elements,
///    deeper ones none.
/// Opening a container deeper than kMaxNesting throws ParseError at its position,
/// before the reader recurses into it. Every method is O(kMaxKeptEntries) at most.
class ValueTreeBuilder {
 public:
  static constexpr std::size_t kMaxKeptEntries = 64;

  explicit ValueTreeBuilder(std::string_view source, OtherTopLevelKeys others = OtherTopLevelKeys::allowed)
      : source_(source), others_(others) {}

  /// Names the next value; only inside a table.
  void key(std::string_view key, SourcePosition position);
  /// A leaf value (any kind but table or array).
  void scalar(ConfigValue value);
  /// Opens a table or an array.
  void begin(ValueKind container, SourcePosition position);
  /// Closes the innermost open container.
  void end();
  /// The root value once every container is closed.
  [[nodiscard]] ConfigValue finish();

 private:
  struct Frame {
    ConfigValue* node;   // nullptr when this container is not kept
    bool keeps_entries;  // whether entries are stored in node->entries
    std::string path;    // dotted path of a kept table, for duplicate-key messages
    std::size_t cap = 0;     // the most entries kept
    bool in_cluster = false;  // inside the top-level `cluster` table
  };
  std::size_t cluster_values_ = 0;

  // Where the next value goes: a new kept node, or nullptr when it is dropped.
  ConfigValue* place_value(SourcePosition position);

  std::string_view source_;
  OtherTopLevelKeys others_;
  ConfigValue root_;
  bool has_root_ = false;
  std::vector<Frame> open_;
  std::string pending_key_;
  SourcePosition pending_key_position_;
  bool other_key_kept_ = false;
};

}  // namespace pgroups::detail
