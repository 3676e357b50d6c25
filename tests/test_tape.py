"""The eager bridge (adapter/tape.py) against MindSpore's own value_and_grad on the same function."""
import mindspore as ms
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

# also on CI's second MindSpore (pytest.ini: stack): the PyNative tape: MindSpore's private grad executor
pytestmark = pytest.mark.stack


class TwoHeadNet(nn.Module):
    """conv + BN + in-place ReLU + dropout(p=0) + linear trunk, two heads."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.drop = nn.Dropout(p=0.0)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head_a = nn.Linear(8, 10)
        self.head_b = nn.Linear(8, 2)

    def forward(self, x):
        h = self.pool(self.drop(self.relu(self.bn(self.conv(x))))).flatten(1)
        return self.head_a(h), self.head_b(h)


def _batch(seed, n=4):
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal((n, 3, 8, 8)).astype(np.float32))
    y = torch.tensor(rng.integers(0, 10, n).astype(np.int64))
    t = torch.tensor(rng.standard_normal((n, 2)).astype(np.float32))
    return x, y, t


def _loss(net, x, y, t):
    a, b = net(x)
    return F.cross_entropy(a, y) + 0.5 * F.mse_loss(b, t)


def _reference_grads(net, batches):
    """Sum over batches of mindspore.value_and_grad(loss)(batch) w.r.t. all parameters."""
    params = list(net.parameters())
    vg = ms.value_and_grad(lambda x, y, t: _loss(net, x, y, t), None, ms.ParameterTuple(params))
    total = None
    for batch in batches:
        _, grads = vg(*batch)
        grads = [g.asnumpy() for g in grads]
        total = grads if total is None else [a + b for a, b in zip(total, grads)]
    return total


def test_two_head_loss_grads_equal_value_and_grad():
    torch.manual_seed(0)
    net = TwoHeadNet()
    batch = _batch(1)
    expected = _reference_grads(net, [batch])
    loss = _loss(net, *batch)
    loss.backward()
    for p, e in zip(net.parameters(), expected):
        assert p.grad is not None
        np.testing.assert_allclose(p.grad.numpy(), e, rtol=1e-6, atol=1e-7)


def test_accumulation_over_two_backward_calls():
    torch.manual_seed(0)
    net = TwoHeadNet()
    batches = [_batch(2), _batch(3)]
    expected = _reference_grads(net, batches)
    for batch in batches:
        (_loss(net, *batch)).backward()  # unnamed loss, two micro-steps, no zero_grad in between
    for p, e in zip(net.parameters(), expected):
        np.testing.assert_allclose(p.grad.numpy(), e, rtol=1e-6, atol=1e-7)
    # zero_grad() resets: the next backward gives one batch's gradient only
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    opt.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    single = _reference_grads(net, [batches[0]])
    _loss(net, *batches[0]).backward()
    for p, e in zip(net.parameters(), single):
        np.testing.assert_allclose(p.grad.numpy(), e, rtol=1e-6, atol=1e-7)


def test_backward_in_another_function_and_scaled_loss():
    torch.manual_seed(0)
    net = TwoHeadNet()
    batch = _batch(4)
    expected = [g / 4 for g in _reference_grads(net, [batch])]

    def forward():
        return _loss(net, *batch)

    def do_backward(loss):
        (loss / 4).backward()

    do_backward(forward())
    for p, e in zip(net.parameters(), expected):
        np.testing.assert_allclose(p.grad.numpy(), e, rtol=1e-6, atol=1e-8)


def test_unused_parameter_keeps_none_grad_and_adam_leaves_it():
    torch.manual_seed(0)
    net = TwoHeadNet()
    spare = nn.Linear(8, 8)  # handed to the optimizer, never used in the loss
    opt = torch.optim.Adam(list(net.parameters()) + list(spare.parameters()), lr=1e-2, weight_decay=1e-2)
    before = spare.weight.detach().numpy().copy()
    trunk_before = net.conv.weight.detach().numpy().copy()
    for seed in (5, 6):
        opt.zero_grad()
        _loss(net, *_batch(seed)).backward()
        assert spare.weight.grad is None and spare.bias.grad is None
        opt.step()
    np.testing.assert_array_equal(spare.weight.detach().numpy(), before)
    assert not np.allclose(net.conv.weight.detach().numpy(), trunk_before)
    # its Adam moments stay untouched too (PyTorch keeps no state for a param it skipped)
    index = [id(p) for p in opt.parameters].index(id(spare.weight))
    assert not opt.exp_avg[index].asnumpy().any() and not opt.exp_avg_sq[index].asnumpy().any()
    assert opt.exp_avg[0].asnumpy().any()


def test_free_parameter_in_functional_code_gets_grad():
    w = nn.Parameter(torch.tensor(np.arange(6, dtype=np.float32).reshape(2, 3)))
    lin = nn.Linear(3, 3)  # a module call opens the recording
    opt = torch.optim.SGD([w] + list(lin.parameters()), lr=0.1)
    x = torch.ones(4, 3)
    loss = (lin(x) @ w.t()).sum()
    loss.backward()
    ref = ms.grad(lambda w_: (lin(x) @ w_.t()).sum())(w)
    np.testing.assert_allclose(w.grad.numpy(), ref.asnumpy(), rtol=1e-6)
    assert opt is not None


def test_batchnorm_running_mean_moves_once_per_step():
    torch.manual_seed(0)
    net = TwoHeadNet()
    opt = torch.optim.SGD(net.parameters(), lr=0.0)  # weights fixed: only BN statistics move
    x, y, t = _batch(7)
    for _ in range(3):
        rm = net.bn.running_mean.numpy().copy()
        conv_out = net.conv(x).detach().numpy()  # under no recording? it is recorded, harmless, same weights
        batch_mean = conv_out.mean(axis=(0, 2, 3))
        opt.zero_grad()
        _loss(net, x, y, t).backward()
        opt.step()
        expected = (1 - 0.1) * rm + 0.1 * batch_mean  # PyTorch BatchNorm2d, momentum=0.1
        np.testing.assert_allclose(net.bn.running_mean.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_backward_without_recorded_forward_names_the_caller():
    from adapter.tape import TapeError
    net = TwoHeadNet()
    with torch.no_grad():
        loss = _loss(net, *_batch(8))
    with pytest.raises(TapeError, match=r"test_tape\.py:\d+"):
        loss.backward()


def test_non_scalar_loss_needs_gradient():
    from adapter.tape import TapeError
    net = nn.Linear(3, 2)
    out = net(torch.ones(4, 3))
    with pytest.raises(TapeError, match="scalar"):
        out.backward()
    out = net(torch.ones(4, 3))
    out.backward(torch.ones(4, 2))
    np.testing.assert_allclose(net.bias.grad.numpy(), [4.0, 4.0], rtol=1e-6)


def test_inplace_relu_and_residual_add_give_out_of_place_grads():
    """ResNet's ``nn.ReLU(inplace=True)`` and ``out += identity`` differentiate like their out-of-place forms."""
    import sys, os
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "pt_original"))
    from resnet import BasicBlock
    torch.manual_seed(0)
    block = BasicBlock(4, 4)
    x = torch.tensor(np.random.default_rng(9).standard_normal((2, 4, 6, 6)).astype(np.float32))

    def out_of_place(x_):
        h = F.relu(block.bn1(block.conv1(x_)))
        return (F.relu(block.bn2(block.conv2(h)) + x_) ** 2).mean()

    params = list(block.parameters())
    _, expected = ms.value_and_grad(out_of_place, None, ms.ParameterTuple(params))(x)
    (block(x) ** 2).mean().backward()
    for p, e in zip(params, expected):
        np.testing.assert_allclose(p.grad.numpy(), e.asnumpy(), rtol=1e-5, atol=1e-7)


def test_module_without_parameters_is_answered_without_parameters_walk(monkeypatch):
    """A module holding no parameter (a torchvision transform called per sample by the DataLoader, an activation or
    loss module) called with grad mode on and no recording open: it cannot open one, and that is found without
    MindTorch's ``module.parameters()`` generator chain (issue 15: ~26 % of a ``Normalize`` call). Modules with
    parameters (nested, shared, frozen) get the same answer as ``any(p.requires_grad for p in m.parameters())``."""
    import torchvision.transforms as T
    from adapter import tape
    from mindtorch.torch.nn.modules.module import Module

    frozen = nn.Sequential(nn.ReLU(), nn.Sequential(nn.Linear(2, 2)))
    for p in frozen.parameters():
        p.requires_grad_(False)
    shared = nn.Linear(2, 2)
    cases = {"relu": nn.ReLU(), "normalize": T.Normalize((0.5,), (0.25,)), "mse": nn.MSELoss(),
             "empty_nest": nn.Sequential(nn.ReLU(), nn.Sequential(nn.Tanh())), "frozen_nest": frozen,
             "nested": nn.Sequential(nn.ReLU(), nn.Sequential(nn.ReLU(), nn.Linear(2, 2))),
             "shared": nn.Sequential(shared, shared), "linear": nn.Linear(3, 1)}
    expected = {name: any(p.requires_grad for p in m.parameters()) for name, m in cases.items()}
    assert expected == {"relu": False, "normalize": False, "mse": False, "empty_nest": False, "frozen_nest": False,
                        "nested": True, "shared": True, "linear": True}
    assert {name: tape._has_trainable_params(m) for name, m in cases.items()} == expected

    walked = []
    original = Module.parameters
    monkeypatch.setattr(Module, "parameters", lambda self, *a, **k: (walked.append(self), original(self, *a, **k))[1])
    x = torch.ones(1, 4, 4)
    out = cases["normalize"](x)
    cases["relu"](x)
    assert not tape.is_recording()
    assert walked == [], "a parameterless module call walked module.parameters()"
    np.testing.assert_array_equal(out.numpy(), np.full((1, 4, 4), 2.0, np.float32))
