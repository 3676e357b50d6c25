"""Dimension-wise ops on a 0-d tensor, as PyTorch: the 0-d input taken as one element along dim 0 (or -1).

PyTorch treats a 0-d tensor as having one dimension of size 1 for the ops that take a ``dim``: ``torch.cumsum(x, 0)``
of a 0-d ``x`` is ``x``, ``torch.cummax(x, 0)`` is ``(x, 0)``, ``torch.index_select(x, 0, torch.tensor([0]))`` is
``x``, ``torch.nonzero(x)`` has shape ``(1, 0)`` (``(0, 0)`` for a zero), and ``dim`` outside ``[-1, 0]`` raises
``IndexError``. MindSpore's kernels reject rank 0, so MindTorch 0.4.0 raised ``ValueError`` (``For primitive[CumSum],
the rank of 'x' must be greater than 0``; ``Gather``'s ``batch_dims``, ``IndexAdd``'s ``axis``, ``Cummax``'s axis,
``CumulativeLogsumexp``'s rank) or ``RuntimeError: Launch kernel failed, name: NonZero`` (found by PyTorch's OpInfo
samples, ``run.py conformance --opinfo``, issue 35). A loss or a running statistic reduced to a scalar, then
``cumsum``-ed or indexed along dim 0, hit this.

Replaces ``torch.X`` and ``torch.Tensor.X`` for X in :data:`OPS` (``cumsum``, ``logcumsumexp``, ``cummax``,
``cummin``, ``index_select``, ``index_add``, ``index_copy``, ``nonzero``), and ``torch.Tensor.unfold``: a 0-d input
(and a 0-d ``source``) goes through the function this patch replaced as shape ``(1,)`` along dim 0 and comes back
0-d (``unfold``: shape ``(size,)``); the gradient flows through the reshapes. Other inputs go to the replaced function unchanged. Plain functions (a constant rank test, then the
replaced function), so a compiled graph parses them as well. ``nonzero`` of a 0-d tensor reads its one value on the
host (the result's shape depends on it, as for every ``nonzero``). Must come after ``return_types`` (``cummax`` /
``cummin``'s named tuples) and ``cummax_grad`` (their gradient), which this patch wraps.
"""
from . import Patch, get_replaced, patch_attr

NAME = "zero_dim_ops"
OPS = ("cumsum", "logcumsumexp", "cummax", "cummin", "index_select", "index_add", "index_copy", "nonzero")

torch = None  # mindtorch.torch, set by apply() (an import inside a function does not compile in graph mode)
# _torch_X / _tensor_X: the torch.X / Tensor.X this patch replaced, for X in OPS, set by apply() (module globals: a
# compiled graph resolves them)
_torch_cumsum = _tensor_cumsum = None
_torch_logcumsumexp = _tensor_logcumsumexp = None
_torch_cummax = _tensor_cummax = None
_torch_cummin = _tensor_cummin = None
_torch_index_select = _tensor_index_select = None
_torch_index_add = _tensor_index_add = None
_torch_index_copy = _tensor_index_copy = None
_torch_nonzero = _tensor_nonzero = None
_tensor_unfold = None


def _check_dim(dim):
    if dim < -1 or dim > 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")


def _one(x):
    """A 0-d tensor as shape ``(1,)``."""
    return x.reshape((1,))


def _scalar(x):
    return x.reshape(())


def cumsum(input, dim, *, dtype=None, out=None):  # noqa: A002 (PyTorch's names)
    """``torch.cumsum``; a 0-d input as one element (module docstring)."""
    if input.ndim == 0 and out is None:
        _check_dim(dim)
        return _scalar(_torch_cumsum(_one(input), 0, dtype=dtype))
    if out is None:
        return _torch_cumsum(input, dim, dtype=dtype)
    return _torch_cumsum(input, dim, dtype=dtype, out=out)


def tensor_cumsum(self, dim, dtype=None):
    """``Tensor.cumsum``; a 0-d tensor as one element (module docstring)."""
    if self.ndim == 0:
        _check_dim(dim)
        return _scalar(_tensor_cumsum(_one(self), 0, dtype=dtype))
    return _tensor_cumsum(self, dim, dtype=dtype)


def logcumsumexp(input, dim, *, out=None):  # noqa: A002
    """``torch.logcumsumexp``; a 0-d input as one element (module docstring)."""
    if input.ndim == 0 and out is None:
        _check_dim(dim)
        return _scalar(_torch_logcumsumexp(_one(input), 0))
    if out is None:
        return _torch_logcumsumexp(input, dim)
    return _torch_logcumsumexp(input, dim, out=out)


def tensor_logcumsumexp(self, dim):
    """``Tensor.logcumsumexp``; a 0-d tensor as one element (module docstring)."""
    if self.ndim == 0:
        _check_dim(dim)
        return _scalar(_tensor_logcumsumexp(_one(self), 0))
    return _tensor_logcumsumexp(self, dim)


def _cum_extremum(original, input, dim, out):
    if input.ndim == 0 and out is None:
        _check_dim(dim)
        result = original(_one(input), 0)
        values, indices = _scalar(result[0]), _scalar(result[1])
        if hasattr(result, "_fields"):  # patches/return_types.py's named tuple
            return type(result)(values, indices)
        return values, indices
    if out is None:
        return original(input, dim)
    return original(input, dim, out=out)


def cummax(input, dim, *, out=None):  # noqa: A002
    """``torch.cummax``; a 0-d input as one element: ``(input, 0)`` (module docstring)."""
    return _cum_extremum(_torch_cummax, input, dim, out)


def cummin(input, dim, *, out=None):  # noqa: A002
    """``torch.cummin``; a 0-d input as one element: ``(input, 0)`` (module docstring)."""
    return _cum_extremum(_torch_cummin, input, dim, out)


def tensor_cummax(self, dim):
    """``Tensor.cummax``; a 0-d tensor as one element (module docstring)."""
    return _cum_extremum(_tensor_cummax, self, dim, None)


def tensor_cummin(self, dim):
    """``Tensor.cummin``; a 0-d tensor as one element (module docstring)."""
    return _cum_extremum(_tensor_cummin, self, dim, None)


def _index_one(index):
    """The index of a 0-d input, as shape ``(1,)``; PyTorch's error for more than one value."""
    if index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")
    return index.reshape((1,))


def index_select(input, dim, index, *, out=None):  # noqa: A002
    """``torch.index_select``; a 0-d input as one element (module docstring)."""
    if input.ndim == 0 and out is None:
        _check_dim(dim)
        return _scalar(_torch_index_select(_one(input), 0, _index_one(index)))
    if out is None:
        return _torch_index_select(input, dim, index)
    return _torch_index_select(input, dim, index, out=out)


def tensor_index_select(self, dim, index):
    """``Tensor.index_select``; a 0-d tensor as one element (module docstring)."""
    if self.ndim == 0:
        _check_dim(dim)
        return _scalar(_tensor_index_select(_one(self), 0, _index_one(index)))
    return _tensor_index_select(self, dim, index)


def _source_one(source):
    return _one(source) if source.ndim == 0 else source


def index_add(input, dim, index, source, *, alpha=1, out=None):  # noqa: A002
    """``torch.index_add``; a 0-d input (and source) as one element (module docstring)."""
    if input.ndim == 0 and out is None:
        _check_dim(dim)
        return _scalar(_torch_index_add(_one(input), 0, index.reshape((-1,)), _source_one(source),
                                                       alpha=alpha))
    if out is None:
        return _torch_index_add(input, dim, index, source, alpha=alpha)
    return _torch_index_add(input, dim, index, source, alpha=alpha, out=out)


def tensor_index_add(self, dim, index, source, *, alpha=1):
    """``Tensor.index_add``; a 0-d tensor (and source) as one element (module docstring)."""
    if self.ndim == 0:
        _check_dim(dim)
        return _scalar(_tensor_index_add(_one(self), 0, index.reshape((-1,)), _source_one(source),
                                                        alpha=alpha))
    return _tensor_index_add(self, dim, index, source, alpha=alpha)


def index_copy(input, dim, index, source, *, out=None):  # noqa: A002
    """``torch.index_copy``; a 0-d input (and source) as one element (module docstring)."""
    if input.ndim == 0 and out is None:
        _check_dim(dim)
        return _scalar(_torch_index_copy(_one(input), 0, index.reshape((-1,)), _source_one(source)))
    if out is None:
        return _torch_index_copy(input, dim, index, source)
    return _torch_index_copy(input, dim, index, source, out=out)


def tensor_index_copy(self, dim, index, source):
    """``Tensor.index_copy``; a 0-d tensor (and source) as one element (module docstring)."""
    if self.ndim == 0:
        _check_dim(dim)
        return _scalar(_tensor_index_copy(_one(self), 0, index.reshape((-1,)), _source_one(source)))
    return _tensor_index_copy(self, dim, index, source)


def _nonzero_scalar(input, as_tuple):
    count = 1 if bool(input != 0) else 0
    if as_tuple:
        return (torch.zeros((count,), dtype=torch.int64),)
    return torch.zeros((count, 0), dtype=torch.int64)


def nonzero(input, *, out=None, as_tuple=False):  # noqa: A002
    """``torch.nonzero``; a 0-d input: shape ``(1, 0)`` or ``(0, 0)``, or a tuple of one index (module docstring)."""
    if input.ndim == 0 and out is None:
        return _nonzero_scalar(input, as_tuple)
    if out is None:
        return _torch_nonzero(input, as_tuple=as_tuple)
    return _torch_nonzero(input, out=out, as_tuple=as_tuple)


def tensor_nonzero(self, *, as_tuple=False):
    """``Tensor.nonzero``; a 0-d tensor as in :func:`nonzero`."""
    if self.ndim == 0:
        return _nonzero_scalar(self, as_tuple)
    if as_tuple:
        return _torch_nonzero(self, as_tuple=True)
    return _tensor_nonzero(self)


def tensor_unfold(self, dimension, size, step):
    """``Tensor.unfold``; a 0-d tensor as one element: shape ``(size,)`` for ``size`` 0 or 1 (PyTorch's errors for a
    larger size or a step below 1)."""
    if self.ndim == 0:
        _check_dim(dimension)
        if size > 1:
            raise RuntimeError(f"maximum size for tensor at dimension 0 is 1 but size is {size}")
        if step <= 0:
            raise RuntimeError(f"step is {step} but must be > 0")
        return _one(self) if size == 1 else torch.zeros((0,), dtype=self.dtype)
    return _tensor_unfold(self, dimension, size, step)


_FUNCTIONS = {"cumsum": (cumsum, tensor_cumsum), "logcumsumexp": (logcumsumexp, tensor_logcumsumexp),
              "cummax": (cummax, tensor_cummax), "cummin": (cummin, tensor_cummin),
              "index_select": (index_select, tensor_index_select), "index_add": (index_add, tensor_index_add),
              "index_copy": (index_copy, tensor_index_copy), "nonzero": (nonzero, tensor_nonzero)}


def apply() -> None:
    global torch
    import mindtorch.torch
    torch = mindtorch.torch
    from mindtorch.torch.tensor import Tensor
    globals()["_tensor_unfold"] = get_replaced(Tensor, "unfold", NAME)
    patch_attr(Tensor, "unfold", tensor_unfold)
    for op in OPS:
        function, method = _FUNCTIONS[op]
        for key, owner, replacement in (("torch", torch, function), ("Tensor", Tensor, method)):
            globals()[f"_{key.lower()}_{op}"] = get_replaced(owner, op, NAME)
            patch_attr(owner, op, replacement)


PATCH = Patch(NAME, "cumsum/logcumsumexp/cummax/cummin/index_select/index_add/index_copy/nonzero/unfold of a 0-d "
                    "tensor as PyTorch (one element along dim 0); MindSpore's kernels raised on rank 0",
              "post-import", apply,
              replaces=tuple(f"{owner}.{op}" for owner in ("torch", "torch.Tensor") for op in OPS)
              + ("torch.Tensor.unfold",),
              after=("return_types", "cummax_grad"))
