#!/usr/bin/env bash
# A training loop under torchrun's own restart resumes from its checkpoint with the
# reference losses (python/examples/torchrun_restart.py, which exits 1 on any other loss):
#  1. --standalone --max-restarts 1, four ranks, rank 1 SIGKILLed at step 3: the same
#     layout again (torch's own default group fails this restart on torch 2.13);
#  2. --nnodes 1:2, two agents of two ranks each on two network-namespace nodes (two
#     agents on this host where namespaces are refused), rank 2's whole agent killed at
#     step 3: the surviving node restarts alone and the job goes on as Plan.resized gives
#     it, tp 2 x dp 1.
# Usage: torchrun_restart.sh TORCHRUN EXAMPLE
set -euo pipefail
torchrun=$1
example=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

expect() {  # expect FILE PATTERN: the pattern is in the file, else the file and exit 1
  grep -q -- "$2" "$1" || failed "'$2' not in $1" "$1"
}

failed() {  # failed WHAT LOG...: says which run ended badly, prints its logs, exits 1
  echo "FAILED: $1"
  shift
  for log in "$@"; do
    echo "--- $log"
    cat "$log"
  done
  exit 1
}

timeout 150 "$torchrun" --standalone --nproc-per-node 4 --max-restarts 1 "$example" \
  --checkpoint "$work/standalone" --kill-rank 1 --kill-step 3 > "$work/standalone.log" 2>&1 ||
  failed "the standalone torchrun exited $?" "$work/standalone.log"
expect "$work/standalone.log" "rank 1: killed at the start of step 3"
expect "$work/standalone.log" "rank 0: attempt 1 starts at step 3 (tp 2 x dp 2)"
expect "$work/standalone.log" "losses match the reference after the restart"
grep "first step after the restart" "$work/standalone.log" | head -1

# The two nodes: network namespaces on a bridge (10.79.0.0/24, each node its own address
# and eth0, gloo over it; the one harness of such nodes, scripts/netns-nodes.sh) where this
# machine allows them, else two agents on this host.
source "$(dirname "$0")/../../../scripts/netns-nodes.sh"
tag=pgtr$$
host=127.0.0.1
run_on=(env env)
addresses=(127.0.0.1 127.0.0.1)
if [[ $(id -u) -eq 0 ]] && netns_nodes_probe "$tag"; then
  trap 'netns_nodes_down "$tag" 2; rm -rf "$work"' EXIT
  netns_nodes_up "$tag" 2 10.79.0 10
  host=10.79.0.10
  addresses=(10.79.0.10 10.79.0.11)
  run_on=("nsenter --net=/var/run/netns/$(netns_node "$tag" 0) env GLOO_SOCKET_IFNAME=eth0"
          "nsenter --net=/var/run/netns/$(netns_node "$tag" 1) env GLOO_SOCKET_IFNAME=eth0")
  echo "elastic run on two network-namespace nodes, 10.79.0.10 and 10.79.0.11"
else
  echo "elastic run as two agents on this host (no network namespaces here)"
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
elastic=(--nnodes 1:2 --nproc-per-node 2 --max-restarts 1 --rdzv-backend c10d --rdzv-endpoint "$host:$port"
         --rdzv-id "restart-$$")
# Node 0 hosts the rendezvous store, and each node's address is said outright: torchrun
# guesses both from the host name, which a namespace node does not change. A round closes
# at once when both nodes joined; one node waits last_call_timeout for the other. At 1 s,
# a node 1 slowed by a busy host joined after node 0 had started alone, and the agents'
# restart for the new member then failed in torch's rendezvous (each waited 60 s for the
# other's keys: MASTER_ADDR, role_info), 3 runs in 4 beside other tests.
conf=last_call_timeout=10,keep_alive_interval=1,keep_alive_max_attempt=2,is_host
args=("$example" --checkpoint "$work/elastic" --kill-rank 2 --kill-step 3 --kill-node)
# shellcheck disable=SC2086 # run_on holds a command and its arguments
timeout 150 ${run_on[0]} "$torchrun" "${elastic[@]}" --rdzv-conf "$conf=1" --local-addr "${addresses[0]}" \
  "${args[@]}" > "$work/node0.log" 2>&1 &
node0=$!
sleep 1
# Its own session: the killed rank ends its agent's whole process group, that node's workers too.
# shellcheck disable=SC2086
timeout 150 setsid ${run_on[1]} "$torchrun" "${elastic[@]}" --rdzv-conf "$conf=0" --local-addr "${addresses[1]}" \
  "${args[@]}" > "$work/node1.log" 2>&1 || true
wait "$node0" || failed "node 0's torchrun exited $?" "$work/node0.log" "$work/node1.log"
expect "$work/node1.log" "rank 2: killed at the start of step 3"
expect "$work/node0.log" "rank 0: attempt 1 starts at step 3 (tp 2 x dp 1)"
expect "$work/node0.log" "losses match the reference after the restart"
grep "first step after the restart" "$work/node0.log" | head -1
echo "torchrun restarts resumed with the reference losses"
