"""The input gradients of the piecewise-linear activations at their kinks, and of a NaN input, as PyTorch's:
``F.hardtanh``/``nn.Hardtanh``, ``F.relu6``/``nn.ReLU6``, ``F.leaky_relu``/``nn.LeakyReLU``, ``F.hardswish``/
``nn.Hardswish``, ``F.hardsigmoid``/``nn.Hardsigmoid`` (the in-place forms too: ``F.hardtanh_``/``F.leaky_relu_``
call the functions replaced here). PyNative and compiled.

MindSpore's kernels (2.10.0 and 2.5-dev alike), for ``x = [-4, -3, 0, 3, 4, nan]`` and the output gradient
``[1, 2, 3, 4, 5, 6]``:

* ``hardtanh(x, -3, 3)`` gave ``[0, 1, 3, 2, 0, 6]``: half the gradient at exactly ``min_val`` and ``max_val`` (a
  ``maximum``/``minimum`` pair splitting a tie); PyTorch's ``hardtanh_backward`` passes it only where
  ``min_val < x < max_val`` (and for NaN, where neither ``x <= min_val`` nor ``x >= max_val``): ``[0, 0, 3, 0, 0, 6]``.
  ``relu6`` (= ``hardtanh(x, 0, 6)`` in PyTorch) passed the whole gradient at exactly 6 (PyTorch: 0); float64
  ``relu6`` raised (MindSpore's ``ReLU6`` takes float16/float32 only);
* ``leaky_relu(x, 0.1)`` is MindSpore's ``maximum(x, 0.1 * x)``: at exactly 0 the gradient was ``(1 + 0.1) / 2``
  of the incoming one, at NaN ``1.1`` times it; PyTorch's ``leaky_relu_backward`` is ``x > 0 ? g : g * slope``
  (0 and NaN take the slope): ``[0.1, 0.2, 0.3, 4, 5, 0.6]``, here ``[.., 1.65, .., 6.6]``;
* ``hardswish`` gave ``[0, -1, 1.5, 6, 5, nan]``; PyTorch's ``hardswish_backward``: 0 for ``x <= -3``,
  ``g * (x / 3 + 0.5)`` for ``x < 3``, ``g`` otherwise (3 and NaN included): ``[0, 0, 1.5, 4, 5, 6]``;
* ``hardsigmoid``: the gradient at NaN was ``g / 6``; PyTorch's ``hardsigmoid_backward`` passes ``g / 6`` only for
  ``-3 < x < 3``, 0 elsewhere (NaN included).

How: each is computed here as ``where`` of comparisons of the input (MindSpore ops, static shapes, so the same
functions compile in a graph), so that MindSpore's differentiation of ``where`` gives exactly PyTorch's masks:
``hardtanh = where(x <= lo, lo, where(x >= hi, hi, x))`` (NaN: ``x``, gradient passed), ``leaky_relu = where(x > 0,
x, x * slope)``, ``hardswish = where(x <= -3, x * 0, where(x < 3, x * (x + 3) / 6, x))``, ``hardsigmoid =
where(-3 < x < 3, (x + 3) / 6, stop_gradient(0, 1 or NaN))``. The values are PyTorch's formulas
(``aten/src/ATen/native/cpu/Activation.cpp``); with ``inplace=True`` in PyNative the result is ``copy_``-ed into the
input (its gradient reaches the input's earlier value), in a graph ``inplace`` is functional. Integer inputs, and a
``hardtanh`` whose ``min_val > max_val`` (``input_checks``'s error), go to the replaced functions unchanged.

Must come after ``input_checks``, ``torch_errors`` and ``nan_propagation``, which replaced some
of these names before (their replacement is called for what this patch does not compute: integer inputs, errors).
Replaces ``torch.nn.functional.X`` for X in :data:`FUNCTIONS` and ``torch.nn.M.forward`` for M in :data:`MODULES`.
"""
from __future__ import annotations

from . import Patch, get_replaced, patch_attr

NAME = "activation_kinks"
ms = cast_to_ms_tensor = cast_to_adapter_tensor = pynative_mode_condition = None  # set by apply()

FUNCTIONS = ("hardtanh", "relu6", "leaky_relu", "hardswish", "hardsigmoid")
_ONE_SIXTH = 0.1666666716337204  # float32(1/6): PyTorch's hardsigmoid_backward multiplies by it (float64 too)
MODULES = {"Hardtanh": "hardtanh", "ReLU6": "relu6", "LeakyReLU": "leaky_relu", "Hardswish": "hardswish",
           "Hardsigmoid": "hardsigmoid"}


# -- the formulas, on MindSpore tensors (graph code) -----------------------------------------------------------------
def _hardtanh_ms(xm, lo, hi):
    """``hardtanh`` of floating ``xm`` (any shape, its dtype): ``lo`` where ``x <= lo``, ``hi`` where ``x >= hi``, else
    ``x`` (NaN included); the gradient passes only to the last (PyTorch's ``hardtanh_backward``)."""
    high = ms.ops.where(xm >= hi, ms.ops.full_like(xm, hi), xm)
    return ms.ops.where(xm <= lo, ms.ops.full_like(xm, lo), high)


def _leaky_relu_ms(xm, slope):
    """``x`` where ``x > 0``, else ``x * slope`` (0 and NaN: the slope's side, as PyTorch's ``leaky_relu_backward``)."""
    return ms.ops.where(xm > 0, xm, xm * ms.ops.full_like(xm, slope))  # a float64 input: a float64 slope


def _hardswish_ms(xm):
    """PyTorch's ``x * min(max(x + 3, 0), 6) / 6`` (that rounding: ``x >= 3`` gives ``x * 6 / 6``, -0.0 for
    ``x <= -3 < 0``), with the gradient 0 for ``x <= -3``, ``g * (x / 3 + 0.5)`` for ``x < 3``, ``g`` otherwise (NaN
    included), PyTorch's ``hardswish_backward``: ``value + (x - stop_gradient(x)) * factor``, the added term 0
    (infinite inputs: no gradient)."""
    frozen = ms.ops.stop_gradient(xm)
    value = frozen * _hardtanh_ms(frozen + 3.0, 0.0, 6.0) / 6.0
    below = frozen < 3.0
    factor = ms.ops.where(below, frozen / 3.0 + 0.5, ms.ops.ones_like(frozen))
    finite = ms.ops.where(ms.ops.isinf(xm), ms.ops.zeros_like(xm), xm)
    moving = value + (finite - ms.ops.stop_gradient(finite)) * ms.ops.stop_gradient(factor)
    return ms.ops.where(frozen <= -3.0, value, moving)


def _hardsigmoid_ms(xm):
    """``relu6(x + 3) / 6``: ``(x + 3) / 6`` for ``-3 < x < 3``, else 0, 1 or NaN without gradient (PyTorch's
    ``hardsigmoid_backward``). The gradient inside is ``g * float32(1/6)`` for every dtype, as PyTorch's kernel's
    ``one_sixth`` constant (float64 too: measured); ``x - stop_gradient(x)`` is 0, so the value is ``(x + 3) / 6``."""
    inside = ms.ops.logical_and(xm > -3.0, xm < 3.0)
    outside = ms.ops.where(xm >= 3.0, ms.ops.ones_like(xm), ms.ops.where(xm <= -3.0, ms.ops.zeros_like(xm), xm))
    xs = ms.ops.where(inside, xm, ms.ops.zeros_like(xm))
    ramp = ms.ops.stop_gradient((xs + 3.0) / 6.0) + (xs - ms.ops.stop_gradient(xs)) * ms.ops.full_like(xs, _ONE_SIXTH)
    return ms.ops.where(inside, ramp, ms.ops.stop_gradient(outside))


def _floating(xm):
    return isinstance(xm, ms.Tensor) and ms.ops.is_floating_point(xm)


def _finish(input, inplace, out):  # noqa: A002 (PyTorch's name)
    """``out`` (a MindSpore tensor) as the activation's result: written into ``input`` with ``inplace`` in PyNative."""
    if inplace and pynative_mode_condition():
        input.copy_(cast_to_adapter_tensor(out))
        return input
    return cast_to_adapter_tensor(out)


# -- the replacements ------------------------------------------------------------------------------------------------
def _make_function(name, replaced):
    if name == "hardtanh":
        def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):  # noqa: A002 (PyTorch's names)
            xm = cast_to_ms_tensor(input)
            if not _floating(xm) or min_val > max_val:
                return replaced(input, min_val, max_val, inplace)
            return _finish(input, inplace, _hardtanh_ms(xm, min_val, max_val))
        return hardtanh
    if name == "relu6":
        def relu6(input, inplace=False):  # noqa: A002
            xm = cast_to_ms_tensor(input)
            if not _floating(xm):
                return replaced(input, inplace)
            return _finish(input, inplace, _hardtanh_ms(xm, 0.0, 6.0))
        return relu6
    if name == "leaky_relu":
        def leaky_relu(input, negative_slope=0.01, inplace=False):  # noqa: A002
            xm = cast_to_ms_tensor(input)
            if not _floating(xm):
                return replaced(input, negative_slope, inplace)
            return _finish(input, inplace, _leaky_relu_ms(xm, negative_slope))
        return leaky_relu
    if name == "hardswish":
        def hardswish(input, inplace=False):  # noqa: A002
            xm = cast_to_ms_tensor(input)
            if not _floating(xm):
                return replaced(input, inplace)
            return _finish(input, inplace, _hardswish_ms(xm))
        return hardswish

    def hardsigmoid(input, inplace=False):  # noqa: A002
        xm = cast_to_ms_tensor(input)
        if not _floating(xm):
            return replaced(input, inplace)
        return _finish(input, inplace, _hardsigmoid_ms(xm))
    return hardsigmoid


def _make_forward(cls, replaced):
    """``nn.<cls>.forward``: the same formulas with the module's settings; a non-floating input goes to ``replaced``."""
    if cls == "Hardtanh":
        def forward(self, input):  # noqa: A002
            xm = cast_to_ms_tensor(input)
            if not _floating(xm):
                return replaced(self, input)
            return _finish(input, self.inplace, _hardtanh_ms(xm, self.min_val, self.max_val))
    elif cls == "ReLU6":
        def forward(self, input):  # noqa: A002
            xm = cast_to_ms_tensor(input)
            if not _floating(xm):
                return replaced(self, input)
            return _finish(input, self.inplace, _hardtanh_ms(xm, 0.0, 6.0))
    elif cls == "LeakyReLU":
        def forward(self, input):  # noqa: A002
            xm = cast_to_ms_tensor(input)
            if not _floating(xm):
                return replaced(self, input)
            return _finish(input, self.inplace, _leaky_relu_ms(xm, self.negative_slope))
    elif cls == "Hardswish":
        def forward(self, input):  # noqa: A002
            xm = cast_to_ms_tensor(input)
            if not _floating(xm):
                return replaced(self, input)
            return _finish(input, self.inplace, _hardswish_ms(xm))
    else:
        def forward(self, input):  # noqa: A002
            xm = cast_to_ms_tensor(input)
            if not _floating(xm):
                return replaced(self, input)
            return _finish(input, self.inplace, _hardsigmoid_ms(xm))
    return forward


_made: dict = {}  # (id(owner), name, replaced) -> replacement: applied again, the patch installs the same objects


def _install(owner, name, make):
    replaced = get_replaced(owner, name, NAME)
    key = (id(owner), name, replaced)
    if key not in _made:
        _made[key] = make(replaced)
    patch_attr(owner, name, _made[key])


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, pynative_mode_condition
    import mindspore
    import mindtorch.torch.nn as nn
    import mindtorch.torch.nn.functional as F
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    from mindtorch.utils import pynative_mode_condition as pynative
    ms, cast_to_ms_tensor, cast_to_adapter_tensor, pynative_mode_condition = mindspore, to_ms, to_adapter, pynative
    for name in FUNCTIONS:
        _install(F, name, lambda replaced, name=name: _make_function(name, replaced))
    for cls in MODULES:
        _install(getattr(nn, cls), "forward", lambda replaced, cls=cls: _make_forward(cls, replaced))


PATCH = Patch(NAME, "hardtanh/relu6/leaky_relu/hardswish/hardsigmoid (functions and modules) give PyTorch's input "
                    "gradient at their kinks and at NaN (MindSpore's: half the gradient at exactly min_val/max_val, "
                    "the whole at relu6's 6, (1 + slope) / 2 at leaky_relu's 0, silently); float64 relu6; PyNative "
                    "and compiled",
              "post-import", apply,
              replaces=tuple(f"torch.nn.functional.{n}" for n in FUNCTIONS)
              + tuple(f"torch.nn.{cls}.forward" for cls in MODULES),
              after=("input_checks", "torch_errors", "nan_propagation"))
