"""``print(model)`` in PyTorch's layout (patches/module_repr.py), against PyTorch 2.13's text recorded by
tests/fixtures/module_repr_cases.py (tests/fixtures/module_repr.json): MindTorch printed a nested Sequential's items
and its ``)`` at the parent's depth (PyTorch's quickstart / buildmodel tutorials print such a model), listed
MindSpore cells inside LSTM/GRU, and never folded equal ModuleList items."""

import pytest

from support import load_reference, ours_fixture

REFERENCE = load_reference("module_repr.json", "cases")


ours = ours_fixture("module_repr_cases", "cases")


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_repr_matches_pytorch(ours, name):
    assert ours[name] == REFERENCE[name]


def test_user_repr_is_kept():
    import torch

    class Mine(torch.nn.Module):
        def __repr__(self):
            return "mine"

    assert repr(torch.nn.Sequential(Mine())) == "Sequential(\n  (0): mine\n)"
