"""Statements between a loss and its ``backward()`` that observe what the step changes (adapter/step_rewrite.py,
``_Rewriter._place_others``), against real PyTorch 2.13 (tests/fixtures/grad_order_reference.json, recorded with
``.venv-ref/bin/python tests/fixtures/grad_order_script.py CASE`` for each case).

The rewrite moves a window statement that the loss does not need after the site call (after ``backward()`` and,
fused, after the update) and hoists the window's ``zero_grad()`` calls before it. Before the fix (main at 1085717):

* ``tutorial`` (PyTorch's blitz neural_networks_tutorial): ``net.zero_grad(); print(net.conv1.bias.grad)`` before
  ``backward()`` printed the new gradient where PyTorch prints None (B was [4.5], not null);
* ``loop_clone``: ``g = net.bias.grad.clone()`` after ``opt.zero_grad()`` got the new gradient, not None (and the
  compile cache then reported its loaded step as not matching its eager reference step);
* ``loop_before_zero``: ``g`` read before ``opt.zero_grad()`` got this step's gradient, not the previous step's;
* ``bn_between``: ``m = net[1].running_mean.clone()`` between two forwards of a BatchNorm model got the statistics
  after the second forward.

Now a statement that reads ``.grad`` runs before the site call, in its order among the hoisted ``zero_grad()``
calls, when it can (``_hoistable_grad_read``: the first three stay compiled and fused), else the statements run as
written (no site); one that reads an object that a later region call may change (``_state_later_calls_may_change``)
guards the site: at run time, when that object is a buffer, a module with buffers or another non-Parameter object
(``compiled_step.in_order``), the script's statements run as written, on the eager bridge (``bn_between``).
``user_calls``: ``gs = _grad_sum(net)`` (a user function given the model) before backward() got the new gradients
(now the site is guarded on the values handed to such calls: one reaching a parameter runs the script as written,
``compiled_step._holds_grads``; ``acc = _accuracy(pred, y)``, tensors only, stays compiled and fused).
``weight_before_step`` (``w = net.weight.clone()`` before a fusable step) was already right (the step is not fused,
``StepBuilder.after_reads_weights``): kept as a regression check.
"""
import ast
import json
import os

import numpy as np
import pytest

from support import FIXTURES, load_reference, run_json

SCRIPT = os.path.join(FIXTURES, "grad_order_script.py")
REFERENCE = load_reference("grad_order_reference.json")
# case -> (the step's line in grad_order_script.py, expected explain state, fused)
COMPILED = {"loop_clone": (61, "compiled", True), "loop_before_zero": (76, "compiled", True),
            "weight_before_step": (115, "compiled", False), "user_calls": (139, "compiled", True)}


def _close(got, want, path="value"):
    if want is None or isinstance(want, str):
        assert got == want, path
    elif isinstance(want, (int, float)):
        assert got is not None and abs(got - want) <= 1e-4 * max(1.0, abs(want)), f"{path}: {got} vs {want}"
    elif isinstance(want, dict):
        assert set(got) == set(want), path
        for k in want:
            _close(got[k], want[k], f"{path}.{k}")
    else:
        assert got is not None and len(got) == len(want), f"{path}: {got} vs {want}"
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g, w, f"{path}[{i}]")


@pytest.mark.parametrize("case", sorted(REFERENCE))
def test_values_as_pytorch(case, tmp_path):
    explain = tmp_path / "explain.json"
    got, _ = run_json("--explain-json", explain, "--original", SCRIPT, case)
    _close(got[case], REFERENCE[case], case)
    if case in COMPILED:
        line, state, fused = COMPILED[case]
        steps = {s["where"].rsplit(":", 1)[1]: s for s in json.loads(explain.read_text())["steps"]}
        step = steps[str(line)]
        assert (step["state"], step["fused"]) == (state, fused), step


def _body(source):
    from adapter.step_rewrite import rewrite
    tree, sites = rewrite(source, "t.py")
    return [ast.unparse(s).replace("lambda :", "lambda:") for s in tree.body], sites


def test_grad_read_after_zero_grad_is_hoisted_with_it():
    body, (site,) = _body("loss = (net(x) ** 2).sum()\n"
                          "net.zero_grad()\n"
                          "print('B', net.bias.grad)\n"
                          "loss.backward()\n")
    assert body == ["net.zero_grad()", "print('B', net.bias.grad)", "(loss,) = __adapter_step__(0, {'net': net, 'x': x})"]


def test_grad_read_that_needs_the_loss_runs_as_written():
    """``print(loss.item(), p.grad)``: it needs the region and observes the grad: no site (the eager bridge)."""
    body, sites = _body("loss = net(x).sum()\n"
                        "print(loss.item(), net.bias.grad)\n"
                        "loss.backward()\n")
    assert sites == [] and body[-1] == "loss.backward()"


def test_grad_read_through_an_unknown_call_runs_as_written():
    body, sites = _body("loss = net(x).sum()\n"
                        "n = grad_norm(net.bias.grad)\n"
                        "loss.backward()\n")
    assert sites == []


def test_state_read_before_a_later_forward_is_guarded():
    """The rewritten site runs only when the object read is not one a forward changes (compiled_step.in_order)."""
    body, (site,) = _body("o1 = net(x1)\n"
                          "m = net.bn.running_mean.clone()\n"
                          "o2 = net(x2)\n"
                          "loss = (o1 - o2).sum()\n"
                          "loss.backward()\n")
    assert site.watched == ["net.bn.running_mean"]
    assert body[0].startswith("if __adapter_in_order__(0, lambda: (net.bn.running_mean,), lambda: ()):\n"
                              "    o1 = net(x1)\n    m = net.bn.running_mean.clone()\n    o2 = net(x2)\n")
    body, (site,) = _body("o1 = net(x1)\n"
                          "v = net(xv)\n"
                          "o2 = net(x2)\n"
                          "loss = (o1 - o2).sum()\n"
                          "loss.backward()\n")
    assert site.watched == ["net"]


def test_changes_in_a_forward():
    import torch
    from adapter.compiled_step import _changes_in_a_forward
    bn, lin = torch.nn.BatchNorm1d(3), torch.nn.Linear(2, 1)
    assert [_changes_in_a_forward(v) for v in (bn.running_mean, bn, lin.weight, lin, 3, None, torch.ones(2))] \
        == [True, True, False, False, False, False, True]


def test_tensor_reads_between_region_statements_still_move():
    """``n = x.size(0)`` / ``s = x.shape[0]`` read a tensor the later forward reads: they still run after."""
    body, (site,) = _body("out = net(x)\n"
                          "n = x.size(0)\n"
                          "s = x[0].sum().item()\n"
                          "loss = crit(out, y)\n"
                          "loss.backward()\n")
    assert body == ["(out, loss) = __adapter_step__(0, {'net': net, 'x': x, 'crit': crit, 'y': y})",
                    "n = x.size(0)", "s = x[0].sum().item()"]


def test_handed_to_an_unknown_call_is_guarded():
    body, (site,) = _body("out = net(x)\n"
                          "loss = crit(out, y)\n"
                          "acc = accuracy(out, y)\n"
                          "n = grad_norm(net)\n"
                          "loss.backward()\n")
    assert site.grad_watched == ["y", "net"] and site.watched == []
    assert body[0].startswith("if __adapter_in_order__(0, lambda: (), lambda: (y, net)):")


def test_holds_grads():
    import torch
    from adapter.compiled_step import _holds_grads
    lin = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    assert [_holds_grads(v) for v in (lin, lin.weight, opt, [lin.weight], torch.ones(2), 3, torch, len)] \
        == [True, True, True, True, False, False, False, False]
