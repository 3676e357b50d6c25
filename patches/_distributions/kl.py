"""``kl_divergence(p, q)`` = E_p[log p(x) - log q(x)] and ``register_kl``. The registered pairs are PyTorch 2.13's;
each closed form is derived from the two densities (cross-entropy minus entropy), inf where p's support is not inside
q's. Dispatch picks the most specific registered pair by the classes' method resolution order.
"""
import math
import warnings

import mindtorch.torch as torch
import mindtorch.torch.nn.functional as F

from ._core import EULER_GAMMA, Distribution, ExponentialFamily, sum_last, user_error
from .composite import (Gumbel, HalfNormal, Independent, Pareto, TransformedDistribution)
from .continuous import (Beta, Cauchy, ContinuousBernoulli, Dirichlet, Exponential, Gamma, Laplace, Normal, Uniform)
from .discrete import Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical, Poisson
from .multivariate import LowRankMultivariateNormal, MultivariateNormal, _half_logdet, _solve_lower

__all__ = ["register_kl", "kl_divergence"]

_REGISTRY = {}
_CHOICE = {}


def register_kl(type_p, type_q):
    """Decorator: ``fn(p, q)`` computes KL(p || q) for instances of ``type_p`` and ``type_q`` (subclasses too)."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def deco(fn):
        _REGISTRY[type_p, type_q] = fn
        _CHOICE.clear()
        return fn
    return deco


def _choose(tp, tq):
    mro_p, mro_q = tp.__mro__, tq.__mro__
    found = [(mro_p.index(a), mro_q.index(b), fn) for (a, b), fn in _REGISTRY.items() if a in mro_p and b in mro_q]
    if not found:
        return NotImplemented
    by_p = min(found, key=lambda t: (t[0], t[1]))
    by_q = min(found, key=lambda t: (t[1], t[0]))
    if by_p[2] is not by_q[2]:
        warnings.warn(f"Ambiguous kl_divergence({tp.__name__}, {tq.__name__}). Please register_kl"
                      f"({mro_p[by_p[0]].__name__}, {mro_q[by_q[1]].__name__})", RuntimeWarning)
    return by_p[2]


def kl_divergence(p, q):
    """KL(p || q), of p's batch shape (q's broadcast). Raises NotImplementedError for an unregistered pair."""
    key = (type(p), type(q))
    if key not in _CHOICE:
        _CHOICE[key] = _choose(*key)
    fn = _CHOICE[key]
    if fn is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                                  f"{type(q).__name__}")
    return fn(p, q)


def _inf_where(value, mask):
    return torch.where(mask, torch.full_like(value, math.inf), value)


def _xlogx(x):
    return torch.where(x == 0, torch.zeros_like(x), x * torch.log(torch.where(x == 0, torch.ones_like(x), x)))


# -- same family ------------------------------------------------------------------------------------------------------
@register_kl(Normal, Normal)
def _normal_normal(p, q):
    r2 = (p.scale / q.scale).pow(2)
    shift = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (r2 + shift - 1 - r2.log())


@register_kl(Bernoulli, Bernoulli)
def _bernoulli_bernoulli(p, q):
    # p log(p/q) = p (softplus(-lq) - softplus(-lp)); (1-p) log((1-p)/(1-q)) = (1-p) (softplus(lq) - softplus(lp))
    one = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    one = torch.where(p.probs == 0, torch.zeros_like(one), _inf_where(one, q.probs == 0))
    zero = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    zero = torch.where(p.probs == 1, torch.zeros_like(zero), _inf_where(zero, q.probs == 1))
    return one + zero


@register_kl(Beta, Beta)
def _beta_beta(p, q):
    a, b, c, d = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    s_p, s_q = a + b, c + d
    log_b_ratio = (torch.lgamma(c) + torch.lgamma(d) - torch.lgamma(s_q)) - (
        torch.lgamma(a) + torch.lgamma(b) - torch.lgamma(s_p))
    return (log_b_ratio + (a - c) * torch.digamma(a) + (b - d) * torch.digamma(b)
            + (s_q - s_p) * torch.digamma(s_p))


@register_kl(Binomial, Binomial)
def _binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    per_trial = p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p()
    return _inf_where(p.total_count * per_trial, p.total_count > q.total_count)


@register_kl(Categorical, Categorical)
def _categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _inf_where(t, (q.probs == 0).expand(tuple(t.shape)))
    t = torch.where((p.probs == 0).expand(tuple(t.shape)), torch.zeros_like(t), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _onehot_onehot(p, q):
    return _categorical_categorical(p._categorical, q._categorical)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _cb_cb(p, q):
    return (p.mean * (p.logits - q.logits) + p._log_norm() + torch.log1p(-p.probs)
            - q._log_norm() - torch.log1p(-q.probs))


@register_kl(Dirichlet, Dirichlet)
def _dirichlet_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    a0, b0 = a.sum(-1), b.sum(-1)
    log_norm = torch.lgamma(a0) - torch.lgamma(b0) - (torch.lgamma(a) - torch.lgamma(b)).sum(-1)
    return log_norm + ((a - b) * (torch.digamma(a) - torch.digamma(a0).unsqueeze(-1))).sum(-1)


@register_kl(Exponential, Exponential)
def _exponential_exponential(p, q):
    r = q.rate / p.rate
    return r - 1 - r.log()


@register_kl(ExponentialFamily, ExponentialFamily)
def _expfamily_expfamily(p, q):
    raise user_error(f"kl_divergence({type(p).__name__}, {type(q).__name__}) needs torch.autograd.grad (Bregman "
                     "divergence of the log normaliser), which MindTorch lacks; no closed form is registered.")


@register_kl(Gamma, Gamma)
def _gamma_gamma(p, q):
    a, r, c, s = p.concentration, p.rate, q.concentration, q.rate
    return (c * torch.log(r / s) + torch.lgamma(c) - torch.lgamma(a) + (a - c) * torch.digamma(a)
            + (s - r) * (a / r))


@register_kl(Gumbel, Gumbel)
def _gumbel_gumbel(p, q):
    ratio = p.scale / q.scale
    shift = (p.loc - q.loc) / q.scale
    # E_p[exp(-(x - mu_q) / beta_q)] = exp(-shift) Gamma(1 + ratio)
    return -ratio.log() + shift + ratio * EULER_GAMMA + torch.exp(-shift + torch.lgamma(1 + ratio)) - (1 + EULER_GAMMA)


@register_kl(Geometric, Geometric)
def _geometric_geometric(p, q):
    return -p.entropy() - torch.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _halfnormal_halfnormal(p, q):
    return _normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _laplace_laplace(p, q):
    ratio = p.scale / q.scale
    gap = (p.loc - q.loc).abs()
    return -ratio.log() + gap / q.scale + ratio * torch.exp(-gap / p.scale) - 1


@register_kl(MultivariateNormal, MultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _mvn_mvn(p, q):
    """0.5 (tr(Sq^-1 Sp) + |Lq^-1 (mu_q - mu_p)|^2 - n) + log|Lq| - log|Lp|."""
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    n = p.event_shape[0]
    trace = _solve_lower(Lq, Lp).pow(2).sum((-2, -1))
    maha = _solve_lower(Lq, (q.loc - p.loc).unsqueeze(-1)).squeeze(-1).pow(2).sum(-1)
    out = _half_logdet(Lq) - _half_logdet(Lp) + 0.5 * (trace + maha - n)
    return out.expand(tuple(p.batch_shape)) if len(p.batch_shape) else out


@register_kl(Pareto, Pareto)
def _pareto_pareto(p, q):
    a, c = p.alpha, q.alpha
    out = c * torch.log(p.scale / q.scale) - torch.log(c / a) + c / a - 1
    return _inf_where(out, p.scale < q.scale)


@register_kl(Poisson, Poisson)
def _poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise NotImplementedError
    extra = len(p.event_shape) - len(p.base_dist.event_shape)
    return sum_last(kl_divergence(p.base_dist, q.base_dist), extra)


@register_kl(Uniform, Uniform)
def _uniform_uniform(p, q):
    out = torch.log((q.high - q.low) / (p.high - p.low))
    return _inf_where(out, (q.low > p.low) | (q.high < p.high))


@register_kl(Independent, Independent)
def _independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_last(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Cauchy, Cauchy)
def _cauchy_cauchy(p, q):
    # Chyzak & Nielsen (2019): log(((s_p + s_q)^2 + (m_p - m_q)^2) / (4 s_p s_q))
    return torch.log((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)) - torch.log(4 * p.scale * q.scale)


# -- across families: cross-entropy E_p[-log q] minus p's entropy ----------------------------------------------------
def _infinite(p, q):
    """p puts mass where q has none."""
    return torch.full(tuple(p.batch_shape), math.inf, dtype=_dtype_of(p))


def _dtype_of(d):
    for name in ("loc", "rate", "probs", "concentration1", "low", "scale", "alpha", "concentration"):
        v = getattr(d, name, None)
        if isinstance(v, torch.Tensor):
            return v.dtype
    return torch.get_default_dtype()


for _p, _qs in ((Beta, (Pareto,)), (ContinuousBernoulli, (Pareto,)),
                (Exponential, (Beta, ContinuousBernoulli, Pareto, Uniform)),
                (Gamma, (Beta, ContinuousBernoulli, Pareto, Uniform)),
                (Gumbel, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Laplace, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Normal, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Pareto, (Beta, ContinuousBernoulli, Uniform)), (Poisson, (Bernoulli, Binomial))):
    for _q in _qs:
        register_kl(_p, _q)(_infinite)


def _normal_cross(q, mean, second_moment):
    """E_p[-log N(x; mu, s^2)] from p's mean and E[x^2]."""
    return 0.5 * math.log(2 * math.pi) + q.scale.log() + (second_moment - 2 * q.loc * mean + q.loc.pow(2)) / (
        2 * q.scale.pow(2))


def _exponential_cross(q, mean):
    return -q.rate.log() + q.rate * mean


def _gamma_cross(q, mean, mean_log):
    c, r = q.concentration, q.rate
    return torch.lgamma(c) - c * r.log() - (c - 1) * mean_log + r * mean


def _cb_cross(q, mean):
    return -mean * q.logits - torch.log1p(-q.probs) - q._log_norm()


@register_kl(Bernoulli, Poisson)
def _bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, ContinuousBernoulli)
def _beta_cb(p, q):
    return -p.entropy() + _cb_cross(q, p.mean)


@register_kl(Beta, Exponential)
def _beta_exponential(p, q):
    return -p.entropy() + _exponential_cross(q, p.mean)


@register_kl(Beta, Gamma)
def _beta_gamma(p, q):
    a, b = p.concentration1, p.concentration0
    return -p.entropy() + _gamma_cross(q, p.mean, torch.digamma(a) - torch.digamma(a + b))


@register_kl(Beta, Normal)
def _beta_normal(p, q):
    m = p.mean
    return -p.entropy() + _normal_cross(q, m, p.variance + m.pow(2))


@register_kl(Beta, Uniform)
def _beta_uniform(p, q):
    out = -p.entropy() + (q.high - q.low).log()
    return _inf_where(out, (q.low > 0) | (q.high < 1))


@register_kl(ContinuousBernoulli, Exponential)
def _cb_exponential(p, q):
    return -p.entropy() + _exponential_cross(q, p.mean)


@register_kl(ContinuousBernoulli, Normal)
def _cb_normal(p, q):
    m = p.mean
    return -p.entropy() + _normal_cross(q, m, p.variance + m.pow(2))


@register_kl(ContinuousBernoulli, Uniform)
def _cb_uniform(p, q):
    out = -p.entropy() + (q.high - q.low).log()
    return _inf_where(out, (q.low > 0) | (q.high < 1))


@register_kl(Exponential, Gamma)
def _exponential_gamma(p, q):
    # E[log x] = -gamma - log(rate)
    return -p.entropy() + _gamma_cross(q, p.mean, -EULER_GAMMA - p.rate.log())


@register_kl(Exponential, Gumbel)
def _exponential_gumbel(p, q):
    # E_p[exp(-(x - mu) / b)] = exp(mu / b) lambda / (lambda + 1 / b)
    lam, b, mu = p.rate, q.scale, q.loc
    cross = b.log() + (p.mean - mu) / b + torch.exp(mu / b) * lam / (lam + 1 / b)
    return -p.entropy() + cross


@register_kl(Exponential, Normal)
def _exponential_normal(p, q):
    return -p.entropy() + _normal_cross(q, p.mean, 2 * p.rate.pow(-2))


@register_kl(Gamma, Exponential)
def _gamma_exponential(p, q):
    return -p.entropy() + _exponential_cross(q, p.mean)


@register_kl(Gamma, Gumbel)
def _gamma_gumbel(p, q):
    # E_p[exp(-x / b)] = (1 + 1 / (rate b))^-a
    a, r, b, mu = p.concentration, p.rate, q.scale, q.loc
    cross = b.log() + (p.mean - mu) / b + torch.exp(mu / b) * (1 + (r * b).reciprocal()).pow(-a)
    return -p.entropy() + cross


@register_kl(Gamma, Normal)
def _gamma_normal(p, q):
    a, r = p.concentration, p.rate
    return -p.entropy() + _normal_cross(q, a / r, a * (a + 1) / r.pow(2))


@register_kl(Gumbel, Normal)
def _gumbel_normal(p, q):
    m = p.mean
    return -p.entropy() + _normal_cross(q, m, p.variance + m.pow(2))


@register_kl(Laplace, Normal)
def _laplace_normal(p, q):
    return -p.entropy() + _normal_cross(q, p.loc, 2 * p.scale.pow(2) + p.loc.pow(2))


@register_kl(Normal, Gumbel)
def _normal_gumbel(p, q):
    # E_p[exp(-(x - mu) / b)] = exp(-(m - mu) / b + s^2 / (2 b^2))
    b = q.scale
    cross = b.log() + (p.loc - q.loc) / b + torch.exp(-(p.loc - q.loc) / b + 0.5 * (p.scale / b).pow(2))
    return -p.entropy() + cross


@register_kl(Normal, Laplace)
def _normal_laplace(p, q):
    # E_p|x - mu| for x ~ N(m, s^2): s sqrt(2/pi) exp(-d^2 / (2 s^2)) + d erf(d / (s sqrt 2)), d = m - mu
    d = p.loc - q.loc
    mean_abs = p.scale * math.sqrt(2 / math.pi) * torch.exp(-0.5 * (d / p.scale).pow(2)) + d * torch.erf(
        d / (p.scale * math.sqrt(2)))
    return -p.entropy() + torch.log(2 * q.scale) + mean_abs / q.scale


@register_kl(Pareto, Exponential)
def _pareto_exponential(p, q):
    return _inf_where(-p.entropy() + _exponential_cross(q, p.mean), p.alpha <= 1)


@register_kl(Pareto, Gamma)
def _pareto_gamma(p, q):
    mean_log = p.scale.log() + p.alpha.reciprocal()  # log x = log scale + Exponential(alpha)
    return _inf_where(-p.entropy() + _gamma_cross(q, p.mean, mean_log), p.alpha <= 1)


@register_kl(Pareto, Normal)
def _pareto_normal(p, q):
    m = p.mean
    return _inf_where(-p.entropy() + _normal_cross(q, m, p.variance + m.pow(2)), p.alpha <= 2)


def _uniform_mean_log(p):
    """E[log x] for x ~ U(low, high), 0 < low: (h log h - l log l) / (h - l) - 1."""
    w = p.high - p.low
    return (_xlogx(p.high) - _xlogx(p.low)) / w - 1


@register_kl(Uniform, Beta)
def _uniform_beta(p, q):
    c, d = q.concentration1, q.concentration0
    w = p.high - p.low
    mean_log = _uniform_mean_log(p)
    mean_log1m = -(_xlogx(1 - p.high) - _xlogx(1 - p.low)) / w - 1  # E[log(1 - x)]
    cross = torch.lgamma(c) + torch.lgamma(d) - torch.lgamma(c + d) - (c - 1) * mean_log - (d - 1) * mean_log1m
    return _inf_where(-p.entropy() + cross, (p.high > 1) | (p.low < 0))


@register_kl(Uniform, ContinuousBernoulli)
def _uniform_cb(p, q):
    return _inf_where(-p.entropy() + _cb_cross(q, p.mean), (p.high > 1) | (p.low < 0))


@register_kl(Uniform, Exponential)
def _uniform_exponential(p, q):
    return _inf_where(-p.entropy() + _exponential_cross(q, p.mean), p.low < 0)


@register_kl(Uniform, Gamma)
def _uniform_gamma(p, q):
    return _inf_where(-p.entropy() + _gamma_cross(q, p.mean, _uniform_mean_log(p)), p.low < 0)


@register_kl(Uniform, Gumbel)
def _uniform_gumbel(p, q):
    b, mu = q.scale, q.loc
    w = p.high - p.low
    # E_p[exp(-(x - mu) / b)] = b (exp(-(l - mu)/b) - exp(-(h - mu)/b)) / w
    e = b * (torch.exp(-(p.low - mu) / b) - torch.exp(-(p.high - mu) / b)) / w
    return -p.entropy() + b.log() + (p.mean - mu) / b + e


@register_kl(Uniform, Normal)
def _uniform_normal(p, q):
    m = p.mean
    return -p.entropy() + _normal_cross(q, m, p.variance + m.pow(2))


@register_kl(Uniform, Pareto)
def _uniform_pareto(p, q):
    a, s = q.alpha, q.scale
    cross = -a.log() - a * s.log() + (a + 1) * _uniform_mean_log(p)
    return _inf_where(-p.entropy() + cross, p.low < s)
