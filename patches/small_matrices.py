"""Determinants and inverses of 1 x 1 and 0 x 0 matrices, as PyTorch.

MindSpore's CPU kernels for these take matrices of 2 x 2 and up only: ``torch.det``/``torch.linalg.det``/
``Tensor.det``, ``torch.logdet``, ``torch.slogdet``/``torch.linalg.slogdet`` and ``torch.inverse``/
``torch.linalg.inv``/``torch.linalg.inv_ex``/``Tensor.inverse`` of a ``(*, 1, 1)`` or ``(*, 0, 0)`` input raise
``ValueError: For primitive[MatrixDeterminant] / [LogMatrixDeterminant] / [MatrixInverse], the row size must be
greater than or equal to 2, but got 1.`` A 1 x 1 matrix is what a one-dimensional Gaussian's covariance, a one-feature
whitening, or a batch of scalars written as matrices give. Found by op_db's ``linalg.det``, ``linalg.slogdet``,
``logdet``, ``linalg.inv``, ``linalg.inv_ex`` samples (``run.py conformance --opinfo``, issue 35).

PyTorch's values (closed forms; ATen returns them for these sizes too): for ``A = [[a]]`` (any batch ``*``), ``det =
a``, ``logdet = log(a)`` (NaN for ``a < 0``, ``-inf`` for 0), ``slogdet = (sign(a), log|a|)``, ``inv = [[1 / a]]``;
``inv`` of ``a = 0`` raises ``torch.linalg.LinAlgError`` (a ``RuntimeError``; here a ``RuntimeError``, MindTorch has no
such class) "linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because the input matrix
is singular.", and ``inv_ex`` returns ``info = 1`` there instead; an empty ``0 x 0`` matrix has ``det = 1``, ``logdet =
0``, ``slogdet = (1, 0)`` and an empty inverse. ``inv_ex``'s ``info`` is an int32 tensor of shape ``*`` (for larger
matrices ``patches/return_types.py`` makes MindTorch's ``int`` one). They are computed here with tensor operations
(indexing, ``log``, ``sign``, ``reciprocal``), whose autograd gives PyTorch's gradients (``d det/da = 1``, ``d logdet/da
= 1/a``, ``d inv/da = -1/a^2``). Larger matrices go to MindTorch unchanged. Named tuples are ``torch.return_types``'
(``patches/return_types.py``). PyNative only: in a compiled function the unwrapped original runs and raises, so
``run.py`` runs that step eagerly.

Replaces: ``torch.det/logdet/slogdet/inverse``, ``torch.functional.det/logdet/inverse`` (the same objects as
``torch``'s on MindTorch 0.4.0; its ``slogdet`` is not, as ``return_types`` replaced ``torch.slogdet`` alone),
``torch.Tensor.det/logdet/slogdet/inverse``, ``torch.linalg.det/slogdet/inv/inv_ex``. Applied after
``return_types`` (which wraps ``slogdet``, ``linalg.slogdet``, ``linalg.inv_ex``).
"""
import functools

from . import Patch, get_replaced, patch_attr
from ._wrap_once import wrap_attr

NAME = "small_matrices"
torch = None  # mindtorch.torch, bound by apply()

_TORCH = ("det", "logdet", "slogdet", "inverse")
_LINALG = ("det", "slogdet", "inv", "inv_ex")
_SLOGDET_TYPE = {"torch": "slogdet", "Tensor": "slogdet", "linalg": "linalg_slogdet"}


def _size(a):
    """``n`` for a square ``(*, n, n)`` tensor with ``n`` 0 or 1, else None (MindTorch's call runs)."""
    if not isinstance(a, torch.Tensor) or a.dim() < 2:
        return None
    n, m = a.shape[-2], a.shape[-1]
    return n if n == m and n in (0, 1) else None


def _singular(name: str):
    """PyTorch raises ``torch.linalg.LinAlgError``, a ``RuntimeError``; MindTorch has no such class."""
    return RuntimeError(f"{name}: The diagonal element 1 is zero, the inversion could not be completed because the "
                        f"input matrix is singular.")


def _small(name: str, owner: str, a):
    """PyTorch's result of ``name`` for the 0 x 0 or 1 x 1 matrices ``a`` (module docstring)."""
    n = _size(a)
    batch = tuple(a.shape[:-2])
    if name == "det":
        return a[..., 0, 0] if n == 1 else torch.ones(batch, dtype=a.dtype)
    if name == "logdet":
        return torch.log(a[..., 0, 0]) if n == 1 else torch.zeros(batch, dtype=a.dtype)
    if name == "slogdet":
        from .return_types import TYPES
        if n == 1:
            value = a[..., 0, 0]
            return TYPES[_SLOGDET_TYPE[owner]](torch.sign(value), torch.log(torch.abs(value)))
        return TYPES[_SLOGDET_TYPE[owner]](torch.ones(batch, dtype=a.dtype), torch.zeros(batch, dtype=a.dtype))
    # inverse / inv / inv_ex
    zero = (a == 0).reshape(batch) if n == 1 else torch.zeros(batch, dtype=torch.bool)
    inverse = torch.reciprocal(a) if n == 1 else a * 1
    if name == "inv_ex":
        from .return_types import TYPES
        return TYPES["linalg_inv_ex"](inverse, zero.to(torch.int32))
    if n == 1 and bool(zero.any()):
        raise _singular("linalg.inv")
    return inverse


def _wrapper(name: str, owner: str, original):
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        a = args[0] if args else kwargs.get("input", kwargs.get("A"))
        if kwargs.get("out") is None and _size(a) is not None:
            return _small(name, owner, a)
        return original(*args, **kwargs)
    return wrapper


def apply() -> None:
    global torch
    import mindtorch.torch as mt
    import mindtorch.torch.functional as functional
    import mindtorch.torch.linalg as linalg
    from mindtorch.torch.tensor import Tensor
    torch = mt
    for name in _TORCH:
        original = get_replaced(mt, name, NAME)
        shared = hasattr(functional, name) and get_replaced(functional, name, NAME) is original
        wrapped = wrap_attr(mt, name, NAME, functools.partial(_wrapper, name, "torch"))
        if shared:
            patch_attr(functional, name, wrapped)
        wrap_attr(Tensor, name, NAME, functools.partial(_wrapper, name, "Tensor"))
    for name in _LINALG:
        wrap_attr(linalg, name, NAME, functools.partial(_wrapper, name, "linalg"))


PATCH = Patch(NAME, "det/logdet/slogdet/inverse/linalg.inv(_ex) of 1 x 1 and 0 x 0 matrices as PyTorch (MindSpore's "
                    "kernels raised 'row size must be greater than or equal to 2')", "post-import", apply,
              replaces=tuple(f"torch.{n}" for n in _TORCH) + tuple(f"torch.Tensor.{n}" for n in _TORCH)
              + ("torch.functional.det", "torch.functional.logdet", "torch.functional.inverse")
              + tuple(f"torch.linalg.{n}" for n in _LINALG),
              after=("return_types",))
