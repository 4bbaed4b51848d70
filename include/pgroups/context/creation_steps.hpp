#pragma once
/// \file
/// The steps of building a ParallelContext, in the order every rank runs them: the one
/// list that the context runs, and that the CLI (`--inject-step`, bench's per-step
/// times), fault injection (ContextOptions::before_step), the watchdog's messages and the
/// creation cost model read. Pure: no MPI or NCCL symbol.
///
/// The steps of a layout, in order:
///   duplicate  the world communicator is duplicated (it serves as the `global` group of
///              the presets, and as the parent of every other group);
///   agreement  every rank checks that all hold the same configuration;
///   node       the ranks of this node are counted (MPI_COMM_TYPE_SHARED);
///   device     NCCL backend only: each rank binds its CUDA device;
///   <kind>     one per group kind of the layout in creation order, named as the kind
///              ("data", "tensor", "tp-dp", "embd", ...), except `global`, which the
///              duplicate already made;
///   nccl       NCCL backend only: the NCCL world, then one split per group kind.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/layout/layout.hpp"

namespace pgroups {

/// What a step does.
enum class StepKind : std::uint8_t { duplicate, agreement, node, device, group, nccl, gloo };

struct CreationStep {
  StepKind kind = StepKind::duplicate;
  /// What ContextOptions::before_step receives and `--inject-step` accepts.
  std::string name;
  /// For messages, e.g. "the configuration agreement", "the creation of group tp-dp".
  std::string description;
  /// StepKind::group only: the index of the kind in Layout::group_kinds().
  std::optional<std::size_t> group_kind;
  /// Whether the step waits without blocking (duplicate, agreement: a late rank makes the
  /// others throw TimeoutError) rather than blocking inside MPI or NCCL (every later
  /// step, guarded by the watchdog).
  [[nodiscard]] bool waits_without_blocking() const noexcept {
    return kind == StepKind::duplicate || kind == StepKind::agreement;
  }
};

/// The step of `kind` other than StepKind::group (whose steps come from a layout), with
/// its name and description; StepKind::group gives an empty name. O(1).
[[nodiscard]] CreationStep creation_step(StepKind kind);

/// The steps of building a context for `layout`, with the device and nccl steps when
/// `with_device` (the NCCL backend). O(group kinds).
[[nodiscard]] std::vector<CreationStep> creation_steps(const Layout& layout, bool with_device = false);

/// The steps of building a context on a bootstrap: agreement, node, then with the NCCL
/// backend (`with_device`) device, then gloo (every gloo group connected at once) when
/// `with_gloo` (the gloo backend, or NCCL's CPU groups where gloo is built), then nccl.
/// O(1).
[[nodiscard]] std::vector<CreationStep> bootstrap_creation_steps(bool with_device, bool with_gloo);

/// The step named `name`, or nullptr. O(steps).
[[nodiscard]] const CreationStep* find_step(std::span<const CreationStep> steps, std::string_view name) noexcept;

/// "duplicate, agreement, node, data, ..." for messages.
[[nodiscard]] std::string step_names(std::span<const CreationStep> steps);

}  // namespace pgroups
