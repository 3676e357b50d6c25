"""``run.py --nproc-per-node N`` (torchrun's options): start MindSpore's scheduler and N workers, watch them.

See ``adapter/distributed/__init__.py`` for what happens, in order. Also here: the child-process helpers that
``adapter/distributed/mp_spawn.py`` shares (:func:`_stop`, the exit code a child records before exiting:
:func:`record_exit`, :func:`exit_code_before_signal`). Part of the former ``adapter/distributed.py`` (issue 16).
"""
from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Dict, List, Optional, Sequence, Tuple

from adapter.distributed.cluster import ROOT, port_problem, resolve, start_scheduler

RUN_PY = os.path.join(ROOT, "run.py")
DEFAULT_PORT = 29500  # torchrun's
# run.py's torchrun-style options (dest, option strings); each takes a value
_OPTIONS = [("nproc_per_node", ("--nproc-per-node", "--nproc_per_node")), ("nnodes", ("--nnodes",)),
            ("node_rank", ("--node-rank", "--node_rank")), ("master_addr", ("--master-addr", "--master_addr")),
            ("master_port", ("--master-port", "--master_port"))]
# set by run.py's launcher and mp.spawn for each child: the file where the child records its script's exit code,
# before the interpreter (and MindSpore's atexit teardown) exits; see record_exit
EXIT_FILE_ENV = "ADAPTER_EXIT_FILE"
EXIT_CRASH_DOC = "docs/exit_crash/README.md"
STOP_GRACE_S = 5.0  # SIGTERM, then SIGKILL after this


def add_arguments(parser) -> None:
    """Add torchrun's launch options to run.py's parser (``run.py --help`` lists them in their own group)."""
    group = parser.add_argument_group("data parallel, as torchrun (adapter/distributed/)")
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

