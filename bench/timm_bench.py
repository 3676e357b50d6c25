"""Step time of timm models, compiled under run.py, as ratios to real PyTorch CPU, from one invocation (issue 34).

For each model, two processes, one after the other (these machines are noisy: read the ratios, which come from one
run, not the seconds):
  (a) bench/timm_step.py through ``run.py --explain`` (compiled, ``--mode auto``, into an empty compile cache of its
      own); ``compiled`` is whether ``--explain`` reported the step site compiled (graph mode);
  (d) the same script under real PyTorch (``--torch-python``, ``$TORCH_PYTHON``, else ``.venv-ref/bin/python``);
  (c) for resnet18 and resnet50 only: the hand-written native MindSpore graph-mode ResNet of bench/native_resnet.py
      (same depth and stem, batch and image size; Adam, not SGD), with our oneDNN setting: MindSpore's own speed on
      this CPU, the floor under (a). Its ratio (c)/(d) says how much of (a)/(d) is MindSpore's kernels, not ours.
It prints each model's median step time (the steps after the second: (a)'s first step is the eager reference step,
its second compiles), first-step time and peak RSS, and the ratio (a)/(d) against the issue's target of 1.5, and
writes all of it to ``bench/timm_results_mindspore-<version>.json`` (``--out``).

    [MINDSPORE=<version>] .venv/bin/python bench/timm_bench.py [--models resnet18 ...] [--steps 8] [--batch-size 32]

Needs timm in both venvs: ``scripts/setup.sh timm`` (after ``make reference`` for ``.venv-ref``).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)
from run_bench import stack_machine  # noqa: E402

MODELS = ["resnet18", "resnet50", "efficientnet_b0", "mobilenetv3_large_100", "convnext_tiny",
          "vit_tiny_patch16_224", "regnety_002"]
NATIVE = ("resnet18", "resnet50")  # the models bench/native_resnet.py ports by hand
TARGET = 1.5  # issue 34: compiled step time at most 1.5 times PyTorch CPU's
STEP = os.path.join("bench", "timm_step.py")


def _run(cmd, env):
    """The JSON line a timm_step.py process printed last, with ``compiled`` (None when ``--explain`` was not asked);
    ``{"error": <last stderr line>}`` when it failed."""
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        errors = [line for line in lines if "Error" in line]  # the exception's line, not --explain's last lines
        return {"error": (errors or lines or [f"exit {proc.returncode}"])[-1]}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if "--explain" in cmd:
        out["compiled"] = bool(re.search(r"timm_step\.py:\d+: backward\(\) of loss — compiled \(graph mode",
                                         proc.stderr))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=MODELS)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--out", default=None, help="default: bench/timm_results_mindspore-<the stack's version>.json")
    p.add_argument("--torch-python", default=os.environ.get("TORCH_PYTHON")
                   or os.path.join(ROOT, ".venv-ref", "bin", "python"), help="a Python with real PyTorch and timm")
    args = p.parse_args()
    venv_py = stack.python()
    machine = stack_machine()
    out_path = args.out or os.path.join(ROOT, "bench", f"timm_results_mindspore-{machine.get('mindspore')}.json")
    load_start = os.getloadavg()[0]
    common = ["--steps", str(args.steps), "--batch-size", str(args.batch_size)]
    results = {}
    print(f"{'model':24s} {'ours s':>8s} {'PyTorch s':>10s} {'ratio':>6s} {'compiled':>9s} {'first s':>8s} "
          f"{'RSS MB ours / PyTorch':>22s}   native MindSpore s (native / PyTorch)")
    for model in args.models:
        cache = tempfile.mkdtemp(prefix="timm_bench_cache_")
        env = dict(os.environ, GLOG_v="4", ADAPTER_COMPILE_CACHE_DIR=cache)
        a = _run([venv_py, "run.py", "--explain", "--original", STEP, "--model", model, *common], env)
        shutil.rmtree(cache, ignore_errors=True)
        d = _run([args.torch_python, STEP, "--reference", "--model", model, *common], dict(os.environ)) \
            if os.path.exists(args.torch_python) else {"error": f"{args.torch_python} does not exist"}
        r = {"a_compiled": a, "d_torch_eager": d}
        if model in NATIVE:
            native = _run([venv_py, os.path.join("bench", "native_resnet.py"), "--arch", model, *common], env)
            if "median_step_s" in native:  # its first step compiles: the median of the others
                native["median_step_s"] = sorted(native["step_s"][1:])[len(native["step_s"][1:]) // 2]
            r["c_native_graph"] = native
        if "median_step_s" in a and "median_step_s" in d:
            r["ratio_a_d"] = a["median_step_s"] / d["median_step_s"]
        if "median_step_s" in r.get("c_native_graph", {}) and "median_step_s" in d:
            r["ratio_c_d"] = r["c_native_graph"]["median_step_s"] / d["median_step_s"]
            r["ratio_a_c"] = a["median_step_s"] / r["c_native_graph"]["median_step_s"] if "median_step_s" in a else None
        results[model] = r
        if "error" in a or "error" in d:
            print(f"{model:24s} error: {a.get('error') or d.get('error')}")
            continue
        print(f"{model:24s} {a['median_step_s']:8.3f} {d['median_step_s']:10.3f} {r['ratio_a_d']:6.2f} "
              f"{'yes' if a['compiled'] else 'NO':>9s} {a['first_step_s']:8.2f} "
              f"{a['peak_rss_mb']:10.0f} / {d['peak_rss_mb']:<9.0f}"
              + (f"   {r['c_native_graph']['median_step_s']:.3f} ({r['ratio_c_d']:.2f})" if "ratio_c_d" in r else ""))
    ratios = [r["ratio_a_d"] for r in results.values() if "ratio_a_d" in r]
    over = [m for m, r in results.items() if r.get("ratio_a_d", 0) > TARGET]
    print(f"ratios (ours / PyTorch): {len(ratios)} models, max {max(ratios, default=float('nan')):.2f}; "
          f"over the target of {TARGET}: {', '.join(over) or 'none'}")
    results.update(machine=machine, date=time.strftime("%Y-%m-%d"), time_utc=time.strftime("%H:%M", time.gmtime()),
                   load_average_1min={"start": round(load_start, 2), "end": round(os.getloadavg()[0], 2)},
                   command=" ".join(([f"MINDSPORE={os.environ['MINDSPORE']}"] if os.environ.get("MINDSPORE") else [])
                                    + [".venv/bin/python", "bench/timm_bench.py", *sys.argv[1:]]))
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1)
    print(f"written to {out_path}")


if __name__ == "__main__":
    main()
