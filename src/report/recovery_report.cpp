#include "pgroups/report/recovery_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/report/elided_list.hpp"
#include "pgroups/report/plan_report.hpp"

namespace pgroups::report {
namespace {

constexpr std::int64_t kShown = 8;
constexpr std::size_t kReplicasShown = 8;

std::int64_t old_size(const Recovery& r) {
  return r.old_layout().mesh().dims()[r.old_layout().mesh().dim_index(r.shrink_dim())].size;
}
std::int64_t new_size(const Recovery& r) {
  return r.layout().mesh().dims()[r.layout().mesh().dim_index(r.shrink_dim())].size;
}

std::string list_text(std::span<const std::int64_t> values) {
  return elided_list(static_cast<std::int64_t>(values.size()), [&](std::int64_t i) { return values[i]; }, kShown / 2);
}

// The lost ranks of each dropped replica, by the replica's coordinate.
std::map<std::int64_t, std::vector<std::int64_t>> lost_by_replica(const Recovery& r) {
  std::map<std::int64_t, std::vector<std::int64_t>> out;
  for (std::int64_t rank : r.lost()) out[r.replica_of(rank)].push_back(rank);
  return out;
}

// The surviving coordinates move down past each dropped one: a range per gap.
std::vector<std::string> moved_ranges(const Recovery& r) {
  std::vector<std::string> out;
  const auto dropped = r.dropped_replicas();
  const std::int64_t size = old_size(r);
  for (std::size_t j = 0; j < dropped.size(); ++j) {
    const std::int64_t from = dropped[j] + 1;
    const std::int64_t to = j + 1 < dropped.size() ? dropped[j + 1] - 1 : size - 1;
    if (from > to) continue;
    const auto shift = static_cast<std::int64_t>(j + 1);
    out.push_back(from == to ? fmt::format("{}={} -> {}", r.shrink_dim(), from, from - shift)
                             : fmt::format("{}={}..{} -> {}..{}", r.shrink_dim(), from, to, from - shift, to - shift));
  }
  return out;
}

}  // namespace

nlohmann::json recovery_bill_json(const Recovery& recovery, const BillOptions& bill) {
  const std::int64_t joined = recovery.added_replicas() * recovery.replica_size();
  const CommunicatorBill before = largest_communicator_bill(recovery.old_layout(), !bill.no_share);
  const CommunicatorBill after = largest_communicator_bill(recovery.layout(), !bill.no_share);
  return {{"ranks",
           {{"active", recovery.layout().world_size()},
            {"spare", recovery.spare_count()},
            {"lost", static_cast<std::int64_t>(recovery.lost().size())},
            {"joined", joined},
            {"renumbered", recovery.renumbered_count()}}},
          {"communicators_per_rank", {{"destroyed", before.created}, {"created", after.created}}}};
}

nlohmann::json recovery_json(const Recovery& recovery, const BillOptions& bill) {
  const std::int64_t w = recovery.layout().world_size();
  if (w > kMaxJsonWorldSize || recovery.spare_count() > kMaxJsonWorldSize) {
    throw ConfigError(
        fmt::format("the recovery of world size {} is too large for --format json (a rank map of {} and {} spares; at "
                    "most {} ranks "
                    "are enumerated); use --format text, or `pgroups explain --lost ... --rank R` for one rank",
                    recovery.old_layout().world_size(), w, recovery.spare_count(), kMaxJsonWorldSize));
  }
  return {
      {"rank_map", recovery.rank_map()},
      {"spares", recovery.spares()},
      {"lost", std::vector<std::int64_t>(recovery.lost().begin(), recovery.lost().end())},
      {"joining", std::vector<std::int64_t>(recovery.joining().begin(), recovery.joining().end())},
      {"shrink",
       {{"dim", recovery.shrink_dim()},
        {"old_size", old_size(recovery)},
        {"new_size", new_size(recovery)},
        {"replica_size", recovery.replica_size()},
        {"dropped", std::vector<std::int64_t>(recovery.dropped_replicas().begin(), recovery.dropped_replicas().end())},
        {"added", recovery.added_replicas()}}},
      {"recovery_bill", recovery_bill_json(recovery, bill)}};
}

namespace {

std::int64_t shrink_size(const Layout& layout, const std::string& dim) {
  for (const MeshDim& d : layout.mesh().dims()) {
    if (d.name == dim) return d.size;
  }
  return 1;
}

}  // namespace

std::string resize_text(const Layout& old_layout, const Resize& resize, std::int64_t world) {
  const std::int64_t used = resize.layout.world_size();
  std::string text =
      fmt::format("resize of world size {} to {} ranks: {} {} -> {} (a replica is {} rank{}); ",
                  old_layout.world_size(), world, resize.shrink_dim, shrink_size(old_layout, resize.shrink_dim),
                  resize.replicas, resize.replica_size, resize.replica_size == 1 ? "" : "s");
  if (resize.spares == 0) {
    text += fmt::format("all {} ranks run the layout\n", used);
  } else {
    text +=
        fmt::format("ranks 0-{} run the layout, spares: {} ({})\n", used - 1, resize.spares,
                    resize.spares == 1 ? fmt::format("rank {}", used) : fmt::format("ranks {}-{}", used, world - 1));
  }
  const std::int64_t old_size = shrink_size(old_layout, resize.shrink_dim);
  if (resize.splits_data) {
    text += fmt::format(
        "data: each replica of {} keeps its batch, so the global batch is {} replicas' (scale the per-replica batch "
        "by {} / {} to keep the old global batch)\n",
        resize.shrink_dim, resize.replicas, old_size, resize.replicas);
  } else {
    text += fmt::format(
        "model: {} splits the model, not the data, so the batch is unchanged; its weights go from {} parts to {} "
        "(load the checkpoint re-sharded for {}={})\n",
        resize.shrink_dim, old_size, resize.replicas, resize.shrink_dim, resize.replicas);
  }
  return text;
}

nlohmann::json resize_json(const Layout& old_layout, const Resize& resize, std::int64_t world) {
  return {{"resize",
           {{"world", world},
            {"dim", resize.shrink_dim},
            {"old_size", shrink_size(old_layout, resize.shrink_dim)},
            {"new_size", resize.replicas},
            {"replica_size", resize.replica_size},
            {"spares", resize.spares},
            {"first_spare", resize.layout.world_size()},
            {"splits", resize.splits_data ? "data" : "model"}}}};
}

std::string recovery_text(const Recovery& recovery, const BillOptions& bill) {
  const std::string& dim = recovery.shrink_dim();
  const std::int64_t r = recovery.replica_size();
  std::string text =
      fmt::format("recovery of world size {}: {} lost, {} joining; {} {} -> {} (a replica is {} rank{})\n",
                  recovery.old_layout().world_size(), recovery.lost().size(), recovery.joining().size(), dim,
                  old_size(recovery), new_size(recovery), r, r == 1 ? "" : "s");
  const auto by_replica = lost_by_replica(recovery);
  std::size_t shown = 0;
  for (const auto& replica : by_replica) {
    // Named copies: clang before 16 cannot capture a structured binding in a lambda.
    const auto& coordinate = replica.first;
    const auto& ranks = replica.second;
    if (shown++ == kReplicasShown) {
      text += fmt::format("  ... and {} more dropped replicas\n", by_replica.size() - kReplicasShown);
      break;
    }
    text += fmt::format("  dropped {}={}: ranks {}, lost {}\n", dim, coordinate,
                        elided_list(
                            r, [&](std::int64_t i) { return recovery.replica_member(coordinate, i); }, kShown / 2),
                        list_text(ranks));
  }
  if (recovery.added_replicas() > 0) {
    text += fmt::format("  added {}={}..{}: joining ranks {}\n", dim, new_size(recovery) - recovery.added_replicas(),
                        new_size(recovery) - 1,
                        list_text(recovery.joining().first(static_cast<std::size_t>(recovery.added_replicas() * r))));
  }
  if (recovery.spare_count() <= kMaxJsonWorldSize) {
    const std::vector<std::int64_t> spares = recovery.spares();
    text += fmt::format("spares: {} {}\n", spares.size(), list_text(spares));
  } else {
    text += fmt::format("spares: {} (the healthy ranks of the dropped replicas)\n", recovery.spare_count());
  }
  const std::vector<std::string> moved = moved_ranges(recovery);
  if (moved.empty()) {
    text += "moved: nothing (no surviving replica changes its coordinate)";
    // Under a placed layout the launcher's numbers give way to the new mesh ranks.
    const std::int64_t renumbered = recovery.renumbered_count();
    text += renumbered == 0 ? std::string("\n")
                            : fmt::format("; {} placed rank{} renumbered: the new ranks are mesh ranks\n", renumbered,
                                          renumbered == 1 ? "" : "s");
  } else {
    text += "moved: ";
    for (std::size_t i = 0; i < moved.size() && i < kReplicasShown; ++i) text += (i ? ", " : "") + moved[i];
    if (moved.size() > kReplicasShown) text += fmt::format(", and {} more", moved.size() - kReplicasShown);
    text += fmt::format(" ({} ranks renumbered; every other coordinate kept)\n", recovery.renumbered_count());
  }
  text += fmt::format(
      "rank map (new rank r is run by old rank): {}\n",
      elided_list(recovery.layout().world_size(), [&](std::int64_t i) { return recovery.old_rank(i); }, kShown / 2));
  const nlohmann::json counts = recovery_bill_json(recovery, bill);
  text += fmt::format(
      "bill: per surviving rank {} communicators destroyed, {} created; {} ranks kept with their processes and "
      "weights, {} spare, {} lost, {} joined\n",
      counts["communicators_per_rank"]["destroyed"].get<std::int64_t>(),
      counts["communicators_per_rank"]["created"].get<std::int64_t>(),
      recovery.layout().world_size() - counts["ranks"]["joined"].get<std::int64_t>(), recovery.spare_count(),
      recovery.lost().size(), counts["ranks"]["joined"].get<std::int64_t>());
  return text;
}

std::string recovery_rank_text(const Recovery& recovery, std::int64_t old_rank) {
  switch (recovery.fate(old_rank)) {
    case RankFate::lost: return fmt::format("old rank {} is lost\n", old_rank);
    case RankFate::spare: {
      if (old_rank >= recovery.old_layout().world_size()) {
        return fmt::format("joining rank {} is a spare: the joiners fill no further whole replica of {} ranks\n",
                           old_rank, recovery.replica_size());
      }
      return fmt::format("old rank {} is a spare: its replica {}={} lost a rank and was dropped\n", old_rank,
                         recovery.shrink_dim(), recovery.replica_of(old_rank));
    }
    case RankFate::active: break;
  }
  return fmt::format("old rank {} runs new rank {}\n", old_rank, *recovery.new_rank(old_rank));
}

nlohmann::json recovery_rank_json(const Recovery& recovery, std::int64_t old_rank) {
  const RankFate fate = recovery.fate(old_rank);
  const std::optional<std::int64_t> rank = recovery.new_rank(old_rank);
  return {{"old_rank", old_rank},
          {"fate", rank_fate_name(fate)},
          {"new_rank", rank ? nlohmann::json(*rank) : nlohmann::json(nullptr)}};
}

namespace {

// The bill of one class, from the recovery of its first node; nothing when no replica survives.
std::optional<std::pair<std::int64_t, std::int64_t>> class_bill(const Layout& layout, const NodeLossWhatIf& what_if,
                                                                const NodeLossClass& c, const BillOptions& bill) {
  if (c.new_size == 0) return std::nullopt;
  const Recovery recovery(layout, node_loss_request(c.first_node, what_if.gpus_per_node, what_if.shrink_dim));
  const nlohmann::json counts = recovery_bill_json(recovery, bill).at("communicators_per_rank");
  return std::pair{counts.at("destroyed").get<std::int64_t>(), counts.at("created").get<std::int64_t>()};
}

std::string range_text(std::int64_t low, std::int64_t high) {
  if (low < 0) return "not counted";
  return low == high ? std::to_string(low) : fmt::format("{}..{}", low, high);
}

}  // namespace

nlohmann::json what_if_json(const Layout& layout, const NodeLossWhatIf& what_if, const BillOptions& bill) {
  nlohmann::json classes = nlohmann::json::array();
  for (const NodeLossClass& c : what_if.classes) {
    const auto counts = class_bill(layout, what_if, c, bill);
    classes.push_back(
        {{"nodes", c.nodes},
         {"first_node", c.first_node},
         {"dropped", c.dropped},
         {"new_size", c.new_size},
         {"survives", c.new_size > 0},
         {"spares", c.spares},
         {"renumbered",
          c.renumbered_min < 0 ? nlohmann::json(nullptr) : nlohmann::json({c.renumbered_min, c.renumbered_max})},
         {"communicators_per_rank", counts ? nlohmann::json({{"destroyed", counts->first}, {"created", counts->second}})
                                           : nlohmann::json(nullptr)}});
  }
  return {{"what_if",
           {{"level", "node"},
            {"gpus_per_node", what_if.gpus_per_node},
            {"node_count", what_if.node_count},
            {"shrink",
             {{"dim", what_if.shrink_dim}, {"old_size", what_if.old_size}, {"replica_size", what_if.replica_size}}},
            {"classes", std::move(classes)}}}};
}

std::string what_if_text(const Layout& layout, const NodeLossWhatIf& what_if, const BillOptions& bill) {
  std::string text = fmt::format(
      "what if a node is lost: {} nodes of {} GPUs; {} {} (a replica is {} rank{}); {} class{} of outcome\n",
      what_if.node_count, what_if.gpus_per_node, what_if.shrink_dim, what_if.old_size, what_if.replica_size,
      what_if.replica_size == 1 ? "" : "s", what_if.classes.size(), what_if.classes.size() == 1 ? "" : "es");
  for (const NodeLossClass& c : what_if.classes) {
    const std::string nodes = fmt::format("  {} node{} (first: node {}), {} replica{} dropped: ", c.nodes,
                                          c.nodes == 1 ? "" : "s", c.first_node, c.dropped, c.dropped == 1 ? "" : "s");
    const auto counts = class_bill(layout, what_if, c, bill);
    if (!counts) {
      text += nodes + fmt::format("no layout remains (every replica of {} loses a rank)\n", what_if.shrink_dim);
      continue;
    }
    text += nodes + fmt::format(
                        "{} {} -> {}, {} spare{}, {} renumbered; per surviving rank {} communicators destroyed, {} "
                        "created\n",
                        what_if.shrink_dim, what_if.old_size, c.new_size, c.spares, c.spares == 1 ? "" : "s",
                        range_text(c.renumbered_min, c.renumbered_max), counts->first, counts->second);
  }
  return text;
}

}  // namespace pgroups::report
