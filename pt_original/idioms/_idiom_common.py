"""Helpers shared by the idiom scripts (plain PyTorch; written for this project).

Both frameworks must start from the same weights and see the same data, so that the losses the scripts print can be
compared step by step with those recorded under real PyTorch: weights and data are numpy draws, never torch's
generator (whose streams differ between PyTorch and MindSpore).
"""
import sys

import numpy as np
import torch


def numpy_init(model, seed):
    """Overwrite every parameter of ``model`` with a numpy draw: uniform in +-1/sqrt(fan_in) (fan_in: the product of
    all dims but the first; 1 for a vector), the scale of PyTorch's default Linear/Conv init. Buffers are kept."""
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            fan_in = int(np.prod(p.shape[1:])) if p.dim() > 1 else max(p.shape[0], 1)
            bound = 1.0 / np.sqrt(fan_in)
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)).to(p.dtype))
    return model


def _line(text):
    """``text`` and its newline in one write, flushed: processes sharing one stdout (ranks) never split a line
    (``print`` writes the text and the end separately)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def report(section, step, loss):
    """One line the harness reads: ``<section> loss <step>: <value>``."""
    _line(f"{section} loss {step}: {float(loss):.8g}")


def metric(section, name, value):
    """One line the harness reads: ``<section> <name> = <value>``."""
    _line(f"{section} {name} = {float(value):.8g}")


def write_idx(folder, prefix, images, labels):
    """``images`` (N, H, W) uint8 and ``labels`` (N,) as MNIST's raw IDX files ``<prefix>-images-idx3-ubyte`` and
    ``<prefix>-labels-idx1-ubyte`` (big-endian header: magic 2051 / 2049, then the dims)."""
    import os
    import struct
    os.makedirs(folder, exist_ok=True)
    n, h, w = images.shape
    with open(os.path.join(folder, f"{prefix}-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, h, w) + images.astype(np.uint8).tobytes())
    with open(os.path.join(folder, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 2049, n) + labels.astype(np.uint8).tobytes())


def digits(n, seed, size=28):
    """``n`` synthetic 'digit' images (uint8, size x size) whose class (0-9) is a bright bar at a class-dependent
    row band, plus noise: learnable in a few steps."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, n)
    images = rng.randint(0, 60, (n, size, size))
    band = size // 10
    for i, c in enumerate(labels):
        images[i, c * band:(c + 1) * band, 2:size - 2] += 180
    return np.clip(images, 0, 255).astype(np.uint8), labels
