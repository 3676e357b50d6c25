"""``torch._foreach_*_`` in-place list ops (``lerp_``, ``mul_``, ``add_``, ``sub_``, ``div_``, ``copy_``, ``zero_``).

MindTorch 0.4.0 has none of them. timm's ``ModelEmaV3`` (and ``ModelEmaV2`` with ``foreach=True``) updates the EMA
weights with ``torch._foreach_lerp_(ema_values, model_values, weight=1. - decay)`` when ``torch`` has it, else
``torch._foreach_mul_(ema_values, scalar=decay)`` + ``torch._foreach_add_(ema_values, model_values,
alpha=1. - decay)``; optimizers written for PyTorch 2 use them too. Here each op is the per-tensor in-place
method applied pairwise (``a.lerp_(b, w)``), so it has that method's semantics, dtype promotion and, for
``state_dict()`` values, the write-through of ``patches/state_dict.py``. Like PyTorch's, each returns ``self``
(the list). Lists of different lengths raise PyTorch's ``RuntimeError: Tensor lists must have the same number of
tensors``.

Replaces: adds ``torch._foreach_lerp_/mul_/div_/add_/sub_/copy_/zero_`` (where MindTorch lacks them: all, in 0.4.0).
"""
from __future__ import annotations

from . import Patch, is_patched, patch_attr


def _same_length(*lists) -> None:
    n = len(lists[0])
    if any(len(other) != n for other in lists[1:]):
        raise RuntimeError(f"Tensor lists must have the same number of tensors, got {[len(x) for x in lists]}.")


def _per_item(value, n):
    """A scalar/tensor broadcast to ``n`` items, or a list/tuple of ``n`` items taken as is."""
    if isinstance(value, (list, tuple)):
        _same_length(range(n), value)
        return list(value)
    return [value] * n


def _foreach_lerp_(self, tensors1, weight):
    """``self[i].lerp_(tensors1[i], weight[i] or weight)`` for every i. Returns ``self``."""
    _same_length(self, tensors1)
    for a, b, w in zip(self, tensors1, _per_item(weight, len(self))):
        a.lerp_(b, w)
    return self


def _foreach_mul_(self, scalar=None, *, scalars=None, other=None):
    """``self[i].mul_(x)``; ``x`` a scalar, a tensor, or a list of scalars/tensors. Returns ``self``."""
    value = next(v for v in (scalar, scalars, other) if v is not None)
    for a, s in zip(self, _per_item(value, len(self))):
        a.mul_(s)
    return self


def _foreach_div_(self, scalar=None, *, scalars=None, other=None):
    """``self[i].div_(x)``; as :func:`_foreach_mul_`. Returns ``self``."""
    value = next(v for v in (scalar, scalars, other) if v is not None)
    for a, s in zip(self, _per_item(value, len(self))):
        a.div_(s)
    return self


def _foreach_add_(self, other=None, *, alpha=1, scalar=None, scalars=None):
    """``self[i].add_(other[i], alpha=alpha)`` (tensor list), or ``+ scalar`` / ``+ scalars[i]``. Returns ``self``."""
    value = next(v for v in (other, scalar, scalars) if v is not None)
    for a, b in zip(self, _per_item(value, len(self))):
        a.add_(b, alpha=alpha)
    return self


def _foreach_sub_(self, other=None, *, alpha=1, scalar=None, scalars=None):
    """``self[i].sub_(other[i], alpha=alpha)``; as :func:`_foreach_add_`. Returns ``self``."""
    value = next(v for v in (other, scalar, scalars) if v is not None)
    for a, b in zip(self, _per_item(value, len(self))):
        a.sub_(b, alpha=alpha)
    return self


def _foreach_copy_(self, src, non_blocking=False):
    """``self[i].copy_(src[i])``. Returns ``self``."""
    _same_length(self, src)
    for a, b in zip(self, src):
        a.copy_(b)
    return self


def _foreach_zero_(self):
    """``self[i].zero_()``. Returns ``self``."""
    for a in self:
        a.zero_()
    return self


_OPS = {f.__name__: f for f in (_foreach_lerp_, _foreach_mul_, _foreach_div_, _foreach_add_, _foreach_sub_,
                                 _foreach_copy_, _foreach_zero_)}


def apply() -> None:
    import mindtorch.torch as torch
    for name, fn in _OPS.items():
        if not hasattr(torch, name) or is_patched(torch, name):
            patch_attr(torch, name, fn)


PATCH = Patch("foreach", "torch._foreach_lerp_/mul_/add_/sub_/div_/copy_/zero_ (timm ModelEmaV3's EMA update)",
              "post-import", apply, replaces=tuple(f"torch.{name}" for name in _OPS))
