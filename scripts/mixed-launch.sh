#!/usr/bin/env bash
# Launches a job that mixes MPI and non-MPI commands under one mpirun, N times in a row,
# and checks that each launch ends within the timeout plus 5 s with a non-zero status
# (docs/reference/errors.md, "Timeouts and failed ranks"): the non-MPI rank refuses at once, or,
# where it never refuses (a program that is no pgroups command), the MPI ranks' start-up
# watchdog ends them at the timeout.
#
#   scripts/mixed-launch.sh PGROUPS [COUNT=20] [TIMEOUT=3]
#
# Prints one line per launch (case, status, seconds) and a summary; exits 1 when any
# launch broke the rule. A backstop `timeout` kills a launch that hangs (it counts as a
# failure).
set -u
pgroups=${1:?usage: mixed-launch.sh PGROUPS [COUNT] [TIMEOUT]}
count=${2:-20}
limit=${3:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset PGROUPS_TIMEOUT
mpirun_flags=()
if mpirun --version 2>&1 | grep -q "Open MPI"; then mpirun_flags+=(--oversubscribe --mca mpi_yield_when_idle 1); fi
bound=$((limit + 5))

cases=(
  "plan:-np 2 $pgroups verify --timeout $limit : -np 1 $pgroups plan -w 8"
  "bench-model:-np 2 $pgroups verify --timeout $limit : -np 1 $pgroups bench --model"
  "help:-np 2 $pgroups verify --timeout $limit : -np 1 $pgroups --help"
  "usage-error:-np 2 $pgroups bench --repeats 1 --timeout $limit : -np 1 $pgroups plan --no-such-flag"
  "no-pgroups:-np 2 $pgroups verify --timeout $limit : -np 1 sleep 60"
)
failures=0
worst_ms=0
for ((i = 0; i < count; ++i)); do
  entry=${cases[i % ${#cases[@]}]}
  name=${entry%%:*}
  read -r -a args <<<"${entry#*:}"
  start=$(date +%s%N)
  timeout -s KILL $((bound + 30)) mpirun "${mpirun_flags[@]}" "${args[@]}" >/dev/null 2>&1
  status=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  ((ms > worst_ms)) && worst_ms=$ms
  verdict=ok
  if ((status == 0 || ms > bound * 1000)); then
    verdict=FAIL
    failures=$((failures + 1))
  fi
  awk -v i=$((i + 1)) -v n="$name" -v s=$status -v ms=$ms -v v=$verdict \
    'BEGIN { printf "%2d %-12s status %3d  %6.2f s  %s\n", i, n, s, ms / 1000, v }'
done
awk -v c="$count" -v f=$failures -v ms=$worst_ms -v b=$bound -v t="$limit" \
  'BEGIN { printf "launches %d, failures %d, slowest %.2f s (bound %d s = timeout %d s + 5 s)\n", c, f, ms / 1000, b, t }'
((failures == 0))
