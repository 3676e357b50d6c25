"""Random tensors drawn inside a compiled step are new at every step (adapter/graph_semantics.py, _GRAPH_RANDOM).

MindTorch draws ``torch.randn`` / ``rand`` / ``randn_like`` / ``rand_like`` with numpy; the graph compiler ran that
once, at compile time, so every compiled step reused one draw, silently: pytorch/examples dcgan trained G on one
noise batch for the whole run (D's loss over the last 8 iterations 0.43 where PyTorch gives 0.17-0.26, issue 13),
and vae's ``reparameterize`` used one ``eps``. Without the fix (2026-11-23) every compiled step's draws equalled
the first compiled step's. References: distinct draws at every step, and the closed-form moments of N(0, 1) and
U(0, 1) over all draws (mean within 5 standard errors; std of N(0, 1) within 15 %; U(0, 1) in [0, 1)).
"""
import os

import numpy as np

from support import run_json
import pytest

# also on CI's second MindSpore (pytest.ini: stack): graph mode: MindSpore's graph compiler and its syntax support
pytestmark = pytest.mark.stack

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "graph_random.py")
KINDS = ("randn", "rand", "randn_like", "rand_like")


def test_random_tensors_in_a_compiled_step_are_new_at_every_step():
    draws, stderr = run_json("--explain", "--original", FIXTURE)
    assert "graph_random.py:32: backward() of loss — compiled" in stderr, stderr[-2000:]
    assert len(draws) == 6
    for kind in KINDS:
        steps = [np.array(d[kind]) for d in draws]
        for i in range(len(steps)):
            for j in range(i):
                assert not np.array_equal(steps[i], steps[j]), f"{kind}: step {i + 1} drew step {j + 1}'s values"
        values = np.concatenate(steps)
        if kind.startswith("randn"):
            assert abs(values.mean()) <= 5 / np.sqrt(values.size), f"{kind}: mean {values.mean():.3f}"
            assert 0.85 <= values.std() <= 1.15, f"{kind}: std {values.std():.3f}"
        else:
            assert values.min() >= 0.0 and values.max() < 1.0, f"{kind}: outside [0, 1)"
            assert abs(values.mean() - 0.5) <= 5 * np.sqrt(1 / 12) / np.sqrt(values.size), f"{kind}: mean"


HOST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "graph_host_random.py")


def test_host_random_draws_make_the_site_run_eagerly_with_pytorch_semantics():
    """mixup-cifar10's loop (``np.random.beta`` + ``torch.randperm`` in a helper, ``random.random()`` in the loop):
    without the fix the compiled steps 2.. reused step 2's lam, coin and permutation (frozen at compile time). The site
    then ran eagerly; since 2026-12-06 the helper's call and the coin run on the host each step (a graph break,
    adapter/host_values.DrawingFunctions) and the step compiles. Either way it draws exactly what ``--mode pynative``
    draws from the same seeds."""
    log, stderr = run_json("--explain", "--original", HOST)
    eager, _ = run_json("--mode", "pynative", "--original", HOST)
    log, eager = log["mixup"], eager["mixup"]
    for key in ("lam", "coin", "index"):
        values = [step[key] for step in log]
        assert all(values[i] != values[j] for i in range(len(values)) for j in range(i)), f"{key} repeats: {values}"
        assert values == [step[key] for step in eager], key
    assert np.allclose([step["loss"] for step in log], [step["loss"] for step in eager], rtol=1e-5)
    # `coin = random.random()` and the mixup_data() call run on the host before the step (graph inputs,
    # adapter/host_values.py)
    assert "graph_host_random.py:46: backward() of loss — compiled (graph mode, fused with optimizer.step() at line " \
           "47); 1 graph(s)" in stderr, stderr[-2000:]
    assert "graph inputs: coin (tests/fixtures/graph_host_random.py:42), x (tests/fixtures/graph_host_random.py:41), " \
           "lam (tests/fixtures/graph_host_random.py:41)" in stderr, stderr[-2000:]
    assert "PyNative" not in stderr, stderr[-2000:]


def test_randperm_in_a_compiled_step_is_new_at_every_step():
    """``torch.randperm(16)`` alone in a compiled site, 300 steps: a permutation of 0..15 at every step, never
    repeating (without the fix, steps 2.. all equal: numpy drew it once, at compile time), and uniform: the first
    entry's mean within 5 standard errors of 7.5 (variance (16**2 - 1) / 12 of the discrete uniform on 0..15), and its
    16 counts' chi-square (15 degrees of freedom) below 40 (P < 0.001 for a uniform permutation)."""
    log, stderr = run_json("--explain", "--original", HOST, "perm")
    assert "graph_host_random.py:54: backward() of loss2 — compiled" in stderr, stderr[-2000:]
    perms = [tuple(p) for p in log["perms"]]
    assert len(perms) == 300
    assert all(sorted(p) == list(range(16)) for p in perms), perms[:3]
    assert len(set(perms)) == len(perms), perms[:3]
    first = np.array([p[0] for p in perms])
    assert abs(first.mean() - 7.5) <= 5 * np.sqrt((16 ** 2 - 1) / 12 / first.size), first.mean()
    counts = np.bincount(first, minlength=16)
    expected = first.size / 16
    assert ((counts - expected) ** 2 / expected).sum() < 40, counts
