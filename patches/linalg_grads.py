"""Gradients of ``cholesky``, ``linalg.solve`` and ``linalg.eigh``/``eigvalsh`` from their closed forms, where
MindSpore has none on CPU.

MindTorch 0.4.0's ``torch.cholesky``/``torch.linalg.cholesky``/``torch.linalg.cholesky_ex``/``Tensor.cholesky`` run
MindSpore's ``Cholesky``, whose backward kernel does not exist on CPU (``RuntimeError: Unsupported op [CholeskyGrad] on
CPU``), and its ``torch.linalg.solve``, ``linalg.eigh`` and ``linalg.eigvalsh`` run in numpy (``RuntimeError: [numpy
backward issue.] For 'solve', it can not backward``): ``loss.backward()`` through any of them raised. Found by op_db's
``cholesky``, ``linalg.cholesky``, ``linalg.solve``, ``linalg.eigh``, ``linalg.eigvalsh`` gradients (``run.py
conformance --opinfo``, issue 35).

Here the forward is MindTorch's, wrapped in a ``torch.autograd.Function`` whose backward is the closed form:

* Cholesky, ``A = L L^T`` (I. Murray, "Differentiation of the Cholesky decomposition", arXiv:1602.07527, 2016,
  section 2): with ``Phi(X)`` the lower triangle of ``X`` with its diagonal halved, ``grad_A = L^-T Phi(L^T grad_L)
  L^-1``, then symmetrized, ``(grad_A + grad_A^T) / 2`` (``A`` is symmetric: the gradient PyTorch reports).
  ``upper=True`` returns ``U = L^T``, so ``grad_L = grad_U^T``.
* Solve, ``X = A^-1 B`` (the matrix-calculus identities of M. Giles, "An extended collection of matrix derivative
  results for forward and reverse mode AD", 2008, section 2.3.1): ``grad_B = A^-T grad_X``, ``grad_A = -grad_B X^T``
  (for a vector ``B`` of shape ``(n,)``: the outer product).
* Symmetric eigendecomposition, ``A = V diag(l) V^T`` (Giles 2008, section 3.1): ``grad_A = V (diag(grad_l) +
  F o skew(V^T grad_V)) V^T`` with ``F_ij = 1 / (l_j - l_i)`` off the diagonal and 0 on it, ``o`` the element-wise
  product, ``skew(X) = (X - X^T) / 2`` (``V^T dV`` is skew-symmetric, so only that part of ``V^T grad_V`` carries a
  first-order change; measured: this gives PyTorch's recorded gradients of op_db's ``linalg.eigh:s0``).
  ``eigvalsh``: ``grad_A = V diag(grad_l) V^T``. Repeated eigenvalues make ``F`` infinite, as PyTorch's.

* Pseudo-inverse with ``hermitian=True``, ``P = pinv(A)`` (G. Golub, V. Pereyra, "The differentiation of
  pseudo-inverses and nonlinear least squares problems whose variables separate", SIAM J. Numer. Anal. 10, 1973:
  ``dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P``): ``grad_A = -(P K)^T + K P^T - A P K P^T +
  P^T P (grad_P^T - K A)`` with ``K = grad_P^T P``, PyTorch's ``pinv_backward`` for every ``hermitian``. MindSpore
  differentiated its eigendecomposition of the lower triangle instead: for a symmetric leaf ``A`` the gradient was
  lower-triangular (the pair ``G_ij + G_ji`` below the diagonal, 0 above: 6 of 9 entries off), for op_db's
  ``linalg.pinv.hermitian:s0`` 25 of 25 values (up to 22.2); through ``A = B B^T`` both agreed.

The inverse of the triangular factor is ``torch.linalg.solve_triangular`` of the identity; ``A^-T grad_X`` is
MindTorch's ``linalg.solve`` (numpy; no gradient is taken of a gradient). Only the shapes whose gradients need no
broadcast reduction take this path: ``cholesky``, ``eigh``, ``eigvalsh`` of ``(*, n, n)`` with elements; ``solve``
of ``A (n, n)`` or ``(*, n, n)`` with ``B`` of the same batch, ``left=True``. Others, and calls with ``out=``, go to
MindTorch unchanged (their backward raises as before). PyNative only: in a compiled function the unwrapped original
runs (MindTorch's numpy forms and the missing ``CholeskyGrad`` do not compile; ``run.py`` runs that step eagerly).

Replaces: ``torch.cholesky``, ``torch.Tensor.cholesky``, ``torch.linalg.cholesky``, ``torch.linalg.cholesky_ex``,
``torch.linalg.solve``, ``torch.linalg.eigh``, ``torch.linalg.eigvalsh``, ``torch.linalg.pinv`` (``hermitian=True``
of real square matrices with elements; other calls MindTorch's). Applied after ``empty_linalg`` (which
wraps the cholesky functions; an empty matrix never gets here) and ``return_types`` (``cholesky_ex``'s and
``eigh``'s named tuples).
"""
import functools

from . import Patch, get_replaced
from ._wrap_once import wrap_attr

NAME = "linalg_grads"
torch = None  # mindtorch.torch, bound by apply()
_functions = {}  # autograd.Function subclasses, made by apply()


def _phi(x):
    """The lower triangle of ``x`` with its diagonal halved."""
    return torch.tril(x) - 0.5 * torch.diag_embed(torch.diagonal(x, dim1=-2, dim2=-1))


def _make_functions():
    class CholeskyLower(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, original):
            lower = original(a)
            ctx.save_for_backward(lower)
            return lower

        @staticmethod
        def backward(ctx, grad_lower):
            lower, = ctx.saved_tensors
            n = lower.shape[-1]
            eye = torch.eye(n, dtype=lower.dtype).expand(lower.shape) * 1
            inverse = torch.linalg.solve_triangular(lower, eye, upper=False)  # L^-1
            middle = _phi(torch.matmul(lower.transpose(-2, -1), grad_lower))
            grad = torch.matmul(torch.matmul(inverse.transpose(-2, -1), middle), inverse)
            return 0.5 * (grad + grad.transpose(-2, -1)), None

    class Solve(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, original):
            x = original(a, b)
            ctx.save_for_backward(a, x)
            ctx.vector = b.dim() == 1 or (b.dim() == a.dim() - 1 and a.dim() > 2)
            return x

        @staticmethod
        def backward(ctx, grad_x):
            a, x = ctx.saved_tensors
            grad_b = _functions["solve_original"](a.transpose(-2, -1), grad_x)
            if ctx.vector:
                grad_a = -grad_b.unsqueeze(-1) * x.unsqueeze(-2)
            else:
                grad_a = -torch.matmul(grad_b, x.transpose(-2, -1))
            return grad_a, grad_b, None

    class Eigh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, original, uplo):
            values, vectors = original(a, uplo)
            ctx.save_for_backward(values, vectors)
            return values, vectors

        @staticmethod
        def backward(ctx, grad_values, grad_vectors):
            values, vectors = ctx.saved_tensors
            return _eigh_grad(values, vectors, grad_values, grad_vectors), None, None

    class Eigvalsh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, original, uplo):
            values, vectors = original(a, uplo)
            ctx.save_for_backward(vectors)
            return values

        @staticmethod
        def backward(ctx, grad_values):
            vectors, = ctx.saved_tensors
            return _eigh_grad(None, vectors, grad_values, None), None, None

    class PinvHermitian(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, original, atol, rtol):
            p = original(a, atol=atol, rtol=rtol, hermitian=True)
            ctx.save_for_backward(a, p)
            return p

        @staticmethod
        def backward(ctx, grad_p):
            a, p = ctx.saved_tensors
            return _pinv_grad(a, p, grad_p), None, None, None

    return {"cholesky": CholeskyLower, "solve": Solve, "eigh": Eigh, "eigvalsh": Eigvalsh,
            "pinv_hermitian": PinvHermitian}


def _pinv_grad(a, p, g):
    """The pseudo-inverse's gradient for a square ``a`` (``(*, n, n)``) and its pseudo-inverse ``p`` (module
    docstring), grouped as PyTorch groups it for ``m <= n``."""
    t = lambda x: x.transpose(-2, -1)  # noqa: E731
    k = torch.matmul(t(g), p)
    k_ph = torch.matmul(k, t(p))
    return (-t(torch.matmul(p, k)) + k_ph - torch.matmul(torch.matmul(a, p), k_ph)
            + torch.matmul(torch.matmul(t(p), p), t(g) - torch.matmul(k, a)))


def _eigh_grad(values, vectors, grad_values, grad_vectors):
    """``grad_A = V (diag(grad_values) + F o skew(V^T grad_V)) V^T`` (module docstring)."""
    inner = torch.diag_embed(grad_values) if grad_values is not None else 0
    if grad_vectors is not None:
        gap = values.unsqueeze(-2) - values.unsqueeze(-1)  # l_j - l_i
        n = values.shape[-1]
        eye = torch.eye(n, dtype=values.dtype)
        factor = (1 - eye) / (gap + eye)
        inner = inner + factor * _skew(torch.matmul(vectors.transpose(-2, -1), grad_vectors))
    return torch.matmul(torch.matmul(vectors, inner), vectors.transpose(-2, -1))


def _skew(x):
    return 0.5 * (x - x.transpose(-2, -1))



def _given(lower, a):
    """The factor already computed (``cholesky_ex``'s call also gave ``info``)."""
    return lower


def _factor(original, a):
    """MindTorch's lower Cholesky factor of ``a`` (``original`` returns it, or ``(L, info)``)."""
    result = original(a)
    return result[0] if isinstance(result, tuple) else result


def _square(a) -> bool:
    return isinstance(a, torch.Tensor) and a.dim() >= 2 and a.shape[-1] == a.shape[-2] and a.numel() > 0


def _torch_cholesky(original):
    @functools.wraps(original)
    def cholesky(input, upper=False, *, out=None):  # noqa: A002 (PyTorch's names)
        if out is not None or not _square(input):
            return original(input, upper, out=out) if out is not None else original(input, upper)
        lower = _functions["cholesky"].apply(input, functools.partial(_factor, original))
        return lower.transpose(-2, -1) if upper else lower
    return cholesky


def _linalg_cholesky(original):
    @functools.wraps(original)
    def cholesky(A, *, upper=False, out=None):  # noqa: N803 (PyTorch's name)
        if out is not None or not _square(A):
            return original(A, upper=upper, out=out)
        lower = _functions["cholesky"].apply(A, functools.partial(_factor, original))
        return lower.transpose(-2, -1) if upper else lower
    return cholesky


def _linalg_cholesky_ex(original):
    @functools.wraps(original)
    def cholesky_ex(A, *, upper=False, check_errors=False, out=None):  # noqa: N803 (PyTorch's name)
        if out is not None or not _square(A):
            return original(A, upper=upper, check_errors=check_errors, out=out)
        result = original(A.detach(), upper=False, check_errors=check_errors)
        lower = _functions["cholesky"].apply(A, functools.partial(_given, result[0]))
        factor = lower.transpose(-2, -1) if upper else lower
        return type(result)(factor, result[1]) if hasattr(result, "_fields") else (factor, result[1])
    return cholesky_ex


def _linalg_solve(original):
    _functions["solve_original"] = original

    @functools.wraps(original)
    def solve(A, B, *, left=True, out=None):  # noqa: N803 (PyTorch's names)
        if out is not None or not left or not _square(A) or not isinstance(B, torch.Tensor):
            return original(A, B, left=left, out=out) if (out is not None or not left) else original(A, B)
        batch = tuple(A.shape[:-2])
        same = (B.dim() == A.dim() and tuple(B.shape[:-2]) == batch and B.shape[-2] == A.shape[-1]) or \
            (B.dim() == A.dim() - 1 and tuple(B.shape[:-1]) == batch and B.shape[-1] == A.shape[-1])
        if not same:
            return original(A, B)
        return _functions["solve"].apply(A, B, original)
    return solve


def _linalg_eigh(original, name):
    @functools.wraps(original)
    def eigh(A, UPLO="L", *, out=None):  # noqa: N803 (PyTorch's names)
        if out is not None or not _square(A):
            return original(A, UPLO, out=out) if out is not None else original(A, UPLO)
        eigh_original = _functions["eigh_original"]
        if name == "eigvalsh":
            return _functions["eigvalsh"].apply(A, eigh_original, UPLO)
        from .return_types import TYPES
        return TYPES["linalg_eigh"](*_functions["eigh"].apply(A, eigh_original, UPLO))
    return eigh


def _linalg_pinv(original):
    @functools.wraps(original)
    def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):  # noqa: N803 (PyTorch's names)
        if not hermitian or out is not None or not _square(A) or A.is_complex():
            return original(A, atol=atol, rtol=rtol, hermitian=hermitian, out=out)
        return _functions["pinv_hermitian"].apply(A, original, atol, rtol)
    return pinv


def apply() -> None:
    global torch
    import mindtorch.torch as mt
    import mindtorch.torch.linalg as linalg
    from mindtorch.torch.tensor import Tensor
    torch = mt
    if not _functions:
        _functions.update(_make_functions())
    wrap_attr(mt, "cholesky", NAME, _torch_cholesky)
    wrap_attr(Tensor, "cholesky", NAME, _torch_cholesky)
    wrap_attr(linalg, "cholesky", NAME, _linalg_cholesky)
    wrap_attr(linalg, "cholesky_ex", NAME, _linalg_cholesky_ex)
    wrap_attr(linalg, "solve", NAME, _linalg_solve)
    _functions["eigh_original"] = get_replaced(linalg, "eigh", NAME)
    wrap_attr(linalg, "eigh", NAME, functools.partial(_linalg_eigh, name="eigh"))
    wrap_attr(linalg, "eigvalsh", NAME, functools.partial(_linalg_eigh, name="eigvalsh"))
    wrap_attr(linalg, "pinv", NAME, _linalg_pinv)


PATCH = Patch(NAME, "gradients of cholesky/linalg.cholesky(_ex), linalg.solve, linalg.eigh/eigvalsh from their closed "
                    "forms (MindSpore: 'Unsupported op [CholeskyGrad] on CPU', 'numpy backward issue')",
              "post-import", apply,
              replaces=("torch.cholesky", "torch.Tensor.cholesky", "torch.linalg.cholesky", "torch.linalg.cholesky_ex",
                        "torch.linalg.solve", "torch.linalg.eigh", "torch.linalg.eigvalsh", "torch.linalg.pinv"),
              after=("empty_linalg", "return_types"))
