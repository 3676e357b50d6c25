"""``t.grad = value`` in a script is checked as PyTorch checks it: a Tensor (or None) of the tensor's size and dtype.

PyTorch's ``Tensor.grad`` setter (``torch/csrc/autograd/python_variable.cpp``, ``THPVariable_set_grad``) raises

* ``TypeError: assigned grad expected to be a Tensor or None but got grad of type float`` for anything but a
  Tensor or None (a number, a numpy array). PyTorch's own ``examples_autograd/polynomial_autograd.py`` tutorial
  does ``a.grad, b.grad, c.grad, d.grad = 0., 0., 0., 0.`` and stops there under PyTorch 2.13;
* ``RuntimeError: attempting to assign a gradient of size '[3]' to a tensor of size '[2]'. Please ensure that the
  gradient and the tensor are the same size``;
* ``RuntimeError: attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'. The
  gradient must match ...`` (the texts below, observed with PyTorch 2.13 in ``.venv-ref``).

MindTorch 0.4.0 stored any value: the float tutorial trained on (``grad + g`` on a float), and a gradient of
another size reached ``optimizer.step()``, where the update broadcast it over the parameter (a size-1 gradient)
silently. Here the same errors are raised, for ``torch.Tensor`` and ``nn.Parameter`` alike, when the assignment
comes from the user's code; the adapter's and MindTorch's own writes (gradient accumulation, optimizers, AMP) are
not checked, as they were not before.

Replaces: the setter of ``torch.Tensor.grad`` (wrapping ``leaf_grad``'s property) and of ``torch.nn.Parameter.grad``
(MindTorch copies ``Tensor.grad`` onto ``Parameter``).
"""
from __future__ import annotations

import sys

from . import Patch
from ._wrap_once import wrap_attr

# PyTorch's names of dtypes in the message: the C++ type of the gradient, the ScalarType of the tensor's grad_dtype
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}
_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
                 "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
                 "complex64": "ComplexFloat", "complex128": "ComplexDouble"}

Tensor = _is_internal = None  # set by apply()


def _dtype_name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def check(tensor, value) -> None:
    """Raise as PyTorch's setter does when ``value`` cannot be ``tensor``'s gradient.

    Raises:
        TypeError: ``value`` is neither a Tensor nor None.
        RuntimeError: its size or its dtype differs from ``tensor``'s.
    """
    if value is None:
        return
    if not isinstance(value, Tensor):
        raise TypeError("assigned grad expected to be a Tensor or None but got grad of type "
                        f"{type(value).__module__ + '.' if type(value).__module__ != 'builtins' else ''}"
                        f"{type(value).__name__}")
    if tuple(value.shape) != tuple(tensor.shape):
        raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of size "
                           f"'{list(tensor.shape)}'. Please ensure that the gradient and the tensor are the same size")
    mine, theirs = _dtype_name(tensor.dtype), _dtype_name(value.dtype)
    if mine != theirs:
        raise RuntimeError(
            f"attempting to assign a gradient with dtype '{_CPP_NAMES.get(theirs, theirs)}' to a tensor with "
            f"grad_dtype '{_SCALAR_NAMES.get(mine, mine)}'. The gradient must match the tensor's grad_dtype (defaults "
            "to the tensor's dtype). You can set the tensor's grad_dtype attribute with a specific dtype, or None to "
            "allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its gradient may break "
            "downstream systems that assume they match.")


def _checked(prop):
    """``prop`` (a ``grad`` property) whose setter first checks a value assigned by user code. The setter holds
    ``prop`` itself (not only its ``fset``), so the patch below stays reachable as a layer
    (tests/test_patch_layers.py)."""

    def set_grad(self, value):
        if value is not None and not _is_internal(sys._getframe(1).f_code.co_filename):
            check(self, value)
        prop.fset(self, value)

    return property(prop.fget, set_grad, prop.fdel, prop.__doc__)


def apply() -> None:
    global Tensor, _is_internal
    from mindtorch.torch.nn.parameter import Parameter
    from mindtorch.torch.tensor import Tensor
    from adapter.userframe import _is_internal

    wrap_attr(Tensor, "grad", NAME, _checked)
    wrap_attr(Parameter, "grad", NAME, _checked)


NAME = "grad_assign"
PATCH = Patch(NAME, "t.grad = value checked as PyTorch does (Tensor or None, same size, same dtype): TypeError / "
                    "RuntimeError with PyTorch's text instead of storing a float or a wrongly sized gradient",
              "post-import", apply, replaces=("torch.Tensor.grad", "torch.nn.Parameter.grad"),
              after=("leaf_grad",))
