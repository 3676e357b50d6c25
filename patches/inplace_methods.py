"""``Tensor.relu_()``, ``Tensor.clamp_min_(min)`` and ``Tensor.clamp_max_(max)``: PyTorch's in-place methods that
MindTorch 0.4.0's Tensor lacks (``x.relu_()`` raised ``AttributeError: 'Tensor' object has no attribute 'relu_'``,
found 2026-12-06 running a helper function of the form ``return t.relu_()``).

Each computes PyTorch's out-of-place result (``relu()``; ``clamp(min=...)``, ``clamp(max=...)``) and writes it into
the tensor through MindTorch's own in-place path (``_tensor_inplace_assign``: ``assign_value``, which
``patches/inplace.py`` and ``patches/inplace_autograd.py`` extend to aliases, views and recordings), returning the
tensor, as MindTorch's ``sigmoid_`` / ``clamp_`` do. In a compiled graph they raise MindTorch's "is an in-place
operation" error like every other in-place method there (the step runs eagerly: kind ``inplace-tensor-method``).

Replaces (adds; MindTorch 0.4.0 has none): ``torch.Tensor.relu_``, ``torch.Tensor.clamp_min_``,
``torch.Tensor.clamp_max_``.
"""
from __future__ import annotations

from adapter import backend

from . import Patch, patch_attr


def relu_(self):
    """``self`` with ``max(self, 0)`` written into it (PyTorch's ``Tensor.relu_``)."""
    return backend.internal("tensor_inplace_assign")(self, self.relu(), "relu_", "relu")


def clamp_min_(self, min):  # noqa: A002 (PyTorch's name)
    """``self`` with ``max(self, min)`` written into it (PyTorch's ``Tensor.clamp_min_``)."""
    return backend.internal("tensor_inplace_assign")(self, self.clamp(min=min), "clamp_min_", "clamp")


def clamp_max_(self, max):  # noqa: A002 (PyTorch's name)
    """``self`` with ``min(self, max)`` written into it (PyTorch's ``Tensor.clamp_max_``)."""
    return backend.internal("tensor_inplace_assign")(self, self.clamp(max=max), "clamp_max_", "clamp")


def apply() -> None:
    from mindtorch.torch.tensor import Tensor
    patch_attr(Tensor, "relu_", relu_)
    patch_attr(Tensor, "clamp_min_", clamp_min_)
    patch_attr(Tensor, "clamp_max_", clamp_max_)


PATCH = Patch("inplace_methods", "Tensor.relu_ / clamp_min_ / clamp_max_: PyTorch's in-place methods MindTorch lacks",
              "post-import", apply,
              replaces=("torch.Tensor.relu_", "torch.Tensor.clamp_min_", "torch.Tensor.clamp_max_"))
