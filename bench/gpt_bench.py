"""The character GPT's step time in one invocation (issue 31): pt_original/train_gpt.py through run.py (compiled),
the same script under real PyTorch CPU, and the hand-written native MindSpore port of its model and step
(bench/native_gpt.py: ``value_and_grad``, the global-norm clip and AdamWeightDecay in one ``mindspore.jit`` step),
for train_gpt.py's default configuration (2 layers, width 64, 4 heads, context 32, batch 16, one micro-batch).

    .venv/bin/python bench/gpt_bench.py [--iters 200] [--out bench/gpt_results_<stack>.json]
    MINDSPORE=2.5.0.dev20250119 .venv/bin/python bench/gpt_bench.py     # that stack (bench/stack.py)

Per side, the time per iteration is the median over the script's log intervals (``--log-interval 10``: it prints the
milliseconds of each 10 iterations) after the first 3 intervals (compilation and warm-up), divided by 10: what a user
waits per iteration, the batch fetch, the clip and the update included. The native port's figure is its median jit
step (its batches are made outside the timed call), so "ours / native" is an upper bound of our overhead. The
machine is noisy: read the ratios of one invocation, measured with nothing else running (``uptime`` is printed).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import stack  # noqa: E402

SCRIPT = os.path.join(ROOT, "pt_original", "train_gpt.py")
REF_PY = os.path.join(ROOT, ".venv-ref", "bin", "python")
_ITER = re.compile(r"^iter (\d+): loss ([0-9.]+), lr \S+, ([0-9.]+) ms$")


def _per_iteration(stdout: str, interval: int, skip: int = 3):
    """(median ms per iteration over the log intervals after the first ``skip``, the last logged loss)."""
    rows = [(int(m.group(1)), float(m.group(2)), float(m.group(3)))
            for m in (_ITER.match(line) for line in stdout.splitlines()) if m]
    gaps = [ms / interval for _, _, ms in rows[1:]][skip:]
    return (statistics.median(gaps) if gaps else None), (rows[-1][1] if rows else None)


def _run(cmd, cwd):
    start = time.time()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"gpt_bench: {' '.join(cmd[:3])} ... failed:\n{proc.stderr[-2000:]}")
    return proc, time.time() - start


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--out", default="")
    args = p.parse_args()
    interval = 10
    script_args = ["--max-iters", str(args.iters), "--log-interval", str(interval), "--sample-chars", "0",
                   "--eval-interval", str(args.iters * 10), "--data", os.path.join(ROOT, "data", "text", "input.txt")]
    load = os.getloadavg()
    result = {"stack": os.environ.get("MINDSPORE", "") or "default (.venv)", "iters": args.iters,
              "load_average_at_start": [round(x, 2) for x in load], "date": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                                           time.gmtime())}
    with tempfile.TemporaryDirectory() as cwd:
        ours, wall = _run([stack.python(), os.path.join(ROOT, "run.py"), "--original", SCRIPT] + script_args, cwd)
        result["ours_ms"], result["ours_last_loss"] = _per_iteration(ours.stdout, interval)
        result["ours_wall_s"] = round(wall, 1)
        ref, wall = _run([REF_PY, SCRIPT] + script_args, cwd)
        result["pytorch_ms"], result["pytorch_last_loss"] = _per_iteration(ref.stdout, interval)
        result["pytorch_wall_s"] = round(wall, 1)
        native, _ = _run([stack.python(), os.path.join(ROOT, "bench", "native_gpt.py"), "--steps", "60"],
                         os.path.join(ROOT, "bench"))
        result["native_ms"] = json.loads(native.stdout.strip().splitlines()[-1])["median_step_s"] * 1000
    result["ours_over_pytorch"] = result["ours_ms"] / result["pytorch_ms"]
    result["ours_over_native"] = result["ours_ms"] / result["native_ms"]
    result["native_over_pytorch"] = result["native_ms"] / result["pytorch_ms"]
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(f"GPT step ({result['stack']}; load {load[0]:.2f}): ours {result['ours_ms']:.1f} ms, PyTorch CPU "
          f"{result['pytorch_ms']:.1f} ms, native MindSpore {result['native_ms']:.1f} ms; ours/PyTorch "
          f"{result['ours_over_pytorch']:.2f}x, ours/native {result['ours_over_native']:.2f}x, native/PyTorch "
          f"{result['native_over_pytorch']:.2f}x")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
