"""``F.pad(x, pad, "constant", value)``: a gradient that stays right on every call of a compiled step.

MindTorch 0.4.0 calls MindSpore's ``ops.pad``. Its gradient in a compiled graph is right on the first call and wrong
from the second call on (MindSpore 2.5-dev and 2.10.0; a jitted ``mindspore.grad`` of
``ops.pad(t, (0, 0, 0, 0, 2, 2))`` had max error 0.0 on call 1 and 2.4-3.0 after), so a compiled training step with
the CIFAR resnet20 option-A shortcut ``F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, planes // 4, planes // 4))`` drifted
from PyTorch at its third step, silently (tests/test_constant_pad.py).

Replaces ``torch.nn.functional.pad`` (and the same function imported by ``torch.nn.modules.padding``, used by
``nn.ZeroPad2d`` / ``nn.ConstantPad*d``): mode ``"constant"`` is computed as PyTorch defines it, per padded
dimension (last dimension first, ``pad = (left_last, right_last, left_second_last, ...)``): a negative amount crops
(``ops.narrow``), a positive one concatenates a block filled with ``value`` (default 0) of the input's dtype
(``ops.concat``). Both have exact gradients (the incoming gradient sliced back). Other modes call MindTorch's
function unchanged.

Raises ValueError as PyTorch does when ``len(pad)`` is odd or larger than twice ``input.ndim``, or when a crop
leaves a dimension of negative size.
"""
from __future__ import annotations

from . import Patch, get_original, patch_attr

ms = cast_to_ms_tensor = cast_to_adapter_tensor = None  # bound by apply()
_original_pad = None


def _pad_plan_python(shape, pad):
    """Per padded dimension, ``(dim, left, right)``, after PyTorch's checks (module docstring). Constant-folded."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2 != 0:
        raise ValueError(f"Padding length must be divisible by 2, but got {len(pad)}")
    if len(pad) // 2 > len(shape):
        raise ValueError(f"Padding length should be less than or equal to two times the input dimension but got "
                         f"padding length {len(pad)} and input of dimension {len(shape)}")
    plan = []
    for i in range(len(pad) // 2):
        dim = len(shape) - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        if shape[dim] + left + right < 0:
            raise ValueError(f"The input size {shape[dim]}, plus negative padding {left} and {right} resulted in a "
                             f"negative output size, which is invalid. Check dimension {dim} of your input.")
        plan.append((dim, left, right))
    return tuple(plan)


_pad_plan = _pad_plan_python  # a constexpr of it, bound by apply()


def _fill(x, dim, size, value):
    shape = list(x.shape)
    shape[dim] = size
    return ms.ops.zeros(tuple(shape), x.dtype) + ms.ops.cast(ms.Tensor(value), x.dtype)


def _constant_pad(x, pad, value):
    """``x`` (MindSpore tensor, any shape) padded/cropped per ``pad`` with ``value`` (float)."""
    for dim, left, right in _pad_plan(x.shape, pad):
        if left < 0:
            x = ms.ops.narrow(x, dim, -left, x.shape[dim] + left)
        if right < 0:
            x = ms.ops.narrow(x, dim, 0, x.shape[dim] + right)
        if left > 0 and right > 0:
            x = ms.ops.concat((_fill(x, dim, left, value), x, _fill(x, dim, right, value)), dim)
        elif left > 0:
            x = ms.ops.concat((_fill(x, dim, left, value), x), dim)
        elif right > 0:
            x = ms.ops.concat((x, _fill(x, dim, right, value)), dim)
    return x


def pad(input, pad, mode="constant", value=None):  # noqa: A002 (PyTorch's names)
    """MindTorch's ``F.pad``; mode ``"constant"`` by concatenation and narrowing (module docstring)."""
    if mode != "constant":
        return _original_pad(input, pad, mode, value)
    if value is None:
        value = 0.0
    return cast_to_adapter_tensor(_constant_pad(cast_to_ms_tensor(input), pad, value))


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, _original_pad, _pad_plan
    import mindspore
    import mindtorch.torch.nn.functional as F
    import mindtorch.torch.nn.modules.padding as padding
    from mindspore.ops.primitive import constexpr
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter, cast_to_ms_tensor as to_ms
    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    _pad_plan = constexpr(_pad_plan_python)
    _original_pad = get_original(F, "pad")
    pad.__doc__ = _original_pad.__doc__
    patch_attr(F, "pad", pad)
    patch_attr(padding, "pad", pad)


PATCH = Patch("constant_pad", "F.pad mode 'constant' (and nn.ConstantPad*d / ZeroPad2d): concatenation of filled "
                              "blocks, whose gradient stays right in compiled steps (ops.pad's went wrong from the "
                              "second call)", "post-import", apply,
              replaces=("torch.nn.functional.pad", "torch.nn.modules.padding.pad"))
