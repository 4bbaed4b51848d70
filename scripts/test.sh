#!/usr/bin/env bash
# The test command of the README: installs dependencies, builds, and runs every test
# (unit, CLI, and MPI tests under real mpirun).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/install-venv.sh
scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir "${PGROUPS_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
