"""Idioms of pytorch/examples distributed (ddp-tutorial-series, ddp): ``init_process_group`` from the environment
torchrun sets (RANK, WORLD_SIZE, MASTER_ADDR/PORT), or ``torch.multiprocessing.spawn(main, args, nprocs)`` with the
rank as first argument and an explicit ``init_method`` (``--spawn``); ``DistributedDataParallel`` around the model
(gradients averaged over ranks), ``DistributedSampler`` with ``set_epoch``, a checkpoint saved by rank 0 from
``model.module.state_dict()``, ``dist.barrier()``, ``destroy_process_group()``.

Each rank prints its losses (``rank<R> loss <step>``); both ranks start from the same numpy weights, so after
DDP's averaging the weights stay equal on every rank. Runs on CPUs with the gloo backend.
"""
# corpus: {"run_opts": ["--nproc-per-node", "2"], "torchrun": 2}
import argparse
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from _idiom_common import metric, numpy_init, report


def dataset():
    rng = np.random.RandomState(60)
    x = rng.standard_normal((64, 20)).astype(np.float32)
    y = (x @ rng.standard_normal((20, 1)).astype(np.float32)).astype(np.float32)
    return TensorDataset(torch.from_numpy(x), torch.from_numpy(y))


def train(rank, world_size, epochs):
    model = DDP(numpy_init(nn.Linear(20, 1), 61))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = dataset()
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank, shuffle=False)
    loader = DataLoader(data, batch_size=8, sampler=sampler, shuffle=False)
    step = 0
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for source, target in loader:
            optimizer.zero_grad()
            loss = F.mse_loss(model(source), target)
            loss.backward()
            optimizer.step()
            report(f"rank{rank}", step, loss.item())
            step += 1
    if rank == 0:
        torch.save({"MODEL_STATE": model.module.state_dict(), "EPOCHS_RUN": epochs}, "checkpoint.pt")
    dist.barrier()
    if rank == 0:
        ckpt = torch.load("checkpoint.pt")
        metric("rank0", "weight_sum", ckpt["MODEL_STATE"]["weight"].sum().item())


def spawned(rank, world_size, epochs, port):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size)
    train(rank, world_size, epochs)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--spawn", type=int, default=0, help="spawn this many processes (instead of torchrun's)")
    p.add_argument("--port", type=int, default=29517)
    args = p.parse_args()
    if args.spawn:
        mp.spawn(spawned, args=(args.spawn, args.epochs, args.port), nprocs=args.spawn)
        return
    dist.init_process_group(backend="gloo")
    train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args.epochs)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
