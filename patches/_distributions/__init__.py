"""``torch.distributions`` for MindTorch, written for this project (patches/distributions.py installs it).

Modules by family: ``_core`` (Distribution, helpers), ``constraints``, ``transforms``, ``constraint_registry``
(biject_to / transform_to), ``continuous``, ``composite`` (Independent, TransformedDistribution and the families
built on it), ``discrete``, ``mixture`` (MixtureSameFamily), ``multivariate``, ``kl``. PyTorch's per-class module names
(``torch.distributions.normal``, ``.one_hot_categorical``, ``.utils``, ...) are registered as small alias modules
that hold the same objects, so every import form of a PyTorch script resolves.
"""
import importlib.machinery
import sys
import types

from . import constraints, transforms
from ._core import Distribution, ExponentialFamily
from .composite import (HalfCauchy, HalfNormal, Gumbel, Independent, InverseGamma, Kumaraswamy, LogisticNormal,
                        LogNormal, Pareto, TransformedDistribution, Weibull)
from .constraint_registry import biject_to, transform_to
from .continuous import (Beta, Cauchy, Chi2, ContinuousBernoulli, Dirichlet, Exponential, FisherSnedecor, Gamma,
                         GeneralizedPareto, Laplace, Normal, StudentT, Uniform, VonMises)
from .discrete import (Bernoulli, Binomial, Categorical, Geometric, Multinomial, NegativeBinomial, OneHotCategorical,
                       OneHotCategoricalStraightThrough, Poisson, RelaxedBernoulli, RelaxedOneHotCategorical)
from .kl import kl_divergence, register_kl
from .mixture import MixtureSameFamily
from .multivariate import LKJCholesky, LowRankMultivariateNormal, MultivariateNormal, Wishart
from .transforms import *  # noqa: F401,F403 -- torch.distributions re-exports the transforms
from . import kl  # noqa: E402  (the module, as torch.distributions.kl)
from . import constraint_registry  # noqa: E402

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
           "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto",
           "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy",
           "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily",
           "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "StudentT", "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart", "biject_to",
           "kl_divergence", "register_kl", "transform_to"] + list(transforms.__all__)


def _utils_module():
    from . import _core
    from .transforms import _tril_to_vec, _vec_to_tril

    def broadcast_all(*values):
        return _core.as_params(*values)

    def logits_to_probs(logits, is_binary=False):
        return _core.probs_of(logits, is_binary)

    def probs_to_logits(probs, is_binary=False):
        return _core.logits_of(probs, is_binary)

    return {"broadcast_all": broadcast_all, "logits_to_probs": logits_to_probs, "probs_to_logits": probs_to_logits,
            "clamp_probs": _core.clip_unit, "lazy_property": _core.lazy_property,
            "tril_matrix_to_vec": _tril_to_vec, "vec_to_tril_matrix": _vec_to_tril,
            "euler_constant": _core.EULER_GAMMA}


# PyTorch's module name -> the names it defines
_ALIASES = {
    "bernoulli": ["Bernoulli"], "beta": ["Beta"], "binomial": ["Binomial"], "categorical": ["Categorical"],
    "cauchy": ["Cauchy"], "chi2": ["Chi2"], "continuous_bernoulli": ["ContinuousBernoulli"],
    "dirichlet": ["Dirichlet"], "distribution": ["Distribution"], "exp_family": ["ExponentialFamily"],
    "exponential": ["Exponential"], "fishersnedecor": ["FisherSnedecor"], "gamma": ["Gamma"],
    "generalized_pareto": ["GeneralizedPareto"], "geometric": ["Geometric"], "gumbel": ["Gumbel"],
    "half_cauchy": ["HalfCauchy"], "half_normal": ["HalfNormal"], "independent": ["Independent"],
    "inverse_gamma": ["InverseGamma"], "kumaraswamy": ["Kumaraswamy"], "laplace": ["Laplace"],
    "lkj_cholesky": ["LKJCholesky"], "log_normal": ["LogNormal"], "logistic_normal": ["LogisticNormal"],
    "lowrank_multivariate_normal": ["LowRankMultivariateNormal"], "mixture_same_family": ["MixtureSameFamily"],
    "multinomial": ["Multinomial"], "multivariate_normal": ["MultivariateNormal"],
    "negative_binomial": ["NegativeBinomial"], "normal": ["Normal"],
    "one_hot_categorical": ["OneHotCategorical", "OneHotCategoricalStraightThrough"], "pareto": ["Pareto"],
    "poisson": ["Poisson"], "relaxed_bernoulli": ["RelaxedBernoulli", "LogitRelaxedBernoulli"],
    "relaxed_categorical": ["RelaxedOneHotCategorical", "ExpRelaxedCategorical"], "studentT": ["StudentT"],
    "transformed_distribution": ["TransformedDistribution"], "uniform": ["Uniform"], "von_mises": ["VonMises"],
    "weibull": ["Weibull"], "wishart": ["Wishart"],
}


class _AliasLoader:
    """Loader of an alias module: the module already exists (MindTorch's import hook loads ``torch.X`` through the
    module's ``__spec__``)."""

    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


def _install_aliases():
    from . import discrete
    here = sys.modules[__name__]
    pool = {**vars(here), "LogitRelaxedBernoulli": discrete.LogitRelaxedBernoulli,
            "ExpRelaxedCategorical": discrete.ExpRelaxedCategorical}
    tables = {name: {k: pool[k] for k in names} for name, names in _ALIASES.items()}
    tables["utils"] = _utils_module()
    for name, table in tables.items():
        full = f"{__name__}.{name}"
        mod = sys.modules.get(full) or types.ModuleType(full, f"torch.distributions.{name}: an alias module")
        mod.__dict__.update(table)
        mod.__all__ = list(table)
        mod.__spec__ = importlib.machinery.ModuleSpec(full, _AliasLoader(mod))
        sys.modules[full] = mod
        setattr(here, name, mod)


_install_aliases()
