"""``torch.bucketize`` in compiled code.

MindTorch 0.4.0's ``bucketize`` reads the boundaries on the host (``boundaries.numpy().tolist()``) for MindSpore's
``bucketize`` op, whose boundaries are a list attribute: a compiled graph has no host values ("cannot get attributes
numpy"; op_db's ``bucketize``, issue 35), so the step ran eagerly.

PyTorch's ``bucketize(input, boundaries, right=right)`` (1-D ``boundaries``) is the index ``searchsorted(boundaries,
input, right=right)`` gives: the number of boundaries ``< v`` (``<= v`` with ``right=True``). In a compiled graph it
is computed so, with MindSpore's ``searchsorted`` on the boundaries tensor (int64, int32 with ``out_int32=True``; a
0-d input as one element); PyNative keeps MindTorch's function.

Replaces ``torch.bucketize`` (and ``mindtorch.torch.functional``'s).
"""
from __future__ import annotations

from . import Patch, get_original, patch_attr

_original = _ms = graph_mode_condition = None  # bound by apply() (graph code reads module globals)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):  # noqa: A002 (PyTorch's names)
    """``torch.bucketize`` (module docstring)."""
    if graph_mode_condition() and out is None:  # parsed by the graph compiler: searchsorted, first
        shape = _ms.ops.shape(input)
        values = _ms.ops.reshape(input, (1,)) if len(shape) == 0 else input
        result = _ms.ops.searchsorted(boundaries, values, out_int32=out_int32, right=right)
        return _ms.ops.reshape(result, ()) if len(shape) == 0 else result
    return _original(input, boundaries, out_int32=out_int32, right=right, out=out)


def apply() -> None:
    global _original, _ms, graph_mode_condition
    import mindspore as _ms
    import mindtorch.torch as torch
    import mindtorch.torch.functional as functional
    from mindtorch.utils import graph_mode_condition
    _original = get_original(torch, "bucketize")
    bucketize.__doc__ = _original.__doc__ or bucketize.__doc__
    patch_attr(torch, "bucketize", bucketize)
    if getattr(functional, "bucketize", None) is _original:
        patch_attr(functional, "bucketize", bucketize)


PATCH = Patch("bucketize", "torch.bucketize compiles (searchsorted on the boundaries tensor; MindTorch read them on "
                           "the host)", "post-import", apply,
              replaces=("torch.bucketize", "torch.functional.bucketize"))
