"""Start-up of processes that join a cluster themselves (mp.spawn children, tcp:// / env:// init_process_group):
they connect to MindSpore's scheduler only once it listens (adapter/distributed.py wait_for_scheduler).

Without that wait, imagenet/main.py --multiprocessing-distributed spent 27-161 s in MindSpore's reconnect loop
before building its model (bench/bench_spawn_init.py: init_process_group median 45.5 s before, 2.6 s after)."""
import os
import socket
import subprocess
import sys
import time

import pytest

from adapter import distributed
from adapter.distributed import free_port


@pytest.fixture
def clean_env():
    saved = dict(os.environ)
    for name in distributed._WORKER_ENV:
        os.environ.pop(name, None)
    os.environ["MS_TOPO_TIMEOUT"] = "30"
    yield
    os.environ.clear()
    os.environ.update(saved)


def _accepts(port) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


_LATE_LISTENER = ("import socket, sys, time\n"
                  "time.sleep(float(sys.argv[2]))\n"
                  "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                  "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(16)\n"
                  "time.sleep(60)\n")


def test_rank0_joins_once_its_scheduler_listens(clean_env, monkeypatch):
    """A stand-in for MindSpore's scheduler that takes 1.5 s to listen: join_cluster (which rank 0's
    init_process_group runs before mindspore.communication.init()) returns only once it does."""
    port = free_port()
    started = []

    def late_scheduler(addr, port_, world, log_path, new_session=True, die_with_parent=True):
        proc = subprocess.Popen([sys.executable, "-c", _LATE_LISTENER, str(port_), "1.5"])
        started.append(proc)
        return proc

    monkeypatch.setattr(distributed, "start_scheduler", late_scheduler)
    try:
        t0 = time.monotonic()
        distributed.join_cluster(f"tcp://127.0.0.1:{port}", 1, 0, "test.py:1")
        waited = time.monotonic() - t0
        assert _accepts(port), f"join_cluster returned after {waited:.2f} s, before the scheduler listened"
        assert os.environ["MS_ROLE"] == "MS_WORKER" and os.environ["MS_SCHED_PORT"] == str(port)
    finally:
        for proc in started:
            proc.kill()
            proc.wait()
        distributed._own_scheduler.clear()


def test_other_ranks_wait_for_the_scheduler_too(clean_env):
    port = free_port()
    listener = subprocess.Popen([sys.executable, "-c", _LATE_LISTENER, str(port), "1.0"])
    try:
        distributed.join_cluster(f"tcp://127.0.0.1:{port}", 2, 1, "test.py:1")
        assert _accepts(port)
    finally:
        listener.kill()
        listener.wait()


def test_a_scheduler_that_dies_before_listening_is_an_error_not_a_hang():
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    with pytest.raises(RuntimeError, match="exited with code 3 before it listened"):
        distributed.wait_for_scheduler("127.0.0.1", free_port(), 30, proc)


def test_waiting_gives_up_after_the_timeout():
    t0 = time.monotonic()
    assert distributed.wait_for_scheduler("127.0.0.1", free_port(), 0.3) is False
    assert time.monotonic() - t0 < 3
