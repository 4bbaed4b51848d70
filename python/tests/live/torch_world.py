"""torch.distributed (gloo, loopback only) started from an mpirun job: rank 0 picks a free
port and tells the others over MPI."""

import datetime
import os
import socket

from mpi4py import MPI


def init_gloo() -> None:
    import torch.distributed as dist

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
