"""A compiled step whose forward reads an ``nn.ParameterDict`` gets PyTorch's values or runs eagerly, never a silently
wrong result (adapter/graph_syntax.py: ``self.<chain>["key"]`` / ``self.<chain>[name]`` reads of a ParameterDict become
attribute reads; its ``.items()``/``.values()``/``.keys()``/``.get()``/iteration raise ``ParameterDictRead``, kind
``unsupported-python-syntax``, naming the user's line).

tests/fixtures/param_dict_train.py against real PyTorch 2.13's losses (tests/fixtures/param_dict_reference.json).
Without the fix (measured 2026-11-29 on MindSpore 2.10) both runs compiled with wrong losses: third loss 0.66397
(``.items()``, and ``self.pd[name]`` too) where PyTorch gives 0.66414; on 2.5-dev the ``.items()`` run fell back
("local_dict_cnode is null")."""
import json
import os

import numpy as np

from tests._runpy import run_py

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
SCRIPT = os.path.join(FIXTURES, "param_dict_train.py")


def _run(*args):
    result = run_py("--explain", "--original", SCRIPT, *args)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])["losses"], result.stderr


def test_parameter_dict_items_run_eagerly_with_pytorch_values():
    reference = json.load(open(os.path.join(FIXTURES, "param_dict_reference.json")))["items"]
    losses, stderr = _run("items")
    np.testing.assert_allclose(losses, reference["losses"], rtol=1e-5)
    assert "eager (PyNative): ParameterDictRead: tests/fixtures/param_dict_train.py:30: graph mode cannot read an " \
           "nn.ParameterDict through .items()" in stderr, stderr[-3000:]
    assert "fallback kind unsupported-python-syntax" in stderr, stderr[-3000:]


def test_parameter_dict_item_reads_compile_with_pytorch_values():
    reference = json.load(open(os.path.join(FIXTURES, "param_dict_reference.json")))["keys"]
    losses, stderr = _run()
    np.testing.assert_allclose(losses, reference["losses"], rtol=1e-5)
    assert "compiled (graph mode" in stderr and "PyNative" not in stderr, stderr[-3000:]


def test_parameter_dict_read_is_unsupported_python_syntax():
    from adapter import diagnostics, graph_syntax
    exc = graph_syntax.ParameterDictRead("f.py:3: " + graph_syntax.PARAMETER_DICT_MESSAGE)
    assert diagnostics.classify(exc) == "unsupported-python-syntax"
    assert diagnostics.classify(RuntimeError(str(exc))) == "unsupported-python-syntax"
