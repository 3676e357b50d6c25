"""``F.binary_cross_entropy`` / ``nn.BCELoss`` (patches/bce.py) against real PyTorch 2.13: values and gradients at
saturated and ordinary probabilities (float32, float64; each reduction; weights), ``binary_cross_entropy_with_logits``
in float64 (MindSpore refused it), the errors, and a compiled
training step on saturated probabilities (tests/fixtures/bce_cases.py, reference tests/fixtures/bce_reference.json).
MindSpore's kernel clamps with eps 1e-12 (a saturated wrong output cost 27.63, PyTorch 100), refused float64 and
checked nothing."""
import os
import sys

import numpy as np
import pytest

from support import FIXTURES, json_from_brace, load_reference, ours_fixture, run_py

sys.path.insert(0, FIXTURES)
REFERENCE = load_reference("bce_reference.json")


ours = ours_fixture("bce_cases")


@pytest.mark.parametrize("case", sorted(REFERENCE["cases"]))
def test_values_and_gradients_equal_pytorchs(ours, case):
    got, ref = ours["cases"][case], REFERENCE["cases"][case]
    tol = 1e-14 if "float64" in case else 1e-6
    # with_logits at |x| = 20: PyTorch's vectorized log_sigmoid and its backward's sigmoid(x) - y lose ~1e-16
    # absolutely on values ~1e-9 (3e-8 relative); here log1p and the exact derivative of its formula
    logits = case.startswith("logits")
    np.testing.assert_allclose(got["loss"], ref["loss"], rtol=tol, err_msg=case,
                               atol=1e-15 * np.max(np.abs(ref["loss"])) if logits else 0)
    if "grad_input" not in ref:
        return
    atol = 1e-15 * np.max(np.abs(ref["grad_input"])) if logits else 0
    np.testing.assert_allclose(got["grad_input"], ref["grad_input"], rtol=tol, atol=atol, err_msg=case)
    for mine, theirs in zip(got["grad_target"], ref["grad_target"]):
        if isinstance(theirs, str):  # PyTorch's +-inf at x exactly 0 or 1: 0 here (patches/bce.py)
            assert mine == 0.0, case
        else:
            np.testing.assert_allclose(mine, theirs, rtol=tol, atol=atol, err_msg=case)


def test_errors_equal_pytorchs(ours):
    assert ours["errors"] == REFERENCE["errors"]


def test_compiled_step_on_saturated_probabilities_equals_pytorch():
    """Every step starts from the same saturated probabilities: PyTorch's gradient there (1e12 / 4) moves them by
    0.025, in the eager first call and in the compiled ones."""
    proc = run_py("--explain", "--original", os.path.join(FIXTURES, "bce_cases.py"), "train")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "backward() of loss — compiled (graph mode" in proc.stderr, proc.stderr[-3000:]
    got = json_from_brace(proc.stdout)
    np.testing.assert_allclose(got["losses"], REFERENCE["train"]["losses"], rtol=1e-6)
    np.testing.assert_allclose(got["p"], REFERENCE["train"]["p"], rtol=1e-6)
