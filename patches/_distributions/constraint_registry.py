"""``biject_to(constraint)`` / ``transform_to(constraint)``: a transform from unconstrained reals onto a constraint's
set (``biject_to``: bijective, for HMC-like reparameterisation; ``transform_to``: any map, for optimisation).
The registered pairs follow PyTorch 2.13's ``torch.distributions.constraint_registry``.
"""
import numbers

from . import constraints
from . import transforms as T

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Constraint class (or instance) -> a factory ``fn(constraint) -> Transform``."""

    def __init__(self):
        self._factories = {}

    def register(self, constraint, factory=None):
        if factory is None:
            return lambda f: self.register(constraint, f)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and issubclass(constraint, constraints.Constraint)):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}")
        self._factories[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._factories[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(constraint_type):
    def deco(fn):
        biject_to.register(constraint_type, fn)
        transform_to.register(constraint_type, fn)
        return fn
    return deco


@_both(constraints.real)
def _real(c):
    return T.identity_transform


@biject_to.register(constraints.independent)
def _biject_independent(c):
    return T.IndependentTransform(biject_to(c.base_constraint), c.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_independent(c):
    return T.IndependentTransform(transform_to(c.base_constraint), c.reinterpreted_batch_ndims)


@_both(constraints.positive)
@_both(constraints.nonnegative)
def _positive(c):
    return T.ExpTransform()


@_both(constraints.greater_than)
@_both(constraints.greater_than_eq)
def _above(c):
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(c.lower_bound, 1)])


@_both(constraints.less_than)
def _below(c):
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(c.upper_bound, -1)])


@_both(constraints.interval)
@_both(constraints.half_open_interval)
def _interval(c):
    unit = (isinstance(c.lower_bound, numbers.Number) and c.lower_bound == 0
            and isinstance(c.upper_bound, numbers.Number) and c.upper_bound == 1)
    if unit:
        return T.SigmoidTransform()
    return T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(c.lower_bound, c.upper_bound - c.lower_bound)])


@biject_to.register(constraints.simplex)
def _biject_simplex(c):
    return T.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_simplex(c):
    return T.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _lower_cholesky(c):
    return T.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _positive_definite(c):
    return T.PositiveDefiniteTransform()


@_both(constraints.corr_cholesky)
def _corr_cholesky(c):
    return T.CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_cat(c):
    return T.CatTransform([biject_to(x) for x in c.cseq], c.dim, c.lengths)


@transform_to.register(constraints.cat)
def _transform_cat(c):
    return T.CatTransform([transform_to(x) for x in c.cseq], c.dim, c.lengths)


@biject_to.register(constraints.stack)
def _biject_stack(c):
    return T.StackTransform([biject_to(x) for x in c.cseq], c.dim)


@transform_to.register(constraints.stack)
def _transform_stack(c):
    return T.StackTransform([transform_to(x) for x in c.cseq], c.dim)
