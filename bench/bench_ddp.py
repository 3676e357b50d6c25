"""Data-parallel benchmark, in one invocation: the same DDP step (bench/ddp_train_step.py, ResNet18, batch 32 per
worker, Adam) through ``run.py --nproc-per-node 1`` and ``--nproc-per-node 2`` on this machine.

Prints, per worker count: median step time, throughput (samples/s over all workers), the step time under
``no_sync()`` (no gradient averaging) and their difference (what averaging costs per step: all-reduce, buffer
broadcast, waiting for the slower worker), and the time of ``dist.all_reduce`` over the gradients' volume in 25 MB
buckets with both workers starting together (the all-reduce alone); writes them to a JSON file.

    .venv/bin/python bench/bench_ddp.py [--arch resnet18] [--steps 8] [--workers 1 2] [--out bench/ddp_results.json]
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def run(workers, args):
    from adapter.distributed import free_port
    cmd = [sys.executable, os.path.join(ROOT, "run.py"), "--nproc-per-node", str(workers), "--master-port",
           str(free_port()), "--original", os.path.join(ROOT, "bench", "ddp_train_step.py"), "--arch", args.arch,
           "--batch-size", str(args.batch_size), "--steps", str(args.steps)]
    start = time.time()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=3600,
                          env=dict(os.environ, GLOG_v="4"))
    wall = time.time() - start
    lines = [l for l in proc.stdout.splitlines() if l.startswith("BENCH_DDP ")]
    if proc.returncode != 0 or not lines:
        tail = proc.stderr.strip().splitlines()[-3:]
        return {"workers": workers, "error": " | ".join(tail) or f"exit {proc.returncode}"}
    result = json.loads(lines[-1][len("BENCH_DDP "):])
    result["workers"] = workers
    result["wall_s"] = wall
    result["samples_per_s"] = workers * args.batch_size / result["median_step_s"]
    result["samples_per_s_no_sync"] = workers * args.batch_size / result["median_step_no_sync_s"]
    result["sync_cost_s"] = result["median_step_s"] - result["median_step_no_sync_s"]
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", default="resnet18", choices=["resnet18", "resnet50"])
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "ddp_results.json"))
    args = p.parse_args()
    results = [run(n, args) for n in args.workers]
    print(f"{args.arch}, batch {args.batch_size} per worker, 3x32x32, Adam; {os.cpu_count()} CPU cores")
    print(f"{'workers':>7} {'step s':>8} {'samples/s':>10} {'no_sync step s':>15} {'sync cost ms/step':>19} "
          f"{'all_reduce(grads) ms':>21}")
    for r in results:
        if "error" in r:
            print(f"{r['workers']:>7} error: {r['error']}")
            continue
        reduce_ms = f"{1000 * r['sync_cost_s']:.0f}" if r["world"] > 1 else "-"
        print(f"{r['workers']:>7} {r['median_step_s']:>8.3f} {r['samples_per_s']:>10.1f} "
              f"{r['median_step_no_sync_s']:>15.3f} {reduce_ms:>19} {1000 * r['all_reduce_buckets_s']:>21.0f}")
    ok = [r for r in results if "error" not in r]
    if len(ok) >= 2:
        print(f"speed-up {ok[-1]['workers']} vs {ok[0]['workers']} workers: "
              f"{ok[-1]['samples_per_s'] / ok[0]['samples_per_s']:.2f}x")
    with open(args.out, "w") as f:
        json.dump({"arch": args.arch, "batch_per_worker": args.batch_size, "steps": args.steps,
                   "cpu_count": os.cpu_count(), "results": results}, f, indent=1)
    print(f"wrote {os.path.relpath(args.out)}")
    return 0 if len(ok) == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
