"""``torch.meshgrid`` of one tensor, compiled too.

MindTorch 0.4.0's ``meshgrid`` hands its tensors to MindSpore's ``Meshgrid`` primitive, which in a compiled graph
requires at least two ("For primitive[Meshgrid], the number of input tensors must be greater than 1, but got 1";
op_db's ``meshgrid.list_of_tensors`` / ``meshgrid.variadic_tensors``, issue 35), so the step ran eagerly.

PyTorch's grid of one 0-d or 1-d tensor is that tensor as 1-d, whatever ``indexing``: here ``(t.reshape(-1),)``
(values and gradient the input's), in PyNative and compiled; a single tensor of more dimensions, and every call
with several tensors, go to MindTorch's function unchanged.

Replaces ``torch.meshgrid`` (and ``mindtorch.torch.functional``'s).
"""
from __future__ import annotations

from . import Patch, get_original, patch_attr

_original = None  # MindTorch's, bound by apply() (graph code reads module globals)


def meshgrid(*tensors, indexing=None):
    """``torch.meshgrid(*tensors, indexing=None)``; one tensor as the module docstring says."""
    single = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)) else tensors
    if len(single) == 1 and single[0].ndim <= 1:
        return (single[0].reshape(-1),)
    if indexing is None:
        return _original(*tensors)
    return _original(*tensors, indexing=indexing)


def apply() -> None:
    global _original
    import mindtorch.torch as torch
    import mindtorch.torch.functional as functional
    _original = get_original(torch, "meshgrid")
    meshgrid.__doc__ = _original.__doc__ or meshgrid.__doc__
    patch_attr(torch, "meshgrid", meshgrid)
    if getattr(functional, "meshgrid", None) is _original:
        patch_attr(functional, "meshgrid", meshgrid)


PATCH = Patch("meshgrid_single", "torch.meshgrid of one tensor compiles (MindSpore's Meshgrid wants two or more in "
                                 "graphs)", "post-import", apply,
              replaces=("torch.meshgrid", "torch.functional.meshgrid"))
