#!/usr/bin/env bash
# Configures and builds pgroups into ${PGROUPS_BUILD_DIR:-build} (Release, Ninja).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${PGROUPS_BUILD_DIR:-build}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=${PGROUPS_BUILD_TYPE:-Release} "${launcher[@]}" "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
