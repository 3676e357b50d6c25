"""A parameter whose first update comes after the optimizer's step 1 (``.grad`` None at step 1: a branch not taken,
a layer unfrozen later), that is updated again after a step without a grad, added by ``add_param_group`` after
steps, or resumed from a state dict with its own count, against real PyTorch 2.13
(tests/fixtures/late_first_update_cases.py, its reference JSON).

PyTorch counts steps per parameter (``state['step']``). Adam and AdamW do too here (``patches/adam_steps.py``: they
switch to per-parameter counts at the first divergence), eager and fused into a compiled step, and their state dicts
carry each parameter's own ``step``: those cases match. MindSpore's Adamax, NAdam, RAdam, ASGD and Adagrad with
``lr_decay`` still read ONE global step count per optimizer: such a parameter's updates differ (``DIFFER``). Not fixed
there: ``patches/optimizer.py`` (``_after_update``) warns once at the user's ``step()`` line, in the eager step and
after a step fused into a compiled graph. The invariant checked: an optimizer whose values match PyTorch's gives no
warning, one whose values differ gives exactly one, at the script's line.

Without ``patches/adam_steps.py`` (``ADAPTER_DISABLE_PATCHES=adam_steps``) the Adam/AdamW cases differ (measured
2026-11-26: all 12 Adam/AdamW cases, the 4 compiled Adam/AdamW runs and the state dict test)."""
import importlib.util
import json
import os
import warnings

import numpy as np
import pytest

from support import load_reference, run_py

HERE = os.path.dirname(os.path.abspath(__file__))
REF = load_reference("late_first_update_reference.json", "cases")
CASES_FILE = os.path.join(HERE, "fixtures", "late_first_update_cases.py")
_spec = importlib.util.spec_from_file_location("late_first_update_cases", CASES_FILE)
CASES = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(CASES)
STEP_LINE = next(i for i, line in enumerate(open(CASES_FILE), 1) if line.strip() == "opt.step()")
LATE = "counts each parameter's own updates"


def _late_warnings(caught):
    return [(os.path.basename(w.filename), w.lineno) for w in caught if LATE in str(w.message)]


def _matches(got, want):
    return all(np.allclose(g, w, rtol=1e-6, atol=1e-7) for g, w in zip(got, want))


@pytest.mark.parametrize("name", sorted(CASES.CASES))
def test_late_first_update_matches_pytorch_or_is_warned_once_at_the_step_line(name):
    import torch
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = CASES.run(torch, name)
    matches = _matches(got, REF[name])
    assert matches == (name not in CASES.DIFFER), f"{name}: measured {'equal' if matches else 'different'}"
    want = [] if matches else [("late_first_update_cases.py", STEP_LINE)]
    assert _late_warnings(caught) == want, [str(w.message) for w in caught]


def test_no_warning_when_every_parameter_updates_from_step_1_or_after_a_resume():
    """All parameters with a grad at step 1: nothing to warn; an optimizer loaded from a state dict (its count above
    1 at its first update here) is not warned either (the parameters' state is restored)."""
    import torch
    a = torch.nn.Linear(3, 2)
    x = torch.ones(4, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt = torch.optim.Adam(a.parameters(), lr=0.01)
        for _ in range(3):
            opt.zero_grad()
            a(x).pow(2).mean().backward()
            opt.step()
        opt2 = torch.optim.Adam(a.parameters(), lr=0.01)
        opt2.load_state_dict(opt.state_dict())
        opt2.zero_grad()
        a(x).pow(2).mean().backward()
        opt2.step()
    assert not _late_warnings(caught), [str(w.message) for w in caught]


def test_add_param_group_after_steps_is_warned_once_not_again_at_the_first_update():
    import torch
    a, b = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    x = torch.ones(4, 3)
    opt = torch.optim.NAdam(a.parameters(), lr=0.01)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a(x).sum().backward()
        opt.step()
        opt.add_param_group({"params": b.parameters()})
        opt.zero_grad()
        (a(x).sum() + b(x).sum()).backward()
        opt.step()
    messages = [str(w.message) for w in caught]
    assert len([m for m in messages if "add_param_group after 1 steps" in m]) == 1, messages
    assert not _late_warnings(caught), messages


def test_adagrad_without_lr_decay_is_not_warned_at_add_param_group():
    """Adagrad reads its step count only as ``lr / (1 + step * lr_decay)``: with ``lr_decay=0`` (default) a group
    added later steps as PyTorch's (the ``Adagrad`` case above matches), so no warning."""
    import torch
    a, b = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    opt = torch.optim.Adagrad(a.parameters(), lr=0.1)
    a(torch.ones(1, 3)).sum().backward()
    opt.step()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt.add_param_group({"params": b.parameters()})
    assert not [str(w.message) for w in caught if "add_param_group after" in str(w.message)]


# PyTorch 2.13 (.venv-ref) losses of tests/fixtures/late_first_update_script.py ARGS
SCRIPT_REF = {
    "Adam": [5.03450870513916, 4.699755668640137, 4.376925945281982, 3.8050618171691895, 3.2928407192230225,
             2.837080717086792],
    "AdamW": [5.03450870513916, 4.698596954345703, 4.374722480773926, 3.801316261291504, 3.2879433631896973,
              2.8313710689544678],
    "Adam gap": [5.03450870513916, 4.399295806884766, 3.827376127243042, 3.5565218925476074, 3.2969155311584473,
                 2.8429527282714844],
    "AdamW gap": [5.03450870513916, 4.3972930908203125, 3.823814868927002, 3.552253484725952, 3.2920329570770264,
                  2.8372621536254883],
    "RMSprop": [5.03450870513916, 2.208482265472412, 1.1438838243484497, 0.18121835589408875, 0.06319039314985275,
                0.051018331199884415],
    "NAdam": [5.03450870513916, 4.681203842163086, 4.43157434463501, 3.9218826293945312, 3.540178060531616,
              3.2044472694396973],
}
#: still one global count (patches/optimizer.py warns): differs from its first late update (step 3) on
SCRIPT_DIFFER = ("NAdam",)
SCRIPT_STEP_LINE = next(i for i, line in enumerate(open(os.path.join(HERE, "fixtures", "late_first_update_script.py")),
                                                    1) if line.strip() == "opt.step()")


@pytest.mark.parametrize("args", sorted(SCRIPT_REF))
def test_compiled_step_with_a_layer_unfrozen_later_matches_pytorch_or_is_warned_once(args):
    """Under run.py (compiled, then fused step): Adam's and AdamW's unfrozen layer counts its own steps
    (patches/adam_steps.py), in the eager steps and in the fused graph, so the losses match PyTorch's; ``gap``: the
    layer is frozen at steps 3-4 after fused steps, the fused step compiles again for the per-parameter counts and
    matches at steps 5-6. RMSprop (no step count) matches; NAdam (one global count) differs from step 4 on and is
    warned once at the script's ``opt.step()`` line."""
    script = os.path.join(HERE, "fixtures", "late_first_update_script.py")
    proc = run_py("--explain", "--original", script, *args.split())
    assert proc.returncode == 0, proc.stderr[-3000:]
    losses = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "fused with optimizer.step()" in proc.stderr, proc.stderr[-3000:]
    warned = [line for line in proc.stderr.splitlines() if LATE in line]
    np.testing.assert_allclose(losses[:3], SCRIPT_REF[args][:3], rtol=1e-5)  # AdamW: 2e-6 from step 2 (float32)
    if args not in SCRIPT_DIFFER:
        np.testing.assert_allclose(losses, SCRIPT_REF[args], rtol=1e-5)
        assert not warned, proc.stderr[-3000:]
    else:
        assert not np.allclose(losses[3:], SCRIPT_REF[args][3:], rtol=1e-3)
        name = args.split()[0]
        assert len(warned) == 1 and f"late_first_update_script.py:{SCRIPT_STEP_LINE}: UserWarning: {name}: 2 " \
            "parameter(s)" in warned[0], warned


# PyTorch 2.13 (.venv-ref): {index: state['step']} of optimizer.state_dict() after each of 3 steps of the cases'
# models (batch ones(4, 3)); Adam: b's grad from step 2 on; AdamW_gap: b's grad at steps 1 and 3
STATE_STEPS_REF = {
    "Adam": [{0: 1.0, 1: 1.0}, {0: 2.0, 1: 2.0, 2: 1.0, 3: 1.0}, {0: 3.0, 1: 3.0, 2: 2.0, 3: 2.0}],
    "AdamW_gap": [{0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0}, {0: 2.0, 1: 2.0, 2: 1.0, 3: 1.0},
                  {0: 3.0, 1: 3.0, 2: 2.0, 3: 2.0}],
}


@pytest.mark.parametrize("name", sorted(STATE_STEPS_REF))
def test_state_dict_saves_each_parameters_own_step_and_a_round_trip_restores_them(name):
    """``state_dict()`` has PyTorch's per-parameter ``step`` (none for a parameter never updated); after
    ``torch.save`` / ``torch.load`` into a new optimizer the counts are the same, and the next step of both
    optimizers gives the same parameters."""
    import io
    import torch
    a, b, opt = CASES.build(torch, name)
    x = torch.ones(4, 3)

    def step(optimizer, i):
        optimizer.zero_grad()
        loss = (a(x) ** 2).mean()
        if (i != 1) if "_gap" in name else (i > 0):
            loss = loss + (b(x) ** 2).mean()
        loss.backward()
        optimizer.step()

    for i, want in enumerate(STATE_STEPS_REF[name]):
        step(opt, i)
        sd = opt.state_dict()
        assert {k: float(v["step"]) for k, v in sd["state"].items()} == want
        assert all(sorted(v) == ["exp_avg", "exp_avg_sq", "step"] for v in sd["state"].values())
    buf = io.BytesIO()
    torch.save(opt.state_dict(), buf)
    buf.seek(0)
    cls, kwargs = CASES.CASES[name]
    opt2 = getattr(torch.optim, cls)(list(a.parameters()) + list(b.parameters()), **kwargs)
    opt2.load_state_dict(torch.load(buf))
    assert {k: float(v["step"]) for k, v in opt2.state_dict()["state"].items()} == STATE_STEPS_REF[name][-1]
    params = list(a.parameters()) + list(b.parameters())
    start = [p.detach().numpy().copy() for p in params]
    step(opt, 3)
    after_opt = [p.detach().numpy().copy() for p in params]
    with torch.no_grad():
        for p, v in zip(params, start):
            p.copy_(torch.tensor(v))
    step(opt2, 3)
    for got, want in zip([p.detach().numpy() for p in params], after_opt):
        np.testing.assert_array_equal(got, want)
