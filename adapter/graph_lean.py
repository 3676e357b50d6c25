"""Lean graph forms of ReLU, Linear, max and adaptive average pooling, ``torch.flatten``, ``Tensor.view`` /
``reshape``, ``F.cross_entropy`` and tensor ``+``, swapped in by :func:`adapter.graph_semantics.graph_semantics` while
a graph compiles (the mechanism of its lean Conv2d forward and of ``patches/normalization.py``'s BatchNorm fast path).

Why. MindSpore's graph compiler parses and type-infers every Python function a forward reaches, once per distinct
input signature. MindTorch's forwards reach their primitive through layers of Python: ``cast_to_ms_tensor`` /
``cast_to_adapter_tensor`` (isinstance chains over tensor, tuple, list, dict, each ``if`` a function graph),
``mindspore.ops`` functions with their argument checks, ``_get_cache_prim`` and the (Tensor, Tensor) arithmetic MindTorch
registered over MindSpore's (``mindtorch/torch/_register/register_utils.py``: every ``a - b`` inside
``mindspore.ops.cross_entropy`` goes through it too). ResNet18's forward + ``CrossEntropyLoss`` made the compiler
parse 90 distinct functions (159 parses) where native MindSpore's parses 22 (``bench/compile_parts.py``).

What. Each form below calls the primitives MindTorch's code ends in, with the same arguments and in the same order,
and decides in Python what MindTorch's code decides from Python values (a module's attributes, through
:class:`PythonAttribute`; an input's shape and dtype, through one ``constexpr`` per call).
Any case it does not cover runs MindTorch's own forward (or the function that was there: a patch's graph form), so
the PyTorch semantics and MindTorch's errors of the other cases are unchanged:

=========================== ================================================ =============================================
form                        lean case                                        MindTorch's code it follows
=========================== ================================================ =============================================
``nn.ReLU.forward``,        always (in a graph the in-place assignment is    ``nn/modules/activation.py`` ``ReLU.forward``
``F.relu``                  functional: ``adapter/graph_semantics.py``)      -> ``mindspore.ops.relu``: ``ReLU``
``nn.Linear.forward``       input rank >= 2, no zero-size dimension (those:  ``nn/functional.py`` ``linear``: ``MatMul(False,
                            ``patches/empty_reductions.py``), input dtype =  True)``, ``BiasAdd``, ``Reshape`` to
                            weight dtype, 2-D weight                         ``(*input.shape[:-1], out_features)``
``nn.MaxPool2d.forward``    4-D float input, no ``return_indices``           ``nn/functional.py`` ``max_pool2d``: padding,
                                                                             dilation or ceil_mode: ``MaxPool3DWithArgmax``
                                                                             on the input reshaped to 5-D; else ``MaxPool``
``nn.AdaptiveAvgPool2d``    always                                           ``mindspore.ops.adaptive_avg_pool2d``:
``.forward``                                                                 ``AdaptiveAvgPool2D(output_size)``
``torch.flatten``,          static shape, dims in range                      ``Tensor.flatten`` -> ``mindspore.ops.flatten``:
``Tensor.flatten``                                                           ``Flatten`` for (1, -1) on rank >= 2, else
                                                                             ``Reshape``
``Tensor.view``,            int sizes (or one tuple/list of them) that fit   ``Tensor.view`` -> ``reshape`` ->
``Tensor.reshape``          the input, no dtype view, first dim not 0        ``mindspore.ops.reshape``: ``Reshape``
``F.cross_entropy``         weight None, reduction ``"mean"`` (also from     ``mindspore.ops.cross_entropy`` -> ``nll_loss``
(``nn.CrossEntropyLoss``)   size_average/reduce), label_smoothing 0.0, int   -> ``_nll_loss``: log-softmax as ``x -
                            ignore_index, input (N, C) float32, target (N,)  logsumexp(x)``, ignore_index masking, the
                            int32/int64                                      label-smoothing term with factor 0.0 (kept:
                                                                             NaN where it is NaN)
``x + y``, ``x += y`` of    both MindTorch tensors, not both bool (those:    ``register_utils.py``
two tensors                 MindTorch's ``logical_or``); registered on       ``_multitype_add_tensor_tensor_calcu`` ->
                            MindSpore's ``add`` for (Tensor, Tensor)         ``F.add``: ``Add``
=========================== ================================================ =============================================

Same primitives, attributes and constants, so the same values: the losses, gradients and parameters of compiled
steps are bit-identical with and without these forms (``tests/test_graph_lean.py``, which also runs each form's
other cases). Measured on ResNet18's forward + cross-entropy compiled alone (``bench/compile_parts.py``): see its
docstring.
"""
from __future__ import annotations

import importlib

from adapter import patching

# What this module replaces (for --list-patches, patches/listing.py); adapter/graph_semantics.py makes the swaps.
DECLARED = (
    patching.Declared(
        "graph_lean", "lean graph forms (MindTorch's primitives, its Python decisions made in Python): ReLU/F.relu, "
        "Linear, MaxPool2d, AdaptiveAvgPool2d, torch.flatten, F.cross_entropy's plain case, + of two tensors; "
        "other cases run MindTorch's code", "while a compiled step or no_grad forward is compiled (graph_semantics())",
        replaces=("torch.nn.ReLU.forward", "torch.nn.Linear.forward", "torch.nn.MaxPool2d.forward",
                  "torch.nn.AdaptiveAvgPool2d.forward", "torch.nn.functional.relu", "torch.flatten",
                  "torch.functional.flatten", "torch.Tensor.flatten", "torch.Tensor.view", "torch.Tensor.reshape",
                  "torch.nn.functional.cross_entropy",
                  "mindspore.ops.composite.multitype_ops.add_impl.add"),
        effects=("adds MaxPool2d._adapter_max_pool and AdaptiveAvgPool2d._adapter_avg_pool (the pooling forms' "
                 "primitives), once, through patch_attr",
                 "registers the (Tensor, Tensor) function of MindSpore's + (MultitypeFuncGraph.register_fn) while "
                 "compiling, MindTorch's again after")),
)

# Graph-code globals (the lean forms read them; graph code cannot import), set by forms() once MindTorch is imported.
ms = _to_ms = _to_adapter = None
_relu = _matmul_nt = _bias_add = _reshape = _flatten = _shape = _dtype = None
_reduce_max_keep = _reduce_sum_keep = _exp = _log = _sub = _add = _mul = _neg = _real_div = _gather_d = None
_sum_ext = _squeeze = _expand_dims = _equal = _masked_fill = _ones_like = _cast = None
_F32_ZERO = _I32_ZERO = None
# axes as the primitives take them after MindSpore's argument conversion (a literal -1 in graph code is parsed as a
# negation, an int axis converted to a tuple by generated helper functions: both more graph code to parse)
_LAST, _LAST_AXES, _CLASS_AXES = -1, (-1,), (1,)
_linear_plan = _flatten_plan = _cross_entropy_plan = _int32_scalar = _pool_input_ok = None
# the originals the lean forms fall back to (MindTorch's, or what a patch put there)
_relu_forward = _linear_forward = _max_pool_forward = _avg_pool_forward = None
_flatten_original = _cross_entropy_original = _relu_original = _tensor_flatten_original = None
_tensor_view_original = _tensor_reshape_original = _reshape_plan = None
_AdapterTensor = _add_plan = _tensor_add_original = None


class PythonAttribute:
    """A computed attribute that MindSpore's graph compiler reads with Python's getattr (a ``property`` getter would
    be compiled as graph code instead). The lean forms here, graph_semantics' Conv2d/BatchNorm forwards and
    patches/normalization.py's BatchNorm fast path decide their case with it."""

    def __init__(self, compute):
        self.compute = compute

    def __get__(self, obj, owner=None):
        return self if obj is None else self.compute(obj)


# -- decisions made in Python (constexpr: the arguments are the graph's constants) -------------------------------------
def _linear_plan_python(x_shape, x_dtype, w_shape, w_dtype):
    """``(2-D input shape, output shape)`` when ``F.linear``'s graph reduces to MatMul + BiasAdd + Reshape: input rank
    >= 2, a 2-D weight of the input's dtype (MindTorch casts both to float32 otherwise), no zero-size or unknown
    dimension (empty tensors: ``patches/empty_reductions.py``); None otherwise (MindTorch's forward runs)."""
    if len(x_shape) < 2 or len(w_shape) != 2 or x_dtype != w_dtype:
        return None
    if any(d is None or d <= 0 for d in tuple(x_shape) + tuple(w_shape)) or x_shape[-1] != w_shape[1]:
        return None
    rows = 1
    for d in x_shape[:-1]:
        rows *= d
    return (rows, x_shape[-1]), tuple(x_shape[:-1]) + (w_shape[0],)


def _flatten_plan_python(shape, start_dim, end_dim):
    """What ``mindspore.ops.flatten(x, start_dim=, end_dim=)`` does to a static ``shape`` (``ops/function/
    array_func.py``), as ``(kind, shape)``: kind 0 the ``Flatten`` primitive (start 1, end -1, rank >= 2), 1 the
    input itself (start == end), 2 ``Reshape`` to ``shape``; None for anything else (non-int dims, dims out of range,
    start after end, an unknown dimension): MindTorch's code runs and raises its errors."""
    if not isinstance(start_dim, int) or not isinstance(end_dim, int) or isinstance(start_dim, bool) \
            or isinstance(end_dim, bool) or any(d is None or d < 0 for d in shape):
        return None
    rank = len(shape)
    if start_dim == 1 and end_dim == -1:
        return (2, (-1,)) if rank in (0, 1) else (0, ())
    ndim = rank if rank != 0 else 1
    if not (-ndim <= start_dim < ndim and -ndim <= end_dim < ndim):
        return None
    start, end = start_dim % ndim, end_dim % ndim
    if start > end:
        return None
    if rank in (0, 1):
        return 2, (-1,)
    if start == end:
        return 1, ()
    size = 1
    for d in shape[start:end + 1]:
        size *= d
    return 2, tuple(shape[:start]) + (size,) + tuple(shape[end + 1:])


def _cross_entropy_plan_python(weight_is_none, size_average, reduce, reduction, label_smoothing, ignore_index,
                               x_shape, x_dtype, t_shape, t_dtype) -> bool:
    """Whether ``F.cross_entropy``'s call takes the lean path (module docstring): weight None, reduction "mean"
    after MindTorch's ``_get_reduce_string`` of size_average/reduce, label_smoothing 0.0, an int ignore_index in int32's
    range, input (N, C) float32 with N, C > 0, target (N,) int32/int64, every dimension known (a batch sliced at
    tensor offsets inside the step, ``torch.stack([data[i:i + T] for i in ix])``, has an unknown one: before, the
    comparison raised TypeError and the whole step ran eagerly)."""
    if not weight_is_none or label_smoothing != 0.0 or isinstance(ignore_index, bool) \
            or not isinstance(ignore_index, int) or not -2 ** 31 <= ignore_index < 2 ** 31:
        return False
    if reduce is not None or size_average is not None:  # MindTorch's _get_reduce_string
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
    if reduction != "mean" or x_dtype != ms.float32 or t_dtype not in (ms.int32, ms.int64):
        return False
    if any(d is None or d < 0 for d in tuple(x_shape) + tuple(t_shape)):  # an unknown dimension: MindTorch's code
        return False
    return len(x_shape) == 2 and len(t_shape) == 1 and x_shape[0] == t_shape[0] and x_shape[0] > 0 \
        and x_shape[1] > 0


def _add_plan_python(x_is_adapter, y_is_adapter, x_dtype, y_dtype) -> bool:
    """Whether ``x + y`` of two tensors takes the lean path: both MindTorch tensors, not both bool (MindTorch's
    registered ``+`` makes that ``logical_or``). Other pairs (MindSpore tensors inside ``mindspore.ops`` code, mixed
    pairs, bools): MindTorch's function."""
    return bool(x_is_adapter and y_is_adapter and not (x_dtype == ms.bool_ and y_dtype == ms.bool_))


def _reshape_plan_python(x_shape, sizes, shape, dtype):
    """The shape ``Tensor.view(*sizes, dtype=dtype)`` / ``Tensor.reshape(*sizes, shape=shape)`` passes to ``Reshape``
    (MindTorch: ``view`` -> ``reshape`` -> ``mindspore.ops.reshape(x, shape)``, -1 left for the primitive), or None
    for MindTorch's code: a dtype view, both ``sizes`` and ``shape``, sizes that are not ints >= -1 with at most one
    -1 or do not fit the input's size, an input with an unknown dimension or a first dimension 0 (MindTorch's zeros
    path)."""
    if dtype is not None or (sizes and shape is not None):
        return None
    sizes = sizes if sizes else shape
    if sizes is None or len(sizes) == 0:
        return None
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    sizes = tuple(sizes)
    if not sizes or any(isinstance(d, bool) or not isinstance(d, int) or d < -1 for d in sizes) \
            or sizes.count(-1) > 1:
        return None
    if any(d is None or d < 0 for d in x_shape) or (len(x_shape) > 0 and x_shape[0] == 0):
        return None
    numel = known = 1
    for d in x_shape:
        numel *= d
    for d in sizes:
        known *= d if d != -1 else 1
    if (-1 in sizes and (known == 0 or numel % known)) or (-1 not in sizes and known != numel):
        return None
    return sizes


def _int32_scalar_python(value):
    """A 0-d int32 tensor holding ``value``: the constant MindSpore makes of a Python int compared with (``Equal``)
    an int32 tensor."""
    return ms.Tensor(value, ms.int32)


def _pool_input_ok_python(shape, dtype) -> bool:
    """A 4-D float input: the pooling forms' lean case (MindTorch raises for int input, handles 3-D differently)."""
    return len(shape) == 4 and dtype in (ms.float16, ms.float32, ms.float64, ms.bfloat16)


# -- module attributes computed in Python (read through PythonAttribute) -----------------------------------------------
def _max_pool_primitive(module):
    """``(primitive, 5-D?)`` of ``nn.MaxPool2d`` ``module`` as MindTorch's ``F.max_pool2d`` builds it, or None for
    ``return_indices`` or arguments MindTorch rejects (its forward runs and raises). MindTorch's condition, on the
    module's values as given: ``return_indices or ceil_mode or dilation != 1 or padding != 0`` takes
    ``MaxPool3DWithArgmax(kernel, stride, padding, dilation, ceil_mode)`` on ``(N, C, H, W, 1)`` (each argument
    ``(a, b, fill)``); else ``MaxPool(kernel, stride, "valid")``."""
    from mindspore.ops import operations as P
    from adapter import backend
    if module.return_indices:
        return None
    kernel, stride, padding, dilation = module.kernel_size, module.stride, module.padding, module.dilation
    stride = stride if stride is not None else kernel

    def pair(arg, fill=None):
        if isinstance(arg, int) and not isinstance(arg, bool):
            out = (arg, arg)
        elif isinstance(arg, (tuple, list)) and len(arg) in (1, 2) and all(isinstance(a, int) for a in arg):
            out = (arg[0], arg[0]) if len(arg) == 1 else tuple(arg)
        else:
            return None
        return out if fill is None else out + (fill,)
    if module.ceil_mode or dilation != 1 or padding != 0:
        args = (pair(kernel, 1), pair(stride, 1), pair(padding, 0), pair(dilation, 1))
        if None in args:
            return None
        return backend.cached_primitive(P.MaxPool3DWithArgmax, *args, module.ceil_mode), True
    kernel, stride = pair(kernel), pair(stride)
    if kernel is None or stride is None:
        return None
    return backend.cached_primitive(P.MaxPool, kernel_size=kernel, strides=stride, pad_mode="valid"), False


def _avg_pool_primitive(module):
    """``AdaptiveAvgPool2D(output_size)`` of ``nn.AdaptiveAvgPool2d`` ``module`` (a list made a tuple, as MindTorch's
    ``F.adaptive_avg_pool2d``), cached per argument as ``mindspore.ops.adaptive_avg_pool2d`` caches it."""
    from mindspore.ops import operations as P
    from adapter import backend
    size = module.output_size
    return backend.cached_primitive(P.AdaptiveAvgPool2D, tuple(size) if isinstance(size, list) else size)


# -- the lean forms (graph code) --------------------------------------------------------------------------------------
class _LeanReLU:
    @staticmethod
    def forward(self, input):  # noqa: A002 (PyTorch's name); graph code
        """``nn.ReLU.forward``: ``ReLU`` of the input; same shape and dtype, a MindTorch tensor."""
        return _to_adapter(_relu(_to_ms(input)))


def _lean_relu(input, inplace=False):  # noqa: A002; graph code
    """``F.relu``: ``ReLU`` of the input (``inplace`` is functional in a graph, as MindTorch's there)."""
    return _to_adapter(_relu(_to_ms(input)))


class _LeanLinear:
    @staticmethod
    def forward(self, input):  # noqa: A002; graph code
        """``nn.Linear.forward``: input (..., in_features) -> (..., out_features), MatMul with the weight transposed,
        BiasAdd, reshaped as MindTorch's ``F.linear``; other inputs (:func:`_linear_plan_python`): its forward."""
        x = _to_ms(input)
        plan = _linear_plan(x.shape, x.dtype, _shape(self.weight), _dtype(self.weight))  # no MindTorch properties
        if plan is None:
            return _linear_forward(self, input)
        output = _matmul_nt(_reshape(x, plan[0]), self.weight)
        if self.bias is not None:
            output = _bias_add(output, self.bias)
        return _to_adapter(_reshape(output, plan[1]))


class _LeanMaxPool2d:
    @staticmethod
    def forward(self, input):  # noqa: A002; graph code
        """``nn.MaxPool2d.forward`` on a 4-D float input (N, C, H, W) -> (N, C, H_out, W_out) with MindTorch's
        primitive (:func:`_max_pool_primitive`); other cases: MindTorch's forward."""
        x = _to_ms(input)
        pool = self._adapter_max_pool
        if pool is None or not _pool_input_ok(x.shape, x.dtype):
            return _max_pool_forward(self, input)
        if pool[1]:
            out = pool[0](_reshape(x, x.shape + (1,)))[0]
            return _to_adapter(_reshape(out, out.shape[:4]))
        return _to_adapter(pool[0](x))


class _LeanAdaptiveAvgPool2d:
    @staticmethod
    def forward(self, input):  # noqa: A002; graph code
        """``nn.AdaptiveAvgPool2d.forward``: ``AdaptiveAvgPool2D(output_size)`` of the input (N, C, H, W) or
        (C, H, W), as ``mindspore.ops.adaptive_avg_pool2d``."""
        return _to_adapter(self._adapter_avg_pool(_to_ms(input)))


def _lean_flatten(input, start_dim=0, end_dim=-1):  # noqa: A002; graph code
    """``torch.flatten``: ``Flatten`` / ``Reshape`` as ``mindspore.ops.flatten`` (:func:`_flatten_plan_python`); other
    arguments: MindTorch's function, which raises its errors."""
    x = _to_ms(input)
    plan = _flatten_plan(x.shape, start_dim, end_dim)
    if plan is None:
        return _flatten_original(input, start_dim, end_dim)
    if plan[0] == 0:
        return _to_adapter(_flatten(x))
    if plan[0] == 1:
        return _to_adapter(x)
    return _to_adapter(_reshape(x, plan[1]))


def _lean_cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,  # noqa: A002
                        reduce=None, reduction="mean", label_smoothing=0.0):
    """``F.cross_entropy`` (and ``nn.CrossEntropyLoss``, which calls it): the lean case of
    :func:`_cross_entropy_plan_python` computes ``mindspore.ops.cross_entropy``'s graph for it (``ops/function/
    nn_func.py``: ``_innner_log_softmax``, ``_nll_loss(inputs, target, -1, None, ignore_index, "mean", 0.0)``) with
    its primitives; a 0-d float32 loss. Other calls: MindTorch's function. Graph code."""
    x = _to_ms(input)
    t = _to_ms(target)
    if not _cross_entropy_plan(weight is None, size_average, reduce, reduction, label_smoothing, ignore_index,
                               x.shape, x.dtype, t.shape, t.dtype):
        return _cross_entropy_original(input, target, weight, size_average, ignore_index, reduce, reduction,
                                       label_smoothing)
    t = _cast(t, ms.int32)  # MindTorch: target.astype(int32)
    # _innner_log_softmax(x, 1) = x - logsumexp(x, 1, keep_dims=True) (math_func.logsumexp)
    x_max = _reduce_max_keep(x, _CLASS_AXES)
    lse = _add(_log(_reduce_sum_keep(_exp(_sub(x, x_max)), _CLASS_AXES)), x_max)
    logp = _sub(x, lse)
    # _nll_loss, weight None, reduction "mean", label_smoothing 0.0
    t = _expand_dims(t, _LAST)
    mask = _equal(t, _int32_scalar(ignore_index))
    t = _masked_fill(t, mask, _I32_ZERO)
    loss = _masked_fill(_neg(_gather_d(logp, _LAST, t)), mask, _F32_ZERO)
    smooth = _masked_fill(_neg(_sum_ext(logp, _LAST_AXES, True, None)), mask, _F32_ZERO)
    weights = _masked_fill(_ones_like(loss), mask, _F32_ZERO)
    loss = _squeeze(loss)
    smooth = _squeeze(smooth)
    total = _sum_ext(weights, None, False, None)
    loss = _real_div(_sum_ext(loss, None, False, None), total)
    smooth = _real_div(_sum_ext(smooth, None, False, None), total)
    # (1 - label_smoothing) * loss + label_smoothing / C * smooth: 1.0 * loss is folded by MindSpore's optimizer
    return _to_adapter(_add(loss, _mul(_F32_ZERO, smooth)))


def _lean_tensor_add(x, y):  # graph code
    """``x + y`` (and ``x += y``: functional in a graph) of two MindTorch tensors: ``Add`` of the two as MindSpore
    tensors, converted back, as MindTorch's registered (Tensor, Tensor) ``+`` (``mindtorch/torch/_register/
    register_utils.py`` ``_multitype_add_tensor_tensor_calcu`` -> MindSpore's ``_tensor_add_tensor`` -> ``F.add``);
    same broadcasting and dtype promotion (the primitive's). Other pairs (:func:`_add_plan_python`): that function."""
    if _add_plan(isinstance(x, _AdapterTensor), isinstance(y, _AdapterTensor), _dtype(x), _dtype(y)):
        return _to_adapter(_add(_to_ms(x), _to_ms(y)))
    return _tensor_add_original(x, y)


class _LeanTensor:
    @staticmethod
    def flatten(self, start_dim=0, end_dim=-1):  # graph code
        """``Tensor.flatten`` (``x.flatten(1)``): as :func:`_lean_flatten`; other arguments: MindTorch's method."""
        x = _to_ms(self)
        plan = _flatten_plan(x.shape, start_dim, end_dim)
        if plan is None:
            return _tensor_flatten_original(self, start_dim, end_dim)
        if plan[0] == 0:
            return _to_adapter(_flatten(x))
        if plan[0] == 1:
            return _to_adapter(x)
        return _to_adapter(_reshape(x, plan[1]))

    @staticmethod
    def view(self, *shape, dtype=None):  # graph code
        """``Tensor.view(*shape)``: ``Reshape`` to the sizes as given (:func:`_reshape_plan_python`); a dtype view
        and other arguments: MindTorch's method."""
        x = _to_ms(self)
        sizes = _reshape_plan(x.shape, shape, None, dtype)
        if sizes is None:
            return _tensor_view_original(self, *shape, dtype=dtype)
        return _to_adapter(_reshape(x, sizes))

    @staticmethod
    def reshape(self, *_shape, shape=None):  # graph code
        """``Tensor.reshape(*shape)`` / ``reshape(shape=)``: as :meth:`view`; other arguments: MindTorch's method."""
        x = _to_ms(self)
        sizes = _reshape_plan(x.shape, _shape, shape, None)
        if sizes is None:
            return _tensor_reshape_original(self, *_shape, shape=shape)
        return _to_adapter(_reshape(x, sizes))


# -- installation -----------------------------------------------------------------------------------------------------
def _bind() -> bool:
    """Set the graph-code globals once. False where this MindSpore lacks a primitive the forms use (then none is
    installed: MindTorch's code runs, as before)."""
    global ms, _to_ms, _to_adapter, _relu, _matmul_nt, _bias_add, _reshape, _flatten, _shape, _dtype, _reduce_max_keep
    global _reduce_sum_keep, _exp, _log, _sub, _add, _mul, _neg, _real_div, _gather_d, _sum_ext, _squeeze
    global _expand_dims, _equal, _masked_fill, _ones_like, _cast, _F32_ZERO, _I32_ZERO, _linear_plan, _flatten_plan
    global _cross_entropy_plan, _int32_scalar, _pool_input_ok, _add_plan, _reshape_plan
    if ms is not None:
        return True
    import mindspore
    from mindspore.ops import operations as P
    from adapter import backend
    try:
        sum_ext = importlib.import_module("mindspore.ops.auto_generate").SumExt
    except (ImportError, AttributeError):
        return False
    inner = backend.internal("inner_ops")
    constexpr = mindspore.ops.constexpr
    _to_ms, _to_adapter = inner.convert_to_ms_tensor, inner.convert_to_adapter_tensor
    _relu, _matmul_nt, _bias_add, _reshape, _flatten = P.ReLU(), P.MatMul(False, True), P.BiasAdd(), P.Reshape(), \
        P.Flatten()
    _reduce_max_keep, _reduce_sum_keep = P.ReduceMax(keep_dims=True), P.ReduceSum(True)
    _exp, _log, _sub, _add, _mul, _neg, _real_div = P.Exp(), P.Log(), P.Sub(), P.Add(), P.Mul(), P.Neg(), P.RealDiv()
    _gather_d, _sum_ext, _squeeze, _expand_dims = P.GatherD(), sum_ext(), P.Squeeze(-1), P.ExpandDims()
    _equal, _masked_fill, _ones_like, _cast = P.Equal(), P.MaskedFill(), P.OnesLike(), P.Cast()
    _shape, _dtype = P.Shape(), P.DType()
    _F32_ZERO, _I32_ZERO = mindspore.Tensor(0, mindspore.float32), mindspore.Tensor(0, mindspore.int32)
    _linear_plan, _flatten_plan = constexpr(_linear_plan_python), constexpr(_flatten_plan_python)
    _cross_entropy_plan, _int32_scalar = constexpr(_cross_entropy_plan_python), constexpr(_int32_scalar_python)
    _pool_input_ok, _add_plan = constexpr(_pool_input_ok_python), constexpr(_add_plan_python)
    _reshape_plan = constexpr(_reshape_plan_python)
    ms = mindspore
    return True


def forms():
    """``([(class, attribute, lean function)], [(original function, lean function)])`` for
    :mod:`adapter.graph_semantics` to swap while compiling: the forwards by class attribute, the functions wherever a
    MindTorch module holds the original (or a ``functools.wraps`` wrapper of it). Installs the two primitive
    attributes the pooling forms read (``_adapter_max_pool``, ``_adapter_avg_pool``), once. ``([], [])`` where this
    MindSpore lacks a primitive they need."""
    global _relu_forward, _linear_forward, _max_pool_forward, _avg_pool_forward, _flatten_original
    global _cross_entropy_original, _relu_original, _tensor_flatten_original, _tensor_view_original
    global _tensor_reshape_original
    if not _bind():
        return [], []
    functional = importlib.import_module("mindtorch.torch.functional")
    F = importlib.import_module("mindtorch.torch.nn.functional")
    from mindtorch.torch.nn.modules.activation import ReLU
    from mindtorch.torch.nn.modules.linear import Linear
    from mindtorch.torch.nn.modules.pooling import AdaptiveAvgPool2d, MaxPool2d
    from mindtorch.torch.tensor import Tensor
    if _relu_forward is None:
        _relu_forward, _linear_forward = ReLU.__dict__["forward"], Linear.__dict__["forward"]
        _max_pool_forward, _avg_pool_forward = MaxPool2d.__dict__["forward"], AdaptiveAvgPool2d.__dict__["forward"]
        _flatten_original, _cross_entropy_original = functional.flatten, F.cross_entropy
        _relu_original, _tensor_flatten_original = F.relu, Tensor.__dict__["flatten"]
        _tensor_view_original, _tensor_reshape_original = Tensor.__dict__["view"], Tensor.__dict__["reshape"]
        with patching.applying("graph_lean"):
            patching.patch_attr(MaxPool2d, "_adapter_max_pool", PythonAttribute(_max_pool_primitive))
            patching.patch_attr(AdaptiveAvgPool2d, "_adapter_avg_pool", PythonAttribute(_avg_pool_primitive))
    classes = [(ReLU, "forward", _LeanReLU.forward), (Linear, "forward", _LeanLinear.forward),
               (MaxPool2d, "forward", _LeanMaxPool2d.forward),
               (AdaptiveAvgPool2d, "forward", _LeanAdaptiveAvgPool2d.forward), (Tensor, "flatten", _LeanTensor.flatten),
               (Tensor, "view", _LeanTensor.view), (Tensor, "reshape", _LeanTensor.reshape)]
    functions = [(_relu_original, _lean_relu), (_flatten_original, _lean_flatten),
                 (_cross_entropy_original, _lean_cross_entropy)]
    return classes, functions


def _registered_tensor_pair(multitype):
    """The function ``multitype`` (a MindSpore ``MultitypeFuncGraph``) holds for (Tensor, Tensor): the last one
    registered (MindTorch registers its own after MindSpore's), or None."""
    found = None
    for types, fn in getattr(multitype, "entries", ()):
        if len(types) == 2 and all(str(t) == "Tensor" for t in types):
            found = fn
    return found


def multitype_forms():
    """``[(MultitypeFuncGraph, type names, lean function, registered function)]`` for :mod:`adapter.graph_semantics`
    to register while compiling and register back after (``MultitypeFuncGraph.register_fn``, which the graph
    compiler reads at each compile; its Python ``entries``, which PyNative dispatch reads, are left alone):
    ``+`` of two tensors (:func:`_lean_tensor_add`), where MindTorch's function is the registered one. ``[]``
    where this MindSpore lacks what that needs."""
    global _AdapterTensor, _tensor_add_original
    if not _bind():
        return []
    try:
        add = importlib.import_module("mindspore.ops.composite.multitype_ops.add_impl").add
    except (ImportError, AttributeError):
        return []
    registered = _registered_tensor_pair(add)
    if registered is None or not hasattr(add, "register_fn") or \
            not getattr(registered, "__module__", "").startswith("mindtorch."):
        return []
    from mindtorch.torch.tensor import Tensor
    _AdapterTensor, _tensor_add_original = Tensor, registered
    return [(add, ("Tensor", "Tensor"), _lean_tensor_add, registered)]
