"""A script's second run, with the compile cache its first run wrote, for a compiled step that is not fused (the
script's own `optimizer.step()` runs eagerly, a `jit` graph of its own). The cache check of the step's loaded graph
(adapter/step_cache_check.py, verify_loaded) wrote the starting state into the parameters with
`Parameter.set_data`, which gives them new storage: the optimizer's update graph, compiled before, kept writing the
old one, and from that step on the run trained nothing (the same loss at every step), silently. `_write` now assigns in place. Values against real PyTorch 2.13.0 CPU
(tests/fixtures/cache_rerun_update_reference.json: ``.venv-ref/bin/python tests/fixtures/cache_rerun_update.py``,
2026-11-26)."""
import os

import numpy as np

from support import FIXTURES, load_reference, run_json


def test_second_run_with_the_cache_trains_as_pytorch(tmp_path):
    reference = load_reference("cache_rerun_update_reference.json")
    for run in ("compiling", "cached"):
        got, err = run_json("--original", os.path.join(FIXTURES, "cache_rerun_update.py"), cache_dir=tmp_path)
        for key in ("losses", "grads", "weights"):
            np.testing.assert_allclose(got[key], reference[key], rtol=1e-5, atol=1e-6, err_msg=f"{run} run: {key}")
