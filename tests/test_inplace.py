"""In-place writes (patches/inplace.py) and Parameter methods (patches/parameter_methods.py) against PyTorch.

Expected values are closed forms in numpy, and PyTorch 2.13's results and messages recorded from real PyTorch
(``.venv-ref``), quoted in each test. Before these patches every write below was lost without an error
(pytorch/examples' regression never ended).
"""

import numpy as np
import pytest
import torch

from support import last_json, run_py

# also on CI's second MindSpore (pytest.ini: stack): in-place ops: MindSpore's assign/inplace kernels and their autograd
pytestmark = pytest.mark.stack

W = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]], np.float32)


def _param():
    return torch.nn.Parameter(torch.tensor(W.copy()))


@pytest.mark.parametrize("method,args,expected", [
    ("add_", (torch.ones(2, 3),), W + 1),
    ("sub_", (torch.ones(2, 3),), W - 1),
    ("div_", (2.0,), W / 2),
    ("mul_", (3.0,), W * 3),
    ("exp_", (), np.exp(W)),
    ("fill_", (2.0,), np.full_like(W, 2.0)),
    ("zero_", (), np.zeros_like(W)),
    ("copy_", (torch.full((2, 3), 5.0),), np.full_like(W, 5.0)),
    ("masked_fill_", (torch.tensor(W > 3), 0.0), np.where(W > 3, 0.0, W)),
])
def test_parameter_data_inplace_writes_the_parameter(method, args, expected):
    """`p.data.<op>_()` (Parameter.data is the parameter) and `p.<op>_()` under no_grad change p itself."""
    p = _param()
    getattr(p.data, method)(*args)
    np.testing.assert_allclose(p.asnumpy(), expected, rtol=1e-5)  # MindSpore CPU exp: 1.8e-6 off
    q = _param()
    with torch.no_grad():
        out = getattr(q, method)(*args)
    assert out is q
    np.testing.assert_allclose(q.asnumpy(), expected, rtol=1e-5)


def test_regression_update_through_data_moves_the_weights():
    """pytorch/examples regression: `param.data.add_(-0.1 * param.grad)` after backward()."""
    torch.manual_seed(0)
    fc = torch.nn.Linear(4, 1)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    torch.nn.functional.smooth_l1_loss(fc(x), y).backward()
    before = [p.asnumpy().copy() for p in fc.parameters()]
    grads = [p.grad.asnumpy().copy() for p in fc.parameters()]
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)
    for p, b, g in zip(fc.parameters(), before, grads):
        assert np.abs(g).max() > 0
        np.testing.assert_allclose(p.asnumpy(), b - 0.1 * g, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op,dtype,start,operand,expected", [
    ("+=", np.float32, [7.0, 9.0], 1.5, [8.5, 10.5]),
    ("-=", np.float32, [7.0, 9.0], 1.5, [5.5, 7.5]),
    ("*=", np.int64, [1, 1], 2, [2, 2]),            # torch: tensor([2, 2])
    ("/=", np.float32, [7.0, 9.0], 2, [3.5, 4.5]),  # torch: tensor([3.5000, 4.5000])
    ("**=", np.float32, [3.5, 4.5], 2, [12.25, 20.25]),
    ("//=", np.int64, [7, 9], 2, [3, 4]),           # torch: tensor([3, 4])
    ("%=", np.int64, [3, 4], 3, [0, 1]),
    ("|=", np.int64, [0, 2], 1, [1, 3]),
    ("&=", np.int64, [3, 6], 2, [2, 2]),
    ("^=", np.int64, [3, 6], 1, [2, 7]),
])
def test_augmented_assignment_writes_in_place(op, dtype, start, operand, expected):
    """`a op= b` changes the tensor every alias sees, keeps its dtype, returns the same object."""
    a = torch.tensor(np.array(start, dtype))
    alias = a
    namespace = {"a": a, "b": operand}
    exec(f"a {op} b", namespace)  # noqa: S102 (the operator under test)
    assert namespace["a"] is alias
    np.testing.assert_array_equal(alias.asnumpy(), np.array(expected, dtype))
    assert alias.asnumpy().dtype == dtype


def test_sgd_written_as_augmented_assignment_updates_parameters():
    """`for p in model.parameters(): p -= lr * p.grad` under no_grad, and `model.weight -= x`: the parameters
    (the objects the model and optimizers hold) change."""
    torch.manual_seed(0)
    fc = torch.nn.Linear(3, 2)
    fc(torch.randn(4, 3)).sum().backward()
    before = [p.asnumpy().copy() for p in fc.parameters()]
    grads = [p.grad.asnumpy().copy() for p in fc.parameters()]
    with torch.no_grad():
        for p in fc.parameters():
            p -= 0.5 * p.grad
    for p, b, g in zip(fc.parameters(), before, grads):
        np.testing.assert_allclose(p.asnumpy(), b - 0.5 * g, rtol=1e-6)
    weight = fc.weight
    with torch.no_grad():
        fc.weight -= 1.0
    assert fc.weight is weight and isinstance(fc.weight, torch.nn.Parameter)
    np.testing.assert_allclose(fc.weight.asnumpy(), before[0] - 0.5 * grads[0] - 1.0, rtol=1e-6)


@pytest.mark.parametrize("dtype,operand,message", [
    # real PyTorch 2.13: RuntimeError("result type Float can't be cast to the desired output type Long")
    (torch.int64, 0.5, "result type Float can't be cast to the desired output type Long"),
    # RuntimeError("result type Long can't be cast to the desired output type Bool")
    (torch.bool, 1, "result type Long can't be cast to the desired output type Bool"),
])
def test_augmented_assignment_refuses_what_pytorch_refuses(dtype, operand, message):
    t = torch.ones(2, dtype=dtype)
    with pytest.raises(RuntimeError, match=message):
        t += operand
    assert t.asnumpy().tolist() == [1, 1]  # unchanged


def test_augmented_assignment_refuses_a_growing_broadcast():
    # real PyTorch 2.13: RuntimeError("output with shape [2] doesn't match the broadcast shape [3, 2]")
    t = torch.ones(2)
    with pytest.raises(RuntimeError, match=r"output with shape \[2\] doesn't match the broadcast shape \[3, 2\]"):
        t += torch.ones(3, 2)


def test_detach_and_data_write_through_to_their_source():
    t = torch.tensor([1.0, 2.0])
    t.detach().mul_(3.0)
    np.testing.assert_array_equal(t.asnumpy(), [3.0, 6.0])
    t.data.clamp_(max=4.0)
    np.testing.assert_array_equal(t.asnumpy(), [3.0, 4.0])
    p = _param()
    p.detach().zero_()
    np.testing.assert_array_equal(p.asnumpy(), np.zeros_like(W))
    p.data = torch.ones(2, 3)  # assignment replaces the value
    np.testing.assert_array_equal(p.asnumpy(), np.ones_like(W))
    assert not t.detach().requires_grad


def test_state_dict_values_write_through():
    """timm's EMA writes through state_dict() values (patches/state_dict.py, via detach())."""
    fc = torch.nn.Linear(2, 2)
    with torch.no_grad():
        for v in fc.state_dict().values():
            v.copy_(torch.full(v.shape, 0.25))
    np.testing.assert_array_equal(fc.weight.asnumpy(), np.full((2, 2), 0.25, np.float32))


def test_parameter_methods_are_torch_methods():
    """Recorded from real PyTorch 2.13 for W: p.std(dim=1) -> [1.0000, 1.5275], p.max(1).indices -> [2, 2],
    '{:+.2f}'.format(p.view(-1)[0]) -> '+1.00', type(p.clone()) -> torch.Tensor."""
    p = _param()
    np.testing.assert_allclose(p.std(dim=1).asnumpy(), [1.0, 1.5275252], rtol=1e-6)
    assert p.max(1).indices.asnumpy().tolist() == [2, 2]
    assert "{:+.2f}".format(p.view(-1)[0]) == "+1.00"
    assert "{:+.2f}".format(p[1, 2]) == "+7.00"
    clone = p.clone()
    assert type(clone) is torch.Tensor
    np.testing.assert_array_equal(clone.asnumpy(), W)
    clone.add_(1)
    np.testing.assert_array_equal(p.asnumpy(), W)  # a copy, not an alias


def test_optimizers_still_create_their_state_with_mindspore_clone():
    """MindSpore's optimizers call ParameterTuple.clone(prefix, init) -> Parameter.clone(init): MindSpore's."""
    fc = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(fc.parameters(), lr=0.1)
    fc(torch.ones(1, 3)).sum().backward()
    before = fc.weight.asnumpy().copy()
    opt.step()
    # Adam's first step moves every weight with a non-zero grad by lr (PyTorch's formula, m/sqrt(v) = sign(g))
    np.testing.assert_allclose(np.abs(fc.weight.asnumpy() - before), np.full((2, 3), 0.1), rtol=1e-4)


REGRESSION = '''
import json, sys
import torch
import torch.nn.functional as F
torch.manual_seed(0)
W_target = torch.randn(4, 1) * 5
fc = torch.nn.Linear(4, 1)
losses = []
for i in range(30):
    x = torch.randn(32, 4)
    y = x.mm(W_target) + 1.5
    fc.zero_grad()
    output = F.smooth_l1_loss(fc(x), y)
    loss = output.item()
    output.backward()
    for param in fc.parameters():
        if sys.argv[1] == "data":
            param.data.add_(-0.1 * param.grad)
        else:
            with torch.no_grad():
                param -= 0.1 * param.grad
    losses.append(loss)
print(json.dumps({"losses": losses, "weight": fc.weight.detach().numpy().tolist()}))
'''


@pytest.mark.parametrize("update", ["data", "isub"])
def test_manual_updates_between_compiled_steps_train_as_eager(tmp_path, update):
    """The step compiles; the script's own updates (through .data, or -= under no_grad) reach the weights the next
    compiled step reads: compiled losses equal PyNative's and go down."""
    script = tmp_path / "regression_like.py"
    script.write_text(REGRESSION)
    runs = {}
    for mode in ("auto", "pynative"):
        proc = run_py("--explain", "--mode", mode, "--original", script, update, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs[mode] = (last_json(proc.stdout), proc.stderr)
    assert "compiled (graph mode)" in runs["auto"][1], runs["auto"][1]
    compiled, eager = runs["auto"][0], runs["pynative"][0]
    np.testing.assert_allclose(compiled["losses"], eager["losses"], rtol=1e-5)
    np.testing.assert_allclose(compiled["weight"], eager["weight"], rtol=1e-5)
    # 30 updates of lr 0.1 on |grad| ~ 1 (smooth L1): the weights moved (they stayed at their init before the fix)
    torch.manual_seed(0)
    torch.randn(4, 1)
    initial = torch.nn.Linear(4, 1).weight.asnumpy()
    assert np.abs(np.array(compiled["weight"]) - initial).max() > 0.5
