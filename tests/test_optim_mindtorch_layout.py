"""``state_dict()`` / ``load_state_dict()`` of the optimizers that keep MindTorch's layout (RMSprop, Adagrad, Adadelta,
Adamax, NAdam, RAdam, ASGD, Rprop; patches/optim_state.py gives Adam/AdamW/SGD PyTorch's), against real PyTorch 2.13
values (tests/fixtures/optim_mindtorch_layout_cases.py, its reference JSON).

MindTorch's layout: ``{'state': {}, 'param_groups': [...], <MindSpore slot>: [one tensor per parameter] or a global
tensor}``, slot names mapped to PyTorch's by the optimizer's ``_state_map``. On MindSpore 2.10 its ``state_dict()``
raised "iteration over a 0-d tensor" and its ``load_state_dict()`` wrote row views, not the slots
(adapter/backend_compat.py shim 14). Checked: after 2 steps each per-parameter slot equals PyTorch's state tensor of
the mapped name (float32 rounding), and an optimizer loaded from that ``state_dict()`` (fresh model holding the
trained weights) takes PyTorch's 3rd step."""
import importlib.util
import json
import os

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REF = json.load(open(os.path.join(HERE, "fixtures", "optim_mindtorch_layout_reference.json")))["cases"]
_spec = importlib.util.spec_from_file_location(
    "optim_mindtorch_layout_cases", os.path.join(HERE, "fixtures", "optim_mindtorch_layout_cases.py"))
CASES = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(CASES)


def _np(t):
    return np.asarray(t.asnumpy() if hasattr(t, "asnumpy") else t.detach().numpy(), np.float64).reshape(-1)


# MindTorch's Rprop._state_map lacks MindSpore's ``step_t``: state_dict() does not save the step count, so a loaded
# Rprop takes its next step as a first one (step_size re-initialised to lr): a resumed Rprop diverges from PyTorch's
# (0.0024 on a weight here, both MindSpore versions). Its slots do equal PyTorch's.
_KNOWN = {"Rprop": "MindTorch's Rprop state_dict() omits step_t: a loaded Rprop restarts its step sizes"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=_KNOWN[n], strict=True))
                                  if n in _KNOWN else n for n in sorted(CASES.CASES)])
def test_state_dict_slots_equal_pytorchs_state_and_a_loaded_optimizer_steps_as_pytorch(name):
    import torch
    ref = REF[name]
    model, opt = CASES.build(torch, name)
    CASES.step(torch, model, opt)
    CASES.step(torch, model, opt)
    sd = opt.state_dict()
    n = len(list(model.parameters()))
    compared = 0
    from adapter import backend
    for attr, pt_name in backend.optimizer_state_map(opt).items():
        value = sd[attr]
        if not isinstance(value, list):
            continue  # a global slot (step_t): MindSpore counts steps once, PyTorch per parameter
        assert len(value) == n, (attr, len(value))
        for i in range(n):
            want = ref["state"][str(i)].get(pt_name)
            if want is None:
                continue  # PyTorch keeps no such state here (RMSprop without momentum/centered)
            np.testing.assert_allclose(_np(value[i]), want, rtol=2e-5, atol=1e-7, err_msg=f"{attr}[{i}]")
            compared += 1
    assert compared >= n, f"no slot of {name} compared"

    trained = [p.detach().clone() for p in model.parameters()]
    model2, opt2 = CASES.build(torch, name)
    with torch.no_grad():
        for p, t in zip(model2.parameters(), trained):
            p.copy_(t)
    opt2.load_state_dict(sd)
    CASES.step(torch, model2, opt2)
    for p, want in zip(model2.parameters(), ref["params_after_3"]):
        np.testing.assert_allclose(_np(p), want, rtol=2e-5, atol=1e-6)
