"""``Module.children()`` in a compiled forward (adapter/graph_semantics.py ``_graph_children``): MindTorch's
``children`` is a generator function, which graph mode rejects ("Unsupported expression 'Yield'"), so timm's
regnety_002 (``RegStage.forward``: ``for block in self.children()``) ran its step eagerly. Now the loop runs over the
tuple of submodules and the step compiles, with PyTorch's losses (tests/fixtures/module_children.py). Without the
``children`` swap the step line says eager (Yield) and the compiled assertion fails."""
import pytest

from support import last_json, run_py

pytestmark = pytest.mark.stack

# PyTorch 2.13 (.venv-ref/bin/python tests/fixtures/module_children.py), 2026-12-06
REFERENCE = {"losses": [1.0254673957824707, 1.7365763187408447, 0.6653594970703125, 0.20869337022304535],
             "children": ["Linear", "Tanh", "Linear"]}


def test_children_loop_compiles_with_pytorchs_losses(tmp_path):
    proc = run_py("--explain", "--original", "tests/fixtures/module_children.py", cache_dir=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = last_json(proc.stdout)
    assert got["children"] == REFERENCE["children"]
    assert got["losses"] == pytest.approx(REFERENCE["losses"], rel=2e-6)
    assert "module_children.py:31: backward() of loss — compiled (graph mode" in proc.stderr, proc.stderr[-3000:]
