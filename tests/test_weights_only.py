"""``torch.load`` / ``torch.save`` of checkpoints holding non-tensor objects, against PyTorch 2.13
(tests/fixtures/weights_only_cases.py, reference in tests/fixtures/weights_only_reference.json).

PyTorch >= 2.6 loads with ``weights_only=True`` by default: Python values, containers, tensors, optimizer and model
state dicts load; numpy arrays and scalars, ``argparse.Namespace``, user classes, ``slice``/``range``/``frozenset``
and pickle protocol > 2 are refused with its ``UnpicklingError`` text. Here the same files (PyTorch's bytes, and
the same objects saved by this adapter's ``torch.save``) must load to the same values or fail with the same
message (after the user's ``file:line``), with the same warnings, and the adapter's files must hold the same
pickle globals as PyTorch's.
"""
import base64
import io
import os
import pickle
import sys

import pytest

from support import FIXTURES, load_reference

sys.path.insert(0, FIXTURES)
import weights_only_cases as cases  # noqa: E402

REFERENCE = load_reference("weights_only_reference.json", "cases")
HERE = os.path.basename(__file__)


def _matches(ours, ref, label):
    """Same value summary, or the same exception class with PyTorch's message after ``<file:line>: torch.load(...):
    ``; the same warnings."""
    assert ours["warnings"] == ref["warnings"], f"{label}: warnings {ours['warnings']} != {ref['warnings']}"
    if "ok" in ref:
        assert "ok" in ours, f"{label}: PyTorch loads it, here: {ours.get('error')}: {ours.get('message')}"
        assert ours["ok"] == ref["ok"], label
        return
    assert ours.get("error") == ref["error"], f"{label}: {ours} (PyTorch: {ref['error']}: {ref['message']})"
    prefix, _, message = ours["message"].partition("torch.load(the file object): ")
    assert message == ref["message"], f"{label}:\n{ours['message']}\n!=\n{ref['message']}"
    assert prefix.startswith(os.path.join("tests", "fixtures", "weights_only_cases.py:")), \
        f"{label}: the message does not start with the user's line (the torch.load call): {prefix!r}"


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_loading_pytorchs_file_gives_what_pytorch_gives(name):
    import torch
    data = base64.b64decode(REFERENCE[name]["file_b64"])
    _matches(cases.load_outcome(torch, data), REFERENCE[name]["default"], f"{name} (default)")
    _matches(cases.load_outcome(torch, data, weights_only=False), REFERENCE[name]["weights_only_false"],
             f"{name} (weights_only=False)")


def test_saving_writes_pytorchs_globals_and_loads_as_pytorchs_file():
    """The same objects saved here: the same pickle globals as PyTorch's file (``import dill`` -- MindTorch's
    DataLoader does -- used to turn complex/slice/range/frozenset/classes into ``dill._dill`` globals that PyTorch
    cannot load at all), refused where PyTorch's file is refused, with the same message; what loads gives back the
    saved object (optimizer state dicts differ slightly from PyTorch's before any saving: ``dampening`` 0.0 vs 0)."""
    import torch
    for name, (obj, kwargs) in cases.cases(torch).items():
        data = cases.save_bytes(torch, obj, kwargs)
        ref = REFERENCE[name]
        if "pickle_protocol" not in kwargs:  # protocol 4: PyTorch writes every global as STACK_GLOBAL, we write
            assert cases.pickle_globals(data) == ref["globals"], name  # ours as GLOBAL (both are refused)
        for label, kw in (("default", {}), ("weights_only_false", {"weights_only": False})):
            expected = dict(ref[label])
            if "ok" in expected:
                expected["ok"] = cases.summarize(torch, obj)
            _matches(cases.load_outcome(torch, data, **kw), expected, f"{name} saved here ({label})")


def test_safe_globals_admit_exactly_what_pytorch_admits():
    import argparse
    import numpy as np
    import torch
    data = base64.b64decode(REFERENCE["namespace"]["file_b64"])
    with torch.serialization.safe_globals([argparse.Namespace]):
        assert torch.load(io.BytesIO(data))["args"].lr == 0.1
    assert torch.serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL argparse.Namespace was not an allowed global"):
        torch.load(io.BytesIO(data))
    array = base64.b64decode(REFERENCE["ndarray"]["file_b64"])
    assert sorted(torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(array))) == [
        "numpy.core.multiarray._reconstruct", "numpy.dtype", "numpy.ndarray"]
    # PyTorch's documented recipe for numpy arrays
    with torch.serialization.safe_globals([np.core.multiarray._reconstruct, np.ndarray, np.dtype,
                                           type(np.dtype(np.float64))]):
        got = torch.load(io.BytesIO(array))
    assert isinstance(got, np.ndarray) and got.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_force_environment_variables_as_pytorch(monkeypatch):
    """TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD (PyTorch's switch that time_sequence_prediction needs) loads an array with
    PyTorch's UserWarning at the user's line; an explicit weights_only=True wins over it;
    TORCH_FORCE_WEIGHTS_ONLY_LOAD refuses even with weights_only=False; both set is PyTorch's RuntimeError."""
    import warnings
    import torch
    data = base64.b64decode(REFERENCE["ndarray"]["file_b64"])
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "true")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = torch.load(io.BytesIO(data))
    assert got.shape == (2, 3)
    assert [str(w.message) for w in caught] == [
        "Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` argument was not "
        "explicitly passed to `torch.load`, forcing weights_only=False."]
    assert os.path.basename(caught[0].filename) == HERE
    with pytest.raises(pickle.UnpicklingError):
        torch.load(io.BytesIO(data), weights_only=True)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0")
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(pickle.UnpicklingError):
        torch.load(io.BytesIO(data), weights_only=False)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "yes")
    with pytest.raises(RuntimeError, match="Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD`"):
        torch.load(io.BytesIO(data))


def test_unpickler_refusals_and_allowlist_forms_equal_pytorchs():
    """Each opcode rule of the restricted unpickler (patches/_restricted_unpickler.py) on hand-assembled pickles:
    the same value, or the same exception class and message, the same protocol warning and the same GLOBAL scan as
    PyTorch 2.13's ``torch._weights_only_unpickler`` (tests/fixtures/unpickler_refusal_cases.py)."""
    import torch  # noqa: F401 (the adapter's torch: installs the patches)
    import unpickler_refusal_cases
    from patches import _restricted_unpickler
    reference = load_reference("unpickler_refusal_reference.json", "cases")
    ours = unpickler_refusal_cases.run(_restricted_unpickler)
    assert sorted(ours) == sorted(reference)
    for name in sorted(reference):
        assert ours[name] == reference[name], f"{name}: ours {ours[name]} != PyTorch's {reference[name]}"
