"""``torch.save(model)`` / ``torch.load`` of a whole module (patches/serialization.py, its vendored weights_only
unpickler, adapter/torchfile.rebuild_primitive) against real PyTorch 2.13 (tests/fixtures/whole_model_save.py,
reference tests/fixtures/whole_model_save_reference.json): the loaded model's output equals PyTorch's, with
``weights_only=True`` + ``safe_globals([module classes])`` (PyTorch >= 2.6's idiom, pytorch/examples
word_language_model/main.py:273) and with ``weights_only=False``; without the allowlist the load is refused, as
PyTorch's. Before: the weights_only load refused MindSpore's ``Cast`` (every module), and an unsafe load of an LSTM
raised "Unable to cast from non-held to held instance" at its first call (operators restored without their C++
part)."""
import json
import os

import numpy as np
import pytest

from support import FIXTURES, load_reference, run_py

# also on CI's second MindSpore (pytest.ini: stack): checkpoints: MindSpore's Parameter/Tensor storage and serialization
pytestmark = pytest.mark.stack

REFERENCE = load_reference("whole_model_save_reference.json")


@pytest.fixture(scope="module")
def ours():
    proc = run_py("--original", os.path.join(FIXTURES, "whole_model_save.py"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("model", sorted(REFERENCE))
def test_loaded_model_equals_pytorchs(ours, model):
    for field in ("before", "weights_only", "unsafe"):
        np.testing.assert_allclose(ours[model][field], REFERENCE[model][field], rtol=0, atol=1e-6,
                                   err_msg=f"{model} {field}")
    assert ours[model]["refused_without_allowlist"] is REFERENCE[model]["refused_without_allowlist"] is True
