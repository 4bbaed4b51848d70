# netns-nodes.sh, sourced (not run): the one harness of "nodes" made of Linux network
# namespaces on this machine, for scripts/multinode.sh, scripts/slurm-cluster.sh and
# python/tests/live/torchrun_restart.sh. Node i is the namespace TAG-node<i> with lo and an
# eth0 at SUBNET.<FIRST + i>/24; the nodes meet on a bridge in a hub namespace of their own
# (TAG-hub), so that this machine's namespace is touched only where the caller links it
# to the bridge too (HOST_INDEX: this namespace gets SUBNET.<HOST_INDEX>/24, as Slurm's
# controller needs). Each node knows the others as node0, node1, ... (/etc/hosts under
# `ip netns exec`), and notices a dead peer in seconds, not minutes (tcp_retries2 = 5,
# about 13 s, its own setting).
# Needs root and iproute2.
#
#   netns_nodes_probe TAG                   status 0 where namespaces can be made here
#   netns_nodes_up TAG COUNT SUBNET FIRST [HOST_INDEX]
#   netns_node TAG I                        the namespace's name
#   netns_node_pids TAG I                   the processes inside it
#   netns_cut_link TAG I                    node I's link to the bridge goes down
#   netns_nodes_down TAG COUNT              every process inside killed, everything removed
# TAG is short (at most 12 characters): interface names (15 at most) are built from it.

netns_node() { echo "$1-node$2"; }

netns_node_pids() { ip netns pids "$(netns_node "$1" "$2")" 2>/dev/null; }

netns_nodes_probe() {
  ip netns add "$1-probe" 2>/dev/null || return 1
  ip netns del "$1-probe"
}

netns_nodes_up() {
  local tag=$1 count=$2 subnet=$3 first=$4 host_index=${5:-}
  local hub="$tag-hub" hosts="" i name
  ip netns add "$hub"
  ip -n "$hub" link set lo up
  ip -n "$hub" link add br0 type bridge
  ip -n "$hub" link set br0 up
  for ((i = 0; i < count; i++)); do hosts+="$subnet.$((first + i)) node$i"$'\n'; done
  for ((i = 0; i < count; i++)); do
    name=$(netns_node "$tag" "$i")
    ip netns add "$name"
    ip -n "$name" link set lo up
    ip link add "${tag}n$i" netns "$name" type veth peer name "h$i" netns "$hub"
    ip -n "$name" link set "${tag}n$i" name eth0
    ip -n "$name" addr add "$subnet.$((first + i))/24" dev eth0
    ip -n "$name" link set eth0 up
    ip -n "$hub" link set "h$i" master br0 up
    ip netns exec "$name" sysctl -qw net.ipv4.tcp_retries2=5 2>/dev/null || true
    mkdir -p "/etc/netns/$name"
    printf '127.0.0.1 localhost\n%s' "$hosts" >"/etc/netns/$name/hosts"
  done
  if [[ -n $host_index ]]; then
    ip link add "${tag}x" type veth peer name hx netns "$hub"
    ip addr add "$subnet.$host_index/24" dev "${tag}x"
    ip link set "${tag}x" up
    ip -n "$hub" link set hx master br0 up
  fi
}

netns_cut_link() { ip -n "$1-hub" link set "h$2" down; }

netns_nodes_down() {
  local tag=$1 count=$2 i pids
  for ((i = 0; i < count; i++)); do
    pids=$(netns_node_pids "$tag" "$i")
    [[ -n $pids ]] && kill -9 $pids 2>/dev/null
    ip netns del "$(netns_node "$tag" "$i")" 2>/dev/null
    rm -rf "/etc/netns/$(netns_node "$tag" "$i")"
  done
  ip netns del "$tag-hub" 2>/dev/null # its veth ends, the host's link's included, go with it
  ip link del "${tag}x" 2>/dev/null
  return 0
}
