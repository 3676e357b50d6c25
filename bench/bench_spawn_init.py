"""Time from mp.spawn to a joined process group (bench/spawn_init.py), this tree vs an older one, in one invocation.

    .venv/bin/python bench/bench_spawn_init.py [--runs 3] [--before DIR]   # DIR: e.g. git archive 26a1679 | tar -x

Prints, per tree, each run's (child start, init_process_group) seconds and the medians; writes --out. A run of the
older tree can take minutes (MindSpore's reconnect loop, see adapter/distributed/cluster.py wait_for_scheduler).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PY = stack.python()


def _run(tree, port):
    proc = subprocess.run([VENV_PY, os.path.join(tree, "run.py"), "--original",
                           os.path.join(ROOT, "bench", "spawn_init.py"), str(port)], cwd=tree, capture_output=True,
                          text=True, timeout=1800)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]}
    return json.loads(lines[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--before", help="root of an older checkout with run.py")
    p.add_argument("--port", type=int, default=29731)
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "spawn_init_results.json"))
    args = p.parse_args()
    trees = {"after": ROOT, **({"before": args.before} if args.before else {})}
    results = {name: [] for name in trees}
    for i in range(args.runs):  # interleaved, so that both trees see the same machine load
        for name, tree in trees.items():
            results[name].append(_run(tree, args.port + 2 * i + (name == "before")))
            print(name, results[name][-1], flush=True)
    summary = {}
    for name, runs in results.items():
        ok = [r for r in runs if "init_s" in r]
        if ok:
            summary[name] = {"median_child_start_s": statistics.median(r["child_start_s"] for r in ok),
                             "median_init_s": statistics.median(r["init_s"] for r in ok)}
            print(f"{name}: median child start {summary[name]['median_child_start_s']:.2f} s, "
                  f"init_process_group {summary[name]['median_init_s']:.2f} s over {len(ok)} runs")
    with open(args.out, "w") as f:
        json.dump({"args": vars(args), "runs": results, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
