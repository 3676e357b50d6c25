"""``torch.optim.Rprop`` initialises each parameter's step sizes at that parameter's first update (patches/rprop.py),
against real PyTorch 2.13 (tests/fixtures/rprop_cases.py, its reference JSON): a parameter whose ``.grad`` is None
at step 1, or one added by ``add_param_group`` after it, took step sizes of ``step_sizes[0]`` (1e-6) instead of
``lr`` (0.01) with MindSpore's global-step rule. Checked: every parameter after each of 4 steps."""
import importlib.util
import os

import numpy as np
import pytest

from support import load_reference

HERE = os.path.dirname(os.path.abspath(__file__))
REF = load_reference("rprop_reference.json", "cases")
_spec = importlib.util.spec_from_file_location("rprop_cases", os.path.join(HERE, "fixtures", "rprop_cases.py"))
CASES = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(CASES)


@pytest.mark.parametrize("name", sorted(CASES.CASES))
def test_a_parameter_first_updated_after_step_1_steps_as_pytorch(name):
    import torch
    got = CASES.run(torch, name)
    for step, (g, want) in enumerate(zip(got, REF[name])):
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7, err_msg=f"after step {step + 1}")


def test_add_param_group_after_steps_does_not_warn_for_rprop():
    """patches/optimizer.py warns that a group added after steps of a one-global-step optimizer differs from
    PyTorch; Rprop's update no longer reads its step count, so it matches (above) and is not warned."""
    import warnings

    import torch
    a, b = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    opt = torch.optim.Rprop(a.parameters(), lr=0.1)
    a(torch.ones(1, 3)).sum().backward()
    opt.step()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt.add_param_group({"params": b.parameters()})
    assert not [str(w.message) for w in caught if "add_param_group after" in str(w.message)]


def test_a_state_dict_without_the_step_count_resumes_as_pytorch():
    """A MindTorch-layout Rprop state dict saved without ``step_t`` (before patches/optim_state_map.py) still
    resumes with PyTorch's 3rd step: the loaded step sizes are not re-initialised (the case of
    tests/test_optim_mindtorch_layout.py)."""
    import torch
    spec = importlib.util.spec_from_file_location(
        "optim_mindtorch_layout_cases", os.path.join(HERE, "fixtures", "optim_mindtorch_layout_cases.py"))
    layout = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layout)
    ref = load_reference("optim_mindtorch_layout_reference.json", "cases")["Rprop"]
    model, opt = layout.build(torch, "Rprop")
    layout.step(torch, model, opt)
    layout.step(torch, model, opt)
    sd = opt.state_dict()
    sd.pop("step_t", None)
    model2, opt2 = layout.build(torch, "Rprop")
    with torch.no_grad():
        for p, q in zip(model2.parameters(), model.parameters()):
            p.copy_(q.detach())
    opt2.load_state_dict(sd)
    layout.step(torch, model2, opt2)
    for p, want in zip(model2.parameters(), ref["params_after_3"]):
        np.testing.assert_allclose(p.detach().numpy().reshape(-1), want, rtol=2e-5, atol=1e-6)
