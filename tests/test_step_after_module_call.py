"""``optimizer.step()`` after a module was called in grad mode since ``backward()`` (a forward the step rewrite moved
after the site call, or the script's own), against real PyTorch 2.13 values
(tests/fixtures/step_after_module_call_reference.json, recorded with ``.venv-ref``).

The module call opens an eager-bridge recording (``adapter/tape.py``), open when ``step()`` runs. Before the fix (main
at 380a363) the optimizer's ``@jit`` update ran inside it, recorded as a ``grad_jit`` call; a run that loaded that
update's graph from the compile cache (the second run of the script) then failed at ``step()``: "Can not find
graph_phase_: patches.sgd.implementation... in jit_compile_info_". PyTorch runs the update under ``no_grad``
(``torch/optim/optimizer.py``, ``_use_grad_for_differentiable``); so does ``patches/optimizer.py`` now."""
import os

import numpy as np
import pytest

from support import FIXTURES, load_reference, run_json

SCRIPT = os.path.join(FIXTURES, "step_after_module_call.py")


@pytest.fixture(scope="module")
def reference():
    return load_reference("step_after_module_call_reference.json")


@pytest.mark.parametrize("case,opt", [("moved", "sgd"), ("between", "sgd"), ("moved", "adam")])
def test_step_after_a_module_call(reference, tmp_path, case, opt):
    for run in ("compiling", "cached"):  # the second run loads the update's graph from the compile cache
        got, _ = run_json("--original", SCRIPT, case, opt, cache_dir=tmp_path)
        for key, expected in reference.items():
            if key.startswith(f"{case}_{opt}_"):
                np.testing.assert_allclose(got[key], expected, rtol=1e-4, atol=1e-6, err_msg=f"{run} run: {key}")
