#!/usr/bin/env bash
# The recovery-time table of docs/using/recovery.md: each way of going on after a SIGKILLed
# rank, run side by side on this machine, timed from the kill to the first training step
# completed after it (each example prints that time on every rank that trains on; the
# least is taken). Needs the build (build/python) and scripts/install-venv.sh's two
# environments. Usage: scripts/recovery-times.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-2}
export PYTHONPATH=$PWD/build/python GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

first_step() {  # the least "... done X s after ..." of a log
  grep -o "done [0-9.]* s after" "$1" | awk '{print $2}' | sort -n | head -1
}

row() {  # row NAME COMMAND...: the command run $runs times, its times
  local name=$1
  shift
  local times=()
  for ((i = 0; i < runs; i++)); do
    rm -rf "$work/checkpoint"
    timeout 300 "$@" > "$work/log" 2>&1 || { echo "| $name | failed: see below |"; tail -5 "$work/log"; return; }
    times+=("$(first_step "$work/log")")
  done
  echo "| $name | ${times[*]} |"
}

echo "| way (8 ranks, tp=2 x dp=4 unless said) | kill to the first step after it, s (each run) |"
echo "|---|---|"
row "torchrun --max-restarts 1 (every rank restarted)" \
  .venv/bin/torchrun --standalone --nproc-per-node 8 --max-restarts 1 python/examples/torchrun_restart.py \
  --checkpoint "$work/checkpoint" --dp 4 --kill-rank 3 --kill-step 3
row "pgroups.torch.recover under the example's parent, --timeout 10" \
  .venv/bin/python python/examples/elastic_training.py --nproc 8 --kill-rank 3 --kill-step 3 --timeout 10
row "pgroups.torch.recover under the example's parent, --timeout 4" \
  .venv/bin/python python/examples/elastic_training.py --nproc 8 --kill-rank 3 --kill-step 3 --timeout 4
row "nvidia-resiliency-ext in-process restart, pgroups.inprocess, soft timeout 10 s" \
  .venv-resiliency/bin/python python/examples/inprocess_training.py --nproc 8 --kill-rank 3 --timeout 10
row "nvidia-resiliency-ext in-process restart, pgroups.inprocess, soft timeout 4 s" \
  .venv-resiliency/bin/python python/examples/inprocess_training.py --nproc 8 --kill-rank 3 --timeout 4
row "torchft, 2 replica groups of tp=2 (4 ranks): the surviving group's next step" \
  .venv-resiliency/bin/python python/examples/torchft_training.py
