"""The eager bridge runs where PyTorch runs (issue 31 section 3), against real PyTorch 2.13 CPU values
(tests/fixtures/eager_bridge/eager_bridge_reference.json, recorded by record_eager_bridge.py beside it).

Stepped slices of 4-D tensors that need grad (``x[:, :, ::2, ::2]``, the CIFAR resnet20 option-A shortcut,
``x[::2]``, odd sizes, an integer component): ``loss.backward()`` died with "For 'StridedSliceGrad, 6 input memory
out of bounds" on both stacks (patches/indexing.py ``_stepped_slice`` routes them through ``ops.strided_slice``).
The same script trains a second copy in half precision (``model.half()``, ``input.half()``), as PyTorch CPU does.
One subprocess per stack, every step in PyNative (``--mode pynative``)."""
import json
import os

import numpy as np

from support import ROOT, load_reference, run_py

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "eager_bridge")
REFERENCE = load_reference("eager_bridge/eager_bridge_reference.json", "scripts")


def _lines(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_stepped_slices_and_half_train_as_pytorch_eagerly():
    proc = run_py("--mode", "pynative", "--original", os.path.join(FIXTURES, "strided_train.py"), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got, want = _lines(proc.stdout), REFERENCE["strided_train.py"]
    assert [(g["half"], g["step"], g["dtype"]) for g in got] == [(w["half"], w["step"], w["dtype"]) for w in want]
    for g, w in zip(got, want):
        # float16: PyTorch CPU and MindSpore round differently inside conv/BN (~1 ulp of 2**-10 per op)
        rtol, atol = (2e-2, 2e-3) if w["half"] else (1e-4, 1e-6)
        where = f"half={w['half']} step {w['step']}"
        np.testing.assert_allclose(g["loss"], w["loss"], rtol=rtol, atol=atol, err_msg=f"loss, {where}")
        np.testing.assert_allclose(g["conv1_grad"], w["conv1_grad"], rtol=rtol, atol=atol,
                                   err_msg=f"conv1 grad, {where}")
        np.testing.assert_allclose(g["fc_sum"], w["fc_sum"], rtol=rtol, atol=atol, err_msg=f"fc sum, {where}")


def test_attention_block_trains_as_pytorch_eagerly():
    """A GPT attention block through ``F.scaled_dot_product_attention`` (causal; a bool mask and ``scale``) and the
    manual tril/masked_fill path, AdamW, every step in PyNative. MindTorch's SDPA returned a MindSpore tensor:
    ``y.transpose(1, 2)`` then was MindSpore's ``TransposeExt``, whose backward has no CPU kernel on 2.5-dev
    (patches/attention_eager.py)."""
    proc = run_py("--mode", "pynative", "--original", os.path.join(FIXTURES, "attention_train.py"), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got, want = _lines(proc.stdout), REFERENCE["attention_train.py"]
    assert [(g["flash"], g["step"]) for g in got] == [(w["flash"], w["step"]) for w in want]
    for g, w in zip(got, want):
        where = f"{w['flash']} step {w['step']}"
        np.testing.assert_allclose(g["loss"], w["loss"], rtol=1e-5, err_msg=f"loss, {where}")
        np.testing.assert_allclose(g["grad"], w["grad"], rtol=1e-4, atol=1e-7, err_msg=f"grad, {where}")
        np.testing.assert_allclose(g["w_sum"], w["w_sum"], rtol=1e-5, err_msg=f"weights, {where}")
