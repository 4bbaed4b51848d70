#include "pgroups/context/creation_steps.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace pgroups {

CreationStep creation_step(StepKind kind) {
  switch (kind) {
    case StepKind::duplicate: return {kind, "duplicate", "the duplication of the world communicator", std::nullopt};
    case StepKind::agreement: return {kind, "agreement", "the configuration agreement", std::nullopt};
    case StepKind::node: return {kind, "node", "the node query", std::nullopt};
    case StepKind::device: return {kind, "device", "the binding of a CUDA device", std::nullopt};
    case StepKind::nccl: return {kind, "nccl", "the creation of the NCCL communicators", std::nullopt};
    case StepKind::gloo: return {kind, "gloo", "the connection of the gloo groups", std::nullopt};
    case StepKind::group: break;
  }
  return {StepKind::group, "", "", std::nullopt};
}

std::vector<CreationStep> creation_steps(const Layout& layout, bool with_device) {
  std::vector<CreationStep> steps = {creation_step(StepKind::duplicate), creation_step(StepKind::agreement),
                                     creation_step(StepKind::node)};
  if (with_device) steps.push_back(creation_step(StepKind::device));
  const auto kinds = layout.group_kinds();
  for (std::size_t index = 0; index < kinds.size(); ++index) {
    const GroupKind& kind = kinds[index];
    // `global` is the duplicate of the world made by the first step.
    if (kind.mode == ParallelMode::global) continue;
    // The presets' kinds keep the words of Colossal-AI's modes in messages.
    steps.push_back({StepKind::group, kind.name,
                     fmt::format("the creation of {} {}", kind.mode ? "mode" : "group", kind.name), index});
  }
  if (with_device) steps.push_back(creation_step(StepKind::nccl));
  return steps;
}

std::vector<CreationStep> bootstrap_creation_steps(bool with_device, bool with_gloo) {
  std::vector<CreationStep> steps = {creation_step(StepKind::agreement), creation_step(StepKind::node)};
  if (with_device) steps.push_back(creation_step(StepKind::device));
  if (with_gloo) steps.push_back(creation_step(StepKind::gloo));
  if (with_device) steps.push_back(creation_step(StepKind::nccl));
  return steps;
}

const CreationStep* find_step(std::span<const CreationStep> steps, std::string_view name) noexcept {
  const auto found = std::find_if(steps.begin(), steps.end(), [name](const CreationStep& s) { return s.name == name; });
  return found == steps.end() ? nullptr : &*found;
}

std::string step_names(std::span<const CreationStep> steps) {
  std::string names;
  for (const CreationStep& step : steps) names += fmt::format("{}{}", names.empty() ? "" : ", ", step.name);
  return names;
}

}  // namespace pgroups
