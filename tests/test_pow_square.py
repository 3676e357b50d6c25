"""``x.pow(2)`` / ``torch.pow(x, 2)`` / ``x ** 2`` of float32/float64 tensors (patches/pow_square.py), bit-exact
against real PyTorch 2.13 on the same script (tests/fixtures/pow_square_reference.json, recorded with
``.venv-ref/bin/python tests/fixtures/pow_square_script.py``): eager, its gradient, and inside a compiled training step.

Before the patch (``ADAPTER_DISABLE_PATCHES=pow_square``): MindSpore's ``Pow`` kernel was 1 ulp off ``x * x`` in 0.07%
of the values, so the float32 digests (``method`` ... ``in_place``, ``step_pow``) differed; the gradient, float64 and
integer results were already PyTorch's and must stay so; ``x.pow(exponent=2)`` raised TypeError (the wrapper of
patches/float64_precision.py names the argument ``other``; this patch's wrapper, outermost, keeps ``exponent``)."""
import os

import pytest

from support import FIXTURES, load_reference, run_json


@pytest.fixture(scope="module")
def results():
    ref = load_reference("pow_square_reference.json")
    got, _ = run_json("--original", os.path.join(FIXTURES, "pow_square_script.py"))
    return ref, got


@pytest.mark.parametrize("key", ["method", "method_float", "function", "operator", "in_place", "exponent_keyword", "float64", "int64",
                                 "int64_dtype", "exponent_3_dtype", "eager_grad", "step_pow", "step_weight"])
def test_equals_pytorch(results, key):
    ref, got = results
    assert got[key] == ref[key]
