"""Size and section arguments in the forms PyTorch accepts: ``new_zeros(())``, ``sum_to_size([1])``,
``tensor_split(x, tensor)``, ``hsplit`` of a 1-D tensor, ``linspace(..., steps=0)``.

MindTorch 0.4.0 raised for each of these PyTorch 2.13 calls (found by PyTorch's OpInfo samples, ``run.py conformance
--opinfo``, issue 35):

* ``x.new_zeros(())`` (a 0-d result): ``IndexError: tuple index out of range`` (it reads ``size[0]``);
* ``x.sum_to_size([1])`` (a list): ``ValueError: For sum_to_size, size ([1],) is not expandable``;
* ``torch.tensor_split(x, t)`` with a tensor of indices (1-D) or sections (0-d): ``TypeError``;
* ``torch.hsplit(x, 2)`` of a 1-D ``x`` (PyTorch splits along dim 0): ``ValueError``;
* ``torch.linspace(a, b, 0)``: ``ValueError: For primitive[LinSpace], the num must be greater than 0``;
* ``torch.narrow_copy(x, 1, 0, 0)`` (length 0): ``ValueError: The input value must be in range of [1, 5]``.

Replaces ``torch.Tensor.new_zeros`` (the size as ints, a tuple, list or ``torch.Size``, ``()`` included, then
``torch.zeros`` of the tensor's dtype unless ``dtype=`` is given), ``torch.Tensor.sum_to_size`` (one list or tuple
argument unpacked), ``torch.tensor_split`` / ``torch.Tensor.tensor_split`` (a tensor argument read on the host, as
PyTorch does: 0-d is the number of sections, 1-D the indices; integer dtype required), ``torch.hsplit`` /
``torch.Tensor.hsplit`` (1-D: ``tensor_split`` along dim 0, with PyTorch's divisibility error for a number of
sections; other ranks: the replaced function), ``torch.linspace`` (``steps=0``: an empty 1-D tensor of the requested
or default dtype), ``torch.narrow`` / ``narrow_copy`` and the methods (``length=0``: the empty slice, by
``index_select`` with no indices so the gradient is the input's zeros; PyTorch's range errors). Other arguments go to the functions this patch replaced unchanged.
"""
from . import Patch, get_replaced, patch_attr

NAME = "size_arguments"
torch = None  # mindtorch.torch, set by apply()
_sum_to_size = _torch_tensor_split = _tensor_tensor_split = _torch_hsplit = _tensor_hsplit = _linspace = None
_torch_narrow = _tensor_narrow = _torch_narrow_copy = _tensor_narrow_copy = None


def _size(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """``Tensor.new_zeros``: zeros of ``size`` (``()`` for 0-d) in this tensor's dtype unless ``dtype`` is given."""
    result = torch.zeros(_size(size), dtype=self.dtype if dtype is None else dtype)
    if requires_grad:
        result.requires_grad_(True)
    return result


def sum_to_size(self, *size):
    """``Tensor.sum_to_size``; the size as ints or one tuple/list."""
    return _sum_to_size(self, *_size(size))


def _sections(value):
    if isinstance(value, torch.Tensor):
        if value.is_floating_point() or value.dtype == torch.bool:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have integral dtype, but got "
                               f"{str(value.dtype).replace('torch.', '')}")
        if value.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {value.ndim} dims")
        numbers = [int(v) for v in value.reshape(-1).tolist()]
        return numbers[0] if value.ndim == 0 else numbers
    return value


def tensor_split(input, indices_or_sections, dim=0):  # noqa: A002 (PyTorch's names)
    """``torch.tensor_split``; a tensor argument as PyTorch reads it (module docstring)."""
    return _torch_tensor_split(input, _sections(indices_or_sections), dim)


def tensor_tensor_split(self, indices_or_sections, dim=0):
    """``Tensor.tensor_split``; a tensor argument as PyTorch reads it (module docstring)."""
    return _tensor_tensor_split(self, _sections(indices_or_sections), dim)


def _hsplit_1d(input, sections):
    if input.ndim == 0:
        raise RuntimeError("torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 "
                           "dimensions!")
    if isinstance(sections, int) and not isinstance(sections, bool):
        if sections == 0 or input.shape[0] % sections:
            raise RuntimeError(f"torch.hsplit attempted to split along dimension 0, but the size of the dimension "
                               f"{input.shape[0]} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, 0)


def hsplit(input, indices_or_sections):  # noqa: A002
    """``torch.hsplit``; a 1-D input split along dim 0 (module docstring)."""
    if input.ndim <= 1:
        return _hsplit_1d(input, indices_or_sections)
    return _torch_hsplit(input, indices_or_sections)


def tensor_hsplit(self, split_size_or_sections):
    """``Tensor.hsplit``; a 1-D tensor split along dim 0 (module docstring)."""
    if self.ndim <= 1:
        return _hsplit_1d(self, split_size_or_sections)
    return _tensor_hsplit(self, split_size_or_sections)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """``torch.linspace``; ``steps=0`` gives an empty tensor (module docstring)."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps == 0 and out is None:
        result = torch.empty((0,), dtype=torch.get_default_dtype() if dtype is None else dtype)
        if requires_grad:
            result.requires_grad_(True)
        return result
    return _linspace(start, end, steps, out=out, dtype=dtype, device=device, requires_grad=requires_grad)


def _empty_slice(input, dim, start):
    """``input`` narrowed to length 0 along ``dim`` at ``start``, with PyTorch's range checks."""
    n = max(input.ndim, 1)
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    d = dim % n
    size = input.shape[d]
    if start < -size or start > size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    return input.index_select(d, torch.zeros((0,), dtype=torch.int64))


def narrow(input, dim, start, length):  # noqa: A002
    """``torch.narrow``; ``length=0`` gives the empty slice (module docstring)."""
    if isinstance(length, int) and length == 0 and isinstance(start, int):
        return _empty_slice(input, dim, start)
    return _torch_narrow(input, dim, start, length)


def tensor_narrow(self, dimension, start, length):
    """``Tensor.narrow``; ``length=0`` gives the empty slice (module docstring)."""
    if isinstance(length, int) and length == 0 and isinstance(start, int):
        return _empty_slice(self, dimension, start)
    return _tensor_narrow(self, dimension, start, length)


def narrow_copy(input, dim, start, length, *, out=None):  # noqa: A002
    """``torch.narrow_copy``; ``length=0`` gives the empty slice (module docstring)."""
    if length == 0 and out is None:
        return _empty_slice(input, dim, start)
    if out is None:
        return _torch_narrow_copy(input, dim, start, length)
    return _torch_narrow_copy(input, dim, start, length, out=out)


def tensor_narrow_copy(self, dimension, start, length):
    """``Tensor.narrow_copy``; ``length=0`` gives the empty slice (module docstring)."""
    if length == 0:
        return _empty_slice(self, dimension, start)
    return _tensor_narrow_copy(self, dimension, start, length)


def apply() -> None:
    global torch, _sum_to_size, _torch_tensor_split, _tensor_tensor_split, _torch_hsplit, _tensor_hsplit, _linspace
    import mindtorch.torch
    torch = mindtorch.torch
    from mindtorch.torch.tensor import Tensor
    _sum_to_size = get_replaced(Tensor, "sum_to_size", NAME)
    _torch_tensor_split = get_replaced(torch, "tensor_split", NAME)
    _tensor_tensor_split = get_replaced(Tensor, "tensor_split", NAME)
    _torch_hsplit = get_replaced(torch, "hsplit", NAME)
    _tensor_hsplit = get_replaced(Tensor, "hsplit", NAME)
    _linspace = get_replaced(torch, "linspace", NAME)
    patch_attr(Tensor, "new_zeros", new_zeros)
    patch_attr(Tensor, "sum_to_size", sum_to_size)
    patch_attr(torch, "tensor_split", tensor_split)
    patch_attr(Tensor, "tensor_split", tensor_tensor_split)
    patch_attr(torch, "hsplit", hsplit)
    patch_attr(Tensor, "hsplit", tensor_hsplit)
    patch_attr(torch, "linspace", linspace)
    g = globals()
    for name in ("narrow", "narrow_copy"):
        g[f"_torch_{name}"] = get_replaced(torch, name, NAME)
        g[f"_tensor_{name}"] = get_replaced(Tensor, name, NAME)
        patch_attr(torch, name, g[name])
        patch_attr(Tensor, name, g[f"tensor_{name}"])


PATCH = Patch(NAME, "size/section arguments as PyTorch accepts them: new_zeros(()), sum_to_size([1]), "
                    "tensor_split(x, tensor), hsplit of 1-D, linspace(steps=0), narrow/narrow_copy of length 0 (each raised)", "post-import", apply,
              replaces=("torch.Tensor.new_zeros", "torch.Tensor.sum_to_size", "torch.tensor_split",
                        "torch.Tensor.tensor_split", "torch.hsplit", "torch.Tensor.hsplit", "torch.linspace",
                        "torch.narrow", "torch.Tensor.narrow", "torch.narrow_copy", "torch.Tensor.narrow_copy"))
