#!/usr/bin/env bash
# The multi-rank section of the GPU check (scripts/gpu-check-multirank.sh) on a machine
# without a GPU: bad arguments exit 2 naming the value and the rule; with no GPU it prints
# its table, says why nothing ran and exits 0 (1 with --strict); with a GPU that nvidia-smi
# lists but CUDA cannot use (a stand-in nvidia-smi), the probe's own no-device exit is
# reported as not run and verify's failures as FAILED rows, exit 1.
# Usage: multirank_check_test.sh <repo root> <build dir>
set -uo pipefail
root=$1 build=$2
script="$root/scripts/gpu-check-multirank.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/pgroups-multirank-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT
failures=0
# expect <status> <regex> <arguments...>: runs the script, checks its exit status and output.
expect() {
  local want=$1 pattern=$2 out status
  shift 2
  out="$("$script" "$@" 2>&1)"
  status=$?
  last_output=$out
  if [[ $status != "$want" ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: gpu-check-multirank.sh $* exited $status (want $want), output lacks /$pattern/:"
    echo "$out" | sed 's/^/    /'
    failures=$((failures + 1))
  else
    echo "ok: gpu-check-multirank.sh $* -> $status"
  fi
}
expect 2 "--ranks '3': '3' is not an even rank count from 2 to 64" --ranks 3
expect 2 "'0' is not an even rank count" --ranks 2,0
expect 2 "'x' is not an even rank count" --ranks x
expect 2 "'66' is not an even rank count" --ranks 66
expect 2 "--timeout 'ten' is not a whole number of seconds" --timeout ten
expect 2 "--build needs a value" --build
expect 2 "unknown argument '--gpu'" --gpu
expect 0 "Usage: scripts/gpu-check-multirank.sh" --help

# No GPU: nvidia-smi missing or listing none.
mkdir -p "$work/nogpu" "$work/fakegpu"
printf '#!/bin/sh\nexit 9\n' >"$work/nogpu/nvidia-smi"
printf '#!/bin/sh\necho "GPU 0: Stand-in (UUID: GPU-0)"\n' >"$work/fakegpu/nvidia-smi"
chmod +x "$work/nogpu/nvidia-smi" "$work/fakegpu/nvidia-smi"
PATH="$work/nogpu:$PATH" expect 0 "^  - everything: no GPU visible" --build "$build" --ranks 2
PATH="$work/nogpu:$PATH" expect 1 "no GPU visible" --build "$build" --ranks 2 --strict
PATH="$work/nogpu:$PATH" expect 0 "\| ranks \| what \|" --build "$build"
PATH="$work/fakegpu:$PATH" expect 0 "everything: .*is not built" --build "$work/empty-build" --ranks 2

# A listed GPU that CUDA does not see: the probe exits 2 (not run), verify fails (rows).
# Only where no real GPU is there: with one, the probe would really run (gpu-check.sh's job).
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "a real GPU is visible: the stand-in GPU cases are left to scripts/gpu-check.sh"
elif [[ -x "$build/tests/nccl/nccl_multirank_probe" && -x "$build/cli/pgroups" ]]; then
  PATH="$work/fakegpu:$PATH" expect 1 "nccl_multirank_probe on 2 ranks: it found no GPU" \
    --build "$build" --ranks 2 --no-torch --timeout 60
  # verify's own no-device refusal: the backend status, 6, in each strategy's row.
  for strategy in create_group comm_split comm_create per_group; do
    if ! grep -qE "^\| 2 \| verify --backend nccl --mesh tp=2,dp=1 --strategy $strategy \| 2 \| +\|.*exit 6: FAILED \|$" \
        <<<"$last_output"; then
      echo "FAIL: no FAILED row with exit 6 for verify --strategy $strategy:"
      echo "$last_output" | sed 's/^/    /'
      failures=$((failures + 1))
    fi
  done
fi
echo "$(( 17 - failures )) passed, $failures failed"
((failures == 0))
