"""``torch.optim.lr_scheduler`` against real PyTorch 2.13 (patches/lr_scheduler.py), and the scheduled values
reaching the optimizer's update, eager and compiled (adapter/compiled_step.py).

References recorded with ``.venv-ref/bin/python``: tests/fixtures/lr_scheduler_reference.json (from
tests/fixtures/lr_scheduler_cases.py: 27 scheduler set-ups, 15 steps each, lr/momentum/betas/get_last_lr, a
state_dict resume, warnings) and tests/fixtures/lr_scheduler_train_reference.json (from
tests/fixtures/lr_scheduler_train.py: the weights after each of 6 training steps).
"""
import os

import numpy as np
import pytest

from support import FIXTURES, load_reference, run_json


def _reference(name):
    return load_reference(name)


def test_every_scheduler_gives_pytorchs_values_state_dicts_and_warnings():
    """MindTorch's schedulers raised at step() (CosineAnnealingWarmRestarts, SequentialLR, ReduceLROnPlateau,
    CyclicLR: ``Failed calling Assign``), were missing (ChainedScheduler), refused ``cycle_momentum`` (CyclicLR),
    drifted (CosineAnnealingLR's float32 recurrence: 2.3e-6 after 14 steps) and saved MindSpore attributes. The
    values are PyTorch's Python floats, bit for bit."""
    ref = _reference("lr_scheduler_reference.json")
    got, stderr = run_json("--original", os.path.join(FIXTURES, "lr_scheduler_cases.py"))
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


def _weights_match(got, ref):
    for case, expected in ref.items():
        assert got[case]["lr"] == expected["lr"], case
        np.testing.assert_allclose(np.array(got[case]["weights"]), np.array(expected["weights"]), rtol=2e-6,
                                   atol=1e-6, err_msg=case)  # float32 rounding (Adam: 3e-7); wrong values: > 1e-2


def test_scheduled_lr_and_momentum_reach_the_compiled_update():
    """Default mode: each case's model runs one eager reference step, then the fused compiled step. The lr is a
    Parameter the graph reads (it changes every step without recompiling); momentum/betas are graph constants, so a
    site whose optimizer's momentum changes (OneCycleLR's cycle_momentum) stops compiling, with a message, instead
    of updating with a stale momentum (3.5e-2 relative weight error after 6 steps). Several models at the same
    site (one per case): each gets a reference step of its own (the compiled graph differentiated the first
    model's parameters: the second model's weights were off by 0.1-1.2 relative)."""
    ref = _reference("lr_scheduler_train_reference.json")
    got, stderr = run_json("--explain", "--original", os.path.join(FIXTURES, "lr_scheduler_train.py"))
    _weights_match(got, ref)
    assert "optimizer hyper-parameter(s) momentum changed between steps" in stderr
    assert "fused with optimizer.step()" not in stderr.split("run.py --explain:")[-1]  # eager from OneCycleLR on
    # the cases before OneCycleLR ran compiled and fused
    assert "compiled the step at" in stderr and "(forward+backward+optimizer)" in stderr


@pytest.mark.slow  # ~1 min: every OneCycleLR step recompiles the optimizer's update for its new momentum
def test_scheduled_values_reach_the_eager_update():
    ref = _reference("lr_scheduler_train_reference.json")
    got, _ = run_json("--mode", "pynative", "--original", os.path.join(FIXTURES, "lr_scheduler_train.py"))
    _weights_match(got, ref)


def test_warmup_cosine_is_compiled_and_exact_without_recompiling():
    """SequentialLR(LinearLR warmup, CosineAnnealingLR), the common recipe, alone at its site: compiled and fused
    from step 2 on, one graph for all steps (the lr changes every step as a graph input)."""
    ref = _reference("lr_scheduler_train_reference.json")
    case = "SequentialLR-warmup-cosine"
    got, stderr = run_json("--explain", "--original", os.path.join(FIXTURES, "lr_scheduler_train.py"), case)
    _weights_match(got, {case: ref[case]})
    explain = stderr.split("run.py --explain:")[-1]
    assert "fused with optimizer.step()" in explain and "1 graph(s)" in explain, explain


def test_full_states_closed_forms_resumes_callables_errors_and_warnings_are_pytorchs():
    """Where an own implementation could part from PyTorch's (tests/fixtures/lr_scheduler_more_cases.py, recorded
    with PyTorch 2.13): every scheduler's whole state_dict, the closed forms of ``step(epoch)``, schedulers made
    with ``last_epoch >= 0``, callable objects' state, each argument check's message, the warnings. In-process."""
    import sys
    import warnings
    import torch
    sys.path.insert(0, FIXTURES)
    import lr_scheduler_more_cases
    ref = _reference("lr_scheduler_more_reference.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the step-order / epoch warnings of the set-ups (recorded ones are caught)
        got = lr_scheduler_more_cases.run(torch)
    failures = []
    for part, cases in got.items():
        for name, value in cases.items():
            if value != ref[part][name]:
                failures.append(f"{part} {name}: {value} != PyTorch's {ref[part][name]}")
    assert not failures and set(got) == set(ref) - {"source"}, "\n".join(failures)
