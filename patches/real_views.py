"""``torch.real`` / ``Tensor.real`` of a real tensor, ``resolve_conj`` / ``resolve_neg``: the input's values with
its gradient, as PyTorch.

MindTorch 0.4.0 materializes ``conj()`` / ``imag`` (the values are already resolved; only ``conj_bit`` /
``neg_bit`` flags remain for ``is_conj()`` / ``is_neg()``), and its ``resolve_conj`` / ``resolve_neg`` return a
``deepcopy`` of the input: the copy is cut off from the autograd graph, so the input's gradient through it was 0
(op_db's ``resolve_conj:s0``: 25 of 25 values off), silently; compiled, ``deepcopy`` did not compile. ``torch.real``
of a float tensor went through MindSpore's ``Real``, whose gradient is complex (``real:s0``: a complex64 gradient
for a float32 input; PyTorch's is float32), and which raised for an empty tensor (``real:s1``). (``run.py conformance
--opinfo``, issue 35.)

PyTorch 2.13: ``resolve_conj(x)`` / ``resolve_neg(x)`` return ``x`` itself when its flag is not set, else a
materialized copy (differentiable) without it; ``torch.real(x)`` of a real ``x`` is ``x`` itself. Here the same: the
input when the flag is unset (or the input is real, for ``real``); else ``x + 0`` (the same values, already resolved
by MindTorch, with the gradient) and the flag left unset; complex inputs of ``real`` go to MindTorch's function.

Must come after nothing. Replaces: ``torch.resolve_conj``, ``torch.resolve_neg``, ``torch.real``, and the
``Tensor`` attributes of the same names (``Tensor.real`` a property, as MindTorch's).
"""
from __future__ import annotations

from . import Patch, get_replaced, patch_attr

NAME = "real_views"
ms = cast_to_ms_tensor = cast_to_adapter_tensor = None  # set by apply(); graph code reads module globals
_originals = {}


def _resolved(input, flag):  # noqa: A002 (PyTorch's name)
    if not getattr(input, flag, False):
        return input
    return cast_to_adapter_tensor(cast_to_ms_tensor(input) + 0)


def resolve_conj(input):  # noqa: A002
    """PyTorch's ``torch.resolve_conj`` (module docstring)."""
    return _resolved(input, "conj_bit")


def resolve_neg(input):  # noqa: A002
    """PyTorch's ``torch.resolve_neg`` (module docstring)."""
    return _resolved(input, "neg_bit")


def real(input):  # noqa: A002
    """PyTorch's ``torch.real``: a real input itself; a complex one's real part (MindTorch's)."""
    if input.dtype not in (ms.complex64, ms.complex128):
        return input
    return _originals["torch.real"](input)


def _tensor_real(self):
    if self.dtype not in (ms.complex64, ms.complex128):
        return self
    return _originals["Tensor.real"].fget(self)


tensor_real = property(_tensor_real, doc="``Tensor.real`` (a property, as MindTorch's and PyTorch's): :func:`real` "
                                         "of ``self``.")


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor
    import mindspore
    import mindtorch.torch as torch
    from mindtorch.torch.tensor import Tensor
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    _originals["torch.real"] = get_replaced(torch, "real", NAME)
    _originals["Tensor.real"] = get_replaced(Tensor, "real", NAME)
    patch_attr(torch, "real", real)
    patch_attr(Tensor, "real", tensor_real)
    for name, function in (("resolve_conj", resolve_conj), ("resolve_neg", resolve_neg)):
        patch_attr(torch, name, function)
        patch_attr(Tensor, name, function)


PATCH = Patch(NAME, "torch.real of a real tensor and resolve_conj / resolve_neg return the input (MindTorch's "
                    "deepcopy cut the gradient to 0, silently; Real gave a complex gradient)", "post-import", apply,
              replaces=("torch.real", "torch.Tensor.real", "torch.resolve_conj", "torch.Tensor.resolve_conj",
                        "torch.resolve_neg", "torch.Tensor.resolve_neg"))
