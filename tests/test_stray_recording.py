"""A model called in grad mode outside a step's statements whose output is only read for its value (issue 15: the
PyNative fallback). The call opened the eager bridge's recording (adapter/tape.py), which stayed open into the next
step: that site found it open and ran eagerly for good (--explain: "the loss is built from module calls made before
the step's statements"). Now the step rewrite (adapter/step_rewrite.py, _mark_unrecorded) runs such a statement
inside ``tape.unrecorded()``, so the site compiles; a tensor made outside the step that the loss *is* built from
("dependent") still runs eagerly, with the same reason. Values against real PyTorch 2.13.0 CPU
(tests/fixtures/stray_recording_reference.json: ``.venv-ref/bin/python tests/fixtures/stray_recording.py CASE``,
2026-11-26)."""
import ast
import json
import os

import numpy as np
import pytest

from support import FIXTURES, ROOT, load_reference, run_py

SCRIPT = os.path.join(FIXTURES, "stray_recording.py")


@pytest.fixture(scope="module")
def reference():
    return load_reference("stray_recording_reference.json")


@pytest.mark.parametrize("case,state,fused", [("after", "compiled", True), ("between", "compiled", False),
                                              ("moved", "compiled", False), ("dependent", "eager", False)])
def test_metric_forward_outside_the_step(reference, tmp_path, case, state, fused):
    explain = tmp_path / "explain.json"
    proc = run_py("--explain-json", explain, "--original", os.path.relpath(SCRIPT, ROOT), case,
                  cache_dir=tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for key in ("losses", "metrics", "weights"):
        np.testing.assert_allclose(got[key], reference[case][key], rtol=1e-5, atol=1e-6, err_msg=key)
    (step,) = [s for s in json.loads(explain.read_text())["steps"] if s["calls"]]
    assert step["state"] == state, step
    if state == "compiled":
        assert step["fused"] is fused
    else:  # the loss is built from `h`, made outside the step: the eager bridge differentiates through it
        assert step["kind"] == "loss-built-before-step", step
        # the reason names the user's line of the module call that opened the recording (`h = model(x)`)
        assert "the recording was opened by the module call at tests/fixtures/stray_recording.py:59" \
            in step["reason"], step


def _wrapped(source):
    from adapter.step_rewrite import rewrite
    tree, _ = rewrite(source, "t.py")
    return [ast.unparse(n.body[0]) for n in ast.walk(tree)
            if isinstance(n, ast.With) and ast.unparse(n.items[0].context_expr) == "__adapter_unrecorded__()"]


LOOP = ("import torch\n"
        "for i in range(3):\n"
        "    out = model(x)\n"
        "    loss = crit(out, y)\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "    {stmt}\n"
        "    {use}\n")


@pytest.mark.parametrize("stmt,use", [
    ("m = model(xv).mean()", "print(m.item())"),
    ("m = model(xv)", "acc = (m.argmax(1) == yv).float().mean().item()"),
    ("m = crit(model(xv), yv)", "total += float(m)"),
    ("m = model(xv)", "v = torch.softmax(m, 1); print(f'{v.max().item():.3f}')"),
])
def test_value_only_outputs_are_unrecorded(stmt, use):
    assert _wrapped(LOOP.format(stmt=stmt, use=use))[:1] == [stmt]


@pytest.mark.parametrize("stmt,use", [
    ("m = model(xv)", "hist.append(m)"),               # kept in a list a later loss may sum
    ("m = model(xv)", "pass"),                         # never read: the model may keep its output itself
    ("m = model(xv)", "self.last = m"),                # kept on an object
    ("m = model(xv)", "m.sum().backward()"),           # differentiated
    ("m = model(xv)", "loss2 = [m]"),                  # bound to a name read nowhere
    ("m = model(xv)", "f = lambda: m"),                # read in a nested scope
])
def test_outputs_that_may_reach_a_gradient_are_recorded(stmt, use):
    assert _wrapped(LOOP.format(stmt=stmt, use=use)) == []


def test_only_scopes_with_a_site_are_marked():
    assert _wrapped("for i in range(3):\n    m = model(xv)\n    print(m.item())\n") == []
