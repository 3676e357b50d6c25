"""``torch.index_put`` / ``Tensor.index_put``: out of place, with gradients, as PyTorch (``Tensor.index_put_`` keeps
writing into ``self`` through it).

MindTorch 0.4.0 runs MindSpore's ``ScatterNdUpdate`` / ``ScatterNdAdd`` on the input itself: these primitives write
into their first argument, so ``torch.index_put(x, (i,), v)`` changed ``x`` (PyTorch's out-of-place form leaves it
as it was), silently; ``ScatterNdAdd`` has no gradient (``accumulate=True``: "Illegal primitive ScatterNdAdd's
bprop not defined") and the gradient of the other was wrong (op_db's ``index_put:s0``: 5 of 25 values off); a
boolean mask index raised ``TypeError`` (``index_put:s1``); compiled, a value of rank > 1 raised (``run.py conformance
--opinfo``, issue 35).

PyTorch 2.13's semantics: ``indices`` is a tuple of ``k`` index tensors for the first ``k`` dimensions (integer
tensors broadcast against each other; a boolean mask stands for its ``nonzero()`` coordinates, one per dimension it
covers; negative integers count from the end); ``values`` is broadcast to the indexed shape (the broadcast index
shape followed by the remaining dimensions); the result is a copy of the input with those positions replaced
(``accumulate=False``) or added to (``accumulate=True``). Here that is MindSpore's out-of-place
``tensor_scatter_update`` / ``tensor_scatter_add`` on the stacked coordinates, whose gradients are PyTorch's (the
input's: the output gradient, zero at replaced positions when not accumulating; the values': the output gradient
gathered at the positions, summed over broadcast dimensions). A boolean mask needs its values (``nonzero``): PyNative
only (compiled, it raises MindSpore's error and ``run.py`` runs the step eagerly). An index out of range raises
``IndexError`` in PyNative.

Must come after nothing. Replaces: ``torch.index_put``, ``torch.Tensor.index_put``.
"""
from __future__ import annotations

from . import Patch, patch_attr

NAME = "index_put"
# graph code below reads these module globals; set by apply()
ms = cast_to_ms_tensor = cast_to_adapter_tensor = graph_mode_condition = broadcast_shapes = None


def _coordinates(indices, shape):
    """The integer index tensors (int64) of ``indices``, a boolean mask split into one per dimension it covers."""
    out = []
    for index in indices:
        index = cast_to_ms_tensor(index)
        if index.dtype in (ms.bool_, ms.uint8):
            coords = ms.ops.nonzero(index.astype(ms.bool_))  # (count, mask rank)
            out.extend(coords[:, j] for j in range(index.ndim))
        else:
            out.append(index.astype(ms.int64))
    if len(out) > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got {len(out)})")
    return out


def index_put(input, indices, values, accumulate=False):  # noqa: A002 (PyTorch's names)
    """PyTorch's ``torch.index_put`` (module docstring): a new tensor of the input's shape and dtype."""
    x = cast_to_ms_tensor(input)
    v = cast_to_ms_tensor(values)
    if not isinstance(indices, (tuple, list)):
        indices = (indices,)
    coords = _coordinates(indices, x.shape)
    k = len(coords)
    index_shape = tuple(broadcast_shapes(*[c.shape for c in coords]))
    if 0 in index_shape:  # nothing indexed: a copy of the input (its gradient passes through)
        return cast_to_adapter_tensor(x + 0)
    wrapped = []
    for d, c in enumerate(coords):
        if not graph_mode_condition() and c.size and (bool((c >= x.shape[d]).any()) or bool((c < -x.shape[d]).any())):
            raise IndexError(f"index out of range in self: dimension {d} has size {x.shape[d]}")
        c = ms.ops.broadcast_to(c, index_shape)
        wrapped.append(ms.ops.select(c < 0, c + x.shape[d], c))
    position = ms.ops.stack(wrapped, -1) if index_shape else ms.ops.stack(wrapped, -1).reshape(1, k)
    target_shape = index_shape + tuple(x.shape[k:])
    v = ms.ops.broadcast_to(v.astype(x.dtype), target_shape)
    if not index_shape:
        v = v.reshape((1,) + tuple(x.shape[k:]))
    scatter = ms.ops.tensor_scatter_add if accumulate else ms.ops.tensor_scatter_update
    return cast_to_adapter_tensor(scatter(x, position, v))


def tensor_index_put(self, indices, values, accumulate=False):
    """``Tensor.index_put``: :func:`index_put` of ``self``."""
    return index_put(self, indices, values, accumulate)


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, graph_mode_condition, broadcast_shapes
    import mindspore
    import mindtorch.torch as torch
    from mindtorch.torch.functional import broadcast_shapes as shapes
    from mindtorch.torch.tensor import Tensor
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    from mindtorch.utils import graph_mode_condition as graph_mode
    ms, cast_to_ms_tensor, cast_to_adapter_tensor, graph_mode_condition = mindspore, to_ms, to_adapter, graph_mode
    broadcast_shapes = shapes
    patch_attr(torch, "index_put", index_put)
    patch_attr(Tensor, "index_put", tensor_index_put)


PATCH = Patch(NAME, "torch.index_put / Tensor.index_put out of place with PyTorch's gradients (MindSpore's "
                    "ScatterNdUpdate wrote into the input, silently; accumulate=True had no gradient; bool masks "
                    "raised)", "post-import", apply, replaces=("torch.index_put", "torch.Tensor.index_put"))
