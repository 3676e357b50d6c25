"""Adam/AdamW without amsgrad hold two full-size slots per parameter, as PyTorch's (patches/adam_slots.py).

MindSpore's ``Adam``/``AdamW.__init__`` cloned ``max_exp_avg_sq`` for every parameter, read only with amsgrad (ResNet50:
~98 MB; docs/memory.md, "Adam slots"). Now groups without amsgrad get a 0-d placeholder. The update functions do not
read that slot without amsgrad, so the reference here is the same optimizer holding MindSpore's full-size slots
(built with amsgrad on, switched off before the first step; or, through run.py, the patch disabled): the same bits,
eagerly and in the fused compiled step, also after amsgrad is switched on later (then the full-size slot is made,
zeros, as MindSpore's initial one). amsgrad's values against PyTorch: tests/test_optim_float64.py
(``adam_wd_amsgrad``)."""
import json
import os

import numpy as np
import pytest

from support import ROOT, run_py

# also on CI's second MindSpore (pytest.ini: stack): optimizers: MindSpore's fused optimizer kernels and Parameter updates
pytestmark = pytest.mark.stack

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "adam_slots_train.py")
CLASSES = ["Adam", "AdamW"]


def _shapes(opt):
    return [tuple(s.shape) for s in opt.max_exp_avg_sq]


@pytest.mark.parametrize("name", CLASSES)
def test_groups_without_amsgrad_hold_no_max_exp_avg_sq(name):
    import torch
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Linear(64, 64))
    cls = getattr(torch.optim, name)
    opt = cls([{"params": model[0].parameters()}, {"params": model[1].parameters(), "amsgrad": True}], lr=0.1)
    assert _shapes(opt) == [(), (), (64, 64), (64,)]  # before patches/adam_slots.py: full-size for all four
    names = [s.name for s in opt.max_exp_avg_sq]  # MindSpore's names (a '#n' suffix where the test reuses params)
    assert names[0].startswith("max_exp_avg_sq.0.weight") and names[1].startswith("max_exp_avg_sq.0.bias")
    assert [tuple(s.shape) for s in opt.exp_avg] == [tuple(s.shape) for s in opt.exp_avg_sq] == \
        [(64, 64), (64,), (64, 64), (64,)]
    per_param = 4 * (64 * 64 + 64)
    held = sum(int(p.nbytes) for p in opt.get_parameters())
    weights = sum(int(p.nbytes) for p in opt.parameters)
    lrs = sum(int(p.nbytes) for p in opt.lrs)
    # exp_avg + exp_avg_sq for both layers, max_exp_avg_sq for layer 1 only, two 0-d placeholders, state_step
    assert held - weights - lrs == 2 * 2 * per_param + per_param + 2 * 4 + 4  # before: + another per_param
    assert opt.state_dict()["state"] == {}
    assert _shapes(cls(model.parameters(), lr=0.1)) == [()] * 4
    assert _shapes(cls(model.parameters(), lr=0.1, amsgrad=True)) == [(64, 64), (64,)] * 2


def _train(opt, params, grads, switch):
    out = []
    for t, step_grads in enumerate(grads):
        if t == switch[0]:
            opt.param_groups[switch[1]]["amsgrad"] = True
        for p, g in zip(params, step_grads):
            p.grad = p.new_tensor(g)
        opt.step()
        out.append([p.detach().numpy().copy() for p in params])
    return out


@pytest.mark.parametrize("name", CLASSES)
def test_eager_updates_are_the_full_slot_bits_with_amsgrad_switched_on(name):
    import torch
    cls = getattr(torch.optim, name)
    rng = np.random.default_rng(0)
    configs = [dict(lr=0.01), dict(lr=0.02, weight_decay=0.01), dict(lr=0.01, amsgrad=True),
               dict(lr=0.03, maximize=True), dict(lr=0.01)]
    dtypes = [np.float32] * 4 + [np.float64]
    w0 = [rng.standard_normal((7, 5)).astype(dt) for dt in dtypes]
    grads = [[rng.standard_normal(w.shape).astype(w.dtype) for w in w0] for _ in range(6)]
    switch = (3, 1)
    runs, opts = [], []
    for full in (False, True):
        params = [torch.nn.Parameter(torch.tensor(w.copy())) for w in w0]
        # full: every slot full-size (built with amsgrad on), then the configs' amsgrad: MindSpore's three slots
        groups = [dict(c, params=[p], amsgrad=True if full else c.get("amsgrad", False))
                  for p, c in zip(params, configs)]
        opt = cls(groups, lr=0.1)
        for group, c in zip(opt.param_groups, configs):
            group["amsgrad"] = c.get("amsgrad", False)
        assert _shapes(opt) == ([(7, 5)] * 5 if full else [(), (), (7, 5), (), ()])
        runs.append(_train(opt, params, grads, switch))
        opts.append(opt)
    for t, (ours, ref) in enumerate(zip(*runs)):
        for i, (a, b) in enumerate(zip(ours, ref)):
            assert np.array_equal(a, b), (t, i, np.abs(a - b).max())
    assert _shapes(opts[0]) == [(), (7, 5), (7, 5), (), ()]
    ours, ref = opts[0].state_dict()["state"], opts[1].state_dict()["state"]
    assert {i: sorted(s) for i, s in ours.items()} == {i: sorted(s) for i, s in ref.items()}
    assert sorted(ours[1]) == sorted(ours[2]) == ["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"]
    assert "max_exp_avg_sq" not in ours[0]
    for i in ours:
        for key in ours[i]:
            np.testing.assert_array_equal(ours[i][key].numpy(), ref[i][key].numpy())


@pytest.mark.parametrize("name", CLASSES)
def test_load_state_dict_of_an_amsgrad_checkpoint_into_an_optimizer_without(name):
    """PyTorch's ``load_state_dict`` takes the groups' amsgrad and the maxima from the checkpoint: the loaded
    optimizer continues as the saved one (same bits)."""
    import torch
    cls = getattr(torch.optim, name)
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((6, 5)).astype(np.float32)
    grads = [rng.standard_normal((6, 5)).astype(np.float32) for _ in range(4)]
    a, b = torch.nn.Parameter(torch.tensor(w0.copy())), torch.nn.Parameter(torch.tensor(w0.copy()))
    opt_a = cls([a], lr=0.01, amsgrad=True)
    opt_b = cls([b], lr=0.01)
    assert _shapes(opt_b) == [()]
    for g in grads[:2]:
        a.grad = torch.tensor(g)
        opt_a.step()
    with torch.no_grad():
        b.copy_(a)
    opt_b.load_state_dict(opt_a.state_dict())
    assert opt_b.param_groups[0]["amsgrad"] is True and _shapes(opt_b) == [(6, 5)]
    for g in grads[2:]:
        a.grad, b.grad = torch.tensor(g), torch.tensor(g)
        opt_a.step()
        opt_b.step()
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    np.testing.assert_array_equal(opt_b.state_dict()["state"][0]["max_exp_avg_sq"].numpy(),
                                  opt_a.state_dict()["state"][0]["max_exp_avg_sq"].numpy())
    # and back: a checkpoint without amsgrad leaves a plain optimizer's placeholder alone
    opt_c = cls([torch.nn.Parameter(torch.tensor(w0.copy()))], lr=0.01)
    opt_c.load_state_dict(cls([torch.nn.Parameter(torch.tensor(w0.copy()))], lr=0.01).state_dict())
    assert _shapes(opt_c) == [()]


@pytest.mark.parametrize("name", CLASSES)
def test_add_param_group_gets_slots_by_its_amsgrad(name):
    import torch
    cls = getattr(torch.optim, name)
    a, b, c = (torch.nn.Parameter(torch.ones(3, 2)) for _ in range(3))
    opt = cls([a], lr=0.01)
    opt.add_param_group({"params": [b], "amsgrad": True})
    opt.add_param_group({"params": [c]})
    assert _shapes(opt) == [(), (3, 2), ()]
    for p in (a, b, c):
        p.grad = torch.full((3, 2), 0.5)
    opt.step()
    assert sorted(opt.state_dict()["state"][1]) == ["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"]
    assert "max_exp_avg_sq" not in opt.state_dict()["state"][2]


@pytest.mark.parametrize("name", CLASSES)
def test_compiled_fused_updates_are_the_full_slot_bits(name):
    """Through run.py: step 0 eager (the reference step), then compiled and fused with ``optimizer.step()``; the
    amsgrad switch before step 3 compiles the update anew with group 1's new full-size slot. The reference: the same
    run with the patch disabled (MindSpore's three full-size slots)."""
    outs = []
    for env in ({}, {"ADAPTER_DISABLE_PATCHES": "adam_slots"}):
        proc = run_py("--explain", "--original", FIXTURE, name, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "compiled (graph mode, fused with optimizer.step()" in proc.stderr, proc.stderr[-3000:]
        outs.append(json.loads(proc.stdout[proc.stdout.index("{"):]))
    ours, ref = outs
    assert ours["slots_before"] == [[], [], [4, 4], []] and ref["slots_before"] == [[4, 4]] * 4
    assert ours["slots_after"] == [[], [4, 4], [4, 4], []]
    assert ours["state_keys"] == ref["state_keys"]
    for t, (a, b) in enumerate(zip(ours["weights"], ref["weights"])):
        for i, (wa, wb) in enumerate(zip(a, b)):
            assert np.array_equal(np.array(wa, np.float32), np.array(wb, np.float32)), (t, i)
    assert ours["weights"][-1] != ours["weights"][2]
