#pragma once
/// \file
/// ContextOptions: how a ParallelContext builds its groups, as opposed to which groups
/// (ParallelConfig). An aggregate with defaults, so that callers set only what they
/// change and new options (a timeout, a backend, ...) can be added without breaking
/// them.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "pgroups/context/backend.hpp"
#include "pgroups/layout/creation_strategy.hpp"

namespace pgroups {

struct ContextOptions {
  /// How each group kind's communicator is created; every rank must pass the same one
  /// (checked with the configuration).
  CreationStrategy strategy = kDefaultCreationStrategy;
  /// This rank's device ordinal. When absent, ParallelContext::device() chooses one:
  /// global_rank % devices_per_node with the MPI backend, the node-local rank modulo the
  /// visible devices with NCCL (see there). May differ between ranks.
  std::optional<std::int64_t> device;
  /// Devices on each node; 0 means "one per process on the node" (what
  /// MPI_COMM_TYPE_SHARED reports). May differ between ranks. Used by
  /// ParallelContext::device() with the MPI backend only.
  std::int64_t devices_per_node = 0;
  /// The library of get_group's communicators. With Backend::nccl the context also binds
  /// a CUDA device and creates one NCCL communicator per group kind; MPI still bootstraps the
  /// job and serves get_cpu_group. NCCL needs a build with it (PGROUPS_WITH_NCCL) and a
  /// visible GPU on every rank. Every rank must pass the same backend (checked with the
  /// configuration).
  Backend backend = Backend::mpi;
  /// How long construction may wait for the other ranks, from its start to its end;
  /// destroy() gets as long again. Zero means no timeout. When absent, the
  /// PGROUPS_TIMEOUT environment variable (seconds) applies, else kDefaultTimeout, 300 s
  /// (resolve_timeout, pgroups/launch/timeout.hpp); after construction, options().timeout holds
  /// the timeout in effect. May differ between ranks. What a timeout does is described
  /// in parallel_context.hpp.
  std::optional<std::chrono::milliseconds> timeout;
  /// A program's own settings that must be the same on every rank, agreed on with the
  /// configuration by the same collective (a difference is a MismatchError on every
  /// rank, naming the texts): whatever decides which collectives the ranks run after
  /// construction, such as `pgroups verify --format`. Compared as one length-prefixed
  /// field of the agreement record (agreement_record, pgroups/context/parallel_context.hpp), so
  /// no text in it can pass for another setting. Empty (nothing extra) by default.
  std::string agreed_settings;
  /// Communicator economy (pgroups/layout/communicator_sharing.hpp): kinds with the same
  /// partition of the world share one communicator, a kind equal to the whole world uses
  /// the world's duplicate, and a kind of one-rank groups gets a local communicator (no
  /// collective; with NCCL none until asked for). Its one cost: operations on two kinds
  /// that share a communicator are ordered on it, so code driving them from different
  /// threads or streams must not rely on them overlapping. False: one communicator per
  /// kind, each created by the strategy. Every rank must pass the same value (agreed on
  /// with the configuration: it decides the collectives).
  bool share_communicators = true;
  /// Called on this rank just before each step of construction, with the step's name:
  /// the steps of creation_steps() (pgroups/context/creation_steps.hpp) in order, i.e.
  /// "duplicate", "agreement", "node", with the NCCL backend "device", then the name of
  /// each group kind after `global` ("data", "tp-dp", ...), and with NCCL "nccl" last.
  /// pgroups' one fault-injection hook: tests throw from it, `pgroups verify
  /// --inject-stall-rank/--inject-exit-rank --inject-step` stall or end a rank there; also
  /// for tracing. Empty by default. What it throws propagates from the constructor on this
  /// rank, after everything created so far was freed (the other ranks then wait for it,
  /// up to the timeout).
  std::function<void(std::string_view step)> before_step;
};

}  // namespace pgroups
