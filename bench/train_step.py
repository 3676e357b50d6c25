"""An unchanged PyTorch training step on random data, for timing: python train_step.py --arch resnet50 --steps 8.

Prints one JSON line: {"arch", "batch", "image_size", "first_step_s", "median_step_s", "step_s": [...],
"step_cpu_s": [...] (process CPU seconds of each step, all threads), "losses", "peak_rss_mb"}.
``--amp``: the same step with autocast(float16) + GradScaler (a disabled scaler and region otherwise, which cost nothing).
Run it through run.py (MindSpore) or with real PyTorch; the model is pt_original/resnet.py.
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pt_original"))
from resnet import resnet18, resnet50  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--arch", choices=["resnet18", "resnet50"], default="resnet50")
p.add_argument("--batch-size", type=int, default=32)
p.add_argument("--image-size", type=int, default=32)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--amp", action="store_true", help="the PyTorch AMP recipe: autocast(float16) + GradScaler")
args = p.parse_args()

torch.manual_seed(0)
model = (resnet50 if args.arch == "resnet50" else resnet18)(num_classes=10)
optimizer = torch.optim.Adam(model.parameters(), 1e-3, weight_decay=1e-5)
criterion = nn.CrossEntropyLoss()
scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
# Four random batches with random labels, cycled: a realistic loss for longer. (One fixed batch is memorized within
# ~5 steps, loss -> 1e-3, which is no longer a typical training step.)
batches = [(torch.randn(args.batch_size, 3, args.image_size, args.image_size),
            torch.randint(0, 10, (args.batch_size,))) for _ in range(4)]
model.train()
times, cpu, losses = [], [], []
for step in range(args.steps):
    x, y = batches[step % len(batches)]
    t0, c0 = time.perf_counter(), time.process_time()
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.item())  # .item() waits for the step to finish
    times.append(time.perf_counter() - t0)
    cpu.append(time.process_time() - c0)
print(json.dumps({"arch": args.arch, "batch": args.batch_size, "image_size": args.image_size,
                  "first_step_s": times[0], "median_step_s": statistics.median(times[1:]),
                  "step_s": times, "step_cpu_s": cpu, "losses": losses,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA")}))
