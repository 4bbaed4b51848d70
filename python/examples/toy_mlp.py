"""The model, data and reference losses the recovery examples share (elastic_training.py,
torchrun_restart.py): a two-layer MLP whose layers are split over tp by hand (the first by
output rows, the second by input columns, its partial outputs summed over tp).

The data rule: the global batch of step k is samples [k*G, (k+1)*G) of one fixed data set,
and replica d of D takes the d-th of D equal contiguous slices, so that the mean of the
replicas' gradients is the gradient of the whole global batch whatever D is (G must divide
by every D a job runs): the per-step losses of any layout, before and after a loss, are
those of one process training the unsplit model (reference_losses).

The checkpoint: after each step, replica 0's tp ranks save their shards and the losses so
far (save); a new start agrees on the last step whose every shard is on disk (resume_step)
and loads the unsplit weights (load), which any tp size can slice again.
"""

from __future__ import annotations

import os
import pathlib
import signal
import sys
import time
from typing import List, Tuple

import torch
import torch.distributed as dist

GLOBAL_BATCH = 24
IN, HIDDEN = 8, 16
LR = 0.05


def make_data(steps: int) -> Tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(steps * GLOBAL_BATCH, IN, generator=g, dtype=torch.float64)
    w = torch.randn(IN, 1, generator=g, dtype=torch.float64)
    y = torch.tanh(x @ w) + 0.1 * torch.randn(steps * GLOBAL_BATCH, 1, generator=g, dtype=torch.float64)
    return x, y


def make_weights() -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The unsplit model's first weights: w1 (HIDDEN x IN), b1 (HIDDEN), w2 (1 x HIDDEN)."""
    g = torch.Generator().manual_seed(99)
    w1 = torch.randn(HIDDEN, IN, generator=g, dtype=torch.float64) * 0.3
    b1 = torch.zeros(HIDDEN, dtype=torch.float64)
    w2 = torch.randn(1, HIDDEN, generator=g, dtype=torch.float64) * 0.3
    return w1, b1, w2


def batch_of(x: torch.Tensor, y: torch.Tensor, step: int, replica: int, replicas: int):
    """Replica ``replica``'s slice of step ``step``'s global batch."""
    if GLOBAL_BATCH % replicas:
        raise ValueError(f"global batch {GLOBAL_BATCH} does not divide by dp {replicas}")
    share = GLOBAL_BATCH // replicas
    first = step * GLOBAL_BATCH + replica * share
    return x[first:first + share], y[first:first + share]


def reference_losses(steps: int) -> List[float]:
    """One process, the unsplit model, the whole global batch each step."""
    x, y = make_data(steps)
    w1, b1, w2 = (t.clone().requires_grad_(True) for t in make_weights())
    losses = []
    for k in range(steps):
        xb, yb = batch_of(x, y, k, 0, 1)
        loss = ((torch.relu(xb @ w1.T + b1) @ w2.T - yb) ** 2).mean()
        for p in (w1, b1, w2):
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in (w1, b1, w2):
                p -= LR * p.grad
        losses.append(loss.item())
    return losses


def matches(losses: List[float], expected: List[float]) -> List[int]:
    """The steps whose loss differs from the reference by more than 1e-5 relative."""
    return [k for k, (a, b) in enumerate(zip(losses, expected)) if abs(a - b) > 1e-5 * abs(b)]


class SumOverTp(torch.autograd.Function):
    """Forward: the row-parallel layer's partial outputs summed over tp; backward: every tp
    rank's partial output gets the whole output's gradient."""

    @staticmethod
    def forward(ctx, partial, group):  # noqa: D102
        out = partial.clone()
        dist.all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        return grad, None


def tp_rows(tp_rank: int, tp_size: int) -> slice:
    """The hidden units tp rank ``tp_rank`` of ``tp_size`` holds."""
    return slice(tp_rank * HIDDEN // tp_size, (tp_rank + 1) * HIDDEN // tp_size)


class ShardedMlp(torch.nn.Module):
    """tp rank ``tp_rank``'s shard of the MLP whose unsplit weights are ``weights`` (default:
    make_weights())."""

    def __init__(self, tp_rank: int, tp_size: int, tp_group, weights=None):
        super().__init__()
        w1, b1, w2 = make_weights() if weights is None else weights
        rows = tp_rows(tp_rank, tp_size)
        self.w1 = torch.nn.Parameter(w1[rows].clone())
        self.b1 = torch.nn.Parameter(b1[rows].clone())
        self.w2 = torch.nn.Parameter(w2[:, rows].clone(memory_format=torch.contiguous_format))
        self.tp_group = tp_group

    def forward(self, x):  # noqa: D102
        return SumOverTp.apply(torch.relu(x @ self.w1.T + self.b1) @ self.w2.T, self.tp_group)


def sgd_step(model: torch.nn.Module, ddp: torch.nn.Module, xb: torch.Tensor, yb: torch.Tensor, dp_group) -> float:
    """One step on this replica's slice; returns the global batch's loss (the replicas' mean)."""
    loss = ((ddp(xb) - yb) ** 2).mean()
    ddp.zero_grad()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= LR * p.grad
        total = loss.detach().clone()
        dist.all_reduce(total, group=dp_group)
    return total.item() / dist.get_world_size(dp_group)


# The checkpoint of the tp shards (see the module).
def saved_steps(root: pathlib.Path, tp: int):
    """The steps whose every tp shard is on disk (a shard is written whole, then renamed)."""
    steps = []
    for folder in root.glob("step*"):
        if all((folder / f"tp{t}of{tp}.pt").exists() for t in range(tp)):
            steps.append(int(folder.name[4:]))
    return steps


def save(root: pathlib.Path, step: int, tp_rank: int, tp: int, model: torch.nn.Module, losses) -> None:
    folder = root / f"step{step}"
    folder.mkdir(parents=True, exist_ok=True)
    scratch = folder / f".tp{tp_rank}of{tp}.pt"
    torch.save({"weights": [p.detach().clone() for p in model.parameters()], "losses": losses}, scratch)
    os.replace(scratch, folder / f"tp{tp_rank}of{tp}.pt")


def load(root: pathlib.Path, step: int, tp: int):
    """The unsplit weights (w1, b1, w2) of ``step`` and the losses up to it."""
    shards = [torch.load(root / f"step{step}" / f"tp{t}of{tp}.pt") for t in range(tp)]
    w1, b1, w2 = (torch.cat([s["weights"][i] for s in shards], dim=1 if i == 2 else 0) for i in range(3))
    return (w1, b1, w2), shards[0]["losses"]


def resume_step(root: pathlib.Path, tp: int) -> int:
    """The last step every rank sees saved in full (0: none), agreed over the default group."""
    latest = torch.tensor([max(saved_steps(root, tp), default=0)])
    dist.all_reduce(latest, op=dist.ReduceOp.MIN)
    return int(latest)


def mark_killed(root: pathlib.Path, who: str, step: int) -> None:
    """Notes the time of a kill (the first step after the restart is timed from it)."""
    print(f"{who}: killed at the start of step {step}", flush=True)
    (root / "killed_at").write_text(repr(time.time()))


def train(root: pathlib.Path, steps: int, groups, tp: int, who: str, at_step) -> List[float]:
    """Trains from the last checkpoint in ``root`` to ``steps`` on the tp and dp groups of
    ``groups``, saving after every step; ``at_step(step, root)`` runs at the start of each
    (the kill). Returns the losses of every step, those loaded included."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    step = resumed = resume_step(root, tp)
    weights, losses = load(root, step, tp) if step else (None, [])
    tp_rank, dp, dp_rank = groups.get_local_rank("tp"), groups.get_world_size("dp"), groups.get_local_rank("dp")
    model = ShardedMlp(tp_rank, tp, groups.get_group("tp"), weights)
    ddp = DDP(model, process_group=groups.get_group("dp"))
    print(f"{who} starts at step {step} (tp {tp} x dp {dp})", flush=True)
    x, y = make_data(steps)
    while step < steps:
        at_step(step, root)
        xb, yb = batch_of(x, y, step, dp_rank, dp)
        losses = losses + [sgd_step(model, ddp, xb, yb, groups.get_group("dp"))]
        step += 1
        if dp_rank == 0:
            save(root, step, tp_rank, tp, model, losses)
        if resumed and step == resumed + 1 and (root / "killed_at").exists():
            since = time.time() - float((root / "killed_at").read_text())
            print(f"{who}: first step after the restart done {since:.2f} s after the kill", flush=True)
    return losses


# The parent processes of the examples that launch their own workers.


def wait_for(workers, seconds: float, on_exit=None):
    """Each worker's exit status by its index once all ended, or ``seconds`` passed (the
    rest killed and said so); ``on_exit(index)`` as each ends."""
    limit = time.monotonic() + seconds
    codes = {}
    while len(codes) < len(workers) and time.monotonic() < limit:
        for r, proc in enumerate(workers):
            if r not in codes and proc.poll() is not None:
                codes[r] = proc.returncode
                if on_exit is not None:
                    on_exit(r)
        time.sleep(0.1)
    for r, proc in enumerate(workers):
        if r not in codes:
            proc.kill()
            codes[r] = "killed after the time limit"
    return codes


def judge_exits(codes, killed: int) -> int:
    """0 when worker ``killed`` died by SIGKILL and every other exited 0, else 1; says which."""
    ok = all(code == (-signal.SIGKILL if r == killed else 0) for r, code in codes.items())
    print(f"parent: worker exits {codes}: {'ok' if ok else 'FAILED'}", flush=True)
    return 0 if ok else 1


def end_worker(code: int) -> None:
    """Ends a worker at once past its result: torch tears aborted gloo groups down at
    interpreter exit, which can abort the process after its result was printed."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
