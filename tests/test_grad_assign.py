"""``t.grad = value`` checked as PyTorch checks it (patches/grad_assign.py), against PyTorch 2.13's errors and values
recorded by tests/fixtures/grad_assign_cases.py (tests/fixtures/grad_assign.json). MindTorch stored a float, a numpy
array or a gradient of another size or dtype; PyTorch raises TypeError / RuntimeError with the texts compared here."""

import numpy as np
import pytest

from support import load_reference, ours_fixture

REFERENCE = load_reference("grad_assign.json", "cases")


ours = ours_fixture("grad_assign_cases", "cases")


@pytest.mark.parametrize("name", sorted(set(REFERENCE) - {"sgd"}))
def test_assignment_as_pytorch(ours, name):
    assert ours[name] == REFERENCE[name]


def test_hand_assigned_gradients_train_as_pytorch(ours):
    for a, b in zip(ours["sgd"], REFERENCE["sgd"]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
