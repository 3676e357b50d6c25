"""``torch.index_fill`` / ``Tensor.index_fill`` with a tensor value, and ``torch.nextafter`` / ``Tensor.nextafter``
of inputs of different shapes: PyTorch's values and gradients.

Found by PyTorch's OpInfo samples (``run.py conformance --opinfo``, issue 35), silently wrong:

* ``index_fill(x, dim, index, value)`` with a 0-d tensor ``value`` that requires grad: MindSpore's ``IndexFill``
  gives ``value`` no gradient (0; PyTorch's is the sum of the output gradient over the filled positions:
  ``index_fill:s1``); compiled, MindTorch's int32 cast of the index does not reach the graph (``IndexFill`` refused
  the int64 index: no sample compiled);
* ``nextafter(a, b)`` with shapes that broadcast ((5, 1) and (5,)): MindSpore's ``NextAfter`` kernel does not
  broadcast and does not refuse; 24 of 25 values were off, up to 7.95 (``nextafter:s2``), and its gradient raised.

Here ``index_fill`` is ``select(mask, value, x)`` with ``mask`` the ``IndexFill`` of a zero tensor with ``True``
(index cast to int32): the value is PyTorch's, the input's gradient the output gradient off the filled positions,
the value's the sum over them, in PyNative and compiled. ``nextafter`` broadcasts both inputs to their common shape
first (``broadcast_to``), then MindSpore's kernel (PyTorch's gradient of ``nextafter`` is the output gradient for
``input``, 0 for ``other``: MindSpore's bprop, now on equal shapes).

Must come after nothing. Replaces: ``torch.index_fill``, ``torch.Tensor.index_fill``, ``torch.nextafter``,
``torch.Tensor.nextafter``.
"""
from __future__ import annotations

from . import Patch, patch_attr

NAME = "index_fill_nextafter"
# graph code below reads these module globals; set by apply()
ms = cast_to_ms_tensor = cast_to_adapter_tensor = _out_inplace_assign = broadcast_shapes = None


def index_fill(input, dim, index, value):  # noqa: A002 (PyTorch's names)
    """PyTorch's ``torch.index_fill``: ``input`` with the slices ``index`` along ``dim`` set to ``value``."""
    x = cast_to_ms_tensor(input)
    i = cast_to_ms_tensor(index).astype(ms.int32)
    v = cast_to_ms_tensor(value)
    if not isinstance(v, ms.Tensor):
        return cast_to_adapter_tensor(x.index_fill(dim, i, value))
    if v.ndim != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {v.ndim} "
                           "dimension(s).")
    mask = ms.ops.zeros(x.shape, ms.float32).index_fill(dim, i, 1.0) > 0
    return cast_to_adapter_tensor(ms.ops.select(mask, ms.ops.broadcast_to(v.astype(x.dtype), x.shape), x))


def tensor_index_fill(self, dim, index, value):
    """``Tensor.index_fill``: :func:`index_fill` of ``self``."""
    return index_fill(self, dim, index, value)


def _nextafter(input, other):  # noqa: A002
    x = cast_to_ms_tensor(input)
    y = cast_to_ms_tensor(other)
    if x.shape != y.shape:
        shape = tuple(broadcast_shapes(x.shape, y.shape))
        x = ms.ops.broadcast_to(x, shape)
        y = ms.ops.broadcast_to(y, shape)
    return ms.ops.nextafter(x, y)


def nextafter(input, other, *, out=None):  # noqa: A002
    """PyTorch's ``torch.nextafter``: the next float after ``input`` toward ``other``, broadcast."""
    return _out_inplace_assign(out, _nextafter(input, other), "nextafter")


def tensor_nextafter(self, other):
    """``Tensor.nextafter``: :func:`nextafter` of ``self``."""
    return cast_to_adapter_tensor(_nextafter(self, other))


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, _out_inplace_assign, broadcast_shapes
    import mindspore
    import mindtorch.torch as torch
    from mindtorch.torch.functional import broadcast_shapes as shapes
    from mindtorch.torch.tensor import Tensor
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    from adapter import backend
    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    _out_inplace_assign = backend.internal("out_inplace_assign")
    broadcast_shapes = shapes
    patch_attr(torch, "index_fill", index_fill)
    patch_attr(Tensor, "index_fill", tensor_index_fill)
    patch_attr(torch, "nextafter", nextafter)
    patch_attr(Tensor, "nextafter", tensor_nextafter)


PATCH = Patch(NAME, "index_fill with a tensor value differentiates it (MindSpore gave 0) and compiles; nextafter "
                    "broadcasts (MindSpore's kernel did not: 24 of 25 values off, silently)", "post-import", apply,
              replaces=("torch.index_fill", "torch.Tensor.index_fill", "torch.nextafter", "torch.Tensor.nextafter"))
