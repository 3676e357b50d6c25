"""``torch.floor_divide`` / ``Tensor.floor_divide`` / ``Tensor.floor_divide_``: rounding toward minus infinity, as
PyTorch 2.x.

MindTorch 0.4.0 keeps PyTorch 1.12's rounding toward zero (``div(rounding_mode='trunc')``; its comment says "same
behavior as torch version lower than 1.13"), while PyTorch since 1.13 rounds down, as Python's ``//`` and
MindTorch's own ``a // b`` do: ``torch.floor_divide(tensor([-7., -0.5]), 2.)`` gave ``[-3., -0.]`` here, PyTorch
2.13 ``[-4., -1.]``, silently (op_db's ``floor_divide:s1`` / ``s2``: every value with a negative quotient off by 1;
``run.py conformance --opinfo``, issue 35). ``torch.floor_divide`` also raised ``RuntimeError: ZeroDivisionError``
for any zero in a float divisor; PyTorch returns ``inf`` / ``nan`` there and raises that error only for an integer
division by zero.

Here each is ``div(input, other, rounding_mode='floor')`` (the same MindSpore kernel as ``//``); an integer
division by zero raises PyTorch's ``RuntimeError: ZeroDivisionError`` (PyNative: it reads the divisor's values).

Must come after nothing. Replaces: ``torch.floor_divide``, ``torch.Tensor.floor_divide``,
``torch.Tensor.floor_divide_``.
"""
from __future__ import annotations

from . import Patch, patch_attr

NAME = "floor_divide"
# graph code below reads these module globals; set by apply()
ms = cast_to_ms_tensor = cast_to_adapter_tensor = graph_mode_condition = _out_inplace_assign = None
_tensor_inplace_assign = None


def _floor_div(input, other):  # noqa: A002 (PyTorch's names)
    x = cast_to_ms_tensor(input)
    y = cast_to_ms_tensor(other)
    if not isinstance(x, ms.Tensor):
        x = ms.Tensor(x)
    if not isinstance(y, ms.Tensor):
        y = ms.Tensor(y)
    if not graph_mode_condition() and not ms.ops.is_floating_point(x) and not ms.ops.is_floating_point(y) \
            and x.dtype != ms.bool_ and bool((y == 0).any()):
        raise RuntimeError("ZeroDivisionError")
    return ms.ops.div(x, y, rounding_mode="floor")


def floor_divide(input, other, *, out=None):  # noqa: A002
    """PyTorch's ``torch.floor_divide``: ``floor(input / other)`` elementwise, broadcast, PyTorch's result dtype."""
    return _out_inplace_assign(out, _floor_div(input, other), "floor_divide")


def tensor_floor_divide(self, other):
    """``Tensor.floor_divide``: :func:`floor_divide` of ``self``."""
    return cast_to_adapter_tensor(_floor_div(self, other))


def tensor_floor_divide_(self, other):
    """``Tensor.floor_divide_``: :func:`floor_divide` of ``self``, written into ``self``."""
    return _tensor_inplace_assign(self, tensor_floor_divide(self, other), "floor_divide_", "floor_divide")


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, graph_mode_condition, _out_inplace_assign
    global _tensor_inplace_assign
    import mindspore
    import mindtorch.torch as torch
    import mindtorch.torch.functional as functional
    from adapter import backend
    from mindtorch.torch.tensor import Tensor
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    from mindtorch.utils import graph_mode_condition as graph_mode
    ms, cast_to_ms_tensor, cast_to_adapter_tensor, graph_mode_condition = mindspore, to_ms, to_adapter, graph_mode
    _out_inplace_assign = backend.internal("out_inplace_assign")
    _tensor_inplace_assign = backend.internal("tensor_inplace_assign")
    shared = functional.floor_divide is torch.floor_divide
    patch_attr(torch, "floor_divide", floor_divide)
    if shared:
        patch_attr(functional, "floor_divide", floor_divide)
    patch_attr(Tensor, "floor_divide", tensor_floor_divide)
    patch_attr(Tensor, "floor_divide_", tensor_floor_divide_)


PATCH = Patch(NAME, "torch.floor_divide / Tensor.floor_divide(_) round toward minus infinity as PyTorch 2.x (MindTorch "
                    "rounded toward zero, PyTorch 1.12's rule: off by 1 for every negative quotient, silently); a zero "
                    "float divisor gives inf/nan, an integer one raises ZeroDivisionError",
              "post-import", apply,
              replaces=("torch.floor_divide", "torch.functional.floor_divide", "torch.Tensor.floor_divide",
                        "torch.Tensor.floor_divide_"))
