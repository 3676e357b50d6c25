"""``F.max_pool2d`` / ``nn.MaxPool2d`` with ``padding``: padded with -inf and pooled with MindSpore's 2-D MaxPool.

MindTorch 0.4.0 routes any ``padding != 0`` (ResNet's stem: ``MaxPool2d(3, 2, padding=1)``) through
``ops.max_pool3d`` on a reshaped 5-D tensor. PyTorch's definition (``torch.nn.MaxPool2d`` docs) pads implicitly with
negative infinity, so padding explicitly with -inf and pooling with ``ops.MaxPool(pad_mode='valid')`` gives the same
values, and the same gradient (a -inf pad is never a window's maximum: PyTorch requires padding <= kernel_size / 2).
Other cases (dilation, ceil_mode, return_indices, non-float input) keep MindTorch's implementation.

Replaces: ``torch.nn.functional.max_pool2d``.
"""
import functools

from . import Patch, get_original, patch_attr


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    """``F.max_pool2d``: a padded 4-D float pool as -inf pad + 2-D MaxPool (module docstring); other cases:
    MindTorch's."""
    import mindspore as ms
    from adapter import backend
    _pair = backend.internal("pair")  # torch.nn.modules.utils._pair's semantics
    from mindtorch.torch.tensor import cast_to_adapter_tensor, cast_to_ms_tensor
    x = cast_to_ms_tensor(input)
    ph, pw = _pair(padding)
    if return_indices or ceil_mode or _pair(dilation) != (1, 1) or (ph == 0 and pw == 0) or x.ndim != 4:
        return _original_max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)
    kernel = _pair(kernel_size)
    strides = _pair(stride if stride is not None else kernel_size)
    x = ms.ops.pad(x, (pw, pw, ph, ph), mode="constant", value=float("-inf"))
    return cast_to_adapter_tensor(ms.ops.MaxPool(kernel_size=kernel, strides=strides, pad_mode="valid")(x))


_original_max_pool2d = None  # MindTorch's, bound by apply()


def apply() -> None:
    global _original_max_pool2d
    import mindtorch.torch.nn.functional as F
    _original_max_pool2d = get_original(F, "max_pool2d")
    functools.update_wrapper(max_pool2d, _original_max_pool2d)
    patch_attr(F, "max_pool2d", max_pool2d)


PATCH = Patch("max_pool", "max_pool2d with padding: -inf pad + 2-D MaxPool instead of MindTorch's 3-D detour",
              "post-import", apply, replaces=("torch.nn.functional.max_pool2d",))
