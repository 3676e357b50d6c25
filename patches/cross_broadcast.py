"""``torch.cross`` / ``Tensor.cross`` / ``torch.linalg.cross`` of inputs of different (broadcastable) shapes, as
PyTorch.

PyTorch broadcasts the two inputs against each other before taking the cross product along ``dim``
(``torch.linalg.cross(a, b)`` with ``a`` of shape (1, 3) and ``b`` (5, 3) is (5, 3)). MindSpore's ``Cross`` kernel
on CPU does not broadcast, and does not refuse either: it returned the (5, 3) result with only its first row
computed and the other rows 0 (op_db's ``cross:s2`` / ``linalg.cross:s2``: 12 of 15 values off, up to 120, and the
gradient as wrong; ``run.py conformance --opinfo``, issue 35), silently.

Here both inputs are broadcast to their common shape (``broadcast_to``, whose gradient sums back over the broadcast
dimensions, as PyTorch's) and MindSpore's kernel takes them, equal in shape; ``dim=None`` (``torch.cross``'s
deprecated default) is then the first dimension of size 3 of the broadcast shape, as PyTorch's. Inputs of equal
shapes go to the kernel unchanged. PyTorch's checks first (``RuntimeError``: a different number of dimensions, a
``dim`` of another length than 3 in either input, which broadcasting must not hide; ``IndexError``: ``dim`` out of
range). Plain functions: compiled in graphs as in PyNative.

Must come after nothing. Replaces: ``torch.cross``, ``torch.Tensor.cross``, ``torch.linalg.cross``.
"""
from __future__ import annotations

from . import Patch, patch_attr

NAME = "cross_broadcast"
# graph code below reads these module globals; set by apply()
ms = cast_to_ms_tensor = cast_to_adapter_tensor = _out_inplace_assign = broadcast_shapes = None


def _cross(input, other, dim):  # noqa: A002 (PyTorch's name)
    x = cast_to_ms_tensor(input)
    y = cast_to_ms_tensor(other)
    dim = _check(x.shape, y.shape, dim)
    if x.shape != y.shape:
        shape = tuple(broadcast_shapes(x.shape, y.shape))
        x = ms.ops.broadcast_to(x, shape)
        y = ms.ops.broadcast_to(y, shape)
    return ms.ops.cross(x, y, dim)


def _check(xs, ys, dim):
    """PyTorch's checks (``aten/src/ATen/native/Cross.cpp``'s messages); the dimension, made non-negative. Shapes
    are known when a graph compiles: there the checks raise at compile time."""
    if len(xs) != len(ys):
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if dim is None:  # torch.cross's deprecated default: the input's first dimension of length 3
        sizes3 = [i for i, n in enumerate(xs) if n == 3]
        if not sizes3:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes3[0]
    if dim < -len(xs) or dim >= len(xs):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-len(xs)}, {len(xs) - 1}], "
                         f"but got {dim})")
    if xs[dim] != 3 or ys[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {xs[dim]} and {ys[dim]}")
    return dim % len(xs)


def cross(input, other, dim=None, *, out=None):  # noqa: A002
    """PyTorch's ``torch.cross``: the cross product of 3-vectors along ``dim`` of the broadcast inputs."""
    return _out_inplace_assign(out, _cross(input, other, dim), "cross")


def linalg_cross(input, other, *, dim=-1, out=None):  # noqa: A002
    """PyTorch's ``torch.linalg.cross``: :func:`cross` with ``dim=-1`` by default."""
    return _out_inplace_assign(out, _cross(input, other, dim), "cross")


def tensor_cross(self, other, dim=None):
    """``Tensor.cross``: :func:`cross` of ``self``."""
    return cast_to_adapter_tensor(_cross(self, other, dim))


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, _out_inplace_assign, broadcast_shapes
    import mindspore
    import mindtorch.torch as torch
    import mindtorch.torch.functional as functional
    import mindtorch.torch.linalg as linalg
    from mindtorch.torch.functional import broadcast_shapes as shapes
    from mindtorch.torch.tensor import Tensor
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    from adapter import backend
    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    _out_inplace_assign = backend.internal("out_inplace_assign")
    broadcast_shapes = shapes
    shared = functional.cross is torch.cross
    patch_attr(torch, "cross", cross)
    if shared:
        patch_attr(functional, "cross", cross)
    patch_attr(linalg, "cross", linalg_cross)
    patch_attr(Tensor, "cross", tensor_cross)


PATCH = Patch(NAME, "torch.cross / Tensor.cross / torch.linalg.cross broadcast their inputs as PyTorch (MindSpore's "
                    "kernel computed the first row only and left the others 0, silently)",
              "post-import", apply,
              replaces=("torch.cross", "torch.functional.cross", "torch.Tensor.cross", "torch.linalg.cross"))
