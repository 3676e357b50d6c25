"""NaN in ``max``/``min``/``amax``/``amin``/``argmax``/``argmin``/``aminmax``/``maximum``/``minimum``/``topk``/
``clamp``/``clip``, the ReLU-like activations and max pooling as PyTorch: it propagates (and the indices point at it),
PyNative and compiled.

MindSpore's CPU kernels (``ReduceMax``/``ArgMaxWithValue``/``Maximum``/``TopK``/``ClipByValue``; 2.10.0 and
2.5-dev alike) skip NaN, silently: for ``x = [[1, nan, 3], [2, 5, -1]]`` MindTorch gave ``torch.max(x)`` 5.,
``x.max(dim=1)`` values ``[3, 5]`` indices ``[2, 1]``, ``argmax(1)`` ``[2, 1]``, ``topk(x, 2, dim=1)`` ``[[1, nan],
[5, 2]]``, ``maximum(x, 0)`` and ``clamp(x, 0, 2)`` a 0 where the NaN was. PyTorch 2.13 (``aten/src/ATen/native``
``ReduceOps``/``TensorCompare``/``TopKImpl.h``, whose comparisons treat NaN as greater than everything, and the
documented "propagates NaN" of ``maximum``/``minimum``/``amax``/``clamp``) gives NaN, the index of the first NaN along
the reduced dimension, and ``topk`` orders NaN above ``+inf`` (``largest=True``: NaN first; ``largest=False``: NaN
last).

How: each function calls what it replaced, then corrects the result with a NaN mask of the input, only for floating
inputs (integer and bool inputs return the replaced function's result untouched):

* ``max``/``min(dim)``, ``argmax``/``argmin``: where ``isnan(x).any(dim)``, the index becomes the first NaN's
  (``argmax`` of the mask: MindSpore's ``Argmax`` returns the first of equal values), and the values are
  ``gather(x, index)``, so the gradient goes to the selected index, as PyTorch's ``value_selecting_reduction_backward``;
* ``max()``/``min()`` of all elements: NaN as ``sum(where(isnan(x), x, 0)) / count``, so the gradient is shared
  evenly by the NaN elements (PyTorch's ``evenly_distribute_backward``);
* ``amax``/``amin`` (and ``aminmax``): the same per reduced row; rows without NaN keep the replaced function's
  values and gradients. PyTorch's gradient of a row with NaN is NaN on each of its elements (``grad / count`` with
  no element equal to the NaN result: 0/0); here the NaN elements share it, finite. NaN there would come back from a
  zero cotangent too (``0 * nan``): a compiled graph differentiates through ``isnan(x.amax(1))``, which PyTorch's
  tape cuts, and its gradient became NaN where PyTorch's is 0;
* ``maximum``/``minimum`` (and ``max``/``min(other)``): where either operand is NaN, ``input + other`` (NaN, with
  the full gradient to both operands, as PyTorch's ``where(self == other, grad / 2, grad)`` masks neither there);
* ``clamp``/``clip`` (``clamp_min``/``clamp_max`` and the in-place forms, which call them): NaN input elements stay
  NaN with a zero gradient (PyTorch's clamp backward masks ``min <= x <= max``, false for NaN); NaN in a tensor bound
  gives NaN;
* ``topk``: the NaN positions of each row (first the lower index) are put first (``largest``) or after the non-NaN
  values (``largest=False``), the rest is the replaced ``topk`` of the input with NaN as ``-inf`` (``+inf``); values
  are ``gather(x, indices)``. Without NaN the result is the replaced function's, bit for bit.

Activations and max pooling (``F.relu``/``torch.relu``/``Tensor.relu``/``nn.ReLU``, ``relu6``/``nn.ReLU6``,
``hardtanh``/``nn.Hardtanh``, ``threshold``/``nn.Threshold``; ``F.max_pool1d/2d``/``nn.MaxPool1d/2d``,
``adaptive_max_pool1d/2d``; their in-place forms): MindSpore's ``ReLU``/``ReLU6``/``HardTanh``/``Threshold``/
``MaxPool`` kernels also dropped NaN (``F.relu(nan)`` 0, PyTorch nan: a NaN after BatchNorm became zeros and trained
on, where PyTorch's loss turns NaN). Here the input's NaNs are put back (``where(isnan(x), x, out)``: the gradient
passes there, as PyTorch's ``threshold_backward``); a pooled output is NaN where the same pool of the NaN mask is
positive. With ``inplace=True`` in PyNative, the corrected value is ``copy_``-ed into the input.

Every step is MindSpore ops on static shapes, so the same functions compile in a graph (the functions are plain,
no ``__wrapped__``: MindSpore's graph parser compiles them, and ``inspect.unwrap`` of what they replaced). Cost: in
PyNative, a NaN-free floating input costs one ``isnan(x).any()`` read on the host (:func:`_no_nan`; numpy's on CPU)
and returns the replaced result; with a NaN, a few element-wise ops and a reduction of the mask (``topk``: two more
``TopK``). In a graph the correction is always compiled in (no branch on values): ``isnan`` + ``where`` per
activation; the compiled ``nn.ReLU``/``ReLU6``/``Hardtanh`` forwards call the primitives directly
(:func:`_graph_activation`, as adapter/graph_lean.py's lean ReLU form, which gives way to them). Measured 2026-12-07
(2-core machine shared with other jobs): ``pt_original/train_resnet.py`` ResNet18, batch 32, 30 steps, fresh compile
cache: first compiled step 5.1 s without this patch, 5.4-5.6 s with it; steady state 0.45 vs 0.43 s a step, losses
bit-identical. On a quiet 2-core Intel Xeon (2026-12-07, ``bench/train_step.py --arch resnet18``, two interleaved
pairs) the steady state is 0.228 / 0.218 s with it and 0.196 / 0.203 s without: ~10 % of a ResNet18 step
(docs/performance.md). MindSpore graph, 8 ReLU layers on 2M floats forward + backward: 56-68 ms with ``ReLU`` alone,
120-156 ms with the correction (``where(x <= 0, 0, x)`` and ``masked_fill`` were slower, 233-280 ms).

In PyNative a window holding NaN pools to its last NaN, as PyTorch's CPU kernels: its index (``return_indices``;
``adaptive_max_pool1d/2d``'s MindSpore kernel gave the largest number's) and its gradient (before: 0). Not covered:
compiled, the pooled NaN's gradient stays 0 and ``adaptive_max_pool``'s index MindSpore's (the key's pool and gather,
run for every input in a graph, made a small CNN's compiled step 0.85 -> 1.16 s, first step 7.9 -> 9.5 s). ``topk(sorted=False)``: PyTorch's order is unspecified; the same set here. ``topk`` of a row with ``-inf``
among fewer non-NaN values than ``k`` may repeat a NaN index (``largest=True``).

Must come after ``index_dtype``, ``return_types``, ``broadcast_operands``, ``empty_reductions``,
``reduction_overloads``, ``max_pool``, ``input_checks`` and ``torch_errors``, which replaced some of these names
before it (their wrappers stay inside: an empty input's error, int64 indices, PyTorch's error classes are theirs).
Replaces: ``torch.X``, ``torch.functional.X`` and ``torch.Tensor.X`` for X in :data:`NAMES` (``aminmax``: not the
method), ``torch.nn.functional.X`` for X in :data:`ACTIVATIONS` and :data:`POOLS`, ``nn.ReLU/ReLU6/Hardtanh.forward``,
``torch.relu``, ``torch.Tensor.relu``, ``torch.Tensor.kthvalue``, ``nn.MaxPool1d/2d.forward``,
``nn.AdaptiveMaxPool1d/2d.forward`` (adapter/graph_lean.py's lean ReLU and MaxPool2d graph forms give way: they are
taken only where the forward is MindTorch's own).
"""
from __future__ import annotations

from . import Patch, get_replaced, patch_attr

NAME = "nan_propagation"
# set by apply(); graph code reads these module globals
ms = cast_to_ms_tensor = cast_to_adapter_tensor = pynative_mode_condition = numpy = None
_ON_CPU = False  # MindSpore's device target is CPU (set by apply()): tensors are read in host memory
# graph forms of the activation modules: MindTorch's conversion primitives and MindSpore's, built once (apply())
_to_ms = _to_adapter = _relu_p = _isnan_p = _select_p = None
_NAN = float("nan")

EXTREMA = ("max", "min")
REDUCED = ("amax", "amin")
INDICES = ("argmax", "argmin")
ELEMENTWISE = ("maximum", "minimum")
CLAMPS = ("clamp", "clip", "clamp_min", "clamp_max")
NAMES = EXTREMA + REDUCED + INDICES + ELEMENTWISE + CLAMPS + ("topk", "aminmax")


# -- helpers on MindSpore tensors (graph code) ------------------------------------------------------------------------
def _floating(x):
    return isinstance(x, ms.Tensor) and ms.ops.is_floating_point(x)


def _no_nan(*tensors):
    """PyNative on CPU only: none of ``tensors`` (MindSpore tensors or other values) holds a NaN, read on the host
    (one ``isnan``/``any`` each), so a NaN-free call costs that instead of the correction's ops. In a graph, and on
    a device target other than CPU (where the read would wait for the device at every call): False, the correction
    runs (it leaves NaN-free results as they were)."""
    if not pynative_mode_condition():
        return False
    if not _ON_CPU:  # on a device (Ascend, GPU) a host read is a synchronisation per call: correct on the device
        return False
    for t in tensors:
        if not _floating(t):
            continue
        if t.dtype != ms.bfloat16:
            if numpy.isnan(t.asnumpy()).any():  # host memory already: 58 us for 256k floats, ms's isnan/any 1.9 ms
                return False
        elif bool(ms.ops.isnan(t).any()):
            return False
    return True


def _axes(ndim, dim):
    """The reduced axes as a tuple of non-negative ints (all for ``None``/``()``)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return tuple(range(ndim))
        return tuple(d % ndim if ndim else 0 for d in dim)
    return (dim % ndim if ndim else 0,)


def _first_nan(xm, dim):
    """``(any NaN along dim, index of the first NaN)``, both with ``dim`` kept (size 1)."""
    mask = ms.ops.isnan(xm)
    return ms.ops.any(mask, dim, True), ms.ops.argmax(mask.astype(ms.int32), dim, True)


def _select(xm, dim, keepdim, indices):
    """``(values, indices)`` of a ``max``/``min(dim)`` whose NaN rows point at their first NaN (``indices``: the
    replaced result's, any dtype)."""
    if xm.ndim == 0:
        return xm, indices
    d = dim % xm.ndim
    has, first = _first_nan(xm, d)
    kept = indices if keepdim else ms.ops.expand_dims(indices, d)
    kept = ms.ops.where(has, first.astype(kept.dtype), kept)
    values = ms.ops.gather_elements(xm, d, kept.astype(ms.int64))
    if keepdim:
        return values, kept
    return ms.ops.squeeze(values, d), ms.ops.squeeze(kept, d)


def _nan_all(xm, result):
    """``result`` (a reduction of all of ``xm``) NaN where ``xm`` has one; its gradient shared by the NaNs."""
    mask = ms.ops.isnan(xm)
    count = ms.ops.sum(mask.astype(xm.dtype))
    nan_value = ms.ops.sum(ms.ops.where(mask, xm, ms.ops.zeros_like(xm))) / ms.ops.maximum(count, 1.0)
    return ms.ops.where(count > 0, nan_value.astype(result.dtype).reshape(result.shape), result)


def _nan_rows(xm, axes, keepdim, result):
    """``result`` (``amax``/``amin`` over ``axes``) NaN in the rows of ``xm`` with a NaN; the gradient of such a row
    shared by its NaNs (module docstring: PyTorch's is NaN on the whole row)."""
    mask = ms.ops.isnan(xm)
    count = ms.ops.sum(mask.astype(xm.dtype), axes, keepdim)
    total = ms.ops.sum(ms.ops.where(mask, xm, ms.ops.zeros_like(xm)), axes, keepdim)
    nan_value = total / ms.ops.maximum(count, 1.0)
    return ms.ops.where(count > 0, nan_value.astype(result.dtype), result)


def _index_fix(xm, dim, keepdim, indices):
    """``argmax``/``argmin`` ``indices``: the first NaN's where there is one (``dim=None``: of the flattened input)."""
    if dim is None:
        flat = xm.reshape(-1)
        has, first = _first_nan(flat, 0)
        out = ms.ops.where(has, first.astype(indices.dtype), indices.reshape(1))
        return out.reshape(indices.shape)
    if xm.ndim == 0:
        return indices
    d = dim % xm.ndim
    has, first = _first_nan(xm, d)
    if keepdim:
        return ms.ops.where(has, first.astype(indices.dtype), indices)
    return ms.ops.where(ms.ops.squeeze(has, d), ms.ops.squeeze(first, d).astype(indices.dtype), indices)


def _elementwise_fix(a, b, out):
    """``maximum``/``minimum`` ``out``: ``a + b`` (NaN) where ``a`` or ``b`` is NaN."""
    bad = None
    if _floating(a):
        bad = ms.ops.isnan(a)
    if _floating(b):
        nb = ms.ops.isnan(b)
        bad = nb if bad is None else ms.ops.logical_or(bad, nb)
    if bad is None:
        return out
    return ms.ops.where(bad, (a + b).astype(out.dtype), out)


def _clamp_fix(xm, bounds, out):
    """``clamp`` ``out``: NaN (no gradient) where ``xm`` is NaN, NaN where a tensor bound is."""
    if not _floating(xm):
        return out
    out = ms.ops.where(ms.ops.isnan(xm), ms.ops.stop_gradient(xm).astype(out.dtype), out)
    for b in bounds:
        if _floating(b):
            out = ms.ops.where(ms.ops.isnan(b), b.astype(out.dtype), out)
    return out


def _topk_fix(xm, k, dim, largest, sorted, original):  # noqa: A002 (PyTorch's name)
    """``(values, indices)`` of ``topk`` with NaN above ``+inf`` (module docstring)."""
    d = -1 if dim is None else dim
    d = d % xm.ndim if xm.ndim else 0
    mask = ms.ops.isnan(xm)
    fill = ms.ops.full_like(xm, float("-inf") if largest else float("inf"))
    values, indices = original(cast_to_adapter_tensor(ms.ops.where(mask, fill, xm)), k, dim, largest, sorted)
    indices = cast_to_ms_tensor(indices)
    if xm.ndim == 0:
        return cast_to_ms_tensor(values), indices
    n = xm.shape[d]
    shape = [1] * xm.ndim
    shape[d] = n
    position = ms.ops.arange(n, dtype=ms.int32).reshape(tuple(shape))
    # the NaN positions of each row, lower index first: the k largest of (n - index) over NaNs (0 elsewhere)
    key = ms.ops.where(mask, n - position, ms.ops.zeros_like(position))
    _, nan_indices = ms.ops.topk(key.astype(ms.float32), k, d, True, True)
    count = ms.ops.sum(mask.astype(ms.int32), d, True)
    shape[d] = k
    slot = ms.ops.arange(k, dtype=ms.int32).reshape(tuple(shape))
    if largest:
        from_nan = slot < count
        other = ms.ops.gather_elements(indices, d, ms.ops.clamp(slot - count, 0, k - 1).astype(indices.dtype))
        nan_pick = nan_indices
    else:
        rest = n - count  # non-NaN values come first
        from_nan = slot >= rest
        other = indices
        nan_pick = ms.ops.gather_elements(nan_indices, d, ms.ops.clamp(slot - rest, 0, k - 1).astype(nan_indices.dtype))
    fixed = ms.ops.where(from_nan, nan_pick.astype(indices.dtype), other)
    return ms.ops.gather_elements(xm, d, fixed.astype(ms.int64)), fixed


def _pack(result, values, indices):
    """``(values, indices)`` as adapter tensors in the structure of ``result`` (PyNative: its named tuple)."""
    values, indices = cast_to_adapter_tensor(values), cast_to_adapter_tensor(indices)
    if pynative_mode_condition():
        return type(result)(values, indices)
    return values, indices


# -- the replacements -----------------------------------------------------------------------------------------------
def _make_extremum(original, method):
    """``max``/``min``: all elements, along ``dim`` (values, indices), or element-wise with ``other``."""
    if method:
        def extremum_method(self, dim=None, keepdim=False, other=None):
            return _extremum(original(self, dim, keepdim, other), self, dim, keepdim, other)
        return extremum_method

    def extremum(input, dim=None, keepdim=False, other=None, *, out=None):  # noqa: A002 (PyTorch's names)
        if out is not None:
            return original(input, dim, keepdim, other, out=out)
        return _extremum(original(input, dim, keepdim, other), input, dim, keepdim, other)
    return extremum


def _extremum(result, input, dim, keepdim, other):  # noqa: A002
    xm = cast_to_ms_tensor(input)
    if other is not None or (dim is not None and not isinstance(dim, (int, tuple, list))):  # element-wise
        b = cast_to_ms_tensor(other if other is not None else dim)
        if _no_nan(xm, b):
            return result
        return cast_to_adapter_tensor(_elementwise_fix(xm, b, cast_to_ms_tensor(result)))
    if not _floating(xm) or _no_nan(xm):
        return result
    if dim is None:
        return cast_to_adapter_tensor(_nan_all(xm, cast_to_ms_tensor(result)))
    values, indices = _select(xm, dim, keepdim, cast_to_ms_tensor(result[1]))
    return _pack(result, values, indices)


def _make_reduced(name, original, method):
    """``amax``/``amin``. The method in a graph calls MindSpore's ``ops.amax``/``ops.amin`` itself: MindTorch's
    passes ``keepdims=`` to the graph's ``Tensor.amax``, which takes ``keepdim`` ("unexpected keyword argument
    'keepdims'": the compiled step fell back to PyNative)."""
    if method:
        graph_op = getattr(ms.ops, name)

        def reduced_method(self, dim=None, keepdim=False):
            if pynative_mode_condition():
                return _reduced(original(self, dim, keepdim), self, dim, keepdim)
            xm = cast_to_ms_tensor(self)
            axes = () if dim is None else (tuple(dim) if isinstance(dim, list) else dim)
            return _reduced(cast_to_adapter_tensor(graph_op(xm, axes, keepdim)), self, dim, keepdim)
        return reduced_method

    def reduced(input, dim=(), keepdim=False, *, out=None):  # noqa: A002
        if out is not None:
            return original(input, dim, keepdim, out=out)
        return _reduced(original(input, dim, keepdim), input, dim, keepdim)
    return reduced


def _reduced(result, input, dim, keepdim):  # noqa: A002
    xm = cast_to_ms_tensor(input)
    if not _floating(xm) or xm.ndim == 0 or _no_nan(xm):
        return result
    return cast_to_adapter_tensor(_nan_rows(xm, _axes(xm.ndim, dim), keepdim, cast_to_ms_tensor(result)))


def _make_index(name, original):
    """``argmax``/``argmin`` (function and method: the same signature; MindTorch's ``argmax`` also takes ``axis``)."""
    if name == "argmax":
        def argmax(input, dim=None, keepdim=False, axis=None):  # noqa: A002
            if dim is None:
                dim = axis
            return _index(original(input, dim, keepdim), input, dim, keepdim)
        return argmax

    def argmin(input, dim=None, keepdim=False):  # noqa: A002
        return _index(original(input, dim, keepdim), input, dim, keepdim)
    return argmin


def _index(result, input, dim, keepdim):  # noqa: A002
    xm = cast_to_ms_tensor(input)
    if not _floating(xm) or _no_nan(xm):
        return result
    return cast_to_adapter_tensor(_index_fix(xm, dim, keepdim, cast_to_ms_tensor(result)))


def _make_elementwise(original, method):
    """``maximum``/``minimum``."""
    if method:
        def elementwise_method(self, other):
            return _elementwise(original(self, other), self, other)
        return elementwise_method

    def elementwise(input, other, *, out=None):  # noqa: A002
        if out is not None:
            return original(input, other, out=out)
        return _elementwise(original(input, other), input, other)
    return elementwise


def _elementwise(result, input, other):  # noqa: A002
    a, b = cast_to_ms_tensor(input), cast_to_ms_tensor(other)
    if _no_nan(a, b):
        return result
    return cast_to_adapter_tensor(_elementwise_fix(a, b, cast_to_ms_tensor(result)))


def _make_clamp(name, original, method):
    """``clamp``/``clip`` (``min``, ``max``), ``clamp_min`` (``min``), ``clamp_max`` (``max``)."""
    if name in ("clamp_min", "clamp_max"):
        if method:
            def bound_method(self, bound):
                return _clamped(original(self, bound), self, (bound,))
            return bound_method

        def bound_function(input, bound, *, out=None):  # noqa: A002
            if out is not None:
                return original(input, bound, out=out)
            return _clamped(original(input, bound), input, (bound,))
        return bound_function
    if method:
        def clamp_method(self, min=None, max=None):  # noqa: A002 (PyTorch's names)
            return _clamped(original(self, min, max), self, (min, max))
        return clamp_method

    def clamp(input, min=None, max=None, out=None):  # noqa: A002 (MindTorch's clamp_min calls it with out= 4th)
        if out is not None:
            return original(input, min, max, out=out)
        return _clamped(original(input, min, max), input, (min, max))
    return clamp


def _clamped(result, input, bounds):  # noqa: A002
    xm = cast_to_ms_tensor(input)
    if not _floating(xm):
        return result
    bounds = tuple(cast_to_ms_tensor(b) for b in bounds)
    if _no_nan(xm, *bounds):
        return result
    return cast_to_adapter_tensor(_clamp_fix(xm, bounds, cast_to_ms_tensor(result)))


def _make_topk(original, method):
    """``topk``."""
    if method:
        def topk_method(self, k, dim=None, largest=True, sorted=True):  # noqa: A002
            return _topk(original, self, k, dim, largest, sorted)
        return topk_method

    def topk(input, k, dim=None, largest=True, sorted=True, *, out=None):  # noqa: A002
        if out is not None:
            return original(input, k, dim, largest, sorted, out=out)
        return _topk(original, input, k, dim, largest, sorted)
    return topk


def _topk(original, input, k, dim, largest, sorted):  # noqa: A002
    xm = cast_to_ms_tensor(input)
    if not _floating(xm) or k == 0 or _no_nan(xm):
        return original(input, k, dim, largest, sorted)
    result = original(input, k, dim, largest, sorted)
    values, indices = _topk_fix(xm, k, dim, largest, sorted, original)
    return _pack(result, values, indices)


def _ms_topk(input, k, dim, largest, sorted):  # noqa: A002
    """MindSpore's ``topk`` on a MindTorch tensor (what MindTorch's ``Tensor.kthvalue`` calls)."""
    return ms.ops.topk(cast_to_ms_tensor(input), k, dim, largest, sorted)


def _make_kthvalue(original):
    """``Tensor.kthvalue`` (``torch.kthvalue`` calls it): MindTorch's is the ``k``-th of MindSpore's ``topk`` of the
    smallest, which put NaN anywhere (``[nan, 2, nan, 1]``: k=1 gave NaN, PyTorch 1.); here :func:`_topk_fix`'s order
    (NaN after every number), its ``k``-th, ``gather``-ed (the gradient goes to that element, as PyTorch's)."""
    def kthvalue(self, k, dim=None, keepdim=False):
        result = original(self, k, dim, keepdim)
        xm = cast_to_ms_tensor(self)
        if not _floating(xm) or xm.ndim == 0 or _no_nan(xm):
            return result
        d = (-1 if dim is None else dim) % xm.ndim
        values, indices = _topk_fix(xm, k, d, False, True, _ms_topk)
        values, indices = ms.ops.narrow(values, d, k - 1, 1), ms.ops.narrow(indices, d, k - 1, 1)
        if not keepdim:
            values, indices = ms.ops.squeeze(values, d), ms.ops.squeeze(indices, d)
        return _pack(result, values, indices.astype(cast_to_ms_tensor(result[1]).dtype))
    return kthvalue


def _make_aminmax(original):
    """``aminmax`` (keyword-only ``dim``, ``keepdim``)."""
    def aminmax(input, *, dim=None, keepdim=False, out=None):  # noqa: A002
        if out is not None:
            return original(input, dim=dim, keepdim=keepdim, out=out)
        result = original(input, dim=dim, keepdim=keepdim)
        xm = cast_to_ms_tensor(input)
        if not _floating(xm) or xm.ndim == 0 or _no_nan(xm):
            return result
        axes = _axes(xm.ndim, dim)
        low = _nan_rows(xm, axes, keepdim, cast_to_ms_tensor(result[0]))
        high = _nan_rows(xm, axes, keepdim, cast_to_ms_tensor(result[1]))
        return _pack(result, low, high)
    return aminmax


# -- activations and max pooling: NaN where the input (the window) holds one ----------------------------------------
ACTIVATIONS = ("relu", "relu6", "hardtanh", "threshold")  # torch.nn.functional's, with ``inplace``
ACTIVATION_MODULES = ("ReLU", "ReLU6", "Hardtanh")  # their forwards call MindSpore's ops directly
POOLS = ("max_pool1d", "max_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d")
# their modules' forwards call F's, but adapter/graph_lean.py compiles a lean MaxPool2d forward (the primitive, not F's)
# while the forward is MindTorch's own: replaced by the same call, so a compiled nn.MaxPool2d gets the correction too
POOL_MODULES = {"MaxPool1d": "max_pool1d", "MaxPool2d": "max_pool2d", "AdaptiveMaxPool1d": "adaptive_max_pool1d",
                "AdaptiveMaxPool2d": "adaptive_max_pool2d"}


def _activation_fix(xm, out):
    """``out`` with ``xm``'s NaNs put back (gradient there: the output's, as PyTorch's ``threshold_backward`` /
    ``hardtanh_backward`` pass it for NaN)."""
    return ms.ops.where(ms.ops.isnan(xm), xm.astype(out.dtype), out)


def _activated(call, input, inplace, outplace=None):  # noqa: A002
    """``call()`` (the replaced activation of ``input``) with NaN kept by :func:`_activation_fix`. In PyNative with
    ``inplace``, ``outplace()`` (the activation's MindSpore tensor, ``input`` untouched) is corrected and copied into
    ``input`` (``copy_``: its gradient reaches the NaN positions too); in a graph ``inplace`` is functional."""
    xm = cast_to_ms_tensor(input)
    if not _floating(xm) or _no_nan(xm):
        return call()
    if inplace and pynative_mode_condition():
        input.copy_(cast_to_adapter_tensor(_activation_fix(xm, outplace())))
        return input
    return cast_to_adapter_tensor(_activation_fix(xm, cast_to_ms_tensor(call())))


def _make_activation(name, original):
    if name == "relu":
        def relu(input, inplace=False):  # noqa: A002 (PyTorch's names)
            return _activated(lambda: original(input, inplace), input, inplace,
                              lambda: cast_to_ms_tensor(original(input, False)))
        return relu
    if name == "relu6":
        def relu6(input, inplace=False):  # noqa: A002
            return _activated(lambda: original(input, inplace), input, inplace,
                              lambda: cast_to_ms_tensor(original(input, False)))
        return relu6
    if name == "hardtanh":
        def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):  # noqa: A002
            return _activated(lambda: original(input, min_val, max_val, inplace), input, inplace,
                              lambda: cast_to_ms_tensor(original(input, min_val, max_val, False)))
        return hardtanh

    def threshold(input, threshold, value, inplace=False):  # noqa: A002
        return _activated(lambda: original(input, threshold, value, inplace), input, inplace,
                          lambda: cast_to_ms_tensor(original(input, threshold, value, False)))
    return threshold


def _module_outplace(module, input):  # noqa: A002
    """What ``nn.ReLU``/``ReLU6``/``Hardtanh`` ``module``'s forward computes (MindTorch's ops), not written."""
    xm = cast_to_ms_tensor(input)
    if isinstance(module, _activation_classes["ReLU"]):
        return ms.ops.relu(xm)
    if isinstance(module, _activation_classes["ReLU6"]):
        return ms.ops.relu6(xm)
    return ms.ops.hardtanh(xm, module.min_val, module.max_val)


_activation_classes: dict = {}  # name -> MindTorch's class (set by apply())


def _graph_activation(module, input):  # noqa: A002 (graph code)
    """A compiled ``nn.ReLU``/``ReLU6``/``Hardtanh`` forward: the activation with NaN kept, through the primitives
    themselves (as adapter/graph_lean.py's lean ReLU form: fewer function graphs to compile than MindTorch's forward
    and the casts' isinstance chains; ``inplace`` is functional in a graph)."""
    xm = _to_ms(input)
    if not ms.ops.is_floating_point(xm):
        return _to_adapter(_module_outplace(module, input))
    if isinstance(module, _activation_classes["ReLU"]):
        out = _relu_p(xm)
    else:
        out = _module_outplace(module, input)
    return _to_adapter(_select_p(_isnan_p(xm), xm, out))


def _make_activation_forward(original):
    """``nn.ReLU``/``ReLU6``/``Hardtanh``'s ``forward``."""
    def forward(self, input):  # noqa: A002
        if not pynative_mode_condition():
            return _graph_activation(self, input)
        return _activated(lambda: original(self, input), input, self.inplace, lambda: _module_outplace(self, input))
    return forward


def _make_plain_activation(method, original):
    """``torch.relu`` (``out=``) and ``Tensor.relu``."""
    if method:
        def relu_method(self):
            return _activated(lambda: original(self), self, False)
        return relu_method

    def relu(input, *, out=None):  # noqa: A002
        if out is not None:
            return original(input, out=out)
        return _activated(lambda: original(input), input, False)
    return relu


def _pooled(original, input, args, kwargs, spatial):  # noqa: A002
    """``original(input, *args, **kwargs)`` (a max pool over the last ``spatial`` dims), where a window holds a NaN:
    the value is the input's element at the window's last NaN (``gather``-ed, so the gradient goes there, as
    PyTorch's) and, with ``return_indices``, the index that NaN's (PyTorch 2.13's CPU kernels take the last NaN of
    the window, measured). The windows and the position are found by the same pool of a key: the flat spatial
    position + 1 at NaNs, 0 elsewhere (float32: exact below 2**24 positions). Compiled (a graph always runs the
    correction): NaN where the pool of the NaN mask is positive, no gradient there, the indices the replaced pool's
    (the key's pool and gather made a small CNN's compiled step 0.85 -> 1.16 s)."""
    result = original(input, *args, **kwargs)
    xm = cast_to_ms_tensor(input)
    if not _floating(xm) or _no_nan(xm):
        return result
    if not pynative_mode_condition():  # compiled: the NaN values only (module docstring: the key's cost)
        mask = cast_to_adapter_tensor(ms.ops.isnan(xm).astype(xm.dtype))
        hit = original(mask, *args, **kwargs)
        hit = cast_to_ms_tensor(hit[0] if isinstance(result, tuple) else hit)
        values = cast_to_ms_tensor(result[0] if isinstance(result, tuple) else result)
        values = cast_to_adapter_tensor(ms.ops.where(hit > 0, ms.ops.full_like(values, _NAN), values))
        return (values, result[1]) if isinstance(result, tuple) else values
    lead, plane = xm.shape[:xm.ndim - spatial], xm.shape[xm.ndim - spatial:]
    size = 1
    for n in plane:
        size *= n
    position = ms.ops.arange(1, size + 1, dtype=ms.float32).reshape(plane)
    key = ms.ops.where(ms.ops.isnan(xm), ms.ops.broadcast_to(position, xm.shape), ms.ops.zeros(xm.shape, ms.float32))
    pooled_key = original(cast_to_adapter_tensor(key), *args, **kwargs)
    if isinstance(result, tuple):
        pooled_key = pooled_key[0]
    pooled_key = cast_to_ms_tensor(pooled_key)
    hit = pooled_key > 0
    index = ms.ops.maximum(pooled_key - 1, 0).astype(ms.int64)
    values = cast_to_ms_tensor(result[0] if isinstance(result, tuple) else result)
    flat_index = index.reshape(lead + (-1,))
    picked = ms.ops.gather_elements(xm.reshape(lead + (size,)), len(lead), flat_index).reshape(index.shape)
    values = ms.ops.where(hit, picked.astype(values.dtype), values)
    if isinstance(result, tuple):
        indices = cast_to_ms_tensor(result[1])
        indices = ms.ops.where(hit, index.astype(indices.dtype), indices)
        return cast_to_adapter_tensor(values), cast_to_adapter_tensor(indices)
    return cast_to_adapter_tensor(values)


def _make_pool(name, original):
    spatial = 1 if name.endswith("1d") else 2
    if name in ("max_pool1d", "max_pool2d"):
        def max_pool(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
                     return_indices=False):
            return _pooled(original, input, (kernel_size, stride, padding, dilation, ceil_mode, return_indices), {},
                           spatial)
        max_pool.__name__ = name
        return max_pool

    def adaptive_max_pool(input, output_size, return_indices=False):  # noqa: A002
        return _pooled(original, input, (output_size, return_indices), {}, spatial)
    adaptive_max_pool.__name__ = name
    return adaptive_max_pool


def _make_pool_forward(name, original):
    """``nn.MaxPool1d/2d``'s and ``nn.AdaptiveMaxPool1d/2d``'s ``forward``: MindTorch's (it calls ``F.<name>``, the
    corrected one) as a function of this module, so the graph compiler parses it instead of a lean form."""
    if name.startswith("adaptive"):
        def adaptive_forward(self, input):  # noqa: A002
            return original(self, input)
        return adaptive_forward

    def forward(self, input):  # noqa: A002
        return original(self, input)
    return forward


def _make(name, original, method):
    if name in EXTREMA:
        return _make_extremum(original, method)
    if name in REDUCED:
        return _make_reduced(name, original, method)
    if name in INDICES:
        return _make_index(name, original)
    if name in ELEMENTWISE:
        return _make_elementwise(original, method)
    if name in CLAMPS:
        return _make_clamp(name, original, method)
    if name == "topk":
        return _make_topk(original, method)
    return _make_aminmax(original)


_made: dict = {}  # (id(owner), name, replaced) -> replacement: applied again, the patch installs the same objects


def _owners():
    import mindtorch.torch as torch
    import mindtorch.torch.functional as functional
    from mindtorch.torch.tensor import Tensor
    return ((torch, False), (functional, False), (Tensor, True))


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, pynative_mode_condition, numpy, _ON_CPU
    global _to_ms, _to_adapter, _relu_p, _isnan_p, _select_p
    import numpy as np
    import mindspore
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    from mindtorch.utils import pynative_mode_condition as pynative
    ms, cast_to_ms_tensor, cast_to_adapter_tensor, pynative_mode_condition = mindspore, to_ms, to_adapter, pynative
    numpy, _ON_CPU = np, mindspore.get_context("device_target") == "CPU"
    if _relu_p is None:
        from mindspore.ops import operations as P
        from adapter import backend
        inner = backend.internal("inner_ops")
        _to_ms, _to_adapter = inner.convert_to_ms_tensor, inner.convert_to_adapter_tensor
        _relu_p, _isnan_p, _select_p = P.ReLU(), P.IsNan(), P.Select()
    for owner, method in _owners():
        for name in NAMES:
            if not (name == "aminmax" and method) and hasattr(owner, name):
                _install(owner, name, lambda replaced, name=name, method=method: _named(
                    _make(name, replaced, method), name))
    import mindtorch.torch as torch
    import mindtorch.torch.nn as nn
    import mindtorch.torch.nn.functional as F
    from mindtorch.torch.tensor import Tensor
    items = [(F, name, _make_activation, (name,)) for name in ACTIVATIONS]
    items += [(F, name, _make_pool, (name,)) for name in POOLS]
    items += [(getattr(nn, cls), "forward", _make_activation_forward, ()) for cls in ACTIVATION_MODULES]
    _activation_classes.update((cls, getattr(nn, cls)) for cls in ACTIVATION_MODULES)
    items += [(torch, "relu", _make_plain_activation, (False,)), (Tensor, "relu", _make_plain_activation, (True,))]
    items += [(Tensor, "kthvalue", _make_kthvalue, ())]
    items += [(getattr(nn, cls), "forward", _make_pool_forward, (fn,)) for cls, fn in POOL_MODULES.items()]
    for owner, name, make, extra in items:
        _install(owner, name, lambda replaced, make=make, extra=extra: make(*extra, replaced))


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    return fn


def _install(owner, name, make):
    """``owner.<name>`` = ``make(<what it replaces>)``, built once per (owner, name, replaced value): a second apply
    installs the same function again."""
    replaced = get_replaced(owner, name, NAME)
    key = (id(owner), name, replaced)
    if key not in _made:
        _made[key] = make(replaced)
    patch_attr(owner, name, _made[key])


_REPLACES = tuple(f"{owner}.{name}" for owner in ("torch", "torch.functional", "torch.Tensor") for name in NAMES
                  if not (owner == "torch.Tensor" and name == "aminmax")) \
    + tuple(f"torch.nn.functional.{name}" for name in ACTIVATIONS + POOLS) \
    + tuple(f"torch.nn.{cls}.forward" for cls in ACTIVATION_MODULES) \
    + ("torch.relu", "torch.Tensor.relu", "torch.Tensor.kthvalue") \
    + tuple(f"torch.nn.{cls}.forward" for cls in POOL_MODULES)

PATCH = Patch(NAME, "NaN propagates through max/min/amax/amin/maximum/minimum/clamp/clip, "
                    "relu/relu6/hardtanh/threshold and max pooling, argmax/argmin and "
                    "max/min(dim) indices point at the first NaN, topk puts NaN above +inf, as PyTorch (MindSpore's "
                    "kernels skipped NaN: torch.max([1, nan, 3]) was 3, silently); gradients as PyTorch's; "
                    "PyNative and compiled",
              "post-import", apply, replaces=_REPLACES,
              after=("index_dtype", "return_types", "broadcast_operands", "empty_reductions", "reduction_overloads",
                     "max_pool", "kthvalue_mode", "input_checks", "torch_errors"))
