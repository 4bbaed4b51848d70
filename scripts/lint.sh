#!/usr/bin/env bash
# The linters, with the versions pinned in python/requirements/lint.txt (installed into
# .venv by scripts/install-venv.sh): ruff on the Python package and its benchmarks, mypy
# on the package (configured in pyproject.toml; mypy reads the extension's type stub,
# python/pgroups/_pgroups.pyi), and clang-format in dry run over every tracked C++ file
# against .clang-format; and the sizes: no tracked source file over 600 lines, no C++
# function over 100 lines (lizard; the exceptions, each justified, are listed in
# scripts/function-size-exceptions.txt) and no Python function over 100 statements (ruff's
# PLR0915, pyproject.toml). Exits non-zero on any finding. PGROUPS_LINT_SKIP_FORMAT=1 leaves
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
echo "== sizes: files <= 600 lines, functions <= 100"
too_long=$(git ls-files -z '*.cpp' '*.hpp' '*.h' '*.cu' '*.py' | xargs -0 wc -l | awk '$2 != "total" && $1 > 600')
if [[ -n $too_long ]]; then
  echo "files over 600 lines:" >&2
  echo "$too_long" >&2
  status=1
fi
"$venv/bin/lizard" -l cpp -L 100 -C 1000 -a 1000 -T nloc=100000 -w -W scripts/function-size-exceptions.txt \
  src include cli python/src bench examples fuzz || status=1
if [[ -z ${PGROUPS_LINT_SKIP_FORMAT:-} ]]; then
  echo "== clang-format $("$venv/bin/clang-format" --version | sed 's/.*version //')"
  git ls-files -z '*.cpp' '*.hpp' '*.h' '*.cu' | xargs -0 "$venv/bin/clang-format" --dry-run --Werror || status=1
fi
exit $status
