"""The compiled step's per-call path does no work whose result cannot change between calls
(``adapter/compiled_step.py``; measured by ``bench/step_overhead.py``): no copy of the user's globals once the
region's calls are checked, none for a region without ``with`` blocks, and no ``inspect.signature`` of the step
Cell per call. Values are unchanged (the corpus goldens and tests/test_compiled_step.py)."""
import os

from adapter import compiled_step, step_rewrite

from support import ROOT, load_reference, run_json


SOURCE = """\
def train(model, data, target, optimizer):
    optimizer.zero_grad()
    output = model(data)
    loss = (output - target).abs().mean()
    loss.backward()
    optimizer.step()
"""


class CountingGlobals(dict):
    """A module namespace that counts how often it is copied (``{**ns}`` iterates its keys)."""
    copies = 0

    def keys(self):
        CountingGlobals.copies += 1
        return super().keys()

    def __iter__(self):  # so that dict unpacking takes the keys() path
        return iter(self.keys())


def test_region_checks_copy_the_user_globals_once():
    _, sites = step_rewrite.rewrite(SOURCE, "train.py", first_key=10_000)
    user_globals = CountingGlobals(abs=abs, helper=len)
    runtime = compiled_step.SiteRuntime(sites[0], user_globals)
    env = {"model": object(), "data": None, "target": None, "optimizer": object()}
    CountingGlobals.copies = 0
    for _ in range(5):
        assert runtime.graph.regions(env) == ()  # no `with` block: nothing to evaluate
        runtime.graph.python_objects(env)
    assert CountingGlobals.copies == 1  # the first call checks the region's calls; later calls reuse the verdict


SCRIPT = """\
import inspect, json
import torch
model = torch.nn.Linear(5, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.ones(8, 5), torch.zeros(8, 1)
signature, counts, losses = inspect.signature, [], []
def counting(*args, **kwargs):
    counts[-1] += 1
    return signature(*args, **kwargs)
inspect.signature = counting
for i in range(8):
    counts.append(0)
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
print(json.dumps({"counts": counts, "losses": losses}))
"""


def test_steady_state_compiled_step_calls_no_inspect_signature(tmp_path):
    """MindSpore's Cell.__call__ checks a graph-mode call's arguments with inspect.signature(construct), each call;
    the step Cell's construct takes *args, for which that check returns at once: skipped (_StepCell)."""
    script = tmp_path / "sig.py"
    script.write_text(SCRIPT)
    out, err = run_json("--explain", "--original", str(script))
    assert "fused with optimizer.step()" in err, err
    assert out["counts"][3:] == [0] * 5, out["counts"]  # calls 1-2: reference step and compilation
    assert out["losses"][-1] < out["losses"][0]


REWRITE_SOURCE = """\
def train(model, data, optimizer, total, lr):
    optimizer.zero_grad()
    output = model(data)
    loss = output.sum()
    loss.backward()
    {between}
    optimizer.step()
"""


def _rewritten(between):
    import ast
    tree, (site,) = step_rewrite.rewrite(REWRITE_SOURCE.format(between=between), "t.py")
    return [ast.unparse(s) for s in tree.body[0].body], site


def test_a_statement_reading_only_the_loss_before_step_is_fused_after_the_site_call():
    body, site = _rewritten("total += loss.item()")
    assert site.optimizer_line == 7
    assert body[-2:] == ["total += loss.item()", "__adapter_optimizer_step__(0, optimizer)"]
    body, site = _rewritten("print(f'{abs(loss.item()):.3f}', str(loss.item() / 2))")
    assert site.optimizer_line == 7


def test_a_statement_that_could_see_the_update_keeps_the_step_unfused():
    for between in ("w = model.weight.sum().item()",  # reads a parameter: it would see the update
                    "total += int(loss.item())",  # int(nan) raises: the script stops before its update
                    "output = loss.item()",  # reassigns a region name
                    "lr = optimizer.param_groups[0]['lr']",  # reads the optimizer
                    "total += loss.item() + data.sum().item()"):  # reads another tensor
        body, site = _rewritten(between)
        assert site.optimizer_line is None, between
        assert body[-1] == "optimizer.step()", body  # the script's own call, after the statement


def test_a_leading_statement_assigning_what_the_clip_reads_keeps_the_step_unfused():
    """The fused clip's arguments are read in the site call, before the leading statements run: a max_norm computed
    by one of them would be last step's."""
    import ast
    source = REWRITE_SOURCE.format(between="limit = abs(loss.item())\n    torch.nn.utils.clip_grad_norm_("
                                           "model.parameters(), limit)")
    tree, (site,) = step_rewrite.rewrite(source, "t.py")
    assert site.optimizer_line is None and site.clip_line is None
    assert [ast.unparse(s) for s in tree.body[0].body][-1] == "optimizer.step()"
    tree, (site,) = step_rewrite.rewrite(source.replace("model.parameters(), limit", "model.parameters(), 1.0"), "t.py")
    assert site.optimizer_line == 8 and site.clip_line == 7


def test_loss_read_between_backward_and_step_fused_matches_pytorch():
    """pytorch/examples vae's ``train_loss += loss.item()`` before ``optimizer.step()``: the step is fused (one graph
    with Adam) and losses, the running total, .grad and the weights are PyTorch's (recorded with .venv-ref)."""
    import json
    import numpy as np
    script = os.path.join(ROOT, "tests", "fixtures", "loss_read_before_step.py")
    ref = load_reference("loss_read_before_step_reference.json")
    out, err = run_json("--explain", "--original", script)
    assert "fused with optimizer.step() at line 24" in err, err
    np.testing.assert_allclose(out["losses"], ref["losses"], rtol=1e-5)
    np.testing.assert_allclose(out["train_loss"], ref["train_loss"], rtol=1e-5)
    np.testing.assert_allclose(out["grads"], ref["grads"], rtol=1e-5)
    for ours, theirs in zip(out["weights"], ref["weights"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_graph_mode_switches_the_context_as_set_context_does(monkeypatch):
    """adapter/graph_semantics.py graph_mode: GRAPH_MODE + STRICT inside, PYNATIVE + LAX after, without calling
    mindspore.set_context (its per-call validation) on this MindSpore."""
    import mindspore as ms
    from adapter.graph_semantics import graph_mode
    calls = []
    set_context = ms.set_context
    monkeypatch.setattr(ms, "set_context", lambda **kw: calls.append(kw) or set_context(**kw))
    with graph_mode():
        inside = (ms.get_context("mode"), ms.get_context("jit_syntax_level"))
    assert inside == (ms.GRAPH_MODE, ms.STRICT)
    assert (ms.get_context("mode"), ms.get_context("jit_syntax_level")) == (ms.PYNATIVE_MODE, ms.LAX)
    assert calls == []
