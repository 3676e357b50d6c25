"""float64 stays float64: Python float operands of float64 tensors, ``F.mse_loss`` / ``F.l1_loss``
(``nn.MSELoss`` / ``nn.L1Loss``), ``torch.dot`` / ``Tensor.dot``.

**Python floats.** MindSpore 2.5 converts a Python float operand to a float32 scalar before promoting it to the
tensor's dtype, so with a float64 (or complex128) tensor ``t * 3.3`` computes ``t * float32(3.3)``: relative error
1.6e-8 (measured: ``t * 3.3`` off by 5.4e-8 at t = 1.12, ``t + 0.1`` by 1.5e-9), and comparisons flip:
``tensor([1.1234567890123], dtype=float64) > 1.1234567890122`` was False. PyTorch keeps the Python float as a
double (a "wrapped number": it never changes the result dtype, and a float64 op uses its full value). Here, when
``self`` is float64 or complex128, a Python float (or ``alpha=``) operand is made a 0-dim tensor of ``self``'s dtype
first, for the arithmetic and comparison operators (``+ - * / // % **`` and their reflected forms, ``< <= > >= ==
!=``), the methods ``add sub mul div true_divide rsub pow fmod remainder`` (their in-place forms call these), and
``torch.add/sub/mul/div/true_divide/rsub/pow/fmod/remainder``. Other dtypes are unchanged (for float32 PyTorch also
rounds the scalar to float32; float16 differs in rounding, not handled). Inside compiled graphs the methods and
functions are fixed too, but not the operators (MindSpore's graph compiler does not call the Python ones). Cost in
PyNative: none for tensor operands, a few us per call with a float operand (reading the dtype). PyTorch's own ``torch/optim/lbfgs.py``
does its line search in such scalars (``f + c1 * t * gtd``, ``p.add_(d, alpha=t)``).

MindSpore 2.5's ``ops.mse_loss`` and ``ops.l1_loss`` (``mindspore/ops/function/nn_func.py``) cast the element-wise
error to float32 before reducing and cast the result back (``x = cast_(x, mstype.float32)``), so a float64 loss
and its gradient carry float32 precision: measured on (8, 5) standard-normal inputs, MSE rel. error 2.5e-8, L1
1.1e-8 against real PyTorch's float64 (pytorch/examples time_sequence_prediction trains a float64 LSTM with
``nn.MSELoss`` and L-BFGS, whose tolerances are 1e-7 / 1e-9). For float64 inputs the loss is computed here as
PyTorch defines it (``torch.nn.MSELoss`` docs: ``mean((x - y)^2)``, ``sum`` or ``none``; L1: ``|x - y|``), in
float64; other dtypes keep MindTorch's path, but for an empty input (an empty batch), whose MindSpore loss was
uninitialised memory (``F.mse_loss(x, y, reduction='sum')`` of (0, 3) inputs: 7.0, the freed memory's last value;
``'mean'``: not PyTorch's NaN), computed here as well (:func:`reduce_loss`: NaN, 0, or the empty element-wise loss;
zero gradients). ``size_average`` / ``reduce`` (deprecated) map to ``reduction`` as in PyTorch (MindTorch's
``_get_reduce_string``).

MindTorch's ``dot`` (``mindtorch/torch/functional.py`` and ``tensor.py``: "ms.ops.tensor_dot only supports
float16/float32") casts float64 and integer vectors to float32: rel. error 9e-8 on a 17-element float64 dot
(PyTorch's own ``torch/optim/lbfgs.py`` takes ``y.dot(s)``, ``g.dot(d)`` in every iteration), and an int64 dot
rounded to float32. MindSpore's ``tensor_dot`` computes float64 and integer dots in their dtype on the CPU
(measured: float64 to 1 ulp, int64 exact beyond 2**53, int8/uint8 wrapping as PyTorch's do), so here it is called
for every dtype, without MindTorch's cast, with
PyTorch's checks (1-D, same dtype: ``RuntimeError: 1D tensors expected, but got 2D and 1D tensors``, ``dot :
expected both vectors to have same dtype, but found Double and Float``).

Other MindSpore losses with float32-precision results for float64 inputs (``nll_loss`` 5e-7, ``kl_div`` 2e-6,
``huber_loss``, ``cosine_embedding_loss``, ``margin_ranking_loss``, ``multilabel_soft_margin_loss``) and float64
inputs refused (``binary_cross_entropy``, ``binary_cross_entropy_with_logits``, ``soft_margin_loss``) are not
changed here.

Replaces: ``mindtorch.torch.nn.functional.mse_loss`` / ``l1_loss`` (the modules call them through ``F``),
``mindtorch.torch.dot`` and ``Tensor.dot``; the ``Tensor`` operators and methods listed above (also on
``nn.Parameter`` where MindTorch copied them there, 11 reflected and arithmetic operators; patches/parameter_methods.py
copies the others; not ``Parameter.__eq__/__ne__``, which stay MindSpore's) and the ``torch`` functions listed above
(MindTorch 0.4.0 has no ``rsub``).
"""
from __future__ import annotations

import functools

from . import Patch, get_original, is_patched, patch_attr


# Graph code below (a loss inside a compiled step) reads these module globals: no imports there. Set by apply().
ms = cast_to_ms_tensor = cast_to_adapter_tensor = _get_reduce_string = None
_has_zero = None  # constexpr(_has_zero_python)


def _has_zero_python(*shapes) -> bool:
    """Whether any of ``shapes`` has a zero-size dimension (a ``constexpr`` in graphs: shapes are static there)."""
    return any(0 in tuple(shape) for shape in shapes)


def reduce_loss(loss, reduction: str):
    """PyTorch's ``reduction=`` of an element-wise loss (a MindSpore tensor): ``"mean"``, ``"sum"`` or ``"none"``.
    Of an empty loss (an empty batch): NaN for ``"mean"``, 0 for ``"sum"``, as PyTorch's (ATen's mean/sum of no
    elements), as constants, so the gradients through it are zeros (MindSpore's ReduceMean/ReduceSum CPU kernels
    leave the result uninitialised there: patches/empty_reductions.py).
    Raises ValueError "<r> is not a valid value for reduction" (PyTorch's ``_Reduction.get_enum`` message)."""
    if reduction == "mean":
        if _has_zero(ms.ops.shape(loss)):
            return ms.ops.full((), float("nan"), dtype=ms.ops.dtype(loss))
        return loss.mean()
    if reduction == "sum":
        if _has_zero(ms.ops.shape(loss)):
            return ms.ops.zeros((), ms.ops.dtype(loss))
        return loss.sum()
    if reduction != "none":
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return loss


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
def _float64_loss(original, elementwise):
    def loss(input, target, size_average=None, reduce=None, reduction="mean"):  # noqa: A002 (PyTorch's names)
        x, y = cast_to_ms_tensor(input), cast_to_ms_tensor(target)
        if x.dtype != ms.float64 and y.dtype != ms.float64:
            if not _has_zero(ms.ops.shape(x), ms.ops.shape(y)):
                return original(input, target, size_average, reduce, reduction)
            err = elementwise(x - y)  # an empty batch: reduce_loss's NaN / 0, not MindSpore's uninitialised result
        else:
            err = elementwise(x.astype(ms.float64) - y.astype(ms.float64))
        if reduce is not None or size_average is not None:
            reduction = _get_reduce_string(size_average, reduce)
        return cast_to_adapter_tensor(reduce_loss(err, reduction))
    loss.__name__ = loss.__qualname__ = original.__name__  # not functools.wraps: MindSpore's graph compiler
    loss.__doc__ = original.__doc__                          # follows __wrapped__ to the original function
    return loss


def _square(d):
    return d * d


def _abs(d):
    return d.abs()


_TORCH_NAMES = None  # dtype -> PyTorch's scalar type name, for messages


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
def _dot(original):
    def dot(input, other, *, out=None):  # noqa: A002 (PyTorch's names)
        """PyTorch's ``torch.dot`` / ``Tensor.dot``: float64 and integers in their own dtype
        (patches/float64_precision.py)."""
        x, y = cast_to_ms_tensor(input), cast_to_ms_tensor(other)
        if x.ndim != 1 or y.ndim != 1:
            raise RuntimeError(f"1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors")
        if x.dtype != y.dtype:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_name(x.dtype)} and "
                               f"{_name(y.dtype)}")
        if x.dtype in (ms.float32, ms.float16) or out is not None:
            return original(input, other) if out is None else original(input, other, out=out)
        if x.shape[0] != y.shape[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{x.shape[0]}] and src [{y.shape[0]}] "
                               "to have the same number of elements, but got "
                               f"{x.shape[0]} and {y.shape[0]} elements respectively")
        return cast_to_adapter_tensor(ms.ops.tensor_dot(x, y, 1))
    return dot


_OPERATORS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__",
              "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__")
_METHODS = ("add", "sub", "mul", "div", "true_divide", "rsub", "pow", "fmod", "remainder")
_WIDE = ()  # float64 and complex128 as MindSpore and MindTorch name them, set by apply()
_WIDE_IDS = frozenset()  # their ids: a dtype == test costs ~1 us, an id lookup ~0.05 us
_NARROW_IDS = frozenset()  # ids of the other dtype objects of MindSpore and MindTorch


def _is_wide_python(dtype) -> bool:
    """Whether ``dtype`` is float64 or complex128 (a ``constexpr``: folded at compile time inside graphs, where
    ``id`` is not available; 0.26 us in PyNative). Known dtype objects are looked up by id; others (the copies a
    graph compiler passes) compared by value."""
    key = id(dtype)
    if key in _WIDE_IDS:
        return True
    if key in _NARROW_IDS:
        return False
    return dtype in _WIDE


_is_wide = None  # constexpr(_is_wide_python), set by apply()


def _wide_scalar(dtype, value):
    """``value`` as a 0-dim tensor of ``dtype`` when it is a Python float and ``dtype`` float64/complex128."""
    if isinstance(value, float) and _is_wide(dtype):
        return ms.Tensor(value, dtype)
    return value


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
def _binary_method(original):
    def method(self, other, *args, **kwargs):
        if isinstance(other, float) or kwargs:  # cheap test first: a tensor operand costs nothing more
            dtype = cast_to_ms_tensor(self).dtype  # graph-safe; MindTorch's Tensor.dtype costs 5 us more
            if _is_wide(dtype):
                other = _wide_scalar(dtype, other)
                if "alpha" in kwargs:
                    kwargs["alpha"] = _wide_scalar(dtype, kwargs["alpha"])
        return original(self, other, *args, **kwargs)
    # not functools.wraps: MindSpore's graph compiler unwraps __wrapped__ (mindspore/_extends/parse/parser.py,
    # inspect.unwrap) and would compile the original
    method.__name__ = method.__qualname__ = original.__name__
    method.__doc__ = original.__doc__
    return method


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
def _binary_function(original):
    def function(input, other, *args, **kwargs):  # noqa: A002 (PyTorch's name)
        if isinstance(other, float) or kwargs:
            if isinstance(input, ms.Tensor):
                dtype = cast_to_ms_tensor(input).dtype
                if _is_wide(dtype):
                    other = _wide_scalar(dtype, other)
                    if "alpha" in kwargs:
                        kwargs["alpha"] = _wide_scalar(dtype, kwargs["alpha"])
        elif isinstance(input, float) and isinstance(other, ms.Tensor):
            input = _wide_scalar(cast_to_ms_tensor(other).dtype, input)  # noqa: A001
        return original(input, other, *args, **kwargs)
    function.__name__ = function.__qualname__ = original.__name__
    function.__doc__ = original.__doc__
    return function


def _name(dtype) -> str:
    from .inplace import _torch_name
    return _torch_name(dtype)


_torch_dot = None  # this module's torch.dot, set by apply() (Tensor.dot calls it)


def dot_method(self, other):
    """PyTorch's ``Tensor.dot`` (patches/float64_precision.py)."""
    return _torch_dot(self, other)


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, _get_reduce_string, _torch_dot, _has_zero
    import mindspore
    import mindtorch.torch.nn.functional as F
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter, cast_to_ms_tensor as to_ms
    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    from adapter import backend
    _get_reduce_string = backend.internal("get_reduce_string")
    if _has_zero is None:
        from mindspore.ops.primitive import constexpr as _constexpr
        _has_zero = _constexpr(_has_zero_python)
    patch_attr(F, "mse_loss", _float64_loss(get_original(F, "mse_loss"), _square))
    patch_attr(F, "l1_loss", _float64_loss(get_original(F, "l1_loss"), _abs))

    import mindtorch.torch as torch
    from mindtorch.torch.tensor import Tensor
    _torch_dot = _dot(get_original(torch, "dot"))  # MindTorch's Tensor.dot is the same code as its torch.dot
    patch_attr(torch, "dot", _torch_dot)
    patch_attr(Tensor, "dot", dot_method)

    global _WIDE, _WIDE_IDS, _NARROW_IDS, _is_wide
    from mindspore.ops.primitive import constexpr
    from mindtorch.torch.nn.parameter import Parameter
    _is_wide = constexpr(_is_wide_python)
    _WIDE = (mindspore.float64, mindspore.complex128, torch.float64, torch.complex128)
    _WIDE_IDS = frozenset(id(d) for d in _WIDE)
    from mindspore.common import dtype as ms_dtypes
    from mindtorch.torch.common import dtype as torch_dtypes
    _NARROW_IDS = frozenset(id(v) for module in (ms_dtypes, torch_dtypes) for v in vars(module).values()
                            if isinstance(v, mindspore.dtype.Type) and id(v) not in _WIDE_IDS)

    for name in _OPERATORS + _METHODS:
        if name not in vars(Tensor) and not is_patched(Tensor, name):  # MindTorch's Tensor's own only
            continue
        original = get_original(Tensor, name)
        method = _binary_method(original)
        patch_attr(Tensor, name, method)
        # MindTorch's Parameter holds copies of some of its Tensor's methods (_init_parameter_api); the others get
        # these wrappers from patches/parameter_methods.py, which runs later
        if Parameter.__dict__.get(name) is original:
            patch_attr(Parameter, name, method)
    for name in _METHODS:
        original = get_original(torch, name, None)
        if original is not None:
            patch_attr(torch, name, _binary_function(original))


_PARAMETER_COPIES = tuple(f"torch.nn.Parameter.{name}" for name in (
    "__radd__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__",
    "__mod__", "__rmod__", "__rpow__"))
PATCH = Patch("float64_precision", "float64 stays float64 in mse_loss / l1_loss (nn.MSELoss, nn.L1Loss) and "
                                   "dot (MindSpore/MindTorch computed them in float32)", "post-import", apply,
              replaces=("torch.nn.functional.mse_loss", "torch.nn.functional.l1_loss", "torch.dot",
                        "torch.Tensor.dot")
              + tuple(f"torch.Tensor.{name}" for name in _OPERATORS + _METHODS if name != "rsub")
              + tuple(f"torch.{name}" for name in _METHODS if name != "rsub")  # MindTorch 0.4.0 has no rsub
              # the operators MindTorch's Parameter holds as copies of its Tensor's (_init_parameter_api)
              + _PARAMETER_COPIES,
              # MindSpore 2.10.0: MindSpore's Parameter has some of these itself, so MindTorch copies only the others
              optional=_PARAMETER_COPIES)
