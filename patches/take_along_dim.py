"""``torch.take_along_dim`` / ``Tensor.take_along_dim`` as PyTorch: ``dim=0`` honoured, shapes broadcast.

MindTorch 0.4.0 tests ``if not dim`` for PyTorch's ``dim=None`` (flatten both), so ``dim=0`` flattened the input
too: ``torch.take_along_dim(x, idx, 0)`` of a ``(5, 5)`` ``x`` raised ``For primitive[GatherD], the x_rank must be
equal to 2, but got 1``, and with a 1-D ``idx`` it returned elements of the flattened input, silently. It also hands
the operands to ``GatherD`` without PyTorch's broadcast of the dimensions other than ``dim``: a ``(5, 5)`` input with
``(1, 2)`` indices along dim 1 gave a ``(1, 2)`` result where PyTorch's is ``(5, 2)``, silently (found by PyTorch's
OpInfo samples, ``run.py conformance --opinfo``, issue 35). Top-k gathers (``x.take_along_dim(idx, dim=-1)`` after
``argsort``) are where users call it.

PyTorch 2.13's semantics: ``dim=None`` gathers from the flattened input with the flattened indices; otherwise input
and indices must have the same number of dimensions (``RuntimeError``), their sizes broadcast in every dimension but
``dim`` (``RuntimeError`` where they do not), each keeps its own size along ``dim``, and the result is ``gather``
of the broadcast operands. Here: the same, the broadcast by ``expand`` and the gather by ``torch.gather`` (MindSpore's
``GatherD``, with its gradient). Indices must be an integer tensor (PyTorch's ``RuntimeError`` otherwise). Plain
functions (shapes are constants in a compiled graph), so a compiled graph parses them too.

Replaces: ``torch.take_along_dim``, ``torch.Tensor.take_along_dim``.
"""
from . import Patch, patch_attr

NAME = "take_along_dim"
torch = None  # mindtorch.torch, set by apply()


def _broadcast_except(a, b, dim):
    """The broadcast of shapes ``a`` and ``b`` in every dimension but ``dim`` (same rank)."""
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if i == dim:
            out.append(None)
        elif x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {i}")
    return out


def take_along_dim(input, indices, dim=None, *, out=None):  # noqa: A002 (PyTorch's names)
    """PyTorch's ``take_along_dim`` (module docstring)."""
    if indices.is_floating_point() or indices.dtype == torch.bool:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{str(indices.dtype).replace('torch.', '').capitalize()}")
    if dim is None:
        result = torch.gather(input.reshape(-1), 0, indices.reshape(-1))
    else:
        if input.ndim != indices.ndim:
            raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of "
                               f"dimensions, but got {input.ndim} dimensions for input, and {indices.ndim} "
                               f"dimensions for indices")
        n = max(input.ndim, 1)
        if dim < -n or dim >= n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
        d = dim % n
        shape = _broadcast_except(tuple(input.shape), tuple(indices.shape), d)
        input_shape = tuple(input.shape[i] if i == d else s for i, s in enumerate(shape))
        indices_shape = tuple(indices.shape[i] if i == d else s for i, s in enumerate(shape))
        if tuple(input.shape) != input_shape:
            input = input.expand(input_shape)
        if tuple(indices.shape) != indices_shape:
            indices = indices.expand(indices_shape)
        result = torch.gather(input, d, indices)
    if out is None:
        return result
    return out.copy_(result)


def tensor_take_along_dim(self, indices, dim=None):
    """``Tensor.take_along_dim``: :func:`take_along_dim` of ``self``."""
    return take_along_dim(self, indices, dim)


def apply() -> None:
    global torch
    import mindtorch.torch
    torch = mindtorch.torch
    from mindtorch.torch.tensor import Tensor
    patch_attr(torch, "take_along_dim", take_along_dim)
    patch_attr(Tensor, "take_along_dim", tensor_take_along_dim)


PATCH = Patch(NAME, "torch.take_along_dim / Tensor.take_along_dim as PyTorch: dim=0 no longer flattens, shapes "
                    "broadcast (a (1, 2) result where PyTorch's is (5, 2), silently)", "post-import", apply,
              replaces=("torch.take_along_dim", "torch.Tensor.take_along_dim"))
