"""SGD and Adam on float64 parameters (patches/sgd.py, patches/adam.py, the float64 lr of patches/optimizer.py)
against real PyTorch on the same problem, same initial weights: tests/fixtures/optim_float64_cases.py, reference in
tests/fixtures/optim_float64_reference.json. MindSpore's SGD and Adam operators take float16/float32 only
(``optimizer.step()`` raised TypeError); its lrs were float32 (0.1 -> 0.10000000149) and its schedulers multiplied
them by float32 scalars. Float64 cases agree to rounding (measured 4e-16), eagerly and in the compiled step;
``amsgrad`` (ignored by MindSpore's Adam) agrees to float32 rounding on a float32 model."""
import json
import os
import sys

import numpy as np
import pytest

from support import FIXTURES, json_from_brace, load_reference, run_py

# also on CI's second MindSpore (pytest.ini: stack): optimizers: MindSpore's fused optimizer kernels and Parameter updates
pytestmark = pytest.mark.stack

sys.path.insert(0, FIXTURES)
REFERENCE = load_reference("optim_float64_reference.json", "cases")


def _check(ours, ref, case):
    assert ours["dtype"] == ref["dtype"]
    # float32 values (the float32 model, the mixed cases' float32 parameter) to float32 rounding
    tol = 1e-5 if "float32" in case or "mixed" in case else 1e-13
    np.testing.assert_allclose(ours["losses"], ref["losses"], rtol=tol, err_msg=case)
    np.testing.assert_allclose(ours["weights"], ref["weights"], rtol=0, atol=tol, err_msg=case)
    assert ours["lrs"] == ref["lrs"], case  # the lr PyTorch reads back: the Python float, exactly


@pytest.mark.parametrize("case", sorted(REFERENCE))
def test_optimizer_on_float64_equals_pytorch_on_the_eager_bridge(case):
    import torch
    import optim_float64_cases
    _check(optim_float64_cases.run(torch, case), REFERENCE[case], case)


@pytest.mark.parametrize("case", ["sgd_dampening_wd", "adam_wd_amsgrad"])
def test_optimizer_on_float64_in_the_compiled_step_equals_pytorch(case):
    """Through run.py the step is compiled and fused with optimizer.step() (one case per process: a second model
    built at the same site falls back to eager, see the case file)."""
    proc = run_py("--explain", "--original", os.path.join(FIXTURES, "optim_float64_cases.py"), case)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "backward() of loss — compiled (graph mode, fused with optimizer.step()" in proc.stderr, proc.stderr[-3000:]
    ours = json_from_brace(proc.stdout)["cases"][case]
    _check(ours, REFERENCE[case], case)


def test_float64_group_lr_reads_and_saves_as_the_python_float():
    import torch
    model = torch.nn.Linear(2, 1).double()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.state_dict()["param_groups"][0]["lr"] == 0.1
    opt.param_groups[0]["lr"] = 0.3
    assert opt.param_groups[0]["lr"] == 0.3 and opt.state_dict()["param_groups"][0]["lr"] == 0.3
    f32 = torch.optim.Adam(torch.nn.Linear(2, 1).parameters(), lr=0.1)  # float32 groups keep float32 lrs
    assert f32.param_groups[0]["lr"] == 0.1 and str(dict.get(f32.param_groups[0], "lr").dtype) == "Float32"
