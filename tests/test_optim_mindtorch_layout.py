"""``state_dict()`` / ``load_state_dict()`` of the optimizers that keep MindTorch's layout (RMSprop, Adagrad, Adadelta,
Adamax, NAdam, RAdam, ASGD, Rprop; patches/optim_state.py gives Adam/AdamW/SGD PyTorch's), against real PyTorch 2.13
values (tests/fixtures/optim_mindtorch_layout_cases.py, its reference JSON).

MindTorch's layout: ``{'state': {}, 'param_groups': [...], <MindSpore slot>: [one tensor per parameter] or a global
tensor}``, slot names mapped to PyTorch's by the optimizer's ``_state_map``. On MindSpore 2.10 its ``state_dict()``
raised "iteration over a 0-d tensor" and its ``load_state_dict()`` wrote row views, not the slots
(adapter/backend_compat.py shim 14). Checked: after 2 steps each per-parameter slot equals PyTorch's state tensor of
the mapped name (float32 rounding), and an optimizer loaded from that ``state_dict()`` (fresh model holding the
trained weights) takes PyTorch's 3rd step; so does one loaded from real PyTorch's state dict; and every MindSpore state
attribute of the optimizer is in the map its ``state_dict()`` saves (Rprop's ``step_t`` was not:
patches/optim_state_map.py)."""
import importlib.util
import os

import numpy as np
import pytest

from support import load_reference

# also on CI's second MindSpore (pytest.ini: stack): optimizers: MindSpore's fused optimizer kernels and Parameter updates
pytestmark = pytest.mark.stack

HERE = os.path.dirname(os.path.abspath(__file__))
REF = load_reference("optim_mindtorch_layout_reference.json", "cases")
_spec = importlib.util.spec_from_file_location(
    "optim_mindtorch_layout_cases", os.path.join(HERE, "fixtures", "optim_mindtorch_layout_cases.py"))
CASES = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(CASES)


def _np(t):
    return np.asarray(t.asnumpy() if hasattr(t, "asnumpy") else t.detach().numpy(), np.float64).reshape(-1)


# MindTorch's Rprop._state_map lacked MindSpore's ``step_t``: a loaded Rprop took its next step as a first one (step
# sizes re-initialised to lr, 0.0024 off on a weight here, both MindSpore versions); patches/optim_state_map.py adds it.
@pytest.mark.parametrize("name", sorted(CASES.CASES))
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


def _state_slots(opt):
    """The MindSpore state attributes of a MindTorch optimizer: its ParameterTuples, lists of Parameters and own
    Parameters, less the model's parameters and the lrs."""
    import mindspore
    from adapter import backend
    model_params = list(backend.optimizer_params_list(opt)["parameters"]) + list(opt.lrs)
    slots = set(backend.optimizer_params_list(opt)) - {"parameters", "lrs"}
    for key, value in vars(opt).items():
        if isinstance(value, list) and value and all(isinstance(v, mindspore.Parameter) for v in value):
            slots.add(key)
    for key, p in backend.cell_params(opt).items():
        if not any(p is q for q in model_params) and getattr(opt, key, None) is p and "." not in key:
            slots.add(key)
    return slots


@pytest.mark.parametrize("name", sorted(CASES.CASES))
def test_every_state_slot_is_saved(name):
    """Each MindSpore state attribute the update reads (``mindspore/experimental/optim/<name>.py``) is in the map
    that state_dict()/load_state_dict() use: Rprop's ``step_t`` was not (patches/optim_state_map.py)."""
    import torch
    from adapter import backend
    _, opt = CASES.build(torch, name)
    slots = _state_slots(opt)
    assert slots, name
    assert slots <= set(backend.optimizer_state_map(opt)), slots - set(backend.optimizer_state_map(opt))
    assert set(opt.state_dict()) >= slots


@pytest.mark.parametrize("name", sorted(CASES.CASES))
def test_loading_pytorchs_state_dict_steps_as_pytorch(name):
    """A state dict in PyTorch's layout (real PyTorch's state after 2 steps, from the fixture, into a model holding
    PyTorch's weights then) loads, and the 3rd step is PyTorch's."""
    import torch
    ref = REF[name]
    model, opt = CASES.build(torch, name)
    params = list(model.parameters())
    with torch.no_grad():
        for p, want in zip(params, ref["params_after_2"]):
            p.copy_(torch.tensor(np.asarray(want, np.float32).reshape(tuple(p.shape))))
    state = {}
    for i, entry in ref["state"].items():
        shape = tuple(params[int(i)].shape)
        state[int(i)] = {k: torch.tensor(np.asarray(v, np.float32).reshape(shape if len(v) == params[int(i)].numel()
                                                                            else ()))
                         if isinstance(v, list) else torch.tensor(float(v)) for k, v in entry.items()}
    opt.load_state_dict({"state": state, "param_groups": opt.state_dict()["param_groups"]})
    CASES.step(torch, model, opt)
    for p, want in zip(model.parameters(), ref["params_after_3"]):
        np.testing.assert_allclose(_np(p), want, rtol=2e-5, atol=1e-6)
