"""Start-up of processes that join a cluster themselves (mp.spawn children, tcp:// / env:// init_process_group):
they connect to MindSpore's scheduler only once it listens (adapter/distributed/cluster.py wait_for_scheduler).

Without that wait, imagenet/main.py --multiprocessing-distributed spent 27-161 s in MindSpore's reconnect loop
before building its model (bench/bench_spawn_init.py: init_process_group median 45.5 s before, 2.6 s after)."""
import json
import os
import socket
import subprocess
import sys
import time

import pytest

from adapter import distributed
from adapter.distributed import cluster, free_port  # cluster: where join_cluster looks start_scheduler up


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

    monkeypatch.setattr(cluster, "start_scheduler", late_scheduler)
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


# -- the scheduler mp.spawn starts ahead (adapter/distributed/cluster.py prestart_scheduler) ----------------------

# a stand-in for the prestarted scheduler: waits for rank 0's request like _PRESTART_CODE, then listens on its port
_WAITING_LISTENER = ("import json, os, socket, time\n"
                     "request = os.environ['ADAPTER_SCHEDULER_REQUEST']\n"
                     "while not os.path.exists(request): time.sleep(0.02)\n"
                     "r = json.load(open(request))\n"
                     "assert r['MS_ROLE'] == 'MS_SCHED'\n"
                     "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                     "s.bind((r['MS_SCHED_HOST'], int(r['MS_SCHED_PORT']))); s.listen(16)\n"
                     "time.sleep(60)\n")


def test_rank0_hands_the_cluster_to_the_prestarted_scheduler(clean_env, monkeypatch, tmp_path):
    """In an mp.spawn child, rank 0 does not start a scheduler of its own (a fresh interpreter importing MindSpore:
    2-4 s on the critical path): it writes the cluster's address for the one the parent started with the children,
    and waits for it to listen."""
    request = str(tmp_path / "scheduler.json")
    waiting = subprocess.Popen([sys.executable, "-c", _WAITING_LISTENER],
                               env=dict(os.environ, ADAPTER_SCHEDULER_REQUEST=request))
    os.environ.update(ADAPTER_SCHEDULER_REQUEST=request, ADAPTER_SCHEDULER_PID=str(waiting.pid))

    def no_new_scheduler(*args, **kwargs):
        raise AssertionError("rank 0 started a scheduler although one was waiting")

    monkeypatch.setattr(cluster, "start_scheduler", no_new_scheduler)
    port = free_port()
    try:
        distributed.join_cluster(f"tcp://127.0.0.1:{port}", 2, 0, "test.py:1")
        assert _accepts(port)
        with open(request) as f:
            assert json.load(f) == {"MS_ROLE": "MS_SCHED", "MS_WORKER_NUM": "2", "MS_SCHED_HOST": "127.0.0.1",
                                    "MS_SCHED_PORT": str(port), "MS_TOPO_TIMEOUT": "30"}
        assert "ADAPTER_SCHEDULER_REQUEST" not in os.environ  # not inherited by this rank's own children
    finally:
        waiting.kill()
        waiting.wait()
        distributed._own_scheduler.clear()


def test_a_prestarted_scheduler_that_is_gone_is_replaced(clean_env, monkeypatch, tmp_path):
    """The waiting process died (killed, or its MindSpore import failed): rank 0 starts one itself, as before."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    os.environ.update(ADAPTER_SCHEDULER_REQUEST=str(tmp_path / "scheduler.json"), ADAPTER_SCHEDULER_PID=str(gone.pid))
    port = free_port()
    started = []

    def scheduler(addr, port_, world, log_path, new_session=True, die_with_parent=True):
        started.append(subprocess.Popen([sys.executable, "-c", _LATE_LISTENER, str(port_), "0"]))
        return started[-1]

    monkeypatch.setattr(cluster, "start_scheduler", scheduler)
    try:
        distributed.join_cluster(f"tcp://127.0.0.1:{port}", 1, 0, "test.py:1")
        assert len(started) == 1 and _accepts(port)
        assert not (tmp_path / "scheduler.json").exists()
    finally:
        for proc in started:
            proc.kill()
            proc.wait()
        distributed._own_scheduler.clear()


def test_spawn_children_get_the_prestarted_scheduler(monkeypatch, tmp_path):
    """spawn() starts the waiting scheduler before its children, names it in their environment, and stops it with
    them; ADAPTER_SCHEDULER_PRESTART=0 turns it off."""
    started = []
    real_popen = subprocess.Popen

    def popen(cmd, env=None, **kwargs):
        started.append((cmd, env))
        return real_popen([sys.executable, "-c", "import time; time.sleep(30)"] if "-c" in cmd
                          else [sys.executable, "-c", "pass"], **{k: v for k, v in kwargs.items()
                                                                 if k in ("start_new_session", "cwd")})

    monkeypatch.setattr(subprocess, "Popen", popen)  # what adapter/distributed/ starts
    monkeypatch.setattr(sys.modules["__main__"], "__file__", str(tmp_path / "script.py"), raising=False)
    context = distributed.spawn(print, (), nprocs=2, join=False)
    try:
        assert started[0][0][1] == "-c" and "init()" in started[0][0][2]  # the scheduler first
        children = [env for cmd, env in started[1:]]
        assert len(children) == 2
        for env in children:
            assert env["ADAPTER_SCHEDULER_PID"] == str(context.scheduler.pid)
            assert env["ADAPTER_SCHEDULER_REQUEST"] == os.path.join(context.tmp, "scheduler.json")
    finally:
        context.stop()
    assert context.scheduler.poll() is not None  # stopped with the children
    context = distributed.spawn(print, (), nprocs=1, join=False)
    assert context.join(timeout=30) is True  # the children succeeded: the waiting scheduler goes too
    assert context.scheduler.poll() is not None
    started.clear()
    monkeypatch.setenv("ADAPTER_SCHEDULER_PRESTART", "0")
    context = distributed.spawn(print, (), nprocs=1, join=False)
    context.stop()
    assert context.scheduler is None and "ADAPTER_SCHEDULER_PID" not in started[0][1]


def test_heartbeat_period_defaults_to_one_second_unless_the_user_set_it(clean_env):
    """cluster.heartbeat_defaults (run by join_cluster before mindspore.communication.init()): MindSpore's heartbeat
    period MS_RETRY_INTERVAL_LOWER/UPPER (defaults 3 and 5 s; a rank learns the cluster is complete from a heartbeat
    reply) is 1 s; a user's value of either is kept, the other left unset (MindSpore's default then applies)."""
    env = {}
    cluster.heartbeat_defaults(env)
    assert env == {"MS_RETRY_INTERVAL_LOWER": "1", "MS_RETRY_INTERVAL_UPPER": "1"}
    env = {"MS_RETRY_INTERVAL_UPPER": "7"}
    cluster.heartbeat_defaults(env)
    assert env == {"MS_RETRY_INTERVAL_UPPER": "7"}
    for name in ("MS_RETRY_INTERVAL_LOWER", "MS_RETRY_INTERVAL_UPPER"):
        os.environ.pop(name, None)
    os.environ["MS_ROLE"] = "MS_WORKER"  # a launcher's worker: join_cluster returns early, after the defaults
    distributed.join_cluster(None, -1, -1, "test.py:1")
    assert os.environ["MS_RETRY_INTERVAL_LOWER"] == os.environ["MS_RETRY_INTERVAL_UPPER"] == "1"


# -- nudged_join: MindSpore's fixed sleep(3) for the peers' collective addresses ends at the next SIGALRM ----------

def _libc_sleep(seconds: int) -> float:
    """What MindSpore's CollectiveNode::SynchronizeAddresses does between tries: libc sleep(), return ignored."""
    import ctypes
    start = time.monotonic()
    ctypes.CDLL(None).sleep(seconds)
    return time.monotonic() - start


def test_nudged_join_ends_mindsporess_three_second_sleep_at_the_first_tick(monkeypatch):
    import signal
    monkeypatch.delenv(cluster.NUDGE_ENV, raising=False)
    with cluster.nudged_join("mccl") as used:
        slept = _libc_sleep(3)
    assert used is True
    assert cluster.NUDGE_START_S - 0.05 <= slept < cluster.NUDGE_START_S + 0.5  # not 3 s
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # timer cancelled
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL  # handler restored


def test_nudged_join_off_for_other_backends_the_variable_and_a_script_using_sigalrm(monkeypatch):
    import signal
    monkeypatch.delenv(cluster.NUDGE_ENV, raising=False)
    for backend in ("nccl", "hccl"):  # GPU/Ascend joins are not measured here: MindSpore's own timing
        with cluster.nudged_join(backend) as used:
            assert used is False and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    monkeypatch.setenv(cluster.NUDGE_ENV, "0")
    with cluster.nudged_join("mccl") as used:
        assert used is False and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    monkeypatch.delenv(cluster.NUDGE_ENV)

    def users_handler(signum, frame):
        pass
    previous = signal.signal(signal.SIGALRM, users_handler)
    try:
        with cluster.nudged_join("mccl") as used:
            assert used is False
        assert signal.getsignal(signal.SIGALRM) is users_handler
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_nudged_join_restores_everything_when_init_raises(monkeypatch):
    import signal
    monkeypatch.delenv(cluster.NUDGE_ENV, raising=False)
    with pytest.raises(RuntimeError, match="join failed"):
        with cluster.nudged_join("mccl"):
            raise RuntimeError("join failed")
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL


_PENDING_TICK = """
import signal, sys, time
sys.path.insert(0, {root!r})
from adapter.distributed import cluster
with cluster.nudged_join("mccl"):
    signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGALRM}})
    time.sleep(cluster.NUDGE_START_S + 0.3)  # the first tick: pending, as for a thread that has not run yet
    assert signal.SIGALRM in signal.sigpending()
signal.pthread_sigmask(signal.SIG_UNBLOCK, {{signal.SIGALRM}})
print("alive")
"""


def test_a_tick_still_pending_after_the_join_does_not_end_the_process():
    """Seen under load (bench_spawn_ready, load average 10): an mp.spawn child died right after init() returned.
    A tick pending when the default action is back would end the process ("Alarm clock"); it is discarded."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-c", _PENDING_TICK.format(root=root)], capture_output=True, text=True,
                          timeout=60, env={k: v for k, v in os.environ.items() if k != cluster.NUDGE_ENV})
    assert (proc.returncode, proc.stdout.strip()) == (0, "alive"), proc.stderr


# -- unpreempted_join: MindSpore's connection race (a woken event-loop thread preempting the connecting one) --------

def _policy(tid: int = 0) -> int:
    return os.sched_getscheduler(tid)


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH") or not os.path.isdir("/proc/self/task"), reason="Linux only")
def test_unpreempted_join_makes_threads_created_during_init_batch_then_restores_them(monkeypatch):
    """The threads init() creates (MindSpore's TCP event loops) inherit SCHED_BATCH from the main thread, so their
    wake-up cannot preempt the thread that connects (the race that cost ~2.5 s per lost connection, 1-28 per join
    on this machine); afterwards they and the main thread are SCHED_OTHER again."""
    import threading
    monkeypatch.delenv(cluster.BATCH_ENV, raising=False)
    assert _policy() == os.SCHED_OTHER
    seen, stop = {}, threading.Event()

    def event_loop():  # stands in for MindSpore's event-loop thread, created inside init()
        seen["inside"] = _policy()
        stop.wait(30)

    with cluster.unpreempted_join() as used:
        seen["main"] = _policy()
        thread = threading.Thread(target=event_loop)
        thread.start()
        while "inside" not in seen:
            time.sleep(0.01)
    try:
        assert used is True
        assert seen == {"main": os.SCHED_BATCH, "inside": os.SCHED_BATCH}
        assert _policy() == os.SCHED_OTHER  # main thread restored
        assert _policy(thread.native_id) == os.SCHED_OTHER  # the thread created inside, restored by its id
    finally:
        stop.set()
        thread.join()


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux only")
def test_unpreempted_join_off_by_variable_keeps_a_users_policy_and_restores_on_error(monkeypatch):
    monkeypatch.setenv(cluster.BATCH_ENV, "0")
    with cluster.unpreempted_join() as used:
        assert used is False and _policy() == os.SCHED_OTHER
    monkeypatch.delenv(cluster.BATCH_ENV)
    os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))  # the user's own choice: kept
    try:
        with cluster.unpreempted_join() as used:
            assert used is False
        assert _policy() == os.SCHED_BATCH
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    with pytest.raises(RuntimeError, match="join failed"):
        with cluster.unpreempted_join():
            raise RuntimeError("join failed")
    assert _policy() == os.SCHED_OTHER
