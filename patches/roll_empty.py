"""``torch.roll`` / ``Tensor.roll`` of a tensor with no elements, as PyTorch: an empty tensor of the same shape.

MindTorch 0.4.0 rolls with ``mindspore.numpy.roll`` on CPU, which takes the shift modulo the rolled dimension's size:
a zero-size dimension raised ``ZeroDivisionError: integer division or modulo by zero`` (``torch.roll(x, 1, 2)`` of a
``(0, 0, 0)`` ``x``; found by PyTorch's OpInfo samples, ``run.py conformance --opinfo``, issue 35). An empty last
batch rolled along its sequence dimension (a shifted-target language model) hit this.

Replaces ``torch.roll`` and ``torch.Tensor.roll``: an input with no elements returns ``input.clone()`` once ``dims``
is checked against its rank (PyTorch's ``IndexError``) and ``shifts``/``dims`` have the same length
(``RuntimeError``); other inputs go to the function this patch replaced unchanged. Plain functions (shapes are
constants in a compiled graph).
"""
from . import Patch, get_replaced, patch_attr

NAME = "roll_empty"
_torch_roll = _tensor_roll = None  # the functions this patch replaced, set by apply()


def _as_tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _check(input, shifts, dims):
    if dims is None:
        return
    shifts, dims = _as_tuple(shifts), _as_tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    n = max(input.ndim, 1)
    for d in dims:
        if d < -n or d >= n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")


def roll(input, shifts, dims=None, *, out=None):  # noqa: A002 (PyTorch's names)
    """``torch.roll``; an empty input as PyTorch (module docstring)."""
    if 0 in tuple(input.shape) and out is None:
        _check(input, shifts, dims)
        return input.clone()
    if out is None:
        return _torch_roll(input, shifts, dims)
    return _torch_roll(input, shifts, dims, out=out)


def tensor_roll(self, shifts, dims=None):
    """``Tensor.roll``; an empty tensor as PyTorch (module docstring)."""
    if 0 in tuple(self.shape):
        _check(self, shifts, dims)
        return self.clone()
    return _tensor_roll(self, shifts, dims)


def apply() -> None:
    global _torch_roll, _tensor_roll
    import mindtorch.torch as torch
    from mindtorch.torch.tensor import Tensor
    _torch_roll = get_replaced(torch, "roll", NAME)
    _tensor_roll = get_replaced(Tensor, "roll", NAME)
    patch_attr(torch, "roll", roll)
    patch_attr(Tensor, "roll", tensor_roll)


PATCH = Patch(NAME, "torch.roll / Tensor.roll of an empty tensor as PyTorch (mindspore.numpy.roll raised "
                    "ZeroDivisionError)", "post-import", apply, replaces=("torch.roll", "torch.Tensor.roll"))
