"""A second training loop with a new model and optimizer in one process (tests/fixtures/second_loop_script.py),
against real PyTorch 2.13 values recorded in tests/fixtures/second_loop_reference.json.

Before the fix (main at 380a363) ``tape.candidate_parameters`` differentiated every live optimizer's free
parameters (``nn.Parameter``s owned by no module), the first loop's included: the second loop's steps gave the first
loop's ``w`` a zero gradient (PyTorch leaves its ``.grad`` as the first loop left it: None after ``zero_grad()``), and
its compiled step was not fused (``w`` was among the step's weights, with a ``.grad`` pending)."""
import json
import os

import numpy as np
import pytest

from support import FIXTURES, load_reference, run_json

SCRIPT = os.path.join(FIXTURES, "second_loop_script.py")


@pytest.fixture(scope="module")
def reference():
    return load_reference("second_loop_reference.json")


@pytest.mark.parametrize("mode", ["auto", "pynative"])
@pytest.mark.parametrize("case", ["keep", "clear"])
def test_second_loop_as_pytorch(reference, case, mode):
    got, err = run_json("--explain", "--mode", mode, "--original", SCRIPT, case)
    for key, expected in reference.items():
        if not key.startswith(case + "_"):
            continue
        if expected is None:
            assert got[key] is None, f"{key}: {got[key]} where PyTorch leaves None"
        else:
            assert got[key] is not None, f"{key}: None where PyTorch has {expected}"
            np.testing.assert_allclose(got[key], expected, rtol=1e-4, atol=1e-6, err_msg=key)
    if mode == "auto":
        # the site's last call (the second loop's) ran fused, as the first loop's did
        assert "second_loop_script.py:34: backward() of loss — compiled (graph mode, fused with optimizer.step() " \
               "at line 35); 2 graph(s) for 2 sets of models" in err, err[-2000:]
