"""Optimizers, lr schedulers and grad clipping against PyTorch's documented formulas, computed in numpy.

References: https://pytorch.org/docs/stable/optim.html (the algorithm box of each optimizer / scheduler) and
``torch/nn/utils/clip_grad.py``.
"""
import math

import numpy as np
import pytest
import torch
import torch.nn as nn

# also on CI's second MindSpore (pytest.ini: stack): optimizers: MindSpore's fused optimizer kernels and Parameter updates
pytestmark = pytest.mark.stack

GRADS = [np.array([0.5, -1.0, 2.0], np.float32), np.array([-0.3, 0.8, 1.5], np.float32),
         np.array([0.1, 0.2, -0.4], np.float32), np.array([1.0, -2.0, 0.5], np.float32)]
W0 = np.array([1.0, -0.5, 0.25], np.float32)


def _run(make_opt):
    w = nn.Parameter(torch.tensor(W0.copy()))
    opt = make_opt([w])
    out = []
    for g in GRADS:
        w.grad = torch.tensor(g)
        opt.step()
        out.append(w.detach().numpy().copy())
    return np.array(out)


def _sgd_ref(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    w, buf, out = W0.astype(np.float64), None, []
    for g in GRADS:
        g = (-g if maximize else g) + weight_decay * w
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        w = w - lr * g
        out.append(w)
    return np.array(out)


def _adam_ref(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False, maximize=False):
    w, m, v, out = W0.astype(np.float64), 0.0, 0.0, []
    for t, g in enumerate(GRADS, 1):
        g = -g if maximize else g
        if decoupled:
            w = w * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * w
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        w = w - lr / (1 - betas[0] ** t) * m / (np.sqrt(v) / math.sqrt(1 - betas[1] ** t) + eps)
        out.append(w)
    return np.array(out)


def _adadelta_ref(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0):
    w, sq, acc, out = W0.astype(np.float64), 0.0, 0.0, []
    for g in GRADS:
        g = g + weight_decay * w
        sq = rho * sq + (1 - rho) * g * g
        delta = np.sqrt(acc + eps) / np.sqrt(sq + eps) * g
        acc = rho * acc + (1 - rho) * delta * delta
        w = w - lr * delta
        out.append(w)
    return np.array(out)


@pytest.mark.parametrize("name,make,ref", [
    ("sgd", lambda p: torch.optim.SGD(p, lr=0.1), lambda: _sgd_ref(0.1)),
    ("sgd-momentum-wd", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-2),
     lambda: _sgd_ref(0.1, momentum=0.9, weight_decay=1e-2)),
    ("sgd-nesterov", lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True),
     lambda: _sgd_ref(0.05, momentum=0.9, nesterov=True)),
    ("adam-wd", lambda p: torch.optim.Adam(p, lr=1e-2, weight_decay=1e-2),
     lambda: _adam_ref(1e-2, weight_decay=1e-2)),
    ("adamw", lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=1e-1),
     lambda: _adam_ref(1e-2, weight_decay=1e-1, decoupled=True)),
    ("adadelta", lambda p: torch.optim.Adadelta(p, lr=1.0), lambda: _adadelta_ref(1.0)),
    # maximize: the gradient tuple negated at once (patches/optimizer_graph.py rewrites MindSpore's per-gradient form)
    ("sgd-momentum-maximize", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-2, maximize=True),
     lambda: _sgd_ref(0.1, momentum=0.9, weight_decay=1e-2, maximize=True)),
    ("adam-maximize", lambda p: torch.optim.Adam(p, lr=1e-2, weight_decay=1e-2, maximize=True),
     lambda: _adam_ref(1e-2, weight_decay=1e-2, maximize=True)),
    ("adamw-maximize", lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=1e-1, maximize=True),
     lambda: _adam_ref(1e-2, weight_decay=1e-1, decoupled=True, maximize=True)),
])
def test_optimizer_matches_pytorch_formula(name, make, ref):
    np.testing.assert_allclose(_run(make), ref(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_every_mindspore_optimizer_update_has_its_maximize_expression_rewritten():
    """The per-gradient ``maximize`` conditional costs ~3 s of ResNet18's step compilation (patches/optimizer_graph.py);
    a MindSpore upgrade that changes the expression's form would silently bring the cost back."""
    import mindspore.experimental.optim as msoptim
    rewritten = set()
    for cls in (msoptim.SGD, msoptim.Adam, msoptim.AdamW, msoptim.Adadelta, msoptim.Adagrad, msoptim.Adamax,
                msoptim.ASGD, msoptim.RMSprop, msoptim.Rprop):
        for name in ("implementation", "construct"):
            fn = cls.__dict__.get(name)
            code = getattr(fn, "__wrapped__", fn).__code__
            if "__adapter_maximize__" in code.co_names:
                rewritten.add(cls.__name__)
            inner = {c.co_name for c in code.co_consts if hasattr(c, "co_name")}
            assert not inner & {"<listcomp>", "<genexpr>"}, (cls, name)  # 2.5: a list, 2.10: a generator
    assert len(rewritten) == 9
    adam = torch.optim.Adam.implementation  # patches/adam.py's own update
    assert "<listcomp>" not in {c.co_name for c in adam.__wrapped__.__code__.co_consts if hasattr(c, "co_name")}


def test_param_groups_and_float_lr_assignment():
    a = nn.Parameter(torch.tensor(np.ones(2, np.float32)))
    b = nn.Parameter(torch.tensor(np.ones(2, np.float32)))
    opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    lr0 = opt.param_groups[0]["lr"]
    assert isinstance(lr0, float) and lr0 == 0.1 and opt.param_groups[1]["lr"] == 0.5
    assert f"{lr0:.3f}" == "0.100"
    for g in opt.param_groups:
        g["lr"] = g["lr"] * 0.1  # the usual manual decay
    assert opt.param_groups[0]["lr"] == pytest.approx(0.01) and opt.param_groups[1]["lr"] == pytest.approx(0.05)
    a.grad = torch.tensor(np.ones(2, np.float32))
    b.grad = torch.tensor(np.ones(2, np.float32))
    opt.step()
    np.testing.assert_allclose(a.detach().numpy(), [0.99, 0.99], rtol=1e-6)
    np.testing.assert_allclose(b.detach().numpy(), [0.95, 0.95], rtol=1e-6)


def _lrs(make_sched, steps, lr=0.1):
    w = nn.Parameter(torch.tensor(W0.copy()))
    opt = torch.optim.SGD([w], lr=lr)
    sched = make_sched(opt)
    seen = []
    for _ in range(steps):
        seen.append(opt.param_groups[0]["lr"])
        assert sched.get_last_lr() == pytest.approx([seen[-1]], rel=1e-6)
        w.grad = torch.tensor(np.zeros(3, np.float32))
        opt.step()
        sched.step()
    return np.array(seen)


def _one_cycle_ref(max_lr, total, pct=0.3, div=25.0, final_div=1e4):
    initial, minimum = max_lr / div, max_lr / div / final_div
    up_end = float(pct * total) - 1
    out = []
    for step in range(total):
        if step <= up_end:
            start, end, frac = initial, max_lr, step / up_end
        else:
            start, end, frac = max_lr, minimum, (step - up_end) / (total - 1 - up_end)
        out.append(end + (start - end) / 2.0 * (math.cos(math.pi * frac) + 1))
    return np.array(out)


class HalvingScheduler(torch.optim.lr_scheduler._LRScheduler):
    """A user-written scheduler: lr = base * 0.5 ** epoch."""

    def get_lr(self):
        return [base * 0.5 ** self.last_epoch for base in self.base_lrs]


@pytest.mark.parametrize("name,make,ref", [
    ("StepLR", lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.1),
     [0.1 * 0.1 ** (e // 3) for e in range(8)]),
    ("MultiStepLR", lambda o: torch.optim.lr_scheduler.MultiStepLR(o, milestones=[2, 5], gamma=0.5),
     [0.1 * 0.5 ** ((e >= 2) + (e >= 5)) for e in range(8)]),
    ("CosineAnnealingLR", lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=6, eta_min=0.01),
     [0.01 + (0.1 - 0.01) * (1 + math.cos(math.pi * e / 6)) / 2 for e in range(7)]),
    ("LambdaLR", lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda e: 1.0 / (1 + e)),
     [0.1 / (1 + e) for e in range(6)]),
    ("OneCycleLR", lambda o: torch.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=10),
     list(_one_cycle_ref(0.1, 10))),
    ("user _LRScheduler", lambda o: HalvingScheduler(o), [0.1 * 0.5 ** e for e in range(5)]),
])
def test_lr_scheduler_matches_pytorch_formula(name, make, ref):
    np.testing.assert_allclose(_lrs(make, len(ref)), ref, rtol=1e-5, atol=1e-9, err_msg=name)


def test_clip_grad_norm_and_value_with_a_none_grad():
    a = nn.Parameter(torch.tensor(np.zeros(2, np.float32)))
    b = nn.Parameter(torch.tensor(np.zeros(3, np.float32)))
    c = nn.Parameter(torch.tensor(np.zeros(1, np.float32)))  # grad None: skipped, stays None
    ga, gb = np.array([3.0, 4.0], np.float32), np.array([0.0, 12.0, 0.0], np.float32)
    a.grad, b.grad = torch.tensor(ga), torch.tensor(gb)
    total = torch.nn.utils.clip_grad_norm_([a, c, b], max_norm=6.5)
    assert float(total) == pytest.approx(13.0, rel=1e-6)
    coef = 6.5 / (13.0 + 1e-6)
    np.testing.assert_allclose(a.grad.numpy(), ga * coef, rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), gb * coef, rtol=1e-6)
    assert c.grad is None
    torch.nn.utils.clip_grad_value_([a, b, c], clip_value=1.0)
    np.testing.assert_allclose(b.grad.numpy(), [0.0, 1.0, 0.0], rtol=1e-6)
    np.testing.assert_allclose(a.grad.numpy(), np.clip(ga * coef, -1, 1), rtol=1e-6)
