"""``F.interpolate(mode='linear' | 'bilinear' | 'bicubic' | 'trilinear')`` (``nn.Upsample``): PyTorch's source
positions and weights, as one weight matrix per spatial dimension.

PyTorch 2.13's CPU kernels (``aten/src/ATen/native/UpSample.h``: ``area_pixel_compute_scale``,
``area_pixel_compute_source_index``, ``compute_source_index_and_lambda``, ``get_cubic_upsample_coefficients``) are
separable: along a spatial dimension of input length ``n`` and output length ``m``, output ``i`` reads

* the scale ``s``: with ``align_corners=True``, ``(n - 1) / (m - 1)`` (0 when ``m == 1``); else
  ``float32(1 / scale_factor)`` when the caller gave ``scale_factor`` (and not ``recompute_scale_factor=True``),
  else ``n / m``;
* the source position ``x``: ``s * i`` with ``align_corners=True``; else ``s * (i + 0.5) - 0.5``, clamped at 0 for
  the linear modes (float32 arithmetic);
* linear modes: ``x0 = min(floor(x), n - 1)``, ``x1 = x0 + 1`` unless ``x0 == n - 1``, weights ``1 - l`` and ``l``,
  ``l = clamp(x - x0, 0, 1)``; when ``m == n`` the identity;
* ``bicubic``: ``x0 = floor(x)``, ``t = x - x0``, the 4 rows ``x0 - 1 .. x0 + 2`` clamped to ``[0, n - 1]`` with Keys'
  cubic convolution weights for ``A = -0.75`` (R. Keys, "Cubic convolution interpolation for digital image
  processing", IEEE TASSP 29(6), 1981; PyTorch's and OpenCV's ``A``).

MindTorch 0.4.0 turns ``scale_factor`` into an output size and MindSpore's kernels then take ``n / m`` as the scale,
so every non-integer ``scale_factor`` with ``align_corners=False`` gave other values, silently (2026-12-07, 2.10:
``bilinear`` ``scale_factor=1.7`` of a ``5 x 7`` map 0.55 off on values of magnitude 1, ``0.6`` 0.27, ``linear``
1.7 0.44), and MindSpore's bicubic kernel differs from PyTorch's even at ``scale_factor=2`` (0.087; 6.7e-4 with
``align_corners=True``: another ``A``).

Here ``out = x`` multiplied by ``W_d`` (``m x n``, the weights above, built with MindSpore ops from the shapes and
arguments only, so it compiles) along each spatial dimension ``d``: the values are PyTorch's up to float32 rounding,
and the gradient (``W_d^T``) is the kernels' scatter-add backward (bicubic with no length changed: the identity,
as PyTorch's backward kernel copies there while its forward weighs). Float16/bfloat16 inputs are computed in float32
(PyTorch's ``opmath``) and cast back. Not covered, so MindTorch's as before: ``antialias=True``, an input whose rank
does not match the mode, and the calls ``patches.interpolate_nearest.plan`` leaves out.

Must come after ``interpolate_nearest`` (it wraps its ``F.interpolate``). Replaces:
``torch.nn.functional.interpolate``.
"""
from __future__ import annotations

from . import Patch, get_replaced, patch_attr

NAME = "interpolate_linear"
_RANK = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_A = -0.75  # PyTorch's cubic convolution coefficient (get_cubic_upsample_coefficients)
# set by apply(); graph code reads these module globals
ms = plan = cast_to_ms_tensor = cast_to_adapter_tensor = None
_original = None


def _source(n, m, factor, align_corners, cubic):
    """The source position of each of the ``m`` outputs (float32, module docstring)."""
    index = ms.ops.arange(m, dtype=ms.float32)
    if align_corners:
        scale = float(n - 1) / float(m - 1) if m > 1 else 0.0
        return index * ms.Tensor(scale, ms.float32)
    if factor is not None:
        scale = ms.Tensor(1.0 / factor, ms.float64).astype(ms.float32)
    else:
        scale = ms.Tensor(float(n), ms.float32) / ms.Tensor(float(m), ms.float32)
    position = scale * (index + 0.5) - 0.5
    return position if cubic else ms.ops.maximum(position, ms.Tensor(0.0, ms.float32))


def _onehot(rows, n):
    """``(m, n)`` float32: 1 where column ``j == rows[i]``."""
    return (rows.reshape(-1, 1) == ms.ops.arange(n, dtype=ms.int32).reshape(1, -1)).astype(ms.float32)


def _linear_weights(n, m, factor, align_corners):
    position = _source(n, m, factor, align_corners, False)
    x0 = ms.ops.minimum(ms.ops.floor(position).astype(ms.int32), ms.Tensor(n - 1, ms.int32))
    x1 = ms.ops.minimum(x0 + 1, ms.Tensor(n - 1, ms.int32))
    lam = ms.ops.clamp(position - x0.astype(ms.float32), 0.0, 1.0).reshape(-1, 1)
    return _onehot(x0, n) * (1.0 - lam) + _onehot(x1, n) * lam


def _cubic_weights(n, m, factor, align_corners):
    position = _source(n, m, factor, align_corners, True)
    x0 = ms.ops.floor(position)
    t = (position - x0).reshape(-1, 1)
    x0 = x0.astype(ms.int32)

    def near(x):  # |x| <= 1
        return ((_A + 2.0) * x - (_A + 3.0)) * x * x + 1.0

    def far(x):  # 1 < |x| < 2
        return ((_A * x - 5.0 * _A) * x + 8.0 * _A) * x - 4.0 * _A

    weights = (far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t))
    out = None
    for k, w in enumerate(weights):
        rows = ms.ops.clamp(x0 + (k - 1), 0, n - 1)
        term = _onehot(rows, n) * w
        out = term if out is None else out + term
    return out


def _along(x, dim, weights):
    """``x`` multiplied by ``weights`` (``m x n``) along ``dim`` (length ``n`` -> ``m``)."""
    last = x.ndim - 1
    if dim != last:
        x = ms.ops.swapaxes(x, dim, last)
    x = ms.ops.matmul(x, weights.T)
    if dim != last:
        x = ms.ops.swapaxes(x, dim, last)
    return x


def _separable(input, spec, cubic, align_corners):  # noqa: A002 (PyTorch's name)
    x = cast_to_ms_tensor(input)
    dtype = x.dtype
    if dtype in (ms.float16, ms.bfloat16):
        x = x.astype(ms.float32)
    source = x
    for dim, n, m, factor in spec:
        if m == n and not cubic:
            continue  # PyTorch's linear kernels copy a dimension whose length does not change
        weights = (_cubic_weights if cubic else _linear_weights)(n, m, factor, align_corners)
        x = _along(x, dim, weights.astype(x.dtype))
    if cubic and all(m == n for _, n, m, _ in spec):
        # PyTorch's bicubic backward copies the gradient when no length changes, while its forward still weighs
        # (scale_factor=1.1 of length 7: output length 7, scale 1/1.1): its values, its gradient
        x = source + ms.ops.stop_gradient(x - source)
    if x.dtype != dtype:
        x = x.astype(dtype)
    return cast_to_adapter_tensor(x)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
                recompute_scale_factor=None, antialias=False):
    """PyTorch's ``F.interpolate``; the linear and cubic modes here (module docstring), the others as before."""
    if mode in _RANK and not antialias and len(input.shape) == _RANK[mode] + 2:
        spec = plan(tuple(input.shape), size, scale_factor, recompute_scale_factor)
        if spec is not None:
            return _separable(input, spec, mode == "bicubic", bool(align_corners))
    return _original(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)


def apply() -> None:
    global ms, plan, cast_to_ms_tensor, cast_to_adapter_tensor, _original
    import mindspore
    import mindtorch.torch.nn.functional as F
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms

    from .interpolate_nearest import plan as nearest_plan
    ms, plan, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, nearest_plan, to_ms, to_adapter
    _original = get_replaced(F, "interpolate", NAME)
    patch_attr(F, "interpolate", interpolate)


PATCH = Patch(NAME, "F.interpolate linear / bilinear / bicubic / trilinear give PyTorch's values (a non-integer "
                    "scale_factor took MindSpore's n/m scale, bicubic another kernel: up to 0.55 off, silently)",
              "post-import", apply, replaces=("torch.nn.functional.interpolate",), after=("interpolate_nearest",))
