#!/usr/bin/env bash
# A real multi-node run on one machine (docs/reference/topology.md): builds NODES "nodes" from
# Linux network namespaces, each with its own address (10.77.0.0/24, which exists only
# inside these namespaces), its own hostname (a UTS namespace) and its own Open MPI
# daemon, joined on a bridge by the one harness of such nodes (scripts/netns-nodes.sh). Open MPI starts its
# daemons through a launch agent that enters the node's namespaces (in place of ssh),
# talks TCP between nodes and shared memory within one.
#
#   1. `pgroups verify` across NODES x RANKS ranks: every mode checked, the node count,
#      the hosts and every rank's node and node-local rank as expected.
#   2. The failure a cluster has: one rank of the last node holds creation (the
#      --inject-stall-rank hook), the last node's link is cut while the others wait,
#      and every rank of the reachable nodes must end with the timeout error within
#      --timeout + 5 s. The cut node is then cleaned up as a resource manager
#      would, and no process of the job may be left anywhere.
#
# Usage: scripts/multinode.sh [PGROUPS_BINARY]   (default: build/cli/pgroups)
# Needs root (network namespaces), ip, unshare, nsenter and Open MPI's mpirun; exits 77
# (skipped) with a message when the machine does not allow it. Environment:
# PGROUPS_MULTINODE_NODES (2), PGROUPS_MULTINODE_RANKS (4 per node),
# PGROUPS_MULTINODE_TIMEOUT (10 s, the --timeout of the cut-link case).
set -euo pipefail

cd "$(dirname "$0")/.."
source scripts/netns-nodes.sh
pgroups=$(realpath "${1:-build/cli/pgroups}")
nodes=${PGROUPS_MULTINODE_NODES:-2}
ranks=${PGROUPS_MULTINODE_RANKS:-4}
timeout=${PGROUPS_MULTINODE_TIMEOUT:-10}
world=$((nodes * ranks))

skip() { echo "multinode: SKIPPED: $*"; exit 77; }
fail() { echo "multinode: FAIL: $*" >&2; exit 1; }
step() { echo "multinode: $*"; }

[[ -x $pgroups ]] || fail "no pgroups binary at $pgroups (build it first)"
[[ $(id -u) -eq 0 ]] || skip "network namespaces need root"
for tool in ip unshare nsenter mpirun python3 pgrep; do
  command -v "$tool" >/dev/null || skip "$tool is not installed"
done
mpirun --version 2>/dev/null | grep -q "Open MPI" || skip "mpirun is not Open MPI (the launch agent is Open MPI's plm_rsh_agent)"

tag="pgmn$$"
# Every process of this run carries the tag in its environment, so that the final check
# judges this run's processes only, while other jobs run pgroups on the machine.
export PGROUPS_MULTINODE_TAG=$tag
work=$(mktemp -d "/tmp/${tag}.XXXXXX")
ns() { netns_node "$tag" "$1"; }

cleanup() {
  set +e
  netns_nodes_down "$tag" "$nodes"
  rm -rf "$work"
}
trap cleanup EXIT

# The network: node i at 10.77.0.(i + 1), on the harness's bridge.
netns_nodes_probe "$tag" || skip "cannot create network namespaces here (ip netns add failed)"
netns_nodes_up "$tag" "$nodes" 10.77.0 1

# The launch agent, called by mpirun as `agent HOST COMMAND...` (like ssh): runs the
# command in that node's network namespace and a UTS namespace with its hostname.
cat >"$work/agent" <<EOF
#!/bin/sh
host=\$1; shift
case \$host in node[0-9]*) index=\${host#node} ;; *) echo "agent: unknown host \$host" >&2; exit 255 ;; esac
exec ip netns exec "$(netns_node "$tag" "")\$index" unshare --uts sh -c "hostname \$host; \$*"
EOF
chmod +x "$work/agent"
for ((i = 0; i < nodes; i++)); do echo "node$i slots=$ranks"; done >"$work/hostfile"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PGROUPS_TIMEOUT=60
mpi_flags=(--hostfile "$work/hostfile" -np "$world" --map-by slot
  --mca plm_rsh_agent "$work/agent" --mca plm_rsh_no_tree_spawn 1
  --mca btl tcp,self,vader --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24
  --mca mpi_yield_when_idle 1 --oversubscribe)
# mpirun itself runs on node0, in its namespaces.
on_node0() { ip netns exec "$(ns 0)" unshare --uts sh -c 'hostname node0; exec "$@"' sh "$@"; }

# --- 1. verify across the nodes --------------------------------------------------------
config=(--pipeline "$nodes" --tensor "$ranks" --mode 1d)
step "verify on $nodes nodes x $ranks ranks: pgroups verify ${config[*]}"
start=$(date +%s.%N)
on_node0 mpirun "${mpi_flags[@]}" "$pgroups" verify "${config[@]}" --timeout 60 --format json \
  >"$work/verify.json" 2>"$work/verify.err" || { status=$?; cat "$work/verify.err" >&2; fail "verify exited with status $status"; }
step "verify took $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s"
python3 - "$work/verify.json" "$nodes" "$ranks" <<'EOF' || { cat "$work/verify.err" >&2; fail "the verify report is not what the nodes are"; }
import json, sys
report = json.load(open(sys.argv[1]))
nodes, ranks = int(sys.argv[2]), int(sys.argv[3])
n = report["nodes"]
problems = []
def expect(what, got, want):
    if got != want:
        problems.append(f"{what}: got {got}, expected {want}")
expect("ok", report["ok"], True)
expect("modes not ok", [m for m, e in report["modes"].items() if not e["ok"]], [])
expect("node count", n["nodes"], nodes)
expect("ranks per node", n["ranks_per_node"], [ranks] * nodes)
expect("hosts", n["hosts"], [f"node{i}" for i in range(nodes)])
expect("node of each rank", n["node_of_rank"], [r // ranks for r in range(nodes * ranks)])
expect("node-local rank of each rank", n["local_rank_on_node"], [r % ranks for r in range(nodes * ranks)])
expect("launcher", n["launcher"], "open_mpi")
expect("launcher's local ranks agree", n["launcher_agrees"], True)
expect("tensor groups", n["modes"]["tensor"], {"groups_within_node": nodes, "groups_across_nodes": 0})
expect("pipe groups", n["modes"]["pipe"], {"groups_within_node": 0, "groups_across_nodes": ranks})
for line in problems:
    print("multinode:   " + line, file=sys.stderr)
print(f"multinode:   {len(report['modes'])} modes OK; {n['nodes']} nodes {n['hosts']}, node of rank {n['node_of_rank']}, "
      f"node-local rank {n['local_rank_on_node']}")
sys.exit(1 if problems else 0)
EOF

# --- 1b. a placement: tp inside the nodes where the mesh order spreads it -------------
# dp runs fastest, so the mesh order puts each tp group's ranks on every node; place
# proposes a rank map that keeps each tp group in one node, verify shows it live, and the
# rankfile place writes, given to mpirun instead, gives the same groups by host and slot.
if [[ $nodes -ge 2 && $((ranks % 2)) -eq 0 ]]; then
  placed=(--order dp-tp --dp "$nodes" --tp "$ranks")
  printf '[cluster]\ngpus_per_node = %d\nnodes = [%s]\n' "$ranks" \
    "$(for ((i = 0; i < nodes; i++)); do printf '%s"node%d"' "$([[ $i -gt 0 ]] && echo ', ')" "$i"; done)" >"$work/cluster.toml"
  "$pgroups" place --cluster "$work/cluster.toml" "${placed[@]}" --format json --rankfile "$work/rankfile" \
    >"$work/place.json" || fail "place exited with status $?"
  # Open MPI 4.1 refuses, without a word, rankfile slots past the machine's cores: fold them.
  cores=$(nproc)
  python3 - "$work/rankfile" "$cores" <<'EOF2'
import re, sys
path, cores = sys.argv[1], int(sys.argv[2])
lines = [re.sub(r"slot=(\d+)", lambda m: f"slot={int(m.group(1)) % cores}", l) for l in open(path)]
open(path, "w").writelines(lines)
EOF2
  step "placement: $(python3 -c "import json; d=json.load(open('$work/place.json')); print(d['placement'], 'cost', d['cost'], 'identity', d['identity_cost'])")"
  for run in identity mapped rankfile; do
    extra=()
    flags=("${mpi_flags[@]}")
    [[ $run == mapped ]] && extra=(--rank-map "$work/place.json")
    if [[ $run == rankfile ]]; then
      flags=("${mpi_flags[@]:0:4}" --rankfile "$work/rankfile" "${mpi_flags[@]:6}")
    fi
    on_node0 mpirun "${flags[@]}" "$pgroups" verify "${placed[@]}" "${extra[@]}" --timeout 60 --format json \
      >"$work/verify-$run.json" 2>"$work/verify-$run.err" || { status=$?; cat "$work/verify-$run.err" >&2; fail "verify ($run) exited with status $status"; }
  done
  python3 - "$work" "$nodes" <<'EOF2' || fail "the placement is not what verify shows"
import json, sys
work, nodes = sys.argv[1], int(sys.argv[2])
load = lambda run: json.load(open(f"{work}/verify-{run}.json"))
identity, mapped, rankfile = load("identity"), load("mapped"), load("rankfile")
problems = []
for name, report in (("identity", identity), ("mapped", mapped), ("rankfile", rankfile)):
    if not report["ok"]:
        problems.append(f"{name}: verify is not ok")
tp = lambda report: report["nodes"]["modes"]["tp"]
if tp(identity)["groups_across_nodes"] != nodes:  # every tp group crosses in the mesh order
    problems.append(f"identity: tp groups {tp(identity)}")
if tp(mapped) != {"groups_within_node": nodes, "groups_across_nodes": 0}:
    problems.append(f"mapped: tp groups {tp(mapped)}")
# Each kind's groups as sets of (host, node-local rank): under the map a group is its mesh
# ranks' launcher ranks, under the rankfile its mesh ranks themselves, placed by the file.
def places(report):
    n = report["nodes"]
    where = lambda launcher: (n["hosts"][n["node_of_rank"][launcher]], n["local_rank_on_node"][launcher])
    out = {}
    for kind, entry in report["modes"].items():
        out[kind] = sorted(sorted(where(launcher) for launcher in group) for group in entry["groups"])
    return out
if places(mapped) != places(rankfile):
    problems.append(f"the rankfile's groups differ from the map's: {places(mapped)} vs {places(rankfile)}")
for line in problems:
    print("multinode:   " + line, file=sys.stderr)
print(f"multinode:   tp groups crossing nodes: identity {tp(identity)['groups_across_nodes']}, "
      f"with the rank map {tp(mapped)['groups_across_nodes']}, with the rankfile {tp(rankfile)['groups_across_nodes']}; "
      "the rankfile's groups by host and node-local rank are the map's")
sys.exit(1 if problems else 0)
EOF2
fi

# --- 2. cut a node's link during creation ----------------------------------------------
last=$((nodes - 1))
stalled=$((world - 1))
step "cut link: rank $stalled (node$last) holds creation at step 'data'; node$last's link goes down; --timeout $timeout"
errors="$work/errors"
mkdir -p "$errors"
# Each rank writes its own stderr, so that the cut node's messages are kept too. mpirun
# is told not to end the job at the first rank that fails, so that every rank shows
# that it ends by itself (its watchdog), not because the launcher killed it; mpirun
# itself learns that node's daemon is gone from TCP keepalives (a silent link sends
# nothing else), a few seconds after the timeout.
start=$(date +%s.%N)
on_node0 mpirun "${mpi_flags[@]}" --mca orte_abort_on_non_zero_status 0 \
  --mca oob_tcp_keepalive_time $((timeout + 3)) --mca oob_tcp_keepalive_intvl 1 --mca oob_tcp_keepalive_probes 2 sh -c "exec \"\$0\" \"\$@\" 2>$errors/rank.\$OMPI_COMM_WORLD_RANK" "$pgroups" \
  verify "${config[@]}" --timeout "$timeout" --inject-stall-rank "$stalled" --inject-step data \
  >"$work/cut.out" 2>"$work/cut.err" &
mpirun_pid=$!
for _ in $(seq 1 600); do
  grep -qs "injected fault: rank $stalled stalls" "$errors/rank.$stalled" && break
  sleep 0.1
done
grep -qs "injected fault: rank $stalled stalls" "$errors/rank.$stalled" || { tail -n +1 "$errors"/rank.* "$work"/cut.* >&2; fail "rank $stalled never reached the stall"; }
# Every rank began creation before rank $stalled got this far (the steps before 'data'
# are collective), so each one's deadline is at most --timeout from now.
held=$(date +%s.%N)
# The other ranks finish the steps they can and come to wait (2 s, as a slow sanitizer
# build needs) before the link goes down: data still in flight at the cut would be
# retransmitted until TCP gives up (tcp_retries2), and Open MPI would end the job on that
# before the ranks' own timeout (seen once in the sanitizer run of a clean-clone CI).
sleep 2
netns_cut_link "$tag" "$last"
cut=$(date +%s.%N)
step "link of node$last is down $(python3 -c "print(f'{$cut - $start:.1f}')") s after launch"

# Every rank of the reachable nodes ends by itself, with the timeout error.
reachable=$((last * ranks))
deadline=$(python3 -c "print($held + $timeout + 5)")
# The pgroups processes (ranks) in node $1's namespace.
ranks_on() {
  local pid
  for pid in $(ip netns pids "$(ns "$1")"); do
    [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$pgroups" ]] && echo "$pid"
  done
  return 0
}
while :; do
  alive=0
  for ((i = 0; i < last; i++)); do
    [[ -n $(ranks_on "$i") ]] && alive=1
  done
  [[ $alive -eq 0 ]] && break
  python3 -c "import sys,time; sys.exit(0 if time.time() < $deadline else 1)" || break
  sleep 0.2
done
ended=$(date +%s.%N)
[[ $alive -eq 0 ]] || fail "ranks of the reachable nodes were still running $timeout + 5 s after creation was held"
step "every rank of the reachable node(s) ended $(python3 -c "print(f'{$ended - $held:.1f}')") s after creation was held, $(python3 -c "print(f'{$ended - $start:.1f}')") s after launch (--timeout $timeout)"
for ((r = 0; r < reachable; r++)); do
  grep -Eq "timed out after $timeout s waiting for all ranks at the creation of mode [a-z0-9_]+ \(step '[a-z0-9_]+', rank $r of $world\)" \
    "$errors/rank.$r" || { tail -n +1 "$errors"/rank.* "$work/cut.err" >&2; fail "rank $r did not end with the timeout error"; }
done
step "  each of ranks 0..$((reachable - 1)) said: $(grep -o "timed out after [^;]*" "$errors/rank.0")"

# mpirun notices the lost daemon once its retransmissions give up.
for _ in $(seq 1 150); do kill -0 "$mpirun_pid" 2>/dev/null || break; sleep 0.2; done
if kill -0 "$mpirun_pid" 2>/dev/null; then
  fail "mpirun was still running $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s after launch"
fi
wait "$mpirun_pid" && status=0 || status=$?
step "mpirun ended with status $status, $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s after launch"

# The cut node's own ranks: those not stalled end by their own watchdogs too.
own=0
for ((r = reachable; r < world - 1; r++)); do grep -qs "timed out after $timeout s" "$errors/rank.$r" && own=$((own + 1)); done
step "  on the cut node$last, $own of $((ranks - 1)) ranks that were not stalled ended with the same error by themselves"
# The cut node: what a resource manager would find and end there.
left=$(ip netns pids "$(ns "$last")" | xargs -r ps -o pid=,comm= -p | tr -s ' ' | paste -sd, -)
step "left on the cut node$last (ended now, as a resource manager would): ${left:-nothing}"
pids=$(ip netns pids "$(ns "$last")")
[[ -n $pids ]] && kill -9 $pids 2>/dev/null || true
sleep 0.5
for ((i = 0; i < nodes; i++)); do
  [[ -z $(ip netns pids "$(ns "$i")") ]] || fail "processes left in node$i: $(ip netns pids "$(ns "$i")" | xargs)"
done
# This run's processes: those carrying its tag (not every `pgroups verify` of the machine).
ours() {
  local pid
  for pid in $(pgrep -f "$pgroups verify|$work/agent"); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "PGROUPS_MULTINODE_TAG=$tag" && echo "$pid"
  done
  return 0
}
left=$(ours)
[[ -z $left ]] || fail "processes of the job are left: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)" | paste -sd';' -)"
step "no process of the job is left"
step "PASS"
