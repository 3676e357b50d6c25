"""adapter/graph_lean.py: the lean graph forms give bit-identical losses and gradients to MindTorch's code compiled
without them, the values of PyTorch 2.13 (tests/fixtures/graph_lean_cases.py, reference
tests/fixtures/graph_lean_reference.json, recorded with .venv-ref), and are taken exactly for their plain cases.

Each case compiles the fixture's network + one loss (with the gradients of every parameter) twice, in fresh Cells:
with the lean forms, and with them withheld (``graph_lean.forms``/``multitype_forms`` returning nothing; MindTorch's
code is then what the graph compiler parses, as before the forms existed)."""
import contextlib
import sys
import warnings

import numpy as np
import pytest

# also on CI's second MindSpore (pytest.ini: stack): graph mode: MindSpore's graph compiler and its syntax support
pytestmark = pytest.mark.stack

from support import FIXTURES, load_reference

REFERENCE = load_reference("graph_lean_reference.json")


def _cases():
    sys.path.insert(0, FIXTURES)
    import graph_lean_cases
    return graph_lean_cases


def _clear_collected():
    from adapter import graph_semantics
    for collected in (graph_semantics._sites, graph_semantics._host_sites, graph_semantics._method_swaps,
                      graph_semantics._multitype_swaps):
        collected.clear()


@contextlib.contextmanager
def _lean(enabled: bool, monkeypatch):
    """Compiles inside use the lean forms (``enabled``) or MindTorch's code only; the swaps are collected again after."""
    from adapter import graph_lean
    _clear_collected()
    with monkeypatch.context() as m:
        if not enabled:
            m.setattr(graph_lean, "forms", lambda: ([], []))
            m.setattr(graph_lean, "multitype_forms", lambda: [])
        try:
            yield
        finally:
            _clear_collected()


@contextlib.contextmanager
def _parsed():
    """Yields the set of ``module.qualname`` of every function the graph compiler parses inside the context."""
    from adapter import backend
    parser = backend.internal("Parser")
    seen = set()
    original = parser.parse

    def parse(self):
        fn = self.fn
        seen.add(f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', fn)}")
        return original(self)
    parser.parse = parse
    try:
        yield seen
    finally:
        parser.parse = original


def _loss_and_grads(name):
    """The fixture's loss ``name`` and the gradients of the network's parameters (by name), compiled."""
    import mindspore as ms
    import torch
    from adapter.graph_semantics import run_cell
    cases = _cases()
    net, loss = cases.build(torch), cases.loss_fn(torch, name)
    names = [n for n, _ in net.named_parameters()]
    params = ms.ParameterTuple([p for _, p in net.named_parameters()])

    class WithLoss(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.net, self.loss = net, loss

        def construct(self, x, y):
            return self.loss(self.net(x), y)

    class Grads(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.with_loss = WithLoss()
            self.grad = ms.ops.GradOperation(get_by_list=True)

        def construct(self, x, y):
            return self.with_loss(x, y), self.grad(self.with_loss, params)(x, y)
    x, targets, _ = cases.inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value, grads = run_cell(Grads(), torch.tensor(x), torch.tensor(targets[cases.LOSSES[name][1]]))
    return float(value.asnumpy()), {n: g.asnumpy() for n, g in zip(names, grads)}


LEAN_LOSSES = ("plain", "ignored", "ignore_index_4", "functional")


@pytest.mark.parametrize("name", list(REFERENCE["losses"]))
def test_losses_and_gradients_bit_identical_to_mindtorch_code_and_close_to_pytorch(name, monkeypatch):
    with _lean(False, monkeypatch):
        before_loss, before_grads = _loss_and_grads(name)
    with _lean(True, monkeypatch), _parsed() as parsed:
        loss, grads = _loss_and_grads(name)
    # the forms were taken: the network's (always), the loss's (its lean case only); ReLU's and MaxPool2d's give way
    # to patches/nan_propagation.py's forms (NaN kept) where that patch is applied: a form replaces MindTorch's own only
    from adapter import patching
    nan_forms = ("_LeanReLU.forward", "_LeanMaxPool2d.forward", "_lean_relu")
    nan_patch = bool(patching.records("nan_propagation"))
    for form in ("_LeanReLU.forward", "_LeanLinear.forward", "_LeanMaxPool2d.forward",
                 "_LeanAdaptiveAvgPool2d.forward", "_lean_flatten", "_lean_relu", "_lean_tensor_add"):
        assert (f"adapter.graph_lean.{form}" in parsed) is not (nan_patch and form in nan_forms), form
    assert ("adapter.graph_lean._lean_cross_entropy" in parsed) is True  # F.cross_entropy is always the lean form
    mindtorch_ce = "mindtorch.torch.nn.functional.cross_entropy" in parsed  # ... which falls back outside its case
    assert mindtorch_ce is (name not in LEAN_LOSSES)
    # bit-identical to the graph of MindTorch's code
    assert np.float32(loss).tobytes() == np.float32(before_loss).tobytes()
    for n, g in grads.items():
        assert g.tobytes() == before_grads[n].tobytes(), n
    # PyTorch's values
    want = REFERENCE["losses"][name]
    np.testing.assert_allclose(loss, want["loss"], rtol=1e-5)
    for n, g in grads.items():
        np.testing.assert_allclose(g.ravel(), np.asarray(want["grads"][n], np.float32), rtol=1e-4, atol=1e-5,
                                   err_msg=n)


def test_flatten_cases_as_pytorch(monkeypatch):
    """torch.flatten compiled (the lean form: Flatten, Reshape or the input itself) gives PyTorch's shapes and the
    input's values in order."""
    import mindspore as ms
    import torch
    from adapter.graph_semantics import run_cell
    cases = _cases()
    _, _, flat_in = cases.inputs()

    class Flat(ms.nn.Cell):
        def construct(self, x):
            return (torch.flatten(x), torch.flatten(x, 1), torch.flatten(x, 1, 2), torch.flatten(x, 2, 2),
                    torch.flatten(x, -3, -2), x.flatten(), x.flatten(1), x.flatten(1, 2), x.flatten(2, 2),
                    x.flatten(-3, -2))
    with _lean(True, monkeypatch), _parsed() as parsed:
        outs = run_cell(Flat(), torch.tensor(flat_in))
    assert {"adapter.graph_lean._lean_flatten", "adapter.graph_lean._LeanTensor.flatten"} <= parsed
    assert not {"mindtorch.torch.functional.flatten", "mindtorch.torch.tensor.Tensor.flatten"} & parsed
    for name, out in zip(list(cases.FLATTEN) * 2, outs):
        assert list(out.shape) == REFERENCE["flatten"][name]["shape"], name
        np.testing.assert_array_equal(out.asnumpy().ravel(), flat_in.ravel())


def test_view_and_reshape_cases_as_pytorch(monkeypatch):
    """Tensor.view / Tensor.reshape compiled (the lean forms: Reshape to the sizes as given) give PyTorch's shapes and
    the input's values in order; a view with a dtype keeps MindTorch's method."""
    import mindspore as ms
    import torch
    from adapter.graph_semantics import run_cell
    cases = _cases()
    _, _, flat_in = cases.inputs()
    views = list(cases.VIEWS.values())

    class Views(ms.nn.Cell):
        def construct(self, x):
            return (x.view(*views[0]), x.view(*views[1]), x.view(*views[2]), x.view(*views[3]), x.view(*views[4]),
                    x.view(*views[5]), x.reshape(*views[0]), x.reshape(*views[4]), x.reshape(shape=views[5]))
    with _lean(True, monkeypatch), _parsed() as parsed:
        outs = run_cell(Views(), torch.tensor(flat_in))
    assert {"adapter.graph_lean._LeanTensor.view", "adapter.graph_lean._LeanTensor.reshape"} <= parsed
    assert not {"mindtorch.torch.tensor.Tensor.view", "mindtorch.torch.tensor.Tensor.reshape"} & parsed
    names = list(cases.VIEWS)
    for name, out in zip(names + [names[0], names[4], names[5]], outs):
        assert list(out.shape) == REFERENCE["view"][name], name
        np.testing.assert_array_equal(out.asnumpy().ravel(), flat_in.ravel())


def test_bool_add_keeps_mindtorchs_logical_or(monkeypatch):
    """``a + b`` of two bool tensors, compiled: PyTorch's logical or (MindTorch's registered function, which the lean
    ``+`` hands bool pairs to); after the compile, MindTorch's function is registered again (PyNative unaffected)."""
    import mindspore as ms
    import torch
    from adapter import graph_lean
    from adapter.graph_semantics import run_cell

    class Add(ms.nn.Cell):
        def construct(self, a, b):
            return a + b
    a, b = torch.tensor([True, True, False, False]), torch.tensor([True, False, True, False])
    with _lean(True, monkeypatch):
        out = run_cell(Add(), a, b)
    assert out.asnumpy().tolist() == REFERENCE["bool_add"]
    add = graph_lean.multitype_forms()[0][0]
    assert graph_lean._registered_tensor_pair(add).__module__.startswith("mindtorch.")
    assert (a + b).numpy().tolist() == REFERENCE["bool_add"]


def test_forms_not_taken_where_a_patch_replaced_mindtorchs_code(monkeypatch):
    """A forward a patch replaced (not MindTorch's code) keeps the patch's: the lean form would drop its fix."""
    from mindtorch.torch.nn.modules.activation import ReLU
    from adapter import graph_semantics

    def patched_forward(self, input):  # noqa: A002
        return input
    patched_forward.__module__ = "patches.example"
    monkeypatch.setattr(ReLU, "forward", patched_forward)
    _clear_collected()
    try:
        graph_semantics._collect()
        assert (ReLU, "forward") not in graph_semantics._sites
    finally:
        _clear_collected()
