"""Step time of a step that used to fall back to PyNative and now compiles (issue 13), in one invocation.

bench/preact_step.py (CIFAR PreAct-ResNet18, SGD momentum + weight decay; its modules run in another order than they
are registered) as separate processes:
  (a) through run.py from this tree (compiled, fused)
  (b) through run.py --mode pynative: the eager bridge, which is what the step ran on when it fell back
  (c) through run.py of an older checkout (--before DIR, e.g. ``git archive 26a1679 | tar -x -C DIR``), if given:
      the fallback itself, including its failed compile attempt
  (d) real PyTorch CPU eager, if --torch-python names a Python with torch
Prints median step time (steps 3.., the first two are the eager reference step and the compile) and the ratios, and
writes them to --out. These machines are noisy: compare ratios from one invocation.

    .venv/bin/python bench/bench_compile_coverage.py [--batch-size 8] [--steps 6] [--before DIR] [--torch-python PY]
"""
import argparse
import json
import os
import subprocess
import sys
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PY = stack.python()
STEP = os.path.join(ROOT, "bench", "preact_step.py")


def _run(cmd, cwd=ROOT):
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["fallback"] = next((line for line in proc.stderr.splitlines() if "not compiled" in line), None)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--before", help="root of an older checkout with run.py, for (c)")
    p.add_argument("--torch-python", default=os.environ.get("TORCH_PYTHON"))
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "compile_coverage_results.json"))
    args = p.parse_args()
    common = ["--batch-size", str(args.batch_size), "--steps", str(args.steps)]
    r = {"a_compiled": _run([VENV_PY, "run.py", "--original", STEP, *common]),
         "b_pynative": _run([VENV_PY, "run.py", "--mode", "pynative", "--original", STEP, *common])}
    if args.before:
        r["c_before"] = _run([VENV_PY, os.path.join(args.before, "run.py"), "--original", STEP, *common],
                             cwd=args.before)
    if args.torch_python:
        r["d_torch_eager"] = _run([args.torch_python, STEP, *common])
    for name, v in r.items():
        print(f"{name:14s} " + (f"median step {v['median_step_s']:.3f} s  first {v['first_step_s']:.2f} s"
                                + (f"  [{v['fallback']}]" if v.get("fallback") else "")
                                if "error" not in v else v["error"]))
    a = r["a_compiled"].get("median_step_s")
    for name in ("b_pynative", "c_before", "d_torch_eager"):
        if a and name in r and "median_step_s" in r[name]:
            print(f"(a)/({name[0]}) = {a / r[name]['median_step_s']:.2f}")
    with open(args.out, "w") as f:
        json.dump({"args": vars(args), "results": r}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
