"""Plain SGD (``momentum=0``) holds no per-parameter state, as PyTorch's (patches/sgd.py).

MindSpore's ``SGD.__init__`` cloned ``accum`` (zeros) and ``stat`` (ones) for every parameter even with
``momentum=0``: 4x ``Linear(4096, 4096)`` took +256 MB of RSS at ``torch.optim.SGD(...)`` (bench/sgd_slots_rss.py,
docs/memory.md). Now those parameters get 0-d placeholders and an update without them. The updates must be the bits
MindSpore's ``SGD`` operator gave (the reference here: the operator itself, replayed on the same gradients with its
full slots), eagerly and in the fused compiled step, for momentum 0 with weight_decay / maximize, for momentum with
dampening / nesterov (unchanged), and for a group whose momentum is switched on after construction: PyTorch then
creates the momentum buffer at that step (``torch/optim/sgd.py``: ``buf = clone(grad)`` when there is none), which
the operator's ``stat`` = 1 reproduces."""
import json
import sys
import os

import numpy as np
import pytest

from support import ROOT, run_py

# also on CI's second MindSpore (pytest.ini: stack): optimizers: MindSpore's fused optimizer kernels and Parameter updates
pytestmark = pytest.mark.stack

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures"))

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "sgd_slots_train.py")


def _replay(groups, w0, grads, momenta):
    """Weights after each step from MindSpore's ``SGD`` operator with full ``accum``/``stat`` slots (what every
    SGD update went through before patches/sgd.py's momentum=0 path). ``groups``: per parameter ``(lr, momentum,
    dampening, weight_decay, nesterov, maximize)``; ``grads[t][i]``, ``momenta[t][i]``: step t, parameter i."""
    import mindspore as ms
    from mindspore.ops import operations as P
    ws = [ms.Parameter(ms.Tensor(np.array(w)), name=f"w{i}") for i, w in enumerate(w0)]
    accum = [ms.Parameter(ms.Tensor(np.zeros_like(np.array(w))), name=f"a{i}") for i, w in enumerate(w0)]
    stat = [ms.Parameter(ms.Tensor(np.ones_like(np.array(w))), name=f"s{i}") for i, w in enumerate(w0)]
    out = []
    for step_grads, step_momenta in zip(grads, momenta):
        for i, (g, m, (lr, _, dampening, wd, nesterov, maximize)) in enumerate(zip(step_grads, step_momenta, groups)):
            g = np.array(g, dtype=ws[i].asnumpy().dtype)
            P.SGD(float(dampening), float(wd), nesterov)(ws[i], ms.Tensor(-g if maximize else g),
                                                         ms.Tensor(lr, ms.float32), accum[i],
                                                         ms.Tensor(m, ms.float32), stat[i])
        out.append([w.asnumpy().copy() for w in ws])
    return out


def _slot_shapes(opt):
    return [tuple(a.shape) for a in opt.accum], [tuple(s.shape) for s in opt.stat]


def test_plain_sgd_holds_no_slots_and_momentum_groups_keep_theirs():
    import torch
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Linear(64, 64))
    a, b = model[0], model[1]
    opt = torch.optim.SGD([{"params": a.parameters()}, {"params": b.parameters(), "momentum": 0.9}], lr=0.1)
    accum, stat = _slot_shapes(opt)
    assert accum[:2] == stat[:2] == [(), ()]  # before patches/sgd.py: (64, 64), (64,) each
    assert accum[2:] == stat[2:] == [(64, 64), (64,)]
    weights = sum(int(p.nbytes) for p in opt.parameters)
    lrs = sum(int(p.nbytes) for p in opt.lrs)
    held = sum(int(p.nbytes) for p in opt.get_parameters()) - weights - lrs
    assert held == 2 * 4 * (64 * 64 + 64) + 4 * 4  # group 1's two slots, group 0's four 0-d placeholders
    assert opt.state_dict()["state"] == {}
    plain = torch.optim.SGD(a.parameters(), lr=0.1)
    assert _slot_shapes(plain) == ([(), ()], [(), ()])


def test_eager_updates_are_the_sgd_operators_bits_with_momentum_switched_on():
    import torch
    rng = np.random.default_rng(0)
    groups = [(0.1, 0.0, 0.0, 0.0, False, False), (0.05, 0.0, 0.0, 0.01, False, False),
              (0.1, 0.0, 0.0, 0.0, False, True), (0.1, 0.9, 0.3, 0.01, False, False),
              (0.05, 0.8, 0.0, 0.0, True, False), (0.0123, 0.0, 0.0, 0.01, False, False)]
    dtypes = [np.float32] * 5 + [np.float16]  # the kernel computes float16 in float32, rounded once
    w0 = [rng.standard_normal((37, 29)).astype(dt) for dt in dtypes]
    steps = 5
    grads = [[rng.standard_normal(w.shape).astype(w.dtype) for w in w0] for _ in range(steps)]
    momenta = [[g[1] for g in groups] for _ in range(steps)]
    for t in range(3, steps):
        momenta[t][1] = 0.7
    params = [torch.nn.Parameter(torch.tensor(w.copy())) for w in w0]
    opt = torch.optim.SGD([dict(params=[p], lr=lr, momentum=m, dampening=d, weight_decay=wd, nesterov=n, maximize=mx)
                           for p, (lr, m, d, wd, n, mx) in zip(params, groups)], lr=0.1)
    ours, keys = [], []
    for t in range(steps):
        if t == 3:
            opt.param_groups[1]["momentum"] = 0.7
        for p, g in zip(params, grads[t]):
            p.grad = torch.tensor(g)
        opt.step()
        ours.append([p.detach().numpy().copy() for p in params])
        keys.append(sorted(opt.state_dict()["state"]))
    ref = _replay(groups, w0, grads, momenta)
    for t in range(steps):
        for i in range(len(groups)):
            assert np.array_equal(ours[t][i], ref[t][i]), (t, i, np.abs(ours[t][i] - ref[t][i]).max())
    assert keys == [[3, 4]] * 3 + [[1, 3, 4]] * 2  # PyTorch: a buffer once a momentum step ran
    accum, _ = _slot_shapes(opt)
    assert accum == [(), (37, 29), (), (37, 29), (37, 29), ()]


def test_compiled_fused_updates_are_the_sgd_operators_bits():
    """Through run.py: step 0 eager (the reference step), then compiled and fused; the momentum switch before step 3
    compiles the update anew with group 1's new full-size slots."""
    proc = run_py("--explain", "--original", FIXTURE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "backward() of loss — compiled (graph mode, fused with optimizer.step()" in proc.stderr, proc.stderr[-3000:]
    assert "2 graph(s)" in proc.stderr, proc.stderr[-3000:]  # one per momentum of group 1
    out = json.loads(proc.stdout[proc.stdout.index("{"):])
    import sgd_slots_train as fx
    w0 = [np.array(w, np.float32) for w in out["w0"]]
    ref = _replay(fx.GROUPS, w0, out["grads"], out["momentum"])
    assert [m[fx.SWITCH[1]] for m in out["momentum"]] == [0.0] * 3 + [0.7] * 3
    for t, (ours, theirs) in enumerate(zip(out["weights"], ref)):
        for i, (w, r) in enumerate(zip(ours, theirs)):
            assert np.array_equal(np.array(w, np.float32), r), (t, i)
    assert out["slots_before"] == [[[], [], [], [4, 4], [4, 4]]] * 2
    assert out["slots_after"] == [[[], [4, 4], [], [4, 4], [4, 4]]] * 2
    assert out["state_keys"] == [1, 3, 4]


def test_load_state_dict_with_momentum_buffers_into_a_plain_sgd():
    """PyTorch's ``load_state_dict`` takes the groups' momentum and the buffers from the checkpoint: a momentum=0
    optimizer loaded from a momentum one continues as that one (same bits)."""
    import torch
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((6, 5)).astype(np.float32)
    grads = [rng.standard_normal((6, 5)).astype(np.float32) for _ in range(4)]
    a, b = torch.nn.Parameter(torch.tensor(w0.copy())), torch.nn.Parameter(torch.tensor(w0.copy()))
    opt_a = torch.optim.SGD([a], lr=0.1, momentum=0.9, weight_decay=0.01)
    opt_b = torch.optim.SGD([b], lr=0.1)
    for g in grads[:2]:
        a.grad = torch.tensor(g)
        opt_a.step()
    with torch.no_grad():
        b.copy_(a)
    opt_b.load_state_dict(opt_a.state_dict())
    assert opt_b.param_groups[0]["momentum"] == 0.9 and _slot_shapes(opt_b) == ([(6, 5)], [(6, 5)])
    for g in grads[2:]:
        a.grad, b.grad = torch.tensor(g), torch.tensor(g)
        opt_a.step()
        opt_b.step()
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    np.testing.assert_array_equal(opt_b.state_dict()["state"][0]["momentum_buffer"].numpy(),
                                  opt_a.state_dict()["state"][0]["momentum_buffer"].numpy())
