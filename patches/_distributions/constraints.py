"""Constraints: predicates over tensors that say where a parameter or a sample is valid (``check(value)`` returns a
bool tensor of the batch shape). Names, reprs and ``event_dim`` follow PyTorch 2.13's
``torch.distributions.constraints``.
"""
import mindtorch.torch as torch

__all__ = ["Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property", "greater_than",
           "greater_than_eq", "independent", "integer_interval", "interval", "half_open_interval", "is_dependent",
           "less_than", "lower_cholesky", "lower_triangular", "MixtureSameFamilyConstraint", "multinomial",
           "nonnegative", "nonnegative_integer", "one_hot", "positive", "positive_semidefinite", "positive_definite",
           "positive_integer", "real", "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval"]


class Constraint:
    """``is_discrete``: the support is countable; ``event_dim``: how many rightmost dimensions one check covers."""
    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + "()"


def _all_last(ok, k):
    """``ok`` reduced with ``all`` over its last ``k`` dimensions."""
    for _ in range(k):
        ok = ok.all(-1)
    return ok


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters (not checked)."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._discrete = is_discrete
        self._edim = event_dim

    @property
    def is_discrete(self):
        if self._discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._discrete

    @property
    def event_dim(self):
        if self._edim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._edim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        return _Dependent(is_discrete=self._discrete if is_discrete is NotImplemented else is_discrete,
                          event_dim=self._edim if event_dim is NotImplemented else event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property of a distribution class whose constraint depends on the instance (``support`` of Uniform)."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._discrete, event_dim=self._edim)


class _IndependentConstraint(Constraint):
    """``base`` applied to the last ``reinterpreted_batch_ndims`` dimensions as one event."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        if not (isinstance(reinterpreted_batch_ndims, int) and reinterpreted_batch_ndims >= 0):
            raise ValueError("reinterpreted_batch_ndims must be a non-negative int")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        ok = self.base_constraint.check(value)
        if ok.dim() < self.reinterpreted_batch_ndims:
            need = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {need} but got {value.dim()}")
        return _all_last(ok, self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _MixtureSameFamilyConstraint(Constraint):
    """The component distribution's support, checked for one mixture event (the component dimension removed)."""

    def __init__(self, base_constraint):
        self.base_constraint = base_constraint

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        ok = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))  # (..., 1): the component axis
        return ok.all(-1)

    def __repr__(self):
        return f"{type(self).__name__[1:]}({self.base_constraint!r})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        binary = ((value == 0) | (value == 1)).all(-1)
        return binary & (value.sum(-1) == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerLessThan(Constraint):
    is_discrete = True

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return (value % 1 == 0) & (value <= self.upper_bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}(upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value):
        return value == value  # False for nan


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"{type(self).__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Non-negative counts along the last dimension summing to at most ``upper_bound``."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return _all_last(value.tril() == value, 2)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        lower = _all_last(value.tril() == value, 2)
        diag = torch.diagonal(value, dim1=-2, dim2=-1)
        return lower & (diag > 0).all(-1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: lower Cholesky with rows of unit norm."""
    event_dim = 2

    def check(self, value):
        tol = torch.finfo(value.dtype).eps * value.shape[-1] * 10
        unit = ((torch.linalg.norm(value.detach(), dim=-1) - 1).abs() <= tol).all(-1)
        return _LowerCholesky().check(value) & unit


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        ok = value.shape[-1] == value.shape[-2]
        return torch.full(tuple(value.shape[:-2]), ok, dtype=torch.bool)


class _Symmetric(_Square):
    def check(self, value):
        sq = super().check(value)
        if not bool(sq.all()):
            return sq
        return _all_last(torch.isclose(value, value.transpose(-2, -1), atol=1e-6), 2)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)
        if not bool(sym.all()):
            return sym
        return (torch.linalg.eigvalsh(value) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)
        if not bool(sym.all()):
            return sym
        # MindSpore's Cholesky raises on a matrix that is not positive definite: the eigenvalues decide instead
        return (torch.linalg.eigvalsh(value) > 0).all(-1)


class _Cat(Constraint):
    """Constraints ``cseq`` applied to consecutive slices (``lengths``) of dimension ``dim``."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError("lengths must match the constraints")
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        parts, start = [], 0
        for c, n in zip(self.cseq, self.lengths):
            parts.append(c.check(value.narrow(self.dim, start, n)))
            start += n
        return torch.cat(parts, self.dim)


class _Stack(Constraint):
    """Constraints ``cseq`` applied to the slices of dimension ``dim``."""

    def __init__(self, cseq, dim=0):
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        d = max(c.event_dim for c in self.cseq)
        return d + 1 if self.dim + d < 0 else d

    def check(self, value):
        dim = self.dim % value.dim()
        return torch.stack([c.check(value.select(dim, i)) for i, c in enumerate(self.cseq)], dim)


# the public names: instances for fixed sets, classes for parameterised ones (alphabetical)
boolean = _Boolean()
cat = _Cat
corr_cholesky = _CorrCholesky()
dependent = _Dependent()
dependent_property = _DependentProperty
greater_than, greater_than_eq = _GreaterThan, _GreaterThanEq
half_open_interval = _HalfOpenInterval
independent = _IndependentConstraint
integer_interval = _IntegerInterval
interval = _Interval
less_than = _LessThan
lower_cholesky, lower_triangular = _LowerCholesky(), _LowerTriangular()
MixtureSameFamilyConstraint = _MixtureSameFamilyConstraint
multinomial = _Multinomial
nonnegative, nonnegative_integer = _GreaterThanEq(0.0), _IntegerGreaterThan(0)
one_hot = _OneHot()
positive, positive_integer = _GreaterThan(0.0), _IntegerGreaterThan(1)
positive_definite, positive_semidefinite = _PositiveDefinite(), _PositiveSemidefinite()
real = _Real()
real_vector = independent(real, 1)
simplex = _Simplex()
square, symmetric = _Square(), _Symmetric()
stack = _Stack
unit_interval = _Interval(0.0, 1.0)
