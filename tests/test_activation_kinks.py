"""hardtanh/relu6/leaky_relu/hardswish/hardsigmoid (functions, modules, in-place forms) at their kinks and at NaN
as PyTorch 2.13 (patches/activation_kinks.py): values and input gradients in PyNative (float32 and float64), values
off the kinks bit for bit, and the gradients inside a training step compiled in graph mode. MindSpore's kernels gave
half the gradient at exactly ``min_val``/``max_val`` of hardtanh, the whole at relu6's 6, ``(1 + slope) / 2`` at
leaky_relu's 0, hardswish ``-g / 3`` at -3 and ``1.5 g`` at 3, silently. relu/clamp/threshold, PyTorch's already,
are kept in the cases.

The reference is real PyTorch 2.13's (``scripts/record_reference.py activation_kinks``,
tests/fixtures/activation_kinks_reference.json, 2026-12-07); "nan" stands for NaN."""
import math
import os

import numpy as np
import pytest

from support import FIXTURES, json_from_brace, load_reference, ours_fixture, run_py

pytestmark = pytest.mark.stack

REFERENCE = load_reference("activation_kinks_reference.json")
ours = ours_fixture("activation_kinks_cases")


def _array(value):
    if isinstance(value, list):
        return np.array([_array(v) for v in value], dtype=float)
    return math.nan if value == "nan" else value


@pytest.mark.parametrize("case", [c for c in REFERENCE["run"] if c != "grid"])
def test_values_and_gradients_equal_pytorchs(ours, case):
    want, got = REFERENCE["run"][case], ours[case]
    np.testing.assert_array_equal(_array(got["values"]), _array(want["values"]), err_msg=case)
    np.testing.assert_array_equal(_array(got["grad"]), _array(want["grad"]), err_msg=case)


@pytest.mark.parametrize("name", list(REFERENCE["run"]["grid"]))
def test_values_off_the_kinks_are_pytorchs_bits(ours, name):
    np.testing.assert_array_equal(np.array(ours["grid"][name]), np.array(REFERENCE["run"]["grid"][name]), err_msg=name)


def test_compiled_step_gradients_equal_pytorchs():
    """The activations (functions and modules, one in place) evaluated at their kinks inside a training step compiled
    in graph mode (the first step eager, the next three compiled): PyTorch's losses and ``p.grad`` at every step."""
    proc = run_py("--explain", "--original", os.path.join(FIXTURES, "activation_kinks_cases.py"), "train")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "backward() of loss — compiled (graph mode" in proc.stderr, proc.stderr[-3000:]
    got, want = json_from_brace(proc.stdout), REFERENCE["train"]
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-6)
    np.testing.assert_allclose(got["grads"], want["grads"], rtol=1e-6, atol=1e-7)
