"""``F.hinge_embedding_loss`` / ``nn.HingeEmbeddingLoss`` with a target that requires grad: PyTorch's gradients.

MindTorch 0.4.0 calls MindSpore's ``ops.hinge_embedding_loss``; differentiating it with respect to a target that
requires grad raised ``TypeError: For primitive[Add], the input argument[x] must be a type of {Tensor[BFloat16], ...``
(op_db's ``nn.functional.hinge_embedding_loss:s0-s2`` gradients, ``run.py conformance --opinfo``, issue 35): a
script whose target comes out of another network (or carries ``requires_grad`` by accident) could not step.

PyTorch 2.13 (``aten/src/ATen/native/Loss.cpp``, ``hinge_embedding_loss``), element-wise::

    loss = where(target != 1, max(margin - input, 0), 0) + where(target != -1, input, 0)

then ``'none'`` / ``'mean'`` / ``'sum'``; the target enters only through the comparisons, so its gradient is 0 (PyTorch
reports none). Here that composition of MindSpore ops, in the input's dtype; floating inputs only (integer inputs
keep MindTorch's path). The legacy ``size_average`` / ``reduce`` map to ``reduction`` as MindTorch did.

Must come after nothing. Replaces: ``torch.nn.functional.hinge_embedding_loss``.
"""
from __future__ import annotations

from . import Patch, get_replaced, patch_attr
from .float64_precision import reduce_loss

NAME = "hinge_embedding"
# graph code below reads these module globals; set by apply()
ms = cast_to_ms_tensor = cast_to_adapter_tensor = _get_reduce_string = None
_original = None


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,  # noqa: A002 (PyTorch's names)
                         reduction="mean"):
    """PyTorch's ``F.hinge_embedding_loss`` (module docstring): the loss of ``reduction`` in ``input``'s dtype; a
    ``target`` of ``input``'s shape (or broadcastable) with values +-1. Raises ValueError for an unknown
    ``reduction`` (PyTorch's message)."""
    x = cast_to_ms_tensor(input)
    if not ms.ops.is_floating_point(x):
        return _original(input, target, margin, size_average, reduce, reduction)
    if size_average is not None or reduce is not None:
        reduction = _get_reduce_string(size_average, reduce)
    t = ms.ops.stop_gradient(cast_to_ms_tensor(target))
    zero = ms.ops.zeros_like(x)
    hinge = ms.ops.maximum(ms.ops.full((), margin, dtype=x.dtype) - x, zero)
    loss = ms.ops.select(t != 1, hinge, zero) + ms.ops.select(t != -1, x, zero)
    return cast_to_adapter_tensor(reduce_loss(loss, reduction))


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, _get_reduce_string, _original
    import mindspore
    import mindtorch.torch.nn.functional as F
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    from adapter import backend
    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    _get_reduce_string = backend.internal("get_reduce_string")
    _original = get_replaced(F, "hinge_embedding_loss", NAME)
    patch_attr(F, "hinge_embedding_loss", hinge_embedding_loss)


PATCH = Patch(NAME, "F.hinge_embedding_loss by PyTorch's formula: a target that requires grad gets gradient 0 "
                    "(MindSpore's raised TypeError)", "post-import", apply,
              replaces=("torch.nn.functional.hinge_embedding_loss",))
