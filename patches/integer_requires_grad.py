"""``requires_grad`` of an integer or bool tensor reads False, as in PyTorch: ``x.argmax(1)``, ``torch.argmin(x)``,
``x.max(1).indices``, ``torch.min(x, 0)[1]``, ``x.topk(2)[1]``, ``x.kthvalue(1, 1)[1]`` of an ``x`` with
``requires_grad=True`` said ``requires_grad=True`` (MindSpore marks every output of an op on such an input; PyTorch
2.13: False, no ``grad_fn``, measured for each of these). Code that branches on it (``if t.requires_grad:``,
``tensor_repr``'s ``requires_grad=True`` suffix, a hook registration) took the index tensor for a differentiable
one; PyTorch's autograd never makes a non-floating tensor require a gradient.

How: ``Tensor.requires_grad``'s getter returns the replaced getter's value only for floating and complex dtypes
(:data:`_DIFFERENTIABLE`), else False; the setter is unchanged (``leaf_grad``'s). One dtype read per access.

Must come after ``leaf_grad``, which replaced the property (its setter is kept).
Replaces ``torch.Tensor.requires_grad`` (property).
"""
from __future__ import annotations

from . import Patch
from ._wrap_once import wrap_attr

NAME = "integer_requires_grad"
_DIFFERENTIABLE: frozenset = frozenset()  # MindSpore's floating and complex dtypes (set by apply())


def _make(replaced):
    def requires_grad(self):
        """PyTorch's ``Tensor.requires_grad``: the stored flag, False for a non-floating, non-complex dtype (reads
        through the replaced property itself, so the layer below stays reachable: tests/test_patch_layers.py)."""
        return bool(replaced.fget(self)) and self.dtype in _DIFFERENTIABLE
    return property(requires_grad, replaced.fset, replaced.fdel, replaced.__doc__)


def apply() -> None:
    global _DIFFERENTIABLE
    import mindspore as ms
    from mindtorch.torch.tensor import Tensor
    _DIFFERENTIABLE = frozenset(getattr(ms, name) for name in ("float16", "float32", "float64", "bfloat16",
                                                                "complex64", "complex128") if hasattr(ms, name))
    wrap_attr(Tensor, "requires_grad", NAME, _make)


PATCH = Patch(NAME, "requires_grad of integer/bool tensors (argmax/argmin, max(dim).indices, topk/kthvalue "
                    "indices of a tensor requiring grad) reads False as PyTorch (MindSpore: True)",
              "post-import", apply, replaces=("torch.Tensor.requires_grad",), after=("leaf_grad",))
