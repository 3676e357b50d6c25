"""A parameter whose first update comes after the optimizer's step 1 (``.grad`` None at step 1: a branch not taken,
a layer unfrozen later), or that is updated again after a step without a grad, against real PyTorch 2.13 (tests/fixtures/late_first_update_cases.py, its reference JSON).

MindSpore's Adam, AdamW, Adamax, NAdam, RAdam, ASGD and Adagrad with ``lr_decay`` read ONE global step count per
optimizer where PyTorch counts steps per parameter: such a parameter's updates differ (the ``*_gap`` cases: the second kind). Not fixed (a per-parameter
count in each update): ``patches/optimizer.py`` (``_after_update``) warns once at the user's ``step()`` line, in the
eager step and after a step fused into a compiled graph. The invariant checked: an optimizer whose values match
PyTorch's gives no warning, one whose values differ gives exactly one, at the script's line."""
import importlib.util
import json
import os
import warnings

import numpy as np
import pytest

from _runpy import run_py

HERE = os.path.dirname(os.path.abspath(__file__))
REF = json.load(open(os.path.join(HERE, "fixtures", "late_first_update_reference.json")))["cases"]
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


# PyTorch 2.13 (.venv-ref) losses of tests/fixtures/late_first_update_script.py
SCRIPT_REF = {
    "Adam": [5.03450870513916, 4.699755668640137, 4.376925945281982, 3.8050618171691895, 3.2928407192230225,
             2.837080717086792],
    "RMSprop": [5.03450870513916, 2.208482265472412, 1.1438838243484497, 0.18121835589408875, 0.06319039314985275,
                0.051018331199884415],
}


@pytest.mark.parametrize("name", sorted(SCRIPT_REF))
def test_compiled_step_with_a_layer_unfrozen_later_warns_once_where_it_differs(name):
    """Under run.py (compiled, then fused step): Adam's unfrozen layer differs from PyTorch from its first update
    (step 3) on and is warned once at the script's ``opt.step()`` line; RMSprop (no step count) matches, unwarned."""
    script = os.path.join(HERE, "fixtures", "late_first_update_script.py")
    proc = run_py("--explain", "--original", script, name)
    assert proc.returncode == 0, proc.stderr[-3000:]
    losses = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "fused with optimizer.step()" in proc.stderr, proc.stderr[-3000:]
    warned = [line for line in proc.stderr.splitlines() if LATE in line]
    np.testing.assert_allclose(losses[:3], SCRIPT_REF[name][:3], rtol=1e-6)
    if name == "RMSprop":
        np.testing.assert_allclose(losses, SCRIPT_REF[name], rtol=1e-5)
        assert not warned, proc.stderr[-3000:]
    else:
        assert not np.allclose(losses[3:], SCRIPT_REF[name][3:], rtol=1e-3)
        assert len(warned) == 1 and "late_first_update_script.py:26: UserWarning: Adam: 2 parameter(s)" in warned[0]
