"""``Tensor.T`` / ``H`` / ``mT`` / ``mH`` (patches/tensor_transpose.py) against real PyTorch 2.13: values, errors and
once-per-process warnings (tests/fixtures/tensor_transpose_cases.py, reference in
tests/fixtures/tensor_transpose_reference.json), and a compiled training step using ``.T`` (transpose_train.py)."""
import os
import re
import sys

import numpy as np

from support import FIXTURES, json_from_brace, load_reference, run_py

sys.path.insert(0, FIXTURES)
REFERENCE = load_reference("tensor_transpose_reference.json")


def test_properties_give_pytorchs_values_errors_and_warnings(monkeypatch):
    """In one process, in the reference's order: MindTorch warned for every 0-2-D ``.T`` and never for 3-D, raised
    ValueError for ``.H``, MindSpore's axis errors for 0-/1-D ``.mT``/``.mH``."""
    import torch
    import tensor_transpose_cases
    from patches import tensor_transpose
    monkeypatch.setattr(tensor_transpose, "_issued", set())  # a fresh process's "warned once" state
    ours = tensor_transpose_cases.run(torch)
    for got, ref in zip(ours, REFERENCE["cases"]):
        assert got == ref, (got, ref)
    assert len(ours) == len(REFERENCE["cases"])
    p = torch.nn.Parameter(torch.ones(2, 3, 4))  # nn.Parameter has the same properties
    assert tuple(p.T.shape) == (4, 3, 2) and tuple(p.mT.shape) == (2, 4, 3)


def test_a_compiled_step_using_T_trains_as_pytorch_and_warns_once_at_the_users_line():
    proc = run_py("--explain", "--original", os.path.join(FIXTURES, "transpose_train.py"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "backward() of loss — compiled (graph mode" in proc.stderr, proc.stderr[-3000:]
    import tensor_transpose_cases
    assert tensor_transpose_cases.warning_lines(proc.stderr) == REFERENCE["transpose_train_warnings"], proc.stderr
    assert not re.search(r"Tensor\.T\(\)", proc.stderr), proc.stderr  # MindTorch's own (inverted) warning
    ours = json_from_brace(proc.stdout)["losses"]
    np.testing.assert_allclose(ours, REFERENCE["transpose_train"]["losses"], rtol=1e-5)
