"""An unchanged torchrun-style DDP training step on random data, for timing data parallelism:

    torchrun --nproc-per-node N ddp_train_step.py        (here: run.py --nproc-per-node N --original ...)

ResNet18 (pt_original/resnet.py), batch 32 per worker, 3x32x32, Adam, as bench/train_step.py. Times ``--steps``
steady-state steps after ``--warmup`` (the first step is eager, the second compiles), first with gradients averaged
(DDP as usual), then the same steps under ``ddp.no_sync()`` (no all-reduce), and ``dist.all_reduce`` of the
gradients' volume in 25 MB buckets (DDP's ``bucket_cap_mb``) with both workers starting together. Rank 0 prints one line ``BENCH_DDP {json}``.
"""
import argparse
import contextlib
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pt_original"))
from resnet import resnet18, resnet50  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--arch", choices=["resnet18", "resnet50"], default="resnet18")
p.add_argument("--batch-size", type=int, default=32, help="per worker")
p.add_argument("--image-size", type=int, default=32)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--warmup", type=int, default=3)
args = p.parse_args()

dist.init_process_group(backend="nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(rank)
model = (resnet50 if args.arch == "resnet50" else resnet18)(num_classes=10)
ddp = DDP(model, device_ids=[int(os.environ["LOCAL_RANK"])] if torch.cuda.is_available() else None)
optimizer = torch.optim.Adam(ddp.parameters(), 1e-3, weight_decay=1e-5)
criterion = nn.CrossEntropyLoss()
batches = [(torch.randn(args.batch_size, 3, args.image_size, args.image_size),
            torch.randint(0, 10, (args.batch_size,))) for _ in range(4)]
ddp.train()


def run(n, sync):
    times = []
    for step in range(n):
        x, y = batches[step % len(batches)]
        t0 = time.perf_counter()
        with contextlib.nullcontext() if sync else ddp.no_sync():
            optimizer.zero_grad()
            loss = criterion(ddp(x), y)
            loss.backward()
            optimizer.step()
        loss.item()  # waits for the step
        times.append(time.perf_counter() - t0)
    return times


synced = run(args.warmup + args.steps, sync=True)[args.warmup:]
local = run(args.warmup + args.steps, sync=False)[args.warmup:]
# the gradients' volume all-reduced in DDP's 25 MB buckets, both workers starting together
flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
buckets = torch.split(flat, 25 * 1024 * 1024 // 4)
reduce_s = []
for _ in range(args.steps):
    dist.barrier()
    t0 = time.perf_counter()
    for bucket in buckets:
        dist.all_reduce(bucket)
    bucket.numpy()
    reduce_s.append(time.perf_counter() - t0)
if rank == 0:
    print("BENCH_DDP " + json.dumps({
        "arch": args.arch, "world": world, "batch_per_worker": args.batch_size, "image_size": args.image_size,
        "median_step_s": statistics.median(synced), "median_step_no_sync_s": statistics.median(local),
        "step_s": synced, "step_no_sync_s": local, "grad_numel": int(flat.numel()),
        "all_reduce_buckets_s": statistics.median(reduce_s)}), flush=True)
dist.destroy_process_group()
