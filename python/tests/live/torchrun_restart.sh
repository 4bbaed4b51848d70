#!/usr/bin/env bash
# A training loop under torchrun's own restart resumes from its checkpoint with the
# reference losses (python/examples/torchrun_restart.py, which exits 1 on any other loss):
#  1. --standalone --max-restarts 1, four ranks, rank 1 SIGKILLed at step 3: the same
#     layout again (torch's own default group fails this restart on torch 2.13);
#  2. --nnodes 1:2, two agents of two ranks each on this host (two nodes to torchrun's
#     c10d rendezvous), rank 2's whole agent killed at step 3: the surviving node restarts
#     alone and the job goes on as Plan.resized gives it, tp 2 x dp 1.
# Usage: torchrun_restart.sh TORCHRUN EXAMPLE
set -euo pipefail
torchrun=$1
example=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

expect() {  # expect FILE PATTERN: the pattern is in the file, else the file and exit 1
  if ! grep -q -- "$2" "$1"; then
    echo "FAILED: '$2' not in $1:"
    cat "$1"
    exit 1
  fi
}

timeout 150 "$torchrun" --standalone --nproc-per-node 4 --max-restarts 1 "$example" \
  --checkpoint "$work/standalone" --kill-rank 1 --kill-step 3 > "$work/standalone.log" 2>&1
expect "$work/standalone.log" "rank 1: killed at the start of step 3"
expect "$work/standalone.log" "rank 0: attempt 1 starts at step 3 (tp 2 x dp 2)"
expect "$work/standalone.log" "losses match the reference after the restart"
grep "first step after the restart" "$work/standalone.log" | head -1

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
elastic=(--nnodes 1:2 --nproc-per-node 2 --max-restarts 1 --rdzv-backend c10d --rdzv-endpoint "127.0.0.1:$port"
         --rdzv-id "restart-$$" --rdzv-conf last_call_timeout=1,keep_alive_interval=1,keep_alive_max_attempt=2)
args=("$example" --checkpoint "$work/elastic" --kill-rank 2 --kill-step 3 --kill-node)
timeout 150 "$torchrun" "${elastic[@]}" "${args[@]}" > "$work/node0.log" 2>&1 &
node0=$!
sleep 1
# Its own session: the killed rank ends its agent's whole process group, that node's workers too.
timeout 150 setsid "$torchrun" "${elastic[@]}" "${args[@]}" > "$work/node1.log" 2>&1 || true
wait "$node0"
expect "$work/node1.log" "rank 2: killed at the start of step 3"
expect "$work/node0.log" "rank 0: attempt 1 starts at step 3 (tp 2 x dp 1)"
expect "$work/node0.log" "losses match the reference after the restart"
grep "first step after the restart" "$work/node0.log" | head -1
echo "torchrun restarts resumed with the reference losses"
