#!/usr/bin/env bash
# pgroups on a real Slurm (scripts/slurm-cluster.sh: Debian's slurmctld, and two slurmd
# nodes in network namespaces under a switch tree), as a Slurm user runs it. One cluster,
# started once (`start`) and stopped once (`stop`) by CTest's fixture, serves each
# scenario, a test of its own so that the first failure hides none of the others:
#   pmix_gloo    srun --mpi=pmix: `pgroups verify --backend gloo` with no MPI in the job,
#                across the two nodes, the node report naming both hosts, four ranks each;
#   mpi          the MPI build launched by srun (Open MPI on Slurm's PMIx);
#   switch_tree  every task's place in the switch tree (SLURM_TOPOLOGY_ADDR) as the node
#                report reads it;
#   place        `pgroups place --slurm-topology` on the cluster's own topology.conf, the
#                nodes from SLURM_JOB_NODELIST inside an allocation (salloc);
#   sbatch       an sbatch script that prints the plan, then sruns verify.
# Usage: tests/slurm/slurm_test.sh start|stop|SCENARIO DIR [PGROUPS]. Exits 77 (skipped)
# where the machine has no Slurm or refuses namespaces, and a scenario where the cluster
# did not start.
set -euo pipefail

action=$1
dir=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() {
  echo "slurm_test: $action: FAIL: $*" >&2
  exit 1
}

case $action in
  start)
    mkdir -p "$dir"
    rm -f "$dir/slurm_conf"
    status=0
    conf=$("$root/scripts/slurm-cluster.sh" start "$dir/cluster" 2 8) || status=$?
    ((status == 77)) && exit 77
    ((status == 0)) || fail "the cluster did not start (status $status)"
    echo "$conf" >"$dir/slurm_conf"
    echo "slurm_test: the cluster is up ($conf)"
    exit 0
    ;;
  stop)
    "$root/scripts/slurm-cluster.sh" stop "$dir/cluster" >/dev/null 2>&1 || true
    rm -rf "$dir"
    echo "slurm_test: the cluster is stopped"
    exit 0
    ;;
esac

[[ -r $dir/slurm_conf ]] || {
  echo "slurm_test: $action: SKIPPED: no cluster (its start was skipped or failed)"
  exit 77
}
pgroups=$(realpath "$3")
conf=$(cat "$dir/slurm_conf")
export SLURM_CONF=$conf
work=$(mktemp -d /tmp/pgroups-slurm-$action.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Inside the nodes: gloo and Open MPI on the nodes' one interface.
export GLOO_SOCKET_IFNAME=eth0 OMPI_MCA_btl_tcp_if_include=eth0 OMPI_MCA_oob_tcp_if_include=eth0
mesh=(--mesh tp=2,dp=2,pp=2)
run() { timeout 120 "$@" 2>&1; }

pmix_gloo() {
  out=$(run srun --mpi=pmix -N 2 --ntasks-per-node 4 "$pgroups" verify --backend gloo --bootstrap pmix "${mesh[@]}" \
    --timeout 30) || fail "verify --backend gloo under srun: $out"
  echo "$out"
  grep -q "OK: every communicator of 3 group kinds matches the layout on all 8 ranks" <<<"$out" || fail "not verified"
  grep -q "^nodes: 2 .*hosts node0, node1" <<<"$out" || fail "the node report does not name both nodes"
  grep -q "ranks per node \[4, 4\]" <<<"$out" || fail "not four ranks per node"
}

mpi() {
  out=$(run srun --mpi=pmix -N 2 --ntasks-per-node 4 "$pgroups" verify "${mesh[@]}" --timeout 30) ||
    fail "verify (MPI) under srun: $out"
  grep -q "OK: every communicator of 3 group kinds matches the layout on all 8 ranks" <<<"$out" || fail "not verified: $out"
}

switch_tree() {
  out=$(run srun -N 2 --ntasks-per-node 1 sh -c 'echo "$SLURM_TOPOLOGY_ADDR $SLURM_TOPOLOGY_ADDR_PATTERN"') ||
    fail "srun: $out"
  echo "$out"
  grep -q "^spine.leaf1.node1 switch.switch.node$" <<<"$out" || fail "no SLURM_TOPOLOGY_ADDR for node1"
  out=$(run srun --mpi=pmix -N 2 --ntasks-per-node 4 "$pgroups" verify --backend gloo "${mesh[@]}" --format json \
    --timeout 30) || fail "verify --format json: $out"
  python3 - "$out" <<'PY' || fail "the node report's switch levels are wrong"
import json, sys
nodes = json.loads(sys.argv[1])["nodes"]
levels = nodes["switch_levels"]
assert [(level["depth"], level["switches"]) for level in levels] == [(0, 1), (1, 2)], levels
# Every group is under the one spine; under the leaves (node0 under leaf0, node1 under
# leaf1) tp and dp stay inside a node while pp's pairs cross leaves.
assert all(kind["across"] == 0 for kind in levels[0]["kinds"]), levels[0]
leaf = {kind["kind"]: kind for kind in levels[1]["kinds"]}
assert leaf["pp"]["across"] == 4 and leaf["tp"]["across"] == 0 and leaf["dp"]["across"] == 0, leaf
PY
}

place() {
  out=$(run salloc -N 2 "$pgroups" place --mesh tp=4,dp=2 --gpus-per-node 4 \
    --slurm-topology "$(dirname "$conf")/topology.conf") || fail "place in salloc: $out"
  echo "$out"
  grep -q "on 2 nodes of 4 GPUs; levels node (cost 1), switch1 (1 nodes, cost 2)" <<<"$out" ||
    fail "place did not read the cluster's two leaves"
  # The nodes are the allocation's: one node holds too few GPUs for the mesh.
  out=$(run salloc -N 1 "$pgroups" place --mesh tp=4,dp=2 --gpus-per-node 4 \
    --slurm-topology "$(dirname "$conf")/topology.conf") && fail "place on one allocated node did not refuse the mesh"
  grep -q "the mesh has 8 ranks, but the cluster has 4 GPUs (1 nodes of 4)" <<<"$out" ||
    fail "place did not take SLURM_JOB_NODELIST: $out"
}

sbatch_job() {
  cat >"$work/job.sh" <<JOB
#!/bin/sh
"$pgroups" plan ${mesh[*]}
srun --mpi=pmix "$pgroups" verify --backend gloo ${mesh[*]} --timeout 30
JOB
  run sbatch -N 2 --ntasks-per-node 4 --wait -o "$work/job.out" "$work/job.sh" >/dev/null || {
    cat "$work/job.out" >&2
    fail "the sbatch job failed"
  }
  cat "$work/job.out"
  grep -q "OK: every communicator of 3 group kinds matches the layout on all 8 ranks" "$work/job.out" ||
    fail "the batch job's verify did not pass"
}

case $action in
  pmix_gloo | mpi | switch_tree | place) "$action" ;;
  sbatch) sbatch_job ;;
  *) fail "no scenario $action (pmix_gloo, mpi, switch_tree, place, sbatch)" ;;
esac
echo "slurm_test: $action: OK"
