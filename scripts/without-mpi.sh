#!/usr/bin/env bash
# Builds pgroups with no MPI (-DPGROUPS_WITH_MPI=OFF, gloo on) into build-nompi and runs its
# tests: the context, the CLI's verify and bench, the bootstrap example and the Python
# module must build over a bootstrap alone, no <mpi.h> anywhere, and every test that such a
# build registers must pass (verify, bench and Python's ParallelContext on gloo included).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PGROUPS_NOMPI_BUILD_DIR:-build-nompi}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
start=$SECONDS
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPGROUPS_WITH_MPI=OFF -DPGROUPS_WITH_GLOO=ON \
  -DPGROUPS_BUILD_PYTHON=ON -DPGROUPS_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"
if ! compgen -G "$build/src/context/libpgroups_context.*" >/dev/null || compgen -G "$build/src/mpi/*" >/dev/null; then
  echo "without MPI: $build should hold pgroups_context and no pgroups_mpi" >&2
  exit 1
fi
# The Slurm cluster runs MPI jobs; it is the full suite's (scripts/test.sh).
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -E '^slurm_'
echo "without MPI: built and tested in $((SECONDS - start)) s"
