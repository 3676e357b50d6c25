"""Anomaly detection (``patches/anomaly.py``): the first module whose forward output or gradient is non-finite is
named (qualified name, class), with the training step and the user's file:line; off, nothing changes."""
import os
import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn

import patches
from adapter import compiled_step
from adapter.userframe import display_path
from patches import anomaly

from support import ROOT, run_py

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "anomaly_train.py")
THIS = display_path(__file__)  # as the messages show it

anomaly.apply()


@pytest.fixture(autouse=True)
def _anomaly_off_and_mode_restored():
    mode = compiled_step.get_mode()
    anomaly.set_anomaly_enabled(False)
    yield
    anomaly.set_anomaly_enabled(False)
    compiled_step.set_mode(mode)


def _line(marker):
    """Line number of the line of this file that ends with ``# <marker>``."""
    with open(__file__) as f:
        return next(i for i, text in enumerate(f, 1) if text.rstrip().endswith(f"# {marker}"))


# -- models --------------------------------------------------------------------------------------------------------
class Exp(nn.Module):
    def forward(self, x):
        return torch.exp(x)


class Sqrt(nn.Module):
    def forward(self, x):
        return torch.sqrt(x)


class ExpBlock(nn.Module):
    """tanh bounds the input, so exp stays finite unless fc's weights blow up."""

    def __init__(self, n):
        super().__init__()
        self.norm = nn.Tanh()
        self.fc = nn.Linear(n, n)
        self.act = Exp()

    def forward(self, x):
        return self.act(self.fc(self.norm(x)))  # act-call


class ExpNet(nn.Module):
    def __init__(self, n=8):
        super().__init__()
        self.stem = nn.Linear(4, n)
        self.blocks = nn.Sequential(ExpBlock(n), ExpBlock(n), ExpBlock(n))
        self.head = nn.Linear(n, 2)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


class SqrtNet(nn.Module):
    """Forward finite; ``features.2`` (sqrt of an exact 0) has an infinite derivative, which tanh passes on (tanh'(0)
    = 1). ``skip`` consumes the same tensor as ``features`` and is called after it: its input gradient is non-finite
    only through ``features``."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 4)
        self.features = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), Sqrt(), nn.Linear(4, 1))
        self.skip = nn.Linear(4, 1)
        with torch.no_grad():
            self.features[0].weight.copy_(torch.zeros(4, 4))
            self.features[0].bias.copy_(torch.zeros(4))

    def forward(self, x):
        h = self.stem(x)
        return self.features(h) + self.skip(h)


def _x(n=3, cols=4, seed=0):
    return torch.tensor(np.random.default_rng(seed).standard_normal((n, cols)).astype(np.float32))


def _train_exp_net(steps, blow_up_at):
    """SGD steps on ExpNet; before step ``blow_up_at``'s forward, blocks.2.fc's weights are scaled by 1e4.

    A step with a non-finite loss skips ``opt.step()``: on this MindSpore build, MindSpore's SGD update with these
    non-finite gradients corrupts the heap (the next forward aborts: malloc / segfault), with or without our patches.
    """
    torch.manual_seed(0)
    model = ExpNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for step in range(1, steps + 1):
        if step == blow_up_at:
            with torch.no_grad():
                model.blocks[2].fc.weight.mul_(1e4)
        opt.zero_grad()
        out = model(_x(seed=step))
        loss = out.pow(2).mean()
        loss.backward()
        losses.append(float(loss.item()))
        if np.isfinite(losses[-1]):
            opt.step()
    return model, losses


# -- forward -------------------------------------------------------------------------------------------------------
def test_forward_inf_names_the_module_the_step_and_the_line():
    anomaly.set_anomaly_enabled(True)
    base = anomaly.steps_counted()
    with pytest.raises(RuntimeError) as info:
        _train_exp_net(steps=5, blow_up_at=3)
    msg = str(info.value)
    assert isinstance(info.value, anomaly.AnomalyError)
    assert "the output of module 'blocks.2.act' (Exp) contains non-finite values" in msg
    assert f"in the forward of training step {base + 3}," in msg  # two completed steps before it
    assert f"called at {THIS}:{_line('act-call')}" in msg  # the user's line that called the module
    assert "Its inputs and parameters are finite, so its own computation produced them" in msg
    assert anomaly.steps_counted() == base + 2


def test_after_a_caught_error_the_next_step_starts_a_fresh_recording():
    anomaly.set_anomaly_enabled(True)
    with pytest.raises(RuntimeError, match="blocks.2.act"):
        _train_exp_net(steps=2, blow_up_at=2)  # the error leaves step 2's forward half-recorded
    model = SqrtNet()
    with torch.no_grad():
        model.features[0].bias.copy_(torch.ones(4))  # sqrt away from 0: finite gradients
    model(_x()).sum().backward()  # only this model's parameters are differentiated
    assert all(np.isfinite(p.grad.asnumpy()).all() for p in model.parameters())


def test_forward_non_finite_input_is_blamed_on_the_data():
    anomaly.set_anomaly_enabled(True)
    model = ExpNet()
    x = _x()
    x[1, 2] = float("inf")
    with pytest.raises(RuntimeError, match=r"module 'stem' \(Linear\).*\n.*input is already non-finite"):
        model(x)


def test_forward_non_finite_parameter_is_reported_as_divergence():
    anomaly.set_anomaly_enabled(True)
    model = ExpNet()
    with torch.no_grad():
        model.blocks[1].fc.bias[0] = float("nan")
    with pytest.raises(RuntimeError) as info:
        model(_x())
    msg = str(info.value)
    assert "module 'blocks.1.fc' (Linear)" in msg and "(3 nan of 24 values)" in msg
    assert "Its own parameter 'bias' already holds non-finite values" in msg


def test_forward_under_no_grad_is_checked_and_says_after_which_step():
    anomaly.set_anomaly_enabled(True)
    model = ExpNet()
    with torch.no_grad():
        model.blocks[0].fc.weight.mul_(1e4)
        with pytest.raises(RuntimeError) as info:
            model(_x())
    msg = str(info.value)
    assert "module 'blocks.0.act' (Exp)" in msg
    assert f"in a forward without gradients (torch.no_grad()) after training step {anomaly.steps_counted()}" in msg


def test_output_inside_a_tuple_is_checked_and_a_parent_with_finite_children_is_blamed():
    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            return h, {"bad": h / 0.0}  # the division in this module's own code

    model = nn.Sequential(nn.Linear(4, 4))
    model.add_module("pair", Pair())
    anomaly.set_anomaly_enabled(True)
    with pytest.raises(RuntimeError) as info:
        model[1](model[0](_x()))
    assert "the output of the top-level module (Pair)" in str(info.value)
    assert "its own forward code (outside its submodules, whose outputs were finite)" in str(info.value)
    with pytest.raises(RuntimeError, match=r"module 'pair' \(Pair\)"):
        model(_x())


# -- backward ------------------------------------------------------------------------------------------------------
def test_gradient_non_finite_names_the_module_whose_backward_produced_it():
    anomaly.set_anomaly_enabled(True)
    model = SqrtNet()
    out = model(_x())
    assert np.isfinite(out.asnumpy()).all()  # the forward is finite: only the gradient is not
    base = anomaly.steps_counted()
    with pytest.raises(RuntimeError) as info:
        out.sum().backward()  # backward-call
    msg = str(info.value)
    assert f"in training step {base + 1}, backward() at {THIS}:{_line('backward-call')}" in msg
    # not 'skip' (called last, its input gradient is non-finite only through 'features'), not 'features.1' (Tanh)
    assert "the gradient became non-finite in module 'features.2' (Sqrt)" in msg
    assert "the gradient w.r.t. its output is finite, but the gradient w.r.t. its input is not" in msg
    assert not np.isfinite(model.features[0].weight.grad.asnumpy()).all()  # .grad is filled, as PyTorch does


def test_gradient_non_finite_at_the_model_output_blames_the_loss_code():
    anomaly.set_anomaly_enabled(True)
    model = ExpNet()
    loss = torch.sqrt(model(_x()) * 0.0).sum()  # finite (0), d sqrt/dx at 0 is inf
    with pytest.raises(RuntimeError, match=r"already non-finite at the output of the top-level module \(ExpNet\): "
                                           r"the code between the model's output and backward\(\)"):
        loss.backward()


def test_non_finite_loss_from_functional_code_is_named():
    anomaly.set_anomaly_enabled(True)
    model = ExpNet()
    loss = torch.log(model(_x()) * 0.0).sum()
    with pytest.raises(RuntimeError, match=r"the loss itself is non-finite \(1 inf of 1 values\)"):
        loss.backward()


def test_only_backward_under_detect_anomaly_falls_back_to_parameter_gradients():
    model = SqrtNet()
    out = model(_x())  # forward with anomaly detection off: module outputs are not watched
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = torch.autograd.detect_anomaly()
    with ctx, pytest.raises(RuntimeError) as info:
        out.sum().backward()
    msg = str(info.value)
    assert "the parameter gradient (weight, bias) of module 'features.0' (Linear) is non-finite" in msg
    assert "enable it before the forward to name the module exactly" in msg


def test_gradients_are_unchanged_by_anomaly_mode():
    """The hooks only observe: .grad with anomaly detection on equals .grad with it off."""
    class TwoUses(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(inplace=True), nn.Linear(6, 6))
            self.head = nn.Sequential(nn.Tanh(), nn.Linear(6, 2))

        def forward(self, x):
            h = self.trunk(x)
            return self.head(h), self.head(h * 0.5), h  # the head called twice, h used three times

    torch.manual_seed(0)
    model = TwoUses()
    model.eval()

    def grads():
        for p in model.parameters():
            p.grad = None
        a, b, h = model(_x(5))
        (a.sum() + b.pow(2).mean() + h.mean()).backward()
        return [p.grad.asnumpy().copy() for p in model.parameters()]

    off = grads()
    anomaly.set_anomaly_enabled(True)
    on = grads()
    for a, b in zip(off, on):
        np.testing.assert_array_equal(a, b)


# -- PyTorch's API, on and off -------------------------------------------------------------------------------------
def test_off_the_inf_propagates_and_nothing_is_wrapped():
    from mindtorch.torch.nn.modules.module import Module
    from mindtorch.torch.tensor import Tensor
    assert not torch.is_anomaly_enabled()
    assert not getattr(Module.__call__, "_adapter_anomaly", False)
    assert not getattr(Tensor.backward, "_adapter_anomaly", False)
    _, losses = _train_exp_net(steps=4, blow_up_at=3)  # no error: as in PyTorch without anomaly mode
    assert np.isfinite(losses[:2]).all() and not np.isfinite(losses[2:]).all()
    model = SqrtNet()
    model(_x()).sum().backward()
    assert not np.isfinite(model.features[0].weight.grad.asnumpy()).all()


def test_detect_anomaly_context_manager():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = torch.autograd.detect_anomaly()
    with pytest.raises(RuntimeError, match=r"module 'blocks.2.act' \(Exp\)"):
        with ctx:
            assert torch.is_anomaly_enabled() and torch.is_anomaly_check_nan_enabled()
            _train_exp_net(steps=3, blow_up_at=2)
    assert not torch.is_anomaly_enabled()
    _train_exp_net(steps=3, blow_up_at=2)  # off again: no error


def test_detect_anomaly_decorator_and_anomaly_mode_module():
    from torch.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
    assert detect_anomaly is torch.autograd.detect_anomaly and set_detect_anomaly is torch.autograd.set_detect_anomaly

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @torch.autograd.detect_anomaly()
        def train():
            assert torch.is_anomaly_enabled()
            model = SqrtNet()
            model(_x()).sum().backward()

    with pytest.raises(RuntimeError, match=r"module 'features.2' \(Sqrt\)"):
        train()
    assert not torch.is_anomaly_enabled()


def test_set_detect_anomaly_call_and_context_manager():
    torch.autograd.set_detect_anomaly(True)
    assert torch.is_anomaly_enabled()
    with torch.autograd.set_detect_anomaly(False):
        assert not torch.is_anomaly_enabled()
        _train_exp_net(steps=3, blow_up_at=2)
    assert torch.is_anomaly_enabled()
    torch.autograd.set_detect_anomaly(False)
    assert not torch.is_anomaly_enabled()


def test_check_nan_false_checks_nothing():
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        assert torch.is_anomaly_enabled() and not torch.is_anomaly_check_nan_enabled()
        _train_exp_net(steps=3, blow_up_at=2)


def test_enabling_switches_training_steps_to_the_eager_bridge(capsys):
    compiled_step.set_mode("auto")
    anomaly.enable()
    assert compiled_step.get_mode() == "pynative"
    assert "anomaly detection is on: training steps run in PyNative (eager)" in capsys.readouterr().err


# -- run.py end to end ---------------------------------------------------------------------------------------------
def _integrated():
    from app.launcher import build_parser
    return "anomaly" in patches._MODULES and "--detect-anomaly" in build_parser().format_help()


needs_integration = pytest.mark.skipif(not _integrated(), reason="patches/__init__.py does not list 'anomaly' or "
                                                                   "run.py has no --detect-anomaly yet")


def _bn2_line():
    with open(FIXTURE) as f:
        return next(i for i, text in enumerate(f, 1) if "out = self.bn2(self.conv2(out))" in text)


@needs_integration
def test_run_py_detect_anomaly_names_layer_and_step():
    proc = run_py("--detect-anomaly", "--original", FIXTURE, "--inf-step", "3")
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "step 2 loss" in proc.stdout and "step 3" not in proc.stdout
    assert "the output of module 'layer2.2.bn2' (BatchNorm2d) contains non-finite values" in proc.stderr
    assert "in the forward of training step 3," in proc.stderr
    assert f"anomaly_train.py:{_bn2_line()}" in proc.stderr


@needs_integration
def test_run_py_script_that_sets_detect_anomaly_itself():
    proc = run_py("--original", FIXTURE, "--inf-step", "2", "--in-script")  # default --mode auto
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "anomaly detection is on: training steps run in PyNative" in proc.stderr
    assert "module 'layer2.2.bn2' (BatchNorm2d)" in proc.stderr and "training step 2," in proc.stderr
