"""pgroups quick start, part 1: the layout of a plan, no MPI needed.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/quickstart.py
"""

import pgroups

plan = pgroups.Plan(8, pipeline=2, tensor=4, mode="2d")
print(plan, "data parallel size", plan.data_parallel_size)
for mode in plan.modes:
    print(f"  {mode.value:8} {plan.groups(mode)}")
print("rank 5:", plan.coordinates(5), "2d_col group", plan.group_of(5, pgroups.ParallelMode.PARALLEL_2D_COL))
try:
    pgroups.Plan(8, tensor=8, mode="2d")
except pgroups.ConfigError as error:
    print("ConfigError:", error)
