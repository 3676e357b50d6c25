"""Transforms: invertible (or not) maps ``y = t(x)`` with ``log |dy/dx|``, for ``TransformedDistribution`` and
``biject_to``/``transform_to``. Semantics (domains, ``event_dim``, ``sign``, caching of the last pair, shapes) follow
PyTorch 2.13's ``torch.distributions.transforms``; the formulas are the textbook ones noted at each class.
"""
import math
import numbers
import weakref

import mindtorch.torch as torch
import mindtorch.torch.nn.functional as F

from . import constraints
from ._core import size, sum_last

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
           "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "Transform",
           "identity_transform"]


class Transform:
    """Base class. ``cache_size`` 1 keeps the last ``(x, y)`` so that ``t.inv(t(x))`` returns ``x`` itself."""
    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached = None
        self._inverse_ref = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_inverse_ref"] = None
        return state

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        inverse = self._inverse_ref() if self._inverse_ref is not None else None
        if inverse is None:
            inverse = _Inverse(self)
            self._inverse_ref = weakref.ref(inverse)
        return inverse

    @property
    def sign(self):
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        """This transform with another cache size (a copy; parameter-free transforms only, others override)."""
        if cache_size == self._cache_size:
            return self
        if type(self).__init__ is not Transform.__init__:
            raise NotImplementedError(f"{type(self)}.with_cache is not implemented")
        return type(self)(cache_size=cache_size)

    # equality: identity by default; parameter-free transforms compare by type, others by parameters
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __ne__(self, other):
        return not self == other

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        if self._cached is not None and self._cached[0] is x:
            return self._cached[1]
        y = self._call(x)
        self._cached = (x, y)
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        if self._cached is not None and self._cached[1] is y:
            return self._cached[0]
        x = self._inverse(y)
        self._cached = (x, y)
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__ + "()"

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape


class _Inverse(Transform):
    """``t.inv``: the same map read backwards (holds a strong reference to ``t``)."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    domain = property(lambda self: self._inv.codomain)
    codomain = property(lambda self: self._inv.domain)
    bijective = property(lambda self: self._inv.bijective)
    sign = property(lambda self: self._inv.sign)

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self._inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _Inverse) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """``parts`` applied left to right; the Jacobian terms summed over each part's extra event dimensions."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [p.with_cache(cache_size) for p in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        first = self.parts[0].domain
        need = self.parts[-1].domain.event_dim
        for p in reversed(self.parts):
            need = max(need + p.domain.event_dim - p.codomain.event_dim, p.domain.event_dim)
        return constraints.independent(first, need - first.event_dim) if need > first.event_dim else first

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        last = self.parts[-1].codomain
        need = self.parts[0].codomain.event_dim
        for p in self.parts:
            need = max(need + p.codomain.event_dim - p.domain.event_dim, p.codomain.event_dim)
        return constraints.independent(last, need - last.event_dim) if need > last.event_dim else last

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        s = 1
        for p in self.parts:
            s = s * p.sign
        return s

    @property
    def inv(self):
        inverse = self._inverse_ref() if self._inverse_ref is not None else None
        if inverse is None:
            inverse = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inverse_ref = weakref.ref(inverse)
            inverse._inverse_ref = weakref.ref(self)
        return inverse

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for p in self.parts:
            x = p(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return torch.zeros_like(x)
        points = [x]
        for p in self.parts[:-1]:
            points.append(p(points[-1]))
        points.append(y)
        total = 0
        dim = self.domain.event_dim
        for p, a, b in zip(self.parts, points[:-1], points[1:]):
            total = total + sum_last(p.log_abs_det_jacobian(a, b), dim - p.domain.event_dim)
            dim += p.codomain.event_dim - p.domain.event_dim
        return total

    def forward_shape(self, shape):
        for p in self.parts:
            shape = p.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for p in reversed(self.parts):
            shape = p.inverse_shape(shape)
        return shape

    def __repr__(self):
        return f"{type(self).__name__}(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])
_InverseTransform = _Inverse  # PyTorch's name for the class of ``t.inv``


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more dimensions treated as one event (Jacobian summed)."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    bijective = property(lambda self: self.base_transform.bijective)
    sign = property(lambda self: self.base_transform.sign)

    @staticmethod
    def _need(v, k):
        if v.dim() < k:
            raise ValueError("Too few dimensions on input")
        return v

    def _call(self, x):
        return self.base_transform(self._need(x, self.domain.event_dim))

    def _inverse(self, y):
        return self.base_transform.inv(self._need(y, self.codomain.event_dim))

    def log_abs_det_jacobian(self, x, y):
        return sum_last(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshape the rightmost ``in_shape`` into ``out_shape`` (same number of elements); Jacobian 0."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = size(in_shape), size(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    domain = property(lambda self: constraints.independent(constraints.real, len(self.in_shape)))
    codomain = property(lambda self: constraints.independent(constraints.real, len(self.out_shape)))

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ReshapeTransform(self.in_shape, self.out_shape, cache_size)

    def _call(self, x):
        lead = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(lead + tuple(self.out_shape))

    def _inverse(self, y):
        lead = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(lead + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

    def forward_shape(self, shape):
        k = len(self.in_shape)
        if len(shape) < k or tuple(shape[len(shape) - k:]) != tuple(self.in_shape):
            raise ValueError(f"Shape mismatch: expected {shape[len(shape) - k:]} but got {self.in_shape}")
        return size(tuple(shape[:len(shape) - k]) + tuple(self.out_shape))

    def inverse_shape(self, shape):
        k = len(self.out_shape)
        if len(shape) < k or tuple(shape[len(shape) - k:]) != tuple(self.out_shape):
            raise ValueError(f"Shape mismatch: expected {shape[len(shape) - k:]} but got {self.out_shape}")
        return size(tuple(shape[:len(shape) - k]) + tuple(self.in_shape))


class ExpTransform(Transform):
    """y = exp(x); log|dy/dx| = x."""
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent on x > 0; log|dy/dx| = log|exponent * y / x|."""
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = _tensors(exponent)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size=cache_size)

    def __repr__(self):
        return f"{type(self).__name__}(exponent={self.exponent})"

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    __hash__ = object.__hash__

    @property
    def sign(self):
        return self.exponent.sign()

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return size(torch.broadcast_shapes(tuple(shape), tuple(self.exponent.shape)))

    inverse_shape = forward_shape


def _tensors(*values):
    from ._core import as_params
    return as_params(*values)


class SigmoidTransform(Transform):
    """y = sigmoid(x) kept inside (0, 1) of the dtype; log|dy/dx| = -softplus(-x) - softplus(x)."""
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        info = torch.finfo(x.dtype)
        return torch.clamp(torch.sigmoid(x), min=info.tiny, max=1.0 - info.eps)

    def _inverse(self, y):
        info = torch.finfo(y.dtype)
        y = y.clamp(min=info.tiny, max=1.0 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)); x = y + log(1 - exp(-y)); log|dy/dx| = -softplus(-x)."""
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return (-torch.expm1(-y)).log() + y

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


class TanhTransform(Transform):
    """y = tanh(x); x = atanh(y) = (log1p(y) - log1p(-y)) / 2; log|dy/dx| = 2 (log 2 - x - softplus(-2x)), the
    stable form of log(1 - tanh(x)^2)."""
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return 0.5 * (y.log1p() - (-y).log1p())

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not injective: the inverse returns y)."""
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x over ``event_dim`` rightmost dimensions; log|dy/dx| = log|scale| (summed over the event)."""
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real,
                                                                                     self._event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self.domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                if a != b:
                    return False
            elif not bool((torch.as_tensor(a) == torch.as_tensor(b)).all()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            s = float(self.scale)
            return 1 if s > 0 else -1 if s < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        if isinstance(self.scale, numbers.Real):
            out = torch.full_like(x, math.log(abs(self.scale)))
        else:
            out = torch.abs(self.scale).log()
        shape = tuple(x.shape)
        if self._event_dim:
            out = out.reshape(tuple(out.shape[:out.dim() - self._event_dim]) + (-1,)).sum(-1)
            shape = shape[:len(shape) - self._event_dim]
        return out.expand(shape)

    def forward_shape(self, shape):
        return size(torch.broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                           tuple(getattr(self.scale, "shape", ()))))

    inverse_shape = forward_shape


class CorrCholeskyTransform(Transform):
    """Unconstrained vector of length D(D-1)/2 -> lower Cholesky factor of a D x D correlation matrix: tanh gives
    partial correlations, filled row by row into a lower triangle; each row r is scaled so that its norm is 1
    (x_ij = z_ij * sqrt(1 - sum_{k<j} x_ik^2), the LKJ onion construction)."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        info = torch.finfo(x.dtype)
        z = _vec_to_tril(torch.tanh(x).clamp(min=-1 + info.eps, max=1 - info.eps), diag=-1)
        # what is left of the unit row after columns < j: prod_{k<j} (1 - z_ik^2) (= 1 - sum_{k<j} y_ik^2)
        left = torch.cumprod(1 - z * z, -1)
        left = torch.cat([torch.ones_like(left[..., :1]), left[..., :-1]], -1)
        return (z + torch.eye(z.shape[-1], dtype=x.dtype)) * left.sqrt()

    def _inverse(self, y):
        sq = (y * y).cumsum(-1)
        remain = torch.cat([torch.ones_like(sq[..., :1]), torch.sqrt((1 - sq[..., :-1]).clamp(min=1e-30))], -1)
        z = _tril_to_vec(y / remain, diag=-1)
        return 0.5 * (z.log1p() - (-z).log1p())

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        # d y_ij / d z_ij = sqrt(1 - sum_{k<j} y_ik^2): log of it is half the log of that remaining length squared;
        # d z / d x = 1 - z^2 (tanh)
        sq = (y * y).cumsum(-1)
        rem = (1 - sq[..., :-1]).clamp(min=torch.finfo(y.dtype).tiny)
        rem = torch.cat([torch.ones_like(sq[..., :1]), rem], -1)
        half_log = 0.5 * _tril_to_vec(rem.log(), diag=-1)
        tanh_part = 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))
        return (half_log + tanh_part).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape):
        if len(shape) < 2 or shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return size(tuple(shape[:-2]) + (d * (d - 1) // 2,))


def _tril_mask(n, diag):
    idx = torch.arange(n)
    return idx.reshape(1, -1) <= idx.reshape(-1, 1) + diag


def _tril_to_vec(mat, diag=0):
    """Entries on/below diagonal ``diag`` of the last two dimensions, row by row."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = [], []
    for i in range(n):
        for j in range(min(i + diag, n - 1) + 1):
            rows.append(i)
            cols.append(j)
    return mat[..., torch.tensor(rows), torch.tensor(cols)]


def _vec_to_tril(vec, diag=0):
    """Inverse of ``_tril_to_vec``: a square matrix with the vector's entries placed row by row, zeros elsewhere."""
    m = vec.shape[-1]
    n = 0
    while _count(n, diag) < m:
        n += 1
    if _count(n, diag) != m:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as the lower triangular part "
                         "of a square D x D matrix.")
    positions = []
    for i in range(n):
        for j in range(min(i + diag, n - 1) + 1):
            positions.append(i * n + j)
    lead = tuple(vec.shape[:-1])
    flat = vec.new_zeros(lead + (n * n,))
    index = torch.tensor(positions).expand(lead + (m,))
    flat = flat.scatter(-1, index, vec)
    return flat.reshape(lead + (n, n))


def _count(n, diag):
    return sum(max(0, min(i + diag, n - 1) + 1) for i in range(n))


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dimension (not bijective; the inverse gives log y)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        e = (x - x.max(-1, keepdim=True)[0]).exp()
        return e / e.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


class StickBreakingTransform(Transform):
    """R^(K-1) -> K-simplex by stick breaking: z_k = sigmoid(x_k - log(K - k)) (k = 1..K-1, so x = 0 maps to the
    uniform point), y_k = z_k prod_{j<k} (1 - z_j), y_K what is left."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _shift(k, like):
        # log(K - k) for k = 1..K-1 with K = k_last + 1: log(n), log(n - 1), ..., log(1) where n = K - 1
        return torch.arange(k, 0, -1, dtype=like.dtype).log()

    def _call(self, x):
        z = torch.sigmoid(x - self._shift(x.shape[-1], x))
        left = torch.cumprod(1 - z, -1)
        ones = torch.ones_like(z[..., :1])
        return torch.cat([z, ones], -1) * torch.cat([ones, left], -1)

    def _inverse(self, y):
        head = y[..., :-1]
        rest = (1 - head.cumsum(-1)).clamp(min=torch.finfo(y.dtype).tiny)
        return head.log() - rest.log() + self._shift(head.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        u = x - self._shift(x.shape[-1], x)
        return (-u + F.logsigmoid(u) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(Transform):
    """Square matrix -> its strict lower triangle plus the exponential of its diagonal (not bijective)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + torch.diag_embed(torch.diagonal(x, dim1=-2, dim2=-1).exp())

    def _inverse(self, y):
        return y.tril(-1) + torch.diag_embed(torch.diagonal(y, dim1=-2, dim2=-1).log())


class PositiveDefiniteTransform(Transform):
    """Square matrix -> L L^T with L its LowerCholeskyTransform (not bijective)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        low = LowerCholeskyTransform()(x)
        return low @ low.transpose(-2, -1)

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(torch.linalg.cholesky(y))


class CatTransform(Transform):
    """Transforms ``tseq`` applied to consecutive slices (``lengths``) of dimension ``dim``."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq]
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("lengths must match the transforms")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, v, fn):
        out, start = [], 0
        for t, n in zip(self.transforms, self.lengths):
            out.append(fn(t, v.narrow(self.dim, start, n)))
            start += n
        return out

    def _call(self, x):
        return torch.cat(self._pieces(x, lambda t, p: t(p)), self.dim)

    def _inverse(self, y):
        return torch.cat(self._pieces(y, lambda t, p: t.inv(p)), self.dim)

    def log_abs_det_jacobian(self, x, y):
        parts, start = [], 0
        for t, n in zip(self.transforms, self.lengths):
            a, b = x.narrow(self.dim, start, n), y.narrow(self.dim, start, n)
            j = t.log_abs_det_jacobian(a, b)
            if t.event_dim < self.event_dim:
                j = sum_last(j, self.event_dim - t.event_dim)
            parts.append(j)
            start += n
        dim = self.dim
        if dim >= 0:
            dim = dim - x.dim()
        dim = dim + self.event_dim
        return torch.cat(parts, dim) if dim < 0 else sum(parts)

    bijective = property(lambda self: all(t.bijective for t in self.transforms))
    domain = constraints.dependent_property(
        lambda self: constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths))
    codomain = constraints.dependent_property(
        lambda self: constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths))


class StackTransform(Transform):
    """Transforms ``tseq`` applied to the slices of dimension ``dim``."""

    def __init__(self, tseq, dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq]
        self.dim = dim

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else StackTransform(self.transforms, self.dim, cache_size)

    def _map(self, v, fn):
        dim = self.dim % v.dim()
        return torch.stack([fn(t, v.select(dim, i)) for i, t in enumerate(self.transforms)], dim)

    def _call(self, x):
        return self._map(x, lambda t, p: t(p))

    def _inverse(self, y):
        return self._map(y, lambda t, p: t.inv(p))

    def log_abs_det_jacobian(self, x, y):
        dim = self.dim % x.dim()
        return torch.stack([t.log_abs_det_jacobian(x.select(dim, i), y.select(dim, i))
                            for i, t in enumerate(self.transforms)], dim)

    bijective = property(lambda self: all(t.bijective for t in self.transforms))
    domain = constraints.dependent_property(
        lambda self: constraints.stack([t.domain for t in self.transforms], self.dim))
    codomain = constraints.dependent_property(
        lambda self: constraints.stack([t.codomain for t in self.transforms], self.dim))


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x) into the unit interval; log|dy/dx| = distribution.log_prob(x)."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)
