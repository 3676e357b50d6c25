"""``nn.DataParallel`` (patches/data_parallel.py): MindTorch 0.4.0 raised NotImplementedError (``nn.parallel``) or
AttributeError (``nn.DataParallel``) at the wrapping line. Checked against real PyTorch 2.13 CPU on the same script
(tests/fixtures/data_parallel_reference.json, recorded with ``.venv-ref/bin/python
tests/fixtures/data_parallel_script.py``)."""
import os

import pytest

from support import FIXTURES, load_reference, run_json


def test_wrapped_model_trains_and_saves_as_pytorch():
    ref = load_reference("data_parallel_reference.json")
    got, _ = run_json("--original", os.path.join(FIXTURES, "data_parallel_script.py"))
    assert got["losses"] == pytest.approx(ref["losses"], rel=1e-5)
    assert got["eval_out"] == pytest.approx(ref["eval_out"], rel=1e-5)
    assert got["running_mean"] == pytest.approx(ref["running_mean"], rel=1e-5, abs=1e-6)
    for key in ("keys", "module_is_net", "device_ids", "functional_on_cpu"):
        assert got[key] == ref[key], key


def test_several_device_ids_warn_at_the_users_line(monkeypatch):
    """PyTorch replicates over device_ids in one process; here the module runs once on the first device, and the
    user is told so (it is not silent)."""
    import torch
    from patches import device
    monkeypatch.setattr(device, "is_available", lambda: True)
    with pytest.warns(UserWarning, match=r"nn.DataParallel at .*test_data_parallel.py:\d+: device_ids=\[0, 1\] runs "
                                         r"the module on one device \(cuda:0\)"):
        model = torch.nn.DataParallel(torch.nn.Linear(2, 1), device_ids=[0, torch.device("cuda", 1)])
    assert model.device_ids == [0, 1] and model.output_device == 0
    x = torch.ones(3, 2)
    assert model(x).tolist() == model.module(x).tolist()
