#!/usr/bin/env bash
# The main job of the README: installs dependencies, builds, plans a hybrid layout
# (16 ranks: pipeline 2 x tensor 4 in 2D x data 2), then creates every communicator of it
# on a live MPI world of 16 processes and verifies each against the plan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
pgroups=${PGROUPS_BUILD_DIR:-build}/cli/pgroups
flags=(--pipeline 2 --tensor 4 --mode 2d)

echo "== pgroups plan --world-size 16 ${flags[*]}"
"$pgroups" plan --world-size 16 "${flags[@]}"
echo
echo "== mpirun -np 16 pgroups verify ${flags[*]}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun -np 16 --oversubscribe --mca mpi_yield_when_idle 1 "$pgroups" verify "${flags[@]}" "$@"
