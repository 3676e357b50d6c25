"""Discrete families (Bernoulli, Categorical, OneHotCategorical, Binomial, Multinomial, Poisson, Geometric,
NegativeBinomial) and their continuous relaxations (RelaxedBernoulli, RelaxedOneHotCategorical; Maddison et al. 2017,
Jang et al. 2017). Parameters are given as ``probs`` or ``logits`` (exactly one), the other derived lazily, as in
PyTorch 2.13's ``torch.distributions``.
"""
import math
import numbers

import mindtorch.torch as torch
import mindtorch.torch.nn.functional as F

from . import constraints
from . import transforms as T
from ._core import (Distribution, ExponentialFamily, as_params, clip_unit, lazy_property, logits_of, numel,
                    probs_of, same_expand, size, tiny, uniform_noise, user_error, xlogy)
from .composite import TransformedDistribution
from .continuous import Gamma

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Binomial",
           "Multinomial", "Poisson", "Geometric", "NegativeBinomial", "RelaxedBernoulli", "LogitRelaxedBernoulli",
           "RelaxedOneHotCategorical", "ExpRelaxedCategorical"]


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class _Binary:
    """Mixin for families with one success probability per batch element (``probs`` in [0, 1] or log-odds
    ``logits``), optionally broadcast against ``extra`` parameters set before."""

    def _binary_setup(self, probs, logits, extra=()):
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        scalar = isinstance(given, numbers.Number)
        values = as_params(*extra, given)
        name = "probs" if probs is not None else "logits"
        setattr(self, name, values[-1])
        self._param = values[-1]
        return values[:-1], size(()) if scalar and not extra else size(self._param.shape)

    @lazy_property
    def logits(self):
        return logits_of(self.probs, binary=True)

    @lazy_property
    def probs(self):
        return probs_of(self.logits, binary=True)

    @property
    def param_shape(self):
        return size(self._param.shape)


class Bernoulli(_Binary, ExponentialFamily):
    """Bernoulli(probs): 1 with probability ``probs``, else 0."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        _, batch = self._binary_setup(probs, logits)
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = same_expand(self, Bernoulli, batch_shape, _instance, ("probs", "logits"))
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    mean = property(lambda self: self.probs)
    variance = property(lambda self: self.probs * (1 - self.probs))

    @property
    def mode(self):
        m = (self.probs >= 0.5).to(self.probs.dtype)
        return torch.where(self.probs == 0.5, torch.full_like(m, math.nan), m)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with torch.no_grad():
            return torch.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        self._check(value)
        logits, value = torch.broadcast_tensors(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = torch.arange(2, dtype=self._param.dtype).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    @property
    def _natural_params(self):
        return (torch.logit(self.probs),)

    def _log_normalizer(self, x):
        return torch.log1p(torch.exp(x))


class Categorical(Distribution):
    """One of K categories (the last dimension of ``probs``/``logits``); ``probs`` need not be normalised,
    ``logits`` are unnormalised log-probabilities."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self._param = self.probs
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            self._param = self.logits
        self._num_events = self._param.shape[-1]
        batch = tuple(self._param.shape[:-1]) if self._param.dim() > 1 else ()
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = same_expand(self, Categorical, batch_shape, _instance, ("probs", "logits"), event_dims=1)
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return logits_of(self.probs)

    @lazy_property
    def probs(self):
        return probs_of(self.logits)

    @property
    def param_shape(self):
        return size(self._param.shape)

    mean = property(lambda self: torch.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype))
    mode = property(lambda self: self.probs.argmax(-1))
    variance = property(lambda self: torch.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype))

    def sample(self, sample_shape=()):
        sample_shape = size(sample_shape)
        with torch.no_grad():
            table = self.probs.reshape(-1, self._num_events)
            n = numel(sample_shape)
            draws = torch.multinomial(table, n, True).T  # (n, rows)
            return draws.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        self._check(value)
        index = value.long().unsqueeze(-1)
        index, table = torch.broadcast_tensors(index, self.logits)
        return table.gather(-1, index[..., :1]).squeeze(-1)

    def entropy(self):
        logits = torch.clamp(self.logits, min=torch.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = torch.arange(self._num_events, dtype=torch.long).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class OneHotCategorical(Distribution):
    """Categorical with one-hot vectors of length K as values."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, size(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    _param = property(lambda self: self._categorical._param)
    probs = property(lambda self: self._categorical.probs)
    logits = property(lambda self: self._categorical.logits)
    mean = property(lambda self: self._categorical.probs)
    param_shape = property(lambda self: self._categorical.param_shape)

    @property
    def mode(self):
        p = self._categorical.probs
        return F.one_hot(p.argmax(-1), p.shape[-1]).to(p.dtype)

    variance = property(lambda self: self._categorical.probs * (1 - self._categorical.probs))

    def sample(self, sample_shape=()):
        index = self._categorical.sample(sample_shape)
        return F.one_hot(index, self._categorical._num_events).to(self._categorical.probs.dtype)

    def log_prob(self, value):
        self._check(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        k = self._event_shape[0]
        values = torch.eye(k, dtype=self._param.dtype).reshape((k,) + (1,) * len(self._batch_shape) + (k,))
        return values.expand((k,) + tuple(self._batch_shape) + (k,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose ``rsample`` passes the gradient of ``probs`` straight through the one-hot draw
    (Bengio et al. 2013)."""
    has_rsample = True

    def rsample(self, sample_shape=()):
        draw = self.sample(sample_shape)
        p = self._categorical.probs
        return draw + (p - p.detach())


class Binomial(_Binary, Distribution):
    """Successes in ``total_count`` independent trials of probability ``probs``."""
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        (n,), batch = self._binary_setup(probs, logits, extra=(total_count,))
        self.total_count = n.to(self._param.dtype)
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = same_expand(self, Binomial, batch_shape, _instance, ("total_count", "probs", "logits"))
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    mean = property(lambda self: self.total_count * self.probs)
    mode = property(lambda self: ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count))
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        if not hasattr(torch, "binomial"):
            raise user_error("Binomial.sample() needs torch.binomial, which MindTorch lacks (log_prob, mean, variance "
                             "and entropy work).")
        with torch.no_grad():
            return torch.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        self._check(value)
        n, logits = self.total_count, self.logits
        log_choose = torch.lgamma(n + 1) - torch.lgamma(value + 1) - torch.lgamma(n - value + 1)
        # log(1 + e^l) * n written without overflow: n (max(l, 0) + log1p(e^-|l|))
        softplus_l = (logits.clamp(min=0) + logits - logits.clamp(max=0)) / 2 + torch.log1p(torch.exp(-logits.abs()))
        return log_choose + value * logits - n * softplus_l

    def entropy(self):
        n = int(self.total_count.max())
        if not bool((self.total_count == n).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        lp = self.log_prob(self.enumerate_support(False))
        return -(torch.exp(lp) * lp).sum(0)

    def enumerate_support(self, expand=True):
        n = int(self.total_count.max())
        if not bool((self.total_count == n).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = torch.arange(1 + n, dtype=self._param.dtype).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class Multinomial(Distribution):
    """Counts of ``total_count`` Categorical draws over K categories."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, numbers.Integral):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self._categorical.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        Distribution.__init__(new, size(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    _param = property(lambda self: self._categorical._param)
    probs = property(lambda self: self._categorical.probs)
    logits = property(lambda self: self._categorical.logits)
    param_shape = property(lambda self: self._categorical.param_shape)
    mean = property(lambda self: self.probs * self.total_count)
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))

    def sample(self, sample_shape=()):
        sample_shape = size(sample_shape)
        with torch.no_grad():
            draws = self._categorical.sample(size((self.total_count,) + tuple(sample_shape)))
            counts = F.one_hot(draws, self._categorical._num_events).sum(0)
            return counts.to(self.probs.dtype)

    def log_prob(self, value):
        self._check(value)
        logits, value = torch.broadcast_tensors(self.logits, value)
        # 0 * log(0) counts as 0: a category of probability 0 that was not drawn
        logits = torch.where((value == 0) & (logits == -math.inf), torch.zeros_like(logits), logits)
        return torch.lgamma(value.sum(-1) + 1) - torch.lgamma(value + 1).sum(-1) + (logits * value).sum(-1)

    def entropy(self):
        n = torch.tensor(float(self.total_count), dtype=self.probs.dtype)
        per_trial = n * self._categorical.entropy() - torch.lgamma(n + 1)
        counts = self._binomial.enumerate_support(expand=False)[1:]
        p_counts = torch.exp(self._binomial.log_prob(counts))
        correction = (p_counts * torch.lgamma(counts + 1)).sum(0).sum(-1)
        return per_trial + correction


class Poisson(ExponentialFamily):
    """Poisson(rate): P(k) = rate^k e^-rate / k!."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = as_params(rate)
        batch = size(()) if isinstance(rate, numbers.Number) else size(self.rate.shape)
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return same_expand(self, Poisson, batch_shape, _instance, ("rate",))

    mean = property(lambda self: self.rate)
    mode = property(lambda self: self.rate.floor())
    variance = property(lambda self: self.rate)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with torch.no_grad():
            return torch.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        self._check(value)
        rate, value = torch.broadcast_tensors(self.rate, value)
        return xlogy(value, rate) - rate - torch.lgamma(value + 1)

    @property
    def _natural_params(self):
        return (torch.log(self.rate),)

    def _log_normalizer(self, x):
        return torch.exp(x)


class Geometric(_Binary, Distribution):
    """Failures before the first success, success probability ``probs`` (> 0): P(k) = (1 - p)^k p."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _, batch = self._binary_setup(probs, logits)
        super().__init__(batch, validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                             f"{tuple(self.probs.shape)}) of distribution {self!r} to satisfy the constraint "
                             f"{constraints.unit_interval!r}, but found invalid values:\n{self.probs}")

    def expand(self, batch_shape, _instance=None):
        new = same_expand(self, Geometric, batch_shape, _instance, ("probs", "logits"))
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    mean = property(lambda self: 1.0 / self.probs - 1.0)
    mode = property(lambda self: torch.zeros_like(self.probs))
    variance = property(lambda self: (1.0 / self.probs - 1.0) / self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with torch.no_grad():
            u = uniform_noise(shape, self.probs.dtype).clamp(min=tiny(self.probs.dtype))
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        self._check(value)
        value, p = torch.broadcast_tensors(value, self.probs)
        p_fail = torch.where((p == 1) & (value == 0), torch.zeros_like(p), p)  # 0 * log(0) = 0 at p = 1, k = 0
        return value * (-p_fail).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs


class NegativeBinomial(_Binary, Distribution):
    """Successes before ``total_count`` failures, success probability ``probs``: a Gamma-Poisson mixture."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (n,), batch = self._binary_setup(probs, logits, extra=(total_count,))
        self.total_count = n.to(self._param.dtype)
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = same_expand(self, NegativeBinomial, batch_shape, _instance, ("total_count", "probs", "logits"))
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    mean = property(lambda self: self.total_count * torch.exp(self.logits))
    mode = property(lambda self: ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0))
    variance = property(lambda self: self.mean / torch.sigmoid(-self.logits))

    @lazy_property
    def _gamma(self):
        return Gamma(self.total_count, torch.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=()):
        with torch.no_grad():
            return torch.poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value):
        self._check(value)
        n, l = self.total_count, self.logits
        unnorm = n * F.logsigmoid(-l) + value * F.logsigmoid(l)
        log_norm = -torch.lgamma(n + value) + torch.lgamma(1.0 + value) + torch.lgamma(n)
        log_norm = torch.where(n + value == 0, torch.zeros_like(log_norm), log_norm)
        return unnorm - log_norm


class LogitRelaxedBernoulli(_Binary, Distribution):
    """The logit of a RelaxedBernoulli sample: (log U - log(1 - U) + logits) / temperature."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        _, batch = self._binary_setup(probs, logits)
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = same_expand(self, LogitRelaxedBernoulli, batch_shape, _instance, ("probs", "logits"))
        new.temperature = self.temperature
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        u = clip_unit(uniform_noise(shape, self.logits.dtype))
        return (u.log() - (-u).log1p() + self.logits) / self.temperature

    def log_prob(self, value):
        self._check(value)
        logits, value = torch.broadcast_tensors(self.logits, value)
        d = logits - value * self.temperature
        return self.temperature.log() + d - 2 * F.softplus(d)


class RelaxedBernoulli(TransformedDistribution):
    """Binary Concrete on (0, 1): sigmoid of a LogitRelaxedBernoulli draw."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, T.SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(RelaxedBernoulli, _instance))

    temperature = property(lambda self: self.base_dist.temperature)
    logits = property(lambda self: self.base_dist.logits)
    probs = property(lambda self: self.base_dist.probs)


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical draw: log-softmax((logits + Gumbel noise) / temperature)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, size(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    _param = property(lambda self: self._categorical._param)
    param_shape = property(lambda self: self._categorical.param_shape)
    logits = property(lambda self: self._categorical.logits)
    probs = property(lambda self: self._categorical.probs)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        u = clip_unit(uniform_noise(shape, self.logits.dtype))
        scores = (self.logits - (-u.log()).log()) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        self._check(value)
        logits, value = torch.broadcast_tensors(self.logits, value)
        temp = self.temperature  # (torch.as_tensor of a Parameter leaves MindSpore's tape: no gradient)
        if not isinstance(temp, torch.Tensor):
            temp = torch.tensor(float(temp), dtype=logits.dtype)
        # log density of the log-Concrete (Maddison et al. 2017, eq. 26): log (K-1)! + (K-1) log t
        #   + sum_k (l_k - t y_k) - K logsumexp_k (l_k - t y_k)
        z = logits - value * temp
        return math.lgamma(k) + (k - 1) * temp.log() + z.sum(-1) - k * z.logsumexp(dim=-1)


class RelaxedOneHotCategorical(TransformedDistribution):
    """Concrete / Gumbel-softmax on the simplex: exp of an ExpRelaxedCategorical draw."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, T.ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(RelaxedOneHotCategorical, _instance))

    def rsample(self, sample_shape=()):
        # MindSpore's float32 exp/logsumexp on CPU are ~1e-5 relative off: exp of a log-softmax summed up to 5e-6
        # off 1, outside the simplex constraint's 1e-6, so log_prob(sample) raised under validation. Dividing by
        # the sum changes no gradient (the sum is identically 1 in exact arithmetic).
        x = super().rsample(sample_shape)
        return x / x.sum(-1, keepdim=True)

    def sample(self, sample_shape=()):
        with torch.no_grad():
            return self.rsample(sample_shape)

    temperature = property(lambda self: self.base_dist.temperature)
    logits = property(lambda self: self.base_dist._categorical.logits)
    probs = property(lambda self: self.base_dist._categorical.probs)
