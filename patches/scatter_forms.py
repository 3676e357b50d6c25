"""``scatter`` / ``scatter_`` in PyTorch 2.13's call forms: ``value=`` and ``src=`` by keyword, ``src`` larger than
``index``.

MindTorch 0.4.0's ``Tensor.scatter(self, dim, index, src, reduce=None)`` names its third argument ``src`` only, so
PyTorch's value overload by keyword, ``one_hot.scatter_(dim=1, index=target.unsqueeze(1), value=0.9)`` (the usual
label-smoothing target), raised ``TypeError: Tensor.scatter_() got an unexpected keyword argument 'value'``; and
``torch.scatter(input, dim, index, src)`` took neither ``value=`` nor ``reduce=``. A ``src`` tensor larger than
``index`` (PyTorch uses its leading part: ``out[index[i][j]][j] = src[i][j]`` along dim 0, only ``i, j`` inside
``index``) raised ``NotImplementedError: For scatter, not support src.shape != index.shape yet``.

Replaces ``torch.Tensor.scatter``, ``torch.Tensor.scatter_`` and ``torch.scatter``: ``(dim, index, src=None,
reduce=None, *, value=None)``; exactly one of ``src`` (a tensor or a number, positional or keyword) and ``value`` (a
number) is given, else PyTorch's ``TypeError``; a tensor ``src`` is cut to ``index``'s shape (``narrow`` along each
dimension where it is larger); then the function this patch replaced (MindSpore's ``TensorScatterElements``, its
``reduce`` rules and gradient). Plain functions: a compiled step parses them too.
"""
from . import Patch, get_replaced, patch_attr

NAME = "scatter_forms"
torch = None  # mindtorch.torch, set by apply() (an import inside a function does not compile in graph mode)
_tensor_scatter = _tensor_scatter_ = None  # the Tensor methods this patch replaced, set by apply()


def _source(name, index, src, value):
    """The ``src`` to pass on: ``value`` when given by keyword, a tensor ``src`` cut to ``index``'s shape.

    Raises:
        TypeError: neither or both of ``src`` and ``value`` given (PyTorch: no overload matches).
    """
    if value is not None:
        if src is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments: got both src and value")
        return value
    if src is None:
        raise TypeError(f"{name}() received an invalid combination of arguments: expected src (Tensor) or value "
                        f"(Number) after index")
    if isinstance(src, (int, float, bool)):
        return src
    if src.ndim == index.ndim:
        for d in range(index.ndim):
            if src.shape[d] > index.shape[d]:
                src = src.narrow(d, 0, index.shape[d])
    return src


def tensor_scatter(self, dim, index, src=None, reduce=None, *, value=None):
    """``Tensor.scatter(dim, index, src | value=, reduce=None)``: a new tensor (``self``'s shape and dtype) with the
    values of ``src`` (or ``value``) written at ``index`` along ``dim`` (module docstring).

    Raises:
        TypeError: neither or both of ``src`` and ``value``.
    """
    return _tensor_scatter(self, dim, index, _source("scatter", index, src, value), reduce)


def tensor_scatter_(self, dim, index, src=None, reduce=None, *, value=None):
    """``Tensor.scatter_``: :func:`tensor_scatter` written into ``self``; returns ``self``."""
    return _tensor_scatter_(self, dim, index, _source("scatter_", index, src, value), reduce)


def scatter(input, dim, index, src=None, reduce=None, *, value=None):  # noqa: A002 (PyTorch's names)
    """``torch.scatter``: :func:`tensor_scatter` of ``input``."""
    return _tensor_scatter(input, dim, index, _source("scatter", index, src, value), reduce)


def apply() -> None:
    global torch, _tensor_scatter, _tensor_scatter_
    import mindtorch.torch
    from mindtorch.torch.tensor import Tensor
    torch = mindtorch.torch
    _tensor_scatter = get_replaced(Tensor, "scatter", NAME)
    _tensor_scatter_ = get_replaced(Tensor, "scatter_", NAME)
    patch_attr(Tensor, "scatter", tensor_scatter)
    patch_attr(Tensor, "scatter_", tensor_scatter_)
    patch_attr(torch, "scatter", scatter)


PATCH = Patch(NAME, "scatter/scatter_ take value= and src= by keyword (label smoothing's "
                    "scatter_(dim=1, index=..., value=0.9) raised TypeError) and a src larger than index",
              "post-import", apply,
              replaces=("torch.Tensor.scatter", "torch.Tensor.scatter_", "torch.scatter"))
