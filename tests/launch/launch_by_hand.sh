#!/usr/bin/env bash
# launch_by_hand.sh NP [--world-size-of-last N] [--port-in-use] -- COMMAND...: starts NP
# processes of COMMAND (bootstrap_probe env, pgroups verify --backend gloo) with the
# variables a plain launch (Kubernetes' operators, a shell loop) gives, no launcher's
# store: rank 0 serves it. Prints each process's output and
# "rank R exit S" for each, then exits 0; the test judges the output.
set -u
np=$1
shift
last_world=$np port_in_use=0
while (($#)); do
  case $1 in
    --) shift; break ;;
    --world-size-of-last) last_world=$2; shift 2 ;;
    --port-in-use) port_in_use=1; shift ;;
    *) echo "launch_by_hand.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
# A free port below the kernel's ephemeral range; with --port-in-use it is kept listening
# meanwhile. A port the kernel chose (bind to 0) and this script released could be handed
# to another test's bind to 0 before rank 0 serves on it (seen once in a clean-clone CI run:
# rank 0's "Address already in use", the others reaching that test's store); below the
# range, only a port named outright can take it.
exec 3< <(python3 -c '
import random, socket, sys, time
with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
    low = int(f.read().split()[0])
for port in random.sample(range(max(1024, low - 8192), low), 64):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    try:
        s.bind(("::", port))
        break
    except OSError:
        s.close()
else:
    sys.exit("launch_by_hand.sh: no free port below the ephemeral range")
port = s.getsockname()[1]
# Closed before the port is told: a rank that connected to this socket while it still
# listened (seen once in a clean-clone CI run) would be reset when it closed.
if sys.argv[1] == "0":
    s.close()
else:
    s.listen()
print(port, flush=True)
time.sleep(60)
' "$port_in_use")
holder=$!
read -r port <&3
dir=$(mktemp -d)
pids=()
for ((r = 0; r < np; r++)); do
  world=$np
  ((r == np - 1)) && world=$last_world
  env -u TORCHELASTIC_USE_AGENT_STORE RANK=$r WORLD_SIZE=$world LOCAL_RANK=$r LOCAL_WORLD_SIZE=$np \
    MASTER_ADDR=localhost MASTER_PORT=$port "$@" >"$dir/$r" 2>&1 &
  pids+=($!)
done
for ((r = 0; r < np; r++)); do
  wait "${pids[r]}"
  status=$?
  cat "$dir/$r"
  echo "rank $r exit $status"
done
rm -rf "$dir"
kill "$holder" 2>/dev/null
exec 3<&-
exit 0
