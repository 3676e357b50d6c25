"""print(tensor) in PyTorch's layout (patches/tensor_repr.py). tests/fixtures/tensor_repr_cases.py prints repr() of 26
tensors (floats, ints, bools, empty, float64/int32/uint8/float16 suffixes, nan/inf, scientific mode, a summarized
40x50, 3-D, requires_grad, Parameter); tests/fixtures/tensor_repr_pytorch.json is the same script's output under
real PyTorch 2.13.0 CPU (``.venv-ref/bin/python tests/fixtures/tensor_repr_cases.py``, 2026-11-23). Without the
patch every case differs (MindSpore's ``Tensor(shape=[2], dtype=Float32, value= [...])`` / numpy's ``[1.5 2. ]``)."""
import os

import pytest

from support import FIXTURES, last_json, load_reference, run_py


@pytest.mark.parametrize("disable", [False, pytest.param(True, marks=pytest.mark.xfail(strict=True,
                                                                                          reason="without the patch"))])
def test_repr_matches_pytorch(disable):
    proc = run_py("--original", os.path.join(FIXTURES, "tensor_repr_cases.py"), timeout=300,
                  env=dict(ADAPTER_DISABLE_PATCHES="tensor_repr") if disable else None)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = last_json(proc.stdout)
    want = load_reference("tensor_repr_pytorch.json")
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"case {i}"


def test_format_array_unit():
    import numpy as np
    from patches.tensor_repr import format_array
    assert format_array(np.array([1.5, 2.0], np.float32)) == "tensor([1.5000, 2.0000])"
    assert format_array(np.array(3, np.int64)) == "tensor(3)"
    assert format_array(np.array([1.0, 2.0]), dtype_name="float64") == "tensor([1., 2.], dtype=torch.float64)"
