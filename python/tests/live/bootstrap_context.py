"""pgroups.ParallelContext over a bootstrap, with no MPI and no torch in the job: one
process of a job started by a launcher (tests/launch/launch_by_hand.sh, torchrun, srun).
Every kind's Group must answer the layout's rank, size and members, and its all-gather of
the global ranks through its own gloo context must give the members. With --bad-rank R,
rank R passes a bad argument (--bad: the tensor size's type, the default; an unknown
backend; an object that is no bootstrap; a timeout of the wrong type): every rank must
raise that error, carried by the construction's agreement. Prints one line per rank;
exits 1 on a wrong answer."""

from __future__ import annotations

import sys

import pgroups


def main() -> int:
    bad = int(sys.argv[sys.argv.index("--bad-rank") + 1]) if "--bad-rank" in sys.argv else -1
    what = sys.argv[sys.argv.index("--bad") + 1] if "--bad" in sys.argv else "tensor"
    bootstrap = pgroups.start_bootstrap("auto", timeout=30)
    arguments = {"tensor": 2, "pipeline": 2, "backend": "gloo", "timeout": 30}
    if bootstrap.rank == bad:
        arguments.update({"tensor": {"tensor": "two"}, "backend": {"backend": "glooo"},
                          "bootstrap": {"bootstrap": 42}, "timeout": {"timeout": "soon"}}[what])
    try:
        context = pgroups.ParallelContext(**arguments)  # type: ignore[arg-type]
    except (TypeError, pgroups.ConfigError) as error:
        print(f"rank {bootstrap.rank}: carried {type(error).__name__}: {error}", flush=True)
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
