#!/usr/bin/env bash
# gpu-kit-run.sh: on a lent GPU machine, everything in one command: unpacks the kit that
# scripts/gpu-kit.sh made (.gpu-kit/pgroups-gpu-kit.tar.gz, carried with the working tree),
# points the environment at it (PATH, LD_LIBRARY_PATH, OPAL_PREFIX, CMAKE_PREFIX_PATH),
# builds GoogleTest from the kit's sources, finds the machine's CUDA and NCCL (PyTorch's
# wheel nvidia-nccl-* is often the only NCCL there), checks that the kit's mpirun starts
# two processes, then runs scripts/gpu-check.sh, which configures and builds pgroups with
# PGROUPS_WITH_NCCL=ON and runs every GPU check. docs/using/gpu-kit.md says what is in the kit.
#
# Usage: scripts/gpu-kit-run.sh [--prepare | --configure | --exec CMD...] [gpu-check.sh arguments...]
#   --prepare    stop after the environment, GoogleTest and the mpirun check
#   --exec CMD   after those, run CMD in the kit's environment (e.g. a rebuild, ompi_info)
#   --configure  stop after configuring pgroups (no build): the kit's test on a machine
#                without a GPU
# Environment: PGROUPS_GPU_KIT (the archive; default <repo>/.gpu-kit/pgroups-gpu-kit.tar.gz),
#   PGROUPS_GPU_KIT_WORK (where it is unpacked and GoogleTest built; default
#   /tmp/pgroups-gpu-kit), NCCL_ROOT (an NCCL with include/nccl.h and lib/libnccl.so*,
#   instead of searching), PGROUPS_GPU_PYTHON (the interpreter to build the module for;
#   default python3 where it imports torch), PGROUPS_JOBS, PGROUPS_GPU_BUILD_DIR and
#   CMAKE_ARGS as for gpu-check.sh. Where OUT is set (the device tool), the log and KIT.txt are copied there.
# Exit status: gpu-check.sh's; 2 when the kit, CUDA or NCCL is missing or the kit's MPI
#   does not start.

set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
archive="${PGROUPS_GPU_KIT:-$root/.gpu-kit/pgroups-gpu-kit.tar.gz}"
work="${PGROUPS_GPU_KIT_WORK:-/tmp/pgroups-gpu-kit}"
jobs="${PGROUPS_JOBS:-$(nproc 2>/dev/null || echo 4)}"
stop=""
case "${1:-}" in
  --prepare|--configure|--exec) stop="${1#--}"; shift ;;
  -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac

say() { printf '\n=== kit: %s\n' "$*"; }
die() { echo "gpu-kit-run.sh: $*" >&2; exit 2; }
[[ -f "$archive" ]] || die "no kit at $archive: run scripts/gpu-kit.sh where the packages are, and carry .gpu-kit"

# --- unpack --------------------------------------------------------------------------------
# Unpacked outside the repository, so that nothing of it is sent back or built over; kept
# when the same archive was unpacked before (a second call on a warm machine).
say "unpack $archive into $work"
kit="$work/pgroups-gpu-kit"
stamp="$work/.archive-stamp"
sum="$(cksum <"$archive")"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$sum" ]]; then
  rm -rf "$work"
  mkdir -p "$work"
  tar -C "$work" -xzf "$archive"
  echo "$sum" >"$stamp"
fi
cat "$kit/KIT.txt"

# --- environment ---------------------------------------------------------------------------
multiarch=x86_64-linux-gnu
mpi="$kit/mpi"
# Open MPI finds its plugins, help files and wrapper data below OPAL_PREFIX; only its
# configuration directory is absolute in Debian's build.
export OPAL_PREFIX="$mpi" OPAL_SYSCONFDIR="$mpi/etc/openmpi"
# Debian configured PMIx with absolute directories, so each is named, not only the prefix
# (else its plugins and help files are looked for under /usr/lib/x86_64-linux-gnu/pmix2).
pmix="$mpi/deps/pmix2"
export PMIX_PREFIX="$pmix" PMIX_EXEC_PREFIX="$pmix" PMIX_LIBDIR="$pmix/lib" PMIX_PKGLIBDIR="$pmix/lib/pmix" \
  PMIX_DATAROOTDIR="$pmix/share" PMIX_DATADIR="$pmix/share" PMIX_PKGDATADIR="$pmix/share/pmix" \
  PMIX_SYSCONFDIR="$pmix/share" PMIX_MCA_mca_base_component_path="$pmix/lib/pmix"
# Containers run as root; Open MPI refuses that unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One node: start ranks locally, without looking for ssh (the machines may have none).
export OMPI_MCA_plm=isolated
# The carried copies of libevent, hwloc, ... are used only where the machine has no library
# of that name: a machine's own copy may be newer than Debian 12's, and shadowing it could
# break the machine's other programs run from this environment.
active="$work/deps-active"
rm -rf "$active"
mkdir -p "$active"
system_sonames="$( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null || true) | awk '{print $1}')"
for lib in "$mpi/deps"/*.so*; do
  soname="$(basename "$lib")"
  if ! grep -qxF "$soname" <<<"$system_sonames"; then ln -s "$lib" "$active/$soname"; fi
done
echo "carried libraries in use: $(cd "$active" && ls | tr '\n' ' ')"
export PATH="$mpi/bin:$PATH"
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="$PATH:/usr/local/cuda/bin"
fi
export LD_LIBRARY_PATH="$mpi/lib/$multiarch:$mpi/deps/pmix2/lib:$active${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# --- MPI -------------------------------------------------------------------------------------
say "the kit's MPI: mpirun -np 2 uname -n"
mpirun --version 2>&1 | head -n1 || true
if ! timeout 60 mpirun -np 2 uname -n; then
  die "the kit's mpirun did not start two processes (see above; ompi_info --all lists the plugins)"
fi

# --- GoogleTest -------------------------------------------------------------------------------
# Built with this machine's compiler: the tests link it, and a library built on Debian could
# disagree with another libstdc++.
say "GoogleTest from the kit's sources"
gtest="$work/googletest"
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
if [[ ! -f "$gtest/.installed" ]]; then
  cmake -S "$kit/src/googletest" -B "$work/googletest-build" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$gtest" -DBUILD_GMOCK=OFF -DINSTALL_GTEST=ON >/dev/null
  cmake --build "$work/googletest-build" -j "$jobs"
  cmake --install "$work/googletest-build" >/dev/null
  touch "$gtest/.installed"
fi
echo "GoogleTest installed in $gtest"

# --- CUDA and NCCL -----------------------------------------------------------------------------
say "CUDA and NCCL"
command -v nvcc >/dev/null 2>&1 || die "no nvcc on PATH or in /usr/local/cuda/bin: the CUDA toolkit is needed"
nvcc --version | tail -n1
# nccl_root_of <dir holding nccl.h>: an NCCL_ROOT for pgroups' find_library, which asks for
# libnccl.so: pip's wheel ships only libnccl.so.2, so a folder of two links stands in.
nccl_root_of() {
  local include="$1" libdir lib
  for libdir in "$include/../lib" "$include/../lib64" "$include/../lib/$multiarch"; do
    lib="$(ls "$libdir"/libnccl.so* 2>/dev/null | head -n1 || true)"
    if [[ -n "$lib" ]]; then
      rm -rf "$work/nccl"
      mkdir -p "$work/nccl/lib"
      ln -s "$(cd "$include" && pwd)" "$work/nccl/include"
      lib="$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")"
      ln -s "$lib" "$work/nccl/lib/libnccl.so"
      # The soname's name too, so that the build's run path (this folder) finds it at run time.
      if [[ "$(basename "$lib")" != libnccl.so ]]; then ln -s "$lib" "$work/nccl/lib/$(basename "$lib")"; fi
      echo "$work/nccl"
      return 0
    fi
  done
  return 1
}
nccl=""
if [[ -n "${NCCL_ROOT:-}" ]]; then
  nccl="$NCCL_ROOT"
else
  # The system's NCCL first, then the one in PyTorch's environment.
  for header in /usr/include/nccl.h /usr/local/cuda/include/nccl.h; do
    if [[ -f "$header" ]] && nccl="$(nccl_root_of "$(dirname "$header")")"; then break; fi
    nccl=""
  done
  if [[ -z "$nccl" ]] && command -v python3 >/dev/null 2>&1; then
    while read -r site; do
      [[ -d "$site/nvidia" ]] || continue
      header="$(find "$site/nvidia" -maxdepth 4 -name nccl.h -path '*nccl*' 2>/dev/null | head -n1)"
      if [[ -n "$header" ]] && nccl="$(nccl_root_of "$(dirname "$header")")"; then break; fi
      nccl=""
    done < <(python3 -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()] + sys.path))' 2>/dev/null)
  fi
fi
[[ -n "$nccl" && -f "$nccl/include/nccl.h" ]] || die "no NCCL found (nccl.h with libnccl.so*); set NCCL_ROOT"
echo "NCCL_ROOT=$nccl ($(grep -E '^#define NCCL_(MAJOR|MINOR|PATCH)' "$nccl/include/nccl.h" | awk '{printf "%s ", $3}'))"
export LD_LIBRARY_PATH="$(readlink -f "$nccl/lib/libnccl.so" | xargs dirname):$LD_LIBRARY_PATH"
if [[ "$stop" == prepare ]]; then exit 0; fi

# --- pgroups: configure, build, check ---------------------------------------------------------
# What gpu-check.sh builds needs no Google Benchmark (bench/). The Python module is built
# for this machine's python3 (pybind11 comes with the kit) where it has torch: the torch
# rows of scripts/gpu-check-multirank.sh need it; without its headers the module skips
# itself at configure and those rows say so.
# PGROUPS_GPU_PYTHON names the interpreter instead (the kit's test does, whose namespace
# hides the libraries Debian's torch needs).
python_args="-DPGROUPS_BUILD_PYTHON=OFF"
py="${PGROUPS_GPU_PYTHON:-}"
if [[ -z "$py" ]] && py="$(command -v python3)" && ! "$py" -c 'import torch' >/dev/null 2>&1; then py=""; fi
if [[ -n "$py" ]]; then
  python_args="-DPGROUPS_BUILD_PYTHON=ON -DPython_EXECUTABLE=$py"
  export PGROUPS_GPU_PYTHON="$py"
fi
export CMAKE_ARGS="-DCMAKE_PREFIX_PATH=$kit;$gtest -DNCCL_ROOT=$nccl -DMPI_CXX_COMPILER=$mpi/bin/mpicxx \
-DMPIEXEC_EXECUTABLE=$mpi/bin/mpiexec -DPGROUPS_BUILD_BENCH=OFF $python_args \
-DPGROUPS_BUILD_EXAMPLES=OFF ${CMAKE_ARGS:-}"
export PGROUPS_JOBS="$jobs"
if [[ "$stop" == exec ]]; then exec "$@"; fi
if [[ "$stop" == configure ]]; then
  build="${PGROUPS_GPU_BUILD_DIR:-$root/build-gpu}"
  # shellcheck disable=SC2086  # CMAKE_ARGS is a space-separated list, as in gpu-check.sh
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DPGROUPS_WITH_NCCL=ON $CMAKE_ARGS
  exit 0
fi

say "scripts/gpu-check.sh $*"
status=0
if [[ -n "${OUT:-}" && -d "${OUT:-}" ]]; then
  cp "$kit/KIT.txt" "$OUT/KIT.txt"
  "$root/scripts/gpu-check.sh" "$@" 2>&1 | tee "$OUT/gpu-check.log" || status=$?
else
  "$root/scripts/gpu-check.sh" "$@" || status=$?
fi
exit "$status"
