"""A lambda over a local alias of an ``nn.ModuleDict`` (``m = self.mlp; self.mlpf = lambda x: m.fc2(m.act(m.fc1(x)))``,
minGPT's ``Block``, karpathy/makemore ``--type transformer``) compiles, with real PyTorch 2.13's losses
(tests/fixtures/closure_module_dict.py, reference tests/fixtures/closure_module_dict.json).

Before: ModuleDicts reach the graph as dictionaries and only ``self.<chain>.<key>`` reads were rewritten
(adapter/graph_syntax.py), so ``m.fc2`` failed ("In JIT strict mode, cannot get attributes fc2 or the Dictionary[...]
object has no attribute 'fc2'") and the step ran eagerly for good. Now a lambda's closure names holding a module are
roots of such reads too. And ``h + self.mlpf(h)`` (the argument read again) went through the in-place pick helper,
which read ``_adapter_input_write`` of the lambda ("the Func object has no attribute"): eager again; a function
attribute now writes nothing there."""
import json
import os

import numpy as np
import pytest

from support import ROOT, load_reference, run_py

SCRIPT = os.path.join(ROOT, "tests", "fixtures", "closure_module_dict.py")
# also on CI's second MindSpore (pytest.ini: stack): graph mode
pytestmark = pytest.mark.stack

REFERENCE = load_reference("closure_module_dict.json", "losses")


def test_lambda_over_module_dict_compiles_with_pytorch_losses(tmp_path):
    explain = tmp_path / "explain.json"
    proc = run_py("--explain-json", explain, "--original", os.path.relpath(SCRIPT, ROOT), cache_dir=tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])["losses"]
    np.testing.assert_allclose(got, REFERENCE, rtol=2e-6)  # float32 rounding: 6.6e-7 seen
    steps = [s for s in json.loads(explain.read_text())["steps"] if s["calls"]]
    assert len(steps) == 1 and steps[0]["state"] == "compiled" and steps[0]["calls"] == 5, steps
