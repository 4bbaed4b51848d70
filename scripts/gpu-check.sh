#!/usr/bin/env bash
# gpu-check.sh: the checks that need a GPU, for a machine with at least one.
#
# Configures and builds pgroups with the NCCL backend (-DPGROUPS_WITH_NCCL=ON) into
# build-gpu (only the targets below), runs the NCCL tests, the context's NCCL tests and
# the info tests (ctest -R 'Nccl|Info|context_nccl') with PGROUPS_REQUIRE_GPU=1 so that
# a missing device fails instead of skipping, then `pgroups info`,
# `mpirun -np 1 pgroups verify --backend nccl` and, where the CLI has it,
# `mpirun -np 1 pgroups bench --backend nccl --repeats 3`, and nccl_memory_probe (each
# communicator's device memory against the model of docs/developing/performance.md), then
# scripts/gpu-check-multirank.sh: 2 and 4 ranks on the one GPU (NCCL_MULTI_RANK_GPU_ENABLE=1),
# one table. Under eight minutes on one GPU with 16 cores; every step has its own time limit. Installs
# nothing: it expects the toolchain and libraries the README lists, the CUDA toolkit with
# NCCL, and an MPI; scripts/gpu-kit-run.sh brings those to a machine that has only CUDA
# and PyTorch (docs/using/gpu-kit.md).
#
# What one GPU can and cannot show. One GPU means one NCCL rank (NCCL refuses two ranks
# of one communicator on one device), so this checks: that the CUDA runtime, the driver
# and NCCL load and agree (pgroups info); the creation path (device binding, the NCCL
# world from an MPI-broadcast unique id, one ncclCommSplit per mode, each a split of a
# one-rank world); the plumbing of the ncclAllReduce check (device buffer, stream,
# polling); destroy order and leak-free teardown; and that every case which needs a GPU
# really ran. Where NCCL has NCCL_MULTI_RANK_GPU_ENABLE (2.32 does), several ranks share
# the GPU, and the multi-rank section shows what one rank could not: that a split puts the
# right ranks together and sums over several ranks are right, split against init time,
# each communicator's memory, torch's split_group path. Where it has not, that section
# says so and runs nothing.
#
# Usage: scripts/gpu-check.sh [--strict]
#   --strict   also fail when a CLI check is missing (not only when a check fails)
# Environment: PGROUPS_GPU_BUILD_DIR (default <repo>/build-gpu), PGROUPS_JOBS (default
#   nproc), CMAKE_ARGS (extra configure arguments, split on spaces), PGROUPS_GPU_RANKS
#   (default 2,4), PGROUPS_GPU_PYTHON (the interpreter with torch; default python3).
# Exit status: 0 all present checks passed; 1 a check failed (or, with --strict, is
#   missing); 2 a required tool is missing.

set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PGROUPS_GPU_BUILD_DIR:-$root/build-gpu}"
jobs="${PGROUPS_JOBS:-$(nproc 2>/dev/null || echo 4)}"
strict=0
for arg in "$@"; do
  case "$arg" in
    --strict) strict=1 ;;
    -h|--help) sed -n '2,35p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

passed=()
failed=()
missing=()
step() { printf '\n=== %s\n' "$*"; }
pass() { passed+=("$1"); echo "PASS: $1"; }
fail() { failed+=("$1"); echo "FAIL: $1" >&2; }
miss() { missing+=("$1"); echo "MISSING: $1"; }

summary() {
  printf '\n=== summary (%ss)\n' "$SECONDS"
  local item
  for item in "${passed[@]+"${passed[@]}"}"; do echo "  passed:  $item"; done
  for item in "${missing[@]+"${missing[@]}"}"; do echo "  missing: $item"; done
  for item in "${failed[@]+"${failed[@]}"}"; do echo "  FAILED:  $item"; done
  if ((${#failed[@]} > 0)); then exit 1; fi
  if ((strict && ${#missing[@]} > 0)); then exit 1; fi
  exit 0
}

# --- tools -----------------------------------------------------------------------------
step "tools"
for tool in cmake ctest mpirun; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "gpu-check.sh: '$tool' is not on PATH; install the packages the README lists" >&2
    exit 2
  fi
done
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
mpirun_flags=(-np 1)
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  # Open MPI refuses root unless told; containers often run as root.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
echo "cmake: $(cmake --version | head -n1); mpirun: $(mpirun --version 2>&1 | head -n1)"
echo "build dir: $build; jobs: $jobs"

# --- GPU -------------------------------------------------------------------------------
step "GPU"
if command -v nvidia-smi >/dev/null 2>&1; then
  if nvidia-smi -L; then pass "nvidia-smi lists a GPU"; else fail "nvidia-smi -L (is the driver loaded?)"; fi
else
  miss "nvidia-smi (not on PATH; the NCCL tests still tell whether CUDA sees a device)"
fi

# --- configure and build ---------------------------------------------------------------
step "configure (PGROUPS_WITH_NCCL=ON)"
# shellcheck disable=SC2206  # CMAKE_ARGS is a space-separated list by design
extra=(${CMAKE_ARGS:-})
if cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DPGROUPS_WITH_NCCL=ON \
    "${extra[@]+"${extra[@]}"}"; then
  pass "configure with NCCL"
else
  fail "configure with -DPGROUPS_WITH_NCCL=ON (is NCCL installed? set NCCL_ROOT)"
  summary
fi

step "build the NCCL backend, the CLI and their tests"
targets=(pgroups_nccl nccl_unit_test nccl_gpu_test nccl_verify_cli_test context_nccl_test info_test pgroups
         nccl_memory_probe nccl_multirank_probe)
# The Python module, for the torch rows of the multi-rank section, where it is configured.
if cmake --build "$build" --target help 2>/dev/null | grep -q '^pgroups_python:'; then targets+=(pgroups_python); fi
if cmake --build "$build" -j "$jobs" --target "${targets[@]}"; then
  pass "build ${targets[*]}"
else
  fail "build of the NCCL targets"
  summary
fi

# --- tests -----------------------------------------------------------------------------
step "NCCL tests (ctest -R 'Nccl|Info|context_nccl')"
if PGROUPS_REQUIRE_GPU=1 ctest --test-dir "$build" -R 'Nccl|Info|context_nccl' --output-on-failure --timeout 120; then
  pass "ctest -R 'Nccl|Info|context_nccl' (GPU required)"
else
  fail "ctest -R 'Nccl|Info|context_nccl'"
fi

# NCCL with no MPI in the job: `pgroups verify --backend nccl` on the environment's
# bootstrap (the unique id through its TCP store), one rank started by hand as
# Kubernetes would, every NCCL communicator checked by its all-reduce.
step "NCCL on the env bootstrap (no MPI): verify --backend nccl, one rank by hand"
if env RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29561 \
    timeout 120 "$build/cli/pgroups" verify --backend nccl --bootstrap env --mesh tp=1 --timeout 60; then
  pass "verify --backend nccl --bootstrap env"
else
  fail "verify --backend nccl --bootstrap env"
fi

# --- NCCL memory: model against measurement (docs/developing/performance.md) ---------
# One GPU holds one NCCL rank: the probe measures the one-rank world, three splits of it
# with and without splitShare, and a one-rank communicator made alone, each by
# cudaMemGetInfo before, after creation and after a first ncclAllReduce, with
# NCCL_RUNTIME_CONNECT as set (both values when unset), against the model's figure.
step "NCCL memory per communicator (model against measurement)"
probe="$build/tests/nccl/nccl_memory_probe"
if [[ -x "$probe" ]]; then
  connects=("${NCCL_RUNTIME_CONNECT:-}")
  if [[ -z "${NCCL_RUNTIME_CONNECT:-}" ]]; then connects=(1 0); fi
  probe_ok=1
  for connect in "${connects[@]}"; do
    if ! NCCL_RUNTIME_CONNECT="$connect" timeout 120 "$probe"; then probe_ok=0; fi
  done
  if ((probe_ok)); then pass "nccl_memory_probe"; else fail "nccl_memory_probe"; fi
  # The model's figure for a layout, for comparison (no MPI, no GPU needed).
  "$build/cli/pgroups" plan --mesh tp=8,cp=1,ep=1,dp=16,pp=8 \
    --group tp,cp,ep,dp,pp,tp-pp,tp-dp,dp-cp,tp-cp,embd --backend nccl --gpus-per-node 8 | tail -n 2 || true
else
  miss "nccl_memory_probe (not built)"
fi

# --- CLI -------------------------------------------------------------------------------
step "CLI"
cli="$build/cli/pgroups"

# `pgroups info` needs no mpirun; with a GPU it must count at least one.
if [[ -x "$cli" ]]; then
  echo "+ $cli info"
  if info="$(timeout 60 "$cli" info)"; then
    echo "$info"
    if grep -qE '^  gpus: +[1-9][0-9]* visible' <<<"$info"; then
      pass "pgroups info (sees a GPU)"
    else
      fail "pgroups info ran, but reports no visible GPU"
    fi
  else
    fail "pgroups info (exit status $?)"
  fi
else
  miss "pgroups info (no CLI binary at $build/cli/pgroups)"
fi

# cli_check <subcommand> <with mpirun: 0|1> [extra arguments...]: runs
# `pgroups <subcommand> --backend nccl [extra...]` when the subcommand exists and has a
# --backend option, and says which part is missing otherwise.
cli_check() {
  local sub="$1" under_mpi="$2" help
  shift 2
  if [[ -z "$cli" || ! -x "$cli" ]]; then
    miss "pgroups $sub --backend nccl (no CLI binary at $build/cli/pgroups)"
    return
  fi
  # `pgroups <unknown> --help` prints the top-level help and succeeds, so look for the
  # subcommand in that list first.
  if ! "$cli" --help 2>&1 | grep -qE "^[[:space:]]+$sub([[:space:]]|$)"; then
    miss "pgroups $sub (the CLI has no '$sub' subcommand yet)"
    return
  fi
  if ! help="$("$cli" "$sub" --help 2>&1)"; then
    fail "pgroups $sub --help (exit status $?)"
    return
  fi
  if ! grep -q -- "--backend" <<<"$help"; then
    miss "pgroups $sub --backend (the '$sub' subcommand has no --backend option yet)"
    return
  fi
  local command=("$cli" "$sub" --backend nccl "$@")
  if ((under_mpi)); then command=(mpirun "${mpirun_flags[@]}" "${command[@]}"); fi
  echo "+ ${command[*]}"
  if timeout 120 "${command[@]}"; then
    pass "${command[*]}"
  else
    fail "${command[*]} (exit status $?)"
  fi
}

cli_check verify 1
cli_check bench 1 --repeats 3

# --- several ranks on one GPU (scripts/gpu-check-multirank.sh) ------------------------
# NCCL_MULTI_RANK_GPU_ENABLE=1: 2 and 4 ranks share the GPU, so splits really group
# several ranks, sums run over several, split and init times and each communicator's
# memory (ncclCommMemStats) are measured, and torch's split_group path runs. One table.
step "multi-rank NCCL on one GPU (scripts/gpu-check-multirank.sh)"
multirank=("$root/scripts/gpu-check-multirank.sh" --build "$build" --ranks "${PGROUPS_GPU_RANKS:-2,4}" --timeout 150
           --python "${PGROUPS_GPU_PYTHON:-python3}")
((strict)) && multirank+=(--strict)
if timeout 420 "${multirank[@]}"; then
  pass "multi-rank NCCL on one GPU (the table above; 'Not run' lists what was left out)"
else
  fail "multi-rank NCCL on one GPU (the table above)"
fi

summary
