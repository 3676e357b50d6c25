"""Collectives over MindSpore's communication backend that give exact results on every backend, CPU included.

MindSpore's CPU collective library (``mccl``, measured with mindspore-dev 2.5.0.dev20250119, see ``docs/facts.md``,
"Data parallel on CPU"): ``AllReduce`` supports only ``sum`` on float32/float16; ``AllGather`` works for int64,
float64, float32 (not bool); ``Broadcast`` returns int32 for an int64 input. MindTorch's ``all_reduce`` /
``all_gather`` / ``barrier`` fail there. A collective that fails on one rank leaves the others waiting, so nothing
here tries one primitive and falls back to another: the primitive is chosen from the dtype and the op alone, which
are the same on every rank.

* sum / average of float32/float16: ``AllReduce('sum')`` (average: each rank pre-divides by the world size, as
  PyTorch's DDP does);
* everything else (max, min, product, integer or float64 sums): ``AllGather``, then the reduction computed
  locally over the gathered ``(world, ...)`` stack, identically on every rank (exact for integers);
* broadcast of float32: ``Broadcast``; of other dtypes: ``AllGather`` and the source rank's slice (exact);
* barrier: a one-element ``AllReduce`` waited on.

All functions take and return MindSpore tensors (MindTorch tensors are MindSpore tensors) and act on the default
(world) group unless a group name is given; every rank of the group must call them in the same order.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np
import mindspore as ms
from mindspore import ops

from adapter import backend

OPS = ("sum", "avg", "max", "min", "product")
_ALLREDUCE_DTYPES = (ms.float32, ms.float16)


def world_group() -> str:
    """The name of the world group of the initialized backend (``mccl_world_group`` on CPU)."""
    from mindspore.communication.management import GlobalComm
    return GlobalComm.WORLD_COMM_GROUP


def group_size(group: Optional[str] = None) -> int:
    from mindspore.communication import get_group_size
    return get_group_size(group or world_group())


def group_rank(group: Optional[str] = None) -> int:
    from mindspore.communication import get_rank
    return get_rank(group or world_group())


def _wire_dtype(dtype):
    """The dtype a tensor travels as through AllGather on this device (exact round trip for the values it holds)."""
    target = ms.get_context("device_target")
    if dtype == ms.bool_:
        return ms.int32 if target == "CPU" else ms.int8
    if target == "Ascend" and dtype in (ms.int64, ms.float64):  # HCCL: int8, int32, fp16, fp32, bf16 (as MindTorch)
        return ms.int32 if dtype == ms.int64 else ms.float32
    return dtype


def _as_ms(x):
    from mindtorch.torch.tensor import cast_to_ms_tensor
    return cast_to_ms_tensor(x)


def all_gather(x, group: Optional[str] = None):
    """Every rank's ``x`` stacked: shape ``(world, *x.shape)``, dtype of ``x`` (every rank must pass the same shape).

    Raises:
        RuntimeError: from MindSpore if the backend is not initialized.
    """
    group = group or world_group()
    x = _as_ms(x)
    shape, dtype = tuple(x.shape), x.dtype
    wire = _wire_dtype(dtype)
    flat = x.reshape((1, -1)) if x.ndim else x.reshape((1, 1))
    if wire != dtype:
        flat = flat.astype(wire)
    out = backend.cached_primitive(ops.AllGather, group)(flat)  # (world, numel)
    if wire != dtype:
        out = out.astype(dtype)
    return out.reshape((group_size(group),) + shape)


def all_reduce(x, op: str = "sum", group: Optional[str] = None):
    """The reduction ``op`` (one of :data:`OPS`) of every rank's ``x``: same shape and dtype as ``x``.

    ``avg`` of an integer tensor truncates toward zero (as NCCL's ``ncclAvg``).

    Raises:
        ValueError: unknown ``op``.
    """
    if op not in OPS:
        raise ValueError(f"unsupported reduce op {op!r}; supported: {', '.join(OPS)}")
    group = group or world_group()
    x = _as_ms(x)
    world = group_size(group)
    if op in ("sum", "avg") and x.dtype in _ALLREDUCE_DTYPES:
        if op == "avg":
            x = x / ms.Tensor(world, x.dtype)
        return backend.cached_primitive(ops.AllReduce, "sum", group)(x)
    stacked = all_gather(x, group)
    if x.dtype == ms.bool_:
        stacked = stacked.astype(ms.int32)
    if op in ("sum", "avg"):
        out = stacked.sum(axis=0)
        if op == "avg":
            out = _trunc_div(out, world)
    elif op == "max":
        out = stacked.max(axis=0)
    elif op == "min":
        out = stacked.min(axis=0)
    else:
        out = stacked.prod(axis=0)
    return out.astype(x.dtype)


def _trunc_div(x, n: int):
    if x.dtype in (ms.float64, ms.float32, ms.float16, ms.bfloat16):
        return x / n
    v = x.asnumpy()  # integers (metrics, counts): exact in numpy; MindSpore's CPU Trunc has no int64 kernel
    return ms.Tensor((np.abs(v) // n) * np.sign(v)).astype(x.dtype)


def broadcast(x, src: int, group: Optional[str] = None):
    """Rank ``src``'s ``x`` on every rank (same shape and dtype as ``x``)."""
    group = group or world_group()
    x = _as_ms(x)
    if x.dtype == ms.float32:
        return backend.cached_primitive(ops.Broadcast, src, group)((x,))[0]
    return all_gather(x, group)[src]


def barrier(group: Optional[str] = None) -> None:
    """Return once every rank of the group has called it."""
    group = group or world_group()
    out = backend.cached_primitive(ops.AllReduce, "sum", group)(ms.Tensor([1.0], ms.float32))
    out.asnumpy()


def broadcast_tensors(tensors: Sequence, src: int = 0, group: Optional[str] = None) -> List:
    """Rank ``src``'s values of ``tensors`` (a list of same-order tensors on every rank), packed into one flat
    transfer per dtype (float32 by ``Broadcast``, others by ``AllGather``: BatchNorm's int64 ``num_batches_tracked``
    of every layer in one transfer). Returns new tensors, in order."""
    group = group or world_group()
    out: List = [None] * len(tensors)
    by_dtype: dict = {}
    for i, t in enumerate(tensors):
        by_dtype.setdefault(_as_ms(t).dtype, []).append(i)
    for dtype, index in by_dtype.items():
        parts = [_as_ms(tensors[i]).reshape(-1) for i in index]
        flat = ops.cat(parts) if len(parts) > 1 else parts[0]
        flat = broadcast(flat, src, group)
        _unpack(flat, [tensors[i] for i in index], index, out)
    return out


def _unpack(flat, like: Sequence, index: Sequence[int], out: List) -> None:
    sizes = [int(np.prod(t.shape)) for t in like]
    parts = ops.split(flat, sizes) if len(sizes) > 1 else (flat,)
    for i, part, t in zip(index, parts, like):
        out[i] = part.reshape(tuple(t.shape))


class GradAllReduce(ms.nn.Cell):
    """Average gradients over the workers: ``grads[i] -> mean over ranks of grads[i]`` where ``mask[i]``.

    The masked gradients are cast to float32, packed into flat buckets of at most ``bucket_mb`` MiB (PyTorch DDP's
    ``bucket_cap_mb``; one bucket holds at least one tensor), pre-divided by the world size and summed by one
    ``AllReduce('sum')`` per bucket (the collective ``mindspore.nn.DistributedGradReducer`` uses; measured on CPU,
    one flat AllReduce per bucket costs less than its per-tensor AllReduces in a graph), then unpacked and cast
    back. Works in PyNative (the eager bridge) and inside a graph (the compiled step).

    Args:
        shapes: the shape of every gradient, in order (tuple of tuples of ints).
        mask: which gradients to average (others pass through unchanged).
        world: number of workers (the divisor).
        bucket_mb: bucket size cap in MiB.
        group: communication group name (default: world).
    Call:
        ``cell(grads)``: ``grads`` a tuple of tensors matching ``shapes``; returns a tuple of the same shapes/dtypes.
    """

    def __init__(self, shapes: Sequence[Tuple[int, ...]], mask: Sequence[bool], world: int, bucket_mb: float = 25.0,
                 group: Optional[str] = None):
        super().__init__(auto_prefix=False)
        self.mask = tuple(bool(m) for m in mask)
        self.scale = 1.0 / world
        self.allreduce = ops.AllReduce("sum", group or world_group())
        cap = int(bucket_mb * 1024 * 1024) // 4
        buckets, current, filled = [], [], 0
        for i, shape in enumerate(shapes):
            if not self.mask[i]:
                continue
            n = int(np.prod(shape))
            if current and filled + n > cap:
                buckets.append(tuple(current))
                current, filled = [], 0
            current.append(i)
            filled += n
        if current:
            buckets.append(tuple(current))
        self.buckets = tuple(buckets)
        self.sizes = tuple(tuple(int(np.prod(shapes[i])) for i in b) for b in buckets)
        position = {}
        for b in buckets:
            for i in b:
                position[i] = len(position)
        self.position = tuple(position.get(i, -1) for i in range(len(shapes)))

    def construct(self, grads):
        reduced = ()
        for b in range(len(self.buckets)):
            index = self.buckets[b]
            flat = ops.cat([grads[i].astype(ms.float32).reshape(-1) for i in index])
            flat = self.allreduce(flat * self.scale)
            parts = ops.split(flat, self.sizes[b])
            for k in range(len(index)):
                g = grads[index[k]]
                reduced = reduced + (parts[k].reshape(g.shape).astype(g.dtype),)
        out = ()
        for i in range(len(grads)):
            if self.mask[i]:
                out = out + (reduced[self.position[i]],)
            else:
                out = out + (grads[i],)
        return out
