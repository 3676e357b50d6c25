"""In-place Tensor methods on buffers inside a compiled forward (adapter/graph_semantics.py
``_tensor_inplace_assign``), against real PyTorch 2.13 on the same script (tests/fixtures/inplace_buffers.py;
reference tests/fixtures/inplace_buffers_reference.json, recorded with ``.venv-ref/bin/python
tests/fixtures/inplace_buffers.py``).

Before: ``self.bn.num_batches_tracked.add_(1)`` in a forward (timm's BatchNormAct2d, timm/layers/norm_act.py:116)
raised MindTorch's "is an in-place operation" while compiling, so efficientnet_b0 / mobilenetv3 steps ran eagerly.
Now a write into a Parameter buffer compiles as ``mindspore.ops.assign`` (later reads and the next step see it); a
plain ``register_buffer`` tensor still makes its step run eagerly with that reason (same values, never dropped)."""

import numpy as np
import pytest

from support import last_json, load_reference, run_py

pytestmark = pytest.mark.stack


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    ref = load_reference("inplace_buffers_reference.json")
    proc = run_py("--explain", "--original", "tests/fixtures/inplace_buffers.py",
                  cache_dir=tmp_path_factory.mktemp("cache"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return ref, last_json(proc.stdout), proc.stderr


def test_values_equal_pytorch(results):
    """4 losses per model, num_batches_tracked (8: the forward's add_ and BatchNorm's own), the EMA written with
    mul_().add_() and BatchNorm's running mean, the plain buffer's count."""
    ref, got, _ = results
    assert got["num_batches_tracked"] == ref["num_batches_tracked"] == 8
    assert got["steps"] == ref["steps"] == 4
    for key in ("counted", "plain", "ema", "running_mean"):
        np.testing.assert_allclose(got[key], ref[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_parameter_buffer_writes_compile(results):
    _, _, stderr = results
    assert "inplace_buffers.py:57: backward() of loss — compiled (graph mode" in stderr, stderr[-3000:]


def test_plain_buffer_write_runs_eagerly_with_the_reason(results):
    _, _, stderr = results
    assert "inplace_buffers.py:64: backward() of loss — eager (PyNative): tests/fixtures/inplace_buffers.py:38: " \
           "RuntimeError: '`Tensor.add_` is an in-place operation" in stderr, stderr[-3000:]
