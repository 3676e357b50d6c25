"""The performance tables of ``docs/performance.md``, generated from the benchmarks' JSON so that they cannot drift
from what was measured.

    .venv/bin/python bench/perf_table.py                  # print the tables
    .venv/bin/python bench/perf_table.py --write          # replace the page's blocks between their markers
    .venv/bin/python bench/perf_table.py --check          # exit 1 if the page differs from the JSON

(``--write-readme`` is ``--write``'s name from before the tables moved out of README.md, issue 16.)

Sources (each written by one invocation of its benchmark, with the machine it ran on, ``bench/machine.py``):
- ``bench/results_mindspore-<version>.json`` (``bench/run_bench.py``, one file per MindSpore stack, issue 33): ResNet18/50
  step time, first step, peak RSS; run.py compiled (a), run.py --mode pynative (b), native MindSpore graph (c),
  PyTorch CPU (d); one table block per file, ``resnet-<version>``, with the load average and the oneDNN ISA cap of
  each run where the file records them. The first training step of (a) is
  everything before its second step ends: the eager reference step plus the first compiled call (``first_step_s +
  compile_step_s``); (c)'s first step includes its compilation.
- ``bench/corpus_results.json`` (``bench/corpus_bench.py``): per corpus script, the median step interval through
  run.py vs real PyTorch CPU, and the compiled graph's own time (``--explain``).

- ``bench/spawn_ready_results.json`` (``bench/bench_spawn_ready.py``): DDP start-up, from the launch to "model
  created" in each child, run.py vs PyTorch, for mp.spawn and --nproc-per-node.

Blocks of ``docs/performance.md``: ``<!-- perf:NAME -->`` ... ``<!-- /perf:NAME -->`` for NAME in
``resnet-<version>`` (each stack), ``corpus`` and ``spawn``.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import machine as machine_info  # noqa: E402

DOC = os.path.join(ROOT, "docs", "performance.md")
RESNET_JSONS = os.path.join(ROOT, "bench", "results_mindspore-*.json")
CORPUS_JSON = os.path.join(ROOT, "bench", "corpus_results.json")
SPAWN_JSON = os.path.join(ROOT, "bench", "spawn_ready_results.json")
_RUNS = (("a_compiled", "(a) run.py, compiled (empty compile cache)"),
         ("a2_cached_rerun", "(a2) run.py again, graphs from the compile cache"), ("b_pynative", "(b) run.py --mode pynative"),
         ("c_native_graph", "(c) native MindSpore graph"), ("d_torch_eager", "(d) PyTorch CPU eager"))


def _f(value, digits=3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ratio(a, b) -> str:
    return "–" if not a or not b else f"{a / b:.2f}x"


def _measured(data: dict, command: str) -> str:
    where = machine_info.one_line(data["machine"]) if "machine" in data else "machine not recorded"
    when = data.get("date", "(date not recorded)") + (f" {data['time_utc']} UTC" if "time_utc" in data else "")
    load = data.get("load_average_1min")
    load = f", load average {load['start']:.1f} at the start, {load['end']:.1f} at the end" if load else ""
    return f"Measured {when} on {where}{load}; one invocation of `{data.get('command', command)}`."


def first_step_s(run: dict):
    """Seconds before the second training step: (a)'s eager reference step plus its first compiled call; for the
    others their first step (which includes (c)'s compilation)."""
    if "first_step_s" not in run:
        return None
    return run["first_step_s"] + run.get("compile_step_s", 0.0)


def resnet_block(data: dict) -> str:
    """Markdown: one table per architecture, then the ratios the issue's targets are stated in."""
    lines = [_measured(data, ".venv/bin/python bench/run_bench.py --torch-python .venv-ref/bin/python"), ""]
    for arch in ("resnet50", "resnet18"):
        runs = data.get(arch)
        if not runs:
            continue
        first = runs["a_compiled"]
        lines += [f"| {arch}, batch {first.get('batch', 32)}, 3x{first.get('image_size', 32)}x"
                  f"{first.get('image_size', 32)}, Adam | median step s | first training step s | peak RSS MB |",
                  "|---|---|---|---|"]
        for key, label in _RUNS:
            run = runs.get(key)
            if not run or "error" in run:
                continue
            lines.append(f"| {label} | {_f(run.get('median_step_s'))} | {_f(first_step_s(run), 2)} | "
                         f"{_f(run.get('peak_rss_mb'), 0)} |")
        a, a2, c, d = (runs.get(k, {}) for k in ("a_compiled", "a2_cached_rerun", "c_native_graph", "d_torch_eager"))
        isa = [f"{label.split()[0]} {runs[key].get('onednn_max_cpu_isa') or 'not set'}" for key, label in _RUNS
               if key in ("a_compiled", "c_native_graph", "d_torch_eager") and "onednn_max_cpu_isa" in runs.get(key, {})]
        if isa:
            lines += ["", "ONEDNN_MAX_CPU_ISA: " + ", ".join(isa) + "."]
        lines += ["", f"{arch}: step (a)/(c) {_ratio(a.get('median_step_s'), c.get('median_step_s'))}, "
                      f"(a)/(d) {_ratio(a.get('median_step_s'), d.get('median_step_s'))}; first training step (a)/(c) "
                      f"{_ratio(first_step_s(a), first_step_s(c))}, (a2)/(c) {_ratio(first_step_s(a2), first_step_s(c))}; peak RSS (a)/(c) "
                      f"{_ratio(a.get('peak_rss_mb'), c.get('peak_rss_mb'))}, (a)/(d) "
                      f"{_ratio(a.get('peak_rss_mb'), d.get('peak_rss_mb'))}.", ""]
    return "\n".join(lines).rstrip() + "\n"


def corpus_block(data: dict) -> str:
    """Markdown: per corpus script, step time through run.py vs PyTorch CPU and the compiled graphs' own time."""
    lines = [_measured(data, ".venv/bin/python bench/corpus_bench.py"), "",
             "| script | run.py s/step | PyTorch CPU s/step | ratio | compiled graph s per call (site) |",
             "|---|---|---|---|---|"]
    for name, r in data.get("scripts", {}).items():
        a, b = r.get("a_run_py", {}), r.get("b_torch", {})
        graphs = ", ".join(f"{_f(s[2])} ({s[0]})" if s[1] else f"not compiled ({s[0]})" for s in a.get("explain", []))
        lines.append(f"| {name} | {_f(a.get('median_step_s'), 4)} | {_f(b.get('median_step_s'), 4)} | "
                     f"{_ratio(a.get('median_step_s'), b.get('median_step_s'))} | {graphs or '–'} |")
    return "\n".join(lines) + "\n"


def _model_created_s(side: dict):
    """Seconds from the launch to "model created" in a DDP child (the median child's ``s_model`` mark)."""
    return next((p["at_s"] for p in side.get("phases", []) if p["phase"] == "s_model"), None)


def spawn_block(data: dict) -> str:
    """Markdown: DDP start-up, launch to "model created" in each child, run.py vs PyTorch, per launch mode."""
    where = f"{data.get('cpus', '?')} CPUs" if "machine" not in data else machine_info.one_line(data["machine"])
    lines = [f"Measured {data.get('date', '(date not recorded)')} on {where}; one invocation of "
             f"`.venv/bin/python bench/bench_spawn_ready.py` (ddp-tutorial-series, 2 processes; medians over the "
             f"children).", "",
             "| launch | run.py: model created s | PyTorch: model created s | ratio |", "|---|---|---|---|"]
    summary = data.get("summary", {})
    for mode, label in (("spawn", "mp.spawn (multigpu.py)"), ("torchrun", "--nproc-per-node / torchrun "
                                                                           "(multigpu_torchrun.py)")):
        ours, theirs = summary.get(f"run.py {mode}", {}), summary.get(f"pytorch {mode}", {})
        a, b = _model_created_s(ours), _model_created_s(theirs)
        if a is None and b is None:
            continue
        lines.append(f"| {label} | {_f(a, 1)} | {_f(b, 1)} | {_ratio(a, b)} |")
    return "\n".join(lines) + "\n"


def blocks() -> dict:
    out = {}
    sources = [(f"resnet-{os.path.basename(path)[len('results_mindspore-'):-len('.json')]}", path, resnet_block)
               for path in sorted(glob.glob(RESNET_JSONS))]
    for name, path, make in (*sources, ("corpus", CORPUS_JSON, corpus_block), ("spawn", SPAWN_JSON, spawn_block)):
        if os.path.exists(path):
            with open(path) as f:
                out[name] = make(json.load(f))
    return out


def render(page: str, generated: dict) -> str:
    """``page`` (the text of docs/performance.md) with each ``<!-- perf:NAME -->`` block replaced; raises
    ``KeyError`` naming a missing marker."""
    for name, body in generated.items():
        pattern = re.compile(rf"(<!-- perf:{name} -->\n).*?(<!-- /perf:{name} -->)", re.S)
        if not pattern.search(page):
            raise KeyError(f"docs/performance.md has no '<!-- perf:{name} -->' ... '<!-- /perf:{name} -->' block")
        page = pattern.sub(lambda m: m.group(1) + body + m.group(2), page)
    return page


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write", "--write-readme", dest="write", action="store_true",
                   help="rewrite docs/performance.md's blocks (--write-readme: the former name)")
    p.add_argument("--check", action="store_true", help="exit 1 if docs/performance.md's blocks differ from the JSON")
    args = p.parse_args(argv)
    generated = blocks()
    if not (args.check or args.write):
        for name, body in generated.items():
            print(f"<!-- perf:{name} -->\n{body}")
        return 0
    with open(DOC) as f:
        page = f.read()
    new = render(page, generated)
    if args.check:
        if new != page:
            print("docs/performance.md's tables differ from bench/*.json: run bench/perf_table.py --write")
            return 1
        return 0
    with open(DOC, "w") as f:
        f.write(new)
    print("docs/performance.md updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
