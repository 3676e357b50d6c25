"""One optimizer over parameters whose MindSpore names collide (two bare ``nn.Linear``: both ``weight``, ``bias``):
``add_param_group``, one list of both models' parameters, a list of group dicts; SGD (momentum), Adam, AdamW,
RMSprop. MindSpore refused them ("its name 'weight' already exists. Please set a unique name for the parameter"),
and a group added to a built optimizer had no state slots ("The tuples in HyperMap should have the same length"
at the first ``step()``). Against real PyTorch on the same problem and weights (tests/fixtures/
optim_same_names_cases.py, reference tests/fixtures/optim_same_names_reference.json): losses, final weights, state
values to float32 rounding; lrs per group, the optimizer ``state_dict()``'s param indices (0..n-1 across groups) and
state keys, the models' ``state_dict()`` keys and ``named_parameters()`` exactly. Eagerly (``--mode pynative``) and
in the compiled step fused with ``optimizer.step()`` (run.py's default)."""
import os

import numpy as np
import pytest

from support import FIXTURES, json_from_brace, load_reference, run_script

# also on CI's second MindSpore (pytest.ini: stack): optimizers: MindSpore's fused optimizer kernels and Parameter updates
pytestmark = pytest.mark.stack

CASES_PY = os.path.join(FIXTURES, "optim_same_names_cases.py")
REFERENCE = load_reference("optim_same_names_reference.json", "cases")
TOL = 2e-6  # float32 rounding over 4 steps (SGD/Adam/AdamW measured <= 1.8e-7)
# RMSprop's weights differ by up to 9e-6 here, and by 3.2e-6 in the one-group case (RMSprop_concat) too: MindSpore's
# RMSprop update, not the names or the groups (not investigated here)
RMSPROP_WEIGHTS_TOL = 2e-5


def _check(ours, ref, case):
    np.testing.assert_allclose(ours["losses"], ref["losses"], rtol=TOL, atol=TOL, err_msg=case)
    tol = RMSPROP_WEIGHTS_TOL if case.startswith("RMSprop") else TOL
    np.testing.assert_allclose(ours["weights"], ref["weights"], rtol=0, atol=tol, err_msg=case)
    assert ours["lrs"] == ref["lrs"], case
    assert ours["group_params"] == ref["group_params"], case
    assert ours["module_keys"] == ref["module_keys"] and ours["named_parameters"] == ref["named_parameters"], case
    if "values" not in ref["state"]["0"]:  # RMSprop: MindTorch's own state layout (patches/optim_state.py)
        return
    assert {i: s["keys"] for i, s in ours["state"].items()} == {i: s["keys"] for i, s in ref["state"].items()}, case
    for i, s in ref["state"].items():
        for key, value in s["values"].items():
            np.testing.assert_allclose(ours["state"][i]["values"][key], value, rtol=0, atol=TOL, err_msg=f"{case} {i} {key}")


def _cases(ran):
    return json_from_brace(ran.stdout)["cases"]


@pytest.mark.parametrize("opt", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_same_named_parameters_in_one_optimizer_train_as_pytorch_eagerly(opt):
    """An optimizer's cases in one process: each builds its own two Linears (the names collide across cases too)."""
    cases = [c for c in sorted(REFERENCE) if c.startswith(opt + "_")]
    ours = _cases(run_script(CASES_PY, *cases, options=("--explain", "--mode", "pynative", "--original")))
    for case in cases:
        _check(ours[case], REFERENCE[case], case)


@pytest.mark.parametrize("case", ["SGD_add_group", "Adam_dicts", "AdamW_concat"])
def test_same_named_parameters_in_the_compiled_fused_step(case):
    proc = run_script(CASES_PY, case, options=("--explain", "--mode", "auto", "--original"))
    ours = _cases(proc)
    assert "compiled (graph mode, fused with optimizer.step()" in proc.stderr, proc.stderr[-3000:]
    _check(ours[case], REFERENCE[case], case)


@pytest.mark.parametrize("case", ["SGD_unfreeze_add", "RMSprop_unfreeze_add", "SGD_unfreeze", "RMSprop_unfreeze",
                                  "SGD_add_late", "RMSprop_add_late"])
def test_parameters_unfrozen_or_added_between_compiled_steps_train_as_pytorch_and_stay_compiled(case):
    """``b.requires_grad_(True)`` after 2 compiled steps (and ``add_param_group``): the step differentiates ``b``
    from then on, as PyTorch's does (it stayed untrained, silently: a new binding now, adapter/compiled_step.py
    ``_binding_key``). ``b`` trained from the start and added after 2 steps (``add_late``): its accumulated
    ``.grad`` as PyTorch's. In all of them the step stays compiled and fused: the steps before, compiled without
    the optimizer (a parameter had no gradient), ran the optimizer's ``@jit implementation`` eagerly, which left
    ``__parse_method__ = 'implementation'`` on the optimizer, and the next fused graph failed to compile ("The
    parameters number of the function is 8, but the number of provided arguments is 1") and fell back to PyNative
    for the rest of the run (compiled_step.parse_as_construct)."""
    proc = run_script(CASES_PY, case, options=("--explain", "--mode", "auto", "--original"))
    ours = _cases(proc)
    assert "compiled (graph mode, fused with optimizer.step()" in proc.stderr, proc.stderr[-3000:]
    assert "eager (PyNative)" not in proc.stderr and "parameters number" not in proc.stderr, proc.stderr[-3000:]
    _check(ours[case], REFERENCE[case], case)


def test_add_param_group_keeps_names_and_warns_after_steps_with_a_global_step_count():
    """The new group's parameters get unique MindSpore names (``weight#k``) but their modules' keys are PyTorch's;
    NAdam's single step count makes a group added after steps differ from PyTorch: warned at the user's line (Adam and
    AdamW count per parameter, patches/adam_steps.py: tests/test_late_first_update.py ``*_add_group``)."""
    import warnings

    import torch
    a, b = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    opt = torch.optim.NAdam(a.parameters(), lr=0.1)
    a(torch.ones(1, 3)).sum().backward()
    opt.step()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt.add_param_group({"params": b.parameters()})
    assert [str(w.message) for w in caught if "add_param_group after 1 steps" in str(w.message)], \
        [str(w.message) for w in caught]
    assert [w.filename for w in caught if "add_param_group" in str(w.message)] == [__file__]
    assert list(b.state_dict()) == ["weight", "bias"] and [n for n, _ in b.named_parameters()] == ["weight", "bias"]
    assert len({p.name for g in opt.param_groups for p in g["params"]}) == 4
    assert [len(g["params"]) for g in opt.param_groups] == [2, 2] and opt.param_groups[1]["lr"] == 0.1
