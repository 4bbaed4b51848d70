#pragma once
// A scripted stand-in for the NCCL host API, linked into nccl_fake_test in place of
// libnccl (an executable's own definitions win over a shared library's), so that the
// creation, polling, abort and destroy logic of pgroups::nccl runs on machines without
// a GPU. One process plays one rank: nothing is communicated; each call is recorded and
// answers what the test scripted.

#include <nccl.h>

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace fake_nccl {

/// A recorded creation call.
struct Creation {
  std::string call;  ///< "init" or "split"
  int id = 0;        ///< the created communicator's id (0 = none created)
  int nranks = 0;    ///< init: the size asked for
  int rank = 0;      ///< init: the rank asked for
  int colour = 0;    ///< split
  int key = 0;       ///< split
  int blocking = 0;  ///< ncclConfig_t::blocking
  int split_share = 0;
};

struct Script {
  /// ncclCommGetAsyncError answers ncclInProgress this many times for each communicator
  /// (after creation and after finalize) before its outcome.
  int polls_in_progress = 2;
  /// The state a communicator settles in.
  ncclResult_t outcome = ncclSuccess;
  /// Never settle (stays ncclInProgress): drives the timeout path.
  bool never_ready = false;
  /// The immediate return of the n-th split (0-based); ncclSuccess by default.
  std::function<ncclResult_t(int call)> split_return = {};
  /// The size and rank of the child of the n-th split; (1, 0) by default.
  std::function<std::pair<int, int>(int call, int colour, int key)> split_shape = {};
};

struct Record {
  std::vector<Creation> creations;
  /// "finalize <id>", "destroy <id>", "abort <id>", in call order.
  std::vector<std::string> teardown;
  int unique_ids = 0;
  std::set<int> live;  ///< ids of communicators neither destroyed nor aborted
};

/// Resets the script and the record; call at the start of every test.
void reset(Script script = {});
/// Replaces the script, keeping the record and the communicators alive.
void set_script(Script script);
Record& record();

}  // namespace fake_nccl
