"""Time to the first steps with and without the compile cache, in one invocation (noisy machine: compare ratios).

For each architecture, as separate processes: (c) native MindSpore graph (bench/native_resnet.py); run.py on
bench/train_step.py with --no-compile-cache; run.py with the default cache in a fresh folder (the compiling run);
the same again (the cached re-run, each loaded graph checked against the eager reference step). Prints per run
step 1 (run.py: the eager reference step), step 2 (run.py: the first compiled step, compile or load + check
included) and their sum, "to step 2"; ratios of run.py's "to step 2" over native's step 1 (the issue's measure: native
compiles in its step 1) and over native's "to step 2". Writes JSON.

    .venv/bin/python bench/first_step_bench.py [--arch resnet18] [--steps 3] [--out bench/first_step_results.json]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = os.path.join(ROOT, ".venv", "bin", "python")


def _run(cmd, env):
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["loaded"] = "loaded from the compile cache" in proc.stderr
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", nargs="+", default=["resnet18"], choices=["resnet18", "resnet50"])
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "first_step_results.json"))
    args = p.parse_args()
    cache_home = tempfile.mkdtemp(prefix="first_step_cache_")
    env = dict(os.environ, GLOG_v="4", XDG_CACHE_HOME=cache_home)
    step = os.path.join("bench", "train_step.py")
    results = {}
    try:
        for arch in args.arch:
            common = ["--arch", arch, "--steps", str(args.steps)]
            r = {"c_native": _run([PY, os.path.join("bench", "native_resnet.py"), *common], env),
                 "a_no_cache": _run([PY, "run.py", "--no-compile-cache", "--original", step, *common], env),
                 "a_cache_compiling": _run([PY, "run.py", "--original", step, *common], env),
                 "a_cache_rerun": _run([PY, "run.py", "--original", step, *common], env)}
            native = r["c_native"]
            print(f"\n{arch}, batch 32, 3x32x32, Adam")
            print(f"  {'run':18s} {'step 1 s':>9s} {'step 2 s':>9s} {'to step 2':>10s} {'/native step1':>14s} "
                  f"{'/native to 2':>13s} loaded  losses equal")
            for name, v in r.items():
                if "error" in v:
                    print(f"  {name:18s} error: {v['error']}")
                    continue
                s1, s2 = v["step_s"][0], v["step_s"][1]
                v["to_step2_s"] = s1 + s2
                if "error" not in native:
                    v["ratio_native_step1"] = v["to_step2_s"] / native["step_s"][0]
                    v["ratio_native_to_step2"] = v["to_step2_s"] / (native["step_s"][0] + native["step_s"][1])
                same = v["losses"] == r["a_no_cache"].get("losses") if name.startswith("a_") else ""
                print(f"  {name:18s} {s1:9.2f} {s2:9.2f} {v['to_step2_s']:10.2f} "
                      f"{v.get('ratio_native_step1', float('nan')):14.2f} "
                      f"{v.get('ratio_native_to_step2', float('nan')):13.2f} {str(v['loaded']):7s} {same}")
            results[arch] = r
    finally:
        shutil.rmtree(cache_home, ignore_errors=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
