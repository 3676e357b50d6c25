"""``Tensor.to`` with PyTorch's keywords (patches/tensor_to.py): ``dtype=None`` keeps the dtype (MindTorch cast to
None: TypeError; timm's train.py ``input.to(device=device, dtype=model_dtype)``), ``copy`` / ``non_blocking`` /
``memory_format`` accepted. Expected values: PyTorch's documented ``Tensor.to`` semantics, and real PyTorch 2.13's
losses for the compiled step (recorded with ``.venv-ref/bin/python tests/fixtures/tensor_to_step.py``)."""
import os

import numpy as np
import pytest

from support import ROOT, run_json

# PyTorch 2.13, recorded 2026-12-06: 3 SGD steps of tests/fixtures/tensor_to_step.py
PYTORCH_LOSSES = [14.073177337646484, 7.624182224273682, 5.006434917449951]


def test_dtype_none_keeps_the_tensor():
    import torch
    x = torch.arange(6.).reshape(2, 3)
    assert x.to(device="cpu", dtype=None) is x  # PyTorch: nothing changes, self
    assert x.to(dtype=None) is x
    assert x.to(dtype=torch.float32) is x
    assert x.to("cpu", non_blocking=True) is x
    assert x.to(device="cpu", dtype=torch.float16).dtype == torch.float16
    assert x.to("cpu", torch.float64).dtype == torch.float64


def test_copy_true_gives_a_new_tensor_with_the_same_values():
    import torch
    x = torch.arange(6.).reshape(2, 3)
    y = x.to(torch.float32, copy=True)
    assert y is not x and y.dtype == torch.float32
    y.add_(1)
    np.testing.assert_array_equal(x.numpy(), np.arange(6.).reshape(2, 3))  # no aliasing, as PyTorch's copy=True
    z = x.to(dtype=None, copy=True)
    assert z is not x
    np.testing.assert_array_equal(z.numpy(), x.numpy())


def test_memory_format_is_accepted_and_checked():
    import torch
    x = torch.ones(1, 2, 3, 4)
    assert x.to(memory_format=torch.channels_last) is x
    with pytest.raises(TypeError, match="to\\(\\): argument 'memory_format' must be torch.memory_format, not str"):
        x.to(torch.float32, memory_format="a")


def test_parameter_to_dtype_none():
    import torch
    p = torch.nn.Parameter(torch.ones(2))
    assert p.to(dtype=None) is p
    assert p.to(dtype=torch.float16).dtype == torch.float16


def test_to_keywords_in_a_compiled_step_give_pytorchs_losses():
    """The step (forward with ``.to(dtype=None)``, ``.to(..., copy=True)``) compiles, fused with SGD, and its losses
    are PyTorch's (copy=True is a no-op inside the graph: MindSpore's CPU has no Clone kernel)."""
    got, err = run_json("--explain", "--original", os.path.join(ROOT, "tests", "fixtures", "tensor_to_step.py"))
    np.testing.assert_allclose(got, PYTORCH_LOSSES, rtol=1e-5)
    assert "tensor_to_step.py:33: backward() of loss — compiled (graph mode, fused with optimizer.step()" in err, err
