"""Distributions built from others: ``Independent`` (batch dimensions read as event dimensions),
``TransformedDistribution`` (a base pushed through transforms, with the change-of-variables density) and the
families defined that way (``MixtureSameFamily``: ``mixture.py``). Semantics follow PyTorch 2.13's
``torch.distributions``.
"""
import math

import mindtorch.torch as torch

from . import constraints
from . import transforms as T
from ._core import EULER_GAMMA, Distribution, as_params, eps, size, sum_last, tiny
from .continuous import Cauchy, Exponential, Gamma, Normal, Uniform

__all__ = ["Independent", "TransformedDistribution", "LogNormal", "HalfNormal", "HalfCauchy", "Gumbel", "Weibull",
           "Pareto", "Kumaraswamy", "LogisticNormal", "InverseGamma"]


class Independent(Distribution):
    """``base_distribution`` with its rightmost ``reinterpreted_batch_ndims`` batch dimensions read as event
    dimensions: ``log_prob`` and ``entropy`` are summed over them."""
    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        k = reinterpreted_batch_ndims
        if k > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{k} vs {len(base_distribution.batch_shape)}")
        full = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        cut = len(base_distribution.batch_shape) - k
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = k
        super().__init__(full[:cut], full[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = size(batch_shape)
        k = self.reinterpreted_batch_ndims
        new.base_dist = self.base_dist.expand(tuple(batch_shape) + tuple(self._event_shape[:k]))
        new.reinterpreted_batch_ndims = k
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    has_rsample = property(lambda self: self.base_dist.has_rsample)

    @property
    def has_enumerate_support(self):
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        s = self.base_dist.support
        return constraints.independent(s, self.reinterpreted_batch_ndims) if self.reinterpreted_batch_ndims else s

    mean = property(lambda self: self.base_dist.mean)
    mode = property(lambda self: self.base_dist.mode)
    variance = property(lambda self: self.base_dist.variance)

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return sum_last(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_last(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"


class TransformedDistribution(Distribution):
    """Y = t_n(... t_1(X)) for X ~ ``base_distribution``:
    log p(y) = log p_X(x) - sum_i log|det J_{t_i}|, with x recovered through the inverses."""
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, T.Transform):
            transforms = [transforms]
        elif not (isinstance(transforms, list) and all(isinstance(t, T.Transform) for t in transforms)):
            raise ValueError(f"transforms must be a Transform or a list of Transforms, but was {transforms}")
        self.transforms = list(transforms)
        whole = T.ComposeTransform(self.transforms)
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event = len(base_distribution.event_shape)
        need = whole.domain.event_dim
        if len(base_shape) < need:
            raise ValueError(f"base_distribution needs to have shape with size at least {need}, but got "
                             f"{size(base_shape)}.")
        out_shape = tuple(whole.forward_shape(size(base_shape)))
        back = tuple(whole.inverse_shape(size(out_shape)))
        if back != base_shape:
            base_distribution = base_distribution.expand(back[:len(back) - base_event])
        if need > base_event:
            base_distribution = Independent(base_distribution, need - base_event)
        self.base_dist = base_distribution
        event_dim = whole.codomain.event_dim + max(base_event - need, 0)
        cut = len(out_shape) - event_dim
        super().__init__(out_shape[:cut], out_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = size(batch_shape)
        full = tuple(batch_shape) + tuple(self._event_shape)
        for t in reversed(self.transforms):
            full = tuple(t.inverse_shape(size(full)))
        base_batch = full[:len(full) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch)
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        s = self.transforms[-1].codomain
        k = len(self._event_shape)
        return constraints.independent(s, k - s.event_dim) if k > s.event_dim else s

    has_rsample = property(lambda self: self.base_dist.has_rsample)

    def sample(self, sample_shape=()):
        with torch.no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        self._check(value)
        dim = len(self._event_shape)
        out = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            dim += t.domain.event_dim - t.codomain.event_dim
            out = out - sum_last(t.log_abs_det_jacobian(x, y), dim - t.domain.event_dim)
            y = x
        return out + sum_last(self.base_dist.log_prob(y), dim - len(self.base_dist.event_shape))

    def _monotone(self, value):
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in reversed(self.transforms):
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotone(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotone(value))
        for t in self.transforms:
            value = t(value)
        return value


class LogNormal(TransformedDistribution):
    """exp(X) for X ~ N(loc, scale^2)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(Normal(loc, scale, validate_args=validate_args), T.ExpTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(LogNormal, _instance))

    loc = property(lambda self: self.base_dist.loc)
    scale = property(lambda self: self.base_dist.scale)
    mean = property(lambda self: (self.loc + self.scale.pow(2) / 2).exp())
    mode = property(lambda self: (self.loc - self.scale.pow(2)).exp())

    @property
    def variance(self):
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc


class _Folded(TransformedDistribution):
    """|X| for X symmetric about 0: density doubled on x >= 0, -inf below."""
    support = constraints.nonnegative
    has_rsample = True

    def log_prob(self, value):
        self._check(value)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, lp, torch.full_like(lp, -math.inf))

    def cdf(self, value):
        return self.base_dist.cdf(self._check(value)) * 2 - 1  # P(|X| <= x) = 2 F(x) - 1

    def icdf(self, prob):
        return self.base_dist.icdf(0.5 * prob + 0.5)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)  # the density doubles on half the line

    scale = property(lambda self: self.base_dist.scale)


class HalfNormal(_Folded):
    """|X| for X ~ N(0, scale^2)."""
    arg_constraints = {"scale": constraints.positive}

    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=False), T.AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(HalfNormal, _instance))

    mean = property(lambda self: self.scale * math.sqrt(2 / math.pi))
    mode = property(lambda self: torch.zeros_like(self.scale))
    variance = property(lambda self: self.scale.pow(2) * (1 - 2 / math.pi))


class HalfCauchy(_Folded):
    """|X| for X ~ Cauchy(0, scale)."""
    arg_constraints = {"scale": constraints.positive}

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), T.AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(HalfCauchy, _instance))

    mean = property(lambda self: torch.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype))
    mode = property(lambda self: torch.zeros_like(self.scale))
    variance = property(lambda self: torch.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype))


class Gumbel(TransformedDistribution):
    """Gumbel(loc, scale): cdf exp(-exp(-(x - loc) / scale)); loc - scale log(-log U) for U uniform."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = as_params(loc, scale)
        dt = self.loc.dtype
        base = Uniform(torch.full_like(self.loc, tiny(dt)), torch.full_like(self.loc, 1 - eps(dt)),
                       validate_args=validate_args)
        steps = [T.ExpTransform().inv, T.AffineTransform(loc=0, scale=-torch.ones_like(self.scale)),
                 T.ExpTransform().inv, T.AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base, steps, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        self._check(value)
        z = (self.loc - value) / self.scale
        return (z - z.exp()) - self.scale.log()

    mean = property(lambda self: self.loc + self.scale * EULER_GAMMA)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: (math.pi / math.sqrt(6)) * self.scale)
    variance = property(lambda self: self.stddev.pow(2))

    def entropy(self):
        return self.scale.log() + (1 + EULER_GAMMA)


class Weibull(TransformedDistribution):
    """Weibull(scale lambda, concentration k): lambda E^(1/k) for E ~ Exponential(1)."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = as_params(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(torch.ones_like(self.scale), validate_args=validate_args)
        steps = [T.PowerTransform(exponent=self.concentration_reciprocal), T.AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, steps, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        shape = tuple(batch_shape)
        new.scale = self.scale.expand(shape)
        new.concentration = self.concentration.expand(shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base = self.base_dist.expand(shape)
        steps = [T.PowerTransform(exponent=new.concentration_reciprocal), T.AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base, steps, validate_args=False)
        new._validate_args = self._validate_args
        return new

    mean = property(lambda self: self.scale * torch.exp(torch.lgamma(1 + self.concentration_reciprocal)))

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        r = self.concentration_reciprocal
        return self.scale.pow(2) * (torch.exp(torch.lgamma(1 + 2 * r)) - torch.exp(2 * torch.lgamma(1 + r)))

    def entropy(self):
        return EULER_GAMMA * (1 - self.concentration_reciprocal) + torch.log(self.scale
                                                                              * self.concentration_reciprocal) + 1


class Pareto(TransformedDistribution):
    """Pareto(scale x_m, alpha): x_m exp(E) for E ~ Exponential(alpha)."""
    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = as_params(scale, alpha)
        super().__init__(Exponential(self.alpha, validate_args=validate_args),
                         [T.ExpTransform(), T.AffineTransform(loc=0, scale=self.scale)], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.alpha = self.alpha.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    mode = property(lambda self: self.scale)

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(a = concentration1, b = concentration0): cdf 1 - (1 - x^a)^b on [0, 1];
    (1 - U^(1/b))^(1/a) for U uniform."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = as_params(concentration1, concentration0)
        base = Uniform(torch.zeros_like(self.concentration0), torch.ones_like(self.concentration0),
                       validate_args=validate_args)
        steps = [T.PowerTransform(exponent=self.concentration0.reciprocal()),
                 T.AffineTransform(loc=1.0, scale=-1.0), T.PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, steps, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    def _moment(self, n):
        """E[X^n] = b B(1 + n/a, b) = b Gamma(1 + n/a) Gamma(b) / Gamma(1 + n/a + b)."""
        a, b = self.concentration1, self.concentration0
        t = 1 + n / a
        return b * torch.exp(torch.lgamma(t) + torch.lgamma(b) - torch.lgamma(t + b))

    mean = property(lambda self: self._moment(1))

    @property
    def mode(self):
        # PyTorch 2.13 returns nan for every parameter (its log-space formula takes log1p(-b), nan for b >= 1, and
        # it masks b < 1 and a < 1): the same here, so that a script sees PyTorch's value
        return torch.full(tuple(self.concentration1.shape), math.nan, dtype=self.concentration1.dtype)

    @property
    def variance(self):
        return self._moment(2) - self._moment(1).pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic_b = torch.digamma(b + 1) + EULER_GAMMA  # H_b = psi(b + 1) + gamma
        return (1 - 1 / b) + (1 - 1 / a) * harmonic_b - torch.log(a) - torch.log(b)


class LogisticNormal(TransformedDistribution):
    """StickBreakingTransform of N(loc, scale^2) over the last dimension: a distribution on the simplex with one more
    coordinate than ``loc``."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, T.StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(LogisticNormal, _instance))

    loc = property(lambda self: self.base_dist.base_dist.loc)
    scale = property(lambda self: self.base_dist.base_dist.scale)


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(concentration, rate)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        base._who = "InverseGamma"
        super().__init__(base, T.PowerTransform(-torch.ones_like(base.rate)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(InverseGamma, _instance))

    concentration = property(lambda self: self.base_dist.concentration)
    rate = property(lambda self: self.base_dist.rate)

    @property
    def mean(self):
        a, b = self.concentration, self.rate
        return torch.where(a > 1, b / (a - 1), torch.full_like(a, math.inf))

    mode = property(lambda self: self.rate / (self.concentration + 1))

    @property
    def variance(self):
        a, b = self.concentration, self.rate
        return torch.where(a > 2, b.pow(2) / ((a - 1).pow(2) * (a - 2)), torch.full_like(a, math.inf))

    def entropy(self):
        a = self.concentration
        return a + self.rate.log() + a.lgamma() - (1 + a) * a.digamma()
