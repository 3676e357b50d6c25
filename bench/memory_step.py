"""An unchanged PyTorch training step (bench/train_step.py's) that reports the process's memory at phase boundaries:
python memory_step.py --arch resnet50 --steps 4 (real PyTorch), or through run.py (MindSpore).

Phases (bench/memory_phases.py's docstring): ``start`` (torch imported), ``model`` (model, optimizer, batches made), ``step1`` (after the first step: under
run.py the eager reference step), ``step2`` (under run.py: compile + the first compiled call), ``stepN`` (after the
last step). Each phase: ``rss_mb`` (VmRSS now), ``hwm_mb`` (VmHWM, the peak so far) from /proc/self/status.
Prints one JSON line: {"arch", "phases": [{"phase", "rss_mb", "hwm_mb"}, ...], "losses", "peak_rss_mb"}.
Used by bench/memory_phases.py.
"""
import argparse
import json
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pt_original"))
from resnet import resnet18, resnet50  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memory_phases  # noqa: E402  (its RSS reader; stdlib only at import)


def memory(phase):
    out = memory_phases.memory(phase)
    if os.environ.get("MEMORY_TRIM"):  # diagnosis: what glibc's malloc holds freed (returned by malloc_trim)
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        with open("/proc/self/status") as f:
            out["rss_trimmed_mb"] = round(int([l for l in f if l.startswith("VmRSS")][0].split()[1]) / 1024, 1)
    return out


p = argparse.ArgumentParser()
p.add_argument("--arch", choices=["resnet18", "resnet50"], default="resnet50")
p.add_argument("--batch-size", type=int, default=32)
p.add_argument("--image-size", type=int, default=32)
p.add_argument("--steps", type=int, default=4)
args = p.parse_args()

phases = [memory("start")]
torch.manual_seed(0)
model = (resnet50 if args.arch == "resnet50" else resnet18)(num_classes=10)
optimizer = torch.optim.Adam(model.parameters(), 1e-3, weight_decay=1e-5)
criterion = nn.CrossEntropyLoss()
batches = [(torch.randn(args.batch_size, 3, args.image_size, args.image_size),
            torch.randint(0, 10, (args.batch_size,))) for _ in range(4)]
model.train()
phases.append(memory("model"))
losses = []
for step in range(args.steps):
    x, y = batches[step % len(batches)]
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    if step < 2 or step == args.steps - 1:
        phases.append(memory(f"step{step + 1}"))
print(json.dumps({"arch": args.arch, "phases": phases, "losses": losses,
                  "peak_rss_mb": max(ph["hwm_mb"] for ph in phases)}))
