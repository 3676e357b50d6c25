"""Mixed precision (patches/amp.py): autocast regions and GradScaler, in the eager bridge and the compiled step.

References: GradScaler's rules as PyTorch documents and implements them (torch/amp/grad_scaler.py: skip the step and
multiply the scale by backoff_factor on inf/NaN, multiply by growth_factor after growth_interval clean steps), plain
SGD in numpy for the weights, and the eager bridge for the compiled step.
"""
import os
import sys

import numpy as np
import pytest

from support import FIXTURES, ROOT, run_json

XDIST_FIRST = True  # AMP training runs (~2 min): started first under xdist (tests/conftest.py)

# also on CI's second MindSpore (pytest.ini: stack): AMP: float16 kernels and casts differ between MindSpore builds
pytestmark = pytest.mark.stack

DATA = os.path.join(ROOT, "data")


@pytest.fixture
def amp_level():
    from patches import amp
    amp.set_level("auto")
    yield amp
    amp.set_level("device")


def _linear(seed=0):
    import torch
    torch.manual_seed(seed)
    model = torch.nn.Linear(4, 3)
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal((8, 4)).astype(np.float32))
    y = torch.tensor(rng.integers(0, 3, 8).astype(np.int64))
    return model, x, y


def _weights(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


# -- autocast ----------------------------------------------------------------------------------------------------
def test_autocast_region_runs_conv_and_matmul_in_float16_and_gives_float32_outputs(amp_level):
    import torch
    import torch.nn as nn
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 6 * 6, 5))
    seen = {}
    model[0].register_forward_hook(lambda m, i, o: seen.__setitem__("conv", o.dtype))
    model[1].register_forward_hook(lambda m, i, o: seen.__setitem__("bn", o.dtype))
    model[4].register_forward_hook(lambda m, i, o: seen.__setitem__("linear_in", i[0].dtype))
    x = torch.randn(4, 3, 8, 8)
    y = torch.tensor([0, 1, 2, 3])
    with torch.autocast("cuda", dtype=torch.float16):
        out = model(x)
        loss = nn.functional.cross_entropy(out, y)
        assert torch.is_autocast_enabled()
    assert seen == {"conv": torch.float16, "bn": torch.float32, "linear_in": torch.float32}
    assert out.dtype == torch.float32 and loss.dtype == torch.float32
    # float16 numbers: close to the float32 model, not equal
    ref = model(x)
    assert seen["conv"] == torch.float32  # outside the region: float32 again (per region, not the model for good)
    diff = float((out - ref).abs().max())
    assert 0 < diff < 5e-2, diff
    # enabled=False inside an enabled region, and the decorator form
    with torch.cuda.amp.autocast():
        with torch.cuda.amp.autocast(enabled=False):
            model(x)
            assert not torch.is_autocast_enabled()
        assert seen["conv"] == torch.float32 and torch.is_autocast_enabled()
        model(x)
        assert seen["conv"] == torch.float16

    @torch.cuda.amp.autocast()
    def forward(inputs):
        return model(inputs)

    assert forward(x).dtype == torch.float32 and seen["conv"] == torch.float16
    assert not torch.is_autocast_enabled()


def test_autocast_on_cpu_by_default_runs_float32_and_says_so(capsys):
    import torch
    from patches import amp
    assert amp.effective_level() == "O0"  # CPU: float16 is slower than float32 here (bench/run_bench.py --amp)
    conv = torch.nn.Conv2d(3, 4, 3)
    x = torch.randn(2, 3, 6, 6)
    amp._notes_printed.discard("O0")
    with torch.autocast("cuda"):
        line = sys._getframe().f_lineno - 1
        out = conv(x)
    assert out.dtype == torch.float32
    np.testing.assert_array_equal(out.numpy(), conv(x).numpy())
    # PyTorch's CPU autocast would give bfloat16: the difference is said once, at the user's file:line
    assert f"test_amp.py:{line}: autocast: the region runs in float32 on this device" in capsys.readouterr().err


# -- GradScaler --------------------------------------------------------------------------------------------------
def test_grad_scaler_skips_the_overflow_step_and_halves_the_scale():
    import torch
    model, x, y = _linear()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler()
    assert scaler.get_scale() == 65536.0
    history = []
    for step in range(4):
        data = x * float("inf") if step == 1 else x  # a forced overflow at step 1
        before = _weights(model)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(data), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        changed = any(not np.array_equal(a, b) for a, b in zip(before, _weights(model)))
        history.append((changed, scaler.get_scale()))
    assert history == [(True, 65536.0), (False, 32768.0), (True, 32768.0), (True, 32768.0)]


def test_grad_scaler_grows_after_growth_interval_and_matches_plain_sgd():
    import torch
    model, x, y = _linear()
    ref = [w.astype(np.float64) for w in _weights(model)]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda", init_scale=1024.0, growth_interval=3)
    scales = []
    for _ in range(7):
        scale = scaler.get_scale()
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaled = [p.grad.numpy().astype(np.float64) for p in model.parameters()]
        scaler.step(optimizer)
        unscaled = [p.grad.numpy() for p in model.parameters()]
        for s_, u in zip(scaled, unscaled):
            np.testing.assert_allclose(u, s_ / scale, rtol=1e-6)
        ref = [w - 0.1 * g / scale for w, g in zip(ref, scaled)]  # SGD on the unscaled gradients
        scaler.update()
        scales.append(scaler.get_scale())
    assert scales == [1024.0, 1024.0, 2048.0, 2048.0, 2048.0, 4096.0, 4096.0]
    for w, r in zip(_weights(model), ref):
        np.testing.assert_allclose(w, r, rtol=1e-5, atol=1e-6)


def test_grad_scaler_unscale_clip_and_weights_equal_unscaled_sgd():
    """Powers of two scale exactly: the scaled run's weights equal plain SGD on the unscaled loss, bit for bit."""
    import torch
    results = []
    for use_scaler in (True, False):
        model, x, y = _linear()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.cuda.amp.GradScaler(enabled=use_scaler, growth_interval=2)
        norms = []
        for _ in range(5):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)))
            scaler.step(optimizer)
            scaler.update()
        results.append((_weights(model), norms))
    (w_scaled, n_scaled), (w_plain, n_plain) = results
    np.testing.assert_allclose(n_scaled, n_plain, rtol=1e-6)
    assert max(n_plain) > 0.1  # the clip was active
    for a, b in zip(w_scaled, w_plain):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_grad_scaler_state_dict_and_pytorch_errors():
    import torch
    model, x, y = _linear()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.cuda.amp.GradScaler(init_scale=256.0, growth_interval=2)
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update"):
        scaler.update()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called on this optimizer"):
        scaler.unscale_(optimizer)
    scaler.step(optimizer)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update"):
        scaler.step(optimizer)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(optimizer, closure=lambda: loss)
    scaler.update()
    state = scaler.state_dict()
    assert state == {"scale": 256.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2,
                     "_growth_tracker": 1}
    other = torch.cuda.amp.GradScaler()
    other.load_state_dict(state)
    assert other.state_dict() == state
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        other.load_state_dict({})
    disabled = torch.cuda.amp.GradScaler(enabled=False)
    assert disabled.scale(loss) is loss and disabled.get_scale() == 1.0 and disabled.state_dict() == {}
    with pytest.raises(RuntimeError, match="disabled instance of GradScaler"):
        disabled.load_state_dict(state)


# -- through run.py: eager bridge vs compiled step ------------------------------------------------------------

@pytest.mark.parametrize("extra,fused", [
    (["--clip", "0.5"], "clip_grad_norm_+GradScaler+optimizer"),  # unscale_ + clip + scaler.step in the graph
    (["--context", "cuda"], "forward+backward+GradScaler+optimizer"),
])
def test_compiled_amp_step_matches_eager_including_skipped_steps(extra, fused):
    script = os.path.join(FIXTURES, "amp_train.py")
    eager, _ = run_json("--amp-level", "auto", "--mode", "pynative", "--original", script, *extra)
    compiled, err = run_json("--amp-level", "auto", "--explain", "--original", script, *extra)
    assert fused in err, err
    assert compiled["dtypes"] == eager["dtypes"] == {"conv": "torch.float16", "output": "torch.float32",
                                                      "loss": "torch.float32"}
    np.testing.assert_allclose(compiled["losses"], eager["losses"], rtol=1e-5)
    assert compiled["scales"] == eager["scales"]
    # float16 gradients overflow when the scale grows (growth_interval 3): those steps are skipped, weights unchanged,
    # and the scale halves there (PyTorch's rule); the graph skipped exactly the steps the eager bridge skipped
    assert compiled["skipped"] == eager["skipped"] and compiled["skipped"], compiled
    for step in compiled["skipped"]:
        assert compiled["scales"][step] == compiled["scales"][step - 1] / 2


def test_amp_off_through_suppress_compiles_and_equals_float32():
    script = os.path.join(FIXTURES, "amp_train.py")
    off, err = run_json("--amp-level", "auto", "--explain", "--original", script, "--amp", "0", "--context", "suppress")
    assert "compiled (graph mode, fused" in err, err
    plain, _ = run_json("--amp-level", "O0", "--mode", "pynative", "--original", script, "--context", "cuda")
    assert off["dtypes"]["conv"] == plain["dtypes"]["conv"] == "torch.float32"
    assert off["skipped"] == [] and set(off["scales"]) == {1.0}
    # float32 without a scaler vs float32 with one (O0): powers of two scale exactly, no overflow
    np.testing.assert_allclose(off["losses"], plain["losses"], rtol=1e-5)


def test_model_half_without_scaler_runs_in_float16():
    script = os.path.join(FIXTURES, "half_train.py")
    half, _ = run_json("--original", script)
    eager, _ = run_json("--mode", "pynative", "--original", script)
    assert half["dtypes"] == {"output": "torch.float16", "loss": "torch.float16",
                              "weight": "torch.float16"}
    # float16 arithmetic: the compiled and eager runs agree to float16 precision over the first steps
    np.testing.assert_allclose(half["losses"][:3], eager["losses"][:3], rtol=5e-3)


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isfile(os.path.join(DATA, "FashionMNIST", "raw", "train-images-idx3-ubyte")),
                    reason="real Fashion-MNIST not staged: run 'make data'")
def test_amp_on_fashion_mnist_reaches_float32_accuracy_within_one_point():
    script = os.path.join(FIXTURES, "amp_fashion.py")
    amp, _ = run_json("--amp-level", "auto", "--original", script, "--data-root", DATA, "--amp", timeout=900)
    fp32, _ = run_json("--original", script, "--data-root", DATA, timeout=900)
    assert fp32["accuracy"] > 80.0, fp32["accuracy"]
    assert abs(amp["accuracy"] - fp32["accuracy"]) <= 1.0, (amp["accuracy"], fp32["accuracy"])
