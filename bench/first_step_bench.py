"""Time to the first steps with and without the compile cache, in one invocation (noisy machine: compare ratios).

For each architecture, as separate processes: (c) native MindSpore graph (bench/native_resnet.py); run.py on
bench/train_step.py with --no-compile-cache; run.py with the default cache in a fresh folder (the compiling run);
the same again (the cached re-run, each loaded graph checked against the eager reference step). Prints per run
step 1 (run.py: the eager reference step), step 2 (run.py: the first compiled step, compile or load + check
included) and their sum, "to step 2"; ratios of run.py's "to step 2" over native's step 1 (the issue's measure: native
compiles in its step 1) and over native's "to step 2". Writes JSON.

    .venv/bin/python bench/first_step_bench.py [--arch resnet18] [--steps 3] [--repeat 2] \
        [--out bench/first_step_results.json]

--malloc adds two runs per round: run.py --no-compile-cache with ``ADAPTER_MALLOC=system`` (glibc malloc as
``python SCRIPT`` gets it; run.py's default preloads MindSpore's jemalloc, adapter/allocator.py) and native MindSpore
with that jemalloc preloaded, and says whether the losses are bit-identical. "cpu to 2" is the process CPU seconds
(all threads) of steps 1 and 2, "proc cpu" the whole process's (start-up, imports, exit), from the children's rusage:
on a shared machine CPU seconds compare better than wall seconds.

--repeat N runs N rounds of the four, interleaved (a loaded machine drifts; compare within a round), each round
compiling into a fresh cache folder; "RSS MB" is each process's peak resident set (ru_maxrss).
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = stack.python()


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(cmd, env):
    cpu0 = _children_cpu()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_cpu_s"] = _children_cpu() - cpu0
    out["loaded"] = "loaded from the compile cache" in proc.stderr
    return out


def _row(name, v, native):
    if "error" in v:
        print(f"  {name:22s} error: {v['error']}")
        return
    s1, s2 = v["step_s"][0], v["step_s"][1]
    v["to_step2_s"] = s1 + s2
    v["to_step2_cpu_s"] = sum(v["step_cpu_s"][:2]) if "step_cpu_s" in v else float("nan")
    if "error" not in native:
        v["ratio_native_step1"] = v["to_step2_s"] / native["step_s"][0]
        v["ratio_native_to_step2"] = v["to_step2_s"] / (native["step_s"][0] + native["step_s"][1])
    print(f"  {name:22s} {s1:9.2f} {s2:9.2f} {v['to_step2_s']:10.2f} {v.get('ratio_native_step1', float('nan')):14.2f} "
          f"{v.get('ratio_native_to_step2', float('nan')):13.2f} {v['to_step2_cpu_s']:9.2f} "
          f"{v.get('process_cpu_s', float('nan')):9.2f} {v.get('peak_rss_mb', float('nan')):8.0f} "
          f"{str(v.get('loaded', '')):7s}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", nargs="+", default=["resnet18"], choices=["resnet18", "resnet50"])
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--repeat", type=int, default=1,
                   help="rounds of (native, no cache, compiling with the cache, cached re-run), interleaved; the "
                        "summary gives each run's median over the rounds")
    p.add_argument("--malloc", action="store_true",
                   help="also run.py --no-compile-cache with ADAPTER_MALLOC=system and native MindSpore with "
                        "MindSpore's jemalloc preloaded (the allocator's share, adapter/allocator.py)")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "first_step_results.json"))
    args = p.parse_args()
    sys.path.insert(0, ROOT)
    from adapter import allocator  # stdlib only
    step = os.path.join("bench", "train_step.py")
    results = {}
    for arch in args.arch:
        common = ["--arch", arch, "--steps", str(args.steps)]
        rounds = []
        for i in range(args.repeat):
            cache_home = tempfile.mkdtemp(prefix="first_step_cache_")  # each round compiles into a fresh folder
            env = dict(os.environ, GLOG_v="4", XDG_CACHE_HOME=cache_home)
            env.pop("ADAPTER_COMPILE_CACHE_DIR", None)
            env = allocator.environ_without_ours(env)  # each run as its command starts it (bench under run.py)
            env.pop(allocator.CHOICE_ENV, None)
            try:
                r = {"c_native": _run([PY, os.path.join("bench", "native_resnet.py"), *common], env),
                     "a_no_cache": _run([PY, "run.py", "--no-compile-cache", "--original", step, *common], env),
                     "a_cache_compiling": _run([PY, "run.py", "--original", step, *common], env),
                     "a_cache_rerun": _run([PY, "run.py", "--original", step, *common], env)}
                if args.malloc:
                    lib = allocator.mindspore_jemalloc()
                    r["a_no_cache_system_malloc"] = _run([PY, "run.py", "--no-compile-cache", "--original", step,
                                                          *common], dict(env, **{allocator.CHOICE_ENV: "system"}))
                    if lib:
                        r["c_native_jemalloc"] = _run([PY, os.path.join("bench", "native_resnet.py"), *common],
                                                      dict(env, LD_PRELOAD=lib))
            finally:
                shutil.rmtree(cache_home, ignore_errors=True)
            rounds.append(r)
            print(f"\n{arch}, batch 32, 3x32x32, Adam, round {i + 1}/{args.repeat}")
            print(f"  {'run':22s} {'step 1 s':>9s} {'step 2 s':>9s} {'to step 2':>10s} {'/native step1':>14s} "
                  f"{'/native to 2':>13s} {'cpu to 2':>9s} {'proc cpu':>9s} {'RSS MB':>8s} loaded")
            for name, v in r.items():
                _row(name, v, r["c_native"])
            same = [v["losses"] == r["a_no_cache"].get("losses") for k, v in r.items()
                    if k.startswith("a_cache") and "error" not in v]
            print(f"  cached runs' losses equal the uncached run's: {same}")
            if "a_no_cache_system_malloc" in r:
                print("  glibc malloc's losses bit-identical to jemalloc's (run.py default): "
                      f"{r['a_no_cache_system_malloc'].get('losses') == r['a_no_cache'].get('losses')}; native: "
                      f"{r.get('c_native_jemalloc', {}).get('losses') == r['c_native'].get('losses')}")
        summary = {}
        for name in rounds[0]:
            ok = [r[name] for r in rounds if "error" not in r[name]]
            if ok:
                summary[name] = {key: statistics.median(v[key] for v in ok)
                                 for key in ("to_step2_s", "to_step2_cpu_s", "process_cpu_s", "peak_rss_mb",
                                             "ratio_native_step1", "ratio_native_to_step2")
                                 if all(key in v for v in ok)}
        print(f"\n{arch}: medians over {len(rounds)} round(s)")
        for name, v in summary.items():
            print(f"  {name:22s} " + "  ".join(f"{k} {x:.3g}" for k, x in v.items()))
        results[arch] = {"rounds": rounds, "median": summary}
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import machine  # noqa: E402 -- bench/machine.py
    results["machine"] = machine.describe()
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
