"""Start-up phase marks, for ``bench/bench_spawn_ready.py``: when a process starts, how long each part takes.

When the environment variable ``ADAPTER_STARTUP_MARKS`` names a file, :func:`mark` appends one JSON line to it:
``{"pid": ..., "phase": NAME, "t": time.time()}``; otherwise it does nothing (one dict lookup). The variable is
inherited, so run.py's children (``mp.spawn`` children, ``--nproc-per-node`` workers) append to the same file, each
line naming its process. :func:`process_start` gives the wall-clock time the process was created (Linux,
``/proc``; 10 ms resolution), for the first phase: the interpreter's own start.

Phases marked by run.py (``app/launcher.py``, ``app/bootstrap.py``, ``adapter/distributed/``), in order:
``launcher`` (run.py's first module imported), ``mindspore`` (``import mindspore`` done), ``context`` (device and
mode set), ``pre_import`` (pre-import patches), ``torch`` (MindTorch imported through its hook), ``post_import``
(post-import patches), ``script`` (an ``mp.spawn`` child loaded the script as ``__mp_main__``), ``fn`` (it is about to
call ``fn(i, *args)``), ``scheduler`` (``init_process_group``: MindSpore's scheduler accepts connections),
``joined`` (``mindspore.communication.init()`` returned); MindSpore's scheduler process
(``adapter/distributed/cluster.py``: ``start_scheduler``, and the one ``mp.spawn`` starts ahead,
``prestart_scheduler``): ``sched_imported`` (its MindSpore import done), ``sched_request`` (``mp.spawn``'s: rank 0
named the cluster).
"""
from __future__ import annotations

import json
import os
import time
from typing import Optional

ENV = "ADAPTER_STARTUP_MARKS"


_first = {"pid": None}


def mark(phase: str) -> None:
    """Append ``{"pid", "phase", "t"}`` to the file named by ``ADAPTER_STARTUP_MARKS``; nothing when it is unset.
    A process's first line also holds ``"process_start"`` (:func:`process_start`)."""
    path = os.environ.get(ENV)
    if not path:
        return
    record = {"pid": os.getpid(), "phase": phase, "t": time.time()}
    if _first["pid"] != record["pid"]:  # (a forked child has its own first line)
        _first["pid"] = record["pid"]
        record["process_start"] = process_start()
    line = json.dumps(record) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)  # one write per line: lines do not interleave
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def process_start(pid: Optional[int] = None) -> Optional[float]:
    """Wall-clock time (``time.time()`` scale) at which process ``pid`` (default: this one) was created, from
    ``/proc/PID/stat``'s start time and ``/proc/uptime``; None where ``/proc`` is not available."""
    try:
        with open(f"/proc/{pid or os.getpid()}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        now = time.time()
    except (OSError, ValueError, IndexError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    started = int(fields[19]) / ticks  # field 22 of stat (starttime), counted from after the ")" of comm
    return now - (uptime - started)
