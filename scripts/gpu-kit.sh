#!/usr/bin/env bash
# gpu-kit.sh: packs what a lent GPU machine lacks to build and run scripts/gpu-check.sh.
#
# The GPU machines this project can use have CUDA, PyTorch (with its NCCL), CMake and ninja
# but install nothing and reach no registry, so whatever else the build and the checks need
# travels with the working tree (64 MiB in all). This script, run on a Debian 12 machine
# with the packages scripts/install-deps.sh installs, writes one archive,
#   <repo>/.gpu-kit/pgroups-gpu-kit.tar.gz   (git-ignored; name .gpu-kit in the device
#                                            tool's carry)
# holding, under one relocatable prefix:
#   include/         CLI11, nlohmann-json, toml++, fmt and pybind11 headers (all header-only)
#   lib/cmake/       pybind11's own CMake package (relocatable: it finds include/ from its
#                    place), so the pgroups module builds for the machine's Python and
#                    torch (scripts/gpu-check-multirank.sh's torch rows)
#   share/cmake/     small CMake package files of our own that make find_package(fmt,
#                    CLI11, nlohmann_json, tomlplusplus) find those headers wherever the
#                    kit is unpacked (Debian's own files name /usr paths or a shared toml++)
#   src/googletest/  GoogleTest's sources: built there, with that machine's compiler,
#                    because a static library built here may not link with another libstdc++
#   mpi/             Debian's Open MPI runtime (mpirun, orted, the wrapper compilers, its
#                    libraries, the MCA plugins whose dependencies travel too, help files,
#                    configuration, headers), relocated: OPAL_PREFIX points it here
#   mpi/deps/        the shared libraries Open MPI needs beyond glibc and the compiler's
#                    runtime (libevent, hwloc, PMIx, libudev, ...); gpu-kit-run.sh uses
#                    only those the GPU machine lacks, so that it never shadows a newer copy
#   KIT.txt          what is inside, its versions and the newest glibc symbol it needs
# scripts/gpu-kit-run.sh unpacks it there, builds pgroups with NCCL and runs gpu-check.sh.
#
# Usage: scripts/gpu-kit.sh [--out DIR]   (default <repo>/.gpu-kit)
# Exit status: 0 kit written; 1 something it needs is missing here or the kit is too big.

set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/.gpu-kit"
while (($#)); do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-kit.sh: unknown argument '$1' (try --help)" >&2; exit 1 ;;
  esac
done

die() { echo "gpu-kit.sh: $*" >&2; exit 1; }
multiarch=x86_64-linux-gnu
libdir=/usr/lib/$multiarch
ompi_lib=$libdir/openmpi/lib
[[ "$(uname -m)" == x86_64 ]] || die "the GPU machines are x86-64; build the kit on an x86-64 machine"
for need in /usr/include/CLI/CLI.hpp /usr/include/nlohmann/json.hpp /usr/include/toml++/toml.h \
            /usr/include/fmt/format.h /usr/src/googletest/CMakeLists.txt /usr/bin/orterun \
            /usr/bin/opal_wrapper "$ompi_lib/openmpi3" /usr/share/openmpi /usr/include/pybind11 \
            /usr/lib/cmake/pybind11; do
  [[ -e "$need" ]] || die "$need is missing (Debian: scripts/install-deps.sh)"
done

stage="$(mktemp -d "${TMPDIR:-/tmp}/pgroups-gpu-kit.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
kit="$stage/pgroups-gpu-kit"
mkdir -p "$kit/include" "$kit/src" "$kit/share/cmake"

# --- header-only libraries -------------------------------------------------------------
cp -a /usr/include/CLI /usr/include/nlohmann /usr/include/toml++ /usr/include/fmt "$kit/include/"
cp -a /usr/include/pybind11 "$kit/include/"
mkdir -p "$kit/lib/cmake"
cp -a /usr/lib/cmake/pybind11 "$kit/lib/cmake/"
[[ -f "$kit/include/fmt/format-inl.h" ]] || die "fmt's format-inl.h is missing: fmt cannot be used header-only"
# pkg-version <package>: Debian's version of a package, for KIT.txt and the version files.
pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null | sed 's/[+~-].*//'; }

# write_package <name> <version> <target> <compile definitions...>: a find_package config
# of an INTERFACE target over the kit's include/, located relative to this file so the kit
# can be unpacked anywhere. A version file accepts any request up to the version carried.
write_package() {
  local name="$1" version="$2" target="$3"
  shift 3
  local dir="$kit/share/cmake/$name"
  mkdir -p "$dir"
  {
    echo "# Written by pgroups' scripts/gpu-kit.sh: $name $version, header-only, from the kit."
    echo "get_filename_component(_kit_prefix \"\${CMAKE_CURRENT_LIST_DIR}/../../..\" ABSOLUTE)"
    echo "if(NOT TARGET $target)"
    echo "  add_library($target INTERFACE IMPORTED)"
    echo "  set_target_properties($target PROPERTIES INTERFACE_INCLUDE_DIRECTORIES \"\${_kit_prefix}/include\")"
    if (($#)); then
      echo "  set_property(TARGET $target PROPERTY INTERFACE_COMPILE_DEFINITIONS $*)"
    fi
    echo "endif()"
    echo "set(${name}_VERSION $version)"
    echo "unset(_kit_prefix)"
  } >"$dir/${name}Config.cmake"
  {
    echo "set(PACKAGE_VERSION $version)"
    echo "if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)"
    echo "  set(PACKAGE_VERSION_COMPATIBLE FALSE)"
    echo "else()"
    echo "  set(PACKAGE_VERSION_COMPATIBLE TRUE)"
    echo "  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)"
    echo "    set(PACKAGE_VERSION_EXACT TRUE)"
    echo "  endif()"
    echo "endif()"
  } >"$dir/${name}ConfigVersion.cmake"
}
fmt_version="$(pkg_version libfmt-dev)"
cli11_version="$(pkg_version libcli11-dev)"
json_version="$(pkg_version nlohmann-json3-dev)"
toml_version="$(pkg_version libtomlplusplus-dev)"
gtest_version="$(pkg_version googletest)"
ompi_version="$(pkg_version openmpi-bin)"
# fmt without its compiled library: FMT_HEADER_ONLY pulls format-inl.h into every user.
write_package fmt "${fmt_version:-0}" fmt::fmt FMT_HEADER_ONLY=1
write_package CLI11 "${cli11_version:-0}" CLI11::CLI11
write_package nlohmann_json "${json_version:-0}" nlohmann_json::nlohmann_json
# toml++ defaults to header-only when TOML_HEADER_ONLY is not defined (Debian's own config
# sets it to 0 and links its shared library, which does not travel).
write_package tomlplusplus "${toml_version:-0}" tomlplusplus::tomlplusplus

# --- GoogleTest, as sources --------------------------------------------------------------
cp -a /usr/src/googletest "$kit/src/googletest"

# --- Open MPI, relocated ---------------------------------------------------------------------
# Debian's Open MPI resolves its directories from OPAL_PREFIX with the same layout below
# it as below /usr (libdir <prefix>/lib/x86_64-linux-gnu/openmpi/lib, pkgdatadir
# <prefix>/share/openmpi); only sysconfdir (/etc/openmpi) is absolute, so the run script
# sets OPAL_SYSCONFDIR too.
mpi="$kit/mpi"
mkdir -p "$mpi/bin" "$mpi/lib/$multiarch/openmpi/lib" "$mpi/share" "$mpi/etc" "$mpi/deps"
cp -L /usr/bin/orterun /usr/bin/orted /usr/bin/ompi_info /usr/bin/opal_wrapper "$mpi/bin/"
ln -s orterun "$mpi/bin/mpirun"
ln -s orterun "$mpi/bin/mpiexec"
# opal_wrapper picks its flags by the name it is called by (<name>-wrapper-data.txt).
for wrapper in mpicc mpicxx mpic++; do ln -s opal_wrapper "$mpi/bin/$wrapper"; done
# The real libraries sit in the multiarch directory; openmpi/lib holds relative links to
# them (../../libmpi.so.40), kept as they are.
for lib in libmpi libmpi_cxx libopen-rte libopen-pal libmca_common_sm libmca_common_ompio \
           libmca_common_monitoring; do
  cp -a "$libdir/$lib".so.* "$mpi/lib/$multiarch/"
done
for link in libmpi.so libmpi_cxx.so libopen-rte.so libopen-pal.so; do
  cp -a "$ompi_lib/$link" "$mpi/lib/$multiarch/openmpi/lib/"
done
# The plugins, less those that need networks or libraries a single GPU node has no use for
# (UCX, libfabric, verbs, PSM, netlink) and OpenSHMEM's: each would be one more library to
# carry, and Open MPI would warn at every start that it cannot open it.
mkdir -p "$mpi/lib/$multiarch/openmpi/lib/openmpi3"
skip='_(ucx|ofi|openib|psm|psm2)\.so$|^mca_reachable_netlink\.so$|^mca_(atomic|memheap|scoll|spml|sshmem)_'
for plugin in "$ompi_lib"/openmpi3/*.so; do
  if ! basename "$plugin" | grep -qE "$skip"; then
    cp -L "$plugin" "$mpi/lib/$multiarch/openmpi/lib/openmpi3/"
  fi
done
cp -a /usr/lib/$multiarch/openmpi/include "$mpi/lib/$multiarch/openmpi/"
# Fortran modules: pgroups is C++, and they are most of the header folder's files.
find "$mpi/lib/$multiarch/openmpi/include" -name '*.mod' -delete
cp -a /usr/share/openmpi "$mpi/share/"
cp -a /etc/openmpi "$mpi/etc/"
# Debian's configuration excludes UCX and friends already; on a node without a network
# fabric the single-copy mechanism (CMA) may also be refused by the sandbox, and vader's
# copy-in/copy-out is enough for the checks.
cat >>"$mpi/etc/openmpi/openmpi-mca-params.conf" <<'EOF'
# Added by pgroups' scripts/gpu-kit.sh: one node, shared memory and self only.
btl = self,vader
btl_vader_single_copy_mechanism = none
EOF

# PMIx, which Debian's Open MPI uses as an external library, with its plugins and help files.
pmix_dir=$libdir/pmix2
if [[ -d "$pmix_dir" ]]; then
  mkdir -p "$mpi/deps/pmix2"
  cp -a "$pmix_dir/lib" "$pmix_dir/share" "$mpi/deps/pmix2/"
  # Its parameter file names the plugins' absolute path; gpu-kit-run.sh names the kit's.
  sed -i 's|^mca_base_component_path *=|# &|' "$mpi/deps/pmix2/share/pmix-mca-params.conf"
fi

# The libraries every Linux machine with a C++ compiler has: never carried, so the
# machine's own (newer or older) glibc and libstdc++ are the ones used.
system_libs='^(linux-vdso\.so|ld-linux-x86-64\.so|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libgcc_s\.so|libstdc\+\+\.so|libutil\.so|libresolv\.so)'
# deps_of <files...>: the sonames and paths those files need, through ldd, with the
# kit's own libraries first so that only what lies outside the kit is reported.
kit_path="$mpi/lib/$multiarch:$mpi/deps/pmix2/lib:$mpi/deps"
deps_of() { LD_LIBRARY_PATH="$kit_path" ldd "$@" 2>/dev/null | awk '/=>/ && $3 ~ /^\// {print $1, $3}' | sort -u; }
objects=("$mpi/bin/orterun" "$mpi/bin/orted" "$mpi/bin/ompi_info" "$mpi/bin/opal_wrapper"
         "$mpi/lib/$multiarch"/lib*.so.*[0-9] "$mpi/lib/$multiarch/openmpi/lib/openmpi3"/*.so)
[[ -d "$mpi/deps/pmix2" ]] && objects+=("$mpi/deps/pmix2/lib"/libpmix.so.* "$mpi/deps/pmix2/lib/pmix"/*.so)
# Two passes: a carried library can itself need another one.
for _ in 1 2; do
  while read -r soname path; do
    if grep -qE "$system_libs" <<<"$soname"; then continue; fi
    case "$path" in "$kit"/*) continue ;; esac
    cp -L "$path" "$mpi/deps/$soname"
    objects+=("$mpi/deps/$soname")
  done < <(deps_of "${objects[@]}")
done
# Every object must now resolve inside the kit or to the system libraries above.
if missing="$(LD_LIBRARY_PATH="$kit_path" ldd "${objects[@]}" 2>/dev/null | grep 'not found' | sort -u)" && [[ -n "$missing" ]]; then
  die "libraries not found for the kit: $missing"
fi

# --- what is inside ----------------------------------------------------------------------------
# newest_glibc <files...>: the newest glibc symbol version those files need, the oldest
# glibc they can run on.
newest_glibc() { objdump -T "$@" 2>/dev/null | grep -oE 'GLIBC_[0-9]+\.[0-9]+' | sort -V -u | tail -n1 || true; }
glibc_max="$(newest_glibc "${objects[@]}")"
glibc_mpi="$(newest_glibc "$mpi/bin"/orterun "$mpi/bin"/orted "$mpi/lib/$multiarch"/lib*.so.*[0-9] \
  "$mpi/lib/$multiarch/openmpi/lib/openmpi3"/*.so "$mpi/deps/pmix2/lib"/libpmix.so.*)"
glibcxx_max="$(objdump -T "${objects[@]}" 2>/dev/null | grep -oE 'GLIBCXX_[0-9.]+' | sort -V -u | tail -n1 || true)"
{
  echo "pgroups GPU kit, written $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(uname -m)"
  echo "fmt $fmt_version (header-only), CLI11 $cli11_version, nlohmann-json $json_version, toml++ $toml_version (header-only)"
  echo "GoogleTest $gtest_version (sources, built on the GPU machine), pybind11 $(pkg_version pybind11-dev) (headers, CMake package)"
  echo "Open MPI $ompi_version (Debian's, relocated with OPAL_PREFIX), PMIx $(pkg_version libpmix2)"
  echo "newest symbol versions needed: ${glibc_max:-none} ${glibcxx_max:-} (Open MPI and PMIx alone: ${glibc_mpi:-none})"
  echo "carried libraries (mpi/deps, used only where the machine lacks them):"
  (cd "$mpi/deps" && ls -1 ./*.so* 2>/dev/null | sed 's|^\./|  |')
} >"$kit/KIT.txt"

mkdir -p "$out"
archive="$out/pgroups-gpu-kit.tar.gz"
rm -f "$archive"
tar -C "$stage" -czf "$archive" pgroups-gpu-kit
cp "$kit/KIT.txt" "$out/KIT.txt"
raw_kib="$(du -sk "$kit" | cut -f1)"
packed_bytes="$(stat -c %s "$archive")"
# The device tool carries the working tree and its carry paths within 64 MiB; the kit
# keeps well under it so that the repository and build inputs fit beside it.
limit=$((40 * 1024 * 1024))
echo "gpu-kit.sh: $archive: $((packed_bytes / 1024)) KiB packed, $((raw_kib / 1024)) MiB unpacked"
cat "$kit/KIT.txt"
((packed_bytes <= limit)) || die "the kit is over $((limit / 1024 / 1024)) MiB packed"
