"""What the env bootstrap costs the store, counted exactly: W processes of a command (such
as ``pgroups verify --backend gloo --bootstrap env``) started by hand against torch's own
TCPStore (standing for torchrun's agent store, TORCHELASTIC_USE_AGENT_STORE=1), every
connection passing through a counting proxy.

The proxy knows nothing of the protocol: a round trip is a turn of the conversation, the
client sending after it last heard from the server (or first), so that pipelined requests
count once and a wait that blocks counts once, as latency does; bytes are counted each way.

    python store_traffic.py --world 8 16 32 -- build/cli/pgroups verify --backend gloo \
        --bootstrap env --mesh tp=2,dp={dp}
    python store_traffic.py --world 8 16 32 -- build/examples/bootstrap_groups env tp=2,dp={dp}

prints one JSON line per W: per connection the round trips and bytes read (max, median),
the connections and the total bytes through the store, and the job's seconds. ``{dp}``
in the command becomes W/2, ``{world}`` W.

``--emulated PGROUPS`` also plays the same W ranks' creation from one process
(``PGROUPS bench --emulate W --store ...``) through the proxy against a fresh TCPStore,
and prints its counts beside the processes': the emulator's own count must be the proxy's,
and the two runs' medians within --most-model-error of each other.
"""

import argparse
import asyncio
import datetime
import json
import os
import statistics
import subprocess
import sys
import threading
import time


class Connection:
    def __init__(self):
        self.round_trips = 0
        self.bytes_sent = 0
        self.bytes_read = 0
        self.client_turn = True  # the client speaks first


class CountingProxy:
    """A TCP proxy on 127.0.0.1 in a thread of its own, counting each connection."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.connections = []
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait()

    def _run(self):
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=4096))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _serve(self, client_reader, client_writer):
        counts = Connection()
        self.connections.append(counts)
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target_port)

        async def pump(reader, writer, from_client):
            try:
                while True:
                    data = await reader.read(1 << 16)
                    if not data:
                        break
                    if from_client:
                        if counts.client_turn:
                            counts.round_trips += 1
                            counts.client_turn = False
                        counts.bytes_sent += len(data)
                    else:
                        counts.client_turn = True
                        counts.bytes_read += len(data)
                    writer.write(data)
                    await writer.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                writer.close()

        await asyncio.gather(pump(client_reader, server_writer, True), pump(server_reader, client_writer, False))

    def stop(self):
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)


def fresh_store(timeout: float):
    from torch.distributed import TCPStore

    return TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                    timeout=datetime.timedelta(seconds=timeout))


def counts(connections) -> dict:
    # torch's own client of the master (its TCPStore object) never passes the proxy.
    counted = [c for c in connections if c.round_trips > 0]
    trips = [c.round_trips for c in counted]
    read = [c.bytes_read for c in counted]
    return {"connections": len(counted),
            "round_trips_per_connection": {"max": max(trips), "median": statistics.median(trips)},
            "bytes_read_per_connection": {"max": max(read), "median": statistics.median(read)},
            "bytes_through_store": sum(c.bytes_read + c.bytes_sent for c in counted)}


def measure(command, world: int, timeout: float) -> dict:
    store = fresh_store(timeout)
    proxy = CountingProxy(store.port)
    base = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(proxy.port), WORLD_SIZE=str(world),
                TORCHELASTIC_USE_AGENT_STORE="True", GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1",
                LOCAL_WORLD_SIZE=str(world))
    args = [a.format(world=world, dp=world // 2) for a in command]
    start = time.monotonic()
    procs = [subprocess.Popen(args,
                              env=dict(base, RANK=str(r), LOCAL_RANK=str(r)), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
             for r in range(world)]
    failures = []
    for r, proc in enumerate(procs):
        try:
            _, err = proc.communicate(timeout=timeout + 30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        if proc.returncode != 0:
            failures.append((r, proc.returncode, err.strip().splitlines()[-1:] if err else []))
    seconds = time.monotonic() - start
    time.sleep(0.2)
    proxy.stop()
    return {"world": world, "command": " ".join(args[1:]), "seconds": round(seconds, 3), **counts(proxy.connections),
            "failures": failures}


def measure_emulated(options, world: int) -> dict:
    """One process playing the W ranks through the proxy: what the proxy counted, and what
    the emulator says it sent."""
    store = fresh_store(options.timeout)
    proxy = CountingProxy(store.port)
    mesh = options.model_mesh.format(world=world, dp=world // 2)
    answer = subprocess.run([options.emulated, "bench", "--emulate", str(world), "--mesh", mesh, "--backend", "gloo",
                             "--relay", "1", "--store", f"127.0.0.1:{proxy.port}", "--format", "json"],
                            capture_output=True, text=True, timeout=options.timeout + 30)
    time.sleep(0.2)
    proxy.stop()
    if answer.returncode != 0:
        return {"world": world, "failures": [answer.stderr.strip()]}
    return {"world": world, "emulator": json.loads(answer.stdout), **counts(proxy.connections), "failures": []}


def compare_emulated(options, real: dict, emulated: dict) -> int:
    """1 where the emulator's count is not the proxy's, or the emulation is off the processes
    by more than --most-model-error."""
    if emulated["failures"]:
        print(f"FAIL: the emulation at W={emulated['world']}: {emulated['failures']}")
        return 1
    status = 0
    said = emulated["emulator"]["round_trips_per_rank"]
    seen = emulated["round_trips_per_connection"]["max"]
    if said != seen:
        print(f"FAIL: the emulator counted {said} round trips, the proxy {seen}")
        status = 1
    for key in ("round_trips_per_connection", "bytes_read_per_connection"):
        error = emulated[key]["median"] / real[key]["median"] - 1
        print(f"W={real['world']} {key}: processes {real[key]['median']}, emulated {emulated[key]['median']} "
              f"({error:+.1%})")
        if options.most_model_error is not None and abs(error) > options.most_model_error:
            print(f"FAIL: the emulated {key} is off the processes' by {error:+.1%}")
            status = 1
    return status


def compare_with_model(options, result) -> int:
    """Prints the model's counts beside the measured ones; 1 where one is off by more than
    --most-model-error."""
    world = result["world"]
    mesh = options.model_mesh.format(world=world, dp=world // 2)
    answer = subprocess.run([options.model, "bench", "--model", "--mesh", mesh, "--format", "json"], check=True,
                            capture_output=True, text=True)
    model = json.loads(answer.stdout)["model"][0]["env_bootstrap"]
    status = 0
    for measured_key, model_key in (("round_trips_per_connection", "round_trips_per_rank"),
                                    ("bytes_read_per_connection", "bytes_read_per_rank")):
        measured = result[measured_key]["median"]
        error = measured / model[model_key] - 1
        print(f"W={world} {model_key}: measured {measured}, model {model[model_key]} ({error:+.1%})")
        if options.most_model_error is not None and abs(error) > options.most_model_error:
            print(f"FAIL: {model_key} off the model by {error:+.1%}")
            status = 1
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", type=int, nargs="+", required=True)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--most-added-round-trips", type=int,
                        help="fail (status 1) where the largest world's round trips per connection pass the "
                             "smallest's by more than this")
    parser.add_argument("--model", metavar="PGROUPS",
                        help="compare with `PGROUPS bench --model --mesh MODEL_MESH` (env_bootstrap) at each W")
    parser.add_argument("--model-mesh", default="tp=2,dp={dp}",
                        help="the mesh of the model ({dp}, {world} substituted)")
    parser.add_argument("--emulated", metavar="PGROUPS",
                        help="also play the W ranks from one process (`PGROUPS bench --emulate W --mesh MODEL_MESH`) "
                             "through the proxy, and compare")
    parser.add_argument("--most-model-error", type=float,
                        help="fail (status 1) where a measured count is off the model's by more than this fraction")
    parser.add_argument("--most-byte-growth", type=float,
                        help="fail (status 1) where the largest world's bytes read per connection pass the "
                             "smallest's times this")
    parser.add_argument("command", nargs="+", help="the command every rank runs ({world}, {dp} substituted)")
    options = parser.parse_args()
    status = 0
    results = []
    for world in sorted(options.world):
        results.append(measure(options.command, world, options.timeout))
        print(json.dumps(results[-1]), flush=True)
        status |= bool(results[-1]["failures"])
        if options.model:
            status |= compare_with_model(options, results[-1])
        if options.emulated:
            emulated = measure_emulated(options, world)
            print(json.dumps(emulated), flush=True)
            status |= compare_emulated(options, results[-1], emulated)
    small, large = results[0], results[-1]
    added = large["round_trips_per_connection"]["max"] - small["round_trips_per_connection"]["max"]
    growth = large["bytes_read_per_connection"]["max"] / small["bytes_read_per_connection"]["max"]
    print(f"from W={small['world']} to W={large['world']}: round trips per connection {added:+d}, "
          f"bytes read per connection x{growth:.2f}")
    if options.most_added_round_trips is not None and added > options.most_added_round_trips:
        print(f"FAIL: round trips grew by {added}, more than {options.most_added_round_trips}")
        status = 1
    if options.most_byte_growth is not None and growth > options.most_byte_growth:
        print(f"FAIL: bytes read grew x{growth:.2f}, more than x{options.most_byte_growth}")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
