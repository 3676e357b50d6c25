"""``torch.distributions`` (patches/distributions.py: our own package patches/_distributions)
against real PyTorch 2.13. MindTorch 0.4.0 had no ``torch.distributions``: every test here but
``test_graph_mode_python_call_error_is_explained`` (adapter/ms_errors.py) fails with
``ADAPTER_DISABLE_PATCHES=distributions``.

* values: log_prob, entropy, mean, variance, stddev, mode, cdf, icdf, shapes of 48 cases (39 classes), 16
  ``kl_divergence`` pairs, and the gradients of 18 training losses (REINFORCE, actor-critic, Gaussian policy, VAE KL,
  Beta/Gamma/Dirichlet at concentration 1, ...) w.r.t. ``nn.Parameter``s through the eager bridge
  (tests/fixtures/distributions_cases.py; reference tests/fixtures/distributions_reference.json);
* draws (MindSpore's RNG, not PyTorch's numbers): the mean of 20 000 samples within 4 standard errors of the
  distribution's mean, Categorical frequencies, support, shapes, ``torch.manual_seed`` reproducibility;
* ``rsample``: the reparameterisation gradient in closed form, eagerly and in a run.py training step;
* training loops through run.py (tests/fixtures/distributions_train.py): reinforce.py's and actor_critic.py's
  structure, a Gaussian policy + VAE KL, equal to PyTorch's losses (reference
  tests/fixtures/distributions_train_reference.json); ``--explain`` names why a step that builds a distribution
  runs eagerly.
"""
import math
import os
import sys

import numpy as np
import pytest

from support import FIXTURES, load_reference, ours_fixture, run_json

sys.path.insert(0, FIXTURES)
REFERENCE = load_reference("distributions_reference.json")
TRAIN_REFERENCE = load_reference("distributions_train_reference.json")

# Where this adapter differs from PyTorch on purpose: (case, field) -> the exception type recorded here.
KNOWN = {("Binomial", "sample_shape"): "NotImplementedError"}  # MindTorch has no torch.binomial
# float32 rounding: RelaxedBernoulli's log_prob goes through logit/sigmoid transforms (1.4e-6 absolute on 0.04)
ATOL = {"RelaxedBernoulli": 1e-5}


def _num(value):
    if isinstance(value, list):
        return [_num(v) for v in value]
    return float(value) if isinstance(value, str) else value


def _assert_same(got, ref, what, atol=2e-6):
    if isinstance(ref, dict) or isinstance(got, dict):  # an exception recorded: the same type
        assert got == ref, what
    elif isinstance(ref, bool):
        assert got is ref, what
    else:
        np.testing.assert_allclose(np.array(_num(got), dtype=float), np.array(_num(ref), dtype=float),
                                   rtol=1e-5, atol=atol, equal_nan=True, err_msg=what)


ours = ours_fixture("distributions_cases")


def test_import_forms():
    import importlib

    import torch
    import torch.distributions as D
    from torch.distributions import Categorical, kl_divergence
    from torch.distributions.normal import Normal
    from torch.distributions.transforms import ExpTransform  # noqa: F401
    assert D is torch.distributions and D.Categorical is Categorical and D.Normal is Normal
    assert D.kl.kl_divergence is kl_divergence and D.constraints.positive.check(torch.tensor(1.0))
    assert importlib.import_module("torch.distributions.one_hot_categorical").OneHotCategorical is D.OneHotCategorical


@pytest.mark.parametrize("case", sorted(REFERENCE["values"]))
def test_values_equal_pytorchs(ours, case):
    got, ref = ours["values"][case], REFERENCE["values"][case]
    assert "error" not in got, f"{case}: constructing it raised {got}"
    for field in ref:
        expected = {"error": KNOWN[case, field]} if (case, field) in KNOWN else ref[field]
        _assert_same(got[field], expected, f"{case}.{field}", ATOL.get(case, 2e-6))


@pytest.mark.parametrize("pair", sorted(REFERENCE["kl"]))
def test_kl_divergence_equals_pytorchs(ours, pair):
    _assert_same(ours["kl"][pair], REFERENCE["kl"][pair], pair)


@pytest.mark.parametrize("loss", sorted(REFERENCE["gradients"]))
def test_loss_gradients_equal_pytorchs(ours, loss):
    """E.g. ``beta_log_prob``: MindSpore's xlogy has d/dx = 0 at x == 0 (PyTorch: log y), so a concentration of 1
    got a wrong gradient before ``utils._xlogy``."""
    got, ref = ours["gradients"][loss], REFERENCE["gradients"][loss]
    assert "error" not in got, f"{loss}: {got}"
    _assert_same(got["loss"], ref["loss"], f"{loss}.loss")
    assert sorted(got["grads"]) == sorted(ref["grads"])
    for name in ref["grads"]:
        _assert_same(got["grads"][name], ref["grads"][name], f"{loss}.grad[{name}]")


N = 20000


def _statistics_cases(torch):
    D = torch.distributions
    t = torch.tensor
    return {
        "Normal": D.Normal(t([0.5, -1.0, 2.0]), t([1.5, 0.3, 2.0])),
        "Bernoulli": D.Bernoulli(probs=t([0.1, 0.5, 0.9])),
        "Uniform": D.Uniform(t([0.0, -1.0]), t([1.0, 3.0])),
        "Independent": D.Independent(D.Normal(t([[0.5, -1.0], [1.0, 2.0]]), t([[1.0, 0.5], [2.0, 0.1]])), 1),
        "OneHotCategorical": D.OneHotCategorical(t([0.2, 0.5, 0.3])),
        "MultivariateNormal": D.MultivariateNormal(t([0.5, -1.0, 2.0]), scale_tril=t(
            [[1.2, 0.0, 0.0], [0.3, 0.8, 0.0], [-0.5, 0.4, 0.6]])),
        "Beta": D.Beta(t([0.5, 2.0]), t([2.0, 0.7])),
        "Dirichlet": D.Dirichlet(t([0.5, 1.0, 2.0])),
        "Gamma": D.Gamma(t([0.5, 3.0]), t([2.0, 0.7])),
        "Exponential": D.Exponential(t([0.5, 3.0])),
        "Laplace": D.Laplace(t([0.5, -1.0]), t([1.5, 0.3])),
        "Poisson": D.Poisson(t([0.5, 4.0])),
        "LogNormal": D.LogNormal(t([0.0, 0.5]), t([0.5, 0.25])),
    }


@pytest.mark.parametrize("name", ["Normal", "Bernoulli", "Uniform", "Independent", "OneHotCategorical",
                                  "MultivariateNormal", "Beta", "Dirichlet", "Gamma", "Exponential", "Laplace",
                                  "Poisson", "LogNormal"])
def test_sample_mean_within_4_standard_errors(name):
    import torch
    torch.manual_seed(1234)  # MindSpore's RNG, seeded: the test is deterministic, not flaky
    d = _statistics_cases(torch)[name]
    s = d.sample((N,))
    assert tuple(s.shape) == (N, *d.batch_shape, *d.event_shape)
    assert bool(d.support.check(s).all())
    z = (s.double().mean(0) - d.mean.double()) / (d.stddev.double() / math.sqrt(N))
    assert float(z.abs().max()) < 4, f"{name}: sample mean {s.double().mean(0).tolist()} vs {d.mean.tolist()}"
    if d.has_rsample:
        with torch.no_grad():
            r = d.rsample((3,))
        assert tuple(r.shape) == (3, *d.batch_shape, *d.event_shape)


def test_categorical_sample_frequencies_shapes_and_seed():
    import torch
    from torch.distributions import Categorical
    probs = torch.tensor([[0.2, 0.5, 0.3], [0.7, 0.0, 0.3]])
    m = Categorical(probs)
    assert tuple(m.sample().shape) == (2,) and tuple(m.sample((4, 5)).shape) == (4, 5, 2)
    torch.manual_seed(1234)
    s = m.sample((N,))
    for row in range(2):
        for k in range(3):
            p = float(probs[row, k])
            freq = float((s[:, row] == k).double().mean())
            assert abs(freq - p) <= 4 * math.sqrt(p * (1 - p) / N) + 1e-12, (row, k, freq, p)
    torch.manual_seed(7)
    a = m.sample((50,)).tolist()
    torch.manual_seed(7)
    assert m.sample((50,)).tolist() == a
    assert m.sample((50,)).tolist() != a  # the next draws are new ones


def test_normal_rsample_gradient_is_the_reparameterisation():
    """d/dmu sum(z^2) = 2z, d/dsigma = 2z * eps with z = mu + eps * sigma (PyTorch's Normal.rsample)."""
    import torch
    from torch.distributions import Normal

    class Head(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mu = torch.nn.Parameter(torch.tensor([0.5, -1.0, 2.0]))
            self.sigma = torch.nn.Parameter(torch.tensor([1.5, 0.3, 2.0]))

        def forward(self):
            return Normal(self.mu, self.sigma).rsample((4,))

    head = Head()
    z = head()
    (z ** 2).sum().backward()
    z, mu, sigma = z.numpy(), head.mu.detach().numpy(), head.sigma.detach().numpy()
    eps = (z - mu) / sigma
    np.testing.assert_allclose(head.mu.grad.numpy(), (2 * z).sum(0), rtol=1e-5)
    np.testing.assert_allclose(head.sigma.grad.numpy(), (2 * z * eps).sum(0), rtol=1e-5, atol=1e-6)


def test_argument_and_support_validation_as_pytorch():
    """validate_args defaults to True as in PyTorch: the same ValueError messages (observed with .venv-ref)."""
    import torch
    from torch.distributions import Categorical, Normal
    with pytest.raises(ValueError, match=r"^Expected parameter scale \(Tensor of shape \(\)\) of distribution "
                                         r"Normal\(loc: 0.0, scale: -1.0\) to satisfy the constraint "
                                         r"GreaterThan\(lower_bound=0.0\), but found invalid values:"):
        Normal(torch.tensor(0.0), torch.tensor(-1.0))
    with pytest.raises(ValueError, match=r"^Expected value argument \(Tensor of shape \(\)\) to be within the support "
                                         r"\(IntegerInterval\(lower_bound=0, upper_bound=2\)\) of the distribution"):
        Categorical(logits=torch.zeros(3)).log_prob(torch.tensor(3))
    assert Normal(torch.tensor(0.0), torch.tensor(-1.0), validate_args=False).scale.item() == -1.0


def test_gamma_rsample_with_grad_raises_at_the_users_line():
    """No reparameterised Gamma gradient here (PyTorch's _standard_gamma_grad): an error, not a zero gradient."""
    import torch
    from torch.distributions import Beta, Gamma
    d = Gamma(torch.tensor([2.0]), torch.tensor([1.0]))
    with pytest.raises(NotImplementedError, match=r"test_distributions.py:\d+: Gamma.rsample\(\) needs"):
        d.rsample()
    with pytest.raises(NotImplementedError, match=r"test_distributions.py:\d+: Dirichlet.rsample\(\) needs"):
        Beta(torch.tensor([2.0]), torch.tensor([1.0])).rsample()
    assert tuple(d.sample((3,)).shape) == (3, 1)  # sample() (no_grad) draws


def _check_rsample_steps(steps):
    target = np.array([[0.5, -0.5, 1.0], [0.0, 0.2, -0.3]])
    for st in steps:
        z, mu, sd = (np.array(st[k]) for k in ("z", "mu", "std"))
        eps = (z - mu) / sd
        np.testing.assert_allclose(st["loss"], ((z - target) ** 2).sum(), rtol=1e-5)
        np.testing.assert_allclose(st["grad_mu_bias"], (2 * (z - target)).sum(0), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(st["grad_log_std_bias"], (2 * (z - target) * eps * sd).sum(0), rtol=1e-5,
                                   atol=1e-6)


def _check_training(got):
    for name in ("reinforce", "actor_critic", "gaussian"):
        np.testing.assert_allclose(got[name]["losses"], TRAIN_REFERENCE[name]["losses"], rtol=1e-5, err_msg=name)
        np.testing.assert_allclose(got[name]["weight_sum"], TRAIN_REFERENCE[name]["weight_sum"], rtol=1e-5,
                                   atol=1e-5, err_msg=name)
    assert got["reinforce"]["valid_samples"] is True


def test_training_loops_through_run_py_equal_pytorchs():
    got, err = run_json("--explain", "--original", os.path.join(FIXTURES, "distributions_train.py"))
    _check_training(got)
    _check_rsample_steps(got["rsample"]["steps"])
    # a step that builds a distribution runs eagerly and says why, at the line that builds it
    assert "distributions_train.py:118: `Categorical(...)` builds or uses a torch.distributions object" in err
    assert "distributions_train.py:152: `Independent(...)` builds or uses a torch.distributions object" in err
    # reinforce.py's loss is summed from log-probs saved over the episode: eager, and --explain says why
    assert "distributions_train.py:80: backward() of policy_loss — eager (PyNative): the loss is built from module " \
           "calls made before the step's statements" in err


@pytest.mark.slow
def test_training_loops_pynative_equal_pytorchs():
    got, _ = run_json("--mode", "pynative", "--original", os.path.join(FIXTURES, "distributions_train.py"))
    _check_training(got)
    _check_rsample_steps(got["rsample"]["steps"])


def test_graph_mode_python_call_error_is_explained():
    """A module whose forward returns a distribution (``return Categorical(logits=...)``) inside a compiled step or a
    compiled no_grad forward: MindSpore's message, its lax-syntax advice left out, says what cannot compile."""
    from adapter import ms_errors
    text = ("When handling script '__call_func_str__(logits=__input__value_0__,) in graph mode', the inputs should be "
            "constant, but found variable '__input__value_0__' to be nonconstant. Try to set jit_syntax_level to LAX.\n"
            "\n----------------------------------------------------\n- C++ Call Stack: (For framework developers)\n"
            "----------------------------------------------------\nmindspore/ccsrc/x.cc:1 F\n")
    assert ms_errors.cause(text) == ("graph mode cannot call this Python class or function with tensor arguments "
                                     "(e.g. a torch.distributions constructor; MindSpore: \"the inputs should be "
                                     "constant\")")


def test_report_names_the_patch():
    """``run.py --report`` lists ``torch.distributions.Categorical`` as handled by patches/distributions.py (it
    named the package file, patches/_distributions/discrete.py)."""
    from app.tools import report_risks
    report_risks.clear_cache()
    assert report_risks.provider("torch.distributions.Categorical", defined=True) == "patches/distributions.py"
    assert report_risks.provider("torch.optim.LBFGS", defined=True) == "patches/lbfgs.py"
