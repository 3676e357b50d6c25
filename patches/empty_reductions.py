"""Reductions, matrix products and ``F.linear`` of tensors with no elements, as PyTorch, values and gradients, in
PyNative and compiled (MindSpore's CPU kernels leave the output uninitialised there).

Replaces ``torch.sum/mean/prod/std/var/norm/logsumexp/amax/amin/argmax/argmin/max/min/mm/bmm/matmul``, the
``Tensor`` methods of the same names, ``x @ y`` and ``F.linear`` (``nn.Linear``), for inputs with a zero-size
dimension only (others go to MindTorch unchanged). MindSpore's ``ReduceSum``/``ReduceMean``/``MatMul``/
``BatchMatMul`` CPU kernels return whatever memory they were given when the reduced or inner dimension is empty:
``torch.randn(0, 3).sum()`` gave NaN or 0.401 from run to run, ``torch.mm(torch.randn(3, 0), torch.randn(0, 2))``
values up to 31.7 (PyTorch: 0), ``var(0)`` of a (0, 3) tensor a 0-d NaN (PyTorch: three NaNs), ``amax()`` NaN
(PyTorch raises). Gradients too: the weight gradient of ``nn.Linear`` over an empty batch is ``dout^T @ x``, a
``MatMul`` with an empty inner dimension, and was the last values written to the freed memory (7.0 after a tensor
of 7s, compiled and eager; PyTorch: 0), so an SGD step on an empty batch moved the weights. An empty last batch, a
class with no samples in a masked mean, ``x[mask].sum()`` with an all-false mask hit this silently.

PyTorch 2.13's results (ATen's ``ReduceOps`` identities): ``sum`` 0 (int64 for integer/bool inputs, ``dtype=``
honoured), ``mean``/``std``/``var`` NaN, ``prod`` 1, ``norm`` 0, ``logsumexp`` -inf, products zeros of the result
shape (``matmul``: batch dimensions broadcast as numpy's), ``linear`` zeros of ``(*input.shape[:-1], out)`` plus the
bias where that has elements (``in_features == 0``); ``max``/``min``/``amax``/``amin``/``argmax``/``argmin`` over a
zero-size dimension raise PyTorch's ``IndexError``/``RuntimeError``, and over non-empty dimensions return empty
values (and int64 indices). The results are constants of the input's shape (shapes are static in a compiled graph
too) that depend on no input but the bias, so the inputs' and the weight's gradients are zeros of their shapes, as
PyTorch's (the bias's too, but where the output has elements: the output gradient summed over the batch).

Two forms. PyNative: ``functools.wraps`` wrappers, stacked with the other patches of the same names. Compiled:
MindSpore's graph parser compiles ``inspect.unwrap`` of a wrapper, i.e. MindTorch's original, so the wrappers do
nothing in a graph; :func:`graph_forms` gives plain functions (MindTorch's signatures, a ``constexpr`` shape test,
then the original) that ``adapter/graph_semantics.py`` swaps in while a graph compiles (``register_graph_forms``),
for the reductions and products and for MindTorch's ``x @ y`` (``register_standard_method.matmul_fn``). ``F.linear``
is one plain function for both modes. The graph forms of ``var`` and ``var_mean`` (``var_mean`` only while
compiling: it has no PyNative wrapper) also compute a reduction over every element without ``keepdim`` with
``keepdim`` and reshape it to 0-d: MindSpore's graph ``Tensor.var`` of that case compiled forward but not its gradient
("For primitive[AddN], the input type must be same", op_db's ``var``/``var_mean``, issue 35). Not covered compiled: ``max``/``min``/``argmax``... of an empty tensor (a
value where PyTorch raises; listed known differences). ``F.mse_loss``/``F.l1_loss`` of an empty batch (MindSpore's
own reductions inside ``ops.mse_loss``): ``patches/float64_precision.py``'s ``reduce_loss``.

Replaces: ``torch.X``, ``torch.functional.X`` and ``torch.Tensor.X`` for X in :data:`REDUCTIONS`, :data:`EXTREMA`,
:data:`PRODUCTS`; ``torch.Tensor.__matmul__/__rmatmul__``; ``torch.nn.functional.linear`` and the ``linear`` that
``mindtorch.torch.nn.modules.linear`` imported (``nn.Linear.forward``'s).
"""
import builtins
import functools

from adapter import graph_semantics

from . import Patch
from ._wrap_once import wrap_attr

torch = None  # mindtorch.torch, set by apply() (an import inside a function does not compile in graph mode)

_FILL = {"sum": 0, "mean": float("nan"), "prod": 1, "std": float("nan"), "var": float("nan"), "norm": 0,
         "logsumexp": float("-inf")}


def _empty(x) -> bool:
    return 0 in tuple(x.shape)


def _dims(ndim, dim):
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    n = builtins.max(ndim, 1)
    for d in dims:
        if d < -n or d >= n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return tuple(d % n for d in dims) if ndim else ()


def _reduced_shape(shape, dims, keepdim):
    return tuple((1 if i in dims else s) for i, s in enumerate(shape) if keepdim or i not in dims)


def _filled(name, x, dim, keepdim, dtype):
    shape = _reduced_shape(tuple(x.shape), _dims(x.dim(), dim), keepdim)
    if dtype is None:
        dtype = x.dtype
        if name in ("sum", "prod") and not x.is_floating_point():
            dtype = torch.int64
    return torch.full(shape, _FILL[name], dtype=dtype)


def _extremum(name, x, dim, keepdim):
    """``max``/``min``/``amax``/``amin``/``argmax``/``argmin`` of an empty ``x``: PyTorch's error when a reduced
    dimension is empty, else the empty result."""
    shape = tuple(x.shape)
    dims = _dims(len(shape), dim)
    if dim is None or builtins.any(shape[d] == 0 for d in dims):
        if dim is None:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        raise IndexError(f"{name}(): Expected reduction dim {dims[0]} to have non-zero size.")
    out = _reduced_shape(shape, dims, keepdim)
    if name in ("argmax", "argmin"):
        return torch.zeros(out, dtype=torch.int64)
    values = torch.zeros(out, dtype=x.dtype)
    if name in ("amax", "amin"):
        return values
    return values, torch.zeros(out, dtype=torch.int64)


def _reduction(name, original):
    @functools.wraps(original)
    def wrapper(input, *args, **kwargs):
        if not _empty(input) or kwargs.get("out") is not None:
            return original(input, *args, **kwargs)
        if name in ("std", "var"):  # (dim, unbiased, keepdim)
            names = ("dim", "unbiased", "keepdim")
        elif name == "norm":  # (p, dim, keepdim, ..., dtype)
            names = ("p", "dim", "keepdim")
        else:
            names = ("dim", "keepdim", "dtype")
        bound = dict(zip(names, args))
        bound.update(kwargs)
        if name == "norm":
            return _filled(name, input, bound.get("dim"), bound.get("keepdim", False), bound.get("dtype"))
        return _filled(name, input, bound.get("dim", bound.get("axis")), bound.get("keepdim", False),
                       bound.get("dtype"))
    return wrapper


def _extremum_wrapper(name, original):
    @functools.wraps(original)
    def wrapper(input, *args, **kwargs):
        if not _empty(input) or kwargs.get("out") is not None:
            return original(input, *args, **kwargs)
        bound = dict(zip(("dim", "keepdim"), args))
        bound.update(kwargs)
        dim = bound.get("dim", bound.get("axis"))
        if name in ("max", "min") and (bound.get("other") is not None or hasattr(dim, "shape")):
            return original(input, *args, **kwargs)  # the element-wise form
        return _extremum(name, input, dim, bound.get("keepdim", False))
    return wrapper


def _product(name, original):
    @functools.wraps(original)
    def wrapper(input, other, *args, **kwargs):
        if kwargs.get("out") is not None or not hasattr(other, "shape") or not (_empty(input) or _empty(other)):
            return original(input, other, *args, **kwargs)
        if name == "__rmatmul__":  # other @ input
            shape = _product_shape("matmul", other.shape, input.shape)
        else:
            shape = _product_shape("matmul" if name == "__matmul__" else name, input.shape, other.shape)
        if shape is not None:
            return torch.zeros(shape, dtype=input.dtype)
        return original(input, other, *args, **kwargs)
    return wrapper


# -- the same in compiled code, and F.linear in both modes -------------------------------------------------------------
# MindSpore's graph parser compiles inspect.unwrap(fn) (mindspore/_extends/parse/parser.py), so the functools.wraps
# wrappers above are PyNative-only: compiled, torch.randn(0, 3).sum() and the weight gradient of nn.Linear over an
# empty batch (dW = dout^T @ x, a MatMul with inner dimension 0) were uninitialised memory (measured: 7.0, the value
# last written to the freed memory, in 10 of 10 dirtied runs; tests/test_empty_reductions.py). The graph forms below are
# plain functions (no __wrapped__) that adapter/graph_semantics.py swaps in while a graph compiles
# (:func:`graph_forms`). Shapes are static in a graph: whether an input is empty is decided at compile time by a
# ``constexpr`` planner, so a non-empty input compiles to the MindTorch original's graph, and an empty one to a
# constant of the result's shape that depends on no input: autodiff then gives zero gradients, as PyTorch's.
# Graph code reads these module globals, set by apply() (no imports inside graph code).
ms = cast_to_adapter_tensor = cast_to_ms_tensor = None
_has_zero = _reduction_plan = _product_plan = _linear_plan = None


def _has_zero_python(*shapes) -> bool:
    """Whether any of ``shapes`` has a zero-size dimension (a ``constexpr`` in graphs)."""
    return builtins.any(0 in tuple(s) for s in shapes)


def _floating(dtype) -> bool:
    return builtins.any(dtype == d for d in (ms.float16, ms.float32, ms.float64, ms.bfloat16))


def _reduction_plan_python(name, shape, dtype, dim, keepdim, out_dtype):
    """(result shape, dtype, fill) of reduction ``name`` of an empty input (:data:`_FILL`, module docstring), with
    :func:`_dims`'s ``IndexError`` for a dimension out of range. ``dtype``: the input's; ``out_dtype``: ``dtype=``."""
    shape = tuple(shape)
    result = _reduced_shape(shape, _dims(len(shape), dim), keepdim)
    if out_dtype is None:
        out_dtype = dtype
        if name in ("sum", "prod") and not _floating(dtype):
            out_dtype = ms.int64
    return result, out_dtype, _FILL[name]


def _product_shape(name, a, b):
    """The result shape of ``name`` (``mm``/``bmm``/``matmul``/``linear``: ``b`` is the weight, (out, in) or (in,))
    for operand shapes ``a``, ``b`` as PyTorch computes it (``matmul``: numpy's broadcast of the batch dimensions),
    or None where the shapes do not fit (MindTorch's own call then raises its error)."""
    a, b = tuple(a), tuple(b)
    if name == "linear":
        if len(b) not in (1, 2) or not a or a[-1] != b[-1]:
            return None
        return a[:-1] + b[:1] if len(b) == 2 else a[:-1]
    if name == "mm":
        return (a[0], b[1]) if len(a) == 2 and len(b) == 2 and a[1] == b[0] else None
    if name == "bmm":
        return (a[0], a[1], b[2]) if len(a) == 3 and len(b) == 3 and a[0] == b[0] and a[2] == b[1] else None
    if not a or not b or a[-1] != b[-2 if len(b) > 1 else 0]:  # matmul
        return None
    if len(a) == 1 and len(b) == 1:
        return ()
    a_batch, b_batch = a[:-2], b[:-2]
    n = builtins.max(len(a_batch), len(b_batch))
    a_batch, b_batch = (1,) * (n - len(a_batch)) + a_batch, (1,) * (n - len(b_batch)) + b_batch
    batch = []
    for x, y in zip(a_batch, b_batch):
        if x != y and 1 not in (x, y):
            return None
        batch.append(y if x == 1 else x)
    rows = a[-2:-1] if len(a) > 1 else ()
    cols = b[-1:] if len(b) > 1 else ()
    return tuple(batch) + rows + cols


def _product_plan_python(name, a, b):
    """The result shape (:func:`_product_shape`) when an operand is empty and the shapes fit, else None (the
    MindTorch original runs)."""
    if not _has_zero_python(a, b):
        return None
    return _product_shape(name, a, b)


def _linear_plan_python(input_shape, weight_shape):
    """``(result shape, whether the result is empty)`` for ``F.linear`` with an empty input or weight whose shapes
    fit, else None."""
    if not _has_zero_python(input_shape, weight_shape):
        return None
    shape = _product_shape("linear", input_shape, weight_shape)
    return None if shape is None else (shape, 0 in shape)


def _graph_filled(name, input, dim, keepdim, dtype):  # noqa: A002 (graph code)
    shape, out_dtype, fill = _reduction_plan(name, ms.ops.shape(input), ms.ops.dtype(input), dim, keepdim, dtype)
    return cast_to_adapter_tensor(ms.ops.full(shape, fill, dtype=out_dtype))


def _graph_zeros(shape, input):  # noqa: A002 (graph code)
    return cast_to_adapter_tensor(ms.ops.zeros(shape, ms.ops.dtype(input)))


def _graph_reduction(name, original, method):
    """The graph form of reduction ``name`` (``sum``/``mean``/``prod``), signature of the MindTorch function
    (``method``: of ``Tensor``'s method): :func:`_graph_filled` for an empty input, else ``original``."""
    if method:
        def reduction_method(self, dim=None, keepdim=False, dtype=None):
            if _has_zero(ms.ops.shape(self)):
                return _graph_filled(name, self, dim, keepdim, dtype)
            return original(self, dim, keepdim, dtype)
        return reduction_method

    def reduction(input, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
        if _has_zero(ms.ops.shape(input)) and out is None:
            return _graph_filled(name, input, dim, keepdim, dtype)
        return original(input, dim, keepdim, dtype=dtype, out=out)
    return reduction


def _graph_mean(original, method):
    """``mean``'s graph form (MindTorch's ``mean`` also takes ``axis``)."""
    if method:
        def mean_method(self, dim=None, keepdim=False, dtype=None, axis=None):
            if _has_zero(ms.ops.shape(self)):
                return _graph_filled("mean", self, axis if dim is None else dim, keepdim, dtype)
            return original(self, dim, keepdim, dtype, axis)
        return mean_method

    def mean(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None):  # noqa: A002
        if _has_zero(ms.ops.shape(input)) and out is None:
            return _graph_filled("mean", input, axis if dim is None else dim, keepdim, dtype)
        return original(input, dim, keepdim, dtype=dtype, out=out, axis=axis)
    return mean


def _all_elements(original, input, dim, unbiased, keepdim, out):  # noqa: A002
    """``original(input, dim, unbiased, keepdim, out=out)`` (MindTorch's ``var`` / ``var_mean``); over all elements
    without ``keepdim``, computed with ``keepdim`` and reshaped to 0-d. MindSpore's graph ``Tensor.var`` (what they
    call) reducing every axis to a 0-d result compiles forward, but not its gradient ("For primitive[AddN], the
    input type must be same", mindspore 2.10; op_db's ``var`` / ``var_mean``, issue 35); with ``keepdims`` it does,
    with the same values."""
    if dim is None and not keepdim and out is None:
        result = original(input, dim, unbiased, True)
        if isinstance(result, tuple):
            return tuple(ms.ops.reshape(r, ()) for r in result)
        return ms.ops.reshape(result, ())
    return original(input, dim, unbiased, keepdim, out=out)


def _graph_moment(name, original, method):
    """``std``/``var``'s graph form (``unbiased`` before ``keepdim``); ``var`` over all elements through
    :func:`_all_elements`."""
    if method:
        def moment_method(self, dim=None, unbiased=True, keepdim=False):
            if _has_zero(ms.ops.shape(self)):
                return _graph_filled(name, self, dim, keepdim, None)
            if name == "var" and dim is None and not keepdim:
                return ms.ops.reshape(original(self, dim, unbiased, True), ())
            return original(self, dim, unbiased, keepdim)
        return moment_method

    def moment(input, dim=None, unbiased=True, keepdim=False, *, out=None):  # noqa: A002
        if _has_zero(ms.ops.shape(input)) and out is None:
            return _graph_filled(name, input, dim, keepdim, None)
        if name == "var":
            return _all_elements(original, input, dim, unbiased, keepdim, out)
        return original(input, dim, unbiased, keepdim, out=out)
    return moment


def _graph_var_mean(original):
    """``var_mean``'s graph form: MindTorch's, through :func:`_all_elements`."""
    def var_mean(input, dim=None, unbiased=True, keepdim=False, *, out=None):  # noqa: A002
        return _all_elements(original, input, dim, unbiased, keepdim, out)
    return var_mean


def _graph_norm(original, method):
    """``norm``'s graph form: 0 for an empty input, any ``p`` (as in PyNative, :func:`_reduction`); a number ``p``
    with ``dim=None`` on a matrix: the vector norm of all elements, as PyTorch's ``torch.norm`` and as
    ``patches/op_arguments.py`` does in PyNative (MindTorch's graph path took the matrix norm: ``torch.norm(x,
    float('-inf'))`` of a 5x5 matrix was the smallest row sum, off by 17.8 from PyTorch's smallest ``|x|``; found by
    op_db's ``norm.inf``, issue 35)."""
    if method:
        def norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
            if _has_zero(ms.ops.shape(self)):
                return _graph_filled("norm", self, dim, keepdim, dtype)
            if _all_elements_vector_norm(p, dim, keepdim, dtype, len(ms.ops.shape(self))):
                return original(self.reshape(-1), p, 0, False, None)
            return original(self, p, dim, keepdim, dtype)
        return norm_method

    def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):  # noqa: A002
        if _has_zero(ms.ops.shape(input)) and out is None:
            return _graph_filled("norm", input, dim, keepdim, dtype)
        if out is None and _all_elements_vector_norm(p, dim, keepdim, dtype, len(ms.ops.shape(input))):
            return original(input.reshape(-1), p, 0, False, None, None)
        return original(input, p, dim, keepdim, out, dtype)
    return norm


def _all_elements_vector_norm_python(p, dim, keepdim, dtype, ndim) -> bool:
    """Whether ``norm(x, p)`` must be the vector norm of all of ``x``'s elements where MindTorch's graph path takes a
    matrix norm (a ``constexpr``): a number ``p``, no ``dim``, ``keepdim`` and ``dtype`` unset, more than 1 dimension."""
    return (dim is None and isinstance(p, (int, float)) and not isinstance(p, bool) and ndim > 1 and not keepdim
            and dtype is None)


_all_elements_vector_norm = None


def _graph_logsumexp(original, method):
    """``logsumexp``'s graph form: -inf for an empty input (``dim`` required, as PyTorch's)."""
    if method:
        def logsumexp_method(self, dim, keepdim=False):
            if _has_zero(ms.ops.shape(self)):
                return _graph_filled("logsumexp", self, dim, keepdim, None)
            return original(self, dim, keepdim)
        return logsumexp_method

    def logsumexp(input, dim, keepdim=False, *, out=None):  # noqa: A002
        if _has_zero(ms.ops.shape(input)) and out is None:
            return _graph_filled("logsumexp", input, dim, keepdim, None)
        return original(input, dim, keepdim, out=out)
    return logsumexp


def _graph_product(name, original, method):
    """``mm``/``bmm``/``matmul``'s graph form: zeros of the result shape (:func:`_product_shape`) when an operand
    is empty, else ``original``."""
    if method:
        def product_method(self, other):
            shape = _product_plan(name, ms.ops.shape(self), ms.ops.shape(other))
            if shape is None:
                return original(self, other)
            return _graph_zeros(shape, self)
        return product_method

    def product(input, other, *, out=None):  # noqa: A002
        shape = _product_plan(name, ms.ops.shape(input), ms.ops.shape(other))
        if shape is None or out is not None:
            return original(input, other, out=out)
        return _graph_zeros(shape, input)
    return product


def _graph_matmul_operator(original):
    """The graph form of MindTorch's ``x @ y`` (``mindtorch/torch/_register/register_standard_method.py``
    ``adapter_matmul`` calls its module global ``matmul_fn`` with MindSpore tensors): zeros of the result shape when
    an operand is empty, else ``original`` (MindSpore's ``matmul``)."""
    def matmul_fn(x, y):
        if isinstance(x, ms.Tensor) and isinstance(y, ms.Tensor):
            shape = _product_plan("matmul", ms.ops.shape(x), ms.ops.shape(y))
            if shape is not None:
                return ms.ops.zeros(shape, ms.ops.dtype(x))
        return original(x, y)
    return matmul_fn


def _graph_rmatmul(original):
    """``Tensor.__rmatmul__``'s graph form (``other @ self``)."""
    def rmatmul(self, other):
        shape = _product_plan("matmul", ms.ops.shape(other), ms.ops.shape(self))
        if shape is None:
            return original(self, other)
        return _graph_zeros(shape, self)
    return rmatmul


def _make_linear(original):
    """``F.linear`` (both modes: a plain function, which the graph parser compiles). input (..., in), weight
    (out, in) or (in,), bias (out,) or None -> (..., out). With an empty input or weight: zeros of the result shape,
    plus ``bias`` where the result has elements (``in_features == 0``: PyTorch's result is the bias); the zeros
    depend on neither ``input`` nor ``weight``, so their gradients are zeros (PyTorch: ``dW = dout^T @ x`` over an
    empty batch, 0), where MindSpore's MatMul gradient with an empty inner dimension was uninitialised memory.
    Other inputs: MindTorch's ``linear``."""
    def linear(input, weight, bias=None):  # noqa: A002 (PyTorch's names)
        plan = _linear_plan(ms.ops.shape(input), ms.ops.shape(weight))
        if plan is None:
            return original(input, weight, bias)
        output = ms.ops.zeros(plan[0], ms.ops.dtype(input))
        if bias is not None and not plan[1]:
            output = output + cast_to_ms_tensor(bias)
        return cast_to_adapter_tensor(output)
    return linear


def _graph_form(name, original, method):
    if name in ("sum", "prod"):
        return _graph_reduction(name, original, method)
    if name == "mean":
        return _graph_mean(original, method)
    if name in ("std", "var"):
        return _graph_moment(name, original, method)
    if name == "norm":
        return _graph_norm(original, method)
    if name == "logsumexp":
        return _graph_logsumexp(original, method)
    if name == "var_mean":
        return _graph_var_mean(original)
    return _graph_product(name, original, method)


GRAPH_NAMES = ("sum", "mean", "prod", "std", "var", "norm", "logsumexp", "mm", "bmm", "matmul", "var_mean")
_graph_made: dict = {}  # (id(owner), name, original) -> graph form: the same object for every compile


def _standard_methods():
    """MindTorch's module of graph operator implementations (``x @ y`` is its ``adapter_matmul``)."""
    import importlib
    return importlib.import_module("mindtorch.torch._register.register_standard_method")


def graph_forms():
    """``[(owner, name, graph form)]`` that ``adapter/graph_semantics.py`` swaps in while a graph compiles:
    ``torch.X``, ``torch.functional.X``, ``Tensor.X`` for X in :data:`GRAPH_NAMES`, plus ``Tensor.__matmul__`` /
    ``__rmatmul__``; each calls what the graph compiled before (``inspect.unwrap`` of the installed attribute) for
    non-empty inputs. Empty where this patch is not applied (``ADAPTER_DISABLE_PATCHES=empty_reductions``)."""
    import inspect

    from adapter import patching
    if torch is None or not patching.records(NAME):
        return []
    import mindtorch.torch.functional as functional
    from mindtorch.torch.tensor import Tensor
    items = [(owner, name, name, owner is Tensor) for name in GRAPH_NAMES for owner in (torch, functional, Tensor)
             if hasattr(owner, name)]
    items += [(Tensor, "__matmul__", "matmul", True), (Tensor, "__rmatmul__", "__rmatmul__", True),
              (_standard_methods(), "matmul_fn", "@", False)]
    out = []
    for owner, attr, name, method in items:
        original = inspect.unwrap(getattr(owner, attr))
        key = (id(owner), attr, original)
        if key not in _graph_made:
            if name == "@":
                _graph_made[key] = _graph_matmul_operator(original)
            elif name == "__rmatmul__":
                _graph_made[key] = _graph_rmatmul(original)
            else:
                _graph_made[key] = _graph_form(name, original, method)
        out.append((owner, attr, _graph_made[key]))
    return out


REDUCTIONS = ("sum", "mean", "prod", "std", "var", "norm", "logsumexp")
EXTREMA = ("max", "min", "amax", "amin", "argmax", "argmin")
PRODUCTS = ("mm", "bmm", "matmul")
MATMUL_OPERATORS = ("__matmul__", "__rmatmul__")
_OWNERS = ("torch", "torch.functional", "torch.Tensor")  # MindTorch 0.4.0 has every name on each


def apply() -> None:
    global torch, ms, cast_to_adapter_tensor, cast_to_ms_tensor, _has_zero, _reduction_plan, _product_plan
    global _linear_plan, _all_elements_vector_norm
    import mindspore
    import mindtorch.torch
    from mindspore.ops.primitive import constexpr
    torch = mindtorch.torch
    import mindtorch.torch.functional as functional
    import mindtorch.torch.nn.functional as F
    import mindtorch.torch.nn.modules.linear as linear_module
    from mindtorch.torch.tensor import Tensor, cast_to_adapter_tensor as to_adapter, cast_to_ms_tensor as to_ms
    ms, cast_to_adapter_tensor, cast_to_ms_tensor = mindspore, to_adapter, to_ms
    if _has_zero is None:
        _has_zero, _reduction_plan = constexpr(_has_zero_python), constexpr(_reduction_plan_python)
        _product_plan, _linear_plan = constexpr(_product_plan_python), constexpr(_linear_plan_python)
        _all_elements_vector_norm = constexpr(_all_elements_vector_norm_python)
    for names, make in ((REDUCTIONS, _reduction), (EXTREMA, _extremum_wrapper), (PRODUCTS, _product)):
        for name in names:
            for owner in (torch, functional, Tensor):
                if hasattr(owner, name):  # result_dtypes/index_dtype/median may wrap the same names: stacked
                    wrap_attr(owner, name, NAME, functools.partial(make, name))
    for name in MATMUL_OPERATORS:  # x @ y (Tensor's method; compiled: graph_forms' matmul_fn)
        wrap_attr(Tensor, name, NAME, functools.partial(_product, name))
    for owner in (F, linear_module):  # nn.Linear.forward calls the module's global `linear`
        wrap_attr(owner, "linear", NAME, _make_linear)
    graph_semantics.register_graph_forms(graph_forms)


NAME = "empty_reductions"
PATCH = Patch(NAME, "sum/mean/prod/std/var/norm/logsumexp/max/min/argmax/mm/bmm/matmul/linear of tensors "
                    "with no elements as PyTorch, values and gradients (MindSpore's CPU kernels returned "
                    "uninitialised memory: randn(0, 3).sum() was NaN or 0.401); compiled too, through graph forms "
                    "adapter/graph_semantics.py swaps in while compiling", "post-import", apply,
              replaces=tuple(f"{owner}.{name}" for owner in _OWNERS for name in REDUCTIONS + EXTREMA + PRODUCTS)
              + ("torch.Tensor.__matmul__", "torch.Tensor.__rmatmul__", "torch.nn.functional.linear",
                 "mindtorch.torch.nn.modules.linear.linear"),
              after=("index_dtype", "reduction_input"))
