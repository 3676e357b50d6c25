"""In-place writes keep the tensor's ``requires_grad`` and ``.grad`` (patches/inplace_keeps_grad.py), against
PyTorch 2.13's values recorded by tests/fixtures/inplace_keeps_grad_cases.py (tests/fixtures/inplace_keeps_grad.json).
MindTorch: after ``with torch.no_grad(): a -= lr * a.grad`` (PyTorch's autograd tutorials), ``a.requires_grad`` was
False and ``a.grad`` None."""

import pytest

# also on CI's second MindSpore (pytest.ini: stack): in-place ops: MindSpore's assign/inplace kernels and their autograd
pytestmark = pytest.mark.stack

from support import load_reference, ours_fixture

REFERENCE = load_reference("inplace_keeps_grad.json", "cases")


ours = ours_fixture("inplace_keeps_grad_cases", "cases")


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_state_after_inplace_write_matches_pytorch(ours, name):
    assert ours[name] == REFERENCE[name]
