"""pgroups.ParallelContext over a bootstrap, with no MPI and no torch in the job: one
process of a job started by a launcher (tests/launch/launch_by_hand.sh, torchrun, srun).
Every kind's Group must answer the layout's rank, size and members, and its all-gather of
the global ranks through its own gloo context must give the members. With --bad-rank R,
rank R passes a wrong type: every rank must raise that TypeError, carried by the
construction's agreement. Prints one line per rank; exits 1 on a wrong answer."""

from __future__ import annotations

import sys

import pgroups


def main() -> int:
    bad = int(sys.argv[sys.argv.index("--bad-rank") + 1]) if "--bad-rank" in sys.argv else -1
    bootstrap = pgroups.start_bootstrap("auto", timeout=30)
    tensor = "two" if bootstrap.rank == bad else 2
    try:
        context = pgroups.ParallelContext(tensor=tensor, pipeline=2, backend="gloo", timeout=30)
    except TypeError as error:
        print(f"rank {bootstrap.rank}: carried TypeError: {error}", flush=True)
        return 0 if bad >= 0 else 1
    rank = context.get_global_rank()
    with context:
        for kind in context.group_kinds:
            if not context.is_member(kind):
                continue
            group = context.get_group(kind)
            members = context.get_ranks_in_group(kind)
            seen = (group.members, group.size, group.rank, group.all_gather(rank))
            wanted = (members, len(members), members.index(rank), members)
            if seen != wanted:
                print(f"rank {rank}: {kind}: {seen} where the layout says {wanted}", flush=True)
                return 1
        print(f"rank {rank}: {len(context.group_kinds)} kinds OK, backend {context.backend} on the "
              f"{context.bootstrap.kind} bootstrap", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
