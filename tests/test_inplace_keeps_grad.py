"""In-place writes keep the tensor's ``requires_grad`` and ``.grad`` (patches/inplace_keeps_grad.py), against
PyTorch 2.13's values recorded by tests/fixtures/inplace_keeps_grad_cases.py (tests/fixtures/inplace_keeps_grad.json).
MindTorch: after ``with torch.no_grad(): a -= lr * a.grad`` (PyTorch's autograd tutorials), ``a.requires_grad`` was
False and ``a.grad`` None."""
import json
import os
import sys

import pytest

# also on CI's second MindSpore (pytest.ini: stack): in-place ops: MindSpore's assign/inplace kernels and their autograd
pytestmark = pytest.mark.stack

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
REFERENCE = json.load(open(os.path.join(FIXTURES, "inplace_keeps_grad.json")))["cases"]


@pytest.fixture(scope="module")
def ours():
    import torch
    sys.path.insert(0, FIXTURES)
    import inplace_keeps_grad_cases
    return inplace_keeps_grad_cases.cases(torch)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_state_after_inplace_write_matches_pytorch(ours, name):
    assert ours[name] == REFERENCE[name]
