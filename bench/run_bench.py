"""Benchmark of the compiled step, in one invocation (these machines are noisy: compare ratios from one run).

For each architecture (ResNet50 and ResNet18, batch 32, 3x32x32, Adam), runs as separate processes:
  (a) the unchanged PyTorch step (bench/train_step.py) through run.py (compiled, --mode auto), into an empty
      compile cache; (a2) the same command again: a re-run that loads (a)'s graphs from the cache
  (b) the same through run.py --mode pynative
  (c) a hand-written native MindSpore graph-mode port with TrainOneStepCell (bench/native_resnet.py)
  (d) real PyTorch CPU eager, when a Python with torch is given (--torch-python or $TORCH_PYTHON)
  with --amp, instead of (b) and (c): (e) (a) with autocast(float16) + GradScaler at --amp-level auto (float16
  regions) and (f) the same at the default level (on CPU: float32 regions, the scaler on); ratios (e)/(a), (f)/(a)
and prints median step time, first-step time and peak RSS of each, the ratios (a)/(c) and (a)/(d), and writes all
of it to a JSON file, one per MindSpore stack (issue 33).

    [MINDSPORE=<version>] .venv/bin/python bench/run_bench.py [--arch resnet50 resnet18] [--steps 8] [--out FILE]

``MINDSPORE=`` picks the stack as ``make run MINDSPORE=`` does (``bench/stack.py``); every MindSpore process, (a) to
(c), runs in that stack's venv. ``--out`` defaults to ``bench/results_mindspore-<version>.json``, the version read
from that venv (``bench/perf_table.py`` makes one table per such file). The JSON records the machine as that venv
sees it (its mindspore and mindtorch versions), the load average (1 min, from ``os.getloadavg``) at the start and
the end, and for each run the ``ONEDNN_MAX_CPU_ISA`` it ran with (``onednn_max_cpu_isa``; null: not set): (a) gets
it from run.py (``adapter/backend_compat.set_environment``), (c) from ``bench/stack.native_environment``, the same
value; (d), real PyTorch, runs without it.

(a)'s first step is the eager reference step; its compile time is the second step's time, reported as
``compile_step_s``. (c)'s first step includes its compilation.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)
VENV_PY = stack.python()


def _run(cmd, env=None):
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def stack_machine() -> dict:
    """``bench/machine.describe()`` run in the stack's own interpreter, so that the mindspore and mindtorch versions
    are the stack's, not those of the Python running this script."""
    proc = subprocess.run([VENV_PY, "-c", "import json, machine; print(json.dumps(machine.describe()))"],
                          cwd=os.path.join(ROOT, "bench"), capture_output=True, text=True, timeout=600, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def default_out(machine_: dict) -> str:
    """``bench/results_mindspore-<version>.json`` for the stack's mindspore version."""
    return os.path.join(ROOT, "bench", f"results_mindspore-{machine_.get('mindspore', 'unknown')}.json")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", nargs="+", default=["resnet50", "resnet18"], choices=["resnet50", "resnet18"])
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--out", default=None, help="default: bench/results_mindspore-<the stack's version>.json")
    p.add_argument("--torch-python", default=os.environ.get("TORCH_PYTHON"),
                   help="a Python with real PyTorch installed, for (d)")
    p.add_argument("--amp", action="store_true",
                   help="time (a) against the AMP step (e, f) instead of (b, c): fp32 vs AMP on this device; "
                        "written under the key 'amp' of --out")
    args = p.parse_args()
    stack_info = stack_machine()
    args.out = args.out or default_out(stack_info)
    load_start = os.getloadavg()[0]
    results = {}
    for arch in args.arch:
        # (a) compiles into an empty compile cache of its own (adapter/compile_cache.py, on by default); (a2) is the
        # same command again, loading (a)'s graphs: a user's re-run
        cache = tempfile.mkdtemp(prefix="run_bench_cache_")
        env = dict(os.environ, GLOG_v="4", ADAPTER_COMPILE_CACHE_DIR=cache)
        common = ["--arch", arch, "--steps", str(args.steps)]
        step = os.path.join("bench", "train_step.py")
        r = {"a_compiled": _run([VENV_PY, "run.py", "--original", step, *common], env)}
        if not args.amp:
            r["a2_cached_rerun"] = _run([VENV_PY, "run.py", "--original", step, *common], env)
        shutil.rmtree(cache, ignore_errors=True)
        if not args.amp:
            r["b_pynative"] = _run([VENV_PY, "run.py", "--mode", "pynative", "--original", step, *common], env)
            r["c_native_graph"] = _run([VENV_PY, os.path.join("bench", "native_resnet.py"), *common], env)
        if args.torch_python:
            r["d_torch_eager"] = _run([args.torch_python, step, *common], env)
        if args.amp:
            r["e_amp_fp16"] = _run([VENV_PY, "run.py", "--amp-level", "auto", "--original", step, *common, "--amp"],
                                   env)
            r["f_amp_default"] = _run([VENV_PY, "run.py", "--original", step, *common, "--amp"], env)
        for name in ("a_compiled", "a2_cached_rerun", "e_amp_fp16", "f_amp_default"):
            run_ = r.get(name, {})
            if "step_s" in run_:  # the compiled graph's first call (compilation included) is the second step
                run_["compile_step_s"] = run_["step_s"][1]
                run_["median_step_s"] = sorted(run_["step_s"][2:])[len(run_["step_s"][2:]) // 2]
        a = r["a_compiled"]
        ratios = {}
        for other in ("b_pynative", "c_native_graph", "d_torch_eager"):
            if other in r and "median_step_s" in r[other] and "median_step_s" in a:
                ratios[f"a/{other[0]}"] = a["median_step_s"] / r[other]["median_step_s"]
        for other in ("e_amp_fp16", "f_amp_default"):
            if other in r and "median_step_s" in r[other] and "median_step_s" in a:
                ratios[f"{other[0]}/a"] = r[other]["median_step_s"] / a["median_step_s"]
        r["ratios"] = ratios
        results[arch] = r
        print(f"\n{arch}, batch 32, 3x32x32, Adam, {args.steps} steps")
        print(f"  {'run':16s} {'median step s':>14s} {'first step s':>13s} {'compile s':>10s} {'peak RSS MB':>12s}")
        for name, v in r.items():
            if name == "ratios":
                continue
            if "error" in v:
                print(f"  {name:16s} error: {v['error']}")
                continue
            print(f"  {name:16s} {v['median_step_s']:14.3f} {v['first_step_s']:13.2f} "
                  f"{v.get('compile_step_s', float('nan')):10.2f} {v['peak_rss_mb']:12.0f}")
        print("  ratios: " + ", ".join(f"{k} = {v:.2f}" for k, v in ratios.items()))
    previous = {}
    if os.path.exists(args.out):  # AMP results live under their own key, from their own invocation
        with open(args.out) as f:
            previous = json.load(f)
    if args.amp:  # the file's other keys, machine and date stay those of the fp32 invocation
        previous["amp"] = dict(results, machine=stack_info, date=time.strftime("%Y-%m-%d"))
        with open(args.out, "w") as f:
            json.dump(previous, f, indent=1)
        print(f"\nwritten to {args.out}")
        return
    # everything else is this invocation's alone: an arch it did not run is not kept from an earlier one, so that
    # a table's header (one invocation, one date, one load) is true of all its rows
    results = dict(results, **({"amp": previous["amp"]} if "amp" in previous else {}))
    results["machine"] = stack_info
    results["date"] = time.strftime("%Y-%m-%d")
    results["time_utc"] = time.strftime("%H:%M", time.gmtime())
    results["load_average_1min"] = {"start": round(load_start, 2), "end": round(os.getloadavg()[0], 2)}
    results["command"] = " ".join(([f"MINDSPORE={os.environ['MINDSPORE']}"] if os.environ.get("MINDSPORE") else [])
                                  + [".venv/bin/python", "bench/run_bench.py", *sys.argv[1:]])
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
