#!/usr/bin/env bash
# Installs, from Debian's archive, what pgroups needs to build, test and run, and NCCL from
# the registry where CUDA is present without it. Skips apt-get (and pip) entirely when
# everything is already there, so repeated runs cost nothing.
set -euo pipefail

packages=(
  cmake ninja-build g++ make pkg-config
  openmpi-bin libopenmpi-dev
  libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  python3 python3-dev pybind11-dev python3-mpi4py python3-pytest python3-numpy python3-torch
  python3-venv python3-hypothesis  # scripts/install-venv.sh (torch 2.x); property tests
  ccache  # scripts/build.sh: the later builds of one run (shared, sanitizer, pip) reuse objects
  chromium  # renders `plan --html` in the picture test (skipped without it)
  iproute2 procps  # scripts/multinode.sh: ip netns, pgrep
  libpmix-dev libgloo-dev  # the PMIx bootstrap; the gloo backend (CPU groups with no MPI)
  slurm-wlm munge  # tests/slurm: a real Slurm started by the test (scripts/slurm-cluster.sh)
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "pgroups: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# NCCL: the registry's wheel into .deps/nccl where CUDA is present but the system has no
# NCCL, so that a plain configure builds the NCCL backend (scripts/install-nccl.sh).
"$(dirname "$0")/install-nccl.sh"
