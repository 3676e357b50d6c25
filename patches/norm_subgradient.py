"""Vector and Frobenius norms of zero vectors: PyTorch's gradient 0, not NaN; ``F.normalize`` of a zero vector.

MindTorch 0.4.0 computes ``Tensor.norm`` / ``torch.norm``, ``torch.linalg.norm`` and ``torch.linalg.vector_norm`` with
MindSpore's ``ops.norm``, whose gradient at a vector (or matrix) of zeros is NaN for the Euclidean / Frobenius norm
(``ord=None``, ``'fro'``) and for a fractional ``ord`` (0.5, 1.5, 3 ...): ``x.norm(dim=1)`` of a batch with one zero
row made every weight before it NaN after one step, in PyNative and in compiled steps (PyTorch: that row's gradient is
0; op_db's ``linalg.norm.subgradients_at_zero:s0/s2``, ``run.py conformance --opinfo``, issue 35). MindTorch's
``F.normalize`` divides by ``pow(sum(|x|^p), 1/p)`` clipped at ``eps``: NaN gradient at a zero row as well (PyTorch:
``1 / eps``).

PyTorch 2.13's ``norm_backward`` (``torch/csrc/autograd/FunctionsManual.cpp``), for the norm ``r`` of ``x`` over the
reduced dimensions, ``dr/dx`` =

* ``p = 2`` (and Frobenius): ``x / r``;
* ``1 < p < 2``: ``sgn(x) |x|^(p-1) / r^(p-1)``;  ``p > 2``: ``x |x|^(p-2) / r^(p-1)``;
* ``0 < p < 1``: ``sgn(x) |x|^(p-1) r^(1-p)``, with ``|x|^(p-1)`` taken as 0 where ``x == 0``;

each 0 where ``r == 0``. Here ``ops.norm``'s value is kept bit for bit and that derivative is attached to it::

    out = stop_gradient(r) + sum((x - stop_gradient(x)) * stop_gradient(dr/dx))     (over the reduced dims)

(the second term is 0): the value is MindSpore's, the first-order gradient PyTorch's, PyNative and compiled alike.
``ord`` 0, 1, +-inf, negative ``ord`` and matrix norms (``ord`` 2, -2, 1, inf, ``'nuc'`` over two dims) keep
MindSpore's (their gradients matched PyTorch's). ``F.normalize`` is PyTorch's formula ``x / max(norm(x, p, dim,
keepdim=True), eps)`` (``torch/nn/functional.py``) over that norm: at a zero row the clamp passes no gradient to the
norm, so ``x``'s gradient is ``1 / eps``, as PyTorch's.

``torch.linalg.matrix_norm`` (MindSpore's ``ops.matrix_norm``) with ``ord='fro'``: the same (its gradient at a zero
matrix was NaN too).

Replaces: ``mindspore.ops.norm`` and ``mindspore.ops.matrix_norm`` (MindTorch looks them up at each call:
``ms.ops.norm`` in ``tensor.py`` and ``linalg/linalg.py``, ``ms.ops.matrix_norm`` in ``linalg/linalg.py``),
``torch.nn.functional.normalize``. Must come after nothing.
"""
from __future__ import annotations

from . import Patch, get_original, patch_attr

NAME = "norm_subgradient"
# graph code below reads these module globals; set by apply()
ms = cast_to_ms_tensor = cast_to_adapter_tensor = None
_original_norm = _original_matrix_norm = None


def _plan_python(ord, dim, ndim):  # noqa: A002 (MindSpore's name)
    """``(rule, reduced axes or None for all)`` for ``ops.norm(x, ord, dim)`` of an ``ndim``-D ``x``: rule ``0``
    where MindSpore's gradient is kept; ``2.0`` for the Euclidean / Frobenius norm; the number ``p`` otherwise."""
    if isinstance(dim, int):
        dims = (dim,)
    elif dim is None:
        dims = None
    else:
        dims = tuple(dim)
    if ord is None or ord == "fro":
        if ord == "fro" and dims is None and ndim != 2:
            return 0, dims
        return 2.0, dims
    if isinstance(ord, str) or isinstance(ord, bool):
        return 0, dims
    p = float(ord)
    vector = (dims is not None and len(dims) == 1) or (dims is None and ndim == 1)
    if not vector or p <= 0 or p == 1 or p == float("inf"):
        return 0, dims
    return p, dims


_plan = None  # constexpr(_plan_python)


def _pytorch_derivative(xs, r, p):
    """``dr/dx`` of PyTorch's ``norm_backward`` (module docstring); ``xs``, ``r`` (the norm, kept dims) detached."""
    zero = ms.ops.zeros_like(xs)
    absx = ms.ops.abs(xs)
    if p == 2.0:
        d = xs / r
    elif p < 1.0:
        scaled = ms.ops.select(xs == 0, zero, ms.ops.sign(xs) * ms.ops.pow(absx, p - 1))
        d = scaled * ms.ops.pow(r, 1 - p)
    elif p < 2.0:
        d = ms.ops.sign(xs) * ms.ops.pow(absx, p - 1) / ms.ops.pow(r, p - 1)
    else:
        d = xs * ms.ops.pow(absx, p - 2) / ms.ops.pow(r, p - 1)
    return ms.ops.select(ms.ops.broadcast_to(r == 0, ms.ops.shape(d)), zero, d)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002 (MindSpore's names)
    """``mindspore.ops.norm`` with PyTorch's gradient at zero vectors (module docstring). Same arguments, result,
    dtypes and errors as MindSpore's."""
    out = _original_norm(A, ord, dim, keepdim, dtype=dtype)
    if not isinstance(A, ms.Tensor) or not ms.ops.is_floating_point(A):
        return out
    ndim = len(ms.ops.shape(A))
    p, dims = _plan(ord, dim, ndim)
    if p == 0 or ndim == 0:
        return out
    return _attach(A, out, p, dims, keepdim, ndim)


def matrix_norm(A, ord="fro", axis=(-2, -1), keepdims=False, *, dtype=None):  # noqa: A002 (MindSpore's names)
    """``mindspore.ops.matrix_norm`` with PyTorch's gradient 0 at a zero matrix for ``ord='fro'`` (module
    docstring); other ``ord`` as MindSpore's. Same arguments, result, dtypes and errors as MindSpore's."""
    out = _original_matrix_norm(A, ord, axis, keepdims, dtype=dtype)
    if ord != "fro" or not isinstance(A, ms.Tensor) or not ms.ops.is_floating_point(A):
        return out
    return _attach(A, out, 2.0, tuple(axis), keepdims, len(ms.ops.shape(A)))


def _attach(A, out, p, dims, keepdim, ndim):
    """``out`` (the norm of ``A`` over ``dims``, all where None) with PyTorch's derivative attached."""
    axes = tuple(range(ndim)) if dims is None else tuple(d % ndim for d in dims)
    sg = ms.ops.stop_gradient
    xs = sg(A)
    r = sg(out).astype(A.dtype)
    if not keepdim:
        for axis in sorted(axes):
            r = ms.ops.expand_dims(r, axis)
    d = sg(_pytorch_derivative(xs, r, p))
    attached = ((A - xs) * d).sum(axis=axes, keepdims=keepdim)
    return sg(out) + attached.astype(out.dtype)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):  # noqa: A002 (PyTorch's names)
    """PyTorch's ``F.normalize``: ``input / max(norm(input, p, dim, keepdim=True), eps)``, of ``input``'s shape and
    dtype (module docstring). ``out=`` is written and returned."""
    x = cast_to_ms_tensor(input)
    n = ms.ops.norm(x, p, dim, True)
    denom = ms.ops.broadcast_to(ms.ops.clamp(n, min=eps), ms.ops.shape(x))
    result = x / denom
    if out is not None:
        ms.ops.assign(out, result)
        return out
    return cast_to_adapter_tensor(result)


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, _original_norm, _original_matrix_norm, _plan
    import mindspore
    import mindspore.ops
    import mindtorch.torch.nn.functional as F
    from mindspore.ops.primitive import constexpr
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    _plan = constexpr(_plan_python)
    _original_norm = get_original(mindspore.ops, "norm")
    patch_attr(mindspore.ops, "norm", norm)
    _original_matrix_norm = get_original(mindspore.ops, "matrix_norm")
    patch_attr(mindspore.ops, "matrix_norm", matrix_norm)
    patch_attr(F, "normalize", normalize)


PATCH = Patch(NAME, "norm / linalg.norm / vector_norm (Euclidean, Frobenius, fractional p) of a zero vector: "
                    "PyTorch's gradient 0 (MindSpore's was NaN: one zero row made every weight NaN); F.normalize of a "
                    "zero vector: gradient 1/eps as PyTorch", "post-import", apply,
              replaces=("mindspore.ops.norm", "mindspore.ops.matrix_norm", "torch.nn.functional.normalize"))
