"""The machine a benchmark ran on, recorded beside its numbers (``"machine"`` in each bench JSON) so that
the performance tables of docs/performance.md name it (``bench/perf_table.py``).

    from machine import describe   # bench/ is on sys.path for the bench scripts
    describe() -> {"cpu": "Intel(R) Xeon(R) Processor", "cores": 2, "memory_gib": 23.4, "os": "Linux 6.1 x86_64",
                   "python": "3.10.12", "mindspore": "2.5.0", "mindtorch": "0.4.0"}

Sources: ``/proc/cpuinfo`` ("model name"), ``os.cpu_count()``, ``/proc/meminfo`` (MemTotal, kB), ``platform``, and
the installed distributions' versions (``importlib.metadata``); a field that cannot be read is left out.
"""
from __future__ import annotations

import importlib.metadata
import os
import platform


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 ** 2, 1)  # kB -> GiB
    except OSError:
        pass
    return None


def describe() -> dict:
    """This machine and software stack as a JSON-able dict (see the module docstring)."""
    out = {"cpu": _cpu_model(), "cores": os.cpu_count(), "memory_gib": _memory_gib(),
           "os": f"{platform.system()} {platform.release()} {platform.machine()}",
           "python": platform.python_version()}
    for dist in ("mindspore-dev", "mindspore", "mindtorch"):
        try:
            out[dist.replace("-dev", "")] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return {k: v for k, v in out.items() if v is not None}


def one_line(machine: dict) -> str:
    """``Intel(R) Xeon(R) Processor, 2 cores, 23.4 GiB, mindspore 2.5.0.dev20250119, mindtorch 0.4.0``."""
    parts = [machine.get("cpu", "unknown CPU"), f"{machine.get('cores', '?')} cores"]
    if "memory_gib" in machine:
        parts.append(f"{machine['memory_gib']} GiB")
    parts += [f"{k} {machine[k]}" for k in ("mindspore", "mindtorch") if k in machine]
    return ", ".join(parts)
