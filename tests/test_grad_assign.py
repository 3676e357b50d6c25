"""``t.grad = value`` checked as PyTorch checks it (patches/grad_assign.py), against PyTorch 2.13's errors and values
recorded by tests/fixtures/grad_assign_cases.py (tests/fixtures/grad_assign.json). MindTorch stored a float, a numpy
array or a gradient of another size or dtype; PyTorch raises TypeError / RuntimeError with the texts compared here."""
import json
import os
import sys

import numpy as np
import pytest

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
REFERENCE = json.load(open(os.path.join(FIXTURES, "grad_assign.json")))["cases"]


@pytest.fixture(scope="module")
def ours():
    import torch
    sys.path.insert(0, FIXTURES)
    import grad_assign_cases
    return grad_assign_cases.cases(torch)


@pytest.mark.parametrize("name", sorted(set(REFERENCE) - {"sgd"}))
def test_assignment_as_pytorch(ours, name):
    assert ours[name] == REFERENCE[name]


def test_hand_assigned_gradients_train_as_pytorch(ours):
    for a, b in zip(ours["sgd"], REFERENCE["sgd"]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
