#!/usr/bin/env bash
# gpu-kit-test.sh: the GPU kit's test on this machine (Debian 12, root, no GPU needed): runs
# scripts/gpu-kit-run.sh as on a machine that has none of the packages the kit carries.
#
# In a private mount namespace (unshare -m), Debian's Open MPI, PMIx, hwloc, libevent, fmt,
# toml++ and GoogleTest files, the CLI11/nlohmann-json/toml++/fmt headers, GoogleTest's
# sources, their CMake packages and the loader cache (/etc/ld.so.cache, so that every
# carried library is used) are covered by bind mounts, and the environment is emptied
# (env -i, PATH=/usr/local/bin:/usr/bin:/bin). NCCL is given as PyTorch's wheel lays it out
# (site-packages/nvidia/nccl/{include,lib/libnccl.so.2}, found through PYTHONPATH). Then:
# the kit's mpirun starts two processes, GoogleTest builds, pgroups configures with
# PGROUPS_WITH_NCCL=ON from the kit alone (pybind11 too, for the Python module), a program built with the kit's mpicxx runs an
# MPI_Allreduce on two ranks, and the targets in PGROUPS_KIT_TEST_TARGETS build.
#
# Usage: scripts/gpu-kit-test.sh
# Environment: PGROUPS_KIT_TEST_NCCL (a folder with include/nccl.h and lib*/libnccl.so.2;
#   without one, the test stops after the MPI and GoogleTest steps), PGROUPS_KIT_TEST_TARGETS
#   (default pgroups_config; e.g. "pgroups_config nccl_unit_test"), PGROUPS_JOBS (default 1).
# Exit status: 0 passed; 1 a step failed; 2 not root or no unshare.

set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ "$(id -u)" == 0 ]] || { echo "gpu-kit-test.sh: needs root (bind mounts)" >&2; exit 2; }
command -v unshare >/dev/null 2>&1 || { echo "gpu-kit-test.sh: needs unshare (util-linux)" >&2; exit 2; }
[[ -f "$root/.gpu-kit/pgroups-gpu-kit.tar.gz" ]] || "$root/scripts/gpu-kit.sh"

work="$(mktemp -d "${TMPDIR:-/tmp}/pgroups-kit-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/empty" "$work/site/nvidia/nccl/include" "$work/site/nvidia/nccl/lib"

nccl="${PGROUPS_KIT_TEST_NCCL:-}"
stop=--configure
if [[ -n "$nccl" ]]; then
  cp "$nccl"/include/nccl*.h "$work/site/nvidia/nccl/include/"
  cp "$(ls "$nccl"/lib*/libnccl.so.2 | head -n1)" "$work/site/nvidia/nccl/lib/"
else
  echo "gpu-kit-test.sh: no PGROUPS_KIT_TEST_NCCL: MPI and GoogleTest only, no configure"
  stop=--prepare
fi

# A real MPI program, built with the kit's wrapper: MPI_Init, an allreduce, MPI_Finalize.
cat >"$work/mpi_sum.cpp" <<'EOF'
#include <mpi.h>
#include <cstdio>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, one = 1, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  std::printf("rank %d of %d: sum %d\n", rank, size, sum);
  MPI_Finalize();
  return sum == size ? 0 : 1;
}
EOF

# What to cover: every file of these packages that is a library or a program (links are
# left, their targets covered), and these folders.
packages=(libopenmpi3 openmpi-bin libpmix2 libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7
          libfmt9 libfmt-dev libtomlplusplus3 libgtest-dev libmunge2)
folders=(/usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 /usr/share/openmpi /etc/openmpi
         /usr/include/CLI /usr/include/nlohmann /usr/include/toml++ /usr/include/fmt /usr/include/gtest
         /usr/include/gmock /usr/src/googletest /usr/src/gtest
         /usr/lib/x86_64-linux-gnu/cmake/fmt /usr/lib/x86_64-linux-gnu/cmake/tomlplusplus
         /usr/lib/x86_64-linux-gnu/cmake/GTest /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json
         /usr/include/pybind11 /usr/lib/cmake/pybind11)
files=()
while read -r f; do
  if [[ -f "$f" && ! -L "$f" ]]; then
    case "$f" in *.so*|*.a|/usr/bin/*) files+=("$f") ;; esac
  fi
done < <(dpkg -L "${packages[@]}" 2>/dev/null)
targets="${PGROUPS_KIT_TEST_TARGETS:-pgroups_config}"

# The part inside the namespace, as one script: its arguments are the paths to cover.
cat >"$work/inside.sh" <<EOF
set -euo pipefail
for path in "\$@"; do
  if [[ -d "\$path" ]]; then mount --bind "$work/empty" "\$path"
  elif [[ -f "\$path" ]]; then mount --bind /dev/null "\$path"; fi
done
exec env -i HOME="$work" PATH=/usr/local/bin:/usr/bin:/bin PYTHONPATH="$work/site" \\
  PGROUPS_JOBS="${PGROUPS_JOBS:-1}" PGROUPS_GPU_KIT_WORK="$work/kit" PGROUPS_GPU_BUILD_DIR="$work/build" \\
  PGROUPS_GPU_PYTHON=/usr/bin/python3 \\
  bash -c '
    set -euo pipefail
    cd "$root"
    scripts/gpu-kit-run.sh $stop
    [[ "$stop" == --configure ]] || exit 0
    # pybind11 from the kit (Debian'"'"'s is covered): the module for the machine'"'"'s Python.
    grep -q "^pybind11_DIR:PATH=$work/kit/" "$work/build/CMakeCache.txt" || {
      echo "gpu-kit-test.sh: pybind11 was not found in the kit:"; grep "^pybind11_DIR" "$work/build/CMakeCache.txt"; exit 1; }
    scripts/gpu-kit-run.sh --exec bash -c "set -e
      mpicxx -o $work/mpi_sum $work/mpi_sum.cpp
      mpirun -np 2 $work/mpi_sum
      cmake --build $work/build -j \\\${PGROUPS_JOBS} --target $targets"
  '
EOF
if unshare -m bash "$work/inside.sh" "${folders[@]}" "${files[@]}" /etc/ld.so.cache; then
  echo "gpu-kit-test.sh: PASS ($( [[ $stop == --configure ]] && echo "MPI, GoogleTest, configure, $targets" || echo "MPI, GoogleTest"))"
else
  echo "gpu-kit-test.sh: FAIL" >&2
  exit 1
fi
