#include "pgroups/report/plan_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_json.hpp"
#include "pgroups/report/elided_list.hpp"
#include "pgroups/report/output_size.hpp"

namespace pgroups::report {

nlohmann::json plan_json(const Layout& layout) {
  const std::int64_t w = layout.world_size();
  if (w > kMaxJsonWorldSize) {
    throw ConfigError(
        fmt::format("world size {} is too large for --format json (at most {} ranks are enumerated); "
                    "use --format text, or `pgroups explain --rank R` for one rank",
                    w, kMaxJsonWorldSize));
  }
  // Two values per rank and kind: a tree node each, and their text.
  check_output_estimate("the JSON plan", w, static_cast<std::int64_t>(layout.group_kinds().size()), kJsonBytesPerCell);
  nlohmann::json modes = nlohmann::json::object();
  for (std::size_t kind = 0; kind < layout.group_kinds().size(); ++kind) {
    nlohmann::json local = nlohmann::json::array();
    nlohmann::json sizes = nlohmann::json::array();
    const std::int64_t size = layout.group_size(kind);
    const bool partial = layout.group_kinds()[kind].partial;
    for (std::int64_t rank = 0; rank < w; ++rank) {
      // A rank outside every group of a partial kind (embd) has neither.
      if (partial && !layout.is_member(rank, kind)) {
        local.push_back(nullptr);
        sizes.push_back(nullptr);
        continue;
      }
      local.push_back(layout.local_rank(rank, kind));
      sizes.push_back(size);
    }
    // "world_size" is the deprecated spelling of "group_size", kept for one release.
    modes[layout.group_kinds()[kind].name] = {{"groups", layout.groups(kind)},
                                              {"local_rank", std::move(local)},
                                              {"group_size", sizes},
                                              {"world_size", sizes}};
  }
  // "modes" is the deprecated spelling of "kinds" (docs/reference/spec.md §4), kept for one release.
  return {{"schema_version", kSchemaVersion},
          {"config", config_json(layout)},
          {"data_parallel_size", layout.data_parallel_size()},
          {"kinds", modes},
          {"modes", modes}};
}

namespace {

constexpr std::int64_t kGroupsShown = 6;

std::size_t name_width(const Layout& layout) {
  std::size_t width = 20;
  for (const GroupKind& kind : layout.group_kinds()) width = std::max(width, kind.name.size());
  return width;
}

}  // namespace

nlohmann::json plan_document_json(const Layout& layout, const std::optional<LocalityReport>& locality,
                                  const BillOptions& bill) {
  nlohmann::json json = plan_json(layout);
  if (locality) json["locality"] = locality_json(*locality);
  add_bill_json(json, layout, bill);
  return json;
}

std::string plan_document_text(const Layout& layout, const std::optional<LocalityReport>& locality,
                               const BillOptions& bill) {
  std::string text = plan_text(layout);
  if (locality) text += '\n' + locality_text(*locality);
  return text + '\n' + bill_text(layout, bill);
}

std::string plan_text(const Layout& layout) {
  std::string out = fmt::format("world size {} = {}\n", layout.world_size(), layout.summary());
  for (const GroupKind& kind : layout.group_kinds()) {
    if (!kind.note.empty()) out += fmt::format("{}: {}\n", kind.name, kind.note);
  }
  const std::size_t width = name_width(layout);
  out += fmt::format("\n{:<{}} {:>10} {:>10}  groups (ascending by first rank)\n", "kind", width, "groups", "size");
  for (std::size_t kind = 0; kind < layout.group_kinds().size(); ++kind) {
    const std::int64_t count = layout.group_count(kind);
    const std::int64_t size = layout.group_size(kind);
    auto group_text = [&](std::int64_t g) {
      const std::int64_t leader = layout.group_leader(kind, g);
      return elided_list(size, [&](std::int64_t i) { return layout.group_member(leader, kind, i); });
    };
    out +=
        fmt::format("{:<{}} {:>10} {:>10}  {}\n", layout.group_kinds()[kind].name, width, count, size, group_text(0));
    // Eliding a single group would save nothing: show up to kGroupsShown + 2 in full.
    const std::int64_t shown = count <= kGroupsShown + 2 ? count : kGroupsShown;
    const std::size_t indent = width + 23;
    for (std::int64_t g = 1; g < shown; ++g) out += fmt::format("{:<{}}  {}\n", "", indent, group_text(g));
    if (count > shown) {
      out += fmt::format("{:<{}}  ... {} more\n", "", indent, count - shown - 1);
      out += fmt::format("{:<{}}  {}\n", "", indent, group_text(count - 1));
    }
  }
  return out;
}

std::string explain_text(const Layout& layout, std::int64_t rank) {
  std::string coords;
  for (const Coordinate& c : layout.coordinates(rank)) {
    coords += fmt::format("{}{}={}/{}", coords.empty() ? "" : " ", c.name, c.value, c.size);
  }
  const std::size_t width = name_width(layout);
  std::string out =
      fmt::format("rank {} of {} ({})\ncoordinates: {}\n\n{:<{}} {:>12} {:>12}  group\n", rank, layout.world_size(),
                  describe(layout.config()), coords, "kind", width, "local rank", "size");
  for (std::size_t kind = 0; kind < layout.group_kinds().size(); ++kind) {
    const std::string& name = layout.group_kinds()[kind].name;
    if (!layout.is_member(rank, kind)) {
      out += fmt::format("{:<{}} {:>12} {:>12}  not a member\n", name, width, "-", "-");
      continue;
    }
    const std::int64_t size = layout.group_size(kind);
    out += fmt::format("{:<{}} {:>12} {:>12}  {}\n", name, width, layout.local_rank(rank, kind), size,
                       elided_list(size, [&](std::int64_t i) { return layout.group_member(rank, kind, i); }));
  }
  return out;
}

nlohmann::json explain_json(const Layout& layout, std::int64_t rank) {
  constexpr std::int64_t kMembersKept = 32;
  nlohmann::json coords = nlohmann::json::object();
  for (const Coordinate& c : layout.coordinates(rank)) coords[c.name] = c.value;
  nlohmann::json modes = nlohmann::json::object();
  for (std::size_t kind = 0; kind < layout.group_kinds().size(); ++kind) {
    const std::string& name = layout.group_kinds()[kind].name;
    if (!layout.is_member(rank, kind)) {
      modes[name] = {{"member", false}};
      continue;
    }
    const std::int64_t size = layout.group_size(kind);
    nlohmann::json entry = {{"local_rank", layout.local_rank(rank, kind)},
                            {"group_size", size},
                            {"world_size", size},
                            {"group_index", layout.group_index(rank, kind)}};
    auto members = [&](std::int64_t from, std::int64_t to) {
      nlohmann::json list = nlohmann::json::array();
      for (std::int64_t i = from; i < to; ++i) list.push_back(layout.group_member(rank, kind, i));
      return list;
    };
    if (size <= 2 * kMembersKept) {
      entry["group"] = members(0, size);
    } else {
      entry["group_first"] = members(0, kMembersKept);
      entry["group_last"] = members(size - kMembersKept, size);
    }
    modes[name] = std::move(entry);
  }
  return {{"schema_version", kSchemaVersion},
          {"rank", rank},
          {"config", config_json(layout)},
          {"coordinates", coords},
          {"kinds", modes},
          {"modes", modes}};
}

}  // namespace pgroups::report
