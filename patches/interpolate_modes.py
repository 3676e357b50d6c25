"""``F.interpolate`` modes ``"area"`` and ``"nearest-exact"`` for every size and scale, as PyTorch defines them.

MindTorch 0.4.0 passes both modes to ``ms.ops.interpolate``, which raises for common calls: ``mode="area"`` of a 3-D
input unless the length divides by the output size (``For adaptive_avg_pool1d input's last dimension must be
divisible by output size 3, but got 4.``; ``... must be greater or equal to output size 5``), and
``mode="nearest-exact"`` with a ``scale_factor`` on a 3-D input (``'scale_factor' option cannot currently be set with
the mode = nearest-exact and dim = 3D``). Found by op_db's ``nn.functional.interpolate.area`` and
``nn.functional.interpolate.nearest-exact`` samples (``run.py conformance --opinfo``, issue 35).

PyTorch's definitions (``torch.nn.functional.interpolate``'s documentation and ATen's ``UpSample.h``):

* the output size of each spatial dimension is ``size`` where given, else ``floor(length * scale_factor)``;
* ``"area"`` is adaptive average pooling to that size (``adaptive_avg_pool1d/2d/3d``, which MindTorch runs for any
  size);
* ``"nearest-exact"`` reads, for output index ``i``, input index ``min(floor((i + 0.5) * scale), length - 1)``, where
  ``scale`` is ``1 / scale_factor`` when a ``scale_factor`` is given and ``recompute_scale_factor`` is not true, else
  ``length / output size``. Here that is an ``index_select`` per spatial dimension with those indices (its gradient
  adds each output's gradient back to the input it read, as PyTorch's).

Other modes, and ``align_corners`` or ``antialias`` given with these two modes, go to MindTorch unchanged (it raises
PyTorch's errors for them). PyNative only: in a compiled function the unwrapped original runs (and raises where it
raised), so ``run.py`` runs that step eagerly.

Replaces: ``torch.nn.functional.interpolate``.
"""
import functools
import math

from . import Patch
from ._wrap_once import wrap_attr

NAME = "interpolate_modes"
torch = None  # mindtorch.torch, bound by apply()
F = None  # mindtorch.torch.nn.functional, bound by apply()


def _per_dim(value, n: int, what: str):
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"Input and {what} must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {n} and {what} of {list(value)}. Please provide input tensor in "
                             f"(N, C, d1, d2, ...,dK) format and {what} in (o1, o2, ...,oK) format.")
        return tuple(value)
    return (value,) * n


def _plan(input, size, scale_factor, recompute_scale_factor):  # noqa: A002 (PyTorch's name)
    """Per spatial dimension ``(length, output size, scale for nearest-exact)``; None where MindTorch should run."""
    n = input.dim() - 2
    if n < 1 or (size is None) == (scale_factor is None):
        return None
    lengths = tuple(input.shape[2:])
    if size is not None:
        outs = tuple(int(s) for s in _per_dim(size, n, "size"))
        return tuple((length, out, length / out if out else 0.0) for length, out in zip(lengths, outs))
    scales = tuple(float(s) for s in _per_dim(scale_factor, n, "scale_factor"))
    plan = []
    for length, scale in zip(lengths, scales):
        out = int(math.floor(length * scale))
        step = length / out if (recompute_scale_factor or not scale) and out else 1.0 / scale if scale else 0.0
        plan.append((length, out, step))
    return tuple(plan)


def _nearest_exact(input, plan):  # noqa: A002
    out = input
    for i, (length, size, step) in enumerate(plan):
        index = [min(int(math.floor((j + 0.5) * step)), length - 1) for j in range(size)]
        out = torch.index_select(out, 2 + i, torch.tensor(index, dtype=torch.int64))
    return out


def _interpolate(original):
    @functools.wraps(original)
    def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
                    recompute_scale_factor=None, antialias=False):
        plan = None
        if mode in ("area", "nearest-exact") and align_corners is None and not antialias \
                and isinstance(input, torch.Tensor) and input.dim() in (3, 4, 5):
            plan = _plan(input, size, scale_factor, recompute_scale_factor)
        if plan is None or any(out <= 0 for _, out, _ in plan):
            return original(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)
        if mode == "area":
            pool = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[len(plan) - 1]
            sizes = tuple(out for _, out, _ in plan)
            return pool(input, sizes)
        return _nearest_exact(input, plan)
    return interpolate


def apply() -> None:
    global torch, F
    import mindtorch.torch as mt
    import mindtorch.torch.nn.functional as functional
    torch, F = mt, functional
    wrap_attr(functional, "interpolate", NAME, _interpolate)


PATCH = Patch(NAME, "F.interpolate modes 'area' and 'nearest-exact' for any size and scale as PyTorch (MindSpore's "
                    "interpolate raised 'must be divisible by output size' / 'scale_factor cannot be set')",
              "post-import", apply, replaces=("torch.nn.functional.interpolate",))
