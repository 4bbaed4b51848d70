#!/usr/bin/env bash
# Builds pgroups as shared libraries (BUILD_SHARED_LIBS=ON) into build-shared and runs a
# subset of the tests that covers every library: the layout, configuration and CLI unit
# tests, the consumer tests (install, find_package with CUDA hidden, pkg-config, export
# files), and the MPI backend, the context and `pgroups verify` under mpirun on four
# ranks. Checks first that the libraries really are shared, carry their ABI version, and
# that the CLI runs from the build tree on them.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PGROUPS_SHARED_BUILD_DIR:-build-shared}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
start=$SECONDS
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DPGROUPS_BUILD_PYTHON=OFF \
  -DPGROUPS_BUILD_BENCH=OFF -DPGROUPS_BUILD_EXAMPLES=OFF "${launcher[@]}" >/dev/null
# Only what the tests below need (the full suite is scripts/test.sh's, on static libraries).
targets=(pgroups layout_test config_test cli_test)
# Read whole before matching: `grep -q` would stop at the first match, and under pipefail
# cmake's SIGPIPE would then drop a target that exists.
available=$(cmake --build "$build" --target help)
for target in mpi_test context_test; do
  if [[ $'\n'$available == *$'\n'"$target:"* ]]; then targets+=("$target"); fi
done
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

abi=$(sed -nE 's/^project\(pgroups VERSION ([0-9]+)\.([0-9]+).*/\1.\2/p' CMakeLists.txt)
for library in "$build"/src/*/libpgroups_*.so; do
  soname=$(readelf -d "$library" | sed -nE 's/.*Library soname: \[(.*)\]/\1/p')
  [[ $soname == "$(basename "$library").$abi" ]] || { echo "$library: soname '$soname', expected $(basename "$library").$abi" >&2; exit 1; }
done
# Read whole before matching: `grep -q` stops early, and under pipefail ldd's SIGPIPE
# would fail the check.
libraries=$(ldd "$build/cli/pgroups")
if [[ $libraries != *"libpgroups_layout.so.$abi => $PWD/$build/src/layout/"* ]]; then
  echo "the CLI does not run on the shared libpgroups_layout of $build:" >&2
  echo "$libraries" >&2
  exit 1
fi
"$build/cli/pgroups" plan -w 8 -p 2 -t 4 -m 2d >/dev/null
echo "shared libraries: $(ls "$build"/src/*/libpgroups_*.so | xargs -n1 basename | tr '\n' ' ')(soname .$abi)"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The add_subdirectory consumer is left out: it builds static libraries from source,
# which scripts/test.sh does already.
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" \
  -L 'layout_test|config_test|cli_test|consumer' -E consumer_find_package_and_add_subdirectory
ctest --test-dir "$build" --output-on-failure \
  -R '^(mpi_np4|context_np4|cli_verify_with_a_timeout_and_no_fault_succeeds)$'
echo "shared libraries: built and tested in $((SECONDS - start)) s"
