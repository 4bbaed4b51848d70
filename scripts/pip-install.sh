#!/usr/bin/env bash
# `pip install .` as a user runs it: a fresh virtual environment (${PGROUPS_PIP_VENV:-build-pip-venv},
# from /usr/bin/python3 with the system site packages, for Debian's mpi4py at run time; the
# build itself is isolated and brings its own), the project built by its own CMake through
# scikit-build-core, then `import pgroups` from the installed package (not the source tree)
# and a live ParallelContext on 4 MPI ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${PGROUPS_PIP_VENV:-build-pip-venv}
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
python=$PWD/$venv/bin/python
start=$SECONDS
if command -v ccache >/dev/null; then export CMAKE_ARGS="${CMAKE_ARGS:-} -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"; fi
"$python" -m pip install . 2>&1 | grep -v "is ignored: it is neither a file nor a directory" | tail -5
echo "pgroups: pip install . took $((SECONDS - start)) s"
cd /  # away from the source tree, so that the installed package is the one imported
"$python" - <<'PY'
import pathlib, pgroups
where = pathlib.Path(pgroups.__file__).resolve()
assert "site-packages" in where.parts, where
print("pgroups", pgroups.__version__, "from", where.parent)
print(pgroups.Plan(8, pipeline=2, tensor=4, mode="2d").group_of(5, "2d_col"))
assert hasattr(pgroups, "ParallelContext"), "the wheel was built without the MPI context"
PY
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun -np 4 --oversubscribe --mca mpi_yield_when_idle 1 "$python" -c '
from mpi4py import MPI
import pgroups
with pgroups.ParallelContext(pipeline=2, tensor=2, mode="1d") as ctx:
    group = ctx.get_group(pgroups.ParallelMode.TENSOR)
    total = group.allreduce(MPI.COMM_WORLD.Get_rank())
    assert total == sum(ctx.get_ranks_in_group(pgroups.ParallelMode.TENSOR)), total
    if MPI.COMM_WORLD.Get_rank() == 0:
        print("pgroups: installed package: live ParallelContext on 4 ranks OK")
'
