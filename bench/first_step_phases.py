"""Where the first training step's time goes before the first compiled call, per phase (issue 15, "first step").

    .venv/bin/python bench/first_step_phases.py [--arch resnet18 resnet50] [--steps 4] [--repeat 1] [--no-profile]
        [--out bench/first_step_phases.json]

For each architecture, ``bench/train_step.py`` (batch 32, 3x32x32, Adam) runs through ``run.py`` in child processes
(this file with ``--child``, a bench-only wrapper: nothing changes for users), each with a fresh, empty compile cache
folder (the issue's run (a)):

1. **timing, --mode auto**: thin wrappers time each phase *exclusively* (a phase nested in another is charged to the
   inner one), in windows that start at each call of the step site (``adapter.compiled_step.step``): window 1 is the
   eager reference step (and what follows it up to the next site call: the script's ``loss.item()``, ``zero_grad``),
   window 2 the first compiled call (``--mode pynative``, which calls no site: at the first outermost module call
   after an ``optimizer.step()``). Phases: ``binding_key`` (``step_binding.Bindings.select``), ``cache_state``
   (``step_cache_check``: ``_reached_state``, ``ReferenceRecord.finish``: the state spilled for the cache check),
   ``forward_fn`` (``StepBuilder.forward_fn``: source, file, ``exec``), ``eager_forward`` (outermost
   ``nn.Module.__call__``: PyNative kernels + MindTorch + our patches), ``eager_backward`` (``adapter/tape.py``
   ``backward``), ``provenance`` (``provenance.learn_site_outputs``), ``eager_optimizer`` (``step_begin`` ..
   ``step_end``), ``site_analysis`` (``StepBuilder``'s ``python_objects``, ``regions``, ``can_fuse``,
   ``after_reads_weights``; ``SiteRuntime._recomputations``, ``parse_as_construct``), ``release_eager_caches``,
   ``step_cell`` (``_StepCell.__init__``), ``ms_compile`` (the ``Cell.compile`` in ``compile_and_trim``: MindSpore's
   compile), ``heap_trim``, ``first_graph_run`` (``run_cell``, in ``compiled_step`` and ``step_cache_check``),
   ``cache_gate`` (``adapter/compile_cache.py``'s gate calls), ``sync`` (``asnumpy``/``item``), ``other`` (the rest:
   the script, ``StepBuilder.build``'s key and signature, ``tape.accumulate``, ...); and ``gc``: Python's collections
   (``gc.callbacks``), wall seconds only, *included* in the phases above.
   The same again in the same cache folder (**rerun**): the graph is loaded from the cache and checked against the
   reference step (``cache_state``: the state spilled before the reference step and its gradients after it). Both
   children have this file as ``__main__``, so MindSpore's own dependency hash of the entry script matches and the
   graph really loads (a cache written by plain ``run.py`` would not load here).
2. **timing, --mode pynative**: the same phases per step: step 1 vs the median of the later ones gives the first-call
   cost of the PyNative kernels (kernel creation, op compile caches) that a steady PyNative step does not pay. The
   eager forward/backward run the same code as the reference step (the tape); the optimizer does not (PyNative runs
   MindTorch's ``@jit`` update, the reference step its undecorated function).
3. **profile, --mode auto** (unless ``--no-profile``): ``cProfile`` over window 1 and, separately, window 2, tottime
   by package (ours: ``adapter/``, ``patches/``; ``mindtorch``; ``mindspore`` Python; MindSpore's C++ entry points:
   kernels and runtime; ...), and our top functions with call counts. cProfile slows Python: read its shares and
   counts, not its absolute times.

Prints one table per architecture and writes everything to ``--out`` (JSON). The machine is shared: compare within
one invocation. The process CPU clock is a system call that sums every thread (~10-50 us here): the phases'
CPU seconds include a little of it.
"""
from __future__ import annotations

import argparse
import cProfile
import collections
import functools
import gc
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))  # run as a script or imported
from results import summarize  # noqa: E402
VENV_PY = stack.python()
sys.path.insert(0, os.path.join(ROOT, "bench"))
from step_phases import _category  # noqa: E402

PHASES = ("binding_key", "cache_state", "cache_check", "forward_fn", "eager_forward", "eager_backward", "provenance",
          "eager_optimizer", "site_analysis", "release_eager_caches", "step_cell", "ms_compile", "heap_trim",
          "first_graph_run", "cache_gate", "sync", "other", "gc")


# ----------------------------------------------------------------------------------------------------------------
# child side: runs inside the run.py process
# ----------------------------------------------------------------------------------------------------------------
class _Clock:
    """Exclusive phase timers, wall and process CPU seconds (all threads: MindSpore's kernel threads too; other
    processes on a loaded machine inflate wall time, much less CPU time): ``enter(p)`` charges the time since the last
    switch to the phase on top of the stack (``other`` when empty), then pushes ``p``; ``leave()`` charges and pops."""

    def __init__(self):
        self.totals = collections.defaultdict(float)
        self.cpu = collections.defaultdict(float)
        self.stack = []
        self.gc_runs = collections.Counter()  # Python collections by generation
        self.gc_wall = 0.0  # their wall seconds (inside the phases: not a phase of its own)
        self.last = time.perf_counter()
        self.last_cpu = time.process_time()

    def _charge(self):
        now, cpu = time.perf_counter(), time.process_time()
        top = self.stack[-1] if self.stack else "other"
        self.totals[top] += now - self.last
        self.cpu[top] += cpu - self.last_cpu
        self.last, self.last_cpu = now, cpu

    def enter(self, phase):
        self._charge()
        self.stack.append(phase)

    def leave(self):
        self._charge()
        if self.stack:
            self.stack.pop()

    def snapshot(self):
        self._charge()
        return {"t": self.last, "cpu": self.last_cpu, "totals": dict(self.totals, gc=self.gc_wall),
                "cpu_totals": dict(self.cpu),
                "gc_runs": dict(self.gc_runs)}


def _wrap(clock, owner, name, phase):
    fn = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    raw = fn.__func__ if isinstance(fn, staticmethod) else fn

    @functools.wraps(raw)
    def wrapper(*args, **kwargs):
        clock.enter(phase)
        try:
            return raw(*args, **kwargs)
        finally:
            clock.leave()
    setattr(owner, name, staticmethod(wrapper) if isinstance(fn, staticmethod) else wrapper)


def _install(clock):
    import mindspore as ms
    from mindtorch.torch.nn.modules.module import Module
    from adapter import (compile_cache, compiled_step, graph_compile, provenance, step_binding, step_cache_check,
                         step_graph, tape)
    from adapter import graph_semantics  # noqa: F401

    site = compiled_step.SiteRuntime
    _wrap(clock, step_binding.Bindings, "select", "binding_key")
    _wrap(clock, step_cache_check, "_reached_state", "cache_state")
    _wrap(clock, step_cache_check.ReferenceRecord, "finish", "cache_state")
    _wrap(clock, step_cache_check, "verify_loaded", "cache_check")
    _wrap(clock, step_graph.StepBuilder, "forward_fn", "forward_fn")
    _wrap(clock, tape, "backward", "eager_backward")
    _wrap(clock, provenance, "learn_site_outputs", "provenance")
    for name in ("python_objects", "regions", "can_fuse", "after_reads_weights"):
        _wrap(clock, step_graph.StepBuilder, name, "site_analysis")
    _wrap(clock, site, "_recomputations", "site_analysis")
    _wrap(clock, graph_compile, "parse_as_construct", "site_analysis")
    _wrap(clock, step_graph, "release_eager_caches", "release_eager_caches")
    _wrap(clock, step_graph._StepCell, "__init__", "step_cell")
    _wrap(clock, graph_compile, "_trim_heap", "heap_trim")
    _wrap(clock, compiled_step, "run_cell", "first_graph_run")
    _wrap(clock, step_cache_check, "run_cell", "first_graph_run")  # a graph loaded from the cache runs there first
    for name in ("gate",):
        _wrap(clock, compile_cache, name, "cache_gate")
    _wrap(clock, ms.nn.Cell, "compile", "ms_compile")

    call = Module.__call__
    depth = [0]

    @functools.wraps(call)
    def module_call(self, *args, **kwargs):
        if depth[0]:
            depth[0] += 1
            try:
                return call(self, *args, **kwargs)
            finally:
                depth[0] -= 1
        depth[0] += 1
        clock.enter("eager_forward")
        try:
            return call(self, *args, **kwargs)
        finally:
            clock.leave()
            depth[0] -= 1
    Module.__call__ = module_call

    inside = [False]

    def sync_wrapper(fn):
        @functools.wraps(fn)
        def timed_sync(self, *args):
            if inside[0]:
                return fn(self, *args)
            inside[0] = True
            clock.enter("sync")
            try:
                return fn(self, *args)
            finally:
                clock.leave()
                inside[0] = False
        return timed_sync
    for name in ("asnumpy", "item"):
        setattr(ms.Tensor, name, sync_wrapper(getattr(ms.Tensor, name)))

    started = [0.0]

    def on_gc(phase, info):  # wall time only, left inside the phase it interrupts: the CPU clock is a system call
        if phase == "start":  # that sums every thread (~0.1-1 ms with MindSpore's threads), as long as a collection
            clock.gc_runs[info["generation"]] += 1
            started[0] = time.perf_counter()
        else:
            clock.gc_wall += time.perf_counter() - started[0]
    gc.callbacks.append(on_gc)


def child_main(argv):
    """``first_step_phases.py --child OUT.json timing|profile [run.py args...]``"""
    out, kind = argv[0], argv[1]
    sys.path.insert(0, ROOT)
    from adapter import compiled_step, events, script_run
    from app import launcher
    clock = _Clock()
    record = {"kind": kind, "windows": [], "profiles": []}
    profiler = [None]

    def on_step_begin(optimizer):
        clock.enter("eager_optimizer")

    def on_step_end(optimizer):
        if clock.stack and clock.stack[-1] == "eager_optimizer":
            clock.leave()
        stepped[0] = True

    stepped = [True]  # --mode pynative has no site calls: a window starts at the first module call after a step

    def on_module_call(module):
        if compiled_step.get_mode() == "pynative" and stepped[0]:
            stepped[0] = False
            boundary()

    def boundary():
        record["windows"].append(clock.snapshot())
        if kind == "profile":
            n = len(record["windows"])
            if profiler[0] is not None:
                profiler[0].disable()
                record["profiles"].append(_profile_summary(profiler[0]))
                profiler[0].dump_stats(out[:-len(".json")] + f"_window{n - 1}.prof")  # for pstats / snakeviz
                profiler[0] = None
            if n <= 2:
                profiler[0] = cProfile.Profile()
                profiler[0].enable()

    events.subscribe("step_begin", on_step_begin)
    events.subscribe("step_end", on_step_end)
    events.subscribe("module_call", on_module_call)
    run_script = script_run.run_script  # app/launcher.py looks it up there at each run

    def wrapped_run_script(*args, **kwargs):
        _install(clock)
        step = compiled_step.step

        @functools.wraps(step)
        def timed_step(*a, **k):
            boundary()
            return step(*a, **k)
        compiled_step.step = timed_step
        return run_script(*args, **kwargs)
    script_run.run_script = wrapped_run_script

    def write():
        if profiler[0] is not None:
            profiler[0].disable()
            record["profiles"].append(_profile_summary(profiler[0]))
            profiler[0].dump_stats(out[:-len(".json")] + f"_window{len(record['windows'])}.prof")
        record["windows"].append(clock.snapshot())
        with open(out, "w") as f:
            json.dump(record, f)
    import atexit
    atexit.register(write)
    sys.argv = [os.path.join(ROOT, "run.py")] + argv[2:]
    sys.exit(launcher.main(sys.argv[1:]))


# MindSpore's Python functions whose own time is one C++ call: PyNative's op launch and its backward
_CPP_ENTRIES = {("api.py", "run_op_async"), ("api.py", "grad"), ("api.py", "__call__")}


def _profile_summary(profiler):
    stats = pstats.Stats(profiler)
    shares = collections.defaultdict(float)
    calls = collections.defaultdict(int)
    rows = []
    total = 0.0
    for (filename, line, func), (cc, nc, tt, ct, callers) in stats.stats.items():
        cat = _category(filename, func, "")
        if cat == "mindspore (Python)" and (os.path.basename(filename), func) in _CPP_ENTRIES:
            cat = "mindspore C++ (kernels, runtime)"
        shares[cat] += tt
        calls[cat] += nc
        total += tt
        rows.append({"where": f"{os.path.relpath(filename, ROOT) if filename != '~' else ''}:{line}({func})",
                     "category": cat, "calls": nc, "tottime": tt, "cumtime": ct})
    rows.sort(key=lambda r: -r["tottime"])
    ours = [r for r in rows if r["category"].startswith("ours")][:25]
    cumulative = sorted((r for r in rows if r["category"].startswith("ours")), key=lambda r: -r["cumtime"])[:25]
    return {"total_tottime": total, "by_category": dict(shares), "calls_by_category": dict(calls),
            "top": rows[:30], "top_ours": ours, "top_ours_cumulative": cumulative}


# ----------------------------------------------------------------------------------------------------------------
# parent side
# ----------------------------------------------------------------------------------------------------------------
def _window(record, i):
    """Phase totals of window ``i`` (1-based): between the i-th and the (i+1)-th boundary."""
    w = record["windows"]
    if len(w) < i + 1:
        return None
    a, b = w[i - 1], w[i]
    phases = {p: b["totals"].get(p, 0.0) - a["totals"].get(p, 0.0) for p in set(a["totals"]) | set(b["totals"])}
    cpu = {p: b["cpu_totals"].get(p, 0.0) - a["cpu_totals"].get(p, 0.0)
           for p in set(a["cpu_totals"]) | set(b["cpu_totals"])}
    return {"wall_s": b["t"] - a["t"], "cpu_s": b["cpu"] - a["cpu"],
            "gc_runs": {g: b["gc_runs"].get(g, 0) - a["gc_runs"].get(g, 0) for g in b["gc_runs"]},
            "phases_s": {p: v for p, v in phases.items() if abs(v) > 1e-6},
            "phases_cpu_s": {p: v for p, v in cpu.items() if abs(v) > 1e-6}}


def _child(arch, mode, kind, steps, base, cache_home=None):
    out = os.path.join(base, f"first_step_{arch}_{mode}_{kind}.json")
    cache_home = cache_home or tempfile.mkdtemp(prefix="first_step_phases_cache_")
    env = dict(os.environ, GLOG_v="4", XDG_CACHE_HOME=cache_home)
    env.pop("ADAPTER_COMPILE_CACHE_DIR", None)
    cmd = [VENV_PY, os.path.abspath(__file__), "--child", out, kind, "--mode", mode, "--original",
           os.path.join("bench", "train_step.py"), "--arch", arch, "--steps", str(steps)]
    if os.path.exists(out):
        os.remove(out)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    if not os.path.exists(out):
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:300]}
    with open(out) as f:
        record = json.load(f)
    try:
        record["script"] = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        record["script"] = {"error": proc.stderr[-300:]}
    record["loaded"] = "loaded from the compile cache" in proc.stderr
    return record


def run_arch(arch, args):
    """``--repeat`` rounds of (auto, pynative) timing children, interleaved; then one profile child."""
    result = {"rounds": []}
    for _ in range(args.repeat):
        rnd = {}
        cache_home = tempfile.mkdtemp(prefix="first_step_phases_cache_")
        try:
            for name, mode in (("auto", "auto"), ("rerun", "auto"), ("pynative", "pynative")):
                # auto compiles into the round's empty cache folder, rerun loads from it (and checks)
                rec = _child(arch, mode, "timing", args.steps, args.base, cache_home if mode == "auto" else None)
                if "error" in rec:
                    rnd[name] = rec
                    continue
                windows = [_window(rec, i) for i in range(1, len(rec["windows"]))]
                rnd[name] = {"step_s": rec["script"].get("step_s"), "losses": rec["script"].get("losses"),
                             "loaded": rec["loaded"], "windows": [w for w in windows if w]}
        finally:
            shutil.rmtree(cache_home, ignore_errors=True)
        result["rounds"].append(rnd)
    if not args.no_profile:
        prof = _child(arch, "auto", "profile", min(args.steps, 3), args.base)
        result["profile"] = prof.get("profiles", prof)
    return result


COLUMNS = ("auto w1 (ref)", "auto w2 (compile)", "rerun w1 (ref)", "rerun w2 (load)", "pyn step 1",
           "pyn steady", "pyn 1st-call")


def table_rows(rounds):
    """Per phase: medians over the rounds of :data:`COLUMNS`: run.py's windows 1 and 2 compiling into an empty cache
    and re-run from it, pynative step 1, pynative steady (the median of its steps after the second) and their
    difference; each as [wall s...], [CPU s...]."""
    ok = [r for r in rounds if all("error" not in r.get(k, {"error": 1}) for k in ("auto", "rerun", "pynative"))]
    rows = {}
    for p in PHASES + ("total",):
        def get(ws, i, key):
            if i >= len(ws):
                return float("nan")
            if p == "total":
                return ws[i]["wall_s" if key == "phases_s" else "cpu_s"]
            return ws[i][key].get(p, 0.0)
        cells = []
        for key in ("phases_s", "phases_cpu_s"):
            per_round = []
            for r in ok:
                aw, rw, pw = r["auto"]["windows"], r["rerun"]["windows"], r["pynative"]["windows"]
                later = range(2, len(pw)) if len(pw) > 2 else range(1, len(pw))
                ps = statistics.median(get(pw, i, key) for i in later) if later else float("nan")
                p1 = get(pw, 0, key)
                per_round.append((get(aw, 0, key), get(aw, 1, key), get(rw, 0, key), get(rw, 1, key), p1, ps,
                                  p1 - ps))
            cells.append([statistics.median(v[i] for v in per_round) if per_round else float("nan")
                          for i in range(len(COLUMNS))])
        rows[p] = {"wall": cells[0], "cpu": cells[1]}
    return rows


def _fmt_table(arch, r):
    lines = [f"\n{arch}: batch 32, 3x32x32, Adam; {len(r['rounds'])} round(s), medians; wall s / CPU s"]
    for i, rnd in enumerate(r["rounds"]):
        for mode in ("auto", "rerun", "pynative"):
            v = rnd.get(mode, {})
            lines.append(f"  round {i + 1} {mode:8s} script step_s "
                         f"{[round(s, 3) for s in v.get('step_s') or []] if 'error' not in v else v['error']}"
                         f"{'  (loaded from the cache)' if v.get('loaded') else ''}")
    rows = table_rows(r["rounds"])
    lines.append(f"  {'phase':21s}" + "".join(f"{h:>18s}" for h in COLUMNS))
    for p, v in rows.items():
        if max((abs(x) for x in v["wall"][:6] + v["cpu"][:6] if x == x), default=0) < 0.0005:
            continue
        name = "gc (within the above)" if p == "gc" else p
        lines.append(f"  {name:21s}" + "".join(f"{w:9.3f} /{c:6.3f}" for w, c in zip(v["wall"], v["cpu"])))
    for i, prof in enumerate(r.get("profile") or []):
        if not isinstance(prof, dict) or i > 1:
            continue
        total = prof["total_tottime"] or 1.0
        lines.append(f"  cProfile window {i + 1} ({'reference step' if i == 0 else 'first compiled call'}): "
                     f"tottime {total:.2f} s")
        for cat, v in sorted(prof["by_category"].items(), key=lambda kv: -kv[1]):
            lines.append(f"    {cat:38s} {v:7.3f} s {100 * v / total:5.1f} %  calls {prof['calls_by_category'][cat]}")
        for row in prof["top"][:8]:
            lines.append(f"    top: {row['where'][-70:]:70s} calls {row['calls']:6d} tot {row['tottime']:.3f} "
                         f"cum {row['cumtime']:.3f}")
        for row in prof["top_ours_cumulative"][:12]:
            lines.append(f"    ours: {row['where'][:70]:70s} calls {row['calls']:6d} tot {row['tottime']:.3f} "
                         f"cum {row['cumtime']:.3f}")
    return lines


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        return child_main(argv[1:])
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", nargs="+", default=["resnet18", "resnet50"], choices=["resnet18", "resnet50"])
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--repeat", type=int, default=1, help="rounds of (auto, pynative), interleaved; medians")
    p.add_argument("--no-profile", action="store_true")
    p.add_argument("--base", default=tempfile.gettempdir())
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "first_step_phases.json"))
    args = p.parse_args(argv)
    results = {"date": time.strftime("%Y-%m-%d %H:%M"), "loadavg_start": os.getloadavg(), "archs": {}}
    for arch in args.arch:
        results["archs"][arch] = run_arch(arch, args)
        results["archs"][arch]["loadavg_after"] = os.getloadavg()
        print("\n".join(_fmt_table(arch, results["archs"][arch])), flush=True)
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import machine
    results["machine"] = machine.describe()
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    summarize(args.out)  # bench/results.py: the compact summary git keeps (the raw file is ignored)
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
