"""torch.optim.LBFGS (patches/lbfgs.py, PyTorch's algorithm vendored) against real PyTorch's on the same problem,
same initial weights: tests/fixtures/lbfgs_cases.py, reference recorded in tests/fixtures/lbfgs_reference.json.
float64 cases agree to rounding (they need patches/float64_precision.py: LBFGS's line search runs in float64
scalars and dots), float32 ones to float32 rounding; the closure and iteration counts are equal."""
import json
import os
import sys

import numpy as np
import pytest

from support import FIXTURES, json_from_brace, load_reference, run_py

sys.path.insert(0, FIXTURES)
REFERENCE = load_reference("lbfgs_reference.json", "cases")


def _check(ours, ref, case):
    assert (ours["closure_calls"], ours["func_evals"], ours["n_iter"]) == \
        (ref["closure_calls"], ref["func_evals"], ref["n_iter"])
    tol = 1e-5 if "float32" in case else 1e-12
    np.testing.assert_allclose(ours["losses"], ref["losses"], rtol=tol)
    np.testing.assert_allclose(ours["weights"], ref["weights"], rtol=0, atol=tol)


@pytest.mark.parametrize("case", sorted(REFERENCE))
def test_lbfgs_equals_pytorch_on_the_eager_bridge(case):
    import torch
    import lbfgs_cases
    _check(lbfgs_cases.run(torch, case), REFERENCE[case], case)


def test_lbfgs_with_a_compiled_closure_step_equals_pytorch():
    """Through run.py the closure's `loss.backward()` is a compiled step site (adapter/step_rewrite.py); LBFGS's
    in-place parameter updates between its calls must reach the compiled graph's parameters."""
    proc = run_py("--explain", "--original", os.path.join(FIXTURES, "lbfgs_cases.py"), "strong_wolfe")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "backward() of loss — compiled (graph mode)" in proc.stderr, proc.stderr[-3000:]
    ours = json_from_brace(proc.stdout)["cases"]["strong_wolfe"]
    _check(ours, REFERENCE["strong_wolfe"], "strong_wolfe")


def test_lbfgs_is_a_torch_optimizer_with_pytorchs_arguments():
    import torch
    w = torch.nn.Parameter(torch.ones(3))
    opt = torch.optim.LBFGS([w], lr=0.5, history_size=7)
    assert isinstance(opt, torch.optim.Optimizer)
    assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[0]["max_eval"] == 25  # max_iter * 5 // 4
    assert opt.param_groups[0]["history_size"] == 7 and opt.param_groups[0]["line_search_fn"] is None
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        torch.optim.LBFGS([w], lr=-1)
    from torch.optim.lbfgs import LBFGS  # noqa: F401 (the module path PyTorch has)
