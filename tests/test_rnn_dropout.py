"""``nn.RNN`` / ``nn.GRU`` / ``nn.LSTM(num_layers=3, dropout=0.5)`` in eval mode (patches/rnn_dropout.py) against real
PyTorch 2.13 from the same weights and input (tests/fixtures/rnn_dropout_cases.py, reference
tests/fixtures/rnn_dropout_reference.json): eager, and through run.py where the later eval calls are compiled
forwards. MindTorch 0.4.0 kept dropping between layers after ``model.eval()`` (found in pytorch/examples
word_language_model's ``evaluate()``): each eval call gave other, wrong values."""
import os
import sys

import numpy as np
import pytest

from support import FIXTURES, json_from_brace, load_reference, ours_fixture, run_py

sys.path.insert(0, FIXTURES)
REFERENCE = load_reference("rnn_dropout_reference.json")
ATOL = 1e-6  # float32 recurrences of 5 steps x 3 layers; measured <= 2.4e-7


def _check(got, case):
    assert len(got[case]) == len(REFERENCE[case])
    for call, (mine, theirs) in enumerate(zip(got[case], REFERENCE[case])):
        for i, (a, b) in enumerate(zip(mine, theirs)):
            np.testing.assert_allclose(a, b, rtol=0, atol=ATOL, err_msg=f"{case} call {call} output {i}")


eager = ours_fixture("rnn_dropout_cases")  # the cases run here, eagerly


@pytest.mark.parametrize("case", sorted(REFERENCE))
def test_eval_outputs_equal_pytorchs(eager, case):
    _check(eager, case)


def test_compiled_eval_forwards_equal_pytorchs():
    proc = run_py("--explain", "--original", os.path.join(FIXTURES, "rnn_dropout_cases.py"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "no_grad forward of LSTM: compiled (graph mode)" in proc.stderr, proc.stderr[-3000:]
    got = json_from_brace(proc.stdout)
    for case in sorted(REFERENCE):
        _check(got, case)
