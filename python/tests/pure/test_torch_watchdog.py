"""The watchdog of pgroups.torch.create_groups: a rank blocked past the timeout in a call
torch cannot cancel ends with the message and TimeoutError's exit status, in a real
process."""

import os
import subprocess
import sys
import time

import pytest

pytest.importorskip("torch")


def test_a_rank_blocked_past_the_timeout_is_ended_with_the_step_and_status_8():
    script = ("import time\n"
              "from pgroups._torch_agree import Watchdog\n"
              "dog = Watchdog(0.5, 3, 8)\n"
              "dog.enter('group', 'the creation of the group of kind tp')\n"
              "time.sleep(60)\n")
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=50,
                          env=dict(os.environ))
    elapsed = time.monotonic() - start
    assert done.returncode == 8
    assert ("pgroups: error on rank 3: timed out after 0.5 s waiting for all ranks at the creation of the group of "
            "kind tp (step 'group', rank 3 of 8); ") in done.stderr
    assert elapsed < 0.5 + 5 + 10  # the timeout, the grace, and the interpreter's start on a loaded machine


def test_a_cancelled_watchdog_ends_nothing():
    script = ("import time\n"
              "from pgroups._torch_agree import Watchdog\n"
              "dog = Watchdog(0.2, 0, 2)\n"
              "dog.cancel()\n"
              "time.sleep(6)\n"
              "print('alive')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=50,
                          env=dict(os.environ))
    assert done.returncode == 0 and "alive" in done.stdout


def test_one_thread_watches_every_call_and_still_fires_after_cancelled_ones():
    script = ("import threading, time\n"
              "from pgroups._torch_agree import Watchdog\n"
              "for _ in range(50):\n"
              "    Watchdog(30.0, 0, 2).cancel()\n"
              "print('threads', sum(t.name == 'pgroups-watchdog' for t in threading.enumerate()), flush=True)\n"
              "dog = Watchdog(0.3, 1, 2)\n"
              "time.sleep(60)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=50,
                          env=dict(os.environ))
    assert "threads 1" in done.stdout
    assert done.returncode == 8 and "rank 1 of 2" in done.stderr
