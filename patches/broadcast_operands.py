"""Element-wise ops whose tensor operands broadcast against each other, as PyTorch: ``clamp`` (and ``clamp_min`` /
``clamp_max``) with tensor bounds, ``copysign``, ``complex``, ``polar``.

PyTorch broadcasts every tensor operand of these ops to one shape (``torch.clamp_min(x, lo)`` of a ``(5, 1)`` ``x``
and a ``(5,)`` ``lo`` is ``(5, 5)``). MindTorch 0.4.0 hands them to MindSpore kernels that broadcast only towards the
first operand's shape or not at all: ``ValueError: For Clamp, the shape of 'input' [5, 1] and the shape of 'min' [5]
cannot broadcast``, ``For 'BroadcastTo' ... x_shape: (5), target shape: (5, 1)`` (``copysign``), ``For 'Polar, shape
of inputs should be the same`` (``polar``), a ``RuntimeError`` (``complex``) (found by PyTorch's OpInfo samples,
``run.py conformance --opinfo``, issue 35). A per-channel bound (``x.clamp(min=lo[:, None])``) hit this.

Replaces ``torch.X`` for X in ``clamp``, ``clamp_min``, ``clamp_max``, ``copysign``, ``complex``, ``polar``, and
``torch.Tensor.X`` for the first four (the clamp methods call the ``torch`` functions; MindTorch has no
``Tensor.clamp_min`` / ``clamp_max``, PyTorch's methods): when the tensor operands' shapes differ, each is ``expand``-ed to their
broadcast shape (PyTorch's rules; shapes that do not broadcast raise PyTorch's ``RuntimeError``) before the function
this patch replaced runs; the gradient of an expanded operand is summed back to its shape by ``expand``'s own
gradient. Operands of one shape, and numbers, go to the replaced function unchanged. Plain functions (shapes are
constants in a compiled graph too), so a compiled graph parses them as well.
"""
from . import Patch, get_replaced, patch_attr

NAME = "broadcast_operands"
FUNCTIONS = ("clamp", "clamp_min", "clamp_max", "copysign", "complex", "polar")
METHODS = ("clamp", "clamp_min", "clamp_max", "copysign")

Tensor = None  # mindtorch's Tensor, set by apply()
# _torch_X: the torch.X this patch replaced, set by apply() (module globals: a compiled graph
# resolves them)
_torch_clamp = _torch_clamp_min = _torch_clamp_max = _torch_copysign = _torch_complex = _torch_polar = None
_tensor_copysign = None  # the Tensor.copysign this patch replaced (MindTorch's torch.copysign calls the method)


def _shape(value):
    return tuple(value.shape) if isinstance(value, Tensor) else None


def _broadcast_shape(shapes):
    """PyTorch's broadcast of ``shapes`` (``RuntimeError`` where two sizes differ and neither is 1)."""
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for shape in shapes:
        for i, size in enumerate(shape):
            j = ndim - len(shape) + i
            if size != 1:
                if out[j] != 1 and out[j] != size:
                    raise RuntimeError(f"The size of tensor a ({out[j]}) must match the size of tensor b ({size}) "
                                       f"at non-singleton dimension {i}")
                out[j] = size
    return tuple(out)


def _broadcast(*values):
    """``values`` with every tensor expanded to the tensors' broadcast shape (unchanged when the shapes agree)."""
    shapes = [_shape(v) for v in values if isinstance(v, Tensor)]
    if len(shapes) < 2 or all(s == shapes[0] for s in shapes):
        return values
    target = _broadcast_shape(shapes)
    return tuple(v.expand(target) if isinstance(v, Tensor) and tuple(v.shape) != target else v for v in values)


def clamp(input, min=None, max=None, *, out=None):  # noqa: A002 (PyTorch's names)
    """``torch.clamp``; tensor bounds broadcast with the input (module docstring)."""
    input, min, max = _broadcast(input, min, max)
    if out is None:
        return _torch_clamp(input, min, max)
    return _torch_clamp(input, min, max, out=out)


def clamp_min(input, min, *, out=None):  # noqa: A002
    """``torch.clamp_min``; a tensor bound broadcasts with the input (module docstring)."""
    input, min = _broadcast(input, min)
    if out is None:
        return _torch_clamp_min(input, min)
    return _torch_clamp_min(input, min, out=out)


def clamp_max(input, max, *, out=None):  # noqa: A002
    """``torch.clamp_max``; a tensor bound broadcasts with the input (module docstring)."""
    input, max = _broadcast(input, max)
    if out is None:
        return _torch_clamp_max(input, max)
    return _torch_clamp_max(input, max, out=out)


def copysign(input, other, *, out=None):  # noqa: A002
    """``torch.copysign``; tensor operands broadcast (module docstring)."""
    input, other = _broadcast(input, other)
    if out is None:
        return _torch_copysign(input, other)
    return _torch_copysign(input, other, out=out)


def complex(real, imag, *, out=None):  # noqa: A001
    """``torch.complex``; the operands broadcast (module docstring)."""
    real, imag = _broadcast(real, imag)
    if out is None:
        return _torch_complex(real, imag)
    return _torch_complex(real, imag, out=out)


def polar(abs, angle, *, out=None):  # noqa: A002
    """``torch.polar``; the operands broadcast (module docstring)."""
    abs, angle = _broadcast(abs, angle)
    if out is None:
        return _torch_polar(abs, angle)
    return _torch_polar(abs, angle, out=out)


def tensor_clamp(self, min=None, max=None):  # noqa: A002
    """``Tensor.clamp``; tensor bounds broadcast (module docstring)."""
    return clamp(self, min, max)


def tensor_clamp_min(self, min):  # noqa: A002
    """``Tensor.clamp_min``; a tensor bound broadcasts (module docstring)."""
    return clamp_min(self, min)


def tensor_clamp_max(self, max):  # noqa: A002
    """``Tensor.clamp_max``; a tensor bound broadcasts (module docstring)."""
    return clamp_max(self, max)


def tensor_copysign(self, other):
    """``Tensor.copysign``; tensor operands broadcast (module docstring)."""
    self, other = _broadcast(self, other)
    return _tensor_copysign(self, other)


def apply() -> None:
    global Tensor
    import mindtorch.torch as torch
    from mindtorch.torch.tensor import Tensor as tensor_class
    Tensor = tensor_class
    g = globals()
    for name in FUNCTIONS:
        g[f"_torch_{name}"] = get_replaced(torch, name, NAME)
        patch_attr(torch, name, g[name])
    g["_tensor_copysign"] = get_replaced(Tensor, "copysign", NAME)
    for name in METHODS:
        patch_attr(Tensor, name, g[f"tensor_{name}"])


PATCH = Patch(NAME, "clamp/clamp_min/clamp_max with tensor bounds, copysign, complex, polar: tensor operands "
                    "broadcast as PyTorch (MindSpore's kernels raised for a (5, 1) input with a (5,) bound)",
              "post-import", apply,
              replaces=tuple(f"torch.{n}" for n in FUNCTIONS) + tuple(f"torch.Tensor.{n}" for n in METHODS))
