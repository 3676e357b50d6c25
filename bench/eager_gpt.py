"""Eager (PyNative) step time of a small GPT against real PyTorch CPU, from one invocation (issue 31 section 4).

    .venv/bin/python bench/eager_gpt.py [--steps 12] [--warmup 3]

Recipe (CPU): token + position embeddings, 2 blocks of LayerNorm -> causal self-attention (4 heads, q/k/v
``view(B, T, nh, hs).transpose(1, 2)``, ``F.scaled_dot_product_attention(is_causal=True)``) -> LayerNorm -> MLP
(4x, GELU), a final LayerNorm and a tied head; n_embd 128, block 64, batch 8, vocab 65; AdamW (lr 3e-4, weight decay
0.1), cross-entropy. The same file is the training script: run under ``run.py --mode pynative`` (every step on the
eager bridge) and under ``.venv-ref/bin/python`` (PyTorch 2.13 CPU) in subprocesses, one after the other. Each
prints the median wall and CPU (process, all threads) seconds of its timed steps (after ``--warmup`` untimed ones), and
the median CPU seconds of each phase (forward, ``zero_grad``, ``backward``, ``step``, ``item``; PyNative on CPU runs
synchronously here, so a phase's ops are paid in it); this prints both, the ratio and the phases. ``--profile PATH``
(with ``--worker``) writes cProfile's record of the timed steps.
Timings on a shared machine are noisy: compare the ratio from one invocation (``--repeat N``: N alternating runs of
each, the lowest-CPU run of each side kept)."""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def train(steps, warmup, profile=None):
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    vocab, block, n_embd, n_head, n_layer, batch = 65, 64, 128, 4, 2, 8

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
            self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
            self.fc, self.proj = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            b, t, c = x.size()
            q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
            q = q.view(b, t, n_head, c // n_head).transpose(1, 2)
            k = k.view(b, t, n_head, c // n_head).transpose(1, 2)
            v = v.view(b, t, n_head, c // n_head).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.proj(F.gelu(self.fc(self.ln_2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, n_embd), nn.Embedding(block, n_embd)
            self.h = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.head = nn.Linear(n_embd, vocab, bias=False)
            self.wte.weight = self.head.weight

        def forward(self, idx, targets):
            pos = torch.arange(0, idx.size(1), dtype=torch.long)
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.h:
                x = blk(x)
            logits = self.head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))

    rng = np.random.RandomState(0)
    model = GPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    data = torch.from_numpy(rng.randint(0, vocab, (steps + warmup, batch, block + 1)).astype(np.int64))
    times, cpu = [], []
    phases = {name: [] for name in ("forward", "zero_grad", "backward", "step", "item")}
    profiler = None
    for i in range(steps + warmup):
        if profile and i == warmup:
            import cProfile
            profiler = cProfile.Profile()
            profiler.enable()
        start, start_cpu = time.perf_counter(), time.process_time()
        loss = model(data[i, :, :-1], data[i, :, 1:])
        marks = [time.process_time()]
        optimizer.zero_grad()
        marks.append(time.process_time())
        loss.backward()
        marks.append(time.process_time())
        optimizer.step()
        marks.append(time.process_time())
        loss_value = loss.item()
        if i >= warmup:
            times.append(time.perf_counter() - start)
            end_cpu = time.process_time()
            cpu.append(end_cpu - start_cpu)
            for name, a, b in zip(phases, [start_cpu] + marks, marks + [end_cpu]):
                phases[name].append(b - a)
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile)
    print(json.dumps({"median_s": sorted(times)[len(times) // 2], "median_cpu_s": sorted(cpu)[len(cpu) // 2],
                      "phases_median_cpu_s": {k: sorted(v)[len(v) // 2] for k, v in phases.items()},
                      "last_loss": loss_value}))


def _run(cmd):
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr[-2000:]}")
    return json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help="run the training loop here (the timed script)")
    parser.add_argument("--profile", metavar="PATH", help="with --worker: cProfile the timed steps into PATH")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run ours and PyTorch alternately this many times each and keep each side's run with the "
                             "lowest median CPU time (a loaded machine inflates both, unevenly)")
    args = parser.parse_args()
    if args.worker:
        return train(args.steps, args.warmup, args.profile)
    me, steps = os.path.abspath(__file__), ["--steps", str(args.steps), "--warmup", str(args.warmup), "--worker"]
    runs = {"ours": [], "ref": []}
    for _ in range(max(1, args.repeat)):
        runs["ours"].append(_run([sys.executable, os.path.join(ROOT, "run.py"), "--mode", "pynative", "--original", me,
                                  *steps]))
        runs["ref"].append(_run([os.path.join(ROOT, ".venv-ref", "bin", "python"), me, *steps]))
    ours, ref = (min(runs[side], key=lambda r: r["median_cpu_s"]) for side in ("ours", "ref"))
    print(f"eager GPT step (n_layer 2, n_head 4, n_embd 128, block 64, batch 8, AdamW): run.py --mode pynative "
          f"{ours['median_s']:.4f} s, PyTorch CPU {ref['median_s']:.4f} s, "
          f"ratio {ours['median_s'] / ref['median_s']:.2f}x; "
          f"CPU seconds (all threads): {ours['median_cpu_s']:.4f} vs {ref['median_cpu_s']:.4f}, ratio "
          f"{ours['median_cpu_s'] / ref['median_cpu_s']:.2f}x")
    phases = ours["phases_median_cpu_s"]
    print("phase medians, CPU ms (ours / PyTorch): " + ", ".join(
        f"{k} {1e3 * v:.1f} / {1e3 * ref['phases_median_cpu_s'][k]:.1f}" for k, v in phases.items()))


if __name__ == "__main__":
    main()
