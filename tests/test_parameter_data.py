"""``Parameter.data`` as PyTorch's (patches/parameter_data.py): no gradient through an expression built from it, in-place
writes into it reach the parameter, ``p.data = t`` keeps the parameter trained by its optimizer, an alias of it taken
before ``optimizer.step()`` shows the update, WGAN clipping; eager (``--mode pynative``) and compiled (``--mode auto``: the L2 site
that reads ``w = mb.weight.data`` in its region compiles, fused). Values against real PyTorch 2.13 CPU
(tests/fixtures/parameter_data_reference.json: ``.venv-ref/bin/python tests/fixtures/parameter_data.py``,
2026-11-26). Without the patch (``ADAPTER_DISABLE_PATCHES=parameter_data``) the L2 loop's gradients, losses and
weights differ (MindTorch's ``Parameter.data`` was the parameter, on the tape)."""
import os

import numpy as np
import pytest

from support import ROOT, load_reference, run_json

SCRIPT = os.path.join(ROOT, "tests", "fixtures", "parameter_data.py")


def _reference():
    return load_reference("parameter_data_reference.json")


@pytest.mark.parametrize("mode", ["auto", "pynative"])
def test_parameter_data_matches_pytorch(mode, tmp_path):
    reference = _reference()
    got, err = run_json("--mode", mode, "--explain", "--original", SCRIPT, cache_dir=tmp_path)
    for key, want in reference.items():
        np.testing.assert_allclose(np.asarray(got[key], dtype=float), np.asarray(want, dtype=float),
                                   rtol=1e-5, atol=1e-6, err_msg=f"--mode {mode}: {key}")
    if mode == "auto":  # the region reading `w = mb.weight.data` compiles (it fell back before: set attribute)
        for line in (59, 108):  # L2 on w = mb.weight.data; WGAN's norm of D.weight.data
            assert f"parameter_data.py:{line}: backward() of loss — compiled (graph mode, fused" in err, err[-3000:]
