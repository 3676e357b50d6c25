"""The base of ``torch.distributions`` here: the :class:`Distribution` protocol, argument/sample validation and the
tensor helpers every family shares (parameter broadcasting, probabilities <-> logits, draws).

Behaviour follows PyTorch 2.13's documented ``torch.distributions.Distribution`` (validation on by default, the same
ValueError texts, ``sample`` = ``rsample`` without gradient); the code is this project's own.
"""
from __future__ import annotations

import math
import numbers

import mindtorch.torch as torch
import mindtorch.torch.nn.functional as F

EULER_GAMMA = 0.57721566490153286060  # Euler-Mascheroni constant (OEIS A001620)


def size(shape=()) -> "torch.Size":
    """``shape`` (tuple, list, Size, int) as a ``torch.Size`` (MindTorch's ``Tensor.shape`` is a plain tuple)."""
    if isinstance(shape, int):
        return torch.Size((shape,))
    return torch.Size(tuple(int(s) for s in shape))


def numel(shape) -> int:
    return math.prod(tuple(shape))


def bshape(*shapes) -> "torch.Size":
    """Broadcast shape of ``shapes`` (MindTorch's ``broadcast_shapes`` returns a list)."""
    return size(torch.broadcast_shapes(*[tuple(s) for s in shapes]))


def user_error(what: str, depth: int = 3) -> NotImplementedError:
    """A NotImplementedError whose text starts with the user's file:line (adapter/userframe.py)."""
    from adapter.userframe import user_location
    return NotImplementedError(f"{user_location(depth) or '<unknown>'}: {what}")


def as_params(*values):
    """Tensors broadcast to one shape; plain numbers become tensors of the first tensor's dtype (default dtype when
    none is a tensor). Raises ValueError for anything else (PyTorch's ``broadcast_all``)."""
    ref = next((v for v in values if isinstance(v, torch.Tensor)), None)
    for v in values:
        if not isinstance(v, (torch.Tensor, numbers.Number)):
            raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects implementing "
                             "__torch_function__.")
    dtype = ref.dtype if ref is not None else torch.get_default_dtype()
    tensors = [v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=dtype) for v in values]
    return tuple(torch.broadcast_tensors(*tensors))


def normal_noise(shape, dtype, device=None):
    """Standard normal draws of ``shape`` (MindSpore's RNG, seeded by ``torch.manual_seed``)."""
    return torch.empty(tuple(shape), dtype=dtype).normal_()


def uniform_noise(shape, dtype, low=0.0, high=1.0):
    return torch.empty(tuple(shape), dtype=dtype).uniform_(low, high)


def tiny(dtype) -> float:
    return torch.finfo(dtype).tiny


def eps(dtype) -> float:
    return torch.finfo(dtype).eps


def clip_unit(p):
    """``p`` clamped to ``[eps, 1 - eps]`` of its dtype."""
    e = eps(p.dtype)
    return p.clamp(min=e, max=1 - e)


def logits_of(probs, binary: bool = False):
    """Log-odds (``binary``) or log-probabilities of ``probs``, clamped away from 0 and 1 first."""
    p = clip_unit(probs)
    return torch.log(p) - torch.log1p(-p) if binary else torch.log(p)


def probs_of(logits, binary: bool = False):
    return torch.sigmoid(logits) if binary else F.softmax(logits, dim=-1)


def xlogy(x, y):
    """``x * log(y)`` with 0 where ``x == 0`` and ``y == 0``; gradients d/dx = log(y), d/dy = x / y where y > 0.
    MindSpore's own xlogy has d/dx = 0 at x == 0, which gave Beta/Gamma/Dirichlet a wrong gradient at a
    concentration of exactly 1; this one matches PyTorch's away from x == y == 0."""
    y = y if isinstance(y, torch.Tensor) else torch.tensor(y, dtype=x.dtype if isinstance(x, torch.Tensor) else None)
    if not isinstance(x, torch.Tensor):
        x = torch.tensor(x, dtype=y.dtype)
    safe = torch.where((x == 0) & (y == 0), torch.ones_like(y), y)
    return x * torch.log(safe)


def sum_last(value, k: int):
    """Sum over the last ``k`` dimensions (``k == 0``: ``value``)."""
    if k == 0:
        return value
    return value.reshape(tuple(value.shape[:-k]) + (-1,)).sum(-1)


def gamma_draws(concentration, who: str):
    """Gamma(concentration, 1) draws of ``concentration``'s shape (MindSpore's ``random_gamma``), never 0.

    There is no reparameterisation gradient for them here (PyTorch differentiates its draws implicitly); called with
    grad mode on (``rsample()`` outside ``no_grad``) this raises NotImplementedError at the user's line rather than
    give a loss a silently missing gradient."""
    if torch.is_grad_enabled():
        raise user_error(f"{who}.rsample() needs the reparameterised gradient of Gamma samples (PyTorch's "
                         "_standard_gamma_grad), which MindSpore/MindTorch lack. Use .sample() (no gradient through "
                         "the sample) or a Normal-based reparameterisation.")
    import mindspore as ms
    from mindtorch.torch.tensor import cast_to_adapter_tensor, cast_to_ms_tensor
    out = cast_to_adapter_tensor(ms.ops.random_gamma(ms.Tensor([], ms.int64), cast_to_ms_tensor(concentration)))
    return out.clamp(min=tiny(out.dtype))


class lazy_property:
    """A property computed once per instance on first read, then stored in the instance's ``__dict__``."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __get__(self, obj, owner=None):
        if obj is None:
            return _LazyMarker(self)
        with torch.enable_grad():
            val = self.fn(obj)
        obj.__dict__[self.fn.__name__] = val
        return val


class _LazyMarker(property):
    """What a ``lazy_property`` looks like on the class: a property (for introspection) that validation skips."""

    def __init__(self, lazy):
        super().__init__(lazy.fn)
        self.lazy = lazy


def _is_lazy(cls, name) -> bool:
    return isinstance(getattr(cls, name, None), _LazyMarker)


def _short(value):
    if isinstance(value, torch.Tensor):
        return value.item() if value.numel() == 1 else value.size()
    return value


class Distribution:
    """Base of every distribution: ``batch_shape`` (independent copies), ``event_shape`` (one draw), validation."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument/support validation on or off for every later distribution (default on, as PyTorch)."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = size(batch_shape)
        self._event_shape = size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                checks = self.arg_constraints
            except NotImplementedError:
                checks = {}
            for name, constraint in checks.items():
                if constraints_mod().is_dependent(constraint):
                    continue
                if name not in self.__dict__ and _is_lazy(type(self), name):
                    continue  # not given: derived from another parameter
                value = getattr(self, name)
                ok = constraint.check(value)
                if not bool(ok.all()):
                    raise ValueError(
                        f"Expected parameter {name} ({type(value).__name__} of shape {tuple(value.shape)}) of "
                        f"distribution {self!r} to satisfy the constraint {constraint!r}, but found invalid values:"
                        f"\n{value}")

    # -- shapes --------------------------------------------------------------------------------------------------
    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=()):
        return size(tuple(size(sample_shape)) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return type(self).__new__(type(self)) if _instance is None else _instance

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    # -- the interface ------------------------------------------------------------------------------------------
    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self)} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self)} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError

    def sample_n(self, n):
        return self.sample(size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return torch.exp(self.entropy())

    # -- validation ---------------------------------------------------------------------------------------------
    def _check(self, value):
        """``value`` validated against the shapes and support when validation is on (ValueError otherwise)."""
        if self._validate_args:
            self._validate_sample(value)
        return value

    def _validate_sample(self, value):
        if not isinstance(value, torch.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        k = len(self._event_shape)
        shape = tuple(value.shape)
        if shape[len(shape) - k:] != tuple(self._event_shape) or len(shape) < k:
            raise ValueError(f"The right-most size of value must match event_shape: {size(shape)} vs "
                             f"{self._event_shape}.")
        full = tuple(self._batch_shape) + tuple(self._event_shape)
        for a, b in zip(reversed(shape), reversed(full)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {size(shape)} vs "
                                 f"{size(full)}.")
        try:
            support = self.support
        except NotImplementedError:
            return
        ok = support.check(value)
        if not bool(ok.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be within the "
                f"support ({support!r}) of the distribution {self!r}, but found invalid values:\n{value}")

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        return f"{type(self).__name__}(" + ", ".join(f"{k}: {_short(self.__dict__[k])}" for k in names) + ")"


class ExponentialFamily(Distribution):
    """Distributions of the form p(x) = h(x) exp(<t(x), theta> - F(theta)). The Bregman-divergence entropy of
    PyTorch needs ``torch.autograd.grad`` (missing here): every family here gives its entropy in closed form."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        raise user_error(f"{type(self).__name__}.entropy() needs torch.autograd.grad (Bregman divergence of the log "
                         "normaliser), which MindTorch lacks; this class has no closed form here.")


def constraints_mod():
    from . import constraints
    return constraints


def same_expand(self, cls, batch_shape, _instance, names, event_dims=0):
    """Shared ``expand``: a new instance of ``cls`` whose tensors ``names`` are expanded to ``batch_shape`` (plus the
    last ``event_dims`` dimensions of each), validation state kept."""
    new = self._get_checked_instance(cls, _instance)
    batch_shape = size(batch_shape)
    for name in names:
        if name in self.__dict__:
            t = self.__dict__[name]
            tail = tuple(t.shape[len(t.shape) - event_dims:]) if event_dims else ()
            setattr(new, name, t.expand(tuple(batch_shape) + tail))
    Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new
