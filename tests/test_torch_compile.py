"""``torch.compile`` (patches/torch_compile.py): MindTorch 0.4.0 had none (AttributeError at ``model =
torch.compile(model)``). Checked against real PyTorch 2.13 CPU on the same script
(tests/fixtures/torch_compile_reference.json, recorded with ``.venv-ref/bin/python
tests/fixtures/torch_compile_script.py``): the losses of 3 Adam steps through the wrapper, its ``_orig_mod.`` keys,
attribute forwarding, a compiled function and decorator, ``Module.compile()``, ``import torch._dynamo``."""
import os

import pytest

from support import FIXTURES, load_reference, run_json


def test_compiled_model_trains_and_saves_as_pytorch():
    ref = load_reference("torch_compile_reference.json")
    got, stderr = run_json("--explain", "--original", os.path.join(FIXTURES, "torch_compile_script.py"))
    assert got["losses"] == pytest.approx(ref["losses"], rel=1e-5)
    assert got["fresh_out"] == pytest.approx(ref["fresh_out"], rel=1e-5)
    for key in ref:
        if key not in ("losses", "fresh_out"):
            assert got[key] == ref[key], key
    # the wrapper does not stop run.py from compiling the training step itself
    assert "torch_compile_script.py:23: backward() of loss — compiled (graph mode" in stderr
