"""Run a script with Linux ``perf`` sampling only inside ``_CellGraphExecutor.compile`` (the graph compiles).

Started by ``bench/compile_perf.sh`` under ``perf record -D -1 --control fifo:CTL,ACK`` (recording starts
disabled); this child writes ``enable`` / ``disable`` to the control fifo ($PERF_CTL, acknowledged on $PERF_ACK)
around every compile, so the profile holds the compiles' CPU samples only (MindSpore's C++ passes, libc malloc,
the Python callbacks). MindSpore's libraries have no frame pointers: read it flat (``--no-children -g none``).

    PERF_CTL=fifo PERF_ACK=fifo python bench/compile_perf_child.py SCRIPT [ARGS...]   (run in the checkout's root)
"""
import os
import runpy
import sys

sys.path.insert(0, os.getcwd())
from adapter import backend  # noqa: E402

_executor = backend.internal("CellGraphExecutor")
_original = _executor.compile
_ctl, _ack = open(os.environ["PERF_CTL"], "w"), open(os.environ["PERF_ACK"])


def _perf(command: str) -> None:
    _ctl.write(command + "\n")
    _ctl.flush()
    _ack.readline()


def _compile(self, obj, *args, **kwargs):
    _perf("enable")
    try:
        return _original(self, obj, *args, **kwargs)
    finally:
        _perf("disable")


_executor.compile = _compile
target = sys.argv[1]
sys.argv = [target] + sys.argv[2:]
sys.path[0] = os.path.dirname(os.path.abspath(target))
runpy.run_path(target, run_name="__main__")
