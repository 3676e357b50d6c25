"""The gradient of ``torch.cummax`` / ``torch.cummin`` (and the ``Tensor`` methods) on CPU, as PyTorch.

MindSpore's gradient of ``Cummax``/``Cummin`` scatters the output gradient with ``InplaceScatterAdd``, which
mindspore 2.10's CPU backend lacks: every ``backward()`` through ``cummax``'s values raised ``RuntimeError: Unsupported
op [InplaceScatterAdd] on CPU`` (found by PyTorch's OpInfo samples, ``run.py conformance --opinfo``, issue 35; a
running maximum in a loss, ``x.cummax(1).values.sum().backward()``).

PyTorch's gradient sends each output element's gradient to the input element its index names (summed where several
outputs name one input). The values are exactly ``input.gather(dim, indices)``, whose gradient is that scatter-add:
this patch returns ``(input.gather(dim, indices), indices)`` with the indices of the function it replaced (no
gradient needed there), in the replaced function's result type (``patches/return_types.py``'s named tuple). A 0-d
input goes to the replaced function unchanged (``patches/zero_dim_ops.py``, applied after, reshapes it first).

Replaces: ``torch.cummax``, ``torch.cummin``, ``torch.Tensor.cummax``, ``torch.Tensor.cummin``; must come after
``return_types`` (which it wraps).
"""
from . import Patch, get_replaced, patch_attr

NAME = "cummax_grad"
_torch_cummax = _torch_cummin = _tensor_cummax = _tensor_cummin = None  # replaced functions, set by apply()


def _gathered(result, input, dim):
    values, indices = result[0], result[1]
    if input.ndim == 0 or not input.is_floating_point():
        return result
    values = input.gather(dim, indices)
    if hasattr(result, "_fields"):
        return type(result)(values, indices)
    return values, indices


def cummax(input, dim, *, out=None):  # noqa: A002 (PyTorch's names)
    """``torch.cummax`` with PyTorch's gradient (module docstring)."""
    if out is not None:
        return _torch_cummax(input, dim, out=out)
    return _gathered(_torch_cummax(input, dim), input, dim)


def cummin(input, dim, *, out=None):  # noqa: A002
    """``torch.cummin`` with PyTorch's gradient (module docstring)."""
    if out is not None:
        return _torch_cummin(input, dim, out=out)
    return _gathered(_torch_cummin(input, dim), input, dim)


def tensor_cummax(self, dim):
    """``Tensor.cummax`` with PyTorch's gradient (module docstring)."""
    return _gathered(_tensor_cummax(self, dim), self, dim)


def tensor_cummin(self, dim):
    """``Tensor.cummin`` with PyTorch's gradient (module docstring)."""
    return _gathered(_tensor_cummin(self, dim), self, dim)


def apply() -> None:
    global _torch_cummax, _torch_cummin, _tensor_cummax, _tensor_cummin
    import mindtorch.torch as torch
    from mindtorch.torch.tensor import Tensor
    _torch_cummax = get_replaced(torch, "cummax", NAME)
    _torch_cummin = get_replaced(torch, "cummin", NAME)
    _tensor_cummax = get_replaced(Tensor, "cummax", NAME)
    _tensor_cummin = get_replaced(Tensor, "cummin", NAME)
    patch_attr(torch, "cummax", cummax)
    patch_attr(torch, "cummin", cummin)
    patch_attr(Tensor, "cummax", tensor_cummax)
    patch_attr(Tensor, "cummin", tensor_cummin)


PATCH = Patch(NAME, "cummax / cummin gradients on CPU as PyTorch (MindSpore's used InplaceScatterAdd, missing on "
                    "mindspore 2.10's CPU: backward raised)", "post-import", apply,
              replaces=("torch.cummax", "torch.cummin", "torch.Tensor.cummax", "torch.Tensor.cummin"),
              after=("return_types",))
