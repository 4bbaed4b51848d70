#!/usr/bin/env bash
# Installs NCCL from the registry's wheel (nvidia-nccl-cu<CUDA major>, pinned) into
# ${PGROUPS_NCCL_DEPS:-.deps/nccl}, where a plain configure (PGROUPS_WITH_NCCL=AUTO, no flags)
# finds it: the project's machines have the CUDA toolkit but no system NCCL, and without
# this the NCCL backend is built and tested nowhere. The wheel holds include/nccl.h and
# lib/libnccl.so.2 only (no unversioned libnccl.so), so CMake looks the library up by that
# versioned name. Does nothing when the system has NCCL, when there is no CUDA toolkit, or
# when this exact wheel is already installed (a stamp), so repeated runs cost nothing.
# Environment: PGROUPS_NCCL_DEPS (the folder), CUDAToolkit_ROOT or CUDA_HOME (default
# /usr/local/cuda), PGROUPS_NCCL_FORCE=1 (install even where a system NCCL is found).
set -euo pipefail
cd "$(dirname "$0")/.."
nccl_version=2.32.3
target=${PGROUPS_NCCL_DEPS:-.deps/nccl}
cuda_root=${CUDAToolkit_ROOT:-${CUDA_HOME:-/usr/local/cuda}}

if [[ ! -x $cuda_root/bin/nvcc && ! -f $cuda_root/version.json ]]; then
  echo "pgroups: no CUDA toolkit at $cuda_root; NCCL not installed (the NCCL backend needs both)"
  exit 0
fi
# A system NCCL (a distribution package or the toolkit's own copy) is what CMake prefers
# anyway; a second copy would only make two libnccl on one machine.
if [[ -z ${PGROUPS_NCCL_FORCE:-} ]] && { [[ -f /usr/include/nccl.h || -f $cuda_root/include/nccl.h ]] ||
     ldconfig -p 2>/dev/null | grep -q 'libnccl\.so'; }; then
  exit 0
fi

# The CUDA major version picks the wheel: its libnccl is built against that runtime.
cuda_major=""
if [[ -f $cuda_root/version.json ]]; then
  cuda_major=$(sed -n 's/.*"cuda" *: *{[^}]*"version" *: *"\([0-9]*\)\..*/\1/p' "$cuda_root/version.json" | head -1)
  [[ -n $cuda_major ]] || cuda_major=$(tr -d '\n' < "$cuda_root/version.json" |
    sed -n 's/.*"cuda"[^}]*"version" *: *"\([0-9]*\)\..*/\1/p')
fi
if [[ -z $cuda_major && -x $cuda_root/bin/nvcc ]]; then
  cuda_major=$("$cuda_root/bin/nvcc" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
fi
if [[ ! $cuda_major =~ ^[0-9]+$ ]]; then
  echo "pgroups: could not read the CUDA version of $cuda_root; NCCL not installed" >&2
  exit 1
fi
package="nvidia-nccl-cu$cuda_major==$nccl_version"
stamp="$target/.pgroups-nccl"
if [[ -f $target/include/nccl.h && -f $target/lib/libnccl.so.2 ]] && [[ $(cat "$stamp" 2>/dev/null) == "$package" ]]; then
  exit 0
fi

echo "pgroups: installing $package into $target (no system NCCL)"
# The venv's pip when there is one (newer), else Debian's; PIP_FIND_LINKS is honoured by
# pip itself, as in scripts/install-venv.sh.
python=/usr/bin/python3
[[ -x ${PGROUPS_VENV:-.venv}/bin/python ]] && python=${PGROUPS_VENV:-.venv}/bin/python
tmp="$target.tmp"
rm -rf "$tmp"
"$python" -m pip install -q --no-deps --disable-pip-version-check --root-user-action=ignore --target "$tmp" "$package"
# The wheel lays its files under nvidia/nccl/; keep just that tree, as an NCCL root.
src="$tmp/nvidia/nccl"
if [[ ! -f $src/include/nccl.h || ! -f $src/lib/libnccl.so.2 ]]; then
  echo "pgroups: $package has no include/nccl.h or lib/libnccl.so.2 under nvidia/nccl" >&2
  exit 1
fi
rm -rf "$target"
mkdir -p "$(dirname "$target")"
mv "$src" "$target"
rm -rf "$tmp"
echo "$package" > "$stamp"
echo "pgroups: NCCL $nccl_version in $target"
