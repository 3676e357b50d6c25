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

import functools

from . import Patch, get_original, patch_attr


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
def _make():
    import collections

    from mindtorch.utils import pynative_mode_condition
    topk_type = collections.namedtuple("topk", ("values", "indices"))
    topk_type.__module__ = "torch.return_types"

    @functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
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
        return fn

    @functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
    def make_argmin(original):
        def argmin(input, dim=None, keepdim=False):  # noqa: A002
            """Index (int64) of the smallest element, of all (``dim=None``) or along ``dim``."""
            return original(input, dim, keepdim).long()

        return argmin

    return make_topk, make_argmin


def apply() -> None:
    import mindtorch.torch as torch
    import mindtorch.torch.functional as functional
    from mindtorch.torch.tensor import Tensor
    make_topk, make_argmin = _make()
    topk_function = make_topk(get_original(torch, "topk"), False)
    argmin_function = make_argmin(get_original(torch, "argmin"))
    for owner in {id(torch): torch, id(functional): functional}.values():
        if get_original(owner, "topk", None) is not None:
            patch_attr(owner, "topk", topk_function)
        if get_original(owner, "argmin", None) is not None:
            patch_attr(owner, "argmin", argmin_function)
    patch_attr(Tensor, "topk", make_topk(get_original(Tensor, "topk"), True))
    patch_attr(Tensor, "argmin", make_argmin(get_original(Tensor, "argmin")))


PATCH = Patch("index_dtype", "topk and argmin return int64 indices (MindTorch gave MindSpore's int32)",
              "post-import", apply,
              replaces=("torch.Tensor.topk", "torch.Tensor.argmin", "torch.topk", "torch.argmin",
                        "torch.functional.topk", "torch.functional.argmin"))
