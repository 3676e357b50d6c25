"""Gradients of plain leaf tensors (patches/leaf_grad.py): PyTorch gives ``x.grad`` for any leaf with
requires_grad=True (FGSM reads ``data.grad``; style transfer optimizes ``input_img``). MindSpore differentiates
Parameters only, so here such a read raises, naming the user's line, instead of returning a silent None."""
import os
import subprocess
import sys

import pytest
import torch

from patches import leaf_grad

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FGSM = """import torch
model = torch.nn.Linear(3, 2)
data = torch.tensor([[1.0, 2.0, 3.0]])
data.requires_grad = True
loss = torch.nn.functional.cross_entropy(model(data), torch.tensor([1]))
model.zero_grad()
loss.backward()
assert model.weight.grad is not None and model.weight.grad.shape == (2, 3)
data_grad = data.grad
"""


@pytest.mark.parametrize("mode", ["auto", "pynative"])
def test_fgsm_input_gradient_raises_at_the_users_line(tmp_path, mode):
    """PyTorch 2.13 gives data.grad of shape (1, 3) here; a silent None was returned before (compiled and eager)."""
    script = tmp_path / "fgsm.py"
    script.write_text(FGSM)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "run.py"), "--mode", mode, "--original", str(script)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "the script failed at fgsm.py:9: LeafGradientUnsupported: .grad at fgsm.py:9:" in proc.stderr


def test_optimizer_over_a_plain_tensor_says_why():
    img = torch.rand(1, 3, 4, 4).requires_grad_(True)
    with pytest.raises(leaf_grad.LeafGradientUnsupported, match=r"Adam\(\.\.\.\) at .*test_leaf_grad.py:\d+: it is "
                                                                 r"given a tensor of shape \(1, 3, 4, 4\)"):
        torch.optim.Adam([img], lr=0.1)
    torch.optim.Adam([torch.nn.Parameter(img)], lr=0.1)  # a Parameter is fine


def test_reads_that_pytorch_answers_with_none_are_unchanged(monkeypatch):
    monkeypatch.setitem(leaf_grad._state, "backward_ran", False)
    x = torch.ones(2, requires_grad=True)
    assert x.grad is None  # before any backward(): None in PyTorch too
    monkeypatch.setitem(leaf_grad._state, "backward_ran", True)
    assert torch.ones(2).grad is None  # requires_grad=False: None in PyTorch too
    assert torch.nn.Linear(2, 1).weight.grad is None  # a Parameter never used: None
    with pytest.raises(leaf_grad.LeafGradientUnsupported, match="test_leaf_grad.py"):
        x.grad
