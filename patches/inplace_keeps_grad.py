"""An in-place write into a tensor keeps the tensor's ``requires_grad`` and ``.grad``, as in PyTorch.

Every MindTorch in-place operation (``add_``, ``zero_``, ``copy_``, and ``a -= b`` through ``patches/inplace.py``)
ends in ``Tensor.assign_value(result)``, which gives the target the new value's Python-side autograd state (on
MindSpore 2.5 these live on the stub's C++ tensor: ``patches/inplace_autograd.py`` makes the stub take ``result``'s
C++ tensor while a recording is open, and MindSpore's own path swapped them too): MindTorch's ``_requires_grad``
became False and ``_grad`` / ``_retain_grad`` were reset. So PyTorch's manual update of a leaf tensor::

    with torch.no_grad():
        a -= learning_rate * a.grad      # PyTorch: a still requires grad, a.grad unchanged

left ``a.requires_grad == False`` and ``a.grad is None`` (silently: ``print(a)`` lost its ``requires_grad=True``,
``a.grad.zero_()`` raised on None, and the eager bridge stopped differentiating ``a``: the next ``backward()`` of a
loss computed from it outside a step site raised "no forward pass was recorded"; PyTorch's autograd tutorials).

Here ``assign_value`` on a tensor that is not a Parameter restores its ``.grad``, and its ``requires_grad`` /
``retain_grad`` when they were True, when the write changed them (a write may still turn ``requires_grad`` on, as
``x.copy_(y)`` from a ``y`` that requires grad does in PyTorch). A Parameter keeps MindSpore's own ``assign_value`` (its ``requires_grad`` is MindSpore's and not touched).

Applied after ``inplace_autograd``, whose ``assign_value`` it wraps (outermost, so both paths are covered).

Replaces: ``torch.Tensor.assign_value`` (wrapping ``inplace_autograd``'s).
"""
from __future__ import annotations

from . import Patch, get_replaced, patch_attr

_ATTRS = ("_requires_grad", "_grad", "_retain_grad")
_MISSING = object()

_original = None  # the assign_value this patch wraps, set by apply()
_Parameter = None  # mindspore.Parameter, set by apply()


def assign_value(self, value):
    """MindSpore's ``assign_value`` (``self`` takes ``value``'s data), keeping ``self``'s ``requires_grad``,
    ``.grad`` and ``retain_grad`` state; returns ``self``."""
    if isinstance(self, _Parameter):
        return _original(self, value)
    saved = [getattr(self, name, _MISSING) for name in _ATTRS]
    out = _original(self, value)
    for name, old in zip(_ATTRS, saved):
        # requires_grad / retain_grad: only a True is kept (copy_ from a tensor that requires grad may set it, as
        # PyTorch's in-place op on a tracked value does); .grad: always the target's own
        if old is _MISSING or (name != "_grad" and not old):
            continue
        if getattr(self, name, _MISSING) is not old:
            setattr(self, name, old)
    return out


def apply() -> None:
    global _original, _Parameter
    import mindspore as ms
    from mindtorch.torch.tensor import Tensor
    _Parameter = ms.Parameter
    _original = get_replaced(Tensor, "assign_value", NAME)
    patch_attr(Tensor, "assign_value", assign_value)


NAME = "inplace_keeps_grad"
PATCH = Patch(NAME, "in-place writes keep the tensor's requires_grad and .grad (with no_grad(): a -= lr * a.grad "
                    "left a.requires_grad False and a.grad None)",
              "post-import", apply, replaces=("torch.Tensor.assign_value",),
              after=("inplace_autograd",))
