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
slices, numpy integers made ``int`` (also as slice bounds), sequences made index tensors (PyTorch's dtype rule), and where (2) makes the
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


def _numpy_bounds(obj) -> bool:
    """A slice with a numpy integer bound (``x[:, a:b]`` with ``a = np.clip(...)``, CutMix's boxes): PyTorch takes
    any ``__index__``; MindSpore raises "Slice index type must be int, tensor or none"."""
    import numpy as np
    return isinstance(obj, slice) and any(isinstance(v, np.integer) for v in (obj.start, obj.stop, obj.step))


def _int_slice(obj: slice) -> slice:
    import numpy as np
    return slice(*(int(v) if isinstance(v, np.integer) else v for v in (obj.start, obj.stop, obj.step)))


def _normalize(index, shape):
    """``(components, perm)``: the index rewritten for MindSpore, and the permutation from MindSpore's result
    layout to PyTorch's (None when they agree); ``(None, None)`` when MindTorch's path is already PyTorch's.

    ``components`` is a tuple with ``...`` expanded; ``perm`` applies to the result of indexing with it."""
    import numpy as np
    if isinstance(index, tuple):
        comps = list(index)
    elif isinstance(index, np.integer) and not isinstance(index, np.bool_):
        return (int(index),), None
    elif _numpy_bounds(index):
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
    seqs = any(_is_seq(c) or isinstance(c, np.integer) or _numpy_bounds(c) for c in comps)
    kinds = [_kind(c) for c in comps]
    if not seqs and not ("int" in kinds and "adv" in kinds):
        return None, None
    out = []
    for c in comps:
        if isinstance(c, np.integer) and not isinstance(c, np.bool_):
            c = int(c)
        elif _numpy_bounds(c):
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


def _stepped_plan(index, shape):
    """``(begin, end, strides, out_shape)`` for ``ops.strided_slice`` from a basic index with a slice step above 1
    (only slices, integers, ``None``, one ``...``), or None for any other index and any case left to MindTorch's
    path (its errors: a step <= 0, an integer out of range, too many indices; an empty result; non-int bounds)."""
    comps = index if isinstance(index, tuple) else (index,)
    if not any(isinstance(c, slice) and c.step is not None and not (isinstance(c.step, int) and c.step == 1)
               for c in comps):
        return None
    if not all(c is None or c is Ellipsis or isinstance(c, slice)
               or (isinstance(c, numbers.Integral) and not isinstance(c, bool)) for c in comps):
        return None
    if sum(1 for c in comps if c is Ellipsis) > 1:
        return None
    specified = sum(1 for c in comps if c is not None and c is not Ellipsis)
    if specified > len(shape):
        return None
    if Ellipsis in comps:
        at = comps.index(Ellipsis)
        comps = comps[:at] + (slice(None),) * (len(shape) - specified) + comps[at + 1:]
    else:
        comps = comps + (slice(None),) * (len(shape) - specified)
    begin, end, strides, out_shape, dim = [], [], [], [], 0
    for c in comps:
        if c is None:
            out_shape.append(1)
            continue
        n = shape[dim]
        dim += 1
        if isinstance(c, slice):
            try:
                start, stop, step = c.indices(n)
            except TypeError:
                return None
            length = len(range(start, stop, step))
            if step <= 0 or length == 0:
                return None
            begin.append(start), end.append(stop), strides.append(step), out_shape.append(length)
        else:
            i = int(c)
            if not -n <= i < n:
                return None
            begin.append(i % n), end.append(i % n + 1), strides.append(1)
    return tuple(begin), tuple(end), tuple(strides), tuple(out_shape)


def _stepped_slice(self, index):
    """``x[:, :, ::2, ::2]`` in PyNative through ``mindspore.ops.strided_slice`` with explicit bounds, or None when
    ``index`` has no slice step above 1 (:func:`_stepped_plan`).

    Why: MindSpore's own ``Tensor.__getitem__`` (C++ ``TensorPy::TensorGetItem``, under MindTorch's) makes such a
    slice a strided *view* in PyNative (``is_contiguous()`` False), and the CPU gradient of that view,
    ``StridedSliceGrad`` (``slice_grad_cpu_kernel.cc`` ``CopyDataToOutput``), fails with "For 'StridedSliceGrad, 6
    input memory out of bounds" -- on every call for ``(x[:, :, ::2, ::2] * 2).sum()`` of a (2, 4, 5, 5) tensor,
    and for some shapes and uses only (``x[::2, ::2]``, ``x[:, :, ::2, :]``), on mindspore-dev 2.5 and 2.10 alike
    (measured 2026-11-29; the CIFAR resnet20 option-A shortcut ``F.pad(x[:, :, ::2, ::2], ...)``). The
    ``StridedSlice`` primitive called with explicit begin/end/strides is an ordinary op with a working gradient
    (0 failures in 40 shapes on each stack). Values and gradients are PyTorch's: the same elements, a copy
    (PyTorch returns a view; a write into the result reaches ``x`` through MindTorch's ``parent_tensor_`` link, as
    for MindTorch's own slices). Compiled graphs keep MindSpore's indexing (their gradient works)."""
    plan = _stepped_plan(index, self.shape)
    if plan is None:
        return None
    begin, end, strides, out_shape = plan
    x = cast_to_ms_tensor(self)
    out = _ms.ops.strided_slice(x, begin, end, strides)
    if tuple(out.shape) != out_shape:
        out = out.reshape(out_shape)
    result = cast_to_adapter_tensor(out)
    result.parent_tensor_ = x
    result.index_of_parent_ = index
    return result


_PLAIN_BOUND = (int, type(None))


def _plain(index) -> bool:
    """An index made of Python ``int`` (not bool), ``None``, ``...`` and slices whose bounds are ``int``/``None``
    and step ``None`` or 1 (``data[i:i + block]``, ``x[:, 0]``, ``x[..., :-1]``): one :func:`getitem` passes to
    MindTorch as it is in graph mode and in PyNative alike (:func:`_normalize` gives ``(None, None)`` for it: no
    sequence, numpy integer or advanced index; :func:`_stepped_plan` None: no step above 1)."""
    for c in (index if type(index) is tuple else (index,)):
        kind = type(c)
        if kind is slice:
            if type(c.start) not in _PLAIN_BOUND or type(c.stop) not in _PLAIN_BOUND \
                    or not (c.step is None or (type(c.step) is int and c.step == 1)):
                return False
        elif kind is not int and c is not None and c is not Ellipsis:
            return False
    return True


def getitem(self, index):
    """``Tensor.__getitem__`` / ``Parameter.__getitem__``: PyTorch's indexing rules for sequences and integers in an
    index (module docstring)."""
    original_getitem = _parameter_getitem if isinstance(self, Parameter) else _tensor_getitem
    if _plain(index):  # MindTorch's getitem on the index as is, in either mode: skips the mode check (~11 us)
        return original_getitem(self, index)
    if graph_mode_condition():
        return original_getitem(self, index)
    comps, perm = _normalize(index, self.shape)
    if comps is None:
        stepped = _stepped_slice(self, index)
        return original_getitem(self, index) if stepped is None else stepped
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
                        "torch.nn.Parameter.__setitem__"),
              after=("parameter_methods",))
