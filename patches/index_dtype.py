"""``topk`` and ``argmin`` return int64 indices, as PyTorch.

MindTorch 0.4.0 passes on MindSpore's index dtype: ``x.topk(k)`` / ``torch.topk`` gave ``indices`` as int32 (MindSpore's
``TopK`` kernel), and ``x.argmin(dim)`` / ``torch.argmin`` int32 (``ms.ops.argmin``), in PyNative and in compiled code,
while ``argmax`` and ``max(dim).indices`` were int64. The indices then print, save and combine differently
(``torch.save`` of predictions, ``indices.dtype == torch.long`` checks, int32 + int64 arithmetic).

Here the same calls run and the indices are cast to int64; ``topk`` keeps MindTorch's ``torch.return_types.topk`` in
PyNative (a plain tuple in graph mode, as before). The wrappers are plain functions with no ``__wrapped__`` (MindSpore's
graph parser compiles ``inspect.unwrap(fn)``), so compiled code gets int64 too.

Replaces: ``Tensor.topk``, ``Tensor.argmin``, ``torch.topk``, ``torch.argmin`` (and ``mindtorch.torch.functional``'s).
"""
from __future__ import annotations

from . import Patch


def _make():
    import collections

    from mindtorch.utils import pynative_mode_condition
    topk_type = collections.namedtuple("topk", ("values", "indices"))
    topk_type.__module__ = "torch.return_types"

    def make_topk(original, method):
        def topk(input, k, dim=None, largest=True, sorted=True, *, out=None):  # noqa: A002 (PyTorch's names)
            """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) elements along ``dim``
            (default last); indices int64."""
            if out is not None:
                return original(input, k, dim, largest, sorted, out=out)
            values, indices = original(input, k, dim, largest, sorted)
            indices = indices.long()
            if pynative_mode_condition():
                return topk_type(values, indices)
            return values, indices

        def topk_method(self, k, dim=None, largest=True, sorted=True):
            values, indices = original(self, k, dim, largest, sorted)
            indices = indices.long()
            if pynative_mode_condition():
                return topk_type(values, indices)
            return values, indices

        fn = topk_method if method else topk
        fn.__name__ = fn.__qualname__ = "topk"
        fn.__doc__ = topk.__doc__
        fn._adapter_index_dtype = original
        return fn

    def make_argmin(original):
        def argmin(input, dim=None, keepdim=False):  # noqa: A002
            """Index (int64) of the smallest element, of all (``dim=None``) or along ``dim``."""
            return original(input, dim, keepdim).long()

        argmin._adapter_index_dtype = original
        return argmin

    return make_topk, make_argmin


def apply() -> None:
    import mindtorch.torch as torch
    import mindtorch.torch.functional as functional
    from mindtorch.torch.tensor import Tensor
    if getattr(Tensor.topk, "_adapter_index_dtype", None) is not None:
        return
    make_topk, make_argmin = _make()
    topk_function, argmin_function = make_topk(torch.topk, False), make_argmin(torch.argmin)
    for owner in {id(torch): torch, id(functional): functional}.values():
        if getattr(owner, "topk", None) is not None:
            owner.topk = topk_function
        if getattr(owner, "argmin", None) is not None:
            owner.argmin = argmin_function
    Tensor.topk = make_topk(Tensor.topk, True)
    Tensor.argmin = make_argmin(Tensor.argmin)


PATCH = Patch("index_dtype", "topk and argmin return int64 indices (MindTorch gave MindSpore's int32)",
              "post-import", apply)
