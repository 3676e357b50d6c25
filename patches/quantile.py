"""``torch.quantile`` / ``torch.nanquantile`` (and the ``Tensor`` methods) on CPU, as PyTorch.

MindTorch 0.4.0 hands ``quantile`` to MindSpore's ``Quantile`` kernel, which mindspore 2.10's CPU backend lacks
(``RuntimeError: Unsupported op [Quantile] on CPU``), and its methods take no ``dim=`` keyword (``TypeError:
Tensor.quantile() got an unexpected keyword argument 'dim'``): every call raised (found by PyTorch's OpInfo samples,
``run.py conformance --opinfo``, issue 35). Robust normalisation (``x.quantile(0.99)``) and percentile clipping call
it.

PyTorch 2.13's semantics (``quantile(input, q, dim=None, keepdim=False, *, interpolation='linear')``): ``dim=None``
reduces the flattened input; ``q`` a number or a 0-d/1-D float tensor in ``[0, 1]``; the sorted values along ``dim``
are read at rank ``q * (n - 1)`` (``n``: the number of values; ``nanquantile``: the number that are not NaN) with
``interpolation`` ``linear`` (between the two neighbours), ``lower``, ``higher``, ``nearest`` (half to even) or
``midpoint``; ``quantile`` of a slice holding a NaN is NaN, ``nanquantile`` of an all-NaN slice too. A 1-D ``q`` puts
its dimension first in the result. Errors (``RuntimeError``): an integer input, an empty input, ``q`` out of
``[0, 1]``, an unknown interpolation.

Here: the values sorted along the last dimension (NaN sorted as +inf and counted apart: MindTorch's ``sort`` does not
put NaN last), the two neighbours read with ``gather`` and combined; the gradient flows through ``sort`` and
``gather`` as PyTorch's does, except where the result is NaN (PyTorch sends that gradient to a NaN element, here
it reaches no element). ``q`` tensors are read on the host for the range check, as PyTorch does.

Replaces: ``torch.quantile``, ``torch.nanquantile``, ``torch.Tensor.quantile``, ``torch.Tensor.nanquantile``.
"""
from . import Patch, patch_attr

NAME = "quantile"
INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")
torch = None  # mindtorch.torch, set by apply()


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    if interpolation not in INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                           f"Got {interpolation}")
    if not input.is_floating_point():
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    scalar_q = not isinstance(q, torch.Tensor) or q.ndim == 0
    if isinstance(q, torch.Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        values = [float(v) for v in q.reshape(-1).tolist()]
        qs = q.reshape(-1).to(input.dtype)
    else:
        values = [float(q)]
        qs = torch.tensor([float(q)], dtype=input.dtype)
    for v in values:
        if not 0 <= v <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {v}")
    ndim = input.ndim
    if dim is None:
        x, d = input.reshape(-1), 0
    else:
        n_dims = max(ndim, 1)
        if dim < -n_dims or dim >= n_dims:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n_dims}, {n_dims - 1}], "
                             f"but got {dim})")
        x, d = (input.reshape(1) if ndim == 0 else input), dim % n_dims
    x = x.movedim(d, -1)
    n = x.shape[-1]
    nan = x.isnan()
    ordered = torch.where(nan, float("inf"), x).sort(-1)[0]
    nan_count = nan.sum(-1, keepdim=True)
    count = (n - nan_count) if ignore_nan else torch.full_like(nan_count, n)
    rank = qs * (count - 1).clamp(min=0).to(input.dtype)  # (..., k)
    if interpolation == "nearest":
        rank = torch.round(rank)
    elif interpolation == "lower":
        rank = torch.floor(rank)
    elif interpolation == "higher":
        rank = torch.ceil(rank)
    below = torch.floor(rank).long().clamp(min=0, max=n - 1)
    above = torch.ceil(rank).long().clamp(min=0, max=n - 1)
    low, high = ordered.gather(-1, below), ordered.gather(-1, above)
    if interpolation == "midpoint":
        result = low + (high - low) * 0.5
    else:
        result = low + (high - low) * (rank - below.to(input.dtype))
    undefined = (count == 0) if ignore_nan else (nan_count > 0)
    result = torch.where(undefined, float("nan"), result)
    result = result.movedim(-1, 0)  # (k, ...)
    if keepdim:
        if dim is None:
            result = result.reshape((result.shape[0],) + (1,) * ndim)
        elif ndim > 0:
            result = result.unsqueeze(d + 1)
    return result[0] if scalar_q else result


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):  # noqa: A002 (PyTorch's)
    """PyTorch's ``torch.quantile`` (module docstring)."""
    result = _quantile("quantile", input, q, dim, keepdim, interpolation, False)
    return result if out is None else out.copy_(result)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):  # noqa: A002
    """PyTorch's ``torch.nanquantile``: NaN values ignored (module docstring)."""
    result = _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)
    return result if out is None else out.copy_(result)


def tensor_quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``Tensor.quantile``: :func:`quantile` of ``self``."""
    return _quantile("quantile", self, q, dim, keepdim, interpolation, False)


def tensor_nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``Tensor.nanquantile``: :func:`nanquantile` of ``self``."""
    return _quantile("nanquantile", self, q, dim, keepdim, interpolation, True)


def apply() -> None:
    global torch
    import mindtorch.torch
    torch = mindtorch.torch
    from mindtorch.torch.tensor import Tensor
    patch_attr(torch, "quantile", quantile)
    patch_attr(torch, "nanquantile", nanquantile)
    patch_attr(Tensor, "quantile", tensor_quantile)
    patch_attr(Tensor, "nanquantile", tensor_nanquantile)


PATCH = Patch(NAME, "torch.quantile / nanquantile and the Tensor methods on CPU as PyTorch (MindSpore's Quantile "
                    "kernel is missing on CPU; the methods took no dim=)", "post-import", apply,
              replaces=("torch.quantile", "torch.nanquantile", "torch.Tensor.quantile", "torch.Tensor.nanquantile"))
