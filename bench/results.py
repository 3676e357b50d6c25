"""Compact summaries of generated results: the bulky raw JSON a benchmark or a parity run writes stays out of git
(``.gitignore``), and a small ``<name>.summary.json`` beside it, written from it, is what the repository keeps.

    .venv/bin/python bench/results.py RAW.json [RAW.json ...]     # (re)write each RAW's summary beside it
    .venv/bin/python bench/results.py --check                     # every summary in SUMMARIZED is present

The summary holds every scalar of the raw file (each figure docs/performance.md, docs/parity.md, docs/distributed.md
and docs/memory.md quote from it) except under the keys :data:`RAW_KEYS` names for that file (per-run records whose
medians and ratios the file also holds), and each list of more than :data:`LONG` numbers (per-step losses, per-step
times) becomes its statistics ``{"n", "first", "last", "min", "median", "max", "mean"}`` (float64; median of the
sorted values, the mean of the middle two for an even count). Containers of scalars are written on one line.

The scripts that write the raw files call :func:`summarize` after writing them (``bench/compile_phases.py``,
``first_step_phases.py``, ``step_overhead.py``, ``step_phases.py``, ``bench_spawn_ready.py``); a parity run
(``run.py --compare ... --out docs/parity_<x>``) writes ``report.json``, summarized with this command afterwards.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
from typing import Any, Dict, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LONG = 20  # a list of more numbers than this is summarized

#: the raw files whose summaries the repository keeps (relative to the root) -> keys dropped from their summary
SUMMARIZED: Dict[str, Tuple[str, ...]] = {
    "bench/compile_phases_malloc.json": (),
    "bench/compile_phases_results.json": (),
    "bench/first_step_phases.json": (),
    "bench/step_overhead_results.json": (),
    "bench/step_phases_auto.json": (),
    "bench/step_phases_pynative.json": (),
    "bench/spawn_ready_batch_ab.json": (),
    "bench/spawn_ready_nudge_ab.json": (),
    "docs/parity_resnet18/report.json": (),
    "docs/parity_resnet18_1000/report.json": (),
    "docs/parity_resnet50/report.json": (),
    "docs/parity_seeds/regression.json": (),
}
RAW_KEYS = {os.path.join(ROOT, k): v for k, v in SUMMARIZED.items()}


def summary_path(raw: str) -> str:
    """``x/name.json`` -> ``x/name.summary.json``."""
    return raw[:-len(".json")] + ".summary.json" if raw.endswith(".json") else raw + ".summary.json"


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _stats(values) -> Dict[str, Any]:
    finite = [float(v) for v in values]
    return {"n": len(finite), "first": values[0], "last": values[-1], "min": min(finite),
            "median": statistics.median(finite), "max": max(finite), "mean": statistics.fmean(finite)}


def compact(data: Any, drop: Tuple[str, ...] = ()) -> Any:
    """``data`` with the keys ``drop`` removed (at any depth) and each list of more than :data:`LONG` numbers
    replaced by its statistics (module docstring). NaN/inf are kept as Python floats (json writes NaN/Infinity)."""
    if isinstance(data, dict):
        return {k: compact(v, drop) for k, v in data.items() if k not in drop}
    if isinstance(data, list):
        if len(data) > LONG and all(_is_number(v) for v in data):
            return _stats(data)
        return [compact(v, drop) for v in data]
    return data


def dumps(data: Any, indent: int = 0) -> str:
    """JSON text with one item per line, except that a list or dict holding only scalars is written on one line."""
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(data, dict) and data and any(isinstance(v, (dict, list)) for v in data.values()):
        items = [f"{inner}{json.dumps(k)}: {dumps(v, indent + 1)}" for k, v in data.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(data, list) and data and any(isinstance(v, (dict, list)) for v in data):
        return "[\n" + ",\n".join(inner + dumps(v, indent + 1) for v in data) + "\n" + pad + "]"
    return json.dumps(data)


def summarize(raw: str) -> str:
    """Write ``raw``'s summary beside it (:func:`summary_path`); returns its path. Raises FileNotFoundError when
    ``raw`` does not exist."""
    raw = os.path.abspath(raw)
    with open(raw, encoding="utf-8") as f:
        data = json.load(f)
    out = summary_path(raw)
    with open(out, "w", encoding="utf-8") as f:
        f.write(dumps(compact(data, RAW_KEYS.get(raw, ()))) + "\n")
    return out


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--check"]:
        missing = [s for s in map(summary_path, SUMMARIZED) if not os.path.exists(os.path.join(ROOT, s))]
        print("\n".join(missing) or "all summaries present")
        return 1 if missing else 0
    for raw in argv:
        print(os.path.relpath(summarize(raw), ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
