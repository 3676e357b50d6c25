"""``Tensor.kthvalue`` / ``torch.kthvalue`` in the input's own dtype with PyTorch's result shapes, and ``torch.mode`` /
``Tensor.mode`` (MindTorch: missing, ``AttributeError``).

MindTorch 0.4.0's ``kthvalue`` cast every dtype but float16/float32/int32 to float32 before MindSpore's ``TopK``:
float64 values came back rounded (``[1.123456789012345, ...].kthvalue(1)`` 1.1234568357467651) and int64 values above
2**24 wrong, silently; and it ``squeeze()``-d every size-1 dimension, so ``kthvalue(x of shape (1, 5), 4, dim=1)``
gave a 0-d result where PyTorch's has shape ``(1,)`` (``keepdim=True``: ``(1,)`` for ``(1, 1)``). Here: MindSpore's
``Sort`` along ``dim`` in the input's dtype, the ``k``-th index of it, and the value ``gather``-ed from the input at
that index (so the gradient goes to that element, as PyTorch's); only ``dim`` is removed (``keepdim=False``). Among
equal values the index is the ``k``-th in the sort's order (PyTorch's quickselect picks another of the tied indices:
the value is the same). PyTorch's error for ``k`` out of range.

``torch.mode(input, dim=-1, keepdim=False)``: PyTorch 2.13's CPU result (measured): the value is the smallest of the
most frequent values along ``dim``, the index the *last* position of that value (``[3, 1, 3, 1, 2, 1, 3]``: 1 at
index 5); a 0-d input gives itself and index 0. The index is computed on the host (numpy, per row: PyNative only; in
a graph the function is not compiled), the value ``gather``-ed from the input (the gradient reaches that element).
A NaN row's result follows numpy's (NaN most frequent: the first NaN's index; PyTorch gave 0 for one measured row).

Must come before ``nan_propagation`` (which wraps ``Tensor.kthvalue``'s NaN order around this one).
Replaces ``torch.Tensor.kthvalue``; adds ``torch.mode``, ``torch.Tensor.mode``.
"""
from __future__ import annotations

from . import Patch, patch_attr

NAME = "kthvalue_mode"
ms = np = cast_to_ms_tensor = cast_to_adapter_tensor = pynative_mode_condition = None  # set by apply()
_TYPES: dict = {}


def _out_of_range(dim):
    raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")


def kthvalue(self, k, dim=None, keepdim=False):
    """PyTorch's ``Tensor.kthvalue``: ``(values, indices)``, the input's dtype and int64, the input's shape without
    ``dim`` (``keepdim``: size 1 there). Raises ``RuntimeError`` where ``k`` is not in ``1..size``."""
    xm = cast_to_ms_tensor(self)
    if xm.ndim == 0:
        if k != 1:
            _out_of_range(0)
        values, indices = xm, ms.ops.zeros((), ms.int64)
    else:
        d = (-1 if dim is None else dim) % xm.ndim
        if not 1 <= k <= xm.shape[d]:
            _out_of_range(d)
        _, order = ms.ops.sort(xm, d)
        indices = ms.ops.narrow(order, d, k - 1, 1).astype(ms.int64)
        values = ms.ops.gather_elements(xm, d, indices)
        if not keepdim:
            values, indices = ms.ops.squeeze(values, d), ms.ops.squeeze(indices, d)
    if pynative_mode_condition():
        return _TYPES["kthvalue"](cast_to_adapter_tensor(values), cast_to_adapter_tensor(indices))
    return cast_to_adapter_tensor(values), cast_to_adapter_tensor(indices)


def _mode_indices(rows):
    """Per row of the 2-D numpy array ``rows``: the last index of its smallest most frequent value."""
    out = np.zeros(rows.shape[0], dtype=np.int64)
    for i, row in enumerate(rows):
        values, counts = np.unique(row, return_counts=True)  # sorted; NaNs counted together, last
        value = values[int(np.argmax(counts))]  # the first maximum: the smallest value
        hits = np.flatnonzero(np.isnan(row) if value != value else row == value)
        out[i] = hits[0] if value != value else hits[-1]
    return out


def mode(input, dim=-1, keepdim=False, *, out=None):  # noqa: A002 (PyTorch's names)
    """PyTorch's ``torch.mode`` (module docstring): ``(values, indices)``, the input's dtype and int64, the input's
    shape without ``dim`` (``keepdim``: size 1 there). Raises ``IndexError`` for an empty ``dim``."""
    xm = cast_to_ms_tensor(input)
    if xm.ndim == 0:
        values, indices = xm, ms.ops.zeros((), ms.int64)
    else:
        d = dim % xm.ndim
        if xm.shape[d] == 0:
            raise IndexError("mode(): Expected reduction dim 0 to have non-zero size.")
        a = np.moveaxis(xm.asnumpy(), d, -1)
        rows = _mode_indices(a.reshape(-1, a.shape[-1])).reshape(a.shape[:-1])
        indices = ms.ops.expand_dims(ms.Tensor(rows, ms.int64), d)
        values = ms.ops.gather_elements(xm, d, indices)
        if not keepdim:
            values, indices = ms.ops.squeeze(values, d), ms.ops.squeeze(indices, d)
    result = _TYPES["mode"](cast_to_adapter_tensor(values), cast_to_adapter_tensor(indices))
    if out is not None:
        out[0].copy_(result[0])
        out[1].copy_(result[1])
        return out
    return result


def mode_method(self, dim=-1, keepdim=False):
    """``Tensor.mode``: :func:`mode`."""
    return mode(self, dim, keepdim)


def apply() -> None:
    global ms, np, cast_to_ms_tensor, cast_to_adapter_tensor, pynative_mode_condition
    import mindspore
    import numpy
    import mindtorch.torch as torch
    from mindtorch.torch.tensor import Tensor
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    from mindtorch.utils import pynative_mode_condition as pynative
    from .return_types import TYPES
    ms, np, cast_to_ms_tensor, cast_to_adapter_tensor, pynative_mode_condition = mindspore, numpy, to_ms, to_adapter, \
        pynative
    _TYPES.update(kthvalue=TYPES["kthvalue"], mode=TYPES["mode"])
    patch_attr(Tensor, "kthvalue", kthvalue)
    patch_attr(torch, "mode", mode)
    patch_attr(Tensor, "mode", mode_method)


PATCH = Patch(NAME, "Tensor.kthvalue/torch.kthvalue in the input's dtype with PyTorch's shapes (MindTorch: float64 "
                    "and int64 through float32, every size-1 dim squeezed); torch.mode / Tensor.mode (missing) with "
                    "PyTorch's values and indices",
              "post-import", apply, replaces=("torch.Tensor.kthvalue", "torch.mode", "torch.Tensor.mode"),
              after=("return_types",))
