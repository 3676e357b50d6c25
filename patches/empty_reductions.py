"""Reductions and matrix products of tensors with no elements, as PyTorch (MindSpore's CPU kernels leave the output
uninitialised there).

Replaces ``torch.sum/mean/prod/std/var/norm/logsumexp/amax/amin/argmax/argmin/max/min/mm/bmm/matmul`` and the
``Tensor`` methods of the same names, for inputs with a zero-size dimension only (others go to MindTorch unchanged).
MindSpore's ``ReduceSum``/``ReduceMean``/``MatMul``/``BatchMatMul`` CPU kernels return whatever memory they were given
when the reduced or inner dimension is empty: ``torch.randn(0, 3).sum()`` gave NaN or 0.401 from run to run,
``torch.mm(torch.randn(3, 0), torch.randn(0, 2))`` values up to 31.7 (PyTorch: 0), ``var(0)`` of a (0, 3) tensor a
0-d NaN (PyTorch: three NaNs), ``amax()`` NaN (PyTorch raises). An empty last batch, a class with no samples in a
masked mean, ``x[mask].sum()`` with an all-false mask hit this silently.

PyTorch 2.13's results (ATen's ``ReduceOps`` identities): ``sum`` 0 (int64 for integer/bool inputs, ``dtype=``
honoured), ``mean``/``std``/``var`` NaN, ``prod`` 1, ``norm`` 0, ``logsumexp`` -inf, products zeros of the result
shape; ``max``/``min``/``amax``/``amin``/``argmax``/``argmin`` over a zero-size dimension raise PyTorch's
``IndexError``/``RuntimeError``, and over non-empty dimensions return empty values (and int64 indices). The results
are constants of the input's shape (shapes are static in a compiled graph too), so the input's gradient is zeros
of its (empty) shape, as PyTorch's.

Replaces: ``torch.X``, ``torch.functional.X`` and ``torch.Tensor.X`` for X in :data:`REDUCTIONS`, :data:`EXTREMA`,
:data:`PRODUCTS`.
"""
import builtins
import functools

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
        if kwargs.get("out") is not None or not (_empty(input) or _empty(other)):
            return original(input, other, *args, **kwargs)
        a, b = tuple(input.shape), tuple(other.shape)
        if name == "mm" and len(a) == 2 and len(b) == 2 and a[1] == b[0]:
            return torch.zeros((a[0], b[1]), dtype=input.dtype)
        if name == "bmm" and len(a) == 3 and len(b) == 3 and a[0] == b[0] and a[2] == b[1]:
            return torch.zeros((a[0], a[1], b[2]), dtype=input.dtype)
        if name == "matmul" and len(a) >= 1 and len(b) >= 1 and a[-1] == b[-2 if len(b) > 1 else 0]:
            if len(a) == 2 and len(b) == 2:
                return torch.zeros((a[0], b[1]), dtype=input.dtype)
            if len(a) == 1 and len(b) == 1:
                return torch.zeros((), dtype=input.dtype)
        return original(input, other, *args, **kwargs)
    return wrapper


REDUCTIONS = ("sum", "mean", "prod", "std", "var", "norm", "logsumexp")
EXTREMA = ("max", "min", "amax", "amin", "argmax", "argmin")
PRODUCTS = ("mm", "bmm", "matmul")
_OWNERS = ("torch", "torch.functional", "torch.Tensor")  # MindTorch 0.4.0 has every name on each


def apply() -> None:
    global torch
    import mindtorch.torch
    torch = mindtorch.torch
    import mindtorch.torch.functional as functional
    from mindtorch.torch.tensor import Tensor
    for names, make in ((REDUCTIONS, _reduction), (EXTREMA, _extremum_wrapper), (PRODUCTS, _product)):
        for name in names:
            for owner in (torch, functional, Tensor):
                if hasattr(owner, name):  # result_dtypes/index_dtype/median may wrap the same names: stacked
                    wrap_attr(owner, name, NAME, functools.partial(make, name))


NAME = "empty_reductions"
PATCH = Patch(NAME, "sum/mean/prod/std/var/norm/logsumexp/max/min/argmax/mm/bmm/matmul of tensors "
                    "with no elements as PyTorch (MindSpore's CPU kernels returned uninitialised "
                    "memory: randn(0, 3).sum() was NaN or 0.401)", "post-import", apply,
              replaces=tuple(f"{owner}.{name}" for owner in _OWNERS for name in REDUCTIONS + EXTREMA + PRODUCTS))
