"""``F.soft_margin_loss``, ``F.multilabel_margin_loss`` and unbatched ``F.multi_margin_loss`` from PyTorch's closed
forms (and ``nn.SoftMarginLoss`` / ``nn.MultiLabelMarginLoss`` / ``nn.MultiMarginLoss``, which call them).

MindTorch 0.4.0 calls MindSpore kernels that do not run here: ``soft_margin_loss`` raises ``The kernel
SoftMarginLoss unregistered.`` on CPU for every call, ``multilabel_margin_loss`` raises MindSpore's ``RuntimeError``
for every input (and ``ValueError: ... rank ... should be 1 or 2`` for a 0-d one), and ``multi_margin_loss`` of an
unbatched ``(C,)`` input with a ``(1,)`` target or of a 0-d input raises (``rank of x and target should be 2 and 1``;
``IndexError: tuple index out of range``). Found by op_db's ``nn.functional.soft_margin_loss``,
``nn.functional.multilabel_margin_loss``, ``nn.functional.multi_margin_loss`` samples (``run.py conformance
--opinfo``, issue 35).

PyTorch's definitions (the ``nn.SoftMarginLoss``, ``nn.MultiLabelMarginLoss``, ``nn.MultiMarginLoss`` documentation;
ATen's CPU kernels for the forms of the sums), written here with tensor operations, whose autograd gives the
gradients:

* soft margin: ``log(1 + exp(-y * x))`` element-wise (``log1p(exp(.))``, as ATen), then the reduction;
* multi-label margin, per sample of ``C`` classes: the targets are ``y[0..k)``, up to the first ``-1``;
  ``sum_j sum_{i not a target} max(0, 1 - (x[y_j] - x[i])) / C`` (a repeated target counts each time, as ATen's
  loop);
* multi-class margin, per sample: ``sum_{i != y} w[y] * max(0, margin - x[y] + x[i])^p / C``; an input of shape
  ``(C,)`` or ``()`` is one sample, and ``reduction="none"`` gives the target's shape.

``reduction`` and the legacy ``size_average``/``reduce`` as PyTorch's. ``multi_margin_loss`` of a batched ``(N, C)``
input goes to MindTorch unchanged (it runs). PyNative only: in a compiled function the unwrapped original runs and
raises, so ``run.py`` runs that step eagerly.

Replaces: ``torch.nn.functional.soft_margin_loss``, ``torch.nn.functional.multilabel_margin_loss``,
``torch.nn.functional.multi_margin_loss``.
"""
import functools

from . import Patch
from ._wrap_once import wrap_attr

NAME = "margin_losses"
torch = None  # mindtorch.torch, bound by apply()


def _reduction(size_average, reduce, reduction: str) -> str:
    """PyTorch's legacy ``size_average``/``reduce`` pair to a ``reduction`` string (``_Reduction.legacy_get_string``'s
    rule: each defaults to True; ``reduce=False`` is ``"none"``, else ``size_average`` picks mean or sum)."""
    if size_average is None and reduce is None:
        if reduction not in ("none", "mean", "sum"):
            raise ValueError(f"{reduction} is not a valid value for reduction")
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else "mean" if size_average else "sum"


def _reduce(loss, reduction: str):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _soft_margin(original):
    @functools.wraps(original)
    def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
        reduction = _reduction(size_average, reduce, reduction)
        return _reduce(torch.log1p(torch.exp(-target * input)), reduction)
    return soft_margin_loss


def _multilabel(original):
    @functools.wraps(original)
    def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
        reduction = _reduction(size_average, reduce, reduction)
        if input.dim() > 2 or target.shape != input.shape:
            raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                               f"{list(input.shape)}")
        shape = tuple(target.shape[:-1]) if input.dim() == 2 else ()
        classes = input.shape[-1] if input.dim() else 1
        x = input.reshape(-1, classes)
        y = target.reshape(-1, classes).to(torch.int64)
        valid = torch.cumprod((y != -1).to(x.dtype), dim=1)  # 1 up to the first -1, then 0
        picked = torch.nn.functional.one_hot(y.clamp(min=0), classes).to(x.dtype) * valid.unsqueeze(-1)
        is_target = (picked.sum(dim=1) > 0).to(x.dtype)  # (N, C)
        x_target = torch.gather(x, 1, y.clamp(min=0))  # (N, T)
        hinge = torch.clamp(1 - x_target.unsqueeze(-1) + x.unsqueeze(1), min=0)  # (N, T, C)
        hinge = hinge * valid.unsqueeze(-1) * (1 - is_target).unsqueeze(1)
        loss = hinge.sum(dim=(1, 2)) / classes
        return _reduce(loss.reshape(shape), reduction)
    return multilabel_margin_loss


def _multi_margin(original):
    @functools.wraps(original)
    def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,  # noqa: A002
                          reduction="mean"):
        if input.dim() >= 2:
            return original(input, target, p, margin, weight, size_average, reduce, reduction)
        reduction = _reduction(size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        classes = input.shape[-1] if input.dim() else 1
        if target.numel() != 1:
            raise RuntimeError(f"inconsistent target size, expected 1 but got {list(target.shape)}")
        x = input.reshape(1, classes)
        y = target.reshape(1, 1).to(torch.int64)
        x_target = torch.gather(x, 1, y)
        hinge = torch.clamp(margin - x_target + x, min=0)
        if p == 2:
            hinge = hinge * hinge
        if weight is not None:
            hinge = hinge * torch.gather(weight.reshape(1, -1), 1, y)
        others = 1 - torch.nn.functional.one_hot(y.reshape(1), classes).to(x.dtype)
        loss = (hinge * others).sum(dim=1) / classes
        return _reduce(loss.reshape(tuple(target.shape)), reduction)
    return multi_margin_loss


def apply() -> None:
    global torch
    import mindtorch.torch as mt
    import mindtorch.torch.nn.functional as F
    torch = mt
    wrap_attr(F, "soft_margin_loss", NAME, _soft_margin)
    wrap_attr(F, "multilabel_margin_loss", NAME, _multilabel)
    wrap_attr(F, "multi_margin_loss", NAME, _multi_margin)


PATCH = Patch(NAME, "F.soft_margin_loss, F.multilabel_margin_loss, unbatched F.multi_margin_loss from PyTorch's "
                    "closed forms (MindSpore's kernels raised: 'SoftMarginLoss unregistered' on CPU, ...)",
              "post-import", apply,
              replaces=("torch.nn.functional.soft_margin_loss", "torch.nn.functional.multilabel_margin_loss",
                        "torch.nn.functional.multi_margin_loss"))
