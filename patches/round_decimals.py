"""``torch.round(x, decimals=d)`` / ``x.round(decimals=d)`` with ``d != 0``: PyTorch's values, compiled too.

MindTorch 0.4.0 computes ``round(x * 10**d) / 10**d``. In a compiled graph ``10**d`` of a negative ``d`` is integer
power, 0, so every value became ``round(x * 0) / 0``: NaN, silently (op_db's ``round.decimals_neg_3``, issue 35:
"NaN at other places"). In PyNative ``10**-3`` is the float 0.001, which is not exact: ``round(999.99 * 0.001) / 0.001``
is 999.9999, where PyTorch gives 1000.

Here, as PyTorch's CPU kernel does, the scale is the exact power ``10.0**|d|`` (a Python float computed once, when
the call is traced or compiled): ``round(x / 10.0**|d|) * 10.0**|d|`` for ``d < 0``, ``round(x * 10.0**d) / 10.0**d``
for ``d > 0``, with MindTorch's ``round`` (MindSpore's ``Round``, half to even, as PyTorch) in the middle. Same code in
PyNative and compiled. ``decimals=0`` calls MindTorch's function unchanged.

Replaces ``torch.round`` (and ``mindtorch.torch.functional``'s) and ``torch.Tensor.round``.
"""
from __future__ import annotations

from . import Patch, get_original, patch_attr

_original_function = _original_method = None  # MindTorch's, bound by apply() (graph code reads module globals)


def _scaled(rounder, input, decimals):  # noqa: A002 (PyTorch's names)
    if decimals < 0:
        scale = 10.0 ** (-decimals)
        return rounder(input / scale) * scale
    scale = 10.0 ** decimals
    return rounder(input * scale) / scale


def round(input, *, decimals=0, out=None):  # noqa: A001,A002 (PyTorch's names)
    """``torch.round(input, *, decimals=0, out=None)`` (module docstring)."""
    if decimals == 0 or out is not None:
        return _original_function(input, decimals=decimals, out=out)
    return _scaled(_original_function, input, decimals)


def round_method(self, decimals=0):
    """``Tensor.round(decimals=0)`` (module docstring)."""
    if decimals == 0:
        return _original_method(self)
    return _scaled(_original_method, self, decimals)


def apply() -> None:
    global _original_function, _original_method
    import mindtorch.torch as torch
    import mindtorch.torch.functional as functional
    from mindtorch.torch.tensor import Tensor
    _original_function = get_original(torch, "round")
    _original_method = get_original(Tensor, "round")
    round.__doc__ = _original_function.__doc__ or round.__doc__
    patch_attr(torch, "round", round)
    if getattr(functional, "round", None) is _original_function:
        patch_attr(functional, "round", round)
    patch_attr(Tensor, "round", round_method)


PATCH = Patch("round_decimals", "torch.round / Tensor.round with decimals != 0 as PyTorch (exact power-of-ten scale; "
                                "a negative decimals gave NaN in compiled graphs)", "post-import", apply,
              replaces=("torch.round", "torch.functional.round", "torch.Tensor.round"))
