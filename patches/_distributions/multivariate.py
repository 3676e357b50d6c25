"""Matrix-parameterised families: MultivariateNormal, LowRankMultivariateNormal, Wishart, LKJCholesky. Every density
is evaluated through a lower Cholesky factor L of the covariance (Sigma = L L^T): log|Sigma| = 2 sum log diag L and
the Mahalanobis term |L^-1 (x - mu)|^2 by a triangular solve. Shapes and parameter names follow PyTorch 2.13.
"""
import math

import mindtorch.torch as torch

from . import constraints
from ._core import Distribution, as_params, bshape, gamma_draws, lazy_property, normal_noise, size, tiny
from .continuous import Beta

__all__ = ["MultivariateNormal", "LowRankMultivariateNormal", "Wishart", "LKJCholesky"]

_LOG_2PI = math.log(2 * math.pi)


def _solve_lower(L, b):
    """L^-1 b for lower-triangular L (..., n, n) and b (..., n, m), batch dimensions broadcast."""
    lead = bshape(L.shape[:-2], b.shape[:-2])
    L = L.expand(tuple(lead) + tuple(L.shape[-2:]))
    b = b.expand(tuple(lead) + tuple(b.shape[-2:]))
    return torch.linalg.solve_triangular(L, b, upper=False)


def _mahalanobis(L, diff):
    """|L^-1 diff|^2 over the last dimension (diff (..., n), L (..., n, n))."""
    return _solve_lower(L, diff.unsqueeze(-1)).squeeze(-1).pow(2).sum(-1)


def _half_logdet(L):
    return torch.diagonal(L, dim1=-2, dim2=-1).log().sum(-1)


def _eye_like(L):
    n = L.shape[-1]
    return torch.eye(n, dtype=L.dtype).expand(tuple(L.shape))


def _inverse_from_tril(L):
    """(L L^T)^-1 = L^-T L^-1."""
    inv = _solve_lower(L, _eye_like(L))
    return inv.transpose(-2, -1) @ inv


def _chol(m):
    """Lower Cholesky factor of ``m`` (..., n, n). With grad mode on, by the Cholesky-Banachiewicz
    recurrence in tensor operations (column j: L_jj = sqrt(m_jj - sum_k<j L_jk^2), L_ij = (m_ij - sum_k<j L_ik L_jk)
    / L_jj), so that autograd differentiates it: MindSpore has no CPU kernel for CholeskyGrad."""
    if not torch.is_grad_enabled():  # (MindTorch: a computed tensor's requires_grad does not say it is on the tape)
        out = torch.linalg.cholesky(m)
        return out[0] if isinstance(out, tuple) else out
    m = 0.5 * (m + m.transpose(-2, -1))  # as PyTorch: the gradient w.r.t. a symmetric input is symmetric
    n = m.shape[-1]
    cols = []  # cols[j]: column j of L, shape (..., n), zero above the diagonal
    for j in range(n):
        c = m[..., :, j]
        for k in range(j):
            c = c - cols[k] * cols[k][..., j:j + 1]
        mask = (torch.arange(n) >= j).to(m.dtype)
        pivot = c[..., j:j + 1].clamp(min=tiny(m.dtype)).sqrt()
        cols.append(c * mask / pivot)
    return torch.stack(cols, -1)


class MultivariateNormal(Distribution):
    """N(loc, Sigma) with Sigma given as ``covariance_matrix``, ``precision_matrix`` (its inverse) or ``scale_tril``
    (its lower Cholesky factor), exactly one. ``rsample``: loc + L eps."""
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(k, v) for k, v in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if v is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch "
                             "dimensions")
        batch = bshape(matrix.shape[:-2], loc.shape[:-1])
        n = loc.shape[-1]
        setattr(self, name, matrix.expand(tuple(batch) + (n, n)))
        self.loc = loc.expand(tuple(batch) + (n,))
        super().__init__(batch, (n,), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = _chol(matrix)
        else:
            self._unbroadcasted_scale_tril = _chol(torch.linalg.inv(matrix))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = size(batch_shape)
        full = tuple(batch_shape) + tuple(self._event_shape)
        new.loc = self.loc.expand(full)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(full + tuple(self._event_shape)))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-1, -2)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return _inverse_from_tril(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(tuple(self._batch_shape)
                                                                    + tuple(self._event_shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = normal_noise(shape, self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        self._check(value)
        L = self._unbroadcasted_scale_tril
        n = self._event_shape[0]
        return -0.5 * (n * _LOG_2PI + _mahalanobis(L, value - self.loc)) - _half_logdet(L)

    def entropy(self):
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + _LOG_2PI) + _half_logdet(self._unbroadcasted_scale_tril)
        return h.expand(tuple(self._batch_shape)) if len(self._batch_shape) else h


class LowRankMultivariateNormal(MultivariateNormal):
    """N(loc, W W^T + diag(D)) with ``cov_factor`` W (..., n, r) and ``cov_diag`` D (..., n). ``rsample`` draws
    loc + W e1 + sqrt(D) e2 (r + n normals); densities go through the Cholesky factor of the full covariance."""
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        n = loc.shape[-1]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != (n,):
            raise ValueError(f"cov_factor must be a batch of matrices with shape {n} x m")
        if tuple(cov_diag.shape[-1:]) != (n,):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {size((n,))}")
        batch = bshape(loc.shape[:-1], cov_factor.shape[:-2], cov_diag.shape[:-1])
        r = cov_factor.shape[-1]
        self.loc = loc.expand(tuple(batch) + (n,))
        self.cov_factor = cov_factor.expand(tuple(batch) + (n, r))
        self.cov_diag = cov_diag.expand(tuple(batch) + (n,))
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        Distribution.__init__(self, batch, (n,), validate_args=validate_args)
        full = cov_factor @ cov_factor.transpose(-1, -2) + torch.diag_embed(cov_diag)
        self._unbroadcasted_scale_tril = _chol(full)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = size(batch_shape)
        n = self._event_shape[0]
        new.loc = self.loc.expand(tuple(batch_shape) + (n,))
        new.cov_factor = self.cov_factor.expand(tuple(batch_shape) + tuple(self.cov_factor.shape[-2:]))
        new.cov_diag = self.cov_diag.expand(tuple(batch_shape) + (n,))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def variance(self):
        w = self._unbroadcasted_cov_factor
        return (w.pow(2).sum(-1) + self._unbroadcasted_cov_diag).expand(tuple(self._batch_shape)
                                                                        + tuple(self._event_shape))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        r = self.cov_factor.shape[-1]
        e1 = normal_noise(shape[:-1] + (r,), self.loc.dtype)
        e2 = normal_noise(shape, self.loc.dtype)
        w = self._unbroadcasted_cov_factor
        return self.loc + (w @ e1.unsqueeze(-1)).squeeze(-1) + self._unbroadcasted_cov_diag.sqrt() * e2


def _mvlgamma(a, p):
    """log Gamma_p(a) = p(p-1)/4 log(pi) + sum_{j=1..p} log Gamma(a + (1 - j)/2)."""
    return p * (p - 1) / 4 * math.log(math.pi) + sum(torch.lgamma(a + (1 - j) / 2) for j in range(1, p + 1))


def _mvdigamma(a, p):
    return sum(torch.digamma(a + (1 - j) / 2) for j in range(1, p + 1))


class Wishart(Distribution):
    """Wishart(df nu, scale V) over p x p positive definite matrices, V given as ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril``: density |X|^((nu-p-1)/2) exp(-tr(V^-1 X)/2) / (2^(nu p/2) |V|^(nu/2)
    Gamma_p(nu/2)). ``rsample`` by Bartlett's decomposition (chi-squared diagonal: Gamma draws, no gradient)."""
    support = constraints.positive_definite
    has_rsample = True
    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(0)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [(k, v) for k, v in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if v is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch dimensions")
        p = matrix.shape[-1]
        (df_t,) = as_params(df) if not isinstance(df, torch.Tensor) else (df,)
        df_t = df_t.to(matrix.dtype)
        batch = bshape(matrix.shape[:-2], df_t.shape)
        self.df = df_t.expand(tuple(batch))
        setattr(self, name, matrix.expand(tuple(batch) + (p, p)))
        self.arg_constraints = {"covariance_matrix": constraints.positive_definite,
                                "precision_matrix": constraints.positive_definite,
                                "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(p - 1)}
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        super().__init__(batch, (p, p), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = _chol(matrix)
        else:
            self._unbroadcasted_scale_tril = _chol(torch.linalg.inv(matrix))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = size(batch_shape)
        mshape = tuple(batch_shape) + tuple(self._event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        new.df = self.df.expand(tuple(batch_shape))
        new.arg_constraints = self.arg_constraints
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(mshape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _mshape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._mshape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._mshape())

    @lazy_property
    def precision_matrix(self):
        return _inverse_from_tril(self._unbroadcasted_scale_tril).expand(self._mshape())

    def _df(self):
        return self.df.reshape(tuple(self.df.shape) + (1, 1))

    @property
    def mean(self):
        return self._df() * self.covariance_matrix

    @property
    def mode(self):
        p = self._event_shape[-1]
        f = self._df() - p - 1
        f = torch.where(f <= 0, torch.full_like(f, math.nan), f)
        return f * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        d = torch.diagonal(V, dim1=-2, dim2=-1)
        return self._df() * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def rsample(self, sample_shape=()):
        sample_shape = size(sample_shape)
        p = self._event_shape[-1]
        lead = tuple(sample_shape) + tuple(self._batch_shape)
        # Bartlett: A lower triangular, A_ii^2 ~ chi2(nu - i) (i = 0..p-1), A_ij ~ N(0, 1) below the diagonal
        dof = self.df.unsqueeze(-1) - torch.arange(p, dtype=self.df.dtype)
        chi2 = 2 * gamma_draws((0.5 * dof).expand(lead + (p,)), "Wishart")
        below = normal_noise(lead + (p, p), self.df.dtype).tril(-1)
        A = below + torch.diag_embed(chi2.sqrt())
        LA = self._unbroadcasted_scale_tril @ A
        return LA @ LA.transpose(-2, -1)

    def log_prob(self, value):
        self._check(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        trace = torch.diagonal(_solve_lower(L, _solve_lower(L, value).transpose(-2, -1)), dim1=-2, dim2=-1).sum(-1)
        logdet_x = 2 * _half_logdet(_chol(value))
        return (-nu * _half_logdet(L) - 0.5 * nu * p * math.log(2) - _mvlgamma(0.5 * nu, p)
                + 0.5 * (nu - p - 1) * logdet_x - 0.5 * trace)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        return ((p + 1) * _half_logdet(self._unbroadcasted_scale_tril) + 0.5 * p * (p + 1) * math.log(2)
                + _mvlgamma(0.5 * nu, p) - 0.5 * (nu - p - 1) * _mvdigamma(0.5 * nu, p) + 0.5 * nu * p)


class LKJCholesky(Distribution):
    """LKJ distribution (Lewandowski, Kurowicka & Joe 2009) over Cholesky factors L of d x d correlation matrices:
    density proportional to prod_{i=2..d} L_ii^(d - i + 2 eta - 2), eta = ``concentration``. ``sample`` by the
    onion method: row i is a Beta-distributed squared length times a uniform direction."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = as_params(concentration)
        batch = size(self.concentration.shape)
        # squared length of row i (i = 1..d-1) ~ Beta(i / 2, eta + (d - 1 - i) / 2); row 0 is (1, 0, ..., 0)
        rows = torch.arange(dim - 1, dtype=self.concentration.dtype)
        a = torch.cat([torch.zeros(1, dtype=rows.dtype), rows]) + 0.5
        b = (self.concentration + 0.5 * (dim - 2)).unsqueeze(-1) - 0.5 * torch.cat(
            [torch.zeros(1, dtype=rows.dtype), rows])
        self._beta = Beta(a.expand(tuple(b.shape)), b)
        super().__init__(batch, (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        with torch.no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            y = self._beta.sample(sample_shape).unsqueeze(-1)  # (..., d, 1)
            g = normal_noise(shape, self.concentration.dtype).tril(-1)
            norms = g.pow(2).sum(-1, keepdim=True).sqrt()  # (Tensor.norm: MindTorch prints a deprecation line)
            direction = torch.where(norms > 0, g / norms.clamp(min=tiny(g.dtype)), torch.zeros_like(g))
            w = y.sqrt() * direction
            diag = (1 - w.pow(2).sum(-1)).clamp(min=tiny(w.dtype)).sqrt()
            return w + torch.diag_embed(diag)

    def log_prob(self, value):
        self._check(value)
        d = self.dim
        diag = torch.diagonal(value, dim1=-2, dim2=-1)[..., 1:]
        i = torch.arange(2, d + 1, dtype=value.dtype)
        power = 2 * (self.concentration - 1).unsqueeze(-1) + d - i
        unnorm = (power * diag.log()).sum(-1)
        # normaliser of the onion construction: (d-1)/2 log pi + log Gamma_{d-1}(alpha - 1/2) - (d-1) log Gamma(alpha)
        # with alpha = eta + (d - 1)/2, where Gamma_{d-1} is the multivariate gamma function
        m = d - 1
        alpha = self.concentration + 0.5 * m
        log_norm = 0.5 * m * math.log(math.pi) + _mvlgamma(alpha - 0.5, m) - m * torch.lgamma(alpha)
        return unnorm - log_norm
