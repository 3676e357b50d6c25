"""``torch.optim.lr_scheduler`` against real PyTorch 2.13 (patches/lr_scheduler.py).

Reference recorded with ``.venv-ref/bin/python``: tests/fixtures/lr_scheduler_reference.json (from
tests/fixtures/lr_scheduler_cases.py: 27 scheduler set-ups, 15 steps each, lr/momentum/betas/get_last_lr, a
state_dict resume, warnings).
"""
import json
import os

from tests.run_json import ROOT, run

FIXTURES = os.path.join(ROOT, "tests", "fixtures")


def _reference(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return json.load(f)


def test_every_scheduler_gives_pytorchs_values_state_dicts_and_warnings():
    """MindTorch's schedulers raised at step() (CosineAnnealingWarmRestarts, SequentialLR, ReduceLROnPlateau,
    CyclicLR: ``Failed calling Assign``), were missing (ChainedScheduler), refused ``cycle_momentum`` (CyclicLR),
    drifted (CosineAnnealingLR's float32 recurrence: 2.3e-6 after 14 steps) and saved MindSpore attributes. The
    values are PyTorch's Python floats, bit for bit."""
    ref = _reference("lr_scheduler_reference.json")
    got, stderr = run("--original", os.path.join(FIXTURES, "lr_scheduler_cases.py"))
    failures = []
    order, expected_order = got.pop("_step_order_warnings"), ref.pop("_step_order_warnings")
    if order != expected_order:
        failures.append(f"step order warnings: {order} != {expected_order}")
    for name, expected in ref.items():
        case = got[name]
        if "error" in case:
            failures.append(f"{name}: {case['error']}")
            continue
        for key in ("rows", "resumed", "state_keys", "state", "warnings"):
            if case[key] != expected[key]:  # exact: the same Python float arithmetic
                first = next((i for i, (a, b) in enumerate(zip(case[key], expected[key])) if a != b), None) \
                    if isinstance(expected[key], list) else None
                failures.append(f"{name} {key}" + (f" [{first}]: {case[key][first]} != {expected[key][first]}"
                                                   if first is not None else f": {case[key]} != {expected[key]}"))
    assert not failures, "\n".join(failures)
    # no warning of ours besides PyTorch's (which the fixture records itself)
    assert "Warning" not in stderr and "WARN" not in stderr, stderr[-2000:]
