#!/usr/bin/env bash
# A real Slurm on this machine (Debian's slurm-wlm and munge), for the tests and to try
# pgroups as a Slurm user would: slurmctld in this network namespace, and NODES compute
# nodes, each a `slurmd -N nodeI` in a network namespace of its own (its own address on a
# bridge, 10.78.0.0/24, by the one harness of such nodes, scripts/netns-nodes.sh, and its
# own host name), with a two-level switch tree in
# topology.conf: two nodes under each leaf switch (one each for fewer than four nodes),
# every leaf under one spine. So `srun -N 2` crosses nodes, and every task gets
# SLURM_TOPOLOGY_ADDR (spine.leafK.nodeI).
#
#   scripts/slurm-cluster.sh start DIR [NODES] [CPUS]   # prints the SLURM_CONF to export
#   scripts/slurm-cluster.sh stop DIR
#
# What the machine needs, found when this was first tried here:
#  - each slurmd enters its namespace with `nsenter --net` (`ip netns exec` remounts /sys,
#    which slurmd refuses), in a mount and UTS namespace of its own;
#  - SlurmctldHost is this machine's host name, with its address on the bridge (10.78.0.1);
#  - PMIx gets a temporary directory per node (mpi.conf's PMIxCliTmpDirBase, bound to a
#    folder of the node's own in its mount namespace), or the nodes' PMIx servers collide.
# Each node declares CPUS CPUs (SlurmdParameters=config_overrides), more than the machine
# may have. `stop` ends every process it started (by pid, then by namespace) and removes
# the namespaces; `start` stops what it started when a step fails. Exits 77 (skipped)
# with a message where the machine does not allow it (not root, no Slurm, no namespaces).
set -euo pipefail
source "$(dirname "$0")/netns-nodes.sh"

action=${1:-}
dir=${2:-}
nodes=${3:-2}
cpus=${4:-8}
[[ $action == start || $action == stop ]] && [[ -n $dir ]] || {
  echo "usage: $0 start|stop DIR [NODES] [CPUS]" >&2
  exit 2
}

tag=pgsl
ns() { netns_node "$tag" "$1"; }
log() { echo "slurm-cluster: $*" >&2; }
skip() {
  log "SKIPPED: $*"
  exit 77
}

stop_cluster() {
  set +e
  for pidfile in "$dir"/run/*.pid; do
    [[ -f $pidfile ]] && kill "$(cat "$pidfile")" 2>/dev/null
  done
  sleep 0.5
  netns_nodes_down "$tag" 16
  for pidfile in "$dir"/run/*.pid; do
    [[ -f $pidfile ]] && kill -9 "$(cat "$pidfile")" 2>/dev/null
  done
  rm -rf "$dir"/run
  return 0
}

if [[ $action == stop ]]; then
  stop_cluster
  exit 0
fi

[[ $(id -u) -eq 0 ]] || skip "network namespaces and slurmd need root"
for tool in slurmctld slurmd srun munged ip nsenter unshare; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (Debian: slurm-wlm, munge, iproute2)"
done
[[ -r /etc/munge/munge.key ]] || skip "munge has no key (/etc/munge/munge.key)"
netns_nodes_probe "$tag" || skip "network namespaces are refused here"

# One cluster of this harness at a time (its namespaces, subnet and host address are
# fixed): a second start must fail before its cleanup, which would tear the first one down.
if ip netns list | grep -qw "$tag-hub"; then
  log "another cluster of this harness is running (namespace $tag-hub exists): stop it first (slurm-cluster.sh stop DIR)"
  exit 1
fi
# The ERR trap must end the script: stop_cluster turns `set -e` off, so a trap that only
# stopped would let the script go on with the cluster torn down (and trap again at each step).
trap 'status=$?; log "start failed (status $status); stopping"; stop_cluster; exit 1' ERR
mkdir -p "$dir"/{etc,run,log,spool/ctld,pmix}
host=$(hostname)
conf=$dir/etc/slurm.conf

# Node i at 10.78.0.(10 + i), this namespace (slurmctld's) at 10.78.0.1 on their bridge.
netns_nodes_up "$tag" "$nodes" 10.78.0 10 1
for ((i = 0; i < nodes; i++)); do mkdir -p "$dir/spool/node$i" "$dir/pmix/node$i"; done

cat >"$conf" <<EOF
ClusterName=pgroups
SlurmctldHost=$host(10.78.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/run/munge.socket
CredType=cred/munge
SlurmctldPort=6917
SlurmdPort=6918
StateSaveLocation=$dir/spool/ctld
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
TopologyPlugin=topology/tree
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
InactiveLimit=0
KillWait=2
MinJobAge=2
NodeName=node[0-$((nodes - 1))] CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
for ((i = 0; i < nodes; i++)); do
  echo "NodeName=node$i NodeAddr=10.78.0.$((10 + i))" >>"$dir/etc/nodes.conf"
done
# NodeAddr per node, so that slurmctld reaches each namespace.
sed -i "s|^NodeName=node\[.*|NodeName=DEFAULT CPUs=$cpus State=UNKNOWN|" "$conf"
cat "$dir/etc/nodes.conf" >>"$conf"
{
  per_leaf=$((nodes >= 4 ? 2 : 1))
  leaves=$(((nodes + per_leaf - 1) / per_leaf))
  for ((l = 0; l < leaves; l++)); do
    first=$((per_leaf * l))
    last=$((first + per_leaf - 1 < nodes ? first + per_leaf - 1 : nodes - 1))
    echo "SwitchName=leaf$l Nodes=node[$first-$last]"
  done
  echo "SwitchName=spine Switches=leaf[0-$((leaves - 1))]"
} >"$dir/etc/topology.conf"
echo "PMIxCliTmpDirBase=$dir/pmix/here" >"$dir/etc/mpi.conf"
mkdir -p "$dir/pmix/here"

munged --socket="$dir/run/munge.socket" --pid-file="$dir/run/munged.pid" --seed-file="$dir/run/munge.seed" \
  --log-file="$dir/log/munged.log" --force
export SLURM_CONF=$conf
slurmctld -f "$conf"
for ((i = 0; i < nodes; i++)); do
  # A mount namespace where the node's own PMIx folder is the one mpi.conf names, a host
  # name of its own (the node report's host), and the node's network.
  unshare --mount --propagation private --uts sh -c \
    "mount --bind '$dir/pmix/node$i' '$dir/pmix/here' && hostname node$i &&
     exec nsenter --net=/var/run/netns/$(ns "$i") slurmd -N node$i -f '$conf'"
done

# Every node idle, within 60 s. slurmctld returns before it listens: until it does, sinfo
# fails, which is a reason to ask again, not to give up (a fresh machine's first start is
# slow enough for that; under `set -e` with pipefail the failed pipeline ended the script).
idle=0
for ((try = 0; try < 120; try++)); do
  idle=$(sinfo -h -N -t idle -o "%N" 2>/dev/null | sort -u | wc -l || true)
  ((idle == nodes)) && break
  sleep 0.5
done
((idle == nodes)) || {
  log "only $idle of $nodes nodes became idle within 60 s"
  sinfo -N >&2 || true
  # The daemons' own words, so that a failure far away (CI) says why.
  for file in "$dir"/log/*.log; do
    log "--- the last lines of $file"
    tail -n 20 "$file" >&2 || true
  done
  false
}
trap - ERR
echo "$conf"
