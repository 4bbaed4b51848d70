"""torch.distributed (gloo, loopback only) started from an mpirun job: rank 0 picks a free
port and tells the others over MPI; and a store that counts its operations."""

import datetime
import os
import socket
from typing import Any

import torch.distributed as dist
from mpi4py import MPI


def init_gloo() -> None:
    if dist.is_initialized():
        return
    world = MPI.COMM_WORLD
    port = None
    if world.Get_rank() == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    port = world.bcast(port, root=0)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=world.Get_rank(),
                            world_size=world.Get_size(), timeout=datetime.timedelta(seconds=120))


class CountingStore(dist.Store):
    """A store with every operation on it counted (``ops``): what a creation costs in
    round trips to the store's server, exactly."""

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self.inner = inner
        self.ops = 0

    def _count(self) -> None:
        self.ops += 1

    def set(self, key, value):  # noqa: D102
        self._count()
        return self.inner.set(key, value)

    def get(self, key):  # noqa: D102
        self._count()
        return self.inner.get(key)

    def add(self, key, value):  # noqa: D102
        self._count()
        return self.inner.add(key, value)

    def compare_set(self, key, expected, desired):  # noqa: D102
        self._count()
        return self.inner.compare_set(key, expected, desired)

    def wait(self, keys, timeout=None):  # noqa: D102
        self._count()
        return self.inner.wait(keys) if timeout is None else self.inner.wait(keys, timeout)

    def check(self, keys):  # noqa: D102
        self._count()
        return self.inner.check(keys)

    def delete_key(self, key):  # noqa: D102
        self._count()
        return self.inner.delete_key(key)

    def num_keys(self):  # noqa: D102
        return self.inner.num_keys()

    def multi_get(self, keys):  # noqa: D102
        self._count()
        return self.inner.multi_get(keys)

    def multi_set(self, keys, values):  # noqa: D102
        self._count()
        return self.inner.multi_set(keys, values)

    def append(self, key, value):  # noqa: D102
        self._count()
        return self.inner.append(key, value)

    def has_extended_api(self):  # noqa: D102
        return True

    def set_timeout(self, timeout):  # noqa: D102
        return self.inner.set_timeout(timeout)

    @property
    def timeout(self):  # noqa: D102
        return self.inner.timeout
