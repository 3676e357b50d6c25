"""A CutMix / mixup step whose forward and loss are built in ``if``/``else`` branches picked by a host draw compiles,
one graph set per branch, with real PyTorch 2.13's losses (tests/fixtures/cutmix_branches.py, reference
tests/fixtures/cutmix_branches.json).

Before: a statement the loss needs (``x = x.float()``, CutMix's ``input = input.cuda()``) came before the draw the
``if`` tests (``r = np.random.rand(1)``); each branch's region started at it and would have moved the draw after the
test, so the branch if was not specialized (``adapter/step_rewrite.py`` ``_make_site_branching``), the ``if`` stayed
outside a region, and no site was found: the whole run was eager (docs/wild_triage.md, CutMix train.py). Now the
branches' regions start after the last statement that assigns what the test reads."""
import ast
import json
import os

import numpy as np
import pytest

from support import ROOT, load_reference, run_py

SCRIPT = os.path.join(ROOT, "tests", "fixtures", "cutmix_branches.py")
GRAD_SCRIPT = os.path.join(ROOT, "tests", "fixtures", "branch_draw_grad.py")
# also on CI's second MindSpore (pytest.ini: stack): graph mode
pytestmark = pytest.mark.stack

REFERENCE = load_reference("cutmix_branches.json")


def test_rewrite_gives_each_branch_a_site_after_the_draw():
    from adapter import step_rewrite
    with open(SCRIPT, encoding="utf-8") as f:
        tree, sites = step_rewrite.rewrite(f.read(), SCRIPT)
    assert len(sites) == 2, [s.lineno for s in sites]
    loop = next(n for n in ast.walk(tree) if isinstance(n, ast.For) and ast.unparse(n.iter) == "loader")
    text = [ast.unparse(s) for s in loop.body]
    draw = text.index("r = np.random.rand(1)")
    branch_if = next(i for i, s in enumerate(loop.body) if isinstance(s, ast.If))
    assert draw < branch_if  # the test's draw still runs before the test, once per step
    assert all("__adapter_step__" in ast.unparse(b) for b in (loop.body[branch_if].body, loop.body[branch_if].orelse))


def test_cutmix_branches_compile_with_pytorch_losses(tmp_path):
    explain = tmp_path / "explain.json"
    proc = run_py("--explain-json", explain, "--original", os.path.relpath(SCRIPT, ROOT), cache_dir=tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["branches"] == REFERENCE["branches"]  # the same draws, in the same order
    np.testing.assert_allclose(got["losses"], REFERENCE["losses"], rtol=0, atol=1e-5)  # 8e-7 seen
    assert got["hits"] == REFERENCE["hits"]
    steps = [s for s in json.loads(explain.read_text())["steps"] if s["calls"]]
    assert len(steps) == 2 and all(s["state"] == "compiled" for s in steps), steps
    assert sorted(s["calls"] for s in steps) == [4, 6], steps  # 4 CutMix steps, 6 plain ones


def test_elif_on_a_draw_keeps_a_parameters_gradient_computed_before_it(tmp_path):
    """``z = x * w`` (a Parameter, no module call) before ``r = np.random.rand()`` and an ``if``/``elif``/``else`` on
    ``r``: three sites, whose steps run eagerly from ``z = x * w`` on (``loss-built-before-step``), with PyTorch's
    losses and ``w``. Before: no site, and ``w`` never moved (``[0.1, -0.2, 0.05]`` after 6 steps)."""
    from adapter import step_rewrite
    with open(GRAD_SCRIPT, encoding="utf-8") as f:
        _, sites = step_rewrite.rewrite(f.read(), GRAD_SCRIPT)
    assert len(sites) == 3, [s.lineno for s in sites]
    explain = tmp_path / "explain.json"
    proc = run_py("--explain-json", explain, "--original", os.path.relpath(GRAD_SCRIPT, ROOT),
                  cache_dir=tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    reference = load_reference("branch_draw_grad.json")
    np.testing.assert_allclose(got["losses"], reference["losses"], rtol=1e-5, atol=1e-5)  # 6e-7 relative seen
    np.testing.assert_allclose(got["w"], reference["w"], rtol=1e-5, atol=1e-5)
    steps = [s for s in json.loads(explain.read_text())["steps"] if s["calls"]]
    assert steps and all(s["state"] != "compiled" for s in steps), steps
    assert any(s["kind"] == "loss-built-before-step" for s in steps), steps
