#!/usr/bin/env bash
# The linters, with the versions pinned in python/requirements/lint.txt (installed into
# .venv by scripts/install-venv.sh): ruff on the Python package and its benchmarks, mypy
# on the package (configured in pyproject.toml; mypy reads the extension's type stub,
# python/pgroups/_pgroups.pyi), and clang-format in dry run over every tracked C++ file
# against .clang-format. Exits non-zero on any finding. PGROUPS_LINT_SKIP_FORMAT=1 leaves
# the C++ formatting out.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${PGROUPS_VENV:-.venv}
scripts/install-venv.sh
status=0
echo "== ruff $("$venv/bin/ruff" --version | cut -d' ' -f2)"
"$venv/bin/ruff" check --no-cache python/pgroups python/bench || status=1
echo "== mypy $("$venv/bin/mypy" --version | cut -d' ' -f2)"
"$venv/bin/mypy" --no-incremental || status=1
if [[ -z ${PGROUPS_LINT_SKIP_FORMAT:-} ]]; then
  echo "== clang-format $("$venv/bin/clang-format" --version | sed 's/.*version //')"
  git ls-files -z '*.cpp' '*.hpp' '*.h' '*.cu' | xargs -0 "$venv/bin/clang-format" --dry-run --Werror || status=1
fi
exit $status
