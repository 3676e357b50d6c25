"""Tensor indexing (``x[index]``, ``x[index] = value``) with PyTorch's rules for sequence and integer components.

PyTorch (``torch/csrc/autograd/python_variable_indexing.cpp``, 2.13) and MindSpore (numpy's rules) differ where an
index holds Python sequences or mixes integers with advanced (tensor) indices:

1. **Sequences inside a tuple index.** PyTorch turns every sequence component (``list``, ``tuple``, ``range``, a
   numpy array) into an index tensor (``sequenceToVariable`` -> ``indexing_tensor_from_data``: bool data gives a
   bool mask, anything else int64, floats truncated). MindSpore accepts lists and tuples but not ``range`` or numpy
   arrays ("For tuple index, the types only support 'Slice', 'Ellipsis', 'None', 'Tensor', 'int', 'List', 'Tuple',
   'bool'": pytorch/examples mnist_forward_forward's ``x_[range(x.shape[0]), y] = x.max()``), and after a slice or
   ``None`` it silently ignored a ``range``: ``x[:, range(2)]`` returned all of ``x``, ``x[None, range(2)]`` had
   shape (1, 1, 3, 4, 5) for (1, 2, 4, 5). A top-level ``range`` was refused too.
2. **Integers with advanced indices.** PyTorch applies integers (and 0-dim integer tensors) first, as ``select``,
   then indexes with the tensors; numpy treats them as advanced indices broadcast with the others. The two agree
   except where that changes whether the advanced indices are adjacent: ``x[1, :, [0, 4]]`` is (4, 2) in PyTorch
   and (2, 4) in numpy/MindSpore (same elements, transposed: a silent difference, for reads and for the layout a
   value is broadcast to in writes).
3. **A top-level non-tuple sequence** that contains a sequence, slice, tensor, ``None`` or ``...`` (fewer than 32
   items) is taken as a tuple, with PyTorch's ``UserWarning`` ("Using a non-tuple sequence for multidimensional
   indexing is deprecated ..."); numpy arrays never are (they are index tensors).

Here, in PyNative, an index that needs it is rewritten before MindTorch/MindSpore see it: ``...`` expanded to
slices, numpy integers (also a slice's bounds) made ``int``, sequences made index tensors (PyTorch's dtype rule), and where (2) makes the
layouts differ, the result of a read is permuted into PyTorch's layout and the value of a write is broadcast to
PyTorch's layout and permuted into MindSpore's. Other indices (the common ``x[:, 0]``, ``x[mask]``, ``x[t]``) take
MindTorch's path unchanged after one scan of the index. Inside compiled graphs MindTorch's and MindSpore's own
indexing runs (MindSpore's graph compiler has its own index handling; a ``range`` there fails to compile and the
step falls back to PyNative, saying so).

Replaces: ``torch.Tensor.__getitem__`` (MindTorch's) and ``torch.Tensor.__setitem__`` (was MindSpore's C++ one,
which it calls), and the same two on ``torch.nn.Parameter``.
"""
from __future__ import annotations

import numbers
import warnings

from . import Patch, get_replaced, patch_attr

_SEQUENCE_WARNING = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
                     "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as "
                     "tensor index, x[torch.tensor(seq)], which will result either in an error or a different result")

_ms = None  # mindspore, set by apply()


def _is_seq(obj) -> bool:
    """A component PyTorch converts with ``sequenceToVariable``: list, tuple, range, numpy array."""
    import numpy as np
    return isinstance(obj, (list, tuple, range, np.ndarray))


def _treat_as_tuple(index) -> bool:
    """PyTorch's ``treatSequenceAsTuple`` for a top-level non-tuple sequence (numpy's heuristic)."""
    if len(index) >= 32:
        return False
    return any(isinstance(o, (_ms.Tensor, slice)) or _is_seq(o) or o is None or o is Ellipsis for o in index)


def _to_index_tensor(seq):
    """PyTorch's ``indexing_tensor_from_data``: a bool tensor for bool data, otherwise int64 (floats truncated).
    Returns None when numpy cannot make a regular array of it (left to MindSpore, which raises its own error)."""
    import numpy as np
    if isinstance(seq, range):
        return _ms.Tensor(np.arange(seq.start, seq.stop, seq.step, dtype=np.int64))
    if isinstance(seq, (list, tuple)) and any(isinstance(o, _ms.Tensor) for o in seq):
        seq = [o.asnumpy() if isinstance(o, _ms.Tensor) else o for o in seq]
    try:
        arr = np.asarray(seq)
    except ValueError:
        return None
    if arr.dtype == np.bool_:
        return _ms.Tensor(arr)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)):
        return None
    return _ms.Tensor(arr.astype(np.int64))


def _kind(obj) -> str:
    """'int' (select in PyTorch), 'adv' (index tensor), 'bool' (Python bool), or 'basic' (slice, None)."""
    if isinstance(obj, bool):
        return "bool"
    if isinstance(obj, numbers.Integral):
        return "int"
    if isinstance(obj, _ms.Tensor):
        if obj.ndim == 0 and obj.dtype in _ms.dtype.int_type + _ms.dtype.uint_type[1:]:
            return "int"  # a 0-dim integer tensor (not uint8: a mask) selects, as an int
        return "adv"
    return "basic"


def _numpy_slice(obj) -> bool:
    """Whether ``obj`` is a slice with a numpy integer bound (``x[:, yl:yh]`` with ``yl = np.clip(...)``, timm's
    CutMix): PyTorch takes any integer (``__index__``); MindSpore raises "Slice index type must be int, tensor or
    none"."""
    import numpy as np
    return isinstance(obj, slice) and any(isinstance(b, np.integer) for b in (obj.start, obj.stop, obj.step))


def _int_slice(obj: slice) -> slice:
    """``obj`` with its numpy integer bounds made ``int``."""
    return slice(*(None if b is None else int(b) for b in (obj.start, obj.stop, obj.step)))


def _normalize(index, shape):
    """``(components, perm)``: the index rewritten for MindSpore, and the permutation from MindSpore's result
    layout to PyTorch's (None when they agree); ``(None, None)`` when MindTorch's path is already PyTorch's.

    ``components`` is a tuple with ``...`` expanded; ``perm`` applies to the result of indexing with it."""
    import numpy as np
    if isinstance(index, tuple):
        comps = list(index)
    elif isinstance(index, np.integer) and not isinstance(index, np.bool_):
        return (int(index),), None
    elif _numpy_slice(index):
        return (_int_slice(index),), None
    elif isinstance(index, (range, np.ndarray)):  # PyTorch: an index tensor (a numpy array never is a tuple)
        comps = [index]
    elif isinstance(index, list):
        if _treat_as_tuple(index):
            warnings.warn(_SEQUENCE_WARNING, UserWarning, stacklevel=3)
            comps = list(index)
        else:
            comps = [index]  # an index tensor (checked against the bounds)
    else:
        return None, None  # int, slice, None, Ellipsis, bool, a tensor: MindSpore's rules agree
    seqs = any(_is_seq(c) or isinstance(c, np.integer) or _numpy_slice(c) for c in comps)
    kinds = [_kind(c) for c in comps]
    if not seqs and not ("int" in kinds and "adv" in kinds):
        return None, None
    out = []
    for c in comps:
        if isinstance(c, np.integer) and not isinstance(c, np.bool_):
            c = int(c)
        elif _numpy_slice(c):
            c = _int_slice(c)
        elif _is_seq(c):
            t = _to_index_tensor(c)
            if t is None:
                return None, None
            c = t
        out.append(c)
    kinds = [_kind(c) for c in out]
    if "bool" in kinds:  # x[True, ...] (rare): MindTorch's own handling
        return tuple(out), None
    _check_bounds(comps, out, shape)
    # expand `...` (PyTorch's count_specified_dimensions: a bool/uint8 tensor takes its ndim dims)
    specified = sum((c.ndim if isinstance(c, _ms.Tensor) and c.dtype in (_ms.bool_, _ms.uint8) else 1)
                    for c in out if c is not None and c is not Ellipsis)
    if any(c is Ellipsis for c in out):
        at = next(i for i, c in enumerate(out) if c is Ellipsis)
        fill = [slice(None)] * max(len(shape) - specified, 0)
        out = out[:at] + fill + [c for c in out[at + 1:] if c is not Ellipsis]
        kinds = [_kind(c) for c in out]
    return tuple(out), _permutation(out, kinds)


def _check_bounds(given, converted, shape) -> None:
    """PyTorch's ``IndexError`` for an out-of-range value in a sequence component (MindSpore raises a RuntimeError
    from its GatherNd kernel, or a ValueError from TensorScatterUpdate, with a C++ stack). ``dimension k`` in the
    message counts the index tensors, as PyTorch's does. Index tensors the user made are not read here."""
    import numpy as np
    dim, k = 0, 0
    for g, c in zip(given, converted):
        if c is None:
            continue
        if c is Ellipsis:
            dim += len(shape) - sum((t.ndim if isinstance(t, _ms.Tensor) and t.dtype in (_ms.bool_, _ms.uint8) else 1)
                                    for t in converted if t is not None and t is not Ellipsis)
            continue
        if isinstance(c, _ms.Tensor) and _kind(c) == "adv":
            if _is_seq(g) and c.dtype == _ms.int64 and c.size and dim < len(shape):
                values = c.asnumpy().ravel()
                bad = (values >= shape[dim]) | (values < -shape[dim])
                if bad.any():
                    raise IndexError(f"index {values[np.argmax(bad)]} is out of bounds for dimension {k} with "
                                     f"size {shape[dim]}")
            k += 1
            dim += c.ndim if c.dtype in (_ms.bool_, _ms.uint8) else 1
        else:
            dim += 1


def _permutation(comps, kinds):
    """Permutation taking numpy's result layout (MindSpore's) to PyTorch's, or None if they agree (module
    docstring, point 2). The broadcast block of the advanced indices goes at the position of the first advanced
    index when those are adjacent, otherwise in front; numpy counts integers as advanced, PyTorch does not."""
    if "adv" not in kinds or "int" not in kinds:
        return None
    adv_np = [i for i, k in enumerate(kinds) if k in ("int", "adv")]
    no_int = [k for k in kinds if k != "int"]
    adv_t = [i for i, k in enumerate(no_int) if k == "adv"]

    def block_position(kinds_, adv):
        if adv[-1] - adv[0] + 1 != len(adv):
            return 0  # not adjacent: in front
        return sum(1 for k in kinds_[:adv[0]] if k == "basic")  # dims made by slices / None before it

    pos_np, pos_t = block_position(kinds, adv_np), block_position(no_int, adv_t)
    if pos_np == pos_t:
        return None
    block = max((1 if c.dtype in (_ms.bool_, _ms.uint8) else c.ndim) for c, k in zip(comps, kinds) if k == "adv")
    rest = sum(1 for k in kinds if k == "basic")
    rest_dims = [("r", i) for i in range(rest)]
    block_dims = [("b", i) for i in range(block)]
    np_order = rest_dims[:pos_np] + block_dims + rest_dims[pos_np:]
    rest_dims_after = rest_dims[:pos_t] + block_dims + rest_dims[pos_t:]
    # remaining dims of x that no component indexes come after all of these, in the same order in both layouts
    return tuple(np_order.index(d) for d in rest_dims_after)


def _with_trailing(perm, ndim):
    return perm + tuple(range(len(perm), ndim))


# set by apply(): what this patch replaced on each class, and MindTorch's helpers (module globals: indexing is hot)
_tensor_getitem = _tensor_setitem = _parameter_getitem = _parameter_setitem = None
Parameter = cast_to_adapter_tensor = cast_to_ms_tensor = graph_mode_condition = None


def getitem(self, index):
    """``Tensor.__getitem__`` / ``Parameter.__getitem__``: PyTorch's indexing rules for sequences and integers in an
    index (module docstring)."""
    original_getitem = _parameter_getitem if isinstance(self, Parameter) else _tensor_getitem
    if graph_mode_condition():
        return original_getitem(self, index)
    comps, perm = _normalize(index, self.shape)
    if comps is None:
        return original_getitem(self, index)
    out = original_getitem(self, comps)
    if perm is not None:
        out = cast_to_adapter_tensor(cast_to_ms_tensor(out).transpose(_with_trailing(perm, out.ndim)))
    return out


def setitem(self, index, value):
    """``Tensor.__setitem__`` / ``Parameter.__setitem__``: PyTorch's indexing rules for sequences and integers in an
    index (module docstring); writes in place."""
    if isinstance(self, Parameter):
        original_getitem, original_setitem = _parameter_getitem, _parameter_setitem
    else:
        original_getitem, original_setitem = _tensor_getitem, _tensor_setitem
    if graph_mode_condition():
        return original_setitem(self, index, value)
    comps, perm = _normalize(index, self.shape)
    if comps is None:
        return original_setitem(self, index, value)
    if perm is not None and isinstance(value, _ms.Tensor) and value.ndim > 0:
        region = original_getitem(self, comps)  # MindSpore's layout of the indexed elements
        full = _with_trailing(perm, region.ndim)
        torch_shape = tuple(region.shape[i] for i in full)
        inverse = tuple(full.index(i) for i in range(len(full)))
        value = _ms.ops.broadcast_to(cast_to_ms_tensor(value), torch_shape).transpose(inverse)
    return original_setitem(self, comps, value)


def apply() -> None:
    """Wrap the indexing of ``Tensor`` and ``Parameter``. The originals: MindTorch's ``__getitem__`` (``Parameter``'s,
    a copy of it from patches/parameter_methods.py); ``__setitem__`` is MindSpore's (``StubTensor``'s for a
    MindTorch Tensor, ``Tensor``'s C++ one for a Parameter)."""
    global _ms, _tensor_getitem, _tensor_setitem, _parameter_getitem, _parameter_setitem
    global Parameter, cast_to_adapter_tensor, cast_to_ms_tensor, graph_mode_condition
    import mindspore
    from mindtorch.torch.nn.parameter import Parameter
    from mindtorch.torch.tensor import Tensor, cast_to_adapter_tensor, cast_to_ms_tensor
    from mindtorch.utils import graph_mode_condition

    _ms = mindspore
    _tensor_getitem = get_replaced(Tensor, "__getitem__", NAME)
    _tensor_setitem = get_replaced(Tensor, "__setitem__", NAME)
    _parameter_getitem = get_replaced(Parameter, "__getitem__", NAME)
    _parameter_setitem = get_replaced(Parameter, "__setitem__", NAME)
    for cls in (Tensor, Parameter):
        patch_attr(cls, "__getitem__", getitem)
        patch_attr(cls, "__setitem__", setitem)


NAME = "indexing"
PATCH = Patch(NAME, "x[i] / x[i] = v with PyTorch's rules: range/list/tuple/ndarray components as index "
                    "tensors, integers applied before advanced indices (x[1, :, [0, 4]] is (4, 2))",
              "post-import", apply,
              replaces=("torch.Tensor.__getitem__", "torch.Tensor.__setitem__", "torch.nn.Parameter.__getitem__",
                        "torch.nn.Parameter.__setitem__"))
