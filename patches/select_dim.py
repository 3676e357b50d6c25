"""``select`` / ``select_scatter`` with negative ``dim`` or ``index``, and ``select_scatter`` at all, as PyTorch.

MindTorch 0.4.0's ``Tensor.select`` computes the result shape by dropping dimension ``dim`` as written, so a negative
``dim`` dropped none: ``torch.select(x, -1, 2)`` of a ``(5, 5, 5)`` ``x`` raised ``ValueError: proposed_shape [5, 5,
5] is invalid for input of size 25``. Its ``select_scatter`` is ``slice_scatter`` of ``src`` without ``src``'s missing
dimension, and its ``slice_scatter`` builds mismatched indices, so every call raised (``TensorScatterElements``: the
dimension of 'input_x', 'indice' and 'update' should be same) (found by PyTorch's OpInfo samples, ``run.py conformance
--opinfo``, issue 35).

Replaces ``torch.select``, ``torch.Tensor.select``, ``torch.select_scatter``, ``torch.Tensor.select_scatter``:
``dim`` and ``index`` are checked against the input's shape (PyTorch's ``IndexError``s) and taken modulo the rank /
the size, then ``select`` calls the function this patch replaced and ``select_scatter`` is ``torch.where`` of a
one-hot mask along ``dim`` between ``src.unsqueeze(dim)`` and the input (gradients: ``src`` gets the slice's, the
input the rest; ``src`` must have the selected slice's shape: PyTorch's ``RuntimeError`` otherwise). Plain functions (shapes and the int arguments are constants in a compiled graph).
"""
from . import Patch, get_replaced, patch_attr

NAME = "select_dim"
torch = None  # mindtorch.torch, set by apply()
_torch_select = _tensor_select = None  # the functions this patch replaced, set by apply()


def _normalized(name, shape, dim, index):
    n = len(shape)
    if n == 0:
        raise IndexError(f"{name}() cannot be applied to a 0-dim tensor.")
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    d = dim % n
    size = shape[d]
    if index < -size or index >= size:
        raise IndexError(f"{name}(): index {index} out of range for tensor of size {list(shape)} at dimension {d}")
    return d, index % size


def select(input, dim, index):  # noqa: A002 (PyTorch's names)
    """``torch.select``; negative ``dim``/``index`` as PyTorch (module docstring)."""
    d, i = _normalized("select", tuple(input.shape), dim, index)
    return _torch_select(input, d, i)


def tensor_select(self, dim, index):
    """``Tensor.select``; negative ``dim``/``index`` as PyTorch (module docstring)."""
    d, i = _normalized("select", tuple(self.shape), dim, index)
    return _tensor_select(self, d, i)


def select_scatter(input, src, dim, index):  # noqa: A002
    """``torch.select_scatter``: ``input`` with its ``select(dim, index)`` slice replaced by ``src``."""
    shape = tuple(input.shape)
    d, i = _normalized("select_scatter", shape, dim, index)
    expected = shape[:d] + shape[d + 1:]
    if tuple(src.shape) != expected:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(expected)}")
    mask_shape = tuple(shape[d] if k == d else 1 for k in range(len(shape)))
    mask = (torch.arange(shape[d]) == i).reshape(mask_shape)
    return torch.where(mask, src.unsqueeze(d), input)


def tensor_select_scatter(self, src, dim, index):
    """``Tensor.select_scatter``: :func:`select_scatter` of ``self``."""
    return select_scatter(self, src, dim, index)


def apply() -> None:
    global torch, _torch_select, _tensor_select
    import mindtorch.torch
    torch = mindtorch.torch
    from mindtorch.torch.tensor import Tensor
    _torch_select = get_replaced(torch, "select", NAME)
    _tensor_select = get_replaced(Tensor, "select", NAME)
    patch_attr(torch, "select", select)
    patch_attr(Tensor, "select", tensor_select)
    patch_attr(torch, "select_scatter", select_scatter)
    patch_attr(Tensor, "select_scatter", tensor_select_scatter)


PATCH = Patch(NAME, "select / select_scatter with negative dim or index, and select_scatter at all, as PyTorch "
                    "(MindTorch raised: the result shape ignored a negative dim; src lacked its dimension)",
              "post-import", apply,
              replaces=("torch.select", "torch.Tensor.select", "torch.select_scatter", "torch.Tensor.select_scatter"))
