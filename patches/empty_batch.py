"""Padding, unfolding and adaptive average pooling of an empty batch return PyTorch's empty results.

A batch of size 0 (an empty last batch of a data-dependent split, a filtered selection that kept nothing) is valid
input to PyTorch's ``F.pad`` (modes ``"reflect"``, ``"replicate"``, ``"circular"``), ``F.unfold`` /
``nn.Unfold`` and ``F.adaptive_avg_pool1d/2d/3d`` (``nn.AdaptiveAvgPool*d``): the result has 0 rows and the
shape the other dimensions give. MindSpore's kernels refuse it: ``For primitive[PadV3], the output size must be greater
than 0, but got 0.``, ``For primitive[Im2Col], the attribute[spatial size of input] should be a vector with all
positive item. but got [0, 1, 5, 5, ]``, ``For primitive[AdaptiveAvgPool2D], the 0th dimension of x must be greater
than or equal to 1, but got 0.`` Found by op_db's ``nn.functional.pad.circular/reflect/replicate``,
``nn.functional.unfold``, ``nn.functional.adaptive_avg_pool1d/3d`` samples (``run.py conformance --opinfo``, issue 35).

Here, when the input's first dimension is 0 and every other dimension is not, the call runs MindTorch's function on
zeros of one row (``(1, *input.shape[1:])``, the same arguments) and returns its result's first 0 rows: PyTorch's
shape and dtype, no element. Nothing flows back to the input (it has no element to receive a gradient; its gradient is
the empty zeros PyTorch gives). Any other input, and ``F.pad`` mode ``"constant"`` (``patches/constant_pad.py``
handles every size), go to the replaced function unchanged; so do inputs with a zero-size dimension other than the
first, where MindSpore keeps raising rather than guessing. PyNative only: in a compiled function the unwrapped
original runs and raises, so ``run.py`` runs that step eagerly.

Replaces: ``torch.nn.functional.pad`` and ``torch.nn.modules.padding.pad`` (after ``constant_pad``, which replaces
both), ``torch.nn.functional.unfold`` and ``torch.nn.modules.fold.unfold`` (``nn.Unfold``'s),
``torch.nn.functional.adaptive_avg_pool1d/2d/3d``.
"""
import functools

from . import Patch
from ._wrap_once import wrap_attr

NAME = "empty_batch"
torch = None  # mindtorch.torch, bound by apply()
_POOLS = ("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d")


def _empty_batch(x) -> bool:
    """``x`` is a tensor of two or more dimensions whose first is 0 and no other is."""
    if not isinstance(x, torch.Tensor) or x.dim() < 2:
        return False
    shape = tuple(x.shape)
    return shape[0] == 0 and all(s > 0 for s in shape[1:])


def _one_row(original, x, args, kwargs):
    """``original`` of zeros of one row, cut to 0 rows: PyTorch's empty result for the empty batch ``x``."""
    row = torch.zeros((1,) + tuple(x.shape[1:]), dtype=x.dtype)
    return original(row, *args, **kwargs)[:0]


def _on_empty(original):
    @functools.wraps(original)
    def wrapper(input, *args, **kwargs):  # noqa: A002 (PyTorch's name)
        if _empty_batch(input):
            return _one_row(original, input, args, kwargs)
        return original(input, *args, **kwargs)
    return wrapper


def _pad_on_empty(original):
    @functools.wraps(original)
    def pad(input, pad, mode="constant", value=None):  # noqa: A002 (PyTorch's names)
        if mode != "constant" and _empty_batch(input):
            return _one_row(original, input, (pad, mode, value), {})
        return original(input, pad, mode, value)
    return pad


def apply() -> None:
    global torch
    import mindtorch.torch as mt
    import mindtorch.torch.nn.functional as F
    import mindtorch.torch.nn.modules.fold as fold
    import mindtorch.torch.nn.modules.padding as padding
    torch = mt
    wrap_attr(F, "pad", NAME, _pad_on_empty)
    wrap_attr(padding, "pad", NAME, _pad_on_empty)
    wrap_attr(F, "unfold", NAME, _on_empty)
    wrap_attr(fold, "unfold", NAME, _on_empty)
    for name in _POOLS:
        wrap_attr(F, name, NAME, _on_empty)


PATCH = Patch(NAME, "F.pad (reflect/replicate/circular), F.unfold, F.adaptive_avg_pool1d/2d/3d of an empty batch "
                    "return PyTorch's empty result (MindSpore's kernels raised 'output size must be greater than 0' "
                    "/ 'all positive item' / '0th dimension must be >= 1')", "post-import", apply,
              replaces=("torch.nn.functional.pad", "torch.nn.modules.padding.pad", "torch.nn.functional.unfold",
                        "torch.nn.modules.fold.unfold") + tuple(f"torch.nn.functional.{n}" for n in _POOLS),
              after=("constant_pad",))
