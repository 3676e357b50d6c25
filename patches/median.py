"""``x.median()`` (all elements) leaves ``x`` unchanged and sends its gradient to the median element, as PyTorch.

MindTorch 0.4.0 computes ``Tensor.median()`` / ``torch.median(x)`` with MindSpore's ``Median(global_median=True)``.
Its value is right (the lower median, as PyTorch's), but this build's CPU kernel finds it by partially sorting the
input's own buffer (``nth_element`` in place): the call rewrote ``x`` itself. Measured: ``x = [[5, 1, 3], [2, 4,
0]]``, ``x.median()`` gave 2 and left ``x`` as ``[[1, 0, 2], [3, 4, 5]]``, silently, for float and integer tensors
(parameters included); its backward then read the reordered buffer and put the gradient at flat position
``(n - 1) // 2`` (a (3, 5) input with its median at ``[2, 1]`` got the gradient at ``[1, 2]``), in PyNative and in
compiled code alike. ``Median(global_median=False, axis)`` (``median(dim)``) leaves its input alone.

Here ``x.median()`` is the per-axis kernel on ``x.reshape(-1)`` (the same lower median; NaN if any element is NaN, as
PyTorch), with no gradient through it, and for floating tensors the gradient is PyTorch's
``evenly_distribute_backward`` (``torch/csrc/autograd/FunctionsManual.cpp``): spread evenly over the elements equal
to the median (NaN: over the NaNs), ``median = v + sum(where(x == v, x - v, 0)) / count(x == v)``, which is ``v``
exactly in the forward (every term is 0). ``median(dim, keepdim)`` (a ``(values, indices)`` named tuple, its gradient
scattered to ``indices``) and bool tensors take MindTorch's path unchanged.

Replaces: ``Tensor.median`` (``torch.median`` and ``nn.Parameter.median`` call it).
"""
from __future__ import annotations

import functools

from . import Patch, get_original, patch_attr


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
def _make(original):
    import mindspore as ms
    from adapter import backend
    cache_prim = backend.primitive_cache()  # MindSpore's _get_cache_prim: graph code may call it
    from mindtorch.torch.tensor import cast_to_adapter_tensor, cast_to_ms_tensor

    def median(self, dim=None, keepdim=False):
        """``x.median()``: 0-d, the lower median of all elements, gradient spread over the elements equal to it;
        ``x.median(dim, keepdim=False)``: MindTorch's ``(values, indices)``."""
        if dim is not None:
            return original(self, dim, keepdim)
        x = cast_to_ms_tensor(self)
        if x.dtype == ms.bool_:
            return original(self)
        value = ms.ops.stop_gradient(cache_prim(ms.ops.Median)(False, 0, False)(x.reshape(-1))[0])
        if not ms.ops.is_floating_point(x):
            return cast_to_adapter_tensor(value)
        mask = ms.ops.logical_or(x == value, ms.ops.logical_and(ms.ops.isnan(x), ms.ops.isnan(value)))
        share = ms.ops.select(mask, x - value, ms.ops.zeros_like(x)).sum()
        count = mask.astype(x.dtype).sum()
        return cast_to_adapter_tensor(value + share / count)

    median._adapter_original = original  # not __wrapped__: MindSpore's parser compiles inspect.unwrap(fn)
    return median


def apply() -> None:
    from mindtorch.torch.tensor import Tensor
    patch_attr(Tensor, "median", _make(get_original(Tensor, "median")))


PATCH = Patch("median", "x.median() leaves x unchanged (MindSpore's global Median sorted "
                        "x's buffer in place) and puts its gradient on the median element", "post-import", apply,
              replaces=("torch.Tensor.median",))
