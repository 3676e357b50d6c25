"""``F.selu`` / ``F.mish`` / ``F.tanhshrink`` (and ``nn.SELU`` / ``nn.Mish`` / ``nn.Tanhshrink``, ``torch.selu``):
PyTorch's values and gradients, not MindSpore's kernels'.

Found by PyTorch's OpInfo samples (``run.py conformance --opinfo``, issue 35), silently wrong, PyNative and compiled:

* ``selu``: MindSpore's ``SeLUGrad`` on CPU gives a wrong input gradient for every ``x <= 0`` (op_db's
  ``nn.functional.selu:s0``: 11 of 20 values off, up to 1.17; at ``x = -3`` -0.705 where PyTorch's is
  ``scale * alpha * exp(-3) = 0.0875``; at ``x = 0`` 1.0507, PyTorch's ``scale * alpha = 1.7581``);
* ``mish``: MindSpore's ``MishGrad`` is off by up to 1.1e-3 (6 of 20 values of ``nn.functional.mish:s0``);
* ``tanhshrink``: MindSpore's ``TanhShrink`` kernel is off by up to 9.2e-5 (2.3e-5 relative) in value and 2.4e-4 in
  gradient.

PyTorch 2.13's definitions (CPU, float32): ``selu(x) = scale * (x if x > 0 else alpha * expm1(x))`` with the input
gradient ``scale`` for ``x > 0``, ``scale * alpha * exp(x)`` for ``x <= 0`` (the ``x <= 0`` branch at 0);
``mish(x) = x * tanh(softplus(x))``, gradient ``tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2)``;
``tanhshrink(x) = x - tanh(x)``, the gradient that of the composition. Here each is that composition of MindSpore
ops, so its automatic derivative is PyTorch's formula (second derivatives too, where the kernels had none to
check). ``selu``'s ``expm1`` takes ``where(x > 0, 0, x)``: a large positive input never reaches ``exp`` (no 0 * inf
in the gradient). ``inplace=True`` writes the result into the input as MindTorch does.

Must come after nothing (MindTorch's functions are replaced outright; ``nn.SELU`` / ``nn.Mish`` / ``nn.Tanhshrink``
call them through ``F`` at call time). The replacements are plain functions, compiled in graphs as in PyNative.

Replaces: ``torch.nn.functional.selu``, ``torch.nn.functional.mish``, ``torch.nn.functional.tanhshrink``,
``torch.selu``.
"""
from __future__ import annotations

from . import Patch, get_replaced, patch_attr

NAME = "activation_grads"
# graph code below reads these module globals; set by apply()
ms = cast_to_ms_tensor = cast_to_adapter_tensor = _inplace_assign_pynative = None

# torch.nn.functional.selu's constants (the SELU paper's, as PyTorch writes them)
_ALPHA = 1.6732632423543772848170429916717
_SCALE = 1.0507009873554804934193349852946


def _wide(x):
    """``x`` in float64 where it is a narrower float: MindSpore's float32 ``Expm1``, ``Tanh`` and ``Softplus``
    kernels are up to ~1e-6 off (``expm1(-1e-3)`` is ``exp(x) - 1``'s 1e-5-relative value), and ``x - tanh(x)``
    turns that into 2e-5 relative; in float64, rounded back, each is within an ulp of PyTorch's."""
    return x.astype(ms.float64) if x.dtype in (ms.float32, ms.float16, ms.bfloat16) else x


def selu(input, inplace=False):  # noqa: A002 (PyTorch's name)
    """PyTorch's ``F.selu`` (module docstring): elementwise, the input's shape and floating dtype."""
    x = cast_to_ms_tensor(input)
    positive = x > 0
    wide = _wide(ms.ops.select(positive, ms.ops.zeros_like(x), x))
    negative = ms.ops.expm1(wide).astype(x.dtype) * _ALPHA
    out = ms.ops.select(positive, x, negative) * _SCALE
    return _inplace_assign_pynative(input, inplace, out, "selu")


def mish(input, inplace=False):  # noqa: A002
    """PyTorch's ``F.mish`` (module docstring): ``x * tanh(softplus(x))``, the input's shape and dtype."""
    x = cast_to_ms_tensor(input)
    out = x * ms.ops.tanh(ms.ops.softplus(_wide(x))).astype(x.dtype)
    return _inplace_assign_pynative(input, inplace, out, "mish")


def tanhshrink(input):  # noqa: A002
    """PyTorch's ``F.tanhshrink`` (module docstring): ``x - tanh(x)``; integer inputs as float32, as MindTorch."""
    x = cast_to_ms_tensor(input)
    if x.dtype not in (ms.float16, ms.float32, ms.float64, ms.bfloat16):
        x = x.astype(ms.float32)
    return cast_to_adapter_tensor(x - ms.ops.tanh(_wide(x)).astype(x.dtype))


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, _inplace_assign_pynative
    import mindspore
    import mindtorch.torch as torch
    import mindtorch.torch.nn.functional as F
    from adapter import backend
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    _inplace_assign_pynative = backend.internal("inplace_assign_pynative")
    shared_selu = getattr(torch, "selu", None) is get_replaced(F, "selu", NAME)
    patch_attr(F, "selu", selu)
    patch_attr(F, "mish", mish)
    patch_attr(F, "tanhshrink", tanhshrink)
    if shared_selu:
        patch_attr(torch, "selu", selu)


PATCH = Patch(NAME, "F.selu/F.mish/F.tanhshrink as PyTorch's compositions: MindSpore's SeLUGrad was wrong for every "
                    "x <= 0 (up to 1.17, silently), MishGrad off by 1e-3, the TanhShrink kernel by 2e-5 relative",
              "post-import", apply,
              replaces=("torch.nn.functional.selu", "torch.nn.functional.mish", "torch.nn.functional.tanhshrink",
                        "torch.selu"))
