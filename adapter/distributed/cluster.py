"""MindSpore's dynamic cluster: its scheduler, the ports it listens on, and a process joining it as a worker.

What ``msrun`` sets up (``mindspore/parallel/cluster/process_entity``): a scheduler process (``MS_ROLE=MS_SCHED``)
that runs ``mindspore.communication.init()``, and workers (``MS_ROLE=MS_WORKER``) whose ``init()`` connects to it.
Used by ``adapter/distributed/torchrun.py`` (``run.py --nproc-per-node``), ``adapter/distributed/mp_spawn.py``
(``mp.spawn``'s prestarted scheduler) and ``patches/distributed.py`` (``init_process_group``:
:func:`worker_setup`, :func:`join_cluster`). Part of the former ``adapter/distributed.py`` (issue 16 split it into
this package; ``adapter/distributed/__init__.py`` keeps its names).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from typing import List, Optional

from adapter.startup_marks import mark as _mark

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# MindSpore's scheduler (what msrun starts with MS_ROLE=MS_SCHED): init() serves the cluster until it ends
_SCHEDULER_CODE = ("from adapter.startup_marks import mark\n"
                   "import mindspore as ms\n"
                   "ms.set_device('CPU')\n"
                   "mark('sched_imported')\n"
                   "from mindspore.communication import init\n"
                   "init()\n")
_WORKER_ENV = ("MS_ROLE", "MS_WORKER_NUM", "MS_SCHED_HOST", "MS_SCHED_PORT", "MS_NODE_ID", "RANK_ID", "RANK_SIZE",
               "DEVICE_ID", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
               "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "ADAPTER_PARENT_PID", "ADAPTER_EXIT_FILE",
               "ADAPTER_SCHEDULER_REQUEST", "ADAPTER_SCHEDULER_PID")


# -- ports, scheduler ----------------------------------------------------------------------------------------------

def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now (for tests and benchmarks)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def resolve(addr: str) -> str:
    """IPv4 address of ``addr`` (MindSpore's scheduler wants an IP, as msrun converts it). Raises ValueError."""
    try:
        return socket.gethostbyname(addr)
    except OSError as exc:
        raise ValueError(f"cannot resolve master address {addr!r}: {exc}") from None


def port_problem(addr: str, port: int) -> Optional[str]:
    """Why MindSpore's scheduler could not listen on ``addr:port``, or None when it can (checked by binding)."""
    if not 1 <= port <= 65535:
        return f"master port {port} is not a valid TCP port (1-65535)"
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((addr, port))
        except OSError as exc:
            if exc.errno == 98:  # EADDRINUSE
                return (f"port {port} on {addr} is already in use (another job, or workers of an earlier run still "
                        f"alive: 'ss -ltnp | grep :{port}' shows which); choose a free one with --master-port "
                        "(or MASTER_PORT / init_method)")
            if exc.errno == 99:  # EADDRNOTAVAIL
                return (f"master address {addr} is not an address of this host; the scheduler runs on node 0 "
                        "(--node-rank 0) and listens there")
            return f"cannot listen on {addr}:{port}: {exc}"
    return None


def wait_for_scheduler(addr: str, port: int, timeout: float, scheduler: Optional[subprocess.Popen] = None) -> bool:
    """Wait until MindSpore's scheduler accepts connections on ``addr:port`` (at most ``timeout`` s); True if it does.

    Why: a worker whose ``mindspore.communication.init()`` first tries to connect before the scheduler listens does
    not recover promptly. MindSpore 2.5's reconnect loop (``ComputeGraphNode::ReconnectWithTimeoutWindow``) then
    reports new TCP connections as "successfully created" yet times out waiting for their state, again and again:
    measured (GLOG_v=1, imagenet ``--multiprocessing-distributed``, world size 1, scheduler listening 1.5 s after
    its start) 27 s and 161 s in ``BuildCluster`` where a worker that finds the scheduler up connects in under 1 s.
    The probe is a plain TCP connect and close, which the scheduler ignores.

    Raises:
        RuntimeError: ``scheduler`` (our own scheduler process) exited before listening.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((addr, port), timeout=1.0):
                return True
        except OSError:
            pass
        if scheduler is not None and scheduler.poll() is not None:
            raise RuntimeError(f"MindSpore's scheduler for {addr}:{port} exited with code {scheduler.returncode} "
                               "before it listened")
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def start_scheduler(addr: str, port: int, world: int, log_path: str, new_session: bool = True,
                    die_with_parent: bool = True) -> subprocess.Popen:
    """Start MindSpore's scheduler (``MS_ROLE=MS_SCHED``) for ``world`` workers; its output goes to ``log_path``.

    It exits by itself once every worker has finalized (seconds after they exit) or when the cluster times out
    (``MS_TOPO_TIMEOUT``, default 600 s here as msrun's ``--cluster_time_out``).
    """
    env = {k: v for k, v in os.environ.items() if k not in _WORKER_ENV}
    env.update(MS_ROLE="MS_SCHED", MS_WORKER_NUM=str(world), MS_SCHED_HOST=addr, MS_SCHED_PORT=str(port),
               MS_TOPO_TIMEOUT=os.environ.get("MS_TOPO_TIMEOUT", "600"), GLOG_v=os.environ.get("GLOG_v", "3"))
    if die_with_parent:
        env["ADAPTER_PARENT_PID"] = str(os.getpid())
    code = (_PDEATHSIG_CODE if die_with_parent else "") + _SCHEDULER_CODE
    with open(log_path, "ab") as log:
        return subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=new_session, cwd=ROOT)


_PDEATHSIG_CODE = ("import os, ctypes, signal\n"
                   "ctypes.CDLL(None).prctl(1, signal.SIGKILL)\n"  # PR_SET_PDEATHSIG
                   "if os.getppid() != int(os.environ['ADAPTER_PARENT_PID']): os._exit(1)\n")


def die_with_parent() -> None:
    """In a process started by run.py's launcher (``ADAPTER_PARENT_PID`` set): be killed when it dies
    (``PR_SET_PDEATHSIG``), and exit now if it already has. Linux only; elsewhere a no-op."""
    parent = os.environ.get("ADAPTER_PARENT_PID")
    if not parent or not sys.platform.startswith("linux"):
        return
    import ctypes
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != int(parent):
        os._exit(1)


# -- a scheduler started ahead of rank 0's init_process_group (mp.spawn) ------------------------------------------

# set by spawn() for its children: the file rank 0 writes the cluster's address into, and the pid of the process
# that waits for it (see prestart_scheduler)
SCHEDULER_REQUEST_ENV = "ADAPTER_SCHEDULER_REQUEST"
SCHEDULER_PID_ENV = "ADAPTER_SCHEDULER_PID"
PRESTART_ENV = "ADAPTER_SCHEDULER_PRESTART"  # "0": rank 0 starts the scheduler itself, as before
_PRESTART_CODE = ("import json, os, time\n"
                  "from adapter.startup_marks import mark\n"
                  "import mindspore as ms\n"
                  "ms.set_device('CPU')\n"
                  "mark('sched_imported')\n"
                  "request = os.environ['" + SCHEDULER_REQUEST_ENV + "']\n"
                  "while not os.path.exists(request):\n"
                  "    time.sleep(0.02)\n"
                  "mark('sched_request')\n"
                  "with open(request) as f:\n"
                  "    os.environ.update(json.load(f))\n"
                  "from mindspore.communication import init\n"
                  "init()\n")


def prestart_scheduler(folder: str) -> Optional[subprocess.Popen]:
    """Start, for ``mp.spawn``'s children, a process that imports MindSpore now and becomes MindSpore's scheduler
    (``MS_ROLE=MS_SCHED``, as :func:`start_scheduler`) once the child of rank 0 names the cluster in
    ``init_process_group`` (:func:`join_cluster` writes ``folder/scheduler.json``); None when disabled
    (``ADAPTER_SCHEDULER_PRESTART=0``) or on a platform without ``/proc``.

    Why: rank 0 used to start the scheduler inside ``init_process_group``, and every rank then waited for a fresh
    interpreter to import MindSpore (``bench/bench_spawn_ready.py``: 2.1 s median in the ``scheduler`` phase on
    this 2-core machine, 3-4 s under load), after the children had imported it already. Started with the children,
    its import overlaps theirs. It dies with this process (``PR_SET_PDEATHSIG``) and is stopped with the children
    (:meth:`SpawnContext.stop`) whether or not a rank used it.
    """
    if os.environ.get(PRESTART_ENV) == "0" or not os.path.isdir("/proc"):
        return None
    env = {k: v for k, v in os.environ.items() if k not in _WORKER_ENV}
    env.update(GLOG_v=os.environ.get("GLOG_v", "3"), ADAPTER_PARENT_PID=str(os.getpid()),
               **{SCHEDULER_REQUEST_ENV: os.path.join(folder, "scheduler.json")})
    return subprocess.Popen([sys.executable, "-c", _PDEATHSIG_CODE + _PRESTART_CODE], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)


class _Prestarted:
    """The prestarted scheduler seen from rank 0 (not its parent): ``poll()`` None while it runs, else 1."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: Optional[int] = None

    def poll(self) -> Optional[int]:
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            state = "X"
        if state in ("Z", "X"):  # exited (a zombie until the mp.spawn parent reaps it)
            self.returncode = 1
        return self.returncode


def _use_prestarted(addr: str, port: int, world: int) -> Optional[_Prestarted]:
    """In rank 0 of an ``mp.spawn`` job: hand the cluster's address to the scheduler :func:`prestart_scheduler`
    started; None when there is none (or it is gone), and rank 0 starts one itself."""
    request, pid = os.environ.pop(SCHEDULER_REQUEST_ENV, None), os.environ.pop(SCHEDULER_PID_ENV, None)
    if not request or not pid:
        return None
    waiting = _Prestarted(int(pid))
    if waiting.poll() is not None or os.path.exists(request):
        return None
    values = {"MS_ROLE": "MS_SCHED", "MS_WORKER_NUM": str(world), "MS_SCHED_HOST": addr, "MS_SCHED_PORT": str(port),
              "MS_TOPO_TIMEOUT": os.environ.get("MS_TOPO_TIMEOUT", "600")}
    partial = request + ".partial"
    with open(partial, "w") as f:
        json.dump(values, f)
    os.replace(partial, request)  # the scheduler sees the whole file or none
    return waiting



# -- worker side ------------------------------------------------------------------------------------------------

def worker_setup() -> None:
    """In a worker (``MS_ROLE=MS_WORKER`` from run.py's launcher or msrun): die with the launcher, and make the
    torchrun variables visible when msrun started the process (RANK from ``MS_NODE_ID``/``RANK_ID``, LOCAL_RANK
    from ``DEVICE_ID``, WORLD_SIZE from ``MS_WORKER_NUM``, MASTER_ADDR/PORT from ``MS_SCHED_HOST/PORT``)."""
    if os.environ.get("MS_ROLE") != "MS_WORKER":
        return
    die_with_parent()
    env = os.environ
    rank = env.get("MS_NODE_ID") or env.get("RANK_ID")
    for name, value in (("RANK", rank), ("LOCAL_RANK", env.get("DEVICE_ID")), ("WORLD_SIZE", env.get("MS_WORKER_NUM")),
                        ("MASTER_ADDR", env.get("MS_SCHED_HOST")), ("MASTER_PORT", env.get("MS_SCHED_PORT"))):
        if value is not None:
            env.setdefault(name, value)


_own_scheduler: List = []  # subprocess.Popen, or _Prestarted


# MindSpore's heartbeat period, in seconds: MS_RETRY_INTERVAL_LOWER / _UPPER (MindSpore's "Dynamic Cluster Startup"
# page; defaults 3 and 5, a random whole number of seconds between them). A worker learns that every rank has
# registered (the topology is complete, ``init()`` may return) only from a heartbeat reply
# (``ComputeGraphNode::Heartbeat``), so each rank waited up to 5 s more after the last one registered.
HEARTBEAT_S = 1


def heartbeat_defaults(env=None) -> None:
    """Set MindSpore's heartbeat period to :data:`HEARTBEAT_S` in ``env`` (default ``os.environ``) unless the user
    set either variable; before ``mindspore.communication.init()`` (its heartbeat thread reads them)."""
    env = os.environ if env is None else env
    if "MS_RETRY_INTERVAL_LOWER" not in env and "MS_RETRY_INTERVAL_UPPER" not in env:
        env["MS_RETRY_INTERVAL_LOWER"] = env["MS_RETRY_INTERVAL_UPPER"] = str(HEARTBEAT_S)


# -- MindSpore's fixed 3 s wait for the other ranks' collective addresses (CPU) --------------------------------------

NUDGE_ENV = "ADAPTER_JOIN_NUDGE"  # "0": no nudge (MindSpore's own timing)
# first nudge after NUDGE_START_S (before it: the two 0.5 s connection waits, which a signal does not shorten), then
# one every NUDGE_PERIOD_S while ``init()`` runs
NUDGE_START_S = 1.0
NUDGE_PERIOD_S = 0.5


def _nudge_tick(signum, frame) -> None:
    """SIGALRM during ``init()``: nothing to do; the signal's arrival is what ends MindSpore's ``sleep(3)``."""


@contextlib.contextmanager
def nudged_join(backend: str):
    """Around ``mindspore.communication.init()`` in a worker: a SIGALRM every :data:`NUDGE_PERIOD_S` (after
    :data:`NUDGE_START_S`) to the process's main thread, so that MindSpore's fixed 3 s retry sleep for the other
    ranks' collective addresses ends at the next tick after they are registered.

    What it shortens (measured with ``GLOG_v=1``, 2 workers + scheduler on this machine, mindspore 2.5.0-dev): on CPU,
    ``init()`` starts MindSpore's mccl collective node, whose ``CollectiveNode::SynchronizeAddresses``
    (``plugin/device/cpu/hal/hardware/ms_collective_node.cc``) registers this rank's address with the scheduler and
    then reads every other rank's, calling libc ``sleep(3)`` between tries (interval 3, at most 19 tries, neither
    configurable). Every rank but the last to register finds an address missing and sleeps the full 3 s (log:
    ``Waiting for the address of rank MCCL_COLLECTIVE_RANK_MS_WORKER_1 to be registered, retry 19 times``, then
    ``[PROF]InitHostCommlib costs 3007 msec``), and the last one then waits for rank 0's group id
    (``QueryUniqueID``, 0.5 s polls) until rank 0 wakes: 3 s of every rank's ~4.5 s join. ``sleep()`` returns early
    when a signal with a handler arrives (clock_nanosleep is never restarted, ``signal(7)``); MindSpore ignores its
    return value and tries again. The other waits of the join (0.5 s per connection, 0.5 s topology polls,
    ``std::this_thread::sleep_for``) resume after a signal, so they are unchanged.

    The cost: each tick during that wait uses one of the 19 tries, so a rank whose peers register their addresses
    more than 19 x :data:`NUDGE_PERIOD_S` (9.5 s) after it does fails (``Failed to fetch the address of the rank``)
    where MindSpore alone waits 57 s. Its peers have joined the topology already when this wait starts (``init()``
    builds the topology first, and returns from that only once every rank has registered); what separates them is
    MindSpore's heartbeat period (:data:`HEARTBEAT_S`) plus its 0.5 s poll. Other system calls of the main thread
    restart (``SA_RESTART``, ``signal.siginterrupt(SIGALRM, False)``).

    Applied only when all of these hold, else MindSpore's own timing: the backend is ``mccl`` (CPU; NCCL/HCCL's
    joins are not measured here), the variable :data:`NUDGE_ENV` is not ``0``, this is the main thread (where Python
    can install a handler and where the kernel delivers a process-wide signal first), ``signal.setitimer`` exists
    (POSIX), and the script has no SIGALRM handler or timer of its own. The timer is cancelled, a tick still pending
    discarded, and the previous handler restored when ``init()`` returns or raises.
    """
    import threading
    use = (backend == "mccl" and os.environ.get(NUDGE_ENV) != "0" and hasattr(signal, "setitimer")
           and threading.current_thread() is threading.main_thread()
           and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)
           and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0))
    if not use:
        yield False
        return
    previous = signal.signal(signal.SIGALRM, _nudge_tick)
    signal.siginterrupt(signal.SIGALRM, False)
    signal.setitimer(signal.ITIMER_REAL, NUDGE_START_S, NUDGE_PERIOD_S)
    try:
        yield True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0, 0.0)
        # a tick may still be pending, for a thread that has not run yet (the kernel hands a process-wide signal to
        # another thread when the main thread has one pending already): ignoring the signal discards it (POSIX,
        # sigaction(2)), where SIG_DFL at once would let it end the process ("Alarm clock")
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)


# -- MindSpore's connection race (every backend): its event-loop threads must not preempt the connecting thread --

BATCH_ENV = "ADAPTER_JOIN_BATCH"  # "0": MindSpore's own scheduling during init()


@contextlib.contextmanager
def unpreempted_join():
    """Around ``mindspore.communication.init()``: the threads ``init()`` creates (MindSpore's TCP event loops, its
    heartbeat) start as ``SCHED_BATCH``, so that a wake-up of one of them does not preempt the main thread; they
    and the main thread are back to ``SCHED_OTHER`` when ``init()`` returns or raises.

    Why (MindSpore 2.5's ``TCPComm::Connect`` / ``DoConnect``, ``mindspore/ccsrc/distributed/rpc/tcp/tcp_comm.cc``):
    the connecting thread adds the new socket to the receive event loop's epoll set, then sets the connection's
    state to ``kConnecting``; the event-loop thread sets it to ``kConnected`` when the socket becomes writable. A
    loopback connection is writable at once, so the ``epoll_ctl`` wakes the event-loop thread, and when the kernel
    places it on the connecting thread's CPU (a busy machine: the other CPUs are taken) it preempts the connecting
    thread before that thread's store, whose ``kConnecting`` then overwrites ``kConnected``. The connecting thread
    never sees the connection as connected: 3 x 0.5 s waits, a 0.5 s pause and a reconnect, ~2.5 s per lost race
    (log: ``Connection from  to  is successfully created`` with empty addresses, before ``Connection N source:``).
    Measured: 1-28 lost races per 2-worker join on this 2-core machine (``docs/distributed.md``). The kernel's fair
    scheduler never lets a woken ``SCHED_BATCH`` task preempt the running one (``check_preempt_wakeup_fair``,
    ``kernel/sched/fair.c``: only ``SCHED_NORMAL`` wakees do), and threads inherit the creating thread's policy
    (``pthread_attr_setinheritsched`` default), so the main thread is ``SCHED_BATCH`` while ``init()`` creates them.

    What it changes otherwise: nothing in MindSpore's results; for the duration of ``init()``, this process's
    threads do not preempt others on wake-up (they run at their next scheduling point, within the kernel's
    latency target). Threads created during ``init()`` and still ``SCHED_BATCH`` after it are set back to
    ``SCHED_OTHER``, by thread id (``/proc/self/task``), as is the main thread.

    Applied only on Linux (``os.SCHED_BATCH``, ``/proc/self/task``), when the main thread's policy is
    ``SCHED_OTHER`` (a user's own policy is kept) and :data:`BATCH_ENV` is not ``0``; a failing call leaves
    MindSpore's own scheduling (no error). Independent of the backend: the race is in MindSpore's TCP RPC, which
    every backend's cluster join uses.
    """
    batch, other = getattr(os, "SCHED_BATCH", None), getattr(os, "SCHED_OTHER", None)
    use = (os.environ.get(BATCH_ENV) != "0" and batch is not None and other is not None
           and os.path.isdir("/proc/self/task"))
    before = None
    if use:
        try:
            if os.sched_getscheduler(0) == other:
                before = set(os.listdir("/proc/self/task"))
                os.sched_setscheduler(0, batch, os.sched_param(0))
        except OSError:
            before = None
    try:
        yield before is not None
    finally:
        if before is not None:
            try:
                os.sched_setscheduler(0, other, os.sched_param(0))
            except OSError:
                pass
            try:
                created = set(os.listdir("/proc/self/task")) - before
            except OSError:
                created = set()
            for tid in created:
                try:
                    if os.sched_getscheduler(int(tid)) == batch:
                        os.sched_setscheduler(int(tid), other, os.sched_param(0))
                except OSError:  # (it exited meanwhile)
                    pass


def join_cluster(init_method: Optional[str], world_size: int, rank: int, where: str) -> None:
    """Before ``mindspore.communication.init()`` in ``init_process_group``: MindSpore's heartbeat period
    (:func:`heartbeat_defaults`); in a process that no launcher started
    (no ``MS_ROLE``), set MindSpore's cluster variables from the call's ``init_method`` (``env://`` with
    MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK, or ``tcp://host:port``), ``world_size`` and ``rank``; rank 0 starts
    the scheduler (in its own process group, so that whoever stops rank 0's group stops it too).

    Raises:
        ValueError: a variable or argument is missing, or the port cannot be listened on (rank 0).
        NotImplementedError: ``file://`` or another rendezvous.
    """
    heartbeat_defaults()
    if os.environ.get("MS_ROLE"):
        return  # run.py --nproc-per-node or msrun made this process a worker already
    from urllib.parse import urlparse, parse_qs
    at = f"init_process_group at {where}" if where else "init_process_group"
    env = os.environ
    if init_method in (None, "", "env://"):
        values = {}
        for name, arg in (("MASTER_ADDR", None), ("MASTER_PORT", None), ("WORLD_SIZE", world_size), ("RANK", rank)):
            if arg is not None and arg != -1:
                values[name] = str(arg)
            elif name in env:
                values[name] = env[name]
            else:
                raise ValueError(f"{at}: Error initializing torch.distributed using env:// rendezvous: environment "
                                 f"variable {name} expected, but not set. Launch with 'python run.py "
                                 "--nproc-per-node N --original SCRIPT' (it sets RANK, WORLD_SIZE, MASTER_ADDR, "
                                 "MASTER_PORT for every worker), or set them.")
        addr, port = values["MASTER_ADDR"], values["MASTER_PORT"]
        world, me = int(values["WORLD_SIZE"]), int(values["RANK"])
    elif init_method.startswith("tcp://"):
        url = urlparse(init_method)
        query = parse_qs(url.query)
        world = world_size if world_size != -1 else int(query.get("world_size", [-1])[0])
        me = rank if rank != -1 else int(query.get("rank", [-1])[0])
        if world == -1 or me == -1:
            raise ValueError(f"{at}: init_method={init_method!r} needs world_size= and rank= "
                             "(as PyTorch's tcp:// rendezvous)")
        addr, port = url.hostname, url.port
        if not addr or not port:
            raise ValueError(f"{at}: init_method={init_method!r}: expected tcp://HOST:PORT")
    else:
        raise NotImplementedError(f"{at}: init_method={init_method!r} is not supported on MindSpore's cluster; use "
                                  "'env://' (default) or 'tcp://HOST:PORT', or launch with 'run.py --nproc-per-node N'")
    if not 0 <= me < world:
        raise ValueError(f"{at}: rank {me} is not in 0..{world - 1} (world_size {world})")
    addr_ip = resolve(addr)
    port = int(port)
    env.update(MS_ROLE="MS_WORKER", MS_WORKER_NUM=str(world), MS_SCHED_HOST=addr_ip, MS_SCHED_PORT=str(port),
               MS_NODE_ID=str(me), RANK_ID=str(me), RANK_SIZE=str(world),
               MS_TOPO_TIMEOUT=env.get("MS_TOPO_TIMEOUT", "600"))
    if me == 0:
        problem = port_problem(addr_ip, port)
        if problem:
            raise ValueError(f"{at}: rank 0 starts MindSpore's scheduler at {addr}:{port}, but {problem}")
        # the one mp.spawn's parent started ahead (its MindSpore import overlapped the children's), else a new one:
        # same process group as rank 0 (mp.spawn's parent stops each child's group); not killed with rank 0 itself:
        # the other ranks may still be running and need it until they finalize
        _own_scheduler.append(_use_prestarted(addr_ip, port, world)
                              or start_scheduler(addr_ip, port, world, os.devnull, new_session=False,
                                                 die_with_parent=False))
    else:
        os.environ.pop(SCHEDULER_REQUEST_ENV, None)
        os.environ.pop(SCHEDULER_PID_ENV, None)
    # every rank: connect only once the scheduler listens (MindSpore's own retries recover slowly; see there)
    wait_for_scheduler(addr_ip, port, float(env["MS_TOPO_TIMEOUT"]), _own_scheduler[-1] if me == 0 else None)
    _mark("scheduler")

