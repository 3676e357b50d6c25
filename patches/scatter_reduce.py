"""``scatter_reduce`` and ``index_reduce`` (``Tensor`` methods and ``torch`` functions) as PyTorch, every ``reduce``.

MindTorch 0.4.0 scatters along ``dim=0`` with MindSpore's row-wise ``ScatterAdd``/``ScatterMax``/... (whose
``updates`` must be ``indices.shape + input.shape[1:]``), so every ``torch.scatter_reduce(x, 0, index, src, ...)``
with a 2-D index raised ``ValueError: For ScatterAdd, updates_shape = indices_shape + input_x_shape[1:]``; along
dim 1 ``include_self=False`` was ignored, silently (``x.scatter_reduce(1, idx, src, 'sum', include_self=False)`` of
a (3, 4) ``x``: the input's values included, ``[-1, -2, ...]`` where PyTorch's row is ``[4, 2, ...]``; ``'prod'``
and ``'amin'`` too); it slices ``src`` as if it were 2-D; ``reduce='mean'`` raised ``NotImplementedError``. ``index_reduce`` of a 0-d input
raised, and ``'mean'`` too (found by PyTorch's OpInfo samples, ``run.py conformance --opinfo``, issue 35). Scatter
reductions are how graph networks pool messages (``out.scatter_reduce(0, dst, msg, 'amax')``).

PyTorch 2.13's semantics: ``out[..., index[i], ...] <reduce>= src[i]`` along ``dim`` for every position ``i`` of
``index`` (``src`` may be larger than ``index``; its leading part is used), starting from ``input`` where
``include_self`` (else from the reduction's identity at every position that receives a value; positions that receive
none keep ``input``'s value); ``'mean'`` divides by the number of values reduced there (floor division for integer
dtypes). Here: ``'sum'``/``'mean'`` by ``scatter`` (clearing the receiving positions when ``include_self=False``) and
``scatter_add`` (``TensorScatterElements``, with its gradient), ``'mean'``'s count the same way on ones;
``'amax'``/``'amin'``/``'prod'`` by MindSpore's ``tensor_scatter_max``/``min``/``mul`` on the full N-d coordinates of
every ``index`` position (functional: the input is not modified), detached, plus terms that are zero in value and
carry PyTorch's gradient (:func:`_with_gradient`): MindSpore's own gradients of these ops are wrong where indices
repeat (``TensorScatterMul``'s ``src`` gradient was the output gradient alone, without the product of the other
elements; measured on ``index_reduce(..., 'prod')``). ``index_reduce(dim,
index, source, reduce)`` is ``scatter_reduce`` with ``index`` expanded along ``dim`` to ``source``'s shape (a 0-d
input as one element). Checks: PyTorch's errors for an unknown ``reduce``, ranks that differ, ``dim`` out of range.
PyNative and compiled (shapes are constants).

Replaces: ``torch.scatter_reduce``, ``torch.Tensor.scatter_reduce``, ``torch.index_reduce``,
``torch.Tensor.index_reduce``.
"""
from . import Patch, patch_attr

NAME = "scatter_reduce"
REDUCES = ("sum", "prod", "mean", "amax", "amin")
torch = ms = cast_to_ms_tensor = cast_to_adapter_tensor = None  # set by apply()


def _dim(name, ndim, dim):
    n = max(ndim, 1)
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _coordinates(index, d):
    """The N-d coordinates of every position of ``index`` with ``index``'s values along ``d``: ``index.shape + (N,)``."""
    shape = tuple(index.shape)
    parts = []
    for k in range(len(shape)):
        if k == d:
            parts.append(index)
        else:
            view = tuple(shape[k] if j == k else 1 for j in range(len(shape)))
            parts.append(torch.arange(shape[k], dtype=index.dtype).reshape(view).expand(shape))
    return torch.stack(parts, -1)


def _identity(input, reduce):
    if reduce == "prod":
        return 1
    if input.is_floating_point():
        return float("-inf") if reduce == "amax" else float("inf")
    info = torch.iinfo(input.dtype)
    return info.min if reduce == "amax" else info.max


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):  # noqa: A002 (PyTorch's names)
    """PyTorch's ``scatter_reduce`` (module docstring)."""
    if reduce not in REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d = _dim("scatter_reduce", input.ndim, dim)
    if index.ndim != input.ndim and not (index.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src.ndim != index.ndim and not (index.ndim <= 1 and src.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if input.ndim == 0:
        result = scatter_reduce(input.reshape((1,)), 0, index.reshape((-1,)), src.reshape((-1,)), reduce,
                                include_self=include_self).reshape(())
        return result if out is None else out.copy_(result)
    if index.ndim == 0:
        index, src = index.reshape((1,)), src.reshape((-1,))
    if 0 in tuple(index.shape):
        result = input.clone()
        return result if out is None else out.copy_(result)
    if tuple(src.shape) != tuple(index.shape):
        src = src[tuple(slice(0, s) for s in index.shape)]
    if reduce in ("sum", "mean"):
        base = input if include_self else input.scatter(d, index, 0)
        result = base.scatter_add(d, index, src)
        if reduce == "mean":
            ones = torch.ones_like(input)
            count = (ones if include_self else ones.scatter(d, index, 0)).scatter_add(d, index, torch.ones_like(src))
            count = count.clamp(min=1)
            if input.is_floating_point() or input.is_complex():
                result = result / count
            else:
                result = torch.div(result, count, rounding_mode="floor").to(input.dtype)
    else:
        base = input if include_self else input.scatter(d, index, _identity(input, reduce))
        scatter = {"amax": ms.ops.tensor_scatter_max, "amin": ms.ops.tensor_scatter_min,
                   "prod": ms.ops.tensor_scatter_mul}[reduce]
        coordinates = cast_to_ms_tensor(_coordinates(index, d))
        result = cast_to_adapter_tensor(scatter(cast_to_ms_tensor(base), coordinates, cast_to_ms_tensor(src)))
        if result.is_floating_point():
            result = _with_gradient(reduce, result.detach(), base, d, index, src, scatter, coordinates)
    return result if out is None else out.copy_(result)


def _with_gradient(reduce, value, base, d, index, src, scatter, coordinates):
    """``value`` (the reduction, detached) plus terms that are zero in value and carry PyTorch's gradient to ``base``
    and ``src``: for ``'amax'``/``'amin'`` the output gradient shared evenly among the elements equal to the result
    (``base``'s and ``src``'s), for ``'prod'`` the product of the other elements (the result over the element where
    it is not 0; where one element is 0, that element gets the product of the others and the rest 0; where more are 0,
    all 0)."""
    at_src = value.gather(d, index)
    if reduce == "prod":
        base_zero, src_zero = base == 0, src == 0
        zeros = base_zero.to(value.dtype).scatter_add(d, index, src_zero.to(value.dtype))
        others = cast_to_adapter_tensor(scatter(cast_to_ms_tensor(torch.where(base_zero, 1.0, base)), coordinates,
                                                cast_to_ms_tensor(torch.where(src_zero, 1.0, src)))).detach()
        zeros_src, others_src = zeros.gather(d, index), others.gather(d, index)
        base_weight = torch.where(zeros == 0, value / torch.where(base_zero, 1.0, base),
                                  torch.where((zeros == 1) & base_zero, others, 0.0))
        src_weight = torch.where(zeros_src == 0, at_src / torch.where(src_zero, 1.0, src),
                                 torch.where((zeros_src == 1) & src_zero, others_src, 0.0))
    else:
        base_hit, src_hit = (base == value).to(value.dtype), (src == at_src).to(value.dtype)
        count = base_hit.scatter_add(d, index, src_hit).clamp(min=1)
        base_weight, src_weight = base_hit / count, src_hit / count.gather(d, index)
    base_weight, src_weight = base_weight.detach(), src_weight.detach()
    # where(): base holds +-inf at the positions include_self=False cleared, and inf - inf is NaN
    base_term = torch.where(base_weight != 0, (base - base.detach()) * base_weight, 0.0)
    return value + base_term + torch.zeros_like(value).scatter_add(d, index, (src - src.detach()) * src_weight)


def tensor_scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
    """``Tensor.scatter_reduce``: :func:`scatter_reduce` of ``self``."""
    return scatter_reduce(self, dim, index, src, reduce, include_self=include_self)


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):  # noqa: A002
    """PyTorch's ``index_reduce``: :func:`scatter_reduce` with ``index`` expanded along ``dim`` (module docstring)."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if input.ndim == 0:
        _dim("index_reduce", 0, dim)
        result = index_reduce(input.reshape((1,)), 0, index.reshape((-1,)), source.reshape((-1,)), reduce,
                              include_self=include_self).reshape(())
        return result if out is None else out.copy_(result)
    d = _dim("index_reduce", input.ndim, dim)
    if source.ndim == 0:
        source = source.reshape((1,))
    if index.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if source.ndim != input.ndim:
        raise IndexError("index_reduce_(): Source and self must have the same number of dimensions")
    view = tuple(index.numel() if k == d else 1 for k in range(source.ndim))
    full = index.reshape(view).expand(tuple(source.shape))
    return scatter_reduce(input, d, full, source, reduce, include_self=include_self, out=out)


def tensor_index_reduce(self, dim, index, source, reduce, *, include_self=True):
    """``Tensor.index_reduce``: :func:`index_reduce` of ``self``."""
    return index_reduce(self, dim, index, source, reduce, include_self=include_self)


def apply() -> None:
    global torch, ms, cast_to_ms_tensor, cast_to_adapter_tensor
    import mindspore
    import mindtorch.torch
    from mindtorch.torch.tensor import Tensor, cast_to_adapter_tensor as to_adapter, cast_to_ms_tensor as to_ms
    ms, torch, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, mindtorch.torch, to_ms, to_adapter
    patch_attr(torch, "scatter_reduce", scatter_reduce)
    patch_attr(Tensor, "scatter_reduce", tensor_scatter_reduce)
    patch_attr(torch, "index_reduce", index_reduce)
    patch_attr(Tensor, "index_reduce", tensor_index_reduce)


PATCH = Patch(NAME, "scatter_reduce / index_reduce as PyTorch for every reduce (dim=0 raised, 'mean' was "
                    "missing, include_self=False was ignored along dim 1, silently)", "post-import", apply,
              replaces=("torch.scatter_reduce", "torch.Tensor.scatter_reduce", "torch.index_reduce",
                        "torch.Tensor.index_reduce"))
