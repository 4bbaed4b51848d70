#!/usr/bin/env bash
# Makes the project's own virtual environment for torch 2.x: ${PGROUPS_VENV:-.venv}, from
# Debian's /usr/bin/python3 with the system site packages (Debian's mpi4py, numpy, pytest,
# hypothesis), and installs python/requirements/torch2.txt into it with pip. The pgroups
# module built for /usr/bin/python3 loads unchanged in it (same interpreter), so the tests
# run the same files under both torches. Does nothing when the venv already holds exactly
# these requirements (a stamp of the file), so repeated runs cost nothing. The linters of
# scripts/lint.sh (python/requirements/lint.txt) go into the same venv, with a stamp of
# their own, so that a new pin of one of them does not reinstall torch.
# Then .venv-resiliency (python/requirements/resiliency.txt: nvidia-resiliency-ext), which
# reuses .venv's torch through a path file instead of installing it twice.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${PGROUPS_VENV:-.venv}
requirements=python/requirements/torch2.txt
nodeps=python/requirements/torch2-nodeps.txt
stamp="$venv/.pgroups-requirements"
lint=python/requirements/lint.txt
lint_stamp="$venv/.pgroups-lint-requirements"
install_lint() {
  if ! cmp -s "$lint" "$lint_stamp"; then
    "$venv/bin/python" -m pip install -q -r "$lint"
    cp "$lint" "$lint_stamp"
  fi
}
install_resiliency() {
  local resiliency=${PGROUPS_RESILIENCY_VENV:-.venv-resiliency}
  local wanted=python/requirements/resiliency.txt
  local site
  site=$(cd "$venv" && pwd)/lib/python3.11/site-packages
  if [[ -x "$resiliency/bin/python" ]] && cmp -s "$wanted" "$resiliency/.pgroups-requirements"; then
    return
  fi
  echo "pgroups: making $resiliency (nvidia-resiliency-ext over $venv's torch)"
  /usr/bin/python3 -m venv --system-site-packages "$resiliency"
  echo "$site" > "$resiliency/lib/python3.11/site-packages/pgroups-torch2.pth"
  "$resiliency/bin/python" -m pip install -q -r "$wanted"
  cp "$wanted" "$resiliency/.pgroups-requirements"
}
if [[ -x "$venv/bin/python" ]] && cat "$requirements" "$nodeps" | cmp -s - "$stamp"; then
  install_lint
  install_resiliency
  exit 0
fi
echo "pgroups: making $venv (torch 2.x) from /usr/bin/python3"
/usr/bin/python3 -m venv --system-site-packages "$venv"
# This project's machines keep the CPU build of torch in /opt/wheels and point pip at it
# through PIP_FIND_LINKS; where the variable is lost but the folder is there, use it, so
# that pip never falls back to PyPI's default (CUDA) build of several GB.
find_links=()
if [[ -z ${PIP_FIND_LINKS:-} && -d /opt/wheels ]]; then find_links=(--find-links /opt/wheels); fi
"$venv/bin/python" -m pip install -q "${find_links[@]}" -r "$requirements"
# Megatron-core and Colossal-AI without their dependencies, which would replace torch.
"$venv/bin/python" -m pip install -q --no-deps --no-build-isolation -r "$nodeps"
cat "$requirements" "$nodeps" > "$stamp"
install_lint
install_resiliency
"$venv/bin/python" -c 'import torch; print("pgroups:", "'"$venv"'", "has torch", torch.__version__)'
