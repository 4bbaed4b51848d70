#!/usr/bin/env bash
# Runs `pgroups bench` at W = 2, 4, 8, 16, 32 (oversubscribed on this machine) for one
# configuration, pipeline 2 with the data-parallel size growing with W, and draws
# docs/images/scaling.svg from the results (scripts/plot_scaling.py).
#   scripts/bench-scaling.sh [--repeats N] [plan options for every W]
set -euo pipefail
cd "$(dirname "$0")/.."
pgroups=${PGROUPS_BUILD_DIR:-build}/cli/pgroups
out=${PGROUPS_SCALING_JSON:-build/scaling.jsonl}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
: >"$out"
for w in 2 4 8 16 32; do
  echo "W=$w" >&2
  mpirun -np "$w" --oversubscribe --mca mpi_yield_when_idle 1 "$pgroups" bench --pipeline 2 --repeats 5 "$@" \
    --format json >>"$out"
done
python3 scripts/plot_scaling.py "$out" docs/images/scaling.svg
