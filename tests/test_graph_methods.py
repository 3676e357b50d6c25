"""Tensor method calls in compiled code mean MindTorch's (PyTorch's) methods on every MindSpore we support
(adapter/graph_methods.py): 19 idioms in a compiled forward against real PyTorch's values
(tests/fixtures/graph_methods_reference.json, recorded by tests/fixtures/graph_methods_cases.py). On MindSpore 2.10
without graph_methods 13 of them fail (measured 2026-11-26: 11 do not compile, ``x.transpose(0, 1)`` gives the
untransposed tensor, ``isinstance(x, torch.Tensor)`` is False); on 2.5-dev graph_methods is off (nothing swapped) and
all 21 pass through MindSpore's own adapter-type lookup. 9 property-read idioms (x.device, x.is_cuda, x.real...,
tensor_properties()) were added: on 2.10 without the property rewrite 7 of them fail."""
import ast
import os
import sys

import numpy as np
import pytest

# also on CI's second MindSpore (pytest.ini: stack): graph mode: MindSpore's graph compiler and its syntax support
pytestmark = pytest.mark.stack

from support import FIXTURES, load_reference

sys.path.insert(0, FIXTURES)
REFERENCE = load_reference("graph_methods_reference.json", "cases")


def _net(fn):
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fn = fn

        def forward(self, x):
            return self.fn(x)
    return Net()


@pytest.fixture(scope="module")
def cases():
    import graph_methods_cases
    return {case.__name__: case for case in graph_methods_cases.CASES}, graph_methods_cases.sample()


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_compiled_idiom_matches_pytorch(cases, name):
    import torch
    from adapter.compiled_forward import _ForwardCell
    from adapter.graph_semantics import run_cell
    functions, sample = cases
    want = REFERENCE[name]
    got = run_cell(_ForwardCell(_net(functions[name])), torch.tensor(sample)).asnumpy()
    assert list(got.shape) == want["shape"]
    np.testing.assert_allclose(got.ravel(), want["values"], rtol=1e-6, atol=1e-6)


def test_needed_only_where_mindspore_lacks_the_adapter_config():
    """On where MindSpore has no set_adapter_config of its own (2.10: backend_compat supplied it); off on 2.5-dev,
    where it swaps nothing. graph_semantics' Parser.parse swap exists on both: adapter/graph_syntax.py's rewrite
    (lambdas, ModuleDict attributes, in-place rebinds) runs under graph_methods' where that one is needed."""
    import mindspore.common.api as api
    from adapter import backend_compat, graph_methods, graph_semantics
    native = getattr(api.set_adapter_config, "__module__", "") != "adapter.backend_compat"
    assert graph_methods.needed() is (not native)
    assert ("set_adapter_config" in backend_compat.applied()) is (not native)
    assert bool(graph_methods.swaps()) is graph_methods.needed()
    graph_semantics._collect() if not graph_semantics._sites else None
    assert [name for _, name, _ in graph_semantics._method_swaps][:1] == ["parse"]  # graph_syntax's, on every stack


def _rewritten(source: str, namespace: dict) -> str:
    """``source``'s function rewritten as MindSpore's parser would get it, with ``namespace`` as its globals."""
    from adapter import graph_methods
    exec(compile(source, "<test>", "exec"), namespace)  # noqa: S102 (the test's own source)
    tree, count = graph_methods.rewrite(ast.parse(source), namespace["forward"])
    return ast.unparse(tree)


def test_rewrite_targets_tensor_methods_only():
    """obj.meth(...) for MindTorch Tensor methods becomes a helper call; modules, classes, literals, super() and
    non-tensor method names stay as written."""
    import torch
    import torch.nn.functional as F
    src = ("def forward(self, x):\n"
           "    a = x.size(0) + x.transpose(dim0=1, dim1=0).sum()\n"
           "    b = torch.flatten(x, 1) + F.relu(x) + self.fc(x)\n"
           "    c = [1].index(1) + 'a,b'.split(',') + super().forward(x)\n"
           "    d = x.reshape(*s, **k)\n")
    out = _rewritten(src, {"torch": torch, "F": F})
    assert "__adapter_torch_methods__.size_1(x, 0)" in out
    assert "__adapter_torch_methods__.transpose_0_dim0_dim1(x, dim0=1, dim1=0)" in out
    assert "__adapter_torch_methods__.sum_0(__adapter_torch_methods__.transpose_0" in out
    assert "torch.flatten(x, 1) + F.relu(x) + self.fc(x)" in out
    assert "[1].index(1) + 'a,b'.split(',') + super().forward(x)" in out
    assert "__adapter_torch_methods__.reshape__v(x, *s, **k)" in out


def test_rewrite_targets_tensor_property_reads_only():
    """Reads of MindTorch's tensor properties (x.device, x.is_cuda, x.real...) become helper calls; writes
    (x.requires_grad = ...), call targets, non-tensor globals and other attributes stay as written."""
    import torch
    from adapter import graph_methods
    assert {"device", "is_cuda", "is_cpu", "real", "T", "mT", "dtype", "data"} <= graph_methods.tensor_properties()
    assert "shape" not in graph_methods.tensor_properties()  # MindSpore's own
    src = ("def forward(self, x):\n"
           "    a = x.device.type == 'cpu' and x.is_cuda\n"
           "    x.requires_grad = True\n"
           "    b = x.T.sum(0) + x.shape[0] + self.fc.weight.data\n"
           "    c = G.real + x.is_cuda()\n")
    out = _rewritten(src, {"torch": torch, "G": 3})
    assert "__adapter_torch_methods__.device__get(x).type == 'cpu'" in out
    assert "__adapter_torch_methods__.is_cuda__get(x)" in out
    assert "x.requires_grad = True" in out
    assert "__adapter_torch_methods__.sum_1(__adapter_torch_methods__.T__get(x), 0) + x.shape[0]" in out
    assert "__adapter_torch_methods__.data__get(self.fc.weight)" in out
    assert "G.real + x.is_cuda()" in out


def test_mindtorch_delegations_rewrite_calls_on_the_first_parameter_only():
    """In MindTorch's functional.py (DELEGATING_FILES) only calls on the function's first parameter are rewritten
    (``torch.std(input)`` is ``input.std(...)``: MindTorch's method on 2.5, MindSpore's in a 2.10 graph, measured:
    "Failed calling std with std(None, bool, bool)"); calls on other names (``cast_to_ms_tensor`` results, meant as
    MindSpore's methods) stay; a function that assigns its first parameter is left whole."""
    from adapter import graph_methods
    src = ("def std(input, dim=None, unbiased=True, keepdim=False):\n"
           "    x = cast(input)\n"
           "    return input.std(dim, unbiased, keepdim) + x.var(axis=dim, ddof=1)\n")
    namespace = {"cast": lambda x: x}
    exec(compile(src, "<test>", "exec"), namespace)  # noqa: S102 (the test's own source)
    tree, count = graph_methods.rewrite(ast.parse(src), namespace["std"], first_parameter_only=True)
    out = ast.unparse(tree)
    assert count == 1
    assert "__adapter_torch_methods__.std_3(input, dim, unbiased, keepdim)" in out and "x.var(axis=dim, ddof=1)" in out
    assigned = "def roll(input, shifts):\n    input = cast(input)\n    return input.roll(shifts)\n"
    assert graph_methods.rewrite(ast.parse(assigned), namespace["std"], first_parameter_only=True)[1] == 0
    assert graph_methods._delegating_file("/x/site-packages/mindtorch/torch/functional.py")
    assert not graph_methods._delegating_file("/x/site-packages/mindtorch/torch/nn/functional.py")


def test_helpers_dispatch_on_the_object(cases):
    """A generated helper calls MindTorch's method on a tensor and the object's own method otherwise (run here in
    Python; in a graph the isinstance test is decided when compiling)."""
    import torch
    from adapter import graph_methods
    module = graph_methods._helpers()
    name = graph_methods.helper("size", 1, (), False)
    assert getattr(module, name)(torch.zeros(3, 4), 1) == 4

    class NotATensor:
        def size(self, dim):
            return ("mine", dim)
    assert getattr(module, name)(NotATensor(), 1) == ("mine", 1)
    get = getattr(module, graph_methods.property_helper("is_cuda"))
    assert get(torch.zeros(2)) is False  # MindTorch's (patched) property on a CPU target

    class Attrs:
        is_cuda = "mine"
    assert get(Attrs()) == "mine"


def test_compiled_step_with_torch_methods_trains_as_eager():
    """The step region and the model's forward use size(0), transpose(0, 1), clone, expand, view: ``--mode graph``
    (any fallback is an error) gives the eager bridge's losses. On 2.10 without the rewrite the step does not
    compile (Concat of (5, 8) and (8, 5): the untransposed tensor)."""
    from support import run_json
    script = os.path.join(FIXTURES, "graph_methods_train.py")
    eager, _ = run_json("--mode", "pynative", "--original", script)
    compiled, err = run_json("--mode", "graph", "--explain", "--original", script)
    assert "compiled (graph mode" in err, err[-2000:]
    np.testing.assert_allclose(compiled["losses"], eager["losses"], rtol=1e-6)
