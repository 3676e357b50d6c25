"""Result dtypes and dtype errors of ``torch`` functions as PyTorch 2.13.

Replaces (functions ``torch.X`` and, where MindTorch's method differs too, ``Tensor.X``):

* ``count_nonzero``: int64 (MindSpore's kernel gives int32; PyTorch's counts are int64, and ``torch.cat`` with other
  indices or a comparison with a LongTensor then differed). ``argmin``/``topk`` indices: ``patches/index_dtype.py``;
* ``torch.exp`` of float16: float16 (MindTorch computed in float32 and returned float32);
* ``torch.log`` / ``torch.sigmoid`` of integer or bool tensors: float32, PyTorch's default floating type
  (MindSpore's CPU kernels raised ``Select CPU operator[Log] fail``);
* ``torch.logsumexp`` / ``Tensor.logsumexp``: ATen's formula ``log(sum(exp(x - m))) + m`` with ``m = amax(x)`` set to 0
  where it is infinite, in the input's floating dtype: a row of -inf gives -inf (MindSpore: NaN), float64 stays
  float64 (MindTorch cast every input to float32), integers give float32;
* ``torch.div(..., rounding_mode='trunc')`` on integers: C-style truncation by sign and floor division (MindSpore's
  ``Trunc`` has no integer kernel: TypeError);
* ``torch.where(cond, x, y)`` with Python numbers: PyTorch's result type (two ints int64, floats float32, a number
  with a tensor the tensor's dtype unless a float meets an integer tensor: float32); in a compiled graph MindSpore
  made ``torch.where(out > 0.5, 1, 0)`` (siamese_network's predictions) int32;
* ``mean`` / ``std`` / ``var`` of integer or bool tensors (without ``dtype=``) raise PyTorch's ``RuntimeError``
  (MindTorch returned a float: a script that works here failed under PyTorch);
* ``randn_like`` of an integer tensor without a floating ``dtype=`` raises PyTorch's ``NotImplementedError``.

Replaces: ``torch.X`` and ``torch.functional.X`` for ``count_nonzero``, ``exp``, ``log``, ``sigmoid``, ``logsumexp``,
``div``, ``divide``, ``mean``, ``std``, ``var``, ``where``; ``torch.Tensor.X`` for ``count_nonzero``, ``log``,
``sigmoid``, ``logsumexp``, ``mean``, ``std``, ``var``; ``torch.randn_like``.
"""
import functools

from . import Patch, patch_attr
from ._wrap_once import wrap_attr

torch = None  # mindtorch.torch, set by apply() (an import inside a function does not compile in graph mode)
graph_mode_condition = _stop_gradient = None  # MindTorch's and MindSpore's, set by apply() (read by compiled code)


def _long_indices(original, pick):
    def wrapper(*args, **kwargs):
        out = original(*args, **kwargs)
        return pick(out)
    # not functools.wraps: MindSpore's graph parser compiles inspect.unwrap(fn), which would be MindTorch's
    # int32-returning original in compiled code (measured: count_nonzero gave int32 in a graph)
    wrapper.__name__ = wrapper.__qualname__ = getattr(original, "__name__", "wrapper")
    wrapper.__doc__ = original.__doc__
    return wrapper


def _long(out):
    return out.long()


def _to_float(x):
    return x if x.is_floating_point() else x.to(torch.float32)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """``torch.logsumexp(input, dim, keepdim=False)``: ATen's ``logsumexp`` (module docstring); float32 for integer
    inputs. Raises as ``amax`` for a bad ``dim``."""
    x = _to_float(input)
    if 0 in tuple(x.shape):
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        shape = [s for i, s in enumerate(x.shape) if keepdim or (i not in [d % len(x.shape) for d in dims])]
        if keepdim:
            shape = [1 if i in [d % len(x.shape) for d in dims] else s for i, s in enumerate(x.shape)]
        result = torch.full(tuple(shape), float("-inf"), dtype=x.dtype)
    else:
        m = torch.amax(_detached(x), dim, True)
        m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
        m_out = torch.amax(_detached(x), dim, keepdim)
        m_out = torch.where(torch.isinf(m_out), torch.zeros_like(m_out), m_out)
        result = torch.log(torch.sum(torch.exp(x - m), dim, keepdim=keepdim)) + m_out
    if out is not None:
        return out.copy_(result)
    return result


def _detached(x):
    """``x.detach()``; in compiled code (where tensors are MindSpore's, which have no ``detach`` there: "cannot get
    attributes detach") MindSpore's ``stop_gradient``, the same values and no gradient."""
    if graph_mode_condition():
        return _stop_gradient(x)
    return x.detach()


def logsumexp_method(self, dim, keepdim=False):
    """``Tensor.logsumexp``: :func:`logsumexp`."""
    return logsumexp(self, dim, keepdim)


def _float_input(original):
    @functools.wraps(original)
    def wrapper(input, *args, **kwargs):
        if hasattr(input, "is_floating_point") and not input.is_floating_point():
            input = _to_float(input)
        return original(input, *args, **kwargs)
    return wrapper


def _exp(original):
    @functools.wraps(original)
    def exp(input, *, out=None):
        result = original(input)
        if input.dtype == torch.float16 or input.dtype == torch.bfloat16:
            result = result.to(input.dtype)
        return result if out is None else out.copy_(result)
    return exp


def _div(original):
    @functools.wraps(original)
    def div(input, other, *, rounding_mode=None, out=None):
        if rounding_mode == "trunc" and isinstance(input, torch.Tensor) and not input.is_floating_point() and \
                not (isinstance(other, float) or (isinstance(other, torch.Tensor) and other.is_floating_point())):
            other_t = other if isinstance(other, torch.Tensor) else torch.tensor(other, dtype=input.dtype)
            q = torch.div(torch.abs(input), torch.abs(other_t), rounding_mode="floor")
            negative = (input < 0) != (other_t < 0)
            result = torch.where(negative, -q, q)
            return result if out is None else out.copy_(result)
        if out is not None:
            return original(input, other, rounding_mode=rounding_mode, out=out)
        return original(input, other, rounding_mode=rounding_mode)
    return div


def _floating_only(name, original, check_dtype_kw=True):
    @functools.wraps(original)
    def wrapper(input, *args, **kwargs):
        if hasattr(input, "is_floating_point") and not input.is_floating_point() and \
                not input.is_complex() and (not check_dtype_kw or kwargs.get("dtype") is None):
            if name == "mean":
                raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating "
                                   f"point or complex dtype. Got: {_torch_name(input.dtype)}")
            raise RuntimeError("std and var only support floating point and complex dtypes")
        return original(input, *args, **kwargs)
    return wrapper


def _torch_name(dtype) -> str:
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(str(dtype).replace("torch.", ""), str(dtype))


def _number_dtype(value, other):
    if isinstance(other, torch.Tensor):
        if isinstance(value, float) and not other.is_floating_point():
            return torch.float32
        if isinstance(value, bool) or other.dtype != torch.bool:
            return other.dtype
    if isinstance(value, bool):
        return torch.bool
    return torch.int64 if isinstance(value, int) else torch.float32


def _where(original):
    @functools.wraps(original)
    def where(condition, input=None, other=None, *, out=None):
        if input is None and other is None:
            return original(condition)
        if not isinstance(input, torch.Tensor) and not isinstance(other, torch.Tensor):
            # two numbers: in a compiled graph MindSpore folds the 0-d tensors back to int32 constants
            result = original(condition, torch.full((), input, dtype=_number_dtype(input, other)),
                              torch.full((), other, dtype=_number_dtype(other, input)))
            result = result.to(_number_dtype(input, other) if type(input) is type(other) else torch.float32)
            return result if out is None else out.copy_(result)
        if not isinstance(input, torch.Tensor):
            input = torch.full((), input, dtype=_number_dtype(input, other))
        if not isinstance(other, torch.Tensor):
            other = torch.full((), other, dtype=_number_dtype(other, input))
        result = original(condition, input, other)
        return result if out is None else out.copy_(result)
    return where


def _randn_like(original):
    @functools.wraps(original)
    def randn_like(input, *args, **kwargs):
        dtype = kwargs.get("dtype")
        if dtype is None and not input.is_floating_point():
            raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{_torch_name(input.dtype)}'")
        return original(input, *args, **kwargs)
    return randn_like


def _mean_std_var(name):
    return lambda original: _floating_only(name, original)


# name -> (wrapper factory or replacement function, owners)
_TARGETS = {
    "count_nonzero": (lambda original: _long_indices(original, _long), ("torch", "functional", "Tensor")),
    "exp": (_exp, ("torch", "functional")),
    "log": (_float_input, ("torch", "functional", "Tensor")),
    "sigmoid": (_float_input, ("torch", "functional", "Tensor")),
    "div": (_div, ("torch", "functional")),
    "divide": (_div, ("torch", "functional")),
    "mean": (_mean_std_var("mean"), ("torch", "functional", "Tensor")),
    "std": (_mean_std_var("std"), ("torch", "functional", "Tensor")),
    "var": (_mean_std_var("var"), ("torch", "functional", "Tensor")),
    "randn_like": (_randn_like, ("torch",)),  # the compiled step swaps functional.randn_like
    "where": (_where, ("torch", "functional")),
}


def apply() -> None:
    global torch, graph_mode_condition, _stop_gradient
    import mindspore
    import mindtorch.torch
    from mindtorch.utils import graph_mode_condition
    torch = mindtorch.torch
    _stop_gradient = mindspore.ops.stop_gradient
    import mindtorch.torch.functional as functional
    from mindtorch.torch.tensor import Tensor
    owners = {"torch": torch, "functional": functional, "Tensor": Tensor}
    for name, (make, where) in _TARGETS.items():
        for key in where:
            owner = owners[key]
            if hasattr(owner, name):  # empty_reductions wrapped mean/std/var already: stacked
                wrap_attr(owner, name, NAME, make)
    patch_attr(torch, "logsumexp", logsumexp)
    patch_attr(functional, "logsumexp", logsumexp)
    patch_attr(Tensor, "logsumexp", logsumexp_method)


NAME = "result_dtypes"
_PATHS = {"torch": "torch.", "functional": "torch.functional.", "Tensor": "torch.Tensor."}
PATCH = Patch(NAME, "int64 count_nonzero, float16 exp, float results of "
                    "log/sigmoid on integers, logsumexp in the input's dtype with -inf rows, integer "
                    "trunc division, PyTorch's dtype errors for mean/std/var/randn_like", "post-import", apply,
              replaces=tuple(_PATHS[key] + name for name, (_, where) in _TARGETS.items() for key in where)
              + ("torch.logsumexp", "torch.functional.logsumexp", "torch.Tensor.logsumexp"),
              after=("float64_precision", "random_draws", "empty_reductions"))
