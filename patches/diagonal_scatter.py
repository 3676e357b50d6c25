"""``torch.diagonal_scatter`` / ``Tensor.diagonal_scatter`` with a negative ``offset``, as PyTorch.

MindTorch 0.4.0 scatters ``src`` along ``dim2`` at column indices ``arange(n) + offset``, padding ``src`` with zeros
in front for a negative offset: those first indices are negative, MindSpore's ``tensor_scatter_elements`` wraps them
around, and the zeros overwrote elements of the last columns of the first rows (op_db's ``diagonal_scatter:s2``,
``diagonal_scatter(x, src, -2)`` of a 10 x 10 ``x``: 2 of 100 values off, up to 4.2, and the gradient likewise;
PyNative and compiled; ``run.py conformance --opinfo``, issue 35), silently.

PyTorch 2.13: the result is a copy of ``input`` whose diagonal ``input.diagonal(offset, dim1, dim2)`` is replaced by
``src`` (which must have that diagonal's shape: ``RuntimeError`` otherwise). Here ``dim1`` / ``dim2`` are moved
last; a mask ``col - row == offset`` of the (rows, columns) plane picks the diagonal; each row ``r`` takes ``src``'s
element ``r - max(-offset, 0)`` (gathered, clamped: rows without a diagonal element are masked out); the result is
``select(mask, that, input)``, moved back. The gradients are PyTorch's (the input's: the output gradient off the
diagonal; ``src``'s: the output gradient's diagonal), in PyNative and compiled graphs (all shapes are static).

Must come after nothing. Replaces: ``torch.diagonal_scatter``, ``torch.Tensor.diagonal_scatter``.
"""
from __future__ import annotations

from . import Patch, patch_attr

NAME = "diagonal_scatter"
ms = cast_to_ms_tensor = cast_to_adapter_tensor = None  # set by apply(); graph code reads module globals


def _diagonal_length(rows, cols, offset):
    if offset >= 0:
        return max(min(rows, cols - offset), 0)
    return max(min(rows + offset, cols), 0)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):  # noqa: A002 (PyTorch's names)
    """PyTorch's ``torch.diagonal_scatter`` (module docstring): the input's shape and dtype."""
    x = cast_to_ms_tensor(input)
    s = cast_to_ms_tensor(src)
    nd = x.ndim
    d1, d2 = dim1 % nd, dim2 % nd
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    rest = [d for d in range(nd) if d not in (d1, d2)]
    moved = ms.ops.transpose(x, tuple(rest) + (d1, d2))
    rows, cols = x.shape[d1], x.shape[d2]
    length = _diagonal_length(rows, cols, offset)
    want = tuple(x.shape[d] for d in rest) + (length,)
    if tuple(s.shape) != want:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(s.shape)}, "
                           f"slice size = {list(want)}")
    if length == 0:
        return cast_to_adapter_tensor(x + s.sum().astype(x.dtype) * 0)
    row = ms.ops.arange(rows).reshape(rows, 1)
    col = ms.ops.arange(cols).reshape(1, cols)
    mask = (col - row) == offset
    pick = ms.ops.clip(ms.ops.arange(rows) - max(-offset, 0), 0, length - 1)
    values = ms.ops.gather(s.astype(x.dtype), pick, s.ndim - 1)
    values = ms.ops.broadcast_to(values.expand_dims(-1), moved.shape)
    out = ms.ops.select(ms.ops.broadcast_to(mask, moved.shape), values, moved)
    back = [0] * nd
    for position, d in enumerate(tuple(rest) + (d1, d2)):
        back[d] = position
    return cast_to_adapter_tensor(ms.ops.transpose(out, tuple(back)))


def tensor_diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    """``Tensor.diagonal_scatter``: :func:`diagonal_scatter` of ``self``."""
    return diagonal_scatter(self, src, offset, dim1, dim2)


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor
    import mindspore
    import mindtorch.torch as torch
    from mindtorch.torch.tensor import Tensor
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    patch_attr(torch, "diagonal_scatter", diagonal_scatter)
    patch_attr(Tensor, "diagonal_scatter", tensor_diagonal_scatter)


PATCH = Patch(NAME, "torch.diagonal_scatter / Tensor.diagonal_scatter with a negative offset as PyTorch (MindTorch's "
                    "wrapped-around indices overwrote 2 elements of the last columns, silently)", "post-import", apply,
              replaces=("torch.diagonal_scatter", "torch.Tensor.diagonal_scatter"))
