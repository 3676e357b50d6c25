"""``F.bilinear`` (``nn.Bilinear``) of an empty batch: PyTorch's ``(..., out_features)`` shape, zero gradients.

MindTorch 0.4.0 reshapes its result with ``reshape(*input1.shape[:-1], -1)``: with no rows (an empty last batch, an
empty set of candidate pairs) the ``-1`` has nothing to infer from and the result of a ``(0, 3)`` / ``(0, 4)`` input
pair and a ``(5, 3, 4)`` weight was ``(0, 0)`` where PyTorch's is ``(0, 5)``, silently, and its gradient raised
MindSpore's ``ValueError`` (op_db's ``nn.functional.bilinear:s1``; ``run.py conformance --opinfo``, issue 35).

Here an input pair with no elements gives zeros of shape ``input1.shape[:-1] + (weight.shape[0],)`` in the
weight's dtype, computed from the inputs, weight and bias times 0 so that every gradient is PyTorch's (zeros).
Non-empty inputs go to MindTorch unchanged.

Must come after nothing. Replaces: ``torch.nn.functional.bilinear``.
"""
from __future__ import annotations

from . import Patch, get_replaced, patch_attr

NAME = "bilinear_empty"
ms = cast_to_ms_tensor = cast_to_adapter_tensor = None  # set by apply(); graph code reads module globals
_original = None


def bilinear(input1, input2, weight, bias=None):
    """PyTorch's ``F.bilinear``: ``x1^T W_k x2 + b_k`` for each output ``k``; shape ``input1.shape[:-1] + (out,)``."""
    if 0 not in tuple(input1.shape) and 0 not in tuple(input2.shape):
        return _original(input1, input2, weight, bias)
    w = cast_to_ms_tensor(weight)
    anchor = w.sum() + cast_to_ms_tensor(input1).sum() + cast_to_ms_tensor(input2).sum()
    if bias is not None:
        anchor = anchor + cast_to_ms_tensor(bias).sum()
    shape = tuple(input1.shape[:-1]) + (w.shape[0],)
    return cast_to_adapter_tensor(ms.ops.zeros(shape, w.dtype) + anchor * 0)


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, _original
    import mindspore
    import mindtorch.torch.nn.functional as F
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    _original = get_replaced(F, "bilinear", NAME)
    patch_attr(F, "bilinear", bilinear)


PATCH = Patch(NAME, "F.bilinear of an empty batch in PyTorch's (0, out_features) shape with zero gradients (MindTorch "
                    "gave (0, 0), its gradient raised)", "post-import", apply,
              replaces=("torch.nn.functional.bilinear",))
