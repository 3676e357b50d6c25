"""``torch.distributions`` for MindTorch 0.4.0, which has none: this project's own package ``patches/_distributions/``.

Policy-gradient and actor-critic scripts (``m = Categorical(probs)``, ``m.sample()``, ``m.log_prob(action)``,
``m.entropy()``) and VAEs (``Normal(mu, std).rsample()``, ``kl_divergence``) stopped at ``AttributeError: module
'mindtorch.torch' has no attribute 'distributions'``. The package is written here from PyTorch 2.13's documented
behaviour (no PyTorch code): the same classes (every distribution, constraint, transform, ``biject_to`` /
``transform_to`` pair and registered KL pair of PyTorch 2.13), parameters, shapes, validation (on by default, the same
ValueError texts, ``Distribution.set_default_validate_args``) and values; modules by family (``_core``,
``constraints``, ``transforms``, ``constraint_registry``, ``continuous``, ``discrete``, ``composite``,
``multivariate``, ``kl``), and PyTorch's module names (``torch.distributions.normal``, ``.utils``, ...) as alias
modules.

Where MindSpore/MindTorch differ, the package says so instead of giving another number:

* MindSpore's ``xlogy`` has d/dx = 0 at x = 0 (PyTorch: log y): Beta/Dirichlet/Gamma/Poisson ``log_prob`` use
  ``_core.xlogy`` (PyTorch's gradient; a concentration of exactly 1 got a wrong gradient otherwise);
* no ``torch._standard_gamma`` and no reparameterised Gamma gradient: Gamma/Beta/Dirichlet/Chi2/StudentT/
  InverseGamma/FisherSnedecor/Wishart draw with MindSpore's ``random_gamma``; ``sample()`` works, ``rsample()`` with
  grad enabled raises NotImplementedError at the user's line (not a silently missing gradient);
* no ``torch.binomial``: ``Binomial.sample()`` raises NotImplementedError at the user's line; no
  ``torch.autograd.grad``: the Bregman-divergence entropy/KL of ``ExponentialFamily`` (used by no class here, each
  has a closed form) raises likewise;
* draws come from MindSpore's RNG (``torch.manual_seed`` makes them repeatable, not PyTorch's numbers).

Values, KL pairs and gradients equal real PyTorch 2.13's to float32 rounding (tests/test_distributions.py). A
compiled step (adapter/compiled_step.py) that builds or uses a distribution runs eagerly, saying so: graph mode cannot
construct these Python objects. Loading costs ~0.06 CPU s at start-up (the vendored copy: ~0.1 s).

Installed as ``torch.distributions``: the package is loaded under the name ``mindtorch.torch.distributions`` (so
``import torch.distributions`` and ``from torch.distributions.normal import Normal`` resolve through MindTorch's
import hook, and the classes' ``__module__`` starts with ``mindtorch.torch.distributions``).

Replaces: adds ``torch.distributions`` (MindTorch 0.4.0 has none), also in ``sys.modules``.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import types

from . import Patch, is_patched, patch_attr

_PACKAGE = "mindtorch.torch.distributions"
_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_distributions")


def load() -> types.ModuleType:
    """Import patches/_distributions as ``mindtorch.torch.distributions`` (idempotent) and return it."""
    if _PACKAGE in sys.modules:
        return sys.modules[_PACKAGE]
    spec = importlib.util.spec_from_file_location(_PACKAGE, os.path.join(_DIR, "__init__.py"),
                                                  submodule_search_locations=[_DIR])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[_PACKAGE] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(_PACKAGE, None)
        raise
    return mod


def apply() -> None:
    import mindtorch.torch as torch
    if isinstance(getattr(torch, "distributions", None), types.ModuleType) and not is_patched(torch, "distributions"):
        return  # a MindTorch that has its own
    patch_attr(torch, "distributions", load())


PATCH = Patch("distributions", "torch.distributions: our own package (PyTorch 2.13's classes and values) over "
              "MindTorch tensors", "post-import", apply, replaces=("torch.distributions",),
              effects=("registers the package torch.distributions (sys.modules)",))
