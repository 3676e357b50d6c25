"""``Tensor.T`` / ``.H`` / ``.mT`` / ``.mH`` with PyTorch 2.13's checks and warnings.

MindTorch 0.4.0's ``Tensor.T`` (``mindtorch/torch/tensor.py``) warns when ``ndim <= 2`` -- the test is inverted: a
plain matrix transpose ``self.weight.T`` (pytorch/examples mnist_forward_forward) printed "The use of Tensor.T() on
tensors of dimension other than 2 ... is deprecated" on every script, while a 3-D ``x.T`` said nothing. Its ``H``
raises ``ValueError`` (PyTorch: ``RuntimeError``) and refuses 0-D tensors; its ``mT`` / ``mH`` fail on 0-D and 1-D
tensors with MindSpore's "The 'axis' must be in the range of [-1, 1), but got -2.".

PyTorch (``aten/src/ATen/native/TensorShape.cpp``, ``numpy_T``, ``matrix_H``, ``mT``, ``mH``; behaviour recorded in
tests/fixtures/tensor_transpose_reference.json):

* ``T``: reverses the dimensions for any ndim; ``UserWarning`` "The use of `x.T` on tensors of dimension other than
  2 to reverse their shape is deprecated ..." for ndim not in (0, 2), "Tensor.T is deprecated on 0-D tensors. This
  function is the identity in these cases." for 0-D;
* ``H``: 2-D conjugate transpose; 0-D: the conjugate, with "Tensor.H is deprecated on 0-D tensors. Consider using
  x.conj()."; other ranks ``RuntimeError`` "tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor."
  (+ " For batches of matrices, consider using tensor.mH" above 2-D);
* ``mT`` / ``mH``: the last two dimensions swapped (``mH`` conjugated) for ndim >= 2; 0-D: identity / conjugate
  with "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases." / "Tensor.mH is
  deprecated on 0-D tensors. Consider using x.conj()."; 1-D ``RuntimeError`` "tensor.mT is only supported on
  matrices or batches of matrices. Got 1-D tensor.".

Each warning is ``TORCH_WARN_ONCE`` there: once per process and message, here the same, attributed to the user's
line (``adapter/userframe.py``). PyTorch's trailer "(Triggered internally at /__w/pytorch/.../TensorShape.cpp:
4314.)" names its build machine's source path and is left out. The checks run in a ``constexpr`` (Python at
compile time inside a graph, where the ndim is known), so the properties work in compiled steps too.

Replaces: ``torch.Tensor.T/H/mT/mH`` (properties) and the same on ``torch.nn.Parameter`` (where
patches/parameter_methods.py copied them: ``T``, ``H``, ``mT``, ``mH``).
"""
from __future__ import annotations

from . import Patch, get_replaced, patch_attr
from ._wrap_once import wrap_attr

# graph code below reads these module globals; set by apply()
ms = cast_to_ms_tensor = cast_to_adapter_tensor = _check = None

_T_ND = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will "
         "throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
         "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
_ZERO_D = {"T": "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
           "mT": "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.",
           "H": "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
           "mH": "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj()."}

_issued = set()  # messages warned so far in this process (PyTorch's TORCH_WARN_ONCE)


def _warn_once(message: str) -> None:
    if message in _issued:
        return
    _issued.add(message)
    from adapter.userframe import warn_user
    warn_user(message)


def _check_python(name: str, ndim: int) -> bool:
    """PyTorch's checks and warnings for ``x.<name>`` on an ``ndim``-D tensor (module docstring); a ``constexpr`` in
    graphs. Returns True for the identity case (0-D, and 1-D ``T``).

    Raises:
        RuntimeError: ``H`` on a tensor that is not 0-D or 2-D; ``mT`` / ``mH`` on a 1-D tensor (PyTorch's texts).
    """
    if ndim == 0:
        _warn_once(_ZERO_D[name])
        return True
    if name == "T":
        if ndim != 2:
            _warn_once(_T_ND)
        return ndim < 2
    if name == "H" and ndim != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {ndim}-D tensor."
                           + (" For batches of matrices, consider using tensor.mH" if ndim > 2 else ""))
    if name in ("mT", "mH") and ndim < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got {ndim}-D "
                           "tensor.")
    return False


def _conj(x):
    return ms.ops.conj(x) if x.is_complex() else x


def T(self):  # noqa: N802 (PyTorch's name)
    """PyTorch's ``Tensor.T``: the dimensions reversed (module docstring)."""
    x = cast_to_ms_tensor(self)
    if _check("T", x.ndim):
        return cast_to_adapter_tensor(x)
    return cast_to_adapter_tensor(ms.ops.permute(x, tuple(range(x.ndim - 1, -1, -1))))


def H(self):  # noqa: N802
    """PyTorch's ``Tensor.H``: the conjugate transpose of a matrix (module docstring)."""
    x = cast_to_ms_tensor(self)
    if _check("H", x.ndim):
        return cast_to_adapter_tensor(_conj(x))
    return cast_to_adapter_tensor(_conj(ms.ops.swapaxes(x, 0, 1)))


def mT(self):  # noqa: N802
    """PyTorch's ``Tensor.mT``: the last two dimensions swapped (module docstring)."""
    x = cast_to_ms_tensor(self)
    if _check("mT", x.ndim):
        return cast_to_adapter_tensor(x)
    return cast_to_adapter_tensor(ms.ops.swapaxes(x, -2, -1))


def mH(self):  # noqa: N802
    """PyTorch's ``Tensor.mH``: the last two dimensions swapped, conjugated (module docstring)."""
    x = cast_to_ms_tensor(self)
    if _check("mH", x.ndim):
        return cast_to_adapter_tensor(_conj(x))
    return cast_to_adapter_tensor(_conj(ms.ops.swapaxes(x, -2, -1)))


_PROPERTIES = {"T": T, "H": H, "mT": mT, "mH": mH}


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, _check
    import mindspore
    from mindspore.ops.primitive import constexpr
    from mindtorch.torch.nn.parameter import Parameter
    from mindtorch.torch.tensor import Tensor, cast_to_adapter_tensor as to_adapter, cast_to_ms_tensor as to_ms

    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    _check = constexpr(_check_python)
    for name, fget in _PROPERTIES.items():
        copied = get_replaced(Parameter, name, NAME) is get_replaced(Tensor, name, NAME)  # by parameter_methods
        prop = wrap_attr(Tensor, name, NAME, lambda _, fget=fget: property(fget, doc=fget.__doc__))
        if copied:
            patch_attr(Parameter, name, prop)


NAME = "tensor_transpose"
PATCH = Patch(NAME, "Tensor.T/H/mT/mH with PyTorch's checks and once-per-process UserWarnings "
                    "(MindTorch warned on every 2-D x.T, none on 3-D)", "post-import", apply,
              replaces=tuple(f"torch.{owner}.{name}" for owner in ("Tensor", "nn.Parameter") for name in _PROPERTIES))
