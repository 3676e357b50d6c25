"""A compiled step whose forward reads an ``nn.ParameterDict`` gets PyTorch's values or runs eagerly, never a silently
wrong result (adapter/graph_syntax.py: ``self.<chain>["key"]`` / ``self.<chain>[name]`` reads of a ParameterDict become
attribute reads; its ``.items()``/``.values()``/``.keys()``/``.get()``/iteration raise ``ParameterDictRead``, kind
``unsupported-python-syntax``, naming the user's line).

tests/fixtures/param_dict_train.py against real PyTorch 2.13's losses (tests/fixtures/param_dict_reference.json).
Without the fix (measured 2026-11-29 on MindSpore 2.10) both runs compiled with wrong losses: third loss 0.66397
(``.items()``, and ``self.pd[name]`` too) where PyTorch gives 0.66414; on 2.5-dev the ``.items()`` run fell back
("local_dict_cnode is null")."""
import os

import numpy as np

from support import FIXTURES, load_reference, run_script

SCRIPT = os.path.join(FIXTURES, "param_dict_train.py")


def test_parameter_dict_items_run_eagerly_with_pytorch_values():
    reference = load_reference("param_dict_reference.json", "items")
    ran = run_script(SCRIPT, "items", options=("--explain", "--original"))
    losses, stderr = ran.json["losses"], ran.stderr
    np.testing.assert_allclose(losses, reference["losses"], rtol=1e-5)
    assert "eager (PyNative): ParameterDictRead: tests/fixtures/param_dict_train.py:30: graph mode cannot read an " \
           "nn.ParameterDict through .items()" in stderr, stderr[-3000:]
    assert "fallback kind unsupported-python-syntax" in stderr, stderr[-3000:]


def test_parameter_dict_item_reads_compile_with_pytorch_values():
    reference = load_reference("param_dict_reference.json", "keys")
    ran = run_script(SCRIPT, options=("--explain", "--original"))
    losses, stderr = ran.json["losses"], ran.stderr
    np.testing.assert_allclose(losses, reference["losses"], rtol=1e-5)
    assert "compiled (graph mode" in stderr and "PyNative" not in stderr, stderr[-3000:]


def test_parameter_dict_read_is_unsupported_python_syntax():
    from adapter import diagnostics, graph_syntax
    exc = graph_syntax.ParameterDictRead("f.py:3: " + graph_syntax.PARAMETER_DICT_MESSAGE)
    assert diagnostics.classify(exc) == "unsupported-python-syntax"
    assert diagnostics.classify(RuntimeError(str(exc))) == "unsupported-python-syntax"


def test_item_reads_of_a_chain_go_through_the_helpers():
    import ast
    from adapter import graph_syntax
    source = ("def forward(self, x, k):\n"
              "    return self.pd['v'] + self.pd[k] + self.pd[f'{k}'] + self.w[0] + self.w[:, 1]\n")
    namespace = {}
    exec(compile(source, "<param_dict_test>", "exec"), namespace)
    new, count = graph_syntax.rewrite(ast.parse(source), namespace["forward"], 1)
    assert count == 3
    assert ast.unparse(new.body[0].body[0]) == (
        "return __adapter_syntax__.item__v(self.pd) + __adapter_syntax__.item__(self.pd, k) + "
        "__adapter_syntax__.item__(self.pd, f'{k}') + self.w[0] + self.w[:, 1]")
    import torch
    import torch.nn as nn
    pd = nn.ParameterDict({"v": nn.Parameter(torch.ones(2))})
    helpers = graph_syntax._helpers()
    by_key = getattr(helpers, graph_syntax.attribute_helper("v", item=True))
    by_name = getattr(helpers, graph_syntax.item_helper())
    assert by_key(pd) is pd.v and by_name(pd, "v") is pd.v
    assert by_key({"v": 1}) == 1 and by_name([4, 5], 1) == 5


def test_item_reads_of_a_local_name_go_through_the_helpers():
    # pd = self.pd; pd["v"] compiled to a constant on 2.10 (third loss 0.66439, PyTorch 0.66414)
    import ast
    from adapter import graph_syntax
    source = "def forward(self, x, i):\n    pd = self.pd\n    return pd['v'] + x[i] + x[0]\n"
    namespace = {}
    exec(compile(source, "<param_dict_test>", "exec"), namespace)
    new, count = graph_syntax.rewrite(ast.parse(source), namespace["forward"], 1)
    assert count == 2
    assert ast.unparse(new.body[0].body[1]) == (
        "return __adapter_syntax__.item__v(pd) + __adapter_syntax__.item__(x, i) + x[0]")
