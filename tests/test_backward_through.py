"""A step whose forward or backward() runs a call or two down compiles (issue 34, item 4: timm's train.py;
adapter/step_rewrite.py "Backward through a call", adapter/backward_through.py).

tests/fixtures/backward_through_train.py against real PyTorch 2.13 (backward_through_reference.json): a loss
computed in a local closure, ``backward()`` inside a function of the script, timm's idiom (closures ``_forward`` /
``_backward`` and a scaler object whose ``__call__`` runs ``GradScaler.scale(loss).backward(create_graph=...)``,
unscale, clip, step, update), ``backward(create_graph=<a False variable>)``; a call whose backward() is of another
tensor (eager, named), and a grad-mode value handed to an object that runs none (no site; the plain step before it
still compiles). Before, the first three ran on the eager bridge (no step found) and the fourth was no site.
One run.py process (~30 s: four small graphs) and rewrite checks (no process)."""
import ast
import re

import pytest

from support import fixture_path, load_reference, run_json

pytestmark = pytest.mark.stack  # passes on mindspore-dev 2.5 too (2026-12-07): CI runs it on both stacks

FIXTURE = "backward_through_train.py"


@pytest.fixture(scope="module")
def ran():
    return run_json("--explain", "--original", fixture_path(FIXTURE))


def _explain(stderr, line):
    found = re.search(rf"{FIXTURE}:{line}: backward\(\) of \S+ — (.*)", stderr)
    return found.group(1) if found else None


@pytest.mark.parametrize("case", ["closure", "helper", "scaler", "other", "observer"])
def test_losses_and_weights_are_pytorchs(ran, case):
    log, _ = ran
    ref = load_reference("backward_through_reference.json")[case]
    assert log[case]["losses"] == pytest.approx(ref["losses"], rel=2e-5, abs=1e-5)
    assert log[case]["weights"] == pytest.approx(ref["weights"], rel=2e-5, abs=1e-5)


def test_each_idiom_compiles_and_the_rest_is_named(ran):
    _, stderr = ran
    assert _explain(stderr, 88).startswith("compiled (graph mode, fused with optimizer.step()"), stderr[-3000:]
    for line in (100, 123):  # backward() inside do_backward(loss, opt); inside Scaler.__call__, two calls down
        assert _explain(stderr, line).startswith("compiled (graph mode)"), stderr[-3000:]
    assert "eager (PyNative): the call the loss is handed to ran a backward() of another tensor" \
        in _explain(stderr, 135), stderr[-3000:]
    assert "fallback kind backward-call-unrecognised" in stderr
    assert _explain(stderr, 147).startswith("compiled (graph mode, fused"), stderr[-3000:]  # not opened by tracker
    assert _explain(stderr, 150) is None  # tracker(val) runs no backward(): not listed


def _rewrite(source):
    from adapter import step_rewrite
    tree, sites = step_rewrite.rewrite(source, "train.py")
    return ast.unparse(tree), sites


def test_closure_inlined_and_call_made_a_site():
    text, sites = _rewrite(
        "def train(model, x, y, scaler, opt):\n"
        "    for i in range(3):\n"
        "        def _forward():\n"
        "            out = model(x)\n"
        "            _loss = (out - y).pow(2).mean()\n"
        "            return _loss, out\n"
        "        def _backward(_loss):\n"
        "            scaler(_loss, opt)\n"
        "        loss, out = _forward()\n"
        "        _backward(loss)\n")
    assert [s.through for s in sites] == [True]
    region = "\n".join(ast.unparse(stmt) for stmt in sites[0].region)
    assert "out___forward = model(x)" in region  # the closure's body, its locals renamed
    assert "with __adapter_backward_through__(0, loss):\n            _backward(loss)" in text


@pytest.mark.parametrize("call", ["print(loss)", "losses.append(loss)", "log_value(loss)", "torch.save(loss, 'f')",
                                  "meter.update(loss)"])
def test_calls_that_run_no_backward_make_no_site(call):
    _, sites = _rewrite("def log_value(v):\n    print(float(v))\n\n"
                        f"for x in xs:\n    loss = model(x).sum()\n    {call}\n")
    assert sites == []


def test_a_later_backward_is_preferred():
    _, sites = _rewrite("for x in xs:\n    loss = model(x).sum()\n    tracker(loss)\n    loss.backward()\n")
    assert not any(s.through for s in sites)  # tracker() stays before backward(), as before (no site)


def test_create_graph_computed_in_the_region_is_no_site():
    _, sites = _rewrite("for x in xs:\n    loss = model(x).sum()\n    flag = loss > 0\n"
                        "    loss.backward(create_graph=flag)\n")
    assert sites == []
