"""Data parallel, launcher side: ``run.py --nproc-per-node N`` (torchrun's options) on MindSpore's dynamic cluster.

What ``python run.py --nproc-per-node 2 --original train_ddp.py ARGS`` does (``torchrun --nproc-per-node 2
train_ddp.py ARGS``), on the node with ``--node-rank`` R of ``--nnodes`` M:

1. on node 0, checks that ``--master-addr:--master-port`` can be listened on (a clear message when it cannot) and
   starts MindSpore's scheduler there: a small Python process with ``MS_ROLE=MS_SCHED`` that runs
   ``mindspore.communication.init()`` — what ``msrun`` starts (``mindspore/parallel/cluster/process_entity``);
2. starts N workers, each ``python run.py [the same options] --original train_ddp.py ARGS`` with the environment
   ``msrun`` gives its workers (``MS_ROLE=MS_WORKER``, ``MS_WORKER_NUM``, ``MS_SCHED_HOST``, ``MS_SCHED_PORT``,
   ``MS_NODE_ID``, ``RANK_ID``, ``RANK_SIZE``, ``DEVICE_ID`` = local rank) plus torchrun's (``RANK``, ``LOCAL_RANK``,
   ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``); global rank =
   R * N + local rank. ``init_process_group`` in the script then calls ``mindspore.communication.init()``, which
   joins the cluster with the device's collective backend (mccl on CPU, NCCL on GPU, HCCL on Ascend);
3. watches the workers: when one exits with an error or a signal, the others (their whole process groups) and the
   scheduler are stopped at once, and run.py exits 1 naming the rank and its error (the script's file:line);
   when all succeed, exits 0. Worker stdout is passed through; stderr too, line by line. No process outlives
   run.py: workers and the scheduler die with it even on ``kill -9`` (``PR_SET_PDEATHSIG``). A worker killed by
   a signal *while exiting*, after its script ended, is judged by the script's exit code: MindSpore 2.5's
   exit-time cluster teardown crashes now and then (SIGSEGV in ``TCPClient::Finalize``, under Python's atexit;
   ``docs/exit_crash/README.md``). Exit code 0: finished, with a warning; otherwise the script's own error is
   reported. The worker records the code in the file named by ``ADAPTER_EXIT_FILE`` (:func:`record_exit`) before
   the interpreter exits.

Why not ``msrun`` itself: it starts ``python`` from PATH rather than this interpreter, polls its workers in a busy
loop (a whole core on this 2-core machine), sets no torchrun variables and reports a failure by grepping logs. The
processes and environment are the same, so ``msrun --worker_num=N --local_worker_num=N --master_port=P --join=True
run.py --original train_ddp.py`` also works: a worker started by msrun gets the torchrun variables from msrun's
(:func:`worker_setup`).

Also here: :func:`join_cluster` (``init_process_group`` in a process no launcher started: ``mp.spawn`` children,
``env://`` with hand-set variables — rank 0 starts the scheduler, as PyTorch's rank 0 hosts the TCPStore) and the
``mp.spawn`` machinery (:func:`spawn`, used by ``patches/spawn.py``).
"""
from __future__ import annotations

import atexit
import collections
import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Dict, List, Optional, Sequence, Tuple

from adapter.startup_marks import mark as _mark

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_PY = os.path.join(ROOT, "run.py")
DEFAULT_PORT = 29500  # torchrun's
# run.py's torchrun-style options (dest, option strings); each takes a value
_OPTIONS = [("nproc_per_node", ("--nproc-per-node", "--nproc_per_node")), ("nnodes", ("--nnodes",)),
            ("node_rank", ("--node-rank", "--node_rank")), ("master_addr", ("--master-addr", "--master_addr")),
            ("master_port", ("--master-port", "--master_port"))]
# MindSpore's scheduler (what msrun starts with MS_ROLE=MS_SCHED): init() serves the cluster until it ends
_SCHEDULER_CODE = ("import mindspore as ms\n"
                   "ms.set_device('CPU')\n"
                   "from mindspore.communication import init\n"
                   "init()\n")
_WORKER_ENV = ("MS_ROLE", "MS_WORKER_NUM", "MS_SCHED_HOST", "MS_SCHED_PORT", "MS_NODE_ID", "RANK_ID", "RANK_SIZE",
               "DEVICE_ID", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
               "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "ADAPTER_PARENT_PID", "ADAPTER_EXIT_FILE",
               "ADAPTER_SCHEDULER_REQUEST", "ADAPTER_SCHEDULER_PID")
# set by run.py's launcher and mp.spawn for each child: the file where the child records its script's exit code,
# before the interpreter (and MindSpore's atexit teardown) exits; see record_exit
EXIT_FILE_ENV = "ADAPTER_EXIT_FILE"
EXIT_CRASH_DOC = "docs/exit_crash/README.md"
STOP_GRACE_S = 5.0  # SIGTERM, then SIGKILL after this


def add_arguments(parser) -> None:
    """Add torchrun's launch options to run.py's parser (``run.py --help`` lists them in their own group)."""
    group = parser.add_argument_group("data parallel, as torchrun (adapter/distributed.py)")
    group.add_argument("--nproc-per-node", "--nproc_per_node", type=int, metavar="N",
                       help="start N worker processes on this node (one per device) running the script, joined by "
                            "MindSpore's collective backend; the script's torch.distributed/DDP calls work as under "
                            "'torchrun --nproc-per-node N'")
    group.add_argument("--nnodes", type=int, default=1, metavar="M", help="number of nodes (default 1)")
    group.add_argument("--node-rank", "--node_rank", type=int, default=0, metavar="R",
                       help="this node's rank, 0..M-1 (default 0); node 0 runs MindSpore's scheduler")
    group.add_argument("--master-addr", "--master_addr", default="127.0.0.1", metavar="ADDR",
                       help="address of node 0, where the scheduler listens (default 127.0.0.1)")
    group.add_argument("--master-port", "--master_port", type=int, default=DEFAULT_PORT, metavar="PORT",
                       help=f"the scheduler's port on node 0 (default {DEFAULT_PORT})")


def strip_options(argv: Sequence[str]) -> List[str]:
    """``argv`` (run.py's own options) without the torchrun-style ones, for the workers' command line."""
    names = {s for _, strings in _OPTIONS for s in strings}
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in names:
            skip = True
            continue
        if arg.split("=", 1)[0] in names and "=" in arg:
            continue
        out.append(arg)
    return out


# -- ports, scheduler -------------------------------------------------------------------------------------------

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


def _stop(proc: subprocess.Popen, grace: float = STOP_GRACE_S, group: bool = True) -> None:
    """Stop ``proc`` — with ``group``, its whole process group (it was started with ``start_new_session``: what it
    started, e.g. DataLoader workers, goes too) — by SIGTERM, then SIGKILL after ``grace`` s."""
    def send(sig):
        try:
            if group:
                os.killpg(proc.pid, sig)
            elif proc.poll() is None:
                proc.send_signal(sig)
        except (ProcessLookupError, PermissionError):
            pass
    if proc.poll() is None:
        send(signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    send(signal.SIGKILL)  # the group's leftovers, or a worker that ignored SIGTERM
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass


# -- the launcher -----------------------------------------------------------------------------------------------

class _Worker:
    def __init__(self, rank: int, local_rank: int, proc: subprocess.Popen, exit_file: str):
        self.rank, self.local_rank, self.proc, self.exit_file = rank, local_rank, proc, exit_file
        self.tail: "collections.deque[str]" = collections.deque(maxlen=200)
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()

    def _pump(self) -> None:
        """Forward the worker's stderr line by line, keeping the last lines for the failure message."""
        out = getattr(sys.stderr, "buffer", None)
        for line in iter(self.proc.stderr.readline, b""):
            if out is not None:
                out.write(line)
                out.flush()
            else:
                sys.stderr.write(line.decode("utf-8", "replace"))
            self.tail.append(line.decode("utf-8", "replace").rstrip("\n"))
        self.proc.stderr.close()

    @property
    def what(self) -> str:
        return f"worker rank {self.rank} (local rank {self.local_rank}, pid {self.proc.pid})"

    def describe_failure(self) -> str:
        code = self.proc.returncode
        what = self.what
        if code is not None and code < 0:
            recorded = exit_code_before_signal(code, self.exit_file)
            if recorded is None:
                return f"{what} was killed by {_signal_name(code)}"
            what += f" (then killed by {_signal_name(code)} while exiting)"
            code = recorded
        self.pump.join(timeout=5.0)
        error = next((l[len("run.py: the script failed at "):] for l in reversed(self.tail)
                      if l.startswith("run.py: the script failed at ")), None)
        if error is not None:
            return f"{what} failed at {error}"
        last = next((l.strip() for l in reversed(self.tail) if l.strip()), None)
        return f"{what} exited with code {code}" + (f": {last}" if last else "")


def _signal_name(code: int) -> str:
    """``SIGSEGV`` for a Popen return code of -11."""
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def exit_code_before_signal(returncode: Optional[int], exit_file: str) -> Optional[int]:
    """The exit code a child recorded in ``exit_file`` (:func:`record_exit`) when it was then killed by a signal
    (Popen return code < 0) while exiting; None when it was killed before its script ended, or not killed."""
    if returncode is None or returncode >= 0:
        return None
    try:
        with open(exit_file) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def exit_crash_warning(what: str, code: int) -> str:
    """The launcher's one-line warning for a child that finished its script (exit code 0) and was then killed by
    the signal of Popen return code ``code`` while exiting (``what``: which child)."""
    return (f"run.py: warning: {what} finished the script, then was killed by {_signal_name(code)} while exiting "
            "(most likely in MindSpore's exit-time cluster teardown, which crashes now and then: "
            f"{EXIT_CRASH_DOC}); its work is complete, so it counts as finished")


def record_exit(path: Optional[str], code: int) -> None:
    """In a child of run.py's launcher or of ``mp.spawn``: write the script's exit ``code`` to ``path`` (the value
    ``ADAPTER_EXIT_FILE`` had when run.py started; None: not such a child, a no-op), so that the parent can tell a
    signal while exiting (MindSpore's atexit teardown) from one during the user's work."""
    if path:
        sys.stdout.flush()
        sys.stderr.flush()
        with open(path, "w") as f:
            f.write(str(code))


def worker_env(rank: int, local_rank: int, nproc: int, world: int, node_rank: int, addr_ip: str, addr: str,
               port: int) -> Dict[str, str]:
    """The environment of one worker: msrun's MindSpore variables plus torchrun's."""
    env = dict(os.environ)
    env.update(
        # what msrun gives its workers (mindspore/parallel/cluster/process_entity/_api.py)
        MS_ROLE="MS_WORKER", MS_WORKER_NUM=str(world), MS_SCHED_HOST=addr_ip, MS_SCHED_PORT=str(port),
        MS_NODE_ID=str(rank), MS_TOPO_TIMEOUT=os.environ.get("MS_TOPO_TIMEOUT", "600"), RANK_ID=str(rank),
        RANK_SIZE=str(world), DEVICE_ID=str(local_rank),
        # what torchrun gives its workers
        RANK=str(rank), LOCAL_RANK=str(local_rank), WORLD_SIZE=str(world), LOCAL_WORLD_SIZE=str(nproc),
        GROUP_RANK=str(node_rank), ROLE_RANK=str(rank), ROLE_WORLD_SIZE=str(world), MASTER_ADDR=addr,
        MASTER_PORT=str(port), TORCHELASTIC_RESTART_COUNT="0", TORCHELASTIC_MAX_RESTARTS="0",
        TORCHELASTIC_RUN_ID="none",
        ADAPTER_PARENT_PID=str(os.getpid()))
    return env


def launch(opts, ours: Sequence[str], script_args: Sequence[str], parser) -> int:
    """``run.py --nproc-per-node N ...``: start the scheduler (node 0) and N workers, watch them; the exit code."""
    nproc, nnodes, node_rank = opts.nproc_per_node, opts.nnodes, opts.node_rank
    if nproc < 1:
        parser.error(f"--nproc-per-node must be at least 1, got {nproc}")
    if nnodes < 1 or not 0 <= node_rank < nnodes:
        parser.error(f"--node-rank must be in 0..{nnodes - 1} (--nnodes {nnodes}), got {node_rank}")
    for flag in ("compare", "reference_record", "report"):
        if getattr(opts, flag, None):
            parser.error(f"--{flag.replace('_', '-')} runs one process; it cannot be combined with --nproc-per-node")
    world = nproc * nnodes
    try:
        addr_ip = resolve(opts.master_addr)
    except ValueError as exc:
        print(f"run.py: {exc}", file=sys.stderr)
        return 1
    port = opts.master_port
    if node_rank == 0:
        problem = port_problem(addr_ip, port)
        if problem:
            print(f"run.py: cannot start the distributed job: {problem}", file=sys.stderr)
            return 1
    log_dir = tempfile.mkdtemp(prefix="run_py_ddp_")
    command = [sys.executable, RUN_PY] + strip_options(ours) + ["--original", opts.original] + list(script_args)
    scheduler: Optional[subprocess.Popen] = None
    workers: List[_Worker] = []
    failed: Optional[_Worker] = None
    failure: Optional[str] = None
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}

    def on_signal(signum, frame):
        raise KeyboardInterrupt

    for s in previous:
        signal.signal(s, on_signal)
    try:
        if node_rank == 0:
            scheduler = start_scheduler(addr_ip, port, world, os.path.join(log_dir, "scheduler.log"))
        for local_rank in range(nproc):
            rank = node_rank * nproc + local_rank
            env = worker_env(rank, local_rank, nproc, world, node_rank, addr_ip, opts.master_addr, port)
            exit_file = os.path.join(log_dir, f"exit_code_rank{rank}")
            env[EXIT_FILE_ENV] = exit_file
            proc = subprocess.Popen(command, env=env, stdin=None if local_rank == 0 else subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, start_new_session=True)
            workers.append(_Worker(rank, local_rank, proc, exit_file))
        failed, failure = _watch(workers, scheduler, log_dir)
    except KeyboardInterrupt:
        failed, failure = None, "interrupted"
    finally:
        for w in workers:
            _stop(w.proc)
        if scheduler is not None:
            if not failure:
                try:  # it finalizes seconds after the last worker
                    scheduler.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    pass
            _stop(scheduler, grace=2.0)
        for w in workers:
            w.pump.join(timeout=5.0)
        for s, handler in previous.items():
            signal.signal(s, handler)
    if failure == "interrupted":
        print("run.py: interrupted; stopped all workers", file=sys.stderr)
        return 130
    if failure:
        others = [str(w.rank) for w in workers if w is not failed]
        stopped = f"; stopped the other workers (rank {', '.join(others)})" if others and failed else ""
        print(f"run.py: {failure}{stopped}. Logs of MindSpore's scheduler: {log_dir}", file=sys.stderr)
        return 1
    import shutil
    shutil.rmtree(log_dir, ignore_errors=True)
    return 0


def _watch(workers: List[_Worker], scheduler: Optional[subprocess.Popen],
           log_dir: str) -> Tuple[Optional[_Worker], Optional[str]]:
    """Wait until every worker succeeded ``(None, None)`` or one failed ``(worker, description)``; the scheduler
    exiting with an error before the workers are done is a failure too ``(None, description)``. A worker killed
    by a signal while exiting after its script ended with code 0 (:func:`exit_code_before_signal`) succeeded, with
    a warning."""
    warned = set()
    while True:
        done = 0
        for w in workers:
            code = w.proc.poll()
            if code is None:
                continue
            if code != 0:
                if exit_code_before_signal(code, w.exit_file) != 0:
                    return w, w.describe_failure()
                if w.rank not in warned:  # killed while exiting after its script ended with 0
                    warned.add(w.rank)
                    w.pump.join(timeout=5.0)  # its last stderr lines first
                    print(exit_crash_warning(w.what, code), file=sys.stderr, flush=True)
            done += 1
        if done == len(workers):
            return None, None
        if scheduler is not None and scheduler.poll() not in (None, 0):
            tail = _tail(os.path.join(log_dir, "scheduler.log"))
            return None, f"MindSpore's scheduler exited with code {scheduler.returncode}: {tail}"
        time.sleep(0.1)


def _tail(path: str, lines: int = 3) -> str:
    try:
        with open(path, errors="replace") as f:
            text = [l.strip() for l in f if l.strip() and "WARNING" not in l]
    except OSError:
        return "(no log)"
    return " | ".join(text[-lines:]) or "(empty log)"


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


def join_cluster(init_method: Optional[str], world_size: int, rank: int, where: str) -> None:
    """Before ``mindspore.communication.init()`` in ``init_process_group``: in a process that no launcher started
    (no ``MS_ROLE``), set MindSpore's cluster variables from the call's ``init_method`` (``env://`` with
    MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK, or ``tcp://host:port``), ``world_size`` and ``rank``; rank 0 starts
    the scheduler (in its own process group, so that whoever stops rank 0's group stops it too).

    Raises:
        ValueError: a variable or argument is missing, or the port cannot be listened on (rank 0).
        NotImplementedError: ``file://`` or another rendezvous.
    """
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


# -- mp.spawn ---------------------------------------------------------------------------------------------------

SPAWN_ENV = "ADAPTER_SPAWN"
_spawn = {"children": 0, "index": None}  # children this process started with mp.spawn; its own spawn index


def spawned_children() -> int:
    """How many ``mp.spawn`` children this process has started (they run the script's work and explain it)."""
    return _spawn["children"]


def process_label() -> str:
    """Which process of a data-parallel job this is, for messages: ``"mp.spawn process 0"``, ``"rank 1"`` (a
    worker of run.py's launcher or msrun), or ``""``."""
    if _spawn["index"] is not None:
        return f"mp.spawn process {_spawn['index']}"
    if os.environ.get("MS_ROLE") == "MS_WORKER" and os.environ.get("RANK") is not None:
        return f"rank {os.environ['RANK']}"
    return ""


def _run_py_options() -> List[str]:
    """run.py's own options of this process (to start spawn children the same way)."""
    from adapter.launcher import split_argv
    argv = list(getattr(sys, "orig_argv", []))
    for i, arg in enumerate(argv):
        if os.path.abspath(arg) == RUN_PY:
            ours, _, _ = split_argv(argv[i + 1:])
            return strip_options(ours)
    import mindspore as ms
    from adapter import compiled_step
    return ["--device", ms.get_context("device_target"), "--mode", compiled_step.get_mode()]


class SpawnContext:
    """``torch.multiprocessing.ProcessContext`` for children started by :func:`spawn`: ``pids()``, ``join()``."""

    def __init__(self, procs: List[subprocess.Popen], error_files: List[str], tmp: str,
                 scheduler: Optional[subprocess.Popen] = None):
        self.processes, self.error_files, self.tmp = procs, error_files, tmp
        self.scheduler = scheduler  # prestart_scheduler's process, if any
        self._warned: set = set()

    def _exit_file(self, i: int) -> str:
        return os.path.join(self.tmp, f"exit_code_{i}")

    def _code(self, i: int) -> Optional[int]:
        """Child ``i``'s exit code; for one killed by a signal while exiting, its script's (0: a warning, once)."""
        code = self.processes[i].poll()
        recorded = exit_code_before_signal(code, self._exit_file(i))
        if recorded is not None and recorded != 0:
            return recorded
        if recorded == 0:
            if i not in self._warned:
                self._warned.add(i)
                print(exit_crash_warning(f"mp.spawn process {i} (pid {self.processes[i].pid})", code),
                      file=sys.stderr, flush=True)
            return 0
        return code

    def pids(self) -> List[int]:
        return [p.pid for p in self.processes]

    def join(self, timeout: Optional[float] = None) -> bool:
        """True once all children exited 0; False on ``timeout`` with some still running.

        Raises:
            ProcessRaisedException: a child raised (message: its traceback, as PyTorch's); the others are stopped.
            ProcessExitedException: a child exited with a non-zero code or a signal; the others are stopped.
        """
        from mindtorch.torch.multiprocessing.spawn import ProcessRaisedException, ProcessExitedException
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.scheduler is not None:
                self.scheduler.poll()  # reaped once it exits (rank 0 then sees it gone)
            codes = [self._code(i) for i in range(len(self.processes))]
            failed = next((i for i, c in enumerate(codes) if c not in (None, 0)), None)
            if failed is not None:
                self.stop()
                proc, code = self.processes[failed], codes[failed]
                error = ""
                if os.path.exists(self.error_files[failed]):
                    with open(self.error_files[failed]) as f:
                        error = f.read()
                if error:
                    raise ProcessRaisedException(f"\n\n-- Process {failed} terminated with the following error:\n"
                                                 + error, failed, proc.pid)
                if code < 0:
                    name = signal.Signals(-code).name
                    raise ProcessExitedException(f"process {failed} terminated with signal {name}", error_index=failed,
                                                 error_pid=proc.pid, exit_code=code, signal_name=name)
                raise ProcessExitedException(f"process {failed} terminated with exit code {code}",
                                             error_index=failed, error_pid=proc.pid, exit_code=code)
            if all(c == 0 for c in codes):
                self._stop_scheduler()  # the job is over (with join=False nobody may call stop())
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.1)

    def _stop_scheduler(self) -> None:
        if self.scheduler is not None and self.scheduler.poll() is None:
            _stop(self.scheduler, grace=1.0, group=False)

    def stop(self) -> None:
        for p in self.processes:
            _stop(p)
        self._stop_scheduler()


def spawn(fn, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn"):
    """``torch.multiprocessing.spawn``: ``nprocs`` processes each running ``fn(i, *args)``, set up as run.py sets
    up this one (MindSpore, MindTorch, the patches, the same run.py options), the script loaded as ``__mp_main__``.

    Returns None when ``join`` (after all succeeded), else a :class:`SpawnContext`.
    Raises:
        ProcessRaisedException / ProcessExitedException: as :meth:`SpawnContext.join`.
        pickle.PicklingError: ``fn`` or ``args`` cannot be pickled (``fn`` must be a module-level function).
    """
    main = sys.modules.get("__main__")
    script = getattr(main, "__file__", None)
    if not script:
        raise RuntimeError("torch.multiprocessing.spawn: the main script's file is unknown")
    tmp = tempfile.mkdtemp(prefix="run_py_spawn_")
    payload = os.path.join(tmp, "payload.pkl")
    with open(payload, "wb") as f:
        pickle.dump((fn, tuple(args)), f)
    command = [sys.executable, RUN_PY] + _run_py_options() + ["--original", script] + list(sys.argv[1:])
    procs, errors = [], []
    _spawn["children"] += nprocs
    scheduler = prestart_scheduler(tmp) if nprocs > 0 else None
    try:
        for i in range(nprocs):
            error_file = os.path.join(tmp, f"error_{i}.txt")
            env = {k: v for k, v in os.environ.items() if k not in _WORKER_ENV or k in ("MASTER_ADDR", "MASTER_PORT")}
            env[SPAWN_ENV] = json.dumps({"payload": payload, "index": i, "error_file": error_file,
                                         "argv": list(sys.argv)})
            env["ADAPTER_PARENT_PID"] = str(os.getpid())
            env[EXIT_FILE_ENV] = os.path.join(tmp, f"exit_code_{i}")  # SpawnContext._exit_file
            if scheduler is not None:
                env[SCHEDULER_REQUEST_ENV] = os.path.join(tmp, "scheduler.json")
                env[SCHEDULER_PID_ENV] = str(scheduler.pid)
            procs.append(subprocess.Popen(command, env=env, start_new_session=True))
            errors.append(error_file)
    except BaseException:
        for p in procs + ([scheduler] if scheduler is not None else []):
            _stop(p)
        raise
    context = SpawnContext(procs, errors, tmp, scheduler)
    if not join:
        return context
    try:
        while not context.join():
            pass
    finally:
        context.stop()
    return None


def run_spawned(script: str, script_args: List[str], mode: str = "pynative") -> int:
    """In a child started by :func:`spawn` (it replaces ``launcher.run_script``): load the script as
    ``__mp_main__`` (its ``if __name__ == "__main__"`` block does not run), then ``fn(i, *args)``. Exit code 0, or
    1 after writing the user's traceback to the error file (and stderr)."""
    import types
    from adapter import launcher
    spec = json.loads(os.environ.pop(SPAWN_ENV))
    _spawn["index"] = spec["index"]
    os.environ.pop("ADAPTER_PARENT_PID", None)
    path = os.path.abspath(script)
    sys.argv = list(spec["argv"])
    sys.path[0] = os.path.dirname(path)
    module = types.ModuleType("__mp_main__")
    module.__dict__.update({"__file__": path, "__builtins__": __builtins__, "__package__": None, "__spec__": None,
                            "__loader__": None, "__cached__": None})
    sys.modules["__mp_main__"] = module
    sys.modules["__main__"] = module  # pickle resolves the parent's __main__.fn here
    try:
        with open(path, "rb") as f:
            source = f.read().decode("utf-8")
        if mode == "pynative":
            exec(compile(source, path, "exec"), module.__dict__)
        else:
            from adapter import script_loader
            sys.meta_path.insert(0, script_loader._SiblingFinder(os.path.dirname(path)))
            script_loader._exec_rewritten(source, path, module.__dict__)
        _mark("script")
        with open(spec["payload"], "rb") as f:
            fn, args = pickle.load(f)
        _mark("fn")
        fn(spec["index"], *args)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:
        text = launcher._user_traceback(exc)
        with open(spec["error_file"], "w") as f:
            f.write(text)
        sys.stderr.write(text)
        return 1
    return 0
