"""``torch.index_fill`` / ``Tensor.index_fill`` with a tensor value, and ``torch.nextafter`` / ``Tensor.nextafter``
of inputs of different shapes: PyTorch's values and gradients.

Found by PyTorch's OpInfo samples (``run.py conformance --opinfo``, issue 35), silently wrong:

* ``index_fill(x, dim, index, value)`` with a 0-d tensor ``value`` that requires grad: MindSpore's ``IndexFill``
  gives ``value`` no gradient (0; PyTorch's is the sum of the output gradient over the filled positions:
  ``index_fill:s1``); compiled, MindTorch's int32 cast of the index does not reach the graph (``IndexFill`` refused
  the int64 index: no sample compiled);
* ``nextafter(a, b)`` with shapes that broadcast ((5, 1) and (5,)): MindSpore's ``NextAfter`` kernel does not
  broadcast and does not refuse; 24 of 25 values were off, up to 7.95 (``nextafter:s2``), and its gradient raised;
* ``nextafter`` of float32 inputs returned ``input`` unchanged (mindspore 2.10 CPU: ``nextafter(1., 2.)`` is 1.0,
  PyTorch's 1.0000001; ``nextafter(0., -1.)`` 0.0, PyTorch's -1.4e-45): one ulp, inside the replay's relative
  tolerance except at 0, silently (float64 is right).

Here ``index_fill`` is ``select(mask, value, x)`` with ``mask`` the ``IndexFill`` of a zero tensor with ``True``
(index cast to int32): the value is PyTorch's, the input's gradient the output gradient off the filled positions,
the value's the sum over them, in PyNative and compiled. ``nextafter`` broadcasts both inputs to their common shape
first (``broadcast_to``); float32 is then computed in float64 arithmetic (:func:`_nextafter32`: equal to numpy's
``nextafter``, i.e. C's, on 2019 values across the float32 range, zeros, denormals, infinities and NaN), with
PyTorch's gradient (the output gradient for ``input``, 0 for ``other``; at an infinite ``input`` 0 here, PyTorch's the
output gradient); other dtypes go to MindSpore's kernel.

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


def _nextafter32(x, y):
    """``std::nextafter`` of float32 ``x`` toward ``y``, computed in float64 (exact there): the float32 spacing
    ``2^(e - 23)`` at ``x``'s binade ``e`` (at least ``2^-149`` below the normal range), halved when a power of two
    moves toward zero; ``+-2^-149`` from 0; the largest float from an infinity; ``y`` when equal; NaN with a NaN; a
    zero result keeps ``x``'s sign."""
    f64 = ms.float64
    x64, y64 = x.astype(f64), y.astype(f64)
    ax = ms.ops.abs(x64)
    safe = ms.ops.select(ax > 0, ax, ms.ops.ones_like(ax))
    two = ms.ops.full_like(safe, 2.0)
    e = ms.ops.floor(ms.ops.log2(safe))
    e = ms.ops.select(ms.ops.pow(two, e) > safe, e - 1, e)  # log2 rounded across a binade edge
    e = ms.ops.select(ms.ops.pow(two, e + 1) <= safe, e + 1, e)
    e = ms.ops.maximum(e, ms.ops.full_like(e, -126.0))
    spacing = ms.ops.pow(two, e - 23)
    up = y64 > x64
    halve = (up != (x64 > 0)) & (ax == ms.ops.pow(two, e)) & (ax > 2.0 ** -126)
    step = ms.ops.select(halve, spacing / 2, spacing)
    res = x64 + ms.ops.select(up, step, -step)
    res = ms.ops.select(res == 0, x64 * 0, res)
    tiny = ms.ops.full_like(x64, 2.0 ** -149)
    res = ms.ops.select(x64 == 0, ms.ops.select(up, tiny, -tiny), res)
    big = ms.ops.full_like(x64, 3.4028234663852886e38)
    res = ms.ops.select(ms.ops.isinf(x64), ms.ops.select(x64 > 0, big, -big), res)
    res = ms.ops.select(x64 == y64, y64, res)
    res = ms.ops.select(ms.ops.isnan(x64) | ms.ops.isnan(y64), x64 + y64, res)
    return res.astype(ms.float32)


def _nextafter(input, other):  # noqa: A002
    x = cast_to_ms_tensor(input)
    y = cast_to_ms_tensor(other)
    if x.shape != y.shape:
        shape = tuple(broadcast_shapes(x.shape, y.shape))
        x = ms.ops.broadcast_to(x, shape)
        y = ms.ops.broadcast_to(y, shape)
    if x.dtype != ms.float32 or y.dtype != ms.float32:
        return ms.ops.nextafter(x, y)
    sg = ms.ops.stop_gradient
    value = _nextafter32(sg(x), sg(y))
    # PyTorch's gradient: the output gradient for input, 0 for other (0 here at an infinite input, where x - x is
    # NaN); subtracting the +0 keeps a -0.0 result's sign
    return value - ms.ops.select(ms.ops.isfinite(x), sg(x) - x, ms.ops.zeros_like(x))


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
                    "broadcasts and moves float32 by one ulp (MindSpore's kernel did neither, silently)", "post-import", apply,
              replaces=("torch.index_fill", "torch.Tensor.index_fill", "torch.nextafter", "torch.Tensor.nextafter"))
