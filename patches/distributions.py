"""``torch.distributions``: PyTorch's probability distributions (vendored), which MindTorch 0.4.0 lacks.

Policy-gradient and actor-critic scripts (pytorch/examples reinforcement_learning: ``m = Categorical(probs)``,
``m.sample()``, ``m.log_prob(action)``, ``m.entropy()``) and VAEs (``Normal(mu, std).rsample()``,
``kl_divergence``) stopped at ``AttributeError: module 'mindtorch.torch' has no attribute 'distributions'`` (and
``import torch.distributions`` failed). PyTorch's own package is pure Python over tensor operations, so it is
vendored whole: PyTorch 2.13.0 (git cf30153c), ``torch/distributions/*.py``, BSD-3-Clause (license in
``patches/LICENSE-pytorch.txt``, a header in each file), in ``patches/_distributions_pytorch/``. The edits for
MindTorch are the imports (``torch`` -> ``mindtorch.torch``, ``torch.types`` -> ``_types.py``),
``torch.Size()`` -> ``torch.Size(())``, and the lines marked ``adapter:`` in each file:

* no TorchScript/tracing: ``torch._C._get_tracing_state()`` is False, ``@torch.jit.script_if_tracing`` dropped;
  ``torch._C._infer_size`` -> ``torch.broadcast_shapes``; ``torch._is_all_true(v)`` -> ``bool(v.all())``;
* MindTorch's differences: ``broadcast_shapes`` returns a list (``utils._broadcast_shapes`` makes it a Size),
  ``linalg.cholesky_ex``/``slogdet`` return plain tuples (and Cholesky raises on a non-positive-definite matrix:
  the ``positive_definite`` check then uses eigenvalues), ``Size(()).numel()`` fails, ``Tensor.select`` needs
  ``dim >= 0``, bool ``min`` is unsupported (``all``), ``lgamma`` refuses int64, ``argmax`` of an empty selection
  fails, no CPU ``einsum``; ``torch.special.gammainc`` -> ``torch.igamma``;
* MindSpore's ``xlogy`` has d/dx = 0 at x = 0 where PyTorch's is log(y): Beta/Dirichlet/Gamma/Poisson
  ``log_prob`` and the entropy KLs use ``utils._xlogy`` (PyTorch's gradients; a concentration of exactly 1 got a
  wrong gradient otherwise);
* missing ops: ``torch._standard_gamma`` / ``_sample_dirichlet`` -> MindSpore's ``RandomGamma`` draws without a
  reparameterisation gradient: ``Gamma``/``Beta``/``Dirichlet`` (and ``Chi2``, ``InverseGamma``,
  ``FisherSnedecor``, ``StudentT``) ``sample()`` work, ``rsample()`` with grad enabled raises NotImplementedError at
  the user's line (not a silently missing gradient); ``Binomial.sample()`` (no ``torch.binomial``) and the Bregman
  entropy/KL fallback of ``ExponentialFamily`` (no ``torch.autograd.grad``; every class used here overrides it)
  raise NotImplementedError naming the user's file:line.

Everything else is PyTorch's code: argument and support validation (``validate_args`` on by default, the same
ValueErrors), ``lazy_property``, ``broadcast_all``, ``_standard_normal`` (``torch.empty(shape).normal_()``),
constraints, transforms, ``register_kl``. Values, KL pairs and gradients equal real PyTorch 2.13's to float32
rounding (tests/test_distributions.py: 48 cases of 39 classes); draws come from MindSpore's RNG (``torch.manual_seed``
makes them repeatable, not PyTorch's numbers).

Installed as ``torch.distributions``: the package is loaded under the name ``mindtorch.torch.distributions`` (so
``import torch.distributions``, ``from torch.distributions.normal import Normal`` resolve through MindTorch's import
hook, and the classes' ``__module__`` is ``mindtorch.torch.distributions.<file>``). Loading costs ~0.15 s at
start-up. A compiled step (adapter/compiled_step.py) that builds or uses a distribution runs eagerly, saying so:
graph mode cannot construct these Python objects.

Replaces: adds ``torch.distributions`` (MindTorch 0.4.0 has none), also in ``sys.modules``.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import types

from . import Patch, is_patched, patch_attr

_PACKAGE = "mindtorch.torch.distributions"
_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_distributions_pytorch")


def load() -> types.ModuleType:
    """Import the vendored package as ``mindtorch.torch.distributions`` (idempotent) and return it."""
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


PATCH = Patch("distributions", "torch.distributions: PyTorch 2.13's distributions (vendored, BSD-3) over MindTorch "
              "tensors", "post-import", apply, replaces=("torch.distributions",),
              effects=("registers the package torch.distributions (sys.modules)",))
