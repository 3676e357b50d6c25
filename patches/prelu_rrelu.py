"""``F.prelu`` for every input and weight shape PyTorch takes, and ``F.rrelu`` / ``nn.RReLU`` as PyTorch defines
them in training and in evaluation.

PyTorch (``nn.PReLU``/``nn.RReLU`` documentation; ATen's ``prelu`` and ``rrelu_with_noise``):

* ``prelu(x, w)``: ``x`` where ``x > 0``, else ``w * x``; ``w`` is a scalar (0-d or one element) or one value per
  channel, the channel being dimension 1 (an input of fewer than 2 dimensions has one channel). Errors:
  ``RuntimeError`` "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {n}", "Mismatch of
  parameter numbers and input channel size. Found parameter numbers = {w} and channel size = {c}.", and "Not allow
  zero-dim input tensor." for a 0-d input with more than one weight.
* ``rrelu(x, lower, upper, training)``: ``x`` where ``x > 0``, else ``x * a``, with ``a`` drawn uniformly from
  ``[lower, upper]`` for each element in training, and ``a = (lower + upper) / 2`` in evaluation (``training=False``,
  the default; ``nn.RReLU`` passes ``self.training``). ``lower > upper``: ``RuntimeError: Lower bound should be less
  than or equal to the upper bound``. ``inplace=True`` writes the result into ``x``.

MindTorch 0.4.0 differs: ``F.prelu`` raises ``The dimension of 'weight' must be 1`` for a 0-d weight (what
``nn.PReLU`` holds after ``torch.load`` of a scalar, and op_db's samples), and fails for 0-d or empty inputs;
``F.rrelu(training=True)`` raises ``training 'True' is not currently supported.``; and ``F.rrelu`` in evaluation and
``nn.RReLU`` in both modes call MindSpore's ``ops.rrelu``, which draws a random slope every call: in evaluation the
result was random where PyTorch's is fixed, silently (``F.rrelu(-torch.ones(6), 0.1, 0.3)`` gave six different
values; PyTorch gives ``-0.2`` six times). Found by op_db's ``nn.functional.prelu`` and ``nn.functional.rrelu``
samples (``run.py conformance --opinfo``, issue 35).

Here both are written with tensor operations (``where``, a product; the draw is ``torch.rand_like`` of the input
scaled to ``[lower, upper]``), whose autograd gives PyTorch's gradients (``1`` where ``x > 0``, else ``w`` or the
drawn ``a``; ``w``'s gradient sums ``x`` over the non-positive elements). They are plain functions (no
``__wrapped__``): a compiled graph compiles them too.

Replaces: ``torch.nn.functional.prelu``, ``torch.nn.functional.rrelu``, ``torch.nn.RReLU.forward``.
"""
from . import Patch, patch_attr

NAME = "prelu_rrelu"
torch = None  # mindtorch.torch, bound by apply()


def prelu(input, weight):  # noqa: A002 (PyTorch's names)
    """PyTorch's ``F.prelu`` (module docstring)."""
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    count = weight.numel()
    if input.dim() == 0 and count != 1:
        raise RuntimeError("Not allow zero-dim input tensor.")
    channels = input.shape[1] if input.dim() >= 2 else 1
    if count != 1 and count != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {count} "
                           f"and channel size = {channels}.")
    if count == 1:
        slope = weight.reshape(())
    else:
        slope = weight.reshape((1, channels) + (1,) * (input.dim() - 2))
    return torch.where(input > 0, input, slope * input)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):  # noqa: A002 (PyTorch's names)
    """PyTorch's ``F.rrelu`` (module docstring)."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if training:
        # drawn flat: MindTorch's rand_like of a 0-d tensor raises (np.random.rand() is a float, not an array)
        slope = (torch.rand_like(input.reshape(-1)) * (upper - lower) + lower).reshape(input.shape)
    else:
        slope = (lower + upper) / 2
    out = torch.where(input > 0, input, input * slope)
    if inplace:
        return input.copy_(out)
    return out


def rrelu_forward(self, input):  # noqa: A002 (PyTorch's name)
    """``nn.RReLU.forward``: ``F.rrelu`` with the module's bounds and ``self.training`` (module docstring)."""
    return rrelu(input, self.lower, self.upper, self.training, self.inplace)


def apply() -> None:
    global torch
    import mindtorch.torch as mt
    import mindtorch.torch.nn.functional as F
    torch = mt
    patch_attr(F, "prelu", prelu)
    patch_attr(F, "rrelu", rrelu)
    patch_attr(mt.nn.RReLU, "forward", rrelu_forward)


PATCH = Patch(NAME, "F.prelu with a 0-d weight / 0-d or empty input, F.rrelu and nn.RReLU in training and "
                    "evaluation as PyTorch (MindTorch raised for training and drew a random slope in evaluation)",
              "post-import", apply,
              replaces=("torch.nn.functional.prelu", "torch.nn.functional.rrelu", "torch.nn.RReLU.forward"))
