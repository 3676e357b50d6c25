"""``nn.Embedding`` / ``F.embedding`` weight gradients with repeated ids (every language model's batches repeat ids),
against real PyTorch 2.13's, eagerly (3 runs in this process: a racy accumulation would differ between them) and in
a compiled training loop (tests/fixtures/embedding_grad_steps.py, ``--mode pynative`` and ``auto``).

Before (2026-12-07, both stacks): ``scale_grad_by_freq=True`` was ignored by MindTorch 0.4.0, so an id seen 3 times
got 3x PyTorch's gradient (the case below: squared norm 21.35, PyTorch 4.19; the fixture's step 1: 18.74, PyTorch
3.51); ``max_norm`` clipped the whole weight differentiably and never renormed it in place (forward, gradient and
weights off: the fixture's ``max_norm`` variants). Fixed in patches/embedding.py. The plain and ``padding_idx`` gradients with repeated ids were already
PyTorch's (the 2.5-dev report of a nondeterministic gradient did not reproduce: kept here as a guard).
"""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from support import fixture_path, load_reference, run_json

pytestmark = pytest.mark.stack

IDS = [[1, 2, 1, 3, 0], [3, 3, 1, 0, 0]]  # 0 three times, 1 three times, 3 three times, 2 once

# Real PyTorch 2.13 (.venv-ref): rows 0-3 of Embedding(10, 4, **kwargs).weight.grad after
# (emb(IDS) * cos(arange(40).reshape(2, 5, 4) * 0.7)).sum().backward(), weight sin(arange(40).reshape(10, 4) * 0.3);
# rows 4-9 are zero.
PLAIN = [[0.283166, 1.060197, 1.338599, 0.98744], [2.506952, 1.884764, 0.37614, -1.309386],
         [-0.942222, -0.936457, -0.490261, 0.186512], [-0.84323, -1.261866, -1.087027, -0.400942]]
BY_FREQ = [[0.094389, 0.353399, 0.4462, 0.329147], [0.835651, 0.628255, 0.12538, -0.436462],
           [-0.942222, -0.936457, -0.490261, 0.186512], [-0.281077, -0.420622, -0.362342, -0.133647]]
CASES = {
    "plain": ({}, PLAIN),
    "padding_idx": ({"padding_idx": 0}, [[0.0] * 4] + PLAIN[1:]),
    "scale_grad_by_freq": ({"scale_grad_by_freq": True}, BY_FREQ),
    "both": ({"padding_idx": 0, "scale_grad_by_freq": True}, [[0.0] * 4] + BY_FREQ[1:]),
}


def _weight():
    return torch.sin(torch.arange(40, dtype=torch.float32).reshape(10, 4) * 0.3)


def _scale():
    return torch.cos(torch.arange(40, dtype=torch.float32).reshape(2, 5, 4) * 0.7)


def _want(rows):
    return np.concatenate([np.array(rows, np.float32), np.zeros((6, 4), np.float32)])


@pytest.mark.parametrize("case", list(CASES))
def test_module_gradient_with_repeated_ids_is_pytorchs(case):
    kwargs, rows = CASES[case]
    got = []
    for _ in range(3):
        emb = nn.Embedding(10, 4, **kwargs)
        with torch.no_grad():
            emb.weight.copy_(_weight())
        out = emb(torch.tensor(IDS))
        np.testing.assert_array_equal(out.detach().numpy(), _weight().numpy()[np.array(IDS)])  # forward unchanged
        (out * _scale()).sum().backward()
        got.append(emb.weight.grad.numpy().copy())
    for g in got:
        np.testing.assert_allclose(g, _want(rows), rtol=1e-5, atol=1e-6)
    assert all(np.array_equal(g, got[0]) for g in got)  # deterministic


def test_functional_scale_grad_by_freq():
    w = _weight().requires_grad_(True)
    (F.embedding(torch.tensor(IDS), w, scale_grad_by_freq=True) * _scale()).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), _want(BY_FREQ), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["pynative", "auto"])
def test_training_loop_as_pytorch(mode, tmp_path):
    got, _ = run_json("--mode", mode, "--original", fixture_path("embedding_grad_steps.py"), cache_dir=tmp_path)
    for name, want in load_reference("embedding_grad_steps_reference.json").items():
        np.testing.assert_allclose(got[name]["grad_sq_norms_losses"], want["grad_sq_norms_losses"], rtol=1e-5, err_msg=name)
        np.testing.assert_allclose(got[name]["weights"], want["weights"], rtol=1e-5, atol=1e-6, err_msg=name)


def test_max_norm_renorms_looked_up_rows_in_place():
    """PyTorch 2.13 (.venv-ref): Embedding(10, 4, max_norm=1.0), weight 1.5 * sin(arange(40).reshape(10, 4) * 0.3):
    the looked-up rows 0-3 are renormed in place, rows 4-9 kept, the gradient is the plain lookup's."""
    emb = nn.Embedding(10, 4, max_norm=1.0)
    with torch.no_grad():
        emb.weight.copy_(_weight() * 1.5)
    out = emb(torch.tensor(IDS))
    (out * _scale()).sum().backward()
    np.testing.assert_allclose(out.detach().numpy().reshape(-1)[:8], [0.494174, 0.528879, 0.516341, 0.45768,
                                                                     0.816898, 0.516869, 0.170669, -0.190776],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(out.detach().sum()), 6.398533, rtol=1e-5)
    np.testing.assert_allclose(emb.weight.grad.numpy(), _want(PLAIN), rtol=1e-5, atol=1e-6)
    weight = emb.weight.detach().numpy()
    np.testing.assert_allclose(weight[0], [0.0, 0.292644, 0.559147, 0.775703], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(weight[:4], axis=1), 1.0, rtol=1e-5)  # renormed in place
    np.testing.assert_array_equal(weight[4:], (_weight() * 1.5).numpy()[4:])
    np.testing.assert_allclose(float(weight.sum()), -1.0894458, rtol=1e-5)
