"""Library log noise stays out of the user's output (``run.py --verbose`` shows it all).

What it replaces, and why:

* **MindTorch's warnings.** MindTorch 0.4.0 logs through a ``logging.Logger("MindTorch")`` with its own handler
  (``mindtorch/torch/logging.py``): ``2026-11-22 23:31:03,697 [MindTorch WARNING]: Currently, torch.jit.unused is
  not effectived.`` on every run that imports torchvision's models, plus one per ``pin_memory=True`` DataLoader,
  ``torch.cuda.set_device`` ... A filter on that logger drops the messages in :data:`NOISE`, each about a torch
  feature that changes nothing computed here (the reason is beside each). Every other MindTorch warning may be a
  real difference from PyTorch (``torch.searchsorted don't support sorter now.``, ``as_strided not support output
  as a view.``): it is shown once, as our own line naming the user's ``file:line`` that triggered it:
  ``run.py: train.py:12: MindTorch: <message>``.
* **MindSpore's Python stack dumps.** PyNative's ``CheckNodeDynamic`` (``dynamic_shape.cc``), on detecting that a
  recorded graph changed structure, logs a WARNING (hidden by ``GLOG_v``) and then runs
  ``import traceback; traceback.print_stack()`` through ``py::exec`` whatever the log level: 40 lines of stack with
  no header in the middle of the script's output (seen in each worker of ``tests/fixtures/ddp/train_ddp.py``). A
  ``traceback.print_stack`` that does nothing when its caller is such exec'd code (``<string>``) called from
  MindSpore's package replaces it; every other caller gets the original.
* **MindSpore's C++ log at exit.** ``app/launcher.py`` sets ``GLOG_v=4`` (critical only) unless ``--verbose``
  or the user set ``GLOG_v``, children included (environment). Yet a process that joined MindSpore's cluster
  (DDP workers, ``mp.spawn`` children) prints ``[INFO] PS(...) [.../tcp_client.cc:318] Start] Event base dispatch
  success!`` while MindSpore's exit-time teardown (``ClearResAtexit``, an ``atexit`` callback registered by
  ``import mindspore``) stops its communication threads, whatever ``GLOG_v`` or ``MS_SUBMODULE_LOG_v`` say (measured).
  An ``atexit`` callback registered right after ``import mindspore`` runs just before that teardown (``atexit`` is
  LIFO); in such a process it routes file descriptors 1 and 2 through ``grep -v`` of MindSpore's log-line format
  (:data:`MS_LOG_LINE`) for the rest of the exit, so nothing else written then (Python's "Exception ignored in ..."
  messages) is lost.

``ADAPTER_VERBOSE=1`` (set by ``run.py --verbose``, inherited by every child) turns all of this off.

Replaces: ``traceback.print_stack``; adds a filter to the ``MindTorch`` logger and an ``atexit`` callback.
"""
from __future__ import annotations

import atexit
import logging
import os
import shutil
import subprocess
import sys
from typing import Set

from adapter.hooks import VERBOSE_ENV  # "1": run.py --verbose (app/bootstrap.py sets it)
from . import Patch, is_patched
from ._wrap_once import wrap_attr

#: MindTorch warnings about torch features that change no value computed here (exact message prefixes)
NOISE = (
    # @torch.jit.unused marks a method for TorchScript only (torchvision's models use it); run.py never scripts
    "Currently, torch.jit.unused is not effectived.",
    # pinned host memory only speeds host->GPU copies; values are the same (PyTorch on CPU: no pinning either)
    "Don't support pin_memory now.",
    "Don't support set pin_memory_device now.",
    "Currently, pin_memory is not effective.",
    "is_pinned is always False in Tensor.",
    # MindTorch has no sparse layout, so no tensor here is sparse: False is the true answer (PyTorch's LBFGS and
    # optimizers ask p.grad.is_sparse on every step)
    "is_sparse is always False in Tensor.",
    # the device is chosen by run.py --device (one device per process); caches hold no values
    "cuda.set_device can not actually take effect.",
    "cuda.empty_cache can not actually take effect.",
)

#: one line of MindSpore's C++ log: ``[INFO] PS(20426,7f44e1ffb6c0,python):2026-...`` (levels DEBUG..CRITICAL)
MS_LOG_LINE = r"^\[(DEBUG|INFO|WARNING|ERROR|CRITICAL)\] [A-Z_]+\([0-9]+[,:]"

_shown: Set[str] = set()


def verbose() -> bool:
    return os.environ.get(VERBOSE_ENV) == "1"


class MindTorchFilter(logging.Filter):
    """Drops :data:`NOISE`; shows any other MindTorch warning once as ``run.py: file:line: MindTorch: message``."""

    def filter(self, record: logging.LogRecord) -> bool:
        if verbose() or record.levelno >= logging.ERROR:
            return True
        message = record.getMessage()
        if message.startswith(NOISE) or message in _shown:
            return False
        _shown.add(message)
        from adapter.userframe import user_location
        where = user_location(2)
        print(f"run.py: {where + ': ' if where else ''}MindTorch: {message}", file=sys.stderr, flush=True)
        return False


def _filter_exit_output() -> None:
    """In a process that joined MindSpore's cluster: fds 1 and 2 through ``grep -v MS_LOG_LINE`` from now on."""
    if verbose() or os.environ.get("MS_ROLE") != "MS_WORKER":
        return
    grep = shutil.which("grep")
    if grep is None:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    for fd in (1, 2):
        target = os.dup(fd)
        try:
            proc = subprocess.Popen([grep, "--line-buffered", "-v", "-E", MS_LOG_LINE], stdin=subprocess.PIPE,
                                    stdout=target, stderr=subprocess.DEVNULL, close_fds=True)
        except OSError:
            return
        finally:
            os.close(target)
        os.dup2(proc.stdin.fileno(), fd)
        proc.stdin.close()  # our fd `fd` is now the pipe's only write end: grep ends when this process does


def _quiet_print_stack(original):
    def print_stack(f=None, limit=None, file=None):
        caller = sys._getframe(1)
        if not verbose() and f is None and caller.f_code.co_filename == "<string>" and caller.f_back is not None \
                and f"{os.sep}mindspore{os.sep}" in caller.f_back.f_code.co_filename:
            return None  # MindSpore's own py::exec("import traceback; traceback.print_stack()")
        return original(f if f is not None else caller, limit, file)

    print_stack.__wrapped__ = original
    print_stack.__doc__ = original.__doc__
    return print_stack


_exit_filter_registered = False


def apply() -> None:
    global _exit_filter_registered
    import traceback
    logger = logging.getLogger("MindTorch")
    if not any(isinstance(f, MindTorchFilter) for f in logger.filters):
        logger.addFilter(MindTorchFilter())
    # another wrapper (with __wrapped__) that is not ours is left alone
    if is_patched(traceback, "print_stack") or not hasattr(traceback.print_stack, "__wrapped__"):
        wrap_attr(traceback, "print_stack", NAME, _quiet_print_stack)
    # run.py imported MindSpore just before: this runs before MindSpore's own teardown; once (atexit would run twice)
    if "mindspore" in sys.modules and not _exit_filter_registered:
        atexit.register(_filter_exit_output)
        _exit_filter_registered = True


NAME = "log_noise"
PATCH = Patch(NAME, "MindTorch's no-op warnings and MindSpore's exit-time C++ log lines hidden (--verbose "
              "shows them); other MindTorch warnings shown once with the user's file:line", "pre-import", apply,
              replaces=("traceback.print_stack",),
              effects=("a filter on the 'MindTorch' logger", "an atexit filter of MindSpore's exit-time log lines"))
