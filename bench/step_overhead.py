"""Where a small model's step time goes outside the compiled graph: run.py (this tree, and ``--before DIR``) vs
PyTorch CPU, per corpus script, in one invocation.

    .venv/bin/python bench/step_overhead.py [--only vae mnist_rnn ...] [--before DIR] [--no-profile]
        [--out bench/step_overhead_results.json]

``--before DIR``: an older tree with run.py, e.g. ``mkdir -p /tmp/before && git archive main | tar -x -C
/tmp/before`` (its ``.venv`` is not needed: this tree's Python runs both).

Per script of ``scripts/corpus_specs.py`` (default: ddp_single_gpu, regression, mnist_rnn, vae, mnist; the
pytorch/examples ones read from the checkout named by ``CORPUS_EXAMPLES``, ``corpus_specs.script_path``), in a fresh
run folder beside the staging of ``bench/corpus_bench.py`` (spec arguments, seed 1), each side ticks at every
``backward`` (run.py: ``adapter/events.py`` "backward", emitted for compiled and eager steps; PyTorch:
``torch.Tensor.backward`` returning), so scripts without an optimizer (regression) are timed too:

1. **phases** (one timed run per tree, interleaved with PyTorch's): the steady-state step (median interval between
   ticks after ``--warmup``) split into: ``data`` (the DataLoader iterator's ``__next__``), ``site`` (a compiled
   site's call, ``SiteRuntime.run``) of which ``graph`` (the Cell call, ``run_cell``), ``opt_step`` (the
   ``optimizer.step()`` stand-in after a site, eager or fused) and ``rest`` (the script's own code, ``.item()``,
   logging, eager ops): medians of the per-step sums. Timers are ``perf_counter`` around those calls only.
2. **profile** (``cProfile`` of ticks ``--profile-from`` .. ``--profile-to`` in a second run per tree): function calls
   per step (load does not change counts), and per step the total time by owner (ours: adapter/ + patches/;
   MindTorch; MindSpore; numpy/PIL/Python), and the top functions by own time with their calls per step. cProfile
   slows Python-heavy code more than C code: read its times as shares, its counts as exact.

Writes ``--out`` (JSON) and prints one table per script. Timings on a loaded machine are noise: compare the columns of
one invocation (the runs are interleaved: before, after, PyTorch, per script).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))  # run as a script or imported
from results import summarize  # noqa: E402
VENV_PY = stack.python()
REF_PY = os.path.join(ROOT, ".venv-ref", "bin", "python")
DEFAULT = ["ddp_single_gpu", "regression", "mnist_rnn", "vae", "mnist"]
PHASES = ("data", "site", "graph", "opt_step")


# -- children ----------------------------------------------------------------------------------------------------
def _owner(filename: str) -> str:
    if "/adapter/" in filename or "/patches/" in filename:
        return "ours"
    if "/mindtorch/" in filename:
        return "mindtorch"
    if "/mindspore/" in filename:
        return "mindspore"
    examples = os.environ.get("CORPUS_EXAMPLES")
    if (examples and filename.startswith(os.path.abspath(examples) + os.sep)) or "/pt_original/" in filename:
        return "script"
    return "other"


def _profile_summary(prof, steps: int, top: int = 25) -> dict:
    import pstats
    stats = pstats.Stats(prof).stats  # (file, line, name) -> (prim calls, calls, tottime, cumtime, callers)
    by_owner: dict = {}
    calls = 0
    rows = []
    for (filename, line, name), (_, ncalls, tottime, cumtime, _) in stats.items():
        owner = _owner(filename) if filename != "~" else "builtin"
        by_owner[owner] = by_owner.get(owner, 0.0) + tottime / steps
        calls += ncalls
        where = f"{'/'.join(filename.split('/')[-2:])}:{line}({name})" if filename != "~" else name
        rows.append((tottime / steps, cumtime / steps, ncalls / steps, owner, where))
    rows.sort(reverse=True)
    by_cum = sorted((r for r in rows if r[3] in ("ours", "mindtorch")), key=lambda r: -r[1])
    return {"calls_per_step": calls / steps, "tottime_per_step_by_owner": by_owner,
            "top_tottime": [list(r) for r in rows[:top]], "top_cumtime_ours_mindtorch": [list(r) for r in by_cum[:top]]}


def _backend():
    """This checkout's ``adapter/backend.py`` (the private-name helpers), loaded by path: the measured TREE may
    predate it, and what it reaches (MindSpore, MindTorch) is this venv's either way."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_adapter_backend", os.path.join(ROOT, "adapter", "backend.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def child_runpy(argv) -> int:
    """``child TREE OUT.json WARMUP PROFILE_FROM PROFILE_TO -- [run.py options] --original SCRIPT args``."""
    tree, out, warmup, p_from, p_to = argv[0], argv[1], int(argv[2]), int(argv[3]), int(argv[4])
    rest = argv[argv.index("--") + 1:]
    sys.path.insert(0, tree)
    import patches
    try:  # as the launcher does, before anything imports MindSpore (a tree without that phase: nothing to do)
        patches.install("pre-mindspore")
    except ValueError:
        pass
    from adapter import compiled_step, events
    from app import launcher
    ticks: list = []
    sums = {p: 0.0 for p in PHASES}
    per_step: list = []
    profile = p_to > p_from
    prof = None
    if profile:
        import cProfile
        prof = cProfile.Profile()

    def on_backward(*_):
        ticks.append(time.perf_counter())
        if not profile and len(ticks) == 1:
            wrap_loader()
        per_step.append(dict(sums))
        if profile and len(ticks) == p_from:
            prof.enable()
        elif profile and len(ticks) == p_to:
            prof.disable()

    events.subscribe("backward", on_backward)
    if not profile:
        def timed(owner, attr, phase):
            original = getattr(owner, attr)

            def wrapper(*args, **kwargs):
                start = time.perf_counter()
                try:
                    return original(*args, **kwargs)
                finally:
                    sums[phase] += time.perf_counter() - start
            setattr(owner, attr, wrapper)

        timed(compiled_step.SiteRuntime, "run", "site")
        timed(compiled_step, "run_cell", "graph")
        timed(compiled_step, "optimizer_step", "opt_step")
        # the compiled step's module imports run_cell by name: wrapped there. The DataLoader exists only after
        # run.py's start-up: wrapped at the first tick (the class attribute: live iterators see it)

    def wrap_loader():
        timed(_backend().internal("BaseDataLoaderIter"), "__next__", "data")

    def write():
        if profile and len(ticks) >= p_from:
            prof.disable()
        result = {"ticks": ticks, "per_step": per_step}
        if profile and len(ticks) > p_from:
            steps = min(len(ticks), p_to) - p_from
            result["profile"] = _profile_summary(prof, steps)
            result["profile"]["steps"] = steps
        with open(out, "w") as f:
            json.dump(result, f)

    import atexit
    atexit.register(write)
    sys.argv = [os.path.join(tree, "run.py")] + rest
    try:
        code = launcher.main(rest)
    finally:
        atexit.unregister(write)
        write()
    return code


def child_torch(argv) -> int:
    """``child-torch OUT.json SCRIPT_RUNNER_ARGS...``: scripts/run_under_torch.py with a tick per backward()."""
    out = argv[0]
    import torch
    ticks: list = []
    original = torch.Tensor.backward

    def backward(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        ticks.append(time.perf_counter())
        return result
    torch.Tensor.backward = backward
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import run_under_torch
    try:
        return run_under_torch.main(argv[1:])
    finally:
        with open(out, "w") as f:
            json.dump({"ticks": ticks}, f)


# -- parent ------------------------------------------------------------------------------------------------------
def _median_interval(ticks, warmup):
    gaps = [b - a for a, b in zip(ticks, ticks[1:])][warmup:]
    return statistics.median(gaps) if gaps else None


def _phase_medians(per_step, warmup):
    """Per phase, the median over steady-state steps of the time spent in it between two ticks."""
    rows = [{p: b[p] - a[p] for p in PHASES} for a, b in zip(per_step, per_step[1:])][warmup:]
    return {p: statistics.median(r[p] for r in rows) for p in PHASES} if rows else {}


def _run(cmd, cwd, env, out, timeout):
    if os.path.exists(out):
        os.remove(out)
    start = time.time()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if not os.path.exists(out):
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:300]}
    with open(out) as f:
        result = json.load(f)
    result["wall_s"] = time.time() - start
    if proc.returncode != 0:
        result["error"] = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:300]
    return result


def bench(spec, base, trees, args):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import stage_corpus_data as staging
    env = dict(os.environ, GLOG_v="4", **spec.env)
    import corpus_specs as cs
    script = cs.script_path(spec.script)  # the same file for every tree, except one of ours (pt_original/)
    result = {}
    runs = [(name, "phases") for name in trees] + [("pytorch", "phases")]
    if args.profile:
        runs += [(name, "profile") for name in trees]
    for side, kind in runs:
        run = staging.make_run_dir(base, f"so_{spec.name}_{side}_{kind}")
        os.makedirs(os.path.join(run, "results"), exist_ok=True)
        out = os.path.join(run, "step_overhead.json")
        if side == "pytorch":
            cmd = [args.torch_python, os.path.abspath(__file__), "child-torch", out] + \
                (["--torch-seed", "1"] if spec.seed_arg is None else []) + \
                (["--cuda-as-cpu"] if spec.cuda_as_cpu else []) + \
                [script, *spec.script_args(1)]
        else:
            tree = trees[side]
            p_from, p_to = (args.profile_from, args.profile_to) if kind == "profile" else (0, 0)
            cmd = [VENV_PY, os.path.abspath(__file__), "child", tree, out, str(args.warmup), str(p_from), str(p_to),
                   "--", *spec.run_opts, "--original",
                   os.path.join(tree, spec.script) if spec.script.startswith(cs.OURS) else script,
                   *spec.script_args(1)]
        r = _run(cmd, run, env, out, args.timeout)
        entry = result.setdefault(side, {})
        if kind == "phases":
            ticks = r.get("ticks") or []
            entry.update({"steps": len(ticks), "step_s": _median_interval(ticks, args.warmup),
                          "wall_s": r.get("wall_s")})
            if "per_step" in r:
                entry["phases_s"] = _phase_medians(r["per_step"], args.warmup)
        else:
            entry["profile"] = r.get("profile")
        if "error" in r:
            entry.setdefault("errors", []).append(f"{kind}: {r['error']}")
    return result


def _print(name, result, trees):
    torch_s = result.get("pytorch", {}).get("step_s")
    print(f"\n== {name}: steady-state s/step (median; PyTorch CPU {torch_s and f'{torch_s:.4f}'})")
    print(f"{'tree':8s} {'step':>8s} {'/torch':>7s} {'data':>8s} {'site':>8s} {'graph':>8s} {'site-gr':>8s} "
          f"{'opt':>8s} {'rest':>8s} {'calls/st':>9s}")
    for side in trees:
        r = result.get(side, {})
        ph = r.get("phases_s") or {}
        step = r.get("step_s")
        fmt = lambda v: f"{v:8.4f}" if isinstance(v, float) else f"{'-':>8s}"  # noqa: E731
        prof = r.get("profile") or {}
        calls = prof.get("calls_per_step")
        rest = step - ph["data"] - ph["site"] - ph["opt_step"] if step and ph else None
        print(f"{side:8s} {fmt(step)} {(f'{step / torch_s:7.2f}' if step and torch_s else '      -')} "
              f"{fmt(ph.get('data'))} {fmt(ph.get('site'))} {fmt(ph.get('graph'))} "
              f"{fmt(ph['site'] - ph['graph'] if ph else None)} {fmt(ph.get('opt_step'))} {fmt(rest)} "
              f"{(f'{calls:9.0f}' if calls else '        -')}")
        for err in r.get("errors", []):
            print(f"         error: {err}")
    for side in trees:
        prof = (result.get(side) or {}).get("profile")
        if not prof:
            continue
        owners = ", ".join(f"{k} {v * 1e3:.2f}" for k, v in sorted(prof["tottime_per_step_by_owner"].items(),
                                                                   key=lambda kv: -kv[1]))
        print(f"  [{side}] cProfile ms/step by owner (own time): {owners}")
        for tot, cum, ncalls, owner, where in prof["top_tottime"][:10]:
            print(f"    {tot * 1e3:7.3f} ms own {cum * 1e3:7.3f} cum {ncalls:7.1f} calls/step  {owner:9s} {where}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "child":
        return child_runpy(argv[1:])
    if argv and argv[0] == "child-torch":
        return child_torch(argv[1:])
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import corpus_specs as cs
    import stage_corpus_data as staging
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from corpus_bench import BENCH_SIZES
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="+", choices=sorted(cs.SPECS))
    p.add_argument("--before", help="root of an older tree with run.py (git archive main | tar -x -C DIR)")
    p.add_argument("--warmup", type=int, default=4, help="tick intervals skipped at the start")
    p.add_argument("--no-profile", dest="profile", action="store_false")
    p.add_argument("--profile-from", type=int, default=6)
    p.add_argument("--profile-to", type=int, default=14)
    p.add_argument("--torch-python", default=os.environ.get("TORCH_PYTHON", REF_PY))
    p.add_argument("--base", default=os.path.join(ROOT, "runs", "corpus_bench"))
    p.add_argument("--timeout", type=int, default=600)
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "step_overhead_results.json"))
    args = p.parse_args(argv)
    staging.stage(args.base, BENCH_SIZES)
    trees = {**({"before": os.path.abspath(args.before)} if args.before else {}), "after": ROOT}
    results = {"date": time.strftime("%Y-%m-%d %H:%M"), "trees": trees, "warmup": args.warmup, "scripts": {}}
    for name in args.only or DEFAULT:
        results["scripts"][name] = bench(cs.SPECS[name], args.base, trees, args)
        _print(name, results["scripts"][name], list(trees))
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
        summarize(args.out)  # bench/results.py: the compact summary git keeps (the raw file is ignored)
    return 0


if __name__ == "__main__":
    sys.exit(main())
