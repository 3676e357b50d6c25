"""Idioms of third-party CIFAR trainers (2026-12-07 wild sweep, docs/wild_triage.md: davda54/sam's
``data/cifar.py`` and ``smooth_cross_entropy.py``), distilled in tests/fixtures/vision_idioms_train.py and compared
with real PyTorch 2.13 (tests/fixtures/vision_idioms_reference.json; the fixture's docstring gives the command):

* ``data.std(dim=[0, 2, 3])`` (a list of dims; also ``var``, ``std_mean``/``var_mean``): MindTorch raised
  ``TypeError: tensor_var() takes from 1 to 2 positional arguments`` (``patches/reduction_overloads.py``);
* ``target.scatter_(dim=1, index=..., value=0.9)`` (``value``/``src`` by keyword, a ``src`` larger than ``index``):
  ``TypeError: ... unexpected keyword argument 'value'`` (``patches/scatter_forms.py``);
* ``torch.linalg.vector_norm(w, dim=(1, 2))`` and ``torch.norm(x, p, dim=(0, 2))``: two dims were taken as a matrix
  norm (spectral / max column sum / max row sum), silently; three dims and ``ord`` 0 or 3.5 raised
  (``patches/op_arguments.py``).

Each test fails with its patch disabled (``ADAPTER_DISABLE_PATCHES=<name>``: the fixture stops at the first such call).
"""
import numpy as np
import pytest

import ast

from support import fixture_path, load_reference, run_json, run_py

pytestmark = pytest.mark.stack


@pytest.fixture(scope="module")
def ours():
    got, _ = run_json("--original", fixture_path("vision_idioms_train.py"))
    return got


@pytest.fixture(scope="module")
def want():
    return load_reference("vision_idioms_reference.json")


def _compare(got, want, keys, rtol=2e-5, atol=2e-5):
    for key in keys:
        np.testing.assert_allclose(got[key], want[key], rtol=rtol, atol=atol, err_msg=key)


def test_std_var_over_a_list_of_dims(ours, want):
    _compare(ours["direct"], want["direct"], [k for k in want["direct"] if "std" in k or "var" in k])


def test_scatter_value_and_src_keywords(ours, want):
    _compare(ours["direct"], want["direct"], [k for k in want["direct"] if "scatter" in k or k == "smoothed"])


def test_vector_norm_over_several_dims(ours, want):
    keys = [k for k in want["direct"] if "norm" in k]
    assert len(keys) == 35
    _compare(ours["direct"], want["direct"], keys)


def test_sharpness_aware_steps_with_label_smoothing(ours, want):
    # two forward/backward passes per step, p.data restored, group-norm penalty: losses of 4 steps, final weights
    _compare(ours["train"], want["train"], ("stats", "penalties", "losses", "weight", "bias"), rtol=1e-5, atol=1e-5)


def test_save_into_a_missing_folder_raises_pytorchs_runtime_error(tmp_path):
    # uoguelph-mlrg/Cutout saves to checkpoints/ without creating it: PyTorch 2.13 raises
    # RuntimeError('Parent directory checkpoints does not exist.'); here it was FileNotFoundError naming our temporary
    # file (.NAME.PID.XXXXXXXX.tmp), which an `except RuntimeError` did not catch (patches/serialization.py)
    script = tmp_path / "save_missing.py"
    script.write_text("import json, torch\n"
                      "try:\n"
                      "    torch.save({'w': torch.ones(2)}, 'checkpoints/model.pt')\n"
                      "except RuntimeError as e:\n"
                      "    print(json.dumps({'error': str(e)}))\n")
    got, _ = run_json("--original", str(script), cwd=str(tmp_path))
    assert got == {"error": "Parent directory checkpoints does not exist."}
    assert not (tmp_path / "checkpoints").exists()


def test_inplace_method_on_a_fresh_local_is_rebound_for_the_graph():
    """``t = torch.full_like(...); t.scatter_(...)`` (label smoothing): adapter/graph_syntax.py rebinds such a
    statement to ``t = t.scatter(...)`` for a name bound only to new tensors (a factory call or ``.clone()``), so the
    step compiles (before: eager, ``inplace-tensor-method``/compile-error). Left as written: a parameter (the caller's
    tensor), a name also bound to another tensor (a view or alias: ``v = x[0]``), a name another holds (``a = t``
    before the write), a method outside the list (``t.fill_``)."""
    from adapter import graph_syntax
    source = ("def loss(logits, labels, x):\n"
              "    t = torch.full_like(logits, 0.1)\n"
              "    t.scatter_(dim=1, index=labels.unsqueeze(1), value=0.9)\n"
              "    c = x.clone()\n"
              "    with torch.no_grad():\n"
              "        c.clamp_(0, 1)\n"
              "    x.mul_(2)\n"
              "    v = x[0]\n"
              "    v.add_(1)\n"
              "    v = torch.zeros(3)\n"
              "    a = torch.zeros(2)\n"
              "    b = a\n"
              "    a.add_(1)\n"
              "    t.fill_(0.5)\n"
              "    return t, c, v, b\n")
    fn = _function(source, {"torch": None})["loss"]
    new, count = graph_syntax.rewrite(ast.parse(source), fn, 1)
    assert ast.unparse(new.body[0]).splitlines()[1:] == [
        "    t = torch.full_like(logits, 0.1)",
        "    t = t.scatter(dim=1, index=labels.unsqueeze(1), value=0.9)",
        "    c = x.clone()",
        "    with torch.no_grad():",
        "        c = c.clamp(0, 1)",
        "    x.mul_(2)",
        "    v = x[0]",
        "    v.add_(1)",
        "    v = torch.zeros(3)",
        "    a = torch.zeros(2)",
        "    b = a",
        "    a.add_(1)",
        "    t.fill_(0.5)",
        "    return (t, c, v, b)"]
    assert count == 2


def _function(source, env):
    namespace = dict(env)
    exec(compile(source, "<vision_idioms_test>", "exec"), namespace)
    return namespace


def test_label_smoothing_step_compiles(tmp_path):
    # davda54/sam's step ran eagerly: `one_hot.scatter_(...)` on a plain tensor in the loss
    proc = run_py("--explain", "--original", fixture_path("vision_idioms_train.py"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "vision_idioms_train.py:81: backward() of loss — compiled (graph mode)" in proc.stderr, proc.stderr[-2000:]
