"""Per-op CPU time of eager tensor code, ours (``run.py --mode pynative``) against PyTorch CPU, from one invocation
(issue 31 section 4: the eager parts of a GPT script, its ``get_batch`` among them).

    .venv/bin/python bench/eager_ops.py [--reps 300] [--only NAME ...] [--without PATCH ...]
    .venv/bin/python run.py --mode pynative --original bench/eager_ops.py --worker --only NAME --profile NAME

Each op is a line a training script runs outside the compiled step (nanoGPT-style ``get_batch``: a 1-D int64 tensor
sliced with Python ints, ``torch.stack`` of those slices, ``torch.randint``; the loss's ``.item()``; ``tensor *
float``; ``.tolist()``) or inside an eager step (``view``/``transpose``; a ``Linear`` call, under ``no_grad``).
The same file is the timed script: it runs under ``run.py --mode pynative`` (all patches installed) and under
``.venv-ref/bin/python`` (PyTorch CPU) in subprocesses, one after the other; each op runs ``--reps`` times after 20
untimed ones, and the round with the lowest CPU time of 7 is kept (a loaded machine only adds to it). Prints, per
op, microseconds of process CPU time (``time.process_time``, all threads) and of wall time per call, ours and
PyTorch's, and their ratios; ``--without PATCH ...`` adds a run of ours with those patches disabled
(``ADAPTER_DISABLE_PATCHES``), the before of a fast path. ``--profile NAME`` (``--worker`` only) prints cProfile's
top functions of that op under ours on stderr. CPU time, not wall: the machine is shared; compare ratios within one
invocation.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _ops():
    """name -> a no-argument callable running one op (its inputs made once, here)."""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    data = torch.randint(0, 65, (100000,), dtype=torch.long)
    block, batch = 64, 8
    ix = torch.randint(len(data) - block, (batch,))
    starts = ix.tolist()
    rows = [data[i:i + block] for i in starts]
    x = torch.randn(8, 64, 128)
    y = torch.randn(8, 64, 128)
    loss = (x * y).sum()
    small = torch.randn(8)
    linear = nn.Linear(128, 128)

    def get_batch():
        ix = torch.randint(len(data) - block, (batch,))
        a = torch.stack([data[i:i + block] for i in ix.tolist()])
        b = torch.stack([data[i + 1:i + 1 + block] for i in ix.tolist()])
        return a, b

    return {
        "slice_1d_long": lambda: data[starts[0]:starts[0] + block],
        "stack_8_slices": lambda: torch.stack(rows),
        "randint_8": lambda: torch.randint(len(data) - block, (batch,)),
        "get_batch": get_batch,
        "tensor_mul_float": lambda: x * 0.5,
        "tensor_add_tensor": lambda: x + y,
        "item": lambda: loss.item(),
        "tolist_8": lambda: small.tolist(),
        "view_transpose": lambda: x.view(8, 64, 4, 32).transpose(1, 2),
        "linear_call_no_grad": lambda: _no_grad(torch, linear, x),
    }


def _no_grad(torch, module, x):
    with torch.no_grad():  # a module call with grad on would open the eager bridge's recording (a step's forward)
        return module(x)


def measure(reps, only, profile):
    import torch
    ops = _ops()
    results = {}
    for name, op in ops.items():
        if only and name not in only:
            continue
        for _ in range(20):
            op()
        rounds = []
        for _ in range(7):
            start, start_wall = time.process_time(), time.perf_counter()
            for _ in range(reps):
                op()
            rounds.append(((time.process_time() - start) / reps * 1e6, (time.perf_counter() - start_wall) / reps * 1e6))
        results[name] = min(rounds)  # (CPU us, wall us) of the round with the lowest CPU time: load only adds
        if profile == name:
            import cProfile
            import pstats
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(reps):
                op()
            prof.disable()
            pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(25)
    print(json.dumps(results))


def _run(cmd, env=None):
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr[-2000:]}")
    return json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--profile", metavar="NAME", help="with --worker: cProfile op NAME (printed on stderr)")
    parser.add_argument("--without", metavar="PATCH", nargs="*", default=[],
                        help="also run ours with these patches disabled (ADAPTER_DISABLE_PATCHES): before/after")
    parser.add_argument("--worker", action="store_true", help="time the ops here")
    args = parser.parse_args()
    if args.worker:
        return measure(args.reps, set(args.only), args.profile)
    me, rest = os.path.abspath(__file__), ["--reps", str(args.reps), "--worker"] + (
        ["--only", *args.only] if args.only else [])
    ours_cmd = [sys.executable, os.path.join(ROOT, "run.py"), "--mode", "pynative", "--original", me, *rest]
    ours = _run(ours_cmd)
    before = _run(ours_cmd, dict(os.environ, ADAPTER_DISABLE_PATCHES=",".join(args.without))) if args.without else {}
    ref = _run([os.path.join(ROOT, ".venv-ref", "bin", "python"), me, *rest])
    print(f"{'op':<20} {'ours CPU us':>11} {'PyTorch':>8} {'ratio':>7}   "
          f"{'ours wall us':>12} {'PyTorch':>8} {'ratio':>7}"
          + (f"   {'without CPU us':>14} {'ratio':>7}" if before else ""))
    for name, (cpu, wall) in ours.items():
        ref_cpu, ref_wall = ref[name]
        line = (f"{name:<20} {cpu:11.1f} {ref_cpu:8.1f} {cpu / ref_cpu:7.1f}   {wall:12.1f} {ref_wall:8.1f} "
                f"{wall / ref_wall:7.1f}")
        if before:
            line += f"   {before[name][0]:14.1f} {before[name][0] / ref_cpu:7.1f}"
        print(line)
    print("(per call; process CPU time of all threads, and wall time, of the round with the lowest CPU time of 7"
          + (f"; 'without': ours with ADAPTER_DISABLE_PATCHES={','.join(args.without)}" if before else "") + ")")


if __name__ == "__main__":
    main()
