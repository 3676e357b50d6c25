"""``nn.Parameter``'s ``__getstate__`` (patches/parameter_state.py): what ``copy.copy`` / ``deepcopy`` / pickle
and MindSpore's ``Parameter.clone`` (optimizer state) read. Same dictionary as MindTorch 0.4.0's own method, without
an empty ``Parameter`` built per attribute (MindTorch's built ~30 per call: ``Adam(resnet50.parameters())`` took
1.61 s, 483 clones)."""
import copy

import numpy as np
import torch

from adapter.patching import get_original
from mindtorch.torch.nn.parameter import Parameter


def _built_during(fn):
    """How many ``Parameter`` objects are initialised while ``fn()`` runs, and its result."""
    count = [0]
    init = Parameter.__init__

    def counting(self, *args, **kwargs):
        count[0] += 1
        return init(self, *args, **kwargs)

    Parameter.__init__ = counting
    try:
        result = fn()
    finally:
        Parameter.__init__ = init
    return count[0], result


def test_getstate_is_mindtorchs_dictionary():
    p = torch.nn.Parameter(torch.ones(2, 3))
    p.note = "kept"  # an attribute an empty Parameter does not have
    original = get_original(Parameter, "__getstate__")
    assert original is not Parameter.__getstate__  # the patch is installed (tests/conftest.py)
    mine, theirs = p.__getstate__(), original(p)
    assert mine.keys() == theirs.keys() and "note" in mine
    assert all(mine[k] is theirs[k] for k in mine)


def test_copy_builds_no_parameter_per_attribute():
    p = torch.nn.Parameter(torch.arange(6.0).reshape(2, 3))
    p.__getstate__()  # the one empty Parameter, at the first call
    attributes = len(p.__dict__)
    built, _ = _built_during(lambda: p.__getstate__())
    assert built == 0
    built_before, _ = _built_during(lambda: get_original(Parameter, "__getstate__")(p))
    assert built_before >= attributes > 10  # MindTorch's: one per attribute (what this patch removes)


def test_deepcopy_and_optimizer_state_keep_values_and_own_storage():
    model = torch.nn.Linear(3, 2)
    twin = copy.deepcopy(model)
    for a, b in zip(model.parameters(), twin.parameters()):
        assert a is not b and np.array_equal(a.detach().numpy(), b.detach().numpy())
    with torch.no_grad():
        twin.weight.add_(1.0)
    assert not np.array_equal(model.weight.detach().numpy(), twin.weight.detach().numpy())
    p = model.weight
    clone = p.clone("zeros")  # MindSpore's Parameter.clone(init), as its optimizers make their moments
    assert clone is not p and clone.shape == p.shape and not clone.asnumpy().any()
    assert np.array_equal(p.detach().numpy(), model.weight.detach().numpy())
