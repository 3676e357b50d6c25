"""A batch cut inside the training step at tensor offsets (``torch.stack([data[i:i + T] for i in ix])`` in a helper
called on the line before the forward, karpathy/ng-video-lecture bigram.py/gpt.py's ``get_batch``) compiles, with
real PyTorch 2.13's losses (tests/fixtures/batch_in_step.py, reference tests/fixtures/batch_in_step.json).

Before: the slices' first dimension is unknown in the graph (``None``), and ``F.cross_entropy``'s lean-form plan
(adapter/graph_lean.py ``_cross_entropy_plan_python``) compared it with 0: ``TypeError: '>' not supported between
instances of 'NoneType' and 'int'``, so the step ran eagerly for good (fallback kind ``compile-error``). Now an
unknown dimension takes MindTorch's own ``cross_entropy``."""
import json
import os

import numpy as np
import pytest

from support import ROOT, load_reference, run_py

SCRIPT = os.path.join(ROOT, "tests", "fixtures", "batch_in_step.py")
# also on CI's second MindSpore (pytest.ini: stack): graph mode
pytestmark = pytest.mark.stack

REFERENCE = load_reference("batch_in_step.json", "losses")


def test_batch_cut_in_step_compiles_with_pytorch_losses(tmp_path):
    explain = tmp_path / "explain.json"
    proc = run_py("--explain-json", explain, "--original", os.path.relpath(SCRIPT, ROOT), cache_dir=tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])["losses"]
    np.testing.assert_allclose(got, REFERENCE, rtol=2e-6)  # float32 rounding over 6 AdamW steps: 5.5e-7 seen
    steps = [s for s in json.loads(explain.read_text())["steps"] if s["calls"]]
    assert len(steps) == 1 and steps[0]["state"] == "compiled" and steps[0]["calls"] == 6, steps
