"""pgroups quick start, part 2: live groups as mpi4py communicators.

    mpirun -np 8 env PYTHONPATH=build/python /usr/bin/python3 python/examples/quickstart_mpi.py
"""

from mpi4py import MPI

import pgroups

rank = MPI.COMM_WORLD.Get_rank()
with pgroups.ParallelContext(pipeline=2, tensor=4, mode="2d") as ctx:
    row = ctx.get_group(pgroups.ParallelMode.PARALLEL_2D_ROW)  # an mpi4py.MPI.Intracomm
    total = row.allreduce(rank, op=MPI.SUM)
    lines = MPI.COMM_WORLD.gather(
        f"rank {rank}: 2d_row {ctx.get_ranks_in_group('2d_row')} local rank {ctx.get_local_rank('2d_row')}, "
        f"all-reduce of ranks = {total}; pipeline stage first={ctx.is_pipeline_first_stage()}")
    if rank == 0:
        print("\n".join(lines))
