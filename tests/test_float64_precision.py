"""float64 stays float64 (patches/float64_precision.py): Python float operands, mse/l1 losses and dot, against
closed forms computed in numpy float64 (what real PyTorch gives: a float64 op keeps the Python float as a double)
and PyTorch 2.13's error messages."""
import numpy as np
import pytest

V = 1.1234567890123


@pytest.mark.parametrize("expr,expect", [
    ("t * 3.3", V * 3.3), ("3.3 * t", 3.3 * V), ("t / 3.3", V / 3.3), ("3.3 / t", 3.3 / V), ("t + 0.1", V + 0.1),
    ("0.1 + t", 0.1 + V), ("t - 0.1", V - 0.1), ("0.1 - t", 0.1 - V), ("t ** 0.3", V ** 0.3), ("t.add(0.1)", V + 0.1),
    ("t.sub(0.1)", V - 0.1), ("t.mul(3.3)", V * 3.3), ("t.div(3.3)", V / 3.3), ("t.add(t, alpha=0.1)", V + 0.1 * V),
    ("t.sub(t, alpha=0.1)", V - 0.1 * V), ("torch.mul(t, 3.3)", V * 3.3), ("torch.add(t, t, alpha=0.1)", V + 0.1 * V),
    ("torch.add(t, 0.1)", V + 0.1), ("t.clone().add_(0.1)", V + 0.1), ("t.clone().mul_(3.3)", V * 3.3),
    ("t.clone().add_(t, alpha=0.7)", V + 0.7 * V),
])
def test_python_float_operand_of_a_float64_tensor_is_a_double(expr, expect):
    import torch
    t = torch.tensor([V, 2.0], dtype=torch.float64)
    out = eval(expr)
    assert out.dtype == torch.float64
    assert float(out.numpy()[0]) == expect  # bit-exact: one float64 operation (MindSpore's float32 scalar: 5e-8 off)


def test_comparisons_with_python_floats_and_other_dtypes_unchanged():
    import torch
    t = torch.tensor([V], dtype=torch.float64)
    assert bool((t > V - 1e-13)[0]) and bool((t >= V - 1e-13)[0]) and not bool((t < V - 1e-13)[0])
    assert not bool((t == V - 1e-13)[0]) and bool((t != V - 1e-13)[0]) and bool((t == V)[0])
    f = torch.tensor([V], dtype=torch.float32)
    assert (f * 3.3).dtype == torch.float32 and float((f * 3.3).numpy()[0]) == float(np.float32(V) * np.float32(3.3))
    i = torch.tensor([3])
    assert (i * 2).dtype == torch.int64 and (i * 2.5).dtype == torch.float32  # PyTorch's promotion, unchanged
    p = torch.nn.Parameter(torch.tensor([V], dtype=torch.float64))
    assert float((p * 3.3).detach().numpy()[0]) == V * 3.3


def test_losses_and_dot_in_float64():
    import torch
    import torch.nn.functional as F
    rng = np.random.RandomState(0)
    a, b = rng.randn(8, 5), rng.randn(8, 5)
    ta, tb = torch.tensor(a), torch.tensor(b)
    np.testing.assert_allclose(F.mse_loss(ta, tb).item(), ((a - b) ** 2).mean(), rtol=1e-15)
    np.testing.assert_allclose(torch.nn.MSELoss(reduction="sum")(ta, tb).item(), ((a - b) ** 2).sum(), rtol=1e-15)
    np.testing.assert_allclose(torch.nn.L1Loss()(ta, tb).item(), np.abs(a - b).mean(), rtol=1e-15)
    assert F.mse_loss(ta, tb, reduction="none").shape == (8, 5)
    np.testing.assert_allclose(ta[0].dot(tb[0]).item(), a[0] @ b[0], rtol=1e-15)
    np.testing.assert_allclose(torch.dot(ta[1], tb[1]).item(), a[1] @ b[1], rtol=1e-15)
    assert torch.tensor([2 ** 40, 3]).dot(torch.tensor([2 ** 20, 1])).item() == 1152921504606846979  # PyTorch's
    f32 = torch.tensor(a[0], dtype=torch.float32)
    assert f32.dot(f32).dtype == torch.float32
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
        ta.dot(tb[0])
    with pytest.raises(RuntimeError, match="dot : expected both vectors to have same dtype, but found Double and Float"):
        ta[0].dot(f32)


def test_methods_inside_a_compiled_graph_keep_float64():
    import torch
    from adapter.compiled_forward import _ForwardCell
    from adapter.graph_semantics import run_cell

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(2, 2).double()

        def forward(self, a):
            h = self.fc(a) * 0 + a
            return h.mul(3.3), torch.add(h, h, alpha=0.1), torch.nn.functional.mse_loss(h, a * 0)

    a = torch.tensor([[V, 2.0]], dtype=torch.float64)
    mul, add, mse = (t.asnumpy() for t in run_cell(_ForwardCell(Net()), a))
    assert float(mul[0, 0]) == V * 3.3 and float(add[0, 0]) == V + 0.1 * V
    np.testing.assert_allclose(float(mse), (V * V + 4.0) / 2, rtol=1e-15)
