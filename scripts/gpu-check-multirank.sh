#!/usr/bin/env bash
# gpu-check-multirank.sh: real multi-rank NCCL on one GPU (docs/using/gpu-kit.md), the part of
# scripts/gpu-check.sh that one GPU could not show before NCCL let several ranks share a
# device (NCCL_MULTI_RANK_GPU_ENABLE=1; the libnccl of the nvidia-nccl-cu13 wheels 2.30.7
# and 2.32.3 names the variable, which is what this script checks, not a version).
#
# For each rank count (default 2 and 4), all ranks on one GPU:
#   - nccl_multirank_probe: world init, the halves by ncclCommSplit (splitShare 1 and 0)
#     and by ncclCommInitRankConfig (split against init time, slowest rank), each checked
#     by an all-reduce of the global ranks, with ncclCommMemStats (NCCL 2.29+) beside the
#     model's estimate;
#   - `pgroups verify --backend nccl` with every --strategy, and once with --no-share
#     (creation time as verify reports it, every group checked by an NCCL all-reduce);
#   - with the machine's torch: create_groups(plan, backend="nccl"), which must take
#     torch's split_group path, an all-reduce on each of its groups, and
#     device_mesh(plan, "cuda") (scripts/gpu-multirank-torch.py under torchrun). Where
#     torch's own NCCL lacks multi-rank support, the build's libnccl is preloaded.
# Prints one table (paste-able Markdown) and, below it, what could not run and why.
#
# Usage: scripts/gpu-check-multirank.sh [--build DIR] [--ranks 2,4] [--python PY] [--no-torch]
#                                       [--timeout S] [--strict]
#   --build DIR   the build with the NCCL backend (default $PGROUPS_GPU_BUILD_DIR or <repo>/build-gpu)
#   --ranks LIST  comma-separated rank counts, each an even number from 2 to 64
#   --python PY   the interpreter with torch (default python3); its pgroups module must be
#                 built in DIR/python (PYTHONPATH), else the torch rows are reported not run
#   --no-torch    leave torch out
#   --timeout S   time limit of each launched job, seconds (default 180)
#   --strict      exit 1 when something could not run (a missing GPU included)
# Exit status: 0 every row that ran is ok (with --strict: and nothing was left out);
#   1 a row failed; 2 bad arguments.

set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PGROUPS_GPU_BUILD_DIR:-$root/build-gpu}"
ranks_arg="2,4"
python=python3
torch=1
limit=180
strict=0
usage() { echo "gpu-check-multirank.sh: $1 (try --help)" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --build|--ranks|--python|--timeout)
      (($# >= 2)) && [[ -n "$2" ]] || usage "$1 needs a value"
      case "$1" in
        --build) build="$2" ;;
        --ranks) ranks_arg="$2" ;;
        --python) python="$2" ;;
        --timeout) limit="$2" ;;
      esac
      shift 2 ;;
    --no-torch) torch=0; shift ;;
    --strict) strict=1; shift ;;
    -h|--help) sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage "unknown argument '$1'" ;;
  esac
done
[[ "$limit" =~ ^[1-9][0-9]{0,3}$ ]] || usage "--timeout '$limit' is not a whole number of seconds from 1 to 9999"
ranks=()
IFS=',' read -r -a ranks_list <<<"$ranks_arg"
for n in "${ranks_list[@]}"; do
  # Even: the probe's halves and the torch mesh tp=2 need it.
  if [[ ! "$n" =~ ^[1-9][0-9]?$ ]] || ((n < 2 || n > 64 || n % 2)); then
    usage "--ranks '$ranks_arg': '$n' is not an even rank count from 2 to 64"
  fi
  ranks+=("$n")
done
((${#ranks[@]})) || usage "--ranks '$ranks_arg' names no rank count"

rows=()
not_run=()
failed=0
add_row() { rows+=("$1"); [[ "$1" == *"|ok"* || "$1" == *"|ok:"* ]] || failed=1; }
skip() { not_run+=("$1"); echo "NOT RUN: $1"; }

print_table() {
  printf '\n=== multi-rank NCCL on one GPU\n'
  echo "| ranks | what | comm size | time s (slowest) | NCCL MiB (MemStats) | model MiB | result |"
  echo "|---|---|---|---|---|---|---|"
  local row
  for row in "${rows[@]+"${rows[@]}"}"; do
    IFS='|' read -r -a f <<<"$row"
    echo "| ${f[1]:-} | ${f[2]:-} | ${f[3]:-} | ${f[4]:-} | ${f[5]:-} | ${f[6]:-} | ${f[7]:-} |"
  done
  ((${#rows[@]})) || echo "| | (nothing ran) | | | | | |"
  if ((${#not_run[@]})); then
    echo
    echo "Not run:"
    for row in "${not_run[@]}"; do echo "  - $row"; done
  fi
}
finish() {
  print_table
  if ((failed)); then exit 1; fi
  if ((strict && ${#not_run[@]})); then exit 1; fi
  exit 0
}

# --- what is there ---------------------------------------------------------------------
probe="$build/tests/nccl/nccl_multirank_probe"
cli="$build/cli/pgroups"
if ! command -v mpirun >/dev/null 2>&1; then
  skip "everything: no mpirun on PATH"
  finish
fi
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then gpus="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)"; fi
if ((gpus == 0)); then
  skip "everything: no GPU visible (nvidia-smi -L lists none, or there is no nvidia-smi)"
  finish
fi
if [[ ! -x "$probe" ]]; then
  skip "everything: $probe is not built (a build with the NCCL backend and MPI)"
  finish
fi
libnccl="$(ldd "$probe" 2>/dev/null | awk '/libnccl/ {print $3; exit}')"
if [[ -z "$libnccl" || ! -f "$libnccl" ]]; then
  skip "everything: $probe does not resolve libnccl (ldd)"
  finish
fi
if ! grep -q NCCL_MULTI_RANK_GPU_ENABLE "$libnccl"; then
  skip "everything: $libnccl has no NCCL_MULTI_RANK_GPU_ENABLE, so it refuses two ranks on one GPU"
  finish
fi
export NCCL_MULTI_RANK_GPU_ENABLE=1
echo "libnccl: $libnccl; GPUs: $gpus; rank counts: ${ranks[*]}"

# run_job <log> <command...>: runs under timeout, output into <log> and on the terminal.
run_job() {
  local log="$1"
  shift
  echo "+ $*"
  timeout "$limit" "$@" 2>&1 | tee "$log"
  return "${PIPESTATUS[0]}"
}
work="$(mktemp -d "${TMPDIR:-/tmp}/pgroups-multirank.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mpi=(mpirun --oversubscribe --mca mpi_yield_when_idle 1 -x NCCL_MULTI_RANK_GPU_ENABLE)

for n in "${ranks[@]}"; do
  # --- the probe ---------------------------------------------------------------------------
  run_job "$work/probe$n" "${mpi[@]}" -np "$n" "$probe"
  status=$?
  while IFS= read -r line; do add_row "$line"; done < <(grep '^row|' "$work/probe$n")
  if ((status == 2)); then
    skip "nccl_multirank_probe on $n ranks: it found no GPU or too few ranks (see its output)"
  elif ((status != 0)) && ! grep -q '^row|' "$work/probe$n"; then
    add_row "row|$n|nccl_multirank_probe||||exit $status: FAILED"
  fi

  # --- pgroups verify, every strategy ------------------------------------------------------
  if [[ -x "$cli" ]]; then
    for variant in create_group comm_split comm_create per_group no-share; do
      args=(--strategy "$variant")
      [[ "$variant" == no-share ]] && args=(--no-share)
      run_job "$work/verify$n$variant" "${mpi[@]}" -np "$n" "$cli" verify --backend nccl --mesh "tp=2,dp=$((n / 2))" "${args[@]}"
      status=$?
      seconds="$(sed -n 's/.* in \([0-9.]*\) s (slowest rank).*/\1/p' "$work/verify$n$variant" | head -n1)"
      result="ok"
      ((status == 0)) || result="exit $status: FAILED"
      add_row "row|$n|verify --backend nccl --mesh tp=2,dp=$((n / 2)) ${args[*]}|$n|$seconds|||$result"
    done
  else
    skip "pgroups verify on $n ranks: no CLI at $cli"
  fi

  # --- torch ----------------------------------------------------------------------------------
  if ((!torch)); then
    continue
  fi
  if ! "$python" -c 'import torch, torch.distributed' >/dev/null 2>&1; then
    skip "torch on $n ranks: $python has no torch"
    continue
  fi
  if ! PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" "$python" -c 'import pgroups.torch' >/dev/null 2>&1; then
    skip "torch on $n ranks: no pgroups module for $python in $build/python (configure with -DPGROUPS_BUILD_PYTHON=ON -DPython_EXECUTABLE=$python)"
    continue
  fi
  # torch's own libnccl may predate multi-rank support: preload the build's where it does.
  preload=""
  torch_nccl="$("$python" -c 'import glob, os, torch
d = os.path.dirname(torch.__file__)
c = glob.glob(os.path.join(d, "lib", "libnccl*")) + glob.glob(os.path.join(d, "..", "nvidia", "nccl", "lib", "libnccl*"))
print(c[0] if c else "")' 2>/dev/null)"
  if [[ -n "$torch_nccl" ]] && ! grep -q NCCL_MULTI_RANK_GPU_ENABLE "$torch_nccl"; then preload="$libnccl"; fi
  if [[ -z "$torch_nccl" ]] && ! grep -q NCCL_MULTI_RANK_GPU_ENABLE "$("$python" -c 'import torch; print(torch._C.__file__)')"; then
    preload="$libnccl"  # linked statically into torch without multi-rank support: ours comes first
  fi
  [[ -n "$preload" ]] && echo "torch's NCCL (${torch_nccl:-static}) lacks NCCL_MULTI_RANK_GPU_ENABLE: preloading $preload"
  run_job "$work/torch$n" env ${preload:+LD_PRELOAD="$preload"} PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" \
    "$python" -m torch.distributed.run --standalone --nproc-per-node "$n" "$root/scripts/gpu-multirank-torch.py"
  status=$?
  while IFS= read -r line; do add_row "$line"; done < <(grep '^row|' "$work/torch$n")
  if ((status != 0)) && ! grep -q '^row|' "$work/torch$n"; then
    add_row "row|$n|torch (gpu-multirank-torch.py)||||exit $status: FAILED"
  fi
done
finish
