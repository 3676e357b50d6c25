"""``Tensor.mean`` / ``Tensor.prod`` of a Parameter give it PyTorch's gradient in an eager step
(patches/reduction_input.py). Before, on MindSpore 2.10, MindTorch's methods reduced ``cast_to_adapter_tensor(self)``,
a new tensor not linked to the parameter's autograd leaf: ``w.mean()`` gave ``w`` a zero gradient (the conformance
case c52a917e7479, a known 2.10 difference until now). Expected values: closed forms (d mean / d w = 1 / numel;
d prod_j w_ij / d w_ik = the product of the row's other entries), as real PyTorch 2.13 gives them."""
import numpy as np
import pytest

# also on CI's second MindSpore: the tape and MindSpore's autograd of a Parameter's conversions
pytestmark = pytest.mark.stack


@pytest.mark.parametrize("kind", ["mean", "mean_dim", "prod", "prod_dtype"])
def test_parameter_reduction_gradient_is_pytorchs(kind):
    import torch
    values = (np.arange(6, dtype=np.float32).reshape(2, 3) + 1) / 7
    w = torch.nn.Parameter(torch.tensor(values))
    lin = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD([w], lr=0.1)  # w: a free parameter the step differentiates
    opt.zero_grad()
    h = lin(w).sum() * 0  # a module call opens the eager bridge's recording (adapter/tape.py)
    if kind == "mean":
        loss, want = h + w.mean(), np.full((2, 3), 1 / 6)
    elif kind == "mean_dim":
        loss, want = h + w.mean(dim=1, keepdim=True).sum(), np.full((2, 3), 1 / 3)
    elif kind == "prod":
        loss = h + w.prod(1).sum()
        want = np.prod(values, axis=1, keepdims=True) / values
    else:
        loss = h + w.prod(dtype=torch.float64).float()
        want = np.prod(values) / values
    loss.backward()
    assert w.grad is not None
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-5)


def test_bool_prod_is_int64():
    import torch
    t = torch.tensor([[True, True], [True, False]])
    out = t.prod(1)
    assert out.dtype == torch.int64 and out.tolist() == [1, 0]
