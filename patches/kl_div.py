"""``F.kl_div`` / ``nn.KLDivLoss`` with ``log_target=False`` (the default): PyTorch's gradient with respect to the
target.

MindTorch 0.4.0 calls MindSpore's ``ops.kl_div``, whose ``KLDivLoss`` primitive differentiates the input only: the
target's gradient was 0, silently (op_db's ``nn.functional.kl_div:s1``, ``reduction='none'``: both values off, up to
4.5; ``run.py conformance --opinfo``, issue 35). A target that requires grad is the usual case in distillation
between two trained networks and in symmetric KL terms (``kl_div(p.log(), q) + kl_div(q.log(), p)``).

PyTorch 2.13 (``aten/src/ATen/native/Loss.cpp``, ``kl_div``): ``loss = xlogy(target, target) - target * input``
(0 where the target is 0), then ``'none'`` / ``'sum'`` / ``'mean'`` (over all elements) / ``'batchmean'`` (the sum
divided by ``input.size(0)``, handled in ``torch/nn/functional.py``). Here that composition of MindSpore ops: its
derivative is PyTorch's in both arguments (``-target`` for the input, ``log(target) + 1 - input`` for the target).
``log_target=True`` stays MindTorch's (already that composition, with both gradients). The legacy ``size_average`` /
``reduce`` map to ``reduction`` as MindTorch did.

Must come after nothing. Replaces: ``torch.nn.functional.kl_div``.
"""
from __future__ import annotations

from . import Patch, get_replaced, patch_attr

NAME = "kl_div"
# graph code below reads these module globals; set by apply()
ms = cast_to_ms_tensor = cast_to_adapter_tensor = _get_reduce_string = None
_original = None


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):  # noqa: A002
    """PyTorch's ``F.kl_div`` (module docstring); the loss of ``reduction``, in the input's dtype."""
    if log_target:
        return _original(input, target, size_average, reduce, reduction, log_target)
    if size_average is not None or reduce is not None:
        reduction = _get_reduce_string(size_average, reduce)
    x = cast_to_ms_tensor(input)
    t = cast_to_ms_tensor(target)
    # xlogy(t, t): 0 at t == 0 (MindSpore's Xlogy gives nan there); its gradient there is nan, as PyTorch's
    entropy = ms.ops.select(t == 0, ms.ops.zeros_like(t), t * ms.ops.log(t))
    loss = entropy - t * x
    if reduction == "none":
        out = loss
    elif reduction == "sum":
        out = loss.sum()
    elif reduction == "mean":
        out = loss.mean()
    elif reduction == "batchmean":
        out = loss.sum() / x.shape[0] if x.ndim else loss.sum()
    else:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return cast_to_adapter_tensor(out)


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, _get_reduce_string, _original
    import mindspore
    import mindtorch.torch.nn.functional as F
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    from adapter import backend
    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    _get_reduce_string = backend.internal("get_reduce_string")
    _original = get_replaced(F, "kl_div", NAME)
    patch_attr(F, "kl_div", kl_div)


PATCH = Patch(NAME, "F.kl_div (log_target=False) differentiates the target as PyTorch (MindSpore's KLDivLoss gave it "
                    "0, silently)", "post-import", apply, replaces=("torch.nn.functional.kl_div",))
