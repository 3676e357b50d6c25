"""Univariate continuous families with closed forms, plus Dirichlet. Each formula is the textbook one (density,
moments, entropy as in e.g. Johnson, Kotz & Balakrishnan, "Continuous Univariate Distributions"); parameter names,
supports and shapes follow PyTorch 2.13's ``torch.distributions``.
"""
import math
import numbers

import mindtorch.torch as torch
import mindtorch.torch.nn.functional as F

from . import constraints
from ._core import (Distribution, ExponentialFamily, as_params, clip_unit, eps, gamma_draws, lazy_property,
                    logits_of, normal_noise, probs_of, same_expand, size, tiny, uniform_noise, xlogy)

__all__ = ["Normal", "Uniform", "Laplace", "Cauchy", "Exponential", "Gamma", "Chi2", "Beta", "Dirichlet", "StudentT",
           "FisherSnedecor", "VonMises", "ContinuousBernoulli", "GeneralizedPareto"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _log(x):
    return math.log(x) if isinstance(x, numbers.Real) else x.log()


def _nan_like(t):
    return torch.full(tuple(t.shape), math.nan, dtype=t.dtype)


def _inf_like(t):
    return torch.full(tuple(t.shape), math.inf, dtype=t.dtype)


class _Scalar:
    """Mixin: parameters ``_param_names`` broadcast together in ``__init__``; ``expand`` expands them."""
    _param_names = ()

    def _setup(self, values, validate_args):
        tensors = as_params(*values)
        for name, t in zip(self._param_names, tensors):
            setattr(self, name, t)
        Distribution.__init__(self, size(tensors[0].shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return same_expand(self, type(self), batch_shape, _instance, self._param_names)


class Normal(_Scalar, ExponentialFamily):
    """N(loc, scale^2). ``rsample``: loc + scale * eps, eps ~ N(0, 1)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _param_names = ("loc", "scale")
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self._setup((loc, scale), validate_args)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: self.scale)
    variance = property(lambda self: self.scale.pow(2))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.loc + normal_noise(shape, self.loc.dtype) * self.scale

    def log_prob(self, value):
        self._check(value)
        return -((value - self.loc) ** 2) / (2 * self.variance) - _log(self.scale) - _LOG_SQRT_2PI

    def cdf(self, value):
        self._check(value)
        return 0.5 * (1 + torch.erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value):
        return self.loc + self.scale * torch.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + _LOG_SQRT_2PI + torch.log(self.scale)

    @property
    def _natural_params(self):
        return self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal()

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * torch.log(-math.pi / y)


class Uniform(_Scalar, Distribution):
    """Uniform on [low, high)."""
    arg_constraints = {"low": constraints.dependent(is_discrete=False, event_dim=0),
                       "high": constraints.dependent(is_discrete=False, event_dim=0)}
    has_rsample = True
    _param_names = ("low", "high")

    def __init__(self, low, high, validate_args=None):
        self._setup((low, high), validate_args)
        if self._validate_args and not bool(torch.lt(self.low, self.high).all()):
            raise ValueError("Uniform is not defined when low>= high")

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    mean = property(lambda self: (self.high + self.low) / 2)
    mode = property(lambda self: self.high * math.nan)
    stddev = property(lambda self: (self.high - self.low) / 12 ** 0.5)
    variance = property(lambda self: (self.high - self.low).pow(2) / 12)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.low + uniform_noise(shape, self.low.dtype) * (self.high - self.low)

    def log_prob(self, value):
        self._check(value)
        inside = (self.low <= value).to(self.low.dtype) * (self.high > value).to(self.low.dtype)
        return torch.log(inside) - torch.log(self.high - self.low)

    def cdf(self, value):
        self._check(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return self.low + value * (self.high - self.low)

    def entropy(self):
        return torch.log(self.high - self.low)


class Laplace(_Scalar, Distribution):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _param_names = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self._setup((loc, scale), validate_args)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    variance = property(lambda self: 2 * self.scale.pow(2))
    stddev = property(lambda self: math.sqrt(2) * self.scale)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = uniform_noise(shape, self.loc.dtype, eps(self.loc.dtype) - 1, 1)  # open at -1: log1p(-|u|) finite
        return self.loc - self.scale * u.sign() * torch.log1p(-u.abs())

    def log_prob(self, value):
        self._check(value)
        return -torch.log(2 * self.scale) - torch.abs(value - self.loc) / self.scale

    def cdf(self, value):
        self._check(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * torch.expm1(-d.abs() / self.scale)

    def icdf(self, value):
        c = value - 0.5
        return self.loc - self.scale * c.sign() * torch.log1p(-2 * c.abs())

    def entropy(self):
        return 1 + torch.log(2 * self.scale)


class Cauchy(_Scalar, Distribution):
    """Cauchy(loc, scale): density 1 / (pi scale (1 + ((x - loc) / scale)^2)); no mean or variance."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _param_names = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self._setup((loc, scale), validate_args)

    mean = property(lambda self: _nan_like(self.loc))
    mode = property(lambda self: self.loc)
    variance = property(lambda self: _inf_like(self.loc))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = uniform_noise(shape, self.loc.dtype)
        return self.loc + self.scale * torch.tan(math.pi * (u - 0.5))

    def log_prob(self, value):
        self._check(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - torch.log1p(z ** 2)

    def cdf(self, value):
        self._check(value)
        return torch.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return self.loc + self.scale * torch.tan(math.pi * (value - 0.5))

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Exponential(_Scalar, ExponentialFamily):
    """Exponential(rate): density rate exp(-rate x) on x >= 0."""
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _param_names = ("rate",)
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        self._setup((rate,), validate_args)

    mean = property(lambda self: self.rate.reciprocal())
    mode = property(lambda self: torch.zeros_like(self.rate))
    stddev = property(lambda self: self.rate.reciprocal())
    variance = property(lambda self: self.rate.pow(-2))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = uniform_noise(shape, self.rate.dtype)
        return -torch.log1p(-u) / self.rate

    def log_prob(self, value):
        self._check(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        self._check(value)
        return 1 - torch.exp(-self.rate * value)

    def icdf(self, value):
        return -torch.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - torch.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -torch.log(-x)


class Gamma(_Scalar, ExponentialFamily):
    """Gamma(concentration a, rate b): density b^a x^(a-1) exp(-b x) / Gamma(a). ``rsample`` has no gradient here
    (see ``_core.gamma_draws``)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _param_names = ("concentration", "rate")
    _mean_carrier_measure = 0
    _who = "Gamma"

    def __init__(self, concentration, rate, validate_args=None):
        self._setup((concentration, rate), validate_args)

    mean = property(lambda self: self.concentration / self.rate)
    mode = property(lambda self: ((self.concentration - 1) / self.rate).clamp(min=0))
    variance = property(lambda self: self.concentration / self.rate.pow(2))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        draws = gamma_draws(self.concentration.expand(tuple(shape)), self._who) / self.rate.expand(tuple(shape))
        return draws.clamp(min=tiny(draws.dtype))

    def log_prob(self, value):
        if not isinstance(value, torch.Tensor):
            value = torch.tensor(value, dtype=self.rate.dtype)
        self._check(value)
        a, b = self.concentration, self.rate
        return xlogy(a, b) + xlogy(a - 1, value) - b * value - torch.lgamma(a)

    def entropy(self):
        a = self.concentration
        return a - torch.log(self.rate) + torch.lgamma(a) + (1.0 - a) * torch.digamma(a)

    def cdf(self, value):
        self._check(value)
        return torch.igamma(self.concentration, self.rate * value)

    @property
    def _natural_params(self):
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x, y):
        return torch.lgamma(x + 1) + (x + 1) * torch.log(-y.reciprocal())


class Chi2(Gamma):
    """Chi-squared with ``df`` degrees of freedom: Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}
    _who = "Chi2"

    def __init__(self, df, validate_args=None):
        df, = as_params(df)
        super().__init__(0.5 * df, torch.full_like(df, 0.5), validate_args=validate_args)

    @property
    def df(self):
        return self.concentration * 2

    def expand(self, batch_shape, _instance=None):
        return same_expand(self, Chi2, batch_shape, _instance, ("concentration", "rate"))


class Beta(_Scalar, ExponentialFamily):
    """Beta(concentration1 a, concentration0 b): density x^(a-1) (1-x)^(b-1) / B(a, b) on [0, 1]."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    _param_names = ("concentration1", "concentration0")

    def __init__(self, concentration1, concentration0, validate_args=None):
        self._setup((concentration1, concentration0), validate_args)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return _simplex_mode(torch.stack([self.concentration1, self.concentration0], -1))[..., 0]

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return a * b / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        ga = gamma_draws(self.concentration1.expand(shape), "Dirichlet")
        gb = gamma_draws(self.concentration0.expand(shape), "Dirichlet")
        return (ga / (ga + gb)).clamp(min=tiny(ga.dtype), max=1 - eps(ga.dtype))

    def log_prob(self, value):
        self._check(value)
        a, b = self.concentration1, self.concentration0
        return (xlogy(a - 1, value) + xlogy(b - 1, 1 - value)
                + torch.lgamma(a + b) - torch.lgamma(a) - torch.lgamma(b))

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (torch.lgamma(a) + torch.lgamma(b) - torch.lgamma(total) - (a - 1) * torch.digamma(a)
                - (b - 1) * torch.digamma(b) + (total - 2) * torch.digamma(total))

    @property
    def _natural_params(self):
        return self.concentration1, self.concentration0

    def _log_normalizer(self, x, y):
        return torch.lgamma(x) + torch.lgamma(y) - torch.lgamma(x + y)


def _simplex_mode(c):
    """Mode of Dirichlet(c) over the last dimension: (c - 1)+ normalised. Where every c < 1 the density is unbounded
    at each vertex: PyTorch 2.13 returns the first vertex (1, 0, ..., 0) (its argmax over a row of nan), and so do
    we, so that a script sees PyTorch's value."""
    excess = (c - 1).clamp(min=0.0)
    out = excess / excess.sum(-1, keepdim=True)
    corner = (c < 1).all(-1, keepdim=True)
    first = (torch.arange(c.shape[-1]) == 0).to(out.dtype).expand(tuple(out.shape))
    return torch.where(corner, first, out)


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration alpha) over the simplex of the last dimension: density
    Gamma(sum alpha) / prod Gamma(alpha_i) prod x_i^(alpha_i - 1)."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return same_expand(self, Dirichlet, batch_shape, _instance, ("concentration",), event_dims=1)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        g = gamma_draws(self.concentration.expand(shape), "Dirichlet")
        return (g / g.sum(-1, keepdim=True)).clamp(min=tiny(g.dtype), max=1 - eps(g.dtype))

    def log_prob(self, value):
        self._check(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + torch.lgamma(c.sum(-1)) - torch.lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        return _simplex_mode(self.concentration)

    @property
    def variance(self):
        c = self.concentration
        total = c.sum(-1, keepdim=True)
        return c * (total - c) / (total.pow(2) * (total + 1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        total = c.sum(-1)
        return (torch.lgamma(c).sum(-1) - torch.lgamma(total) - (k - total) * torch.digamma(total)
                - ((c - 1.0) * torch.digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - torch.lgamma(x.sum(-1))


class StudentT(_Scalar, Distribution):
    """Student's t with ``df`` degrees of freedom, location ``loc`` and scale ``scale``."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _param_names = ("df", "loc", "scale")

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self._setup((df, loc, scale), validate_args)

    @property
    def mean(self):
        return torch.where(self.df > 1, self.loc, _nan_like(self.loc))

    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        return torch.where(df > 2, finite, torch.where(df > 1, _inf_like(df), _nan_like(df)))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        x = normal_noise(shape, self.df.dtype)
        chi2 = 2 * gamma_draws((0.5 * self.df).expand(shape), "StudentT")
        return self.loc + self.scale * x * torch.rsqrt(chi2 / self.df)

    def log_prob(self, value):
        self._check(value)
        df = self.df
        z = (value - self.loc) / self.scale
        norm = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi) + torch.lgamma(0.5 * df)
                - torch.lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * torch.log1p(z ** 2 / df) - norm

    def entropy(self):
        df = self.df
        log_beta = torch.lgamma(0.5 * df) + math.lgamma(0.5) - torch.lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (torch.digamma(0.5 * (df + 1)) - torch.digamma(0.5 * df))
                + 0.5 * df.log() + log_beta)


class FisherSnedecor(_Scalar, Distribution):
    """F(df1, df2): the ratio of two scaled chi-squared variables."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _param_names = ("df1", "df2")

    def __init__(self, df1, df2, validate_args=None):
        self._setup((df1, df2), validate_args)

    @property
    def mean(self):
        d2 = self.df2
        return torch.where(d2 > 2, d2 / (d2 - 2), _nan_like(d2))

    @property
    def mode(self):
        d1, d2 = self.df1, self.df2
        return torch.where(d1 > 2, (d1 - 2) / d1 * d2 / (d2 + 2), _nan_like(d1))

    @property
    def variance(self):
        d1, d2 = self.df1, self.df2
        v = 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))
        return torch.where(d2 > 4, v, _nan_like(d2))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        x1 = gamma_draws((0.5 * self.df1).expand(shape), "FisherSnedecor") / (0.5 * self.df1)
        x2 = gamma_draws((0.5 * self.df2).expand(shape), "FisherSnedecor") / (0.5 * self.df2)
        return (x1 / x2).clamp(min=tiny(x1.dtype))

    def log_prob(self, value):
        self._check(value)
        h1, h2 = 0.5 * self.df1, 0.5 * self.df2
        ratio = self.df1 / self.df2
        log_norm = torch.lgamma(h1 + h2) - torch.lgamma(h1) - torch.lgamma(h2)
        return log_norm + h1 * ratio.log() + (h1 - 1) * torch.log(value) - (h1 + h2) * torch.log1p(ratio * value)


def _log_bessel_i(order, x):
    """log I_order(x) for x >= 0, order 0 or 1, in float64: the power series sum_m (x/2)^(2m+n) / (m! (m+n)!)
    below x = 30, Hankel's asymptotic expansion e^x / sqrt(2 pi x) (1 - (4n^2-1)/(8x) + ...) above
    (Abramowitz & Stegun 9.6.10 and 9.7.1)."""
    x64 = x.double()
    small = x64.clamp(max=30.0)
    half = small / 2
    term = half.pow(order) / math.factorial(order)
    total = term
    for m in range(1, 80):
        term = term * half * half / (m * (m + order))
        total = total + term
    series = total.log()
    big = x64.clamp(min=30.0)
    mu = 4.0 * order * order
    corr = 1.0
    coeff = 1.0
    for k in range(1, 8):
        coeff = coeff * -(mu - (2 * k - 1) ** 2) / (k * 8.0)
        corr = corr + coeff / big.pow(k)
    asym = big - 0.5 * torch.log(2 * math.pi * big) + torch.log(corr)
    return torch.where(x64 < 30.0, series, asym).to(x.dtype)


class VonMises(_Scalar, Distribution):
    """Von Mises (circular normal) on [-pi, pi): density exp(kappa cos(x - loc)) / (2 pi I0(kappa)).
    ``sample`` by Best & Fisher's (1979) wrapped-Cauchy rejection sampler, in float64."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False
    _param_names = ("loc", "concentration")

    def __init__(self, loc, concentration, validate_args=None):
        self._setup((loc, concentration), validate_args)

    def log_prob(self, value):
        self._check(value)
        k = self.concentration
        return k * torch.cos(value - self.loc) - math.log(2 * math.pi) - _log_bessel_i(0, k)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    @lazy_property
    def variance(self):
        k = self.concentration
        return 1 - (_log_bessel_i(1, k) - _log_bessel_i(0, k)).exp()

    def sample(self, sample_shape=()):
        with torch.no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            k = self.concentration.double().expand(shape)
            tau = 1 + torch.sqrt(1 + 4 * k * k)
            rho = (tau - torch.sqrt(2 * tau)) / (2 * k)
            r = (1 + rho * rho) / (2 * rho)
            out = torch.zeros(shape, dtype=torch.float64)
            todo = torch.ones(shape, dtype=torch.bool)
            while bool(todo.any()):
                u1, u2, u3 = (uniform_noise(shape, torch.float64) for _ in range(3))
                z = torch.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = k * (r - f)
                ok = ((c * (2 - c) - u2) > 0) | ((torch.log(c / u2) + 1 - c) >= 0)
                theta = torch.sign(u3 - 0.5) * torch.acos(f.clamp(min=-1.0, max=1.0))
                take = todo & ok
                out = torch.where(take, theta, out)
                todo = todo & ~ok
            loc = self.loc.double()
            angle = torch.remainder(out + loc + math.pi, 2 * math.pi) - math.pi
            return angle.to(self.loc.dtype)


class ContinuousBernoulli(Distribution):
    """Continuous Bernoulli (Loaiza-Ganem & Cunningham 2019): density C(p) p^x (1-p)^(1-x) on [0, 1] with the
    normaliser C(p) = 2 atanh(1 - 2p) / (1 - 2p) (C = 2 at p = 1/2). Near p = 1/2 (inside ``lims``) the normaliser,
    mean and variance use their Taylor expansions in (p - 1/2)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            scalar = isinstance(probs, numbers.Number)
            (probs,) = as_params(probs)
            checking = Distribution._validate_args if validate_args is None else validate_args
            if checking and not bool(constraints.unit_interval.check(probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clip_unit(probs)
            param = self.probs
        else:
            scalar = isinstance(logits, numbers.Number)
            (self.logits,) = as_params(logits)
            param = self.logits
        self._param = param
        self._lims = lims
        super().__init__(size(()) if scalar else size(param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = same_expand(self, ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"))
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        new._lims = self._lims
        return new

    @lazy_property
    def logits(self):
        return logits_of(self.probs, binary=True)

    @lazy_property
    def probs(self):
        return clip_unit(probs_of(self.logits, binary=True))

    @property
    def param_shape(self):
        return size(self._param.shape)

    def _stable(self):
        p = self.probs
        return (p <= self._lims[0]) | (p >= self._lims[1])

    def _cut(self):
        return torch.where(self._stable(), self.probs, self._lims[0] * torch.ones_like(self.probs))

    def _log_norm(self):
        c = self._cut()
        low = torch.where(c <= 0.5, c, torch.zeros_like(c))
        high = torch.where(c >= 0.5, c, torch.ones_like(c))
        exact = torch.log(torch.abs(torch.log1p(-c) - torch.log(c))) - torch.where(
            c <= 0.5, torch.log1p(-2.0 * low), torch.log(2.0 * high - 1.0))
        d2 = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * d2) * d2
        return torch.where(self._stable(), exact, taylor)

    @property
    def mean(self):
        c = self._cut()
        exact = c / (2.0 * c - 1.0) + 1.0 / (torch.log1p(-c) - torch.log(c))
        d = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * d ** 2) * d
        return torch.where(self._stable(), exact, taylor)

    @property
    def stddev(self):
        return torch.sqrt(self.variance)

    @property
    def variance(self):
        c = self._cut()
        exact = c * (c - 1.0) / (1.0 - 2.0 * c) ** 2 + 1.0 / (torch.log1p(-c) - torch.log(c)) ** 2
        d2 = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 3.0 - 2.0 / 15.0 * d2) * d2
        return torch.where(self._stable(), exact, taylor)

    def sample(self, sample_shape=()):
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(uniform_noise(shape, self.probs.dtype))

    def log_prob(self, value):
        self._check(value)
        logits, value = torch.broadcast_tensors(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") + self._log_norm()

    def cdf(self, value):
        self._check(value)
        c = self._cut()
        exact = (torch.pow(c, value) * torch.pow(1.0 - c, 1.0 - value) + c - 1.0) / (2.0 * c - 1.0)
        inner = torch.where(self._stable(), exact, value)
        return torch.where(value <= 0.0, torch.zeros_like(value), torch.where(value >= 1.0, torch.ones_like(value),
                                                                              inner))

    def icdf(self, value):
        c = self._cut()
        exact = (torch.log1p(-c + value * (2.0 * c - 1.0)) - torch.log1p(-c)) / (torch.log(c) - torch.log1p(-c))
        return torch.where(self._stable(), exact, value)

    def entropy(self):
        log_q = torch.log1p(-self.probs)
        log_p = torch.log(self.probs)
        return self.mean * (log_q - log_p) - self._log_norm() - log_q


class GeneralizedPareto(_Scalar, Distribution):
    """Generalized Pareto(loc, scale, concentration xi): survival (1 + xi z)^(-1/xi), z = (x - loc) / scale
    (exp(-z) at xi = 0); support [loc, loc - scale / xi] for xi < 0, [loc, inf) otherwise."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True
    _param_names = ("loc", "scale", "concentration")

    def __init__(self, loc, scale, concentration, validate_args=None):
        self._setup((loc, scale, concentration), validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = torch.where(self.concentration < 0, self.loc - self.scale / self.concentration,
                            _inf_like(self.loc))
        return constraints.interval(self.loc, upper)

    def _parts(self):
        zero = torch.isclose(self.concentration, torch.zeros_like(self.concentration))
        xi = torch.where(zero, torch.ones_like(self.concentration), self.concentration)
        return zero, xi

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(uniform_noise(shape, self.loc.dtype))

    def log_prob(self, value):
        self._check(value)
        z = (value - self.loc) / self.scale
        zero, xi = self._parts()
        power = 1 / xi + 1
        tail = torch.where(power == 0, power, power * torch.log1p(xi * z))
        return -self.scale.log() - torch.where(zero, z, tail)

    def log_survival_function(self, value):
        z = (value - self.loc) / self.scale
        zero, xi = self._parts()
        return torch.where(zero, -z, -torch.log1p(z * xi) / xi)

    def log_cdf(self, value):
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        self._check(value)
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        zero, xi = self._parts()
        log_q = torch.log1p(-value)
        z = torch.where(zero, -log_q, torch.expm1(-xi * log_q) / xi)
        return self.loc + self.scale * z

    @property
    def mean(self):
        xi = self.concentration
        return torch.where(xi < 1, self.loc + self.scale / (1 - xi), _nan_like(xi))

    @property
    def variance(self):
        xi = self.concentration
        return torch.where(xi < 0.5, self.scale.pow(2) / ((1 - xi).pow(2) * (1 - 2 * xi)), _nan_like(xi))

    mode = property(lambda self: self.loc)

    def entropy(self):
        return torch.log(self.scale) + self.concentration + 1
