// Definitions of the NCCL entry points pgroups::nccl's creation code calls; nccl.h
// declares them extern "C", which these definitions inherit.

#include "fake_nccl.hpp"

#include <algorithm>
#include <cstring>

struct ncclComm {
  int id = 0;
  int nranks = 1;
  int rank = 0;
  bool blocking = false;
  int polls_left = 0;
};

namespace fake_nccl {
namespace {

Script& script() {
  static Script value;
  return value;
}

int next_id = 1;

ncclComm* make_comm(int nranks, int rank, bool blocking) {
  auto* comm = new ncclComm{next_id++, nranks, rank, blocking, blocking ? 0 : script().polls_in_progress};
  record().live.insert(comm->id);
  return comm;
}

void end(ncclComm* comm, const char* what) {
  record().teardown.push_back(std::string(what) + " " + std::to_string(comm->id));
  record().live.erase(comm->id);
  delete comm;
}

}  // namespace

void reset(Script new_script) {
  script() = std::move(new_script);
  record() = Record{};
  next_id = 1;
}

void set_script(Script new_script) { script() = std::move(new_script); }

Record& record() {
  static Record value;
  return value;
}

}  // namespace fake_nccl

using fake_nccl::record;
using fake_nccl::script;

ncclResult_t ncclGetVersion(int* version) {
  *version = 22809;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  std::memset(id->internal, 7, sizeof id->internal);
  ++record().unique_ids;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t) { return "fake error string"; }

const char* ncclGetLastError(ncclComm_t) { return "fake last error"; }

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId, int rank, ncclConfig_t* config) {
  const bool blocking = config->blocking != 0;
  *comm = fake_nccl::make_comm(nranks, rank, blocking);
  record().creations.push_back({.call = "init",
                                .id = (*comm)->id,
                                .nranks = nranks,
                                .rank = rank,
                                .colour = 0,
                                .key = 0,
                                .blocking = config->blocking,
                                .split_share = 0});
  return blocking ? ncclSuccess : ncclInProgress;
}

ncclResult_t ncclCommSplit(ncclComm_t parent, int colour, int key, ncclComm_t* child, ncclConfig_t* config) {
  (void)parent;
  const int call = static_cast<int>(std::count_if(record().creations.begin(), record().creations.end(),
                                                  [](const fake_nccl::Creation& c) { return c.call == "split"; }));
  fake_nccl::Creation creation{.call = "split",
                               .id = 0,
                               .nranks = 0,
                               .rank = 0,
                               .colour = colour,
                               .key = key,
                               .blocking = config->blocking,
                               .split_share = config->splitShare};
  const ncclResult_t immediate = script().split_return ? script().split_return(call) : ncclSuccess;
  if (immediate != ncclSuccess) {
    *child = nullptr;
    record().creations.push_back(creation);
    return immediate;
  }
  if (colour == NCCL_SPLIT_NOCOLOR) {
    // As NCCL: the caller takes part and gets no communicator.
    *child = nullptr;
    record().creations.push_back(creation);
    return ncclSuccess;
  }
  const auto [size, rank] = script().split_shape ? script().split_shape(call, colour, key) : std::pair{1, 0};
  *child = fake_nccl::make_comm(size, rank, config->blocking != 0);
  creation.id = (*child)->id;
  record().creations.push_back(creation);
  return config->blocking != 0 ? ncclSuccess : ncclInProgress;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* state) {
  if (script().never_ready) {
    *state = ncclInProgress;
  } else if (comm->polls_left > 0) {
    --comm->polls_left;
    *state = ncclInProgress;
  } else {
    *state = script().outcome;
  }
  return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  record().teardown.push_back("finalize " + std::to_string(comm->id));
  if (comm->blocking) return ncclSuccess;
  comm->polls_left = script().polls_in_progress;
  return ncclInProgress;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  fake_nccl::end(comm, "destroy");
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  fake_nccl::end(comm, "abort");
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  *count = comm->nranks;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  *rank = comm->rank;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t, int* device) {
  *device = 0;
  return ncclSuccess;
}
