"""Where a steady-state training step's time goes, per phase, for scripts run through ``run.py`` (issue 15).

    .venv/bin/python bench/step_phases.py [--only mnist vae regression dcgan resnet18 resnet50]
        [--mode auto|pynative] [--warmup 4] [--no-profile] [--sync-graph] [--out bench/step_phases.json]

For each target (corpus scripts of ``scripts/corpus_specs.py`` in a run folder beside the data that
``bench/corpus_bench.py`` stages; ``resnet18``/``resnet50``: ``bench/train_step.py``), two child processes run the
script through ``run.py`` (this file with ``--child``, a bench-only wrapper: nothing changes for users):

1. **timing**: thin wrappers time each phase, *exclusively* (a phase nested in another is charged to the inner one):

   * ``data``: ``DataLoader`` iterator ``__next__`` (MindTorch's ``_BaseDataLoaderIter`` and subclasses);
   * ``graph``: the compiled step's Cell call (``adapter/graph_semantics.run_cell`` as ``adapter/compiled_step.py``
     uses it); with ``--sync-graph`` a ``mindspore.runtime.synchronize()`` after it is charged to ``graph_wait``
     (so ``graph`` is the launch and whatever runs synchronously; on CPU the graph runs on the calling thread);
   * ``site_host``: the rest of ``adapter.compiled_step.step`` (binding selection, argument conversion, gradient
     hand-back: our per-call host cost around the graph), and in PyNative the site's eager step minus the parts below;
   * ``forward``: outermost ``nn.Module.__call__`` run in PyNative (the eager forward, also evaluation; a module
     called inside ``data``, a transform, stays ``data`` and is counted as ``transform_calls``);
   * ``backward``: ``adapter/tape.py``'s ``backward`` (the eager bridge: end of recording, grad, accumulation);
   * ``optimizer``: between the events ``step_begin`` and ``step_end`` (an eager ``optimizer.step()``);
   * ``sync``: ``mindspore.Tensor.asnumpy`` / ``item`` / ``__bool__`` / ``__float__`` / ``__int__`` / ``tolist``
     (MindTorch's ``.item()``, ``print(tensor)``, ``.numpy()``, ``if t:`` end there): time and count (``syncs``),
     counted per caller (the first frame outside MindSpore and MindTorch: the script's ``file:line`` or ours);
   * ``other``: the rest of the step (the script's Python, eager tensor ops outside modules: loss arithmetic,
     metrics, ``zero_grad``, logging).

   Step boundaries: the ``step_end`` event of the first optimizer that steps (dcgan: D's, so one step = one D+G
   iteration), or, for a script without ``optimizer.step()`` (regression), the ``backward`` event. Per step, the
   median over the steps after ``--warmup`` boundaries of each phase, counts per step (graph launches, syncs
   calls, module calls, data batches), and the median step time.
2. **profile** (unless ``--no-profile``; the raw profile is kept beside the child's JSON,
   ``BASE/phases_<target>_<mode>_profile.prof``): ``cProfile`` on from the ``--warmup``-th step boundary (as above)
   to the ``--profile-events``-th after it; tottime shares by package (``adapter/``, ``patches/``, ``mindtorch``,
   ``mindspore`` Python, MindSpore's C++ entry points called from Python, ``numpy``, the script, other), per step,
   and the top functions of ours (adapter/, patches/) with calls per step. cProfile slows Python down: use its
   shares and counts, not its absolute times; the timing pass runs without it.

Prints a table per target and writes everything to ``--out`` (JSON). The machine is noisy: compare phases within
one invocation; counts do not depend on load.
"""
from __future__ import annotations

import argparse
import atexit
import cProfile
import collections
import functools
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))  # run as a script or imported
from results import summarize  # noqa: E402
VENV_PY = stack.python()
PHASES = ("data", "forward", "backward", "optimizer", "graph", "graph_key", "graph_wait", "site_host", "sync", "other")
COUNTS = ("graph_launches", "executor_compiles", "syncs", "module_calls", "transform_calls", "batches", "backwards")
RESNETS = ("resnet18", "resnet50")
DEFAULT = ("mnist", "vae", "regression", "dcgan", "resnet18", "resnet50")


# ----------------------------------------------------------------------------------------------------------------
# child side: runs inside the run.py process
# ----------------------------------------------------------------------------------------------------------------
class _Clock:
    """Exclusive phase timers: ``enter(p)`` charges the time since the last switch to the phase on top of the stack
    (``other`` when empty), then pushes ``p``; ``leave()`` charges and pops."""

    def __init__(self):
        self.totals = collections.defaultdict(float)
        self.counts = collections.Counter()
        self.sync_sites = collections.Counter()
        self.stack = []
        self.last = time.perf_counter()

    def _charge(self):
        now = time.perf_counter()
        self.totals[self.stack[-1] if self.stack else "other"] += now - self.last
        self.last = now

    def enter(self, phase):
        self._charge()
        self.stack.append(phase)

    def leave(self):
        self._charge()
        if self.stack:
            self.stack.pop()

    def snapshot(self):
        self._charge()
        return {"t": self.last, "totals": dict(self.totals), "counts": dict(self.counts)}


def _timed(clock, phase, fn, count=None):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if count:
            clock.counts[count] += 1
        clock.enter(phase)
        try:
            return fn(*args, **kwargs)
        finally:
            clock.leave()
    return wrapper


def _caller(skip_prefixes):
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(skip_prefixes):
            return f"{os.path.relpath(name, ROOT) if name.startswith(ROOT) else os.path.basename(name)}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


def _install(clock, sync_graph):
    """Wrap the phase entry points (called once MindTorch and the patches are in place)."""
    import mindspore as ms
    from mindtorch.torch.nn.modules.module import Module
    from adapter import backend, compiled_step, tape
    import patches.dataloader  # noqa: F401

    site_packages = os.path.dirname(os.path.dirname(ms.__file__))
    skip = (os.path.join(site_packages, "mindspore"), os.path.join(site_packages, "mindtorch"), __file__)

    seen = set()
    classes = [backend.internal("BaseDataLoaderIter")]
    while classes:
        cls = classes.pop()
        classes.extend(cls.__subclasses__())
        if "__next__" in cls.__dict__ and cls not in seen:
            seen.add(cls)
            cls.__next__ = _timed(clock, "data", cls.__dict__["__next__"], "batches")

    run_cell = compiled_step.run_cell

    def timed_run_cell(cell, *args):
        clock.counts["graph_launches"] += 1
        clock.enter("graph")
        try:
            out = run_cell(cell, *args)
        finally:
            clock.leave()
        if sync_graph:
            clock.enter("graph_wait")
            try:
                ms.runtime.synchronize()
            finally:
                clock.leave()
        return out
    compiled_step.run_cell = timed_run_cell
    # inside `graph`: MindSpore's _CellGraphExecutor.compile (on every call: argument key + cache lookup; the real
    # compile on a miss) vs _exec_pip (the graph's run)
    executor_class = backend.internal("CellGraphExecutor")
    executor_class.compile = _timed(clock, "graph_key", executor_class.compile, "executor_compiles")
    compiled_step.step = _timed(clock, "site_host", compiled_step.step)
    tape.backward = _timed(clock, "backward", tape.backward, "backwards")

    call = Module.__call__
    depth = [0]

    @functools.wraps(call)
    def module_call(self, *args, **kwargs):
        if clock.stack and clock.stack[-1] == "data":  # a transform that is a Module: data loading
            clock.counts["transform_calls"] += 1
            return call(self, *args, **kwargs)
        clock.counts["module_calls"] += 1
        if depth[0]:
            depth[0] += 1
            try:
                return call(self, *args, **kwargs)
            finally:
                depth[0] -= 1
        depth[0] += 1
        clock.enter("forward")
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
            if inside[0]:  # __float__ -> asnumpy: one sync
                return fn(self, *args)
            inside[0] = True
            clock.counts["syncs"] += 1
            clock.sync_sites[_caller(skip)] += 1
            clock.enter("sync")
            try:
                return fn(self, *args)
            finally:
                clock.leave()
                inside[0] = False
        return timed_sync
    for cls in backend.tensor_types():  # Tensor, and StubTensor: PyNative op outputs before conversion
        for name in ("asnumpy", "item", "__bool__", "__float__", "__int__", "tolist"):
            if name in cls.__dict__:
                setattr(cls, name, sync_wrapper(cls.__dict__[name]))


def child_main(argv):
    """``step_phases.py --child OUT.json timing|profile WARMUP PROFILE_EVENTS SYNC [run.py args...]``"""
    out, kind, warmup, profile_events, sync_graph = argv[0], argv[1], int(argv[2]), int(argv[3]), argv[4] == "1"
    sys.path.insert(0, ROOT)
    from adapter import events
    from app import launcher
    clock = _Clock()
    record = {"kind": kind, "backward": [], "step_end": [], "first_optimizer_steps": [], "sync_sites": {}}
    optimizers = []
    profiler = cProfile.Profile() if kind == "profile" else None
    window = {}

    def profile_at(n):
        """Profile from the ``warmup``-th step boundary to ``profile_events`` boundaries later."""
        if profiler is None:
            return
        if n == warmup and "start" not in window:
            window["start"] = time.perf_counter()
            profiler.enable()
        elif n == warmup + profile_events and "start" in window and "stop" not in window:
            profiler.disable()
            window["stop"] = time.perf_counter()

    def on_backward(loss):
        record["backward"].append(clock.snapshot())
        if not record["step_end"]:  # no optimizer.step() so far (regression): backward() is the boundary
            profile_at(len(record["backward"]))

    def on_step_begin(optimizer):
        clock.enter("optimizer")

    def on_step_end(optimizer):
        if clock.stack and clock.stack[-1] == "optimizer":
            clock.leave()
        if not optimizers:
            optimizers.append(optimizer)
        snap = clock.snapshot()
        record["step_end"].append(snap)
        if optimizer is optimizers[0]:
            record["first_optimizer_steps"].append(snap)
            if "start" not in window or window.get("by") == "step_end":
                window["by"] = "step_end"
                profile_at(len(record["first_optimizer_steps"]))

    events.subscribe("backward", on_backward)
    events.subscribe("step_begin", on_step_begin)
    events.subscribe("step_end", on_step_end)

    run_script = launcher.run_script

    def wrapped_run_script(*args, **kwargs):
        _install(clock, sync_graph)
        return run_script(*args, **kwargs)
    launcher.run_script = wrapped_run_script

    def write():
        if profiler is not None:
            if "start" in window and "stop" not in window:
                profiler.disable()
                window["stop"] = time.perf_counter()
            if "start" in window:
                record["window"] = window
                record["profile"] = _profile_summary(profiler)
                profiler.dump_stats(out[:-len(".json")] + ".prof")  # for pstats / snakeviz
        record["sync_sites"] = dict(clock.sync_sites.most_common(12))
        with open(out, "w") as f:
            json.dump(record, f)
    atexit.register(write)
    sys.argv = [os.path.join(ROOT, "run.py")] + argv[5:]
    code = launcher.main(sys.argv[1:])
    sys.exit(code)


def _category(filename, funcname, script_dir):
    if filename == "~":  # a C function called from Python
        if "mindspore" in funcname or "_c_expression" in funcname or "pyboost" in funcname \
                or "Tensor" in funcname or "Primitive" in funcname:
            return "mindspore C++ (kernels, runtime)"
        return "builtins"
    if filename.startswith(os.path.join(ROOT, "adapter")):
        return "ours: adapter/"
    if filename.startswith(os.path.join(ROOT, "patches")):
        return "ours: patches/"
    if "site-packages/mindtorch" in filename:
        return "mindtorch"
    if "site-packages/mindspore" in filename:
        return "mindspore (Python)"
    if "site-packages/numpy" in filename:
        return "numpy"
    if script_dir and filename.startswith(script_dir) or filename.startswith(os.path.join(ROOT, "pt_original")) \
            or filename.startswith(os.path.join(ROOT, "bench")) or filename.startswith("<adapter"):
        return "script (user code, generated step)"
    return "other Python (stdlib, ...)"


def _profile_summary(profiler):
    stats = pstats.Stats(profiler)
    script_dir = os.path.dirname(os.path.abspath(sys.argv[0])) if sys.argv else ""
    shares = collections.defaultdict(float)
    ours = []
    total = 0.0
    for (filename, line, func), (cc, nc, tt, ct, callers) in stats.stats.items():
        cat = _category(filename, func, script_dir)
        shares[cat] += tt
        total += tt
        if cat.startswith("ours") or cat.startswith("mindspore"):
            ours.append({"where": f"{os.path.relpath(filename, ROOT) if filename != '~' else ''}:{line}({func})",
                         "category": cat, "calls": nc, "tottime": tt, "cumtime": ct})
    ours.sort(key=lambda r: -r["tottime"])
    return {"total_tottime": total, "by_category": dict(shares), "top": ours[:40]}


# ----------------------------------------------------------------------------------------------------------------
# parent side
# ----------------------------------------------------------------------------------------------------------------
def _diff(a, b, key):
    return {k: b[key].get(k, 0) - a[key].get(k, 0) for k in set(a[key]) | set(b[key])}


def summarize(record, warmup):
    """Per-step medians of each phase and counts between consecutive boundaries after ``warmup``."""
    bounds = record["first_optimizer_steps"] or record["backward"]
    kind = "optimizer step_end" if record["first_optimizer_steps"] else "backward"
    pairs = list(zip(bounds, bounds[1:]))[warmup:]
    if not pairs:
        return {"boundary": kind, "steps": 0}
    phases = {p: statistics.median(_diff(a, b, "totals").get(p, 0.0) for a, b in pairs) for p in PHASES}
    counts = {c: statistics.median(_diff(a, b, "counts").get(c, 0) for a, b in pairs) for c in COUNTS}
    step = statistics.median(b["t"] - a["t"] for a, b in pairs)
    out = {"boundary": kind, "steps": len(pairs), "median_step_s": step, "phases_s": phases, "counts": counts,
           "sync_sites_total": record.get("sync_sites", {})}
    return out


def profile_per_step(record):
    prof = record.get("profile")
    if not prof:
        return None
    window = record["window"]
    bounds = record["first_optimizer_steps"] or record["backward"]
    # boundaries inside the window: the steps profiled (the window starts and ends on backward events)
    n = sum(1 for b in bounds if window["start"] < b["t"] <= window["stop"]) or 1
    total = prof["total_tottime"] or 1.0
    return {"steps": n, "tottime_per_step_s": total / n, "wall_per_step_s": (window["stop"] - window["start"]) / n,
            "share": {k: v / total for k, v in sorted(prof["by_category"].items(), key=lambda kv: -kv[1])},
            "top_ours": [dict(r, calls_per_step=r["calls"] / n, tottime_per_step_s=r["tottime"] / n)
                         for r in prof["top"] if r["category"].startswith("ours")][:15],
            "top_mindspore": [dict(r, calls_per_step=r["calls"] / n, tottime_per_step_s=r["tottime"] / n)
                                for r in prof["top"] if not r["category"].startswith("ours")][:8]}


def target_command(name, base, mode, resnet_steps):
    """(cwd, run.py args, env) of a target."""
    opts = ["--mode", mode]
    if name in RESNETS:
        return ROOT, opts + ["--original", os.path.join(ROOT, "bench", "train_step.py"), "--arch", name,
                             "--steps", str(resnet_steps)], {}
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import corpus_specs as cs
    import stage_corpus_data as staging
    spec = cs.SPECS[name]
    run = staging.make_run_dir(base, f"phases_{name}_{mode}")
    os.makedirs(os.path.join(run, "results"), exist_ok=True)
    for pre, pre_args in spec.pre:
        subprocess.run([VENV_PY, os.path.join(ROOT, "run.py"), "--original", cs.script_path(pre),
                        *pre_args], cwd=run, check=True, capture_output=True)
    return run, opts + [o for o in spec.run_opts if o not in opts] + [
        "--original", cs.script_path(spec.script), *spec.script_args(1)], spec.env


# steps per run, where fewer than --warmup + --profile-events + 2: the profile must end inside training
PROFILE_EVENTS = {"vae": 10}


def run_target(name, args):
    cwd, run_args, extra_env = target_command(name, args.base, args.mode, args.resnet_steps)
    events = min(args.profile_events, PROFILE_EVENTS.get(name, args.profile_events),
                 max(1, args.resnet_steps - args.warmup - 1) if name in RESNETS else args.profile_events)
    env = dict(os.environ, GLOG_v="4", **extra_env)
    result = {"command": "run.py " + " ".join(os.path.relpath(a, ROOT) if a.startswith(ROOT) else a
                                               for a in run_args)}
    for kind in ("timing",) + (() if args.no_profile else ("profile",)):
        out = os.path.join(args.base, f"phases_{name}_{args.mode}_{kind}.json")
        if os.path.exists(out):
            os.remove(out)
        start = time.time()
        proc = subprocess.run([VENV_PY, os.path.abspath(__file__), "--child", out, kind, str(args.warmup),
                               str(events), "1" if args.sync_graph else "0", *run_args],
                              cwd=cwd, env=env, capture_output=True, text=True, timeout=args.timeout)
        wall = time.time() - start
        if not os.path.exists(out):
            result[kind] = {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:300]}
            continue
        with open(out) as f:
            record = json.load(f)
        if kind == "timing":
            result[kind] = dict(summarize(record, args.warmup), exit=proc.returncode, wall_s=wall)
        else:
            result[kind] = dict(profile_per_step(record) or {"error": "no profiled window"}, exit=proc.returncode)
    return result


def print_target(name, r, mode):
    t = r.get("timing", {})
    print(f"\n== {name} (--mode {mode}) {r['command']}")
    if "error" in t or not t.get("steps"):
        print(f"   timing: {t.get('error', 'no steady-state steps')}")
    else:
        step = t["median_step_s"]
        print(f"   median step {step * 1e3:.2f} ms over {t['steps']} steps (boundary: {t['boundary']}); "
              "phase medians (ms, share of the step):")
        print("   " + "  ".join(f"{p} {v * 1e3:.2f} ({v / step:.0%})" for p, v in t["phases_s"].items() if v > 0))
        print("   per step: " + ", ".join(f"{c} {v:g}" for c, v in t["counts"].items()))
        sites = t.get("sync_sites_total") or {}
        if sites:
            print("   sync callers (whole run): " + ", ".join(f"{k} x{v}" for k, v in list(sites.items())[:6]))
    p = r.get("profile")
    if p and "share" in p:
        print(f"   cProfile over {p['steps']} steps, {p['tottime_per_step_s'] * 1e3:.1f} ms tottime/step "
              f"({p['wall_per_step_s'] * 1e3:.1f} ms wall/step profiled): "
              + ", ".join(f"{k} {v:.0%}" for k, v in p["share"].items()))
        for row in p["top_mindspore"][:3] + p["top_ours"][:8]:
            print(f"     {row['tottime_per_step_s'] * 1e3:7.2f} ms/step {row['calls_per_step']:7.1f} calls/step  "
                  f"{row['where']}")
    elif p:
        print(f"   profile: {p.get('error')}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        return child_main(argv[1:])
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="+", default=list(DEFAULT))
    p.add_argument("--mode", default="auto", choices=["auto", "pynative", "graph"])
    p.add_argument("--warmup", type=int, default=4, help="step boundaries skipped (compilation, first steps)")
    p.add_argument("--profile-events", type=int, default=16, help="step boundaries profiled after the warm-up")
    p.add_argument("--resnet-steps", type=int, default=10)
    p.add_argument("--no-profile", action="store_true")
    p.add_argument("--sync-graph", action="store_true",
                   help="synchronize after each graph call (charged to graph_wait)")
    p.add_argument("--base", default=os.path.join(ROOT, "runs", "corpus_bench"))
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "step_phases.json"))
    args = p.parse_args(argv)
    if any(n not in RESNETS for n in args.only):
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        import stage_corpus_data as staging
        sys.path.insert(0, os.path.join(ROOT, "bench"))
        from corpus_bench import BENCH_SIZES
        staging.stage(args.base, BENCH_SIZES)
    results = {"date": time.strftime("%Y-%m-%d %H:%M"), "mode": args.mode, "warmup": args.warmup,
               "sync_graph": args.sync_graph, "cpus": os.cpu_count(), "loadavg_start": os.getloadavg(),
               "targets": {}}
    for name in args.only:
        results["targets"][name] = run_target(name, args)
        results["targets"][name]["loadavg_after"] = os.getloadavg()  # other processes inflate every time here
        print_target(name, results["targets"][name], args.mode)
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
        summarize(args.out)  # bench/results.py: the compact summary git keeps (the raw file is ignored)
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
