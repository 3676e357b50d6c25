"""Corpus benchmark, in one invocation: per pytorch/examples script, the steady-state step time through run.py
(compiled, --mode auto) vs real PyTorch CPU on the same arguments and data, as ratios (these machines are noisy:
compare ratios from one invocation).

    .venv/bin/python bench/corpus_bench.py [--only mnist vae ...] [--out bench/corpus_results.json]

For each script of ``scripts/corpus_specs.py`` that trains (default: those that run in seconds; ``--only`` picks),
in a fresh run folder beside data staged by ``scripts/stage_corpus_data.py`` (the bench's own staging, with 12
ImageFolder images per class and 64 BSDS300 images, so that imagenet and super_resolution have 15 and 16 steps), with the spec's arguments and seed 1:

(a) ``run.py --explain`` through ``bench/corpus_timing.py``, which notes the time of every optimizer step's end
    (``adapter/events.py`` "step_end", fused steps included);
(b) real PyTorch (``--torch-python``, default ``.venv-ref/bin/python``) through ``scripts/run_under_torch.py
    --timing`` (optimizer step post-hook).

The step time is the median interval between consecutive step ends after the first ``--warmup`` (default 4)
intervals, on both sides alike: it includes data loading and the script's own logging between steps, i.e. what a
user waits per step; compilation (the first calls of each site) falls in the warm-up. Also reported: (a)'s
``--explain`` steady-state median of the compiled graph alone, whether each site compiled, and wall times.
Written to ``--out`` as JSON; printed as a table with the ratio (a)/(b).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import corpus_specs as cs  # noqa: E402
import stage_corpus_data as staging  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "bench"))
import machine  # noqa: E402
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)

VENV_PY = stack.python()
REF_PY = os.path.join(ROOT, ".venv-ref", "bin", "python")
DEFAULT = ["mnist", "vae", "dcgan", "regression", "imagenet", "super_resolution", "mnist_forward_forward",
           "mnist_rnn", "ddp_single_gpu", "gpt"]
BENCH_SIZES = {"imagenet_train": 12, "bsds_train": 64}  # imagenet: 15 steps, super_resolution: 16 steps


def _intervals(times, warmup):
    gaps = [b - a for a, b in zip(times, times[1:])][warmup:]
    return gaps


def _summary(times, warmup):
    gaps = _intervals(times, warmup)
    if not gaps:
        return {"steps": len(times), "median_step_s": None, "mean_step_s": None}
    return {"steps": len(times), "median_step_s": statistics.median(gaps), "mean_step_s": statistics.fmean(gaps)}


def _error_line(stderr: str, code: int) -> str:
    """The line that says why a run failed: run.py's "the script failed at FILE:LINE: ..." (or a worker's), else
    the last line."""
    lines = stderr.strip().splitlines()
    for line in lines:
        if line.startswith(("run.py: the script failed at", "run.py: worker")):
            return line[:300]
    return lines[-1][:300] if lines else f"exit {code}"


def run_side(cmd, cwd, env, timing, timeout):
    start = time.time()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout} s"}, None
    wall = time.time() - start
    if not os.path.exists(timing):
        return {"error": _error_line(proc.stderr, proc.returncode), "exit": proc.returncode, "wall_s": wall}, proc
    with open(timing) as f:
        times = json.load(f)
    out = {"exit": proc.returncode, "wall_s": wall, "times": times}
    if proc.returncode != 0:
        out["error"] = _error_line(proc.stderr, proc.returncode)
    return out, proc


def explain_summary(stderr):
    """Per site of (a)'s --explain: [site, compiled?, steady-state graph median s or None]."""
    sites = []
    for line in stderr.splitlines():
        m = re.search(r"([\w./-]+:\d+): backward\(\) of .*? — (.*)$", line.strip())
        if not m:
            continue
        med = re.search(r"steady-state median ([\d.]+) s", m.group(2))
        sites.append([os.path.join(*m.group(1).split("/")[-2:]), m.group(2).startswith("compiled"),
                      float(med.group(1)) if med else None])
    return sites


def bench(spec, base, torch_python, warmup, timeout, launcher):
    env = dict(os.environ, GLOG_v="4", **spec.env)
    result = {"args": spec.script_args(1)}
    for side in ("a_run_py", "b_torch"):
        run = staging.make_run_dir(base, f"bench_{spec.name}_{side}")
        os.makedirs(os.path.join(run, "results"))
        timing = os.path.join(run, "step_times.json")
        script = cs.script_path(spec.script)
        if side == "a_run_py":
            for pre, pre_args in spec.pre:
                subprocess.run([VENV_PY, os.path.join(ROOT, "run.py"), "--original",
                                cs.script_path(pre), *pre_args], cwd=run, env=env, check=True,
                               capture_output=True)
            cmd = [VENV_PY, launcher, timing, "--explain", *spec.run_opts,
                   "--original", script, *spec.script_args(1)]
        else:
            runner = [torch_python, os.path.join(ROOT, "scripts", "run_under_torch.py")]
            for pre, pre_args in spec.pre:
                subprocess.run(runner + [cs.script_path(pre), *pre_args], cwd=run, env=env,
                               check=True, capture_output=True)
            cmd = runner + ["--timing", timing] + (["--torch-seed", "1"] if spec.seed_arg is None else []) + \
                (["--cuda-as-cpu"] if spec.cuda_as_cpu else []) + [script, *spec.script_args(1)]
        out, proc = run_side(cmd, run, env, timing, timeout)
        if "times" in out:
            out.update(_summary(out.pop("times"), warmup))
        if side == "a_run_py" and proc is not None:
            out["explain"] = explain_summary(proc.stderr)
        result[side] = out
    a, b = result["a_run_py"].get("median_step_s"), result["b_torch"].get("median_step_s")
    result["ratio_a_over_b"] = a / b if a and b else None
    return result


def _set_run_python(path):
    global VENV_PY
    VENV_PY = path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="+", choices=sorted(cs.SPECS))
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "corpus_results.json"))
    p.add_argument("--base", default=os.path.join(ROOT, "runs", "corpus_bench"))
    p.add_argument("--torch-python", default=os.environ.get("TORCH_PYTHON", REF_PY))
    p.add_argument("--warmup", type=int, default=4, help="step intervals skipped at the start (both sides)")
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--launcher", default=os.path.join(ROOT, "bench", "corpus_timing.py"),
                   help="(a)'s wrapper: argv[1] the step-times JSON to write, then run.py's arguments (default "
                        "bench/corpus_timing.py; another one to time a variant of run.py)")
    p.add_argument("--run-python", default=VENV_PY,
                   help="(a)'s Python: the stack run.py runs on (default .venv; .venv-mindspore-2.10.0/bin/python)")
    args = p.parse_args(argv)
    _set_run_python(args.run_python)
    staging.stage(args.base, BENCH_SIZES)
    results = {"date": time.strftime("%Y-%m-%d"), "machine": machine.describe(), "warmup_intervals": args.warmup, "staging": dict(
        staging.DEFAULT_SIZES, **BENCH_SIZES), "scripts": {}}
    print(f"{'script':24s} {'steps':>6s} {'run.py s/step':>14s} {'PyTorch s/step':>15s} {'ratio':>7s}  compiled sites")
    for name in args.only or DEFAULT:
        r = bench(cs.SPECS[name], args.base, args.torch_python, args.warmup, args.timeout, args.launcher)
        results["scripts"][name] = r
        a, b = r["a_run_py"], r["b_torch"]
        fmt = lambda v: f"{v:.4f}" if isinstance(v, float) else "-"  # noqa: E731
        compiled = ", ".join(f"{s[0]}:{'yes' if s[1] else 'no'}" for s in a.get("explain", [])) or "-"
        status = "" if "error" not in a else f"  run.py error: {a['error'][:120]}"
        print(f"{name:24s} {str(a.get('steps', '-')):>6s} {fmt(a.get('median_step_s')):>14s} "
              f"{fmt(b.get('median_step_s')):>15s} {fmt(r['ratio_a_over_b']):>7s}  {compiled}{status}", flush=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
