"""Truncated BPTT (pytorch/examples word_language_model's loop, tests/fixtures/bptt_lm.py) compiles, with PyTorch
2.13's losses (tests/fixtures/bptt_lm.json).

Before: the forward sat in ``if args.model == 'Transformer': ... else:``, which no region took in, so the model call
opened the eager bridge's recording before the step and the site ran eagerly for good ("loss-built-before-step",
word_language_model/main.py:186). Now each branch of such an ``if`` is its own site (adapter/step_rewrite.py,
"Branches"), and the ``hidden`` carried from the previous step, detached by ``repackage_hidden`` inside the region, is
an ordinary graph input, not a tensor whose producing forward the graph recomputes (adapter/provenance.py)."""
import json
import os

import numpy as np

from support import ROOT, load_reference, run_py

SCRIPT = os.path.join(ROOT, "tests", "fixtures", "bptt_lm.py")
REFERENCE = load_reference("bptt_lm.json", "losses")


def test_bptt_step_compiles_with_pytorch_losses(tmp_path):
    explain = tmp_path / "explain.json"
    proc = run_py("--explain-json", explain, "--original", os.path.relpath(SCRIPT, ROOT),
                  cache_dir=tmp_path / "cache", env={"ADAPTER_DEBUG": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])["losses"]
    for case, losses in REFERENCE.items():
        # float32 rounding over 6 steps at lr 2 (first losses from the same weights)
        np.testing.assert_allclose(got[case], losses, rtol=2e-5, err_msg=case)
    steps = {s["where"]: s for s in json.loads(explain.read_text())["steps"] if s["calls"]}
    assert len(steps) == 2 and all(s["state"] == "compiled" for s in steps.values()), steps
    assert sorted(s["calls"] for s in steps.values()) == [6, 24], steps  # 4 runs of 6 steps, and the flat loop's
    # the previous step's forward is not recomputed in the graph: it ran with the weights from before their update
    # (p.data.add_) and gave another `hidden` (GRU_flat's losses off by up to 4.6e-3 from the 2nd step on, before)
    assert "inputs are recomputed in the graph" not in proc.stderr, proc.stderr[-3000:]
