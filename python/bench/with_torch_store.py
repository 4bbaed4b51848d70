"""Runs a command against a fresh torch TCPStore server (libuv, torch's default) in this
process, ``{port}`` in the command replaced by its port: torch's own server as the store
of ``pgroups bench --emulate --store 127.0.0.1:{port}``.

    python with_torch_store.py -- build/cli/pgroups bench --emulate 4096 --mesh ... \
        --store 127.0.0.1:{port} --format json

The server's descriptors count against this process's limit, raised to its hard limit.
Exits with the command's status.
"""

import argparse
import datetime
import resource
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=600, help="seconds the command may take")
    parser.add_argument("command", nargs="+", help="the command ({port} substituted)")
    options = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    from torch.distributed import TCPStore

    store = TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                     timeout=datetime.timedelta(seconds=options.timeout))
    command = [a.format(port=store.port) for a in options.command]
    try:
        return subprocess.run(command, timeout=options.timeout).returncode
    except subprocess.TimeoutExpired:
        print(f"with_torch_store: the command took more than {options.timeout} s", file=sys.stderr)
        return 124


if __name__ == "__main__":
    sys.exit(main())
