"""``torch.autograd.Variable``, the pre-0.4 wrapper that older scripts still call (``inputs, targets =
map(Variable, (inputs, targets))``), as PyTorch 2.13 keeps it.

PyTorch (``torch/autograd/variable.py``, ``torch/csrc/autograd/python_legacy_variable.cpp``, observed with torch 2.13
in ``.venv-ref``): ``Variable(data, requires_grad=False, volatile=False)`` returns a new ``torch.Tensor`` that is
``data.detach()`` (the same storage, no history, a leaf) with ``requires_grad`` set as asked (a ``Parameter`` gives a
plain Tensor); ``Variable()`` is an empty float tensor of shape ``(0,)``; non-tensor data is ``TypeError: Variable
data has to be a tensor, but got list``; ``requires_grad=True`` on an integer tensor is ``RuntimeError: Only Tensors
of floating point and complex dtype can require gradients``; ``volatile=True`` warns ``UserWarning: volatile was
removed and now has no effect. Use `with torch.no_grad():` instead.``; ``isinstance(t, Variable)`` is True for every
tensor.

MindTorch 0.4.0's ``Variable`` passed ``requires_grad=None`` to ``Tensor.__init__``: every call failed (``TypeError:
The requires_grad property value must be a boolean``, surfacing as ``SystemError``), and it made a new tensor rather
than a detached view.

In a compiled step ``Variable(x)`` is ``x.detach()`` (``mindspore.ops.stop_gradient``): user code's reads of
``Variable`` read that graph form while compiling (``adapter/graph_syntax.register_callable_form``), so
``inputs, targets = map(Variable, (inputs, targets))`` and ``net(Variable(x))`` compile.

Replaces: ``torch.autograd.Variable`` and ``torch.autograd.variable.Variable``.
"""
from __future__ import annotations

import warnings

from . import Patch, patch_attr

_Tensor = None  # MindTorch's Tensor, set by apply()


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)``: ``data.detach()`` with ``requires_grad`` set.

    Raises:
        TypeError: ``data`` is not a tensor (PyTorch's text).
        RuntimeError: ``requires_grad=True`` on a tensor that is not floating point or complex.
    """

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        import mindtorch.torch as torch
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            return torch.empty(0, requires_grad=bool(requires_grad))
        if not isinstance(data, _Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()  # patches/inplace.py's: an alias, in-place updates reach data (PyTorch's storage sharing)
        if isinstance(out, torch.nn.Parameter):  # PyTorch gives a plain Tensor for a Parameter
            out = _Tensor(out)
        if requires_grad:
            if not (out.is_floating_point() or out.is_complex()):
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            out.requires_grad_(True)
        return out


# the graph form (adapter/graph_syntax.register_callable_form): detach, as PyTorch's Variable does; a leaf that requires
# grad cannot be made inside a compiled step (its gradient is not one the step computes): the compile stops there and
# the step runs eagerly
_GRAPH_FORM = '''\
from mindspore.ops import stop_gradient as _AdapterStopGradient
from mindtorch.torch.tensor import cast_to_adapter_tensor as _AdapterToTorch


def variable__(data, requires_grad=False, volatile=False):
    if requires_grad:
        raise RuntimeError("Variable(x, requires_grad=True) makes a leaf inside the step: not compiled")
    return _AdapterToTorch(_AdapterStopGradient(data))
'''


def apply() -> None:
    global _Tensor
    import mindtorch.torch.autograd as autograd
    import mindtorch.torch.autograd.variable as variable
    from mindtorch.torch.tensor import Tensor
    _Tensor = Tensor
    Variable.__module__ = "torch.autograd.variable"
    patch_attr(autograd, "Variable", Variable)
    patch_attr(variable, "Variable", Variable)
    from adapter import graph_syntax
    graph_syntax.register_callable_form(Variable, "variable__", _GRAPH_FORM)


NAME = "variable"
PATCH = Patch(NAME, "torch.autograd.Variable(x) is x.detach() with requires_grad as asked (PyTorch 2.13); "
                    "MindTorch's failed on every call (requires_grad=None)",
              "post-import", apply, replaces=("torch.autograd.Variable", "torch.autograd.variable.Variable"),
              after=("inplace",))
