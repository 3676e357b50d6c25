"""``torch.repeat_interleave`` / ``Tensor.repeat_interleave`` on CPU, as PyTorch.

MindTorch 0.4.0 implements them with MindSpore's ``Tensor.repeat``, whose kernel mindspore 2.10's CPU backend lacks:
every call raised ``RuntimeError: 'repeat' is not supported on this device.`` (``torch.randn(2, 3).repeat_interleave(2,
dim=1)``; found by PyTorch's OpInfo samples, ``run.py conformance --opinfo``, issue 35). Grouped-query attention
(``k.repeat_interleave(n_rep, dim=1)``) and label expansion call it.

PyTorch 2.13's semantics (``torch.repeat_interleave(input, repeats, dim=None, *, output_size=None)``): with
``dim=None`` the input is flattened first; a 0-d input is taken as 1-D; ``repeats`` an int (or a one-element tensor)
repeats every element along ``dim`` that many times, consecutively (``[a, b]`` -> ``[a, a, b, b]``); a 1-D tensor
``repeats`` of length ``input.size(dim)`` repeats element ``i`` ``repeats[i]`` times; negative repeats raise
``RuntimeError``, a length mismatch too. Here an int is ``unsqueeze(dim + 1)``, ``expand`` and ``reshape`` (values and
gradients exact: the gradient sums each element's copies); per-element counts are an ``index_select`` with indices
computed on the host (the output size depends on the values). ``output_size`` is accepted and checked. Compiled
(a graph-mode function): an int ``repeats`` takes the same expand/reshape with MindSpore's ops on the static shape
(op_db's ``repeat_interleave``: it did not compile, "The parameters number of the function is 2, but the number of
provided arguments is 3"); tensor ``repeats`` raise there (the output's shape depends on their values), so ``run.py``
runs that step eagerly.

Replaces: ``torch.repeat_interleave`` (and ``mindtorch.torch.functional``'s), ``torch.Tensor.repeat_interleave``.
"""
import numpy as np

from . import Patch, get_replaced, patch_attr

NAME = "repeat_interleave"
torch = None  # mindtorch.torch, set by apply()
_ms = graph_mode_condition = None  # mindspore and MindTorch's graph_mode_condition, set by apply() (graph code reads
# module globals: an import inside a function does not compile)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):  # noqa: A002 (PyTorch's names)
    """PyTorch's ``repeat_interleave`` (module docstring). Shapes: the input's, with ``dim`` (or the flattened
    length) multiplied by ``repeats`` or summed over the per-element counts. Raises ``RuntimeError`` for negative
    repeats, a ``repeats`` tensor that is not 0-d/1-D or whose length differs from ``input.size(dim)``, and an
    ``output_size`` that differs from the result's length."""
    if graph_mode_condition():  # parsed by the graph compiler: the int form with MindSpore's ops, first
        return _graph_repeat_interleave(input, repeats, dim, output_size)
    if repeats is None:  # torch.repeat_interleave(repeats): the indices 0..n-1, each repeated repeats[i] times
        counts = input
        return repeat_interleave(torch.arange(counts.shape[0]), counts)
    x = input.reshape(-1) if dim is None else input
    if x.dim() == 0:
        x = x.reshape(1)
    d = 0 if dim is None else dim
    if d < -x.dim() or d >= x.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-x.dim()}, {x.dim() - 1}], "
                         f"but got {d})")
    d %= x.dim()
    n = x.shape[d]
    if isinstance(repeats, torch.Tensor):
        if repeats.dim() > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        counts = np.asarray(repeats.numpy()).reshape(-1).astype(np.int64)
        if counts.size == 1:
            repeats = int(counts[0])
        else:
            if counts.size != n:
                raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                                   f"repeats.size(0) = {counts.size} and input.size({d}) = {n}")
            if (counts < 0).any():
                raise RuntimeError("Repeats must be non-negative")
            index = torch.tensor(np.repeat(np.arange(n, dtype=np.int64), counts))
            _check_size(output_size, index.shape[0])
            return torch.index_select(x, d, index)
    repeats = int(repeats)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    shape = list(x.shape)
    new_shape = shape[:d] + [shape[d] * repeats] + shape[d + 1:]
    _check_size(output_size, new_shape[d])
    if repeats == 0 or n == 0:
        return torch.zeros(new_shape, dtype=x.dtype)
    expanded = x.unsqueeze(d + 1).expand(*(shape[:d + 1] + [repeats] + shape[d + 1:]))
    return expanded.reshape(new_shape)


def _graph_repeat_interleave(input, repeats, dim, output_size):  # noqa: A002
    """:func:`repeat_interleave` in a compiled graph: an int ``repeats`` (or a Python number) as ``expand_dims``,
    ``broadcast_to`` and ``reshape`` of the static shape; a tensor ``repeats`` (the output's shape would depend on
    its values) raises, so ``run.py`` runs that step eagerly."""
    if repeats is None or isinstance(repeats, _ms.Tensor):
        raise RuntimeError("torch.repeat_interleave with a tensor of repeats in a compiled graph: the output's shape "
                           "depends on its values; run this code in PyNative")
    x = _ms.ops.reshape(input, (-1,)) if dim is None else input
    shape = _ms.ops.shape(x)
    if len(shape) == 0:
        x = _ms.ops.reshape(x, (1,))
        shape = (1,)
    d = 0 if dim is None else dim
    if d < -len(shape) or d >= len(shape):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-len(shape)}, {len(shape) - 1}], "
                         f"but got {d})")
    d = d % len(shape)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    new_shape = shape[:d] + (shape[d] * repeats,) + shape[d + 1:]
    if output_size is not None and output_size != new_shape[d]:
        raise RuntimeError("allocated size does not match required size")
    expanded = _ms.ops.broadcast_to(_ms.ops.expand_dims(x, d + 1), shape[:d + 1] + (repeats,) + shape[d + 1:])
    return _ms.ops.reshape(expanded, new_shape)


def _check_size(output_size, length):
    if output_size is not None and int(output_size) != length:
        raise RuntimeError(f"allocated size does not match required size: output_size = {output_size}, "
                           f"but the result has {length} elements along the repeated dimension")


def tensor_repeat_interleave(self, repeats, dim=None, *, output_size=None):
    """``Tensor.repeat_interleave``: :func:`repeat_interleave` of ``self``."""
    return repeat_interleave(self, repeats, dim, output_size=output_size)


def apply() -> None:
    global torch, _ms, graph_mode_condition
    import mindspore as _ms
    import mindtorch.torch as torch
    from mindtorch.utils import graph_mode_condition
    import mindtorch.torch.functional as functional
    from mindtorch.torch.tensor import Tensor
    shared = get_replaced(functional, "repeat_interleave", NAME) is get_replaced(torch, "repeat_interleave", NAME)
    patch_attr(torch, "repeat_interleave", repeat_interleave)
    if shared:
        patch_attr(functional, "repeat_interleave", repeat_interleave)
    patch_attr(Tensor, "repeat_interleave", tensor_repeat_interleave)


PATCH = Patch(NAME, "torch.repeat_interleave / Tensor.repeat_interleave on CPU as PyTorch (int and per-element "
                    "repeats, dim=None flattening, errors); MindTorch's Tensor.repeat path raised \"'repeat' is not "
                    "supported on this device\" on mindspore 2.10's CPU", "post-import", apply,
              replaces=("torch.repeat_interleave", "torch.functional.repeat_interleave",
                        "torch.Tensor.repeat_interleave"))
