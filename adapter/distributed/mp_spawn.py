"""``torch.multiprocessing.spawn`` (``patches/spawn.py``): children that are run.py processes, each running
``fn(i, *args)`` (:func:`spawn` in the parent, :func:`run_spawned` in a child), and which process of a job this is
(:func:`process_label`, for ``--explain``). Named ``mp_spawn``, not ``spawn``: ``adapter.distributed.spawn`` is the
function, as before the split of ``adapter/distributed.py`` (issue 16).
"""
from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from typing import List, Optional

from adapter.distributed.cluster import SCHEDULER_PID_ENV, SCHEDULER_REQUEST_ENV, _WORKER_ENV, prestart_scheduler
from adapter.distributed.torchrun import (EXIT_FILE_ENV, RUN_PY, _stop, exit_code_before_signal, exit_crash_warning,
                                          strip_options)
from adapter.script_run import split_argv, user_traceback
from adapter.startup_marks import mark as _mark

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
    argv = list(getattr(sys, "orig_argv", []))
    for i, arg in enumerate(argv):
        if os.path.abspath(arg) == RUN_PY:
            ours, _, _ = split_argv(argv[i + 1:])
            return strip_options(ours)
    import mindspore as ms  # deferred: this process has imported it already (setup_mindspore)
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
    """In a child started by :func:`spawn` (it replaces ``app.launcher.run_script``): load the script as
    ``__mp_main__`` (its ``if __name__ == "__main__"`` block does not run), then ``fn(i, *args)``. Exit code 0, or
    1 after writing the user's traceback to the error file (and stderr)."""
    import types
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
            from adapter import script_loader  # deferred: imports MindSpore (this child has set it up)
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
        text = user_traceback(exc)
        with open(spec["error_file"], "w") as f:
            f.write(text)
        sys.stderr.write(text)
        return 1
    return 0
