"""``torch.autograd.Variable`` as PyTorch 2.13 keeps it (patches/variable.py): ``Variable(x)`` is ``x.detach()`` with
``requires_grad`` as asked, against PyTorch's observations recorded by tests/fixtures/variable_cases.py
(tests/fixtures/variable.json). MindTorch 0.4.0's failed on every call (``requires_grad=None``: "The requires_grad
property value must be a boolean"): without the patch every case here errors. Compiled: ``map(Variable, ...)`` in a
step, tests/test_host_values.py."""
import pytest

from support import load_reference, ours_fixture

REFERENCE = load_reference("variable.json", "cases")


ours = ours_fixture("variable_cases", "cases")


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_variable_as_pytorch(ours, name):
    assert ours[name] == REFERENCE[name]
