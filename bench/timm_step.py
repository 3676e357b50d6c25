"""An unchanged PyTorch training step of one timm model on random data, for timing (issue 34):

    .venv/bin/python run.py --explain --original bench/timm_step.py --model resnet18 [--steps 8]   # MindSpore
    .venv-ref/bin/python bench/timm_step.py --model resnet18 [--steps 8]                         # PyTorch 2.13

``timm.create_model(MODEL, num_classes=10, pretrained=False)`` with timm's own initialisation (``torch.manual_seed(0)``;
``img_size`` = ``--image-size`` for the ViT models, whose default is 224), ``timm.optim.create_optimizer_v2`` SGD
(lr 0.01, momentum 0.9, weight decay 1e-4), cross-entropy, batch ``--batch-size`` (32) of 3 x 32 x 32, four random
batches cycled. Prints one JSON line: {"model", "batch", "image_size", "first_step_s", "median_step_s" (median of
the steps after the first two: under run.py the first step is the eager reference step and the second compiles),
"step_s": [...], "losses", "peak_rss_mb", "onednn_max_cpu_isa"}. The driver is bench/timm_bench.py.
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

if "--reference" in sys.argv:  # real PyTorch: torchvision (which timm imports) needs its two detection ops declared
    sys.argv.remove("--reference")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from app.tools.parity.reference import declare_torchvision_ops
    declare_torchvision_ops()

import timm  # noqa: E402
from timm.optim import create_optimizer_v2  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--model", default="resnet18")
p.add_argument("--batch-size", type=int, default=32)
p.add_argument("--image-size", type=int, default=32)
p.add_argument("--steps", type=int, default=8)
args = p.parse_args()

torch.manual_seed(0)
kwargs = {"img_size": args.image_size} if args.model.startswith(("vit_", "deit_")) else {}
model = timm.create_model(args.model, num_classes=10, pretrained=False, **kwargs)
optimizer = create_optimizer_v2(model, "sgd", lr=0.01, momentum=0.9, weight_decay=1e-4)
criterion = nn.CrossEntropyLoss()
batches = [(torch.randn(args.batch_size, 3, args.image_size, args.image_size),
            torch.randint(0, 10, (args.batch_size,))) for _ in range(4)]
model.train()
times, losses = [], []
for step in range(args.steps):
    x, y = batches[step % len(batches)]
    t0 = time.perf_counter()
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())  # .item() waits for the step to finish
    times.append(time.perf_counter() - t0)
print(json.dumps({"model": args.model, "batch": args.batch_size, "image_size": args.image_size,
                  "first_step_s": times[0], "median_step_s": statistics.median(times[2:]),
                  "step_s": times, "losses": losses,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA")}))
