"""One step site, several models (k-fold cross-validation, hyper-parameter sweeps, forward-forward's per-layer
training, a replaced head or optimizer, a trainer's new ``self.model``): each model trains as in real PyTorch 2.13
(tests/fixtures/step_site_models.torch.json) and the site compiles, with one reference step and graph per set of
models (``adapter/compiled_step.py``, bindings); and a module that keeps its optimizer as an attribute shows it as
PyTorch does (``patches/module_attributes.py``).

Before the fix: the second model's compiled call clashed on parameter names ("its name '0.weight' already exists",
"'opt.weight'") and the site ran eagerly; where the names did not clash (``TwoLayer``), the cached graph kept
differentiating the first model: the next models did not train at all (loss constant); a replaced optimizer was
never used (the fused graph kept the old one: swap's second phase lost its lr 0.4 and momentum).
"""
import os
import re

import numpy as np
import pytest

from support import ROOT, load_reference, run_json

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "step_site_models.py")
CASES = ("sweep", "ff", "swap", "head", "trainer", "alternate", "fresh")


def _golden():
    return load_reference("step_site_models.torch.json", "result")


def _site_lines():
    """``case -> line`` of each ``loss.backward()  # site: case`` in the fixture."""
    lines = {}
    with open(FIXTURE) as f:
        for number, text in enumerate(f, 1):
            found = re.search(r"\.backward\(\)\s+# site: (\w+)", text)
            if found:
                lines[found.group(1)] = number
    assert set(lines) == set(CASES)
    return lines


def _explain(err, case):
    line = _site_lines()[case]
    found = [x for x in err.splitlines() if f"step_site_models.py:{line}: backward() of loss — " in x]
    assert len(found) == 1, err
    return found[0]


@pytest.fixture(scope="module")
def auto_run():
    return run_json("--explain", "--original", FIXTURE)


@pytest.mark.parametrize("case", CASES)
def test_each_model_trains_as_pytorch(auto_run, case):
    """Losses of every model at the site equal real PyTorch's (measured: <= 1.1e-6 rel.)."""
    got, _ = auto_run
    for ours, theirs in zip(got[case], _golden()[case]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    assert len(got[case]) == len(_golden()[case])


@pytest.mark.parametrize("case,explain", [
    ("sweep", "compiled (graph mode, fused with optimizer.step() at line {next}); 3 graph(s) for 3 sets of models"),
    ("ff", "compiled (graph mode, fused with optimizer.step() at line {next}); 3 graph(s) for 3 sets of models"),
    # one model, the optimizer replaced: a second fused graph (with the new optimizer)
    ("swap", "compiled (graph mode, fused with optimizer.step() at line {next}); 2 graph(s), "),
    # the second phase's optimizer updates the head only while the body's .grad accumulates: not fused, as designed
    ("head", "compiled (graph mode); 2 graph(s) for 2 sets of models"),
    ("trainer", "compiled (graph mode, fused with optimizer.step() at line {next}); 3 graph(s) for 3 sets of models"),
    ("alternate", "compiled (graph mode, fused with optimizer.step() at line {next}); 2 graph(s) for 2 sets of "
                  "models"),
])
def test_site_compiles_for_each_model(auto_run, case, explain):
    line = _explain(auto_run[1], case)
    assert explain.format(next=_site_lines()[case] + 1) in line, line


def test_new_objects_every_call_fall_back_with_one_line(auto_run):
    """A new loss module at every call: eager after 8 calls, said once, naming the site, the input and what to do."""
    _, err = auto_run
    where = f"tests/fixtures/step_site_models.py:{_site_lines()['fresh']}"
    said = [x for x in err.splitlines() if x.startswith(f"run.py: {where}: ")]
    assert said == [f"run.py: {where}: the training step runs in PyNative (eager), not compiled: Uncompilable: the "
                    "objects it uses are new at every call (`criterion`, or a module or parameter they hold, changed "
                    "in each of the last 8 calls); create them once, outside the loop, to compile it"], err
    assert "— eager (PyNative): Uncompilable: the objects it uses are new at every call" in _explain(err, "fresh")


def test_optimizer_attribute_is_a_plain_attribute(auto_run):
    """``self.opt = Adam(self.parameters())`` in a module: state_dict keys, parameters, modules and children as in
    PyTorch; the optimizer is in the instance dict and not in repr. (MindTorch's Linear repr indents its first line
    differently: not compared.) Before: children ['ReLU', 'Adam'] and the Adam block in repr."""
    got = auto_run[0]["attributes"]
    golden = _golden()["attributes"]
    for key in ("state_dict", "parameters", "named_parameters", "named_modules", "children", "opt_in_dict"):
        assert got[key] == golden[key], key
    assert "Adam" not in got["repr"] and "opt" not in got["repr"]


def test_optimizer_attribute_keeps_parameter_names():
    """The layer's MindSpore parameter names are not prefixed with the attribute (was: ``opt.weight``). A
    ``#k`` suffix is allowed: ``adapter/param_names.unique`` renames a parameter whose name another live parameter of
    the process holds (in a test run, an earlier test's ``nn.Linear`` still referenced: ``weight#27`` on 2.10)."""
    import torch
    layer = torch.nn.Linear(2, 3)
    layer.opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    assert [p.name.split("#")[0] for p in layer.parameters()] == ["weight", "bias"]
    assert layer.opt is vars(layer)["opt"] and list(layer.children()) == []
    layer.opt = None  # and replaced like any attribute
    assert layer.opt is None and list(layer.state_dict()) == ["weight", "bias"]


def test_optimizer_over_a_submodule_name_raises_as_pytorch():
    import torch
    model = torch.nn.Sequential(torch.nn.Linear(2, 2))
    model.head = torch.nn.Linear(2, 2)
    with pytest.raises(TypeError, match=re.escape("cannot assign 'torch.optim.sgd.SGD' as child module 'head' "
                                                  "(torch.nn.Module or None expected)")):
        model.head = torch.optim.SGD(model.parameters(), lr=0.1)
    layer = torch.nn.Linear(2, 2)
    with pytest.raises(TypeError, match=re.escape("cannot assign 'torch.optim.sgd.SGD' as parameter 'weight' "
                                                  "(torch.nn.Parameter or None expected)")):
        layer.weight = torch.optim.SGD(layer.parameters(), lr=0.1)


def test_binding_key_sees_replaced_modules():
    """The key of a site's objects changes with a new model, a replaced submodule or a trainer's new ``self.model``,
    and not otherwise."""
    import torch
    from adapter.step_binding import _binding_key

    class Trainer:
        pass

    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    trainer = Trainer()
    trainer.model = model
    key = _binding_key((("model", model), ("self", trainer)))[0]
    assert _binding_key((("model", model), ("self", trainer)))[0] == key
    model[1] = torch.nn.Tanh()  # a parameter-free layer replaced
    assert _binding_key((("model", model), ("self", trainer)))[0] != key
    key = _binding_key((("self", trainer),))[0]
    trainer.model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    assert _binding_key((("self", trainer),))[0] != key
    key = _binding_key((("self", trainer),))[0]
    trainer.models = [torch.nn.Linear(2, 2)]  # a list of modules on the trainer
    assert _binding_key((("self", trainer),))[0] != key


def test_eval_forward_sees_a_replaced_layer():
    """``model(x)`` under ``no_grad`` (compiled, ``adapter/compiled_forward.py``) after ``model[2] = nn.Linear(...)``
    uses the new layer. Closed form: ones(4, 2) through Linear(2, 3) (all 0.5), ReLU, Linear(3, 1) summed over 4 rows:
    all 0.5 gives 4 * (3 * 1.5 * 0.5 + 0.5) = 11; the new layer all -1 gives 4 * (3 * 1.5 * -1 - 1) = -22 (real PyTorch
    2.13: 11.0, -22.0). Before: 11.0 twice (the first graph, holding the old layer)."""
    import torch
    from adapter import compiled_forward, compiled_step
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    x = torch.ones(4, 2)
    compiled_step.set_mode("auto")
    try:
        with torch.no_grad():
            for p in model.parameters():
                p.fill_(0.5)
            first = model(x).sum().item()
            model[2] = torch.nn.Linear(3, 1)
            for p in model[2].parameters():
                p.fill_(-1.0)
            second = model(x).sum().item()
    finally:
        compiled_step.set_mode("pynative")
    assert compiled_forward.compiled_shapes(model) == 1  # it did run compiled
    assert (first, second) == (11.0, -22.0)
