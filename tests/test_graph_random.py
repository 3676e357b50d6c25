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

from run_json import run

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "graph_random.py")
KINDS = ("randn", "rand", "randn_like", "rand_like")


def test_random_tensors_in_a_compiled_step_are_new_at_every_step():
    draws, stderr = run("--explain", "--original", FIXTURE)
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
