// ParallelContext's per-rank queries: what each rank asks about its groups once they
// exist. No collective runs here (a one-rank NCCL communicator is made by this rank
// alone); construction and destruction are in parallel_context.cpp.
#include <fmt/format.h>

#include <string>
#include <string_view>

#include "device_groups.hpp"
#include "live_groups.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"

namespace pgroups {
namespace {

std::string destroyed_message(std::string_view kind_name) {
  return fmt::format("group {} is not initialized: the context was destroyed (or moved from)", kind_name);
}

[[noreturn]] void throw_no_pipeline_communicator(std::string_view kind_name) {
  throw StateError(
      fmt::format("there is no communicator of group {}: the pipeline size is 1, so none was created "
                  "(its queries answer for this rank alone)",
                  kind_name));
}

}  // namespace

CommunicatorBill ParallelContext::communicator_bill() const {
  if (!state_.layout) throw StateError("the context was moved from; it has no layout");
  return pgroups::communicator_bill(*state_.layout, state_.global_rank, state_.options.share_communicators);
}

RankView ParallelContext::view() const {
  if (destroyed()) throw StateError("the context was destroyed (or moved from); it has no view of its layout");
  return RankView(*state_.layout, state_.global_rank);
}

std::vector<std::string> ParallelContext::kind_names() const {
  std::vector<std::string> names;
  if (destroyed()) return names;
  for (const GroupKind& kind : state_.layout->group_kinds()) names.push_back(kind.name);
  return names;
}

std::vector<KindHandle> ParallelContext::kinds() const {
  std::vector<KindHandle> handles;
  if (destroyed()) return handles;
  const auto kinds = state_.layout->group_kinds();
  for (std::size_t index = 0; index < kinds.size(); ++index) {
    handles.push_back(KindHandle(kinds[index].name, index, state_.live->id()));
  }
  return handles;
}

// Colossal-AI's API speaks ParallelMode: the kinds that have one.
std::vector<ParallelMode> ParallelContext::modes() const {
  std::vector<ParallelMode> result;
  if (destroyed()) return result;
  for (const GroupKind& kind : state_.layout->group_kinds()) {
    if (kind.mode) result.push_back(*kind.mode);
  }
  return result;
}

bool ParallelContext::is_initialized(std::string_view kind_name) const noexcept {
  if (destroyed()) return false;
  try {
    return state_.layout->find_group_kind(kind_name).has_value();
  } catch (...) {
    return false;
  }
}

KindHandle ParallelContext::kind(std::string_view kind_name) const {
  if (destroyed()) throw StateError(destroyed_message(kind_name));
  const Layout& layout = *state_.layout;
  const std::optional<std::size_t> found = layout.find_group_kind(kind_name);
  // No pipeline: answered as Megatron-LM does, as a group of this rank alone.
  if (!found && kind_name == layout.pipeline_name() && layout.pipeline_size() == 1) {
    return {std::string(kind_name), KindHandle::kNoKind, state_.live->id()};
  }
  // StateError naming the kinds there are and the closest one.
  const std::size_t index = found ? *found : layout.group_kind_index(kind_name);
  return {layout.group_kinds()[index].name, index, state_.live->id()};
}

std::size_t ParallelContext::checked_index(const KindHandle& handle) const {
  if (destroyed()) throw StateError(destroyed_message(handle.name()));
  if (handle.context_ != state_.live->id()) {
    throw StateError(
        fmt::format("the handle of group {} belongs to another context (or to one since destroyed): "
                    "ask this context for it, kind(\"{}\")",
                    handle.name(), handle.name()));
  }
  return handle.index_;
}

bool ParallelContext::is_member(std::string_view kind_name) const { return is_member(kind(kind_name)); }

bool ParallelContext::is_member(const KindHandle& handle) const {
  const std::size_t index = checked_index(handle);
  return index == KindHandle::kNoKind || state_.live->groups[index].member;
}

ParallelContext::Resolved ParallelContext::resolve(const KindHandle& handle) const {
  const std::size_t index = checked_index(handle);
  if (index == KindHandle::kNoKind) return {handle.name(), nullptr, 0};
  const detail::KindGroup& entry = state_.live->groups[index];
  const std::string& name = state_.layout->group_kinds()[index].name;
  if (!entry.member) view().require_member(index);  // the view's StateError, naming the rank and the kind
  return {name, &entry, index};
}

std::int64_t ParallelContext::local_rank(std::string_view kind_name) const { return local_rank(kind(kind_name)); }

std::int64_t ParallelContext::local_rank(const KindHandle& handle) const {
  const Resolved found = resolve(handle);
  return found.group ? view().local_rank(found.kind) : 0;
}

std::int64_t ParallelContext::world_size(std::string_view kind_name) const { return world_size(kind(kind_name)); }

std::int64_t ParallelContext::world_size(const KindHandle& handle) const {
  const Resolved found = resolve(handle);
  return found.group ? view().size(found.kind) : 1;
}

GroupHandle ParallelContext::get_group(std::string_view kind_name) const { return get_group(kind(kind_name)); }

GroupHandle ParallelContext::get_group(const KindHandle& handle) const {
  const Resolved found = resolve(handle);
  if (!found.group) throw_no_pipeline_communicator(found.name);
  // The device side keys each kind by its index, as the MPI side does.
  if (state_.live->device_groups) return {found.name, state_.live->device_groups->comm(found.kind)};
  if (found.group->gloo) return {found.name, found.group->gloo};
  return {found.name, found.group->comm.get()};
}

GroupHandle ParallelContext::get_cpu_group(std::string_view kind_name) const { return get_cpu_group(kind(kind_name)); }

GroupHandle ParallelContext::get_cpu_group(const KindHandle& handle) const {
  const Resolved found = resolve(handle);
  if (!found.group) throw_no_pipeline_communicator(found.name);
  if (found.group->gloo) return {found.name, found.group->gloo};
  // A context on a bootstrap has MPI communicators of none: its CPU groups are gloo's.
  if (found.group->comm.is_null()) {
    throw StateError(fmt::format(
        "group {} has no CPU group: the context was built on a bootstrap with backend {}, and this pgroups has no "
        "gloo backend for CPU groups (reconfigure with -DPGROUPS_WITH_GLOO=ON, Debian's libgloo-dev)",
        found.name, backend_name(backend())));
  }
  return {found.name, found.group->comm.get()};
}

std::vector<std::int64_t> ParallelContext::ranks_in_group(std::string_view kind_name) const {
  return ranks_in_group(kind(kind_name));
}

std::vector<std::int64_t> ParallelContext::ranks_in_group(const KindHandle& handle) const {
  const Resolved found = resolve(handle);
  if (!found.group) return {state_.global_rank};
  return view().members(found.kind);
}

Neighbour ParallelContext::next_rank(std::string_view kind_name) const { return next_rank(kind(kind_name)); }

Neighbour ParallelContext::next_rank(const KindHandle& handle) const {
  const Resolved found = resolve(handle);
  if (!found.group) return {state_.global_rank, 0};
  const RankView mine = view();
  return {mine.next_rank(found.kind), (mine.local_rank(found.kind) + 1) % mine.size(found.kind)};
}

Neighbour ParallelContext::prev_rank(std::string_view kind_name) const { return prev_rank(kind(kind_name)); }

Neighbour ParallelContext::prev_rank(const KindHandle& handle) const {
  const Resolved found = resolve(handle);
  if (!found.group) return {state_.global_rank, 0};
  const RankView mine = view();
  const std::int64_t size = mine.size(found.kind);
  return {mine.previous_rank(found.kind), (mine.local_rank(found.kind) + size - 1) % size};
}

bool ParallelContext::is_first_rank(std::string_view kind_name) const { return is_first_rank(kind(kind_name)); }

bool ParallelContext::is_first_rank(const KindHandle& handle) const { return local_rank(handle) == 0; }

bool ParallelContext::is_last_rank(std::string_view kind_name) const { return is_last_rank(kind(kind_name)); }

bool ParallelContext::is_last_rank(const KindHandle& handle) const {
  const Resolved found = resolve(handle);
  return !found.group || view().is_last(found.kind);
}

std::int64_t ParallelContext::seed(std::string_view kind_name) const { return seed(kind(kind_name)); }

std::int64_t ParallelContext::seed(const KindHandle& handle) const {
  const Resolved found = resolve(handle);
  if (!found.group) return config().seed;
  return view().seed(found.kind);
}

double ParallelContext::creation_seconds(std::string_view kind_name) const { return creation_seconds(kind(kind_name)); }

double ParallelContext::creation_seconds(const KindHandle& handle) const {
  const double device_seconds = device_creation_seconds(handle);
  return state_.live->groups[handle.index_].creation_seconds + device_seconds;
}

double ParallelContext::device_creation_seconds(std::string_view kind_name) const {
  return device_creation_seconds(kind(kind_name));
}

double ParallelContext::device_creation_seconds(const KindHandle& handle) const {
  const std::size_t index = checked_index(handle);
  // Nothing was created for a pipeline that is not there: the name is no kind.
  if (index == KindHandle::kNoKind) (void)state_.layout->group_kind_index(handle.name());
  if (!state_.live->device_groups) return 0.0;
  return state_.live->device_groups->creation_seconds(index);
}

std::vector<GroupCheck> ParallelContext::check_device_groups() {
  if (destroyed()) throw StateError("the context was destroyed (or moved from); there are no device groups to check");
  if (!state_.live->device_groups) {
    throw StateError(fmt::format("the context has no device groups to check: its backend is {}, not nccl",
                                 backend_name(state_.options.backend)));
  }
  return state_.live->device_groups->check(*state_.layout, state_.global_rank);
}

std::int64_t ParallelContext::pipeline_stage() const {
  if (destroyed()) throw StateError("the context was destroyed (or moved from); it has no pipeline stage");
  // The pipeline coordinate, whether or not a pipeline group kind was created.
  return view().pipeline_stage();
}

bool ParallelContext::is_pipeline_first_stage(bool ignore_virtual) const {
  const std::int64_t stage = pipeline_stage();
  if (!ignore_virtual && !state_.virtual_pipeline.runs_first_chunk()) return false;
  return stage == 0;
}

bool ParallelContext::is_pipeline_last_stage(bool ignore_virtual) const {
  const std::int64_t stage = pipeline_stage();
  if (!ignore_virtual && !state_.virtual_pipeline.runs_last_chunk()) return false;
  return stage == state_.layout->pipeline_size() - 1;
}

void ParallelContext::set_virtual_pipeline_parallel_size(std::optional<std::int64_t> size) {
  state_.virtual_pipeline.set_size(size);
}

void ParallelContext::set_virtual_pipeline_parallel_rank(std::int64_t rank) { state_.virtual_pipeline.set_rank(rank); }

std::int64_t ParallelContext::device() const noexcept {
  if (state_.bound_device) return *state_.bound_device;
  if (state_.options.device) return *state_.options.device;
  const std::int64_t per_node =
      state_.options.devices_per_node > 0 ? state_.options.devices_per_node : state_.processes_on_node;
  return state_.global_rank % per_node;
}

}  // namespace pgroups
