# Vendored from PyTorch 2.13.0 (git cf30153c4c131c8164ee7798e5022d810682e2cb), torch/distributions/utils.py.
# Copyright (c) 2016- Facebook, Inc (Adam Paszke) and the other PyTorch contributors; BSD-3-Clause license,
# reproduced in patches/LICENSE-pytorch.txt (its terms apply to this file).
# Changes for MindTorch: imports (`torch` -> `mindtorch.torch`, `torch.types` -> `._types`), `torch.Size()` ->
# `torch.Size(())` (MindTorch's Size needs its argument), and the lines marked "adapter:". See patches/distributions.py.
from collections.abc import Callable, Sequence
from functools import update_wrapper
from typing import Any, Final, Generic, overload, TypeVar

import mindtorch.torch as torch
import mindtorch.torch.nn.functional as F
from mindtorch.torch import SymInt, Tensor
from mindtorch.torch.overrides import is_tensor_like
from mindtorch.torch.distributions._types import _dtype, _Number, Device, Number


euler_constant: Final[float] = 0.57721566490153286060  # Euler Mascheroni Constant

__all__ = [
    "broadcast_all",
    "logits_to_probs",
    "clamp_probs",
    "probs_to_logits",
    "lazy_property",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]


# FIXME: Use (*values: *Ts) -> tuple[Tensor for T in Ts] if Mapping-Type is ever added.
#   See https://github.com/python/typing/issues/1216#issuecomment-2126153831
def broadcast_all(*values: Tensor | Number) -> tuple[Tensor, ...]:
    r"""
    Given a list of values (possibly containing numbers), returns a list where each
    value is broadcasted based on the following rules:

    - `torch.*Tensor` instances are broadcasted as per :ref:`broadcasting-semantics`.
    - Number instances (scalars) are upcast to tensors having
      the same size and type as the first tensor passed to `values`.  If all the
      values are scalars, then they are upcasted to scalar Tensors.

    Args:
        values (list of `Number`, `torch.*Tensor` or objects implementing __torch_function__)

    Raises:
        ValueError: if any of the values is not a `Number` instance,
            a `torch.*Tensor` instance, or an instance implementing __torch_function__
    """
    if not all(is_tensor_like(v) or isinstance(v, _Number) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, "
            "torch.Tensor or objects implementing __torch_function__."
        )
    if not all(is_tensor_like(v) for v in values):
        options: dict[str, Any] = dict(dtype=torch.get_default_dtype())
        for value in values:
            if isinstance(value, torch.Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        new_values = [
            v if is_tensor_like(v) else torch.tensor(v, **options) for v in values
        ]
        return torch.broadcast_tensors(*new_values)
    return torch.broadcast_tensors(*values)


def _standard_normal(
    shape: Sequence[int | SymInt],
    dtype: _dtype | None,
    device: Device | None,
) -> Tensor:
    if False:  # adapter: torch._C._get_tracing_state() (no JIT tracing in MindTorch)
        # [JIT WORKAROUND] lack of support for .normal_()
        return torch.normal(
            torch.zeros(shape, dtype=dtype, device=device),
            torch.ones(shape, dtype=dtype, device=device),
        )
    return torch.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    r"""
    Sum out ``dim`` many rightmost dimensions of a given tensor.

    Args:
        value (Tensor): A tensor of ``.dim()`` at least ``dim``.
        dim (int): The number of rightmost dims to sum out.
    """
    if dim == 0:
        return value
    required_shape = value.shape[:-dim] + (-1,)
    return value.reshape(required_shape).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    r"""
    Converts a tensor of logits into probabilities. Note that for the
    binary case, each value denotes log odds, whereas for the
    multi-dimensional case, the values along the last dimension denote
    the log probabilities (possibly unnormalized) of the events.
    """
    if is_binary:
        return torch.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamps the probabilities to be in the open interval `(0, 1)`.

    The probabilities would be clamped between `eps` and `1 - eps`,
    and `eps` would be the smallest representable positive number for the input data type.

    Args:
        probs (Tensor): A tensor of probabilities.

    Returns:
        Tensor: The clamped probabilities.

    Examples:
        >>> probs = torch.tensor([0.0, 0.5, 1.0])
        >>> clamp_probs(probs)
        tensor([1.1921e-07, 5.0000e-01, 1.0000e+00])

        >>> probs = torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64)
        >>> clamp_probs(probs)
        tensor([2.2204e-16, 5.0000e-01, 1.0000e+00], dtype=torch.float64)

    """
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    r"""
    Converts a tensor of probabilities into logits. For the binary case,
    this denotes the probability of occurrence of the event indexed by `1`.
    For the multi-dimensional case, the values along the last dimension
    denote the probabilities of occurrence of each of the events.
    """
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return torch.log(ps_clamped) - torch.log1p(-ps_clamped)
    return torch.log(ps_clamped)


T = TypeVar("T", contravariant=True)
R = TypeVar("R", covariant=True)


class lazy_property(Generic[T, R]):
    r"""
    Used as a decorator for lazy loading of class attributes. This uses a
    non-data descriptor that calls the wrapped method to compute the property on
    first call; thereafter replacing the wrapped method into an instance
    attribute.
    """

    def __init__(self, wrapped: Callable[[T], R]) -> None:
        self.wrapped: Callable[[T], R] = wrapped
        update_wrapper(self, wrapped)  # type:ignore[arg-type]

    @overload
    def __get__(
        self, instance: None, obj_type: Any = None
    ) -> "_lazy_property_and_property[T, R]": ...

    @overload
    def __get__(self, instance: T, obj_type: Any = None) -> R: ...

    def __get__(
        self, instance: T | None, obj_type: Any = None
    ) -> "R | _lazy_property_and_property[T, R]":
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property[T, R], property):
    """We want lazy properties to look like multiple things.

    * property when Sphinx autodoc looks
    * lazy_property when Distribution validate_args looks
    """

    def __init__(self, wrapped: Callable[[T], R]) -> None:
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    r"""
    Convert a `D x D` matrix or a batch of matrices into a (batched) vector
    which comprises of lower triangular elements from the matrix in row order.
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:  # adapter: `not torch._C._get_tracing_state() and` dropped (no JIT tracing)
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    arange = torch.arange(n, device=mat.device)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    vec = mat[..., tril_mask]
    return vec


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    r"""
    Convert a vector or a batch of vectors into a batched `D x D`
    lower triangular matrix containing elements from the vector in row order.
    """
    # +ve root of D**2 + (1+2*diag)*D - |diag| * (diag+1) - 2*vec.shape[-1] = 0
    n = (
        -(1 + 2 * diag)
        + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5
    ) / 2
    eps = torch.finfo(vec.dtype).eps
    if round(n) - n > eps:  # adapter: `not torch._C._get_tracing_state() and` dropped (no JIT tracing)
        raise ValueError(
            f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
            + "the lower triangular part of a square D x D matrix."
        )
    n = round(n.item()) if isinstance(n, torch.Tensor) else round(n)
    mat = vec.new_zeros(vec.shape[:-1] + torch.Size((n, n)))
    arange = torch.arange(n, device=vec.device)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    mat[..., tril_mask] = vec
    return mat


# adapter: not in PyTorch's utils.py. torch._standard_gamma (Gamma.rsample, Beta, Dirichlet) is missing in MindTorch.
def _standard_gamma(concentration: Tensor, name: str) -> Tensor:
    """Gamma(concentration, 1) draws of ``concentration``'s shape and dtype, from MindSpore's ``RandomGamma``
    (seeded by ``torch.manual_seed``). Not PyTorch's numbers, and without PyTorch's implicit reparameterisation
    gradient (ATen's _standard_gamma_grad): called with grad mode on (``rsample()`` outside ``no_grad``; ``sample()``
    is under ``no_grad``) it raises NotImplementedError naming the user's file:line rather than let a loss get a
    silently missing gradient w.r.t. the concentration."""
    if torch.is_grad_enabled():
        from adapter.userframe import user_location
        raise NotImplementedError(
            f"{user_location(2) or '<unknown>'}: {name}.rsample() needs the reparameterised gradient of Gamma "
            "samples (PyTorch's _standard_gamma_grad), which MindSpore/MindTorch lack. Use .sample() (no gradient "
            "through the sample) or a Normal-based reparameterisation.")
    import mindspore as ms
    from mindtorch.torch.tensor import cast_to_adapter_tensor, cast_to_ms_tensor
    alpha = cast_to_ms_tensor(concentration)
    draws = ms.ops.random_gamma(ms.Tensor([], ms.int64), alpha)  # shape [] ++ alpha.shape
    draws = cast_to_adapter_tensor(draws)
    return draws.clamp(min=torch.finfo(draws.dtype).tiny)  # ATen's _standard_gamma: never 0 (log_prob stays finite)


# adapter: not in PyTorch's utils.py. MindTorch's torch.broadcast_shapes returns a list (PyTorch: torch.Size), and
# `batch_shape + (-1, -1)` then raises TypeError; callers in this package use this instead.
def _broadcast_shapes(*shapes) -> torch.Size:
    """``torch.broadcast_shapes(*shapes)`` as a ``torch.Size`` (PyTorch's return type)."""
    return torch.Size(torch.broadcast_shapes(*shapes))


# adapter: not in PyTorch's utils.py. MindSpore's xlogy has another gradient than PyTorch's: d/dx xlogy(x, y) is 0
# where x == 0 (PyTorch: log(y)), so Beta(1, b)/Dirichlet/Gamma(1, r).log_prob gave a wrong gradient w.r.t. a
# concentration of exactly 1 (beta_log_prob in tests/test_distributions.py). Used for every torch.xlogy of this package.
def _xlogy(x, y):
    """``torch.xlogy(x, y)``: ``x * log(y)``, 0 where ``x == 0`` (nan where y is nan), with PyTorch's gradients
    (d/dx = log(y), d/dy = x / y) where ``y > 0``; at ``x == y == 0`` the value is 0 and both gradients are 0
    (PyTorch: -inf and nan)."""
    y = torch.as_tensor(y)
    x = torch.as_tensor(x, dtype=y.dtype) if not isinstance(x, Tensor) else x
    safe_y = torch.where((x == 0) & (y == 0), torch.ones_like(y), y)
    return x * torch.log(safe_y)
