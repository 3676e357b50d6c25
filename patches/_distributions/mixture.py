"""``MixtureSameFamily``: a mixture whose components are one distribution's last batch dimension, weighted by a
``Categorical``. Semantics follow PyTorch 2.13's ``torch.distributions.MixtureSameFamily``. Its own module (it was in
``composite.py``): it needs ``discrete.Categorical``, and ``discrete`` builds its relaxed families on
``composite.TransformedDistribution``, so in ``composite`` the two modules imported each other.
"""
import mindtorch.torch as torch

from . import constraints
from ._core import Distribution, size
from .discrete import Categorical

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """A mixture whose components are the last batch dimension of ``component_distribution`` and whose weights are
    ``mixture_distribution`` (a Categorical): log p(x) = logsumexp_k (log w_k + log p_k(x))."""
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
        mix_batch = tuple(mixture_distribution.batch_shape)
        comp_batch = tuple(component_distribution.batch_shape)[:-1]
        for a, b in zip(reversed(mix_batch), reversed(comp_batch)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({size(mix_batch)}) is not compatible with "
                                 f"`component_distribution.batch_shape`({size(comp_batch)})")
        k_mix = mixture_distribution.logits.shape[-1]
        k_comp = component_distribution.batch_shape[-1]
        if k_mix is not None and k_comp is not None and k_mix != k_comp:
            raise ValueError(f"`mixture_distribution component` ({k_mix}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({k_comp})")
        self._num_component = k_mix
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(comp_batch, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        shape = tuple(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, shape, new._component_distribution.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    mixture_distribution = property(lambda self: self._mixture_distribution)
    component_distribution = property(lambda self: self._component_distribution)

    def _weights(self):
        """Mixture probabilities shaped to broadcast against the components' per-event values."""
        p = self._mixture_distribution.probs
        for _ in range(self._event_ndims):
            p = p.unsqueeze(-1)
        return p

    @property
    def mean(self):
        w = self._weights()
        return (w * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        w = self._weights()
        axis = -1 - self._event_ndims
        comp_mean = self._component_distribution.mean
        within = (w * self._component_distribution.variance).sum(axis)
        between = (w * (comp_mean - self._pad(self.mean)).pow(2)).sum(axis)
        return within + between

    def cdf(self, x):
        x = self._pad(x)
        return (self._component_distribution.cdf(x) * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        self._check(x)
        x = self._pad(x)
        comp = self._component_distribution.log_prob(x)
        log_w = torch.log_softmax(self._mixture_distribution.logits, dim=-1)
        return torch.logsumexp(comp + log_w, dim=-1)

    def sample(self, sample_shape=()):
        with torch.no_grad():
            sample_shape = size(sample_shape)
            n_lead = len(sample_shape) + len(self._batch_shape)
            index = self._mixture_distribution.sample(sample_shape)  # sample + batch
            draws = self._component_distribution.sample(sample_shape)  # sample + batch + (K,) + event
            index = index.reshape(tuple(index.shape) + (1,) * (self._event_ndims + 1))
            index = index.expand(tuple(draws.shape[:n_lead]) + (1,) + tuple(self._event_shape))
            return torch.gather(draws, n_lead, index).squeeze(n_lead)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self._mixture_distribution},\n  {self._component_distribution})")
