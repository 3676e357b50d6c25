"""``F.interpolate(mode='nearest' | 'nearest-exact')``, ``F.upsample_nearest`` (``nn.Upsample``,
``nn.UpsamplingNearest2d``): PyTorch's source index for every output position.

PyTorch 2.13 (``aten/src/ATen/native/UpSample.h``, ``nearest_idx`` / ``nearest_exact_idx``) maps output index ``i``
of a spatial dimension of input length ``n`` and output length ``m`` to input index

* ``nearest``: ``min(floor(i * s), n - 1)``; for a 2-D (4-D input) interpolation, ``i`` if ``m == n`` and ``i >> 1``
  if ``m == 2 n`` first (measured on PyTorch 2.13's CPU: ``scale_factor=1.1`` of a length-5 dimension is the
  identity in 2-D, ``[0, 0, 1, 2, 3]`` in 1-D and 3-D; ``2.1`` of length 3 is ``[0, 0, 1, 1, 2, 2]`` in 2-D,
  ``[0, 0, 0, 1, 1, 2]`` in 1-D and 3-D);
* ``nearest-exact``: ``min(floor((i + 0.5) * s), n - 1)``;

with ``s = float32(1 / scale_factor)`` when the caller gave ``scale_factor`` and not ``recompute_scale_factor=True``
(the output length is then ``floor(n * scale_factor)``), else ``s = float32(n) / m``. MindTorch 0.4.0 turns a
``scale_factor`` into an output size and lets MindSpore take ``n / m``: for a non-integer scale factor the rows
picked differ (``scale_factor=1.7`` of a length-4 input: PyTorch picks ``[0, 0, 1, 1, 2, 2]``, MindSpore
``[0, 0, 1, 2, 2, 3]``; op_db's ``nn.functional.interpolate.nearest:s2`` / ``upsample_nearest:s2``: 12 of 36 values
off, up to 11.7, and the gradient 18 of 24; ``run.py conformance --opinfo``, issue 35), silently, also with the
default ``recompute_scale_factor=None``. ``nearest-exact`` with a ``scale_factor`` of a 3-D input raised.

Here the indices are computed as above (``arange`` in float32, as the kernel's float arithmetic; ``nearest-exact``'s
``i + 0.5`` in float64 as its double) and the input is gathered along each spatial dimension whose length changes:
values and gradients (the gather's backward sums each input element's copies) are PyTorch's, in PyNative and in
compiled graphs (the sizes and indices depend on shapes and arguments only). Calls this does not cover (an input that
is not 3-, 4- or 5-D, an empty input or output length, both or neither of ``size`` and ``scale_factor``, ``align_corners`` or ``antialias`` given, other
modes) go to MindTorch unchanged, which raises or computes as before.

Must come after ``interpolate_modes`` (it wraps its ``F.interpolate``: the calls left out here, ``nearest-exact``
with ``align_corners`` or ``antialias`` among them, go there). Replaces: ``torch.nn.functional.interpolate``, ``torch.nn.functional.upsample_nearest``.
"""
from __future__ import annotations

import math

from . import Patch, get_replaced, patch_attr

NAME = "interpolate_nearest"
_NEAREST = ("nearest", "nearest-exact")
# graph code below reads these module globals; set by apply()
ms = cast_to_ms_tensor = cast_to_adapter_tensor = None
_originals = {}


def _per_dim(value, rank):
    if isinstance(value, (tuple, list)):
        return list(value) if len(value) == rank else None
    return [value] * rank


def plan(shape, size, scale_factor, recompute_scale_factor):
    """``[(dimension, input length n, output length m, scale_factor or None)]`` of the spatial dimensions of an
    input of ``shape`` (``F.interpolate``'s arguments; the output length ``floor(n * scale_factor)`` as PyTorch's
    ``upsample`` shape rule; the factor is kept unless ``recompute_scale_factor`` is true or it is not positive), or
    None where the call is not one the interpolate patches cover (not 3- to 5-D, both or neither of ``size`` and
    ``scale_factor``, a per-dimension list of the wrong length, an empty length). Also used by
    ``patches/interpolate_linear.py``."""
    rank = len(shape) - 2
    if rank not in (1, 2, 3) or (size is None) == (scale_factor is None):
        return None
    if size is not None:
        sizes = _per_dim(size, rank)
        if sizes is None:
            return None
        plan = [(2 + d, shape[2 + d], int(sizes[d]), None) for d in range(rank)]
        return plan if all(n > 0 and m > 0 for _, n, m, _ in plan) else None
    factors = _per_dim(scale_factor, rank)
    if factors is None:
        return None
    keep = not recompute_scale_factor
    plan = [(2 + d, shape[2 + d], int(math.floor(float(shape[2 + d]) * float(factors[d]))),
             float(factors[d]) if keep and float(factors[d]) > 0 else None) for d in range(rank)]
    return plan if all(n > 0 and m > 0 for _, n, m, _ in plan) else None


def _indices(n, m, factor, exact, shortcuts):
    """The input index of each of the ``m`` output positions (module docstring), an int32 tensor."""
    if factor is not None:
        scale = ms.Tensor(1.0 / factor, ms.float64).astype(ms.float32)
    else:
        scale = ms.Tensor(float(n), ms.float32) / ms.Tensor(float(m), ms.float32)
    if exact:
        position = (ms.ops.arange(m, dtype=ms.float64) + 0.5) * scale.astype(ms.float64)
    elif shortcuts and m == 2 * n:
        position = ms.ops.arange(m, dtype=ms.float32) * 0.5
    else:
        position = ms.ops.arange(m, dtype=ms.float32) * scale
    index = ms.ops.floor(position).astype(ms.int32)
    return ms.ops.minimum(index, ms.Tensor(n - 1, ms.int32))


def _nearest(input, plan, exact):  # noqa: A002 (PyTorch's name)
    x = cast_to_ms_tensor(input)
    shortcuts = len(plan) == 2 and not exact  # PyTorch's 2-D nearest kernel only (module docstring)
    for dim, n, m, factor in plan:
        if m == n and (shortcuts or factor is None):
            continue
        x = ms.ops.gather(x, _indices(n, m, factor, exact, shortcuts), dim)
    return cast_to_adapter_tensor(x)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
                recompute_scale_factor=None, antialias=False):
    """PyTorch's ``F.interpolate``; the nearest modes here (module docstring), the others MindTorch's."""
    if mode in _NEAREST and align_corners is None and not antialias:
        spec = plan(tuple(input.shape), size, scale_factor, recompute_scale_factor)
        if spec is not None:
            return _nearest(input, spec, mode == "nearest-exact")
    return _originals["interpolate"](input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                                     antialias)


def upsample_nearest(input, size=None, scale_factor=None):  # noqa: A002
    """PyTorch's ``F.upsample_nearest``: ``interpolate(input, size, scale_factor, mode='nearest')``."""
    spec = plan(tuple(input.shape), size, scale_factor, None)
    if spec is not None:
        return _nearest(input, spec, False)
    return _originals["upsample_nearest"](input, size, scale_factor)


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor
    import mindspore
    import mindtorch.torch.nn.functional as F
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    for name, replacement in (("interpolate", interpolate), ("upsample_nearest", upsample_nearest)):
        _originals[name] = get_replaced(F, name, NAME)
        patch_attr(F, name, replacement)


PATCH = Patch(NAME, "F.interpolate nearest / nearest-exact and F.upsample_nearest pick PyTorch's source rows (with a "
                    "non-integer scale_factor MindSpore's n/m rule picked others: up to 11.7 off, silently)",
              "post-import", apply,
              replaces=("torch.nn.functional.interpolate", "torch.nn.functional.upsample_nearest"),
              after=("interpolate_modes",))
