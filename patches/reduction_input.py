"""``Tensor.mean`` and ``Tensor.prod`` read their tensor through MindTorch's input conversion, so their gradient
reaches it: a Parameter's, and (MindSpore >= 2.10) a tensor written in place.

MindTorch 0.4.0's ``Tensor.mean`` / ``Tensor.prod`` (unlike its other reductions) pass ``cast_to_adapter_tensor(self)``
to ``ms.ops.mean`` / ``ms.ops.prod``, the conversion MindTorch applies to *outputs*. Measured on MindSpore 2.10
(PyNative: the eager bridge, and every compiled site's first, reference step):

* for an ``nn.Parameter``, that makes a new MindTorch tensor sharing the data but not the parameter's autograd leaf:
  ``w.mean().backward()`` gave ``w`` a zero gradient where PyTorch gives ``1/numel`` everywhere (the conformance
  case ``c52a917e7479``, listed as a known 2.10 difference since 2026-11-29);
* a tensor written in place during a recording (``nn.SiLU(inplace=True)``, then squeeze-excite's
  ``x.mean((2, 3), keepdim=True)``: timm's efficientnet / mobilenetv3 / regnety) got the op's gradient sent to its
  history before the write; adapter/backend_compat.py (section 13) now resolves that in both conversions, so this
  patch only adds the Parameter case there.

Here both read ``self`` with ``cast_to_ms_tensor`` as MindTorch's other reductions do (a Parameter becomes a recorded
copy, a rebound tensor its current value); the result, its dtype handling (``dtype=`` casts before reducing; ``prod``
of bool counts in int8 and returns int64, as MindTorch's) and the graph-mode behaviour are otherwise MindTorch's.
On 2.5-dev ``cast_to_adapter_tensor`` of a Parameter kept the link (its conformance case passes), and this changes
nothing measurable there.

Replaces: ``torch.Tensor.mean``, ``torch.Tensor.prod`` (MindTorch's; patches/empty_reductions.py and
patches/result_dtypes.py wrap these; patches/parameter_methods.py gives ``nn.Parameter`` the result).
"""
from __future__ import annotations

from . import Patch, patch_attr

ms = cast_to_ms_tensor = cast_to_adapter_tensor = None  # bound by apply() (compiled graphs read module globals)


def mean(self, dim=None, keepdim=False, dtype=None, axis=None):
    """PyTorch's ``Tensor.mean(dim=None, keepdim=False, *, dtype=None)`` (``axis``: MindTorch's alias of ``dim``)."""
    if dim is None:
        dim = axis
    x = cast_to_ms_tensor(self)
    if dtype:
        x = x.astype(dtype)
    return cast_to_adapter_tensor(ms.ops.mean(x, dim, keepdim))


def prod(self, dim=None, keepdim=False, dtype=None):
    """PyTorch's ``Tensor.prod(dim=None, keepdim=False, *, dtype=None)``; a bool tensor's product is int64."""
    x = cast_to_ms_tensor(self)
    if dtype:
        x = x.astype(dtype)
    if x.dtype == ms.bool_:
        return cast_to_adapter_tensor(ms.ops.prod(x.astype(ms.int8), dim, keepdim).astype(ms.int64))
    return cast_to_adapter_tensor(ms.ops.prod(x, dim, keepdim))


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor
    import mindspore
    from mindtorch.torch.tensor import Tensor, cast_to_adapter_tensor as to_adapter, cast_to_ms_tensor as to_ms
    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    patch_attr(Tensor, "mean", mean)
    patch_attr(Tensor, "prod", prod)


NAME = "reduction_input"
PATCH = Patch(NAME, "Tensor.mean/prod read their input as MindTorch's other reductions do: a Parameter's "
                    "w.mean() gradient (2.10: zeros) and an in-place-written tensor's, as PyTorch's",
              "post-import", apply, replaces=("torch.Tensor.mean", "torch.Tensor.prod"))
