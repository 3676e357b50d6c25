"""``torch.fmin`` / ``Tensor.fmin`` with a gradient, as PyTorch.

MindTorch 0.4.0 computes ``Tensor.fmin`` (which ``torch.fmin`` calls) with a numpy cell that has no backward: every
``backward()`` through it raised ``RuntimeError: [numpy backward issue.] For 'fmin', it can not backward`` (found by
PyTorch's OpInfo samples, ``run.py conformance --opinfo``, issue 35).

PyTorch 2.13's ``fmin(a, b)``: the element-wise minimum where a NaN loses to a number (NaN only where both are NaN);
operands broadcast; the gradient goes to ``a`` where ``a <= b`` or ``b`` is NaN, else to ``b`` (ties to ``a``).
Here: ``torch.where((a <= b) | isnan(b), a, b)``, whose gradient is exactly that split (and sums over broadcast
dimensions). Integer and bool operands (no NaN) use ``a <= b`` alone.

Replaces: ``torch.Tensor.fmin``.
"""
from . import Patch, patch_attr

NAME = "fmin_grad"
torch = None  # mindtorch.torch, set by apply()


def tensor_fmin(self, other):
    """``Tensor.fmin`` with PyTorch's gradient (module docstring)."""
    if not isinstance(other, torch.Tensor):
        raise TypeError(f"fmin(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    keep = self <= other
    if other.is_floating_point():
        keep = keep | other.isnan()
    return torch.where(keep, self, other)


def apply() -> None:
    global torch
    import mindtorch.torch
    torch = mindtorch.torch
    from mindtorch.torch.tensor import Tensor
    patch_attr(Tensor, "fmin", tensor_fmin)


PATCH = Patch(NAME, "torch.fmin / Tensor.fmin with PyTorch's gradient (MindTorch's numpy cell raised on backward)",
              "post-import", apply, replaces=("torch.Tensor.fmin",))
