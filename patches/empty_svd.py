"""The singular value family and ``multi_dot`` of inputs with no elements return PyTorch's results.

MindSpore's ``Svd`` kernel refuses an input with no elements (``RuntimeError: For Svd, the input can not be a empty
tensor, but got: [const vector]{0, 0}``), so ``torch.svd``, ``torch.linalg.svd``, ``torch.linalg.svdvals``,
``torch.linalg.matrix_rank`` (any ``hermitian``) and ``torch.pinverse`` of a ``(0, 0)`` matrix, a ``(5, 0)`` one or an
empty batch ``(0, 5, 5)`` raise; ``torch.linalg.multi_dot([A (2, 0), B (0, 2)])`` raises ``ValueError:
proposed_shape '[const vector]{2, 2}' is invalid for input of size 0``. Found by op_db's ``svd``, ``linalg.svd``,
``linalg.svdvals``, ``linalg.matrix_rank(.hermitian)``, ``pinverse``, ``linalg.multi_dot`` samples (``run.py
conformance --opinfo``, issue 35). An empty last batch of a data-dependent size reaches these.

PyTorch 2.13's results (observed in ``.venv-ref``) for ``A`` of shape ``(*, m, n)`` with no element, ``k = min(m,
n)``: ``linalg.svd``: ``S`` zeros ``(*, k)``; with ``full_matrices=True`` (its default) ``U`` ``(*, m, m)`` and ``Vh``
``(*, n, n)``, identity matrices (the only choice when ``k = 0``; empty when the batch is); with
``full_matrices=False`` ``U`` ``(*, m, k)`` and ``Vh`` ``(*, k, n)``. ``torch.svd(some=True)``: ``U`` ``(*, m, k)``,
``V`` ``(*, n, k)``; ``some=False``: identities ``(*, m, m)`` and ``(*, n, n)``. ``svdvals``: ``(*, k)``;
``matrix_rank``: int64 zeros of shape ``*``; ``pinverse``: zeros ``(*, n, m)``. ``multi_dot``: the product of the
chain's outer sizes filled with zeros (an empty inner dimension sums nothing), 1-D ends dropping their dimension as
``matmul``. The results hold no element, or do not depend on ``A``'s (none): their gradients are PyTorch's zeros.
Inputs with elements go to MindTorch unchanged. Named tuples are ``torch.return_types``' (``patches/return_types.py``).
PyNative only: in a compiled function the unwrapped original runs and raises, so ``run.py`` runs that step eagerly.

Replaces: ``torch.svd``, ``torch.Tensor.svd``, ``torch.pinverse``, ``torch.Tensor.pinverse``, ``torch.linalg.svd``,
``torch.linalg.svdvals``, ``torch.linalg.matrix_rank``, ``torch.linalg.multi_dot``. Applied after ``return_types``
(which wraps ``torch.svd`` and ``Tensor.svd``).
"""
import functools

from . import Patch
from ._wrap_once import wrap_attr

NAME = "empty_svd"
torch = None  # mindtorch.torch, bound by apply()


def _empty_matrix(a) -> bool:
    return isinstance(a, torch.Tensor) and a.dim() >= 2 and a.numel() == 0


def _eye(batch, size, dtype):
    return torch.eye(size, dtype=dtype).expand(batch + (size, size)) * 1 if size else \
        torch.zeros(batch + (0, 0), dtype=dtype)


def _result(name: str, a, args, kwargs):
    from .return_types import TYPES
    shape = tuple(a.shape)
    batch, m, n = shape[:-2], shape[-2], shape[-1]
    k = min(m, n)
    zeros = functools.partial(torch.zeros, dtype=a.dtype)
    if name == "linalg.svd":
        full = args[0] if args else kwargs.get("full_matrices", True)
        values = zeros(batch + (k,))
        if full:
            return TYPES["linalg_svd"](_eye(batch, m, a.dtype), values, _eye(batch, n, a.dtype))
        return TYPES["linalg_svd"](zeros(batch + (m, k)), values, zeros(batch + (k, n)))
    if name == "svd":
        some = args[0] if args else kwargs.get("some", True)
        values = zeros(batch + (k,))
        if some:
            return TYPES["svd"](zeros(batch + (m, k)), values, zeros(batch + (n, k)))
        return TYPES["svd"](_eye(batch, m, a.dtype), values, _eye(batch, n, a.dtype))
    if name == "svdvals":
        return zeros(batch + (k,))
    if name == "matrix_rank":
        return torch.zeros(batch, dtype=torch.int64)
    if name == "pinverse":
        return zeros(batch + (n, m))
    raise KeyError(name)


def _wrapper(name: str, original):
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        a = args[0] if args else kwargs.get("input", kwargs.get("A"))
        if kwargs.get("out") is None and _empty_matrix(a):
            return _result(name, a, args[1:], kwargs)
        return original(*args, **kwargs)
    return wrapper


def _multi_dot(original):
    @functools.wraps(original)
    def multi_dot(tensors, *, out=None):
        tensors = list(tensors)
        if out is None and len(tensors) >= 2 and all(isinstance(t, torch.Tensor) for t in tensors) \
                and any(t.numel() == 0 for t in tensors) and all(t.dim() in (1, 2) for t in tensors):
            inner = [tensors[0].shape[-1]] + [d for t in tensors[1:-1] for d in t.shape] + [tensors[-1].shape[0]]
            pairs = list(zip(inner[0::2], inner[1::2]))
            if all(x == y for x, y in pairs):
                shape = (tensors[0].shape[0],) if tensors[0].dim() == 2 else ()
                shape += (tensors[-1].shape[-1],) if tensors[-1].dim() == 2 else ()
                return torch.zeros(shape, dtype=tensors[0].dtype)
        return original(tensors, out=out) if out is not None else original(tensors)
    return multi_dot


def apply() -> None:
    global torch
    import mindtorch.torch as mt
    import mindtorch.torch.linalg as linalg
    from mindtorch.torch.tensor import Tensor
    torch = mt
    wrap_attr(mt, "svd", NAME, functools.partial(_wrapper, "svd"))
    wrap_attr(Tensor, "svd", NAME, functools.partial(_wrapper, "svd"))
    wrap_attr(mt, "pinverse", NAME, functools.partial(_wrapper, "pinverse"))
    wrap_attr(Tensor, "pinverse", NAME, functools.partial(_wrapper, "pinverse"))
    wrap_attr(linalg, "svd", NAME, functools.partial(_wrapper, "linalg.svd"))
    wrap_attr(linalg, "svdvals", NAME, functools.partial(_wrapper, "svdvals"))
    wrap_attr(linalg, "matrix_rank", NAME, functools.partial(_wrapper, "matrix_rank"))
    wrap_attr(linalg, "multi_dot", NAME, _multi_dot)


PATCH = Patch(NAME, "svd/linalg.svd/svdvals/matrix_rank/pinverse/multi_dot of inputs with no elements return "
                    "PyTorch's results (MindSpore's Svd raised 'the input can not be a empty tensor')", "post-import",
              apply,
              replaces=("torch.svd", "torch.Tensor.svd", "torch.pinverse", "torch.Tensor.pinverse",
                        "torch.linalg.svd", "torch.linalg.svdvals", "torch.linalg.matrix_rank",
                        "torch.linalg.multi_dot"),
              after=("return_types",))
