"""A submodule's parameters that its parent uses without calling the submodule (adapter/tape.py ``_candidates``):
``nn.MultiheadAttention`` (inside ``nn.TransformerEncoderLayer``) reads ``out_proj.weight`` / ``out_proj.bias``
and never calls ``out_proj``. Against real PyTorch 2.13 (tests/fixtures/uncalled_submodule_grads.py, reference
tests/fixtures/uncalled_submodule_grads_reference.json): every parameter's ``.grad`` after the first
``backward()`` (None for a submodule neither called nor used, as PyTorch), the losses of 4 SGD steps (compiled after
the first) and the final ``out_proj.weight``. Before: ``out_proj``'s ``.grad`` stayed None, so ``optimizer.step()``
skipped it and it never trained (silently), and pytorch/examples word_language_model ``--model Transformer``
crashed at ``p.data.add_(p.grad, ...)`` (main.py:194)."""
import json
import os

import numpy as np
import pytest

from support import FIXTURES, load_reference, run_py

REFERENCE = load_reference("uncalled_submodule_grads_reference.json")


@pytest.fixture(scope="module")
def run():
    proc = run_py("--explain", "--original", os.path.join(FIXTURES, "uncalled_submodule_grads.py"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def ours(run):
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_grads_equal_pytorchs(ours):
    assert sorted(ours["grads"]) == sorted(REFERENCE["grads"])
    for name, ref in REFERENCE["grads"].items():
        if ref is None:
            assert ours["grads"][name] is None, name
        else:
            assert ours["grads"][name] is not None, name
            np.testing.assert_allclose(ours["grads"][name], ref, rtol=0, atol=1e-6, err_msg=name)


def test_compiled_training_equals_pytorchs(run, ours):
    assert "backward() of loss — compiled (graph mode)" in run.stderr, run.stderr[-3000:]
    np.testing.assert_allclose(ours["losses"], REFERENCE["losses"], rtol=1e-5)
    np.testing.assert_allclose(ours["out_proj_weight"], REFERENCE["out_proj_weight"], rtol=0, atol=1e-5)
