"""adapter/graph_semantics.py swaps its graph forms in exactly while MindSpore compiles (issues 15 and 17): around
``GraphExecutor_.compile``, which MindSpore calls on a Cell's first call and on every recompile (a new input shape),
not around calls that run a graph already built. A recompile without the swaps would build a silently different
graph (numpy draws frozen into it, uninitialised sums of empty tensors), so each test here compiles one Cell for a
first input shape and then for a second one, and checks the second graph's semantics.

Expected values: PyTorch 2.13's (``torch.mm`` of a (3, 0) by (0, 2) matrix is zeros: the empty-input goldens of
tests/fixtures/conformance/, case ``torch.mm``), and PyTorch's meaning of ``torch.randn`` (a new draw per call)."""
import contextlib
import warnings

import numpy as np
import pytest

# also on CI's second MindSpore (pytest.ini: stack): graph mode: MindSpore's graph compiler and its syntax support
pytestmark = pytest.mark.stack


def _cell(forward):
    """A compiled-forward Cell (adapter/compiled_forward.py) of a module whose ``forward`` is ``forward``."""
    import torch.nn as nn
    from adapter.compiled_forward import _ForwardCell

    def __init__(self):
        nn.Module.__init__(self)
        self.lin = nn.Linear(3, 3)  # a parameter, as the compiled forwards have
    net = type("Net", (nn.Module,), {"__init__": __init__, "forward": forward})
    return _ForwardCell(net())


def _run(cell, *args):
    from adapter.graph_semantics import run_cell
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_cell(cell, *args)


def test_recompile_on_a_new_shape_draws_randn_in_the_graph():
    """``torch.randn`` compiled is MindSpore's ``standard_normal`` (a new draw per run) only with the swaps; without
    them the numpy draw is made once, at compile time, and frozen into the graph: the same numbers at every run."""
    import torch
    def forward(self, x):
        return x + torch.randn(x.shape[0], 3)
    cell = _cell(forward)
    for rows in (2, 5):  # the second shape recompiles the same Cell
        first = _run(cell, torch.zeros(rows, 3)).asnumpy()
        second = _run(cell, torch.zeros(rows, 3)).asnumpy()
        assert first.shape == (rows, 3)
        assert not np.array_equal(first, second), f"torch.randn frozen into the graph compiled for {rows} rows"


def test_recompile_on_a_new_shape_still_raises_for_host_draws():
    """A ``numpy.random`` call while compiling raises ``HostRandomDraw`` (the site then runs eagerly) instead of
    being frozen into the graph, on a recompile too."""
    import torch
    from adapter.graph_semantics import HostRandomDraw
    def forward(self, x, coin):
        return self.lin(x) * coin

    def drawing(self, x):
        return self.lin(x) * float(np.random.rand())
    cell, host = _cell(forward), _cell(drawing)
    _run(cell, torch.ones(2, 3), torch.ones(1))  # another Cell compiled first
    # the host-draw Cell: compiled for one shape (raises), then for another (raises again, not frozen)
    for rows in (2, 4):
        with pytest.raises(HostRandomDraw):
            _run(host, torch.ones(rows, 3))


def _dirty_memory():
    """Fill and free a 256 KiB tensor of 7s: a kernel's uninitialised output then reads 7s (tests/test_empty_reductions.py)."""
    import torch
    big = torch.full((1 << 16,), 7.0)
    big = big * 1.0
    del big


def _golden(expr, a_shape):
    """PyTorch 2.13's output for the conformance case ``expr`` whose input ``a`` has shape ``a_shape``."""
    from app.tools.conformance import replay
    from app.tools.conformance.cases import all_cases
    meta, arrays = replay.load_golden()
    (case,) = [c for c in all_cases() if c.expr == expr and tuple(c.inputs["a"].shape) == a_shape]
    return np.asarray(arrays[meta["cases"][case.id]["out"]["key"]])


def test_recompile_for_an_empty_inner_dimension_gets_the_empty_reduction_graph_forms():
    """``torch.mm`` compiled for (3, 4) @ (4, 2), then recompiled for (3, 0) @ (0, 2): PyTorch's zeros
    (patches/empty_reductions.py's graph form; MindSpore's MatMul leaves the output uninitialised: 7s here)."""
    import torch
    def forward(self, a, b):
        return torch.mm(a, b)
    cell = _cell(forward)
    out = _run(cell, torch.ones(3, 4), torch.ones(4, 2)).asnumpy()
    np.testing.assert_array_equal(out, np.full((3, 2), 4.0, np.float32))
    want = _golden("torch.mm(a, b)", (3, 0))
    assert want.shape == (3, 2) and want.dtype == np.float32
    for _ in range(5):
        _dirty_memory()
        out = _run(cell, torch.ones(3, 0), torch.ones(0, 2)).asnumpy()
        np.testing.assert_array_equal(out, want)


def test_swaps_happen_per_compile_not_per_call(monkeypatch):
    """The swaps (120 on 2.5-dev) are made once per graph built (first call, each new shape), never for a call that
    runs a graph built before (issue 17: 621 Python calls per compiled step when made around every call);
    inside a compile the swapped names are in place, outside it MindTorch's own."""
    import torch
    from mindtorch.torch.nn.modules.module import Module
    from adapter import graph_semantics, patching
    entries = []
    swapped = patching.swapped
    original = Module.__dict__["construct"]

    @contextlib.contextmanager
    def counting(items):
        with swapped(items):
            entries.append(Module.__dict__["construct"])  # what the parser reads while compiling
            yield
    monkeypatch.setattr(patching, "swapped", counting)

    def forward(self, x):
        return self.lin(x)
    cell = _cell(forward)
    for rows in (2, 2, 2, 5, 5, 2):
        with graph_semantics.graph_mode():
            assert Module.__dict__["construct"] is original  # not swapped around the call, only inside the compile
            cell(torch.ones(rows, 3))
    assert len(entries) == 2  # two shapes, two compiles
    assert all(e is not original for e in entries)
    assert Module.__dict__["construct"] is original


def test_hook_put_back_after_a_restore():
    """``patching.restore`` (tests) puts MindSpore's ``compile`` back; the next :func:`graph_mode` hooks it again, so
    no graph compiles under it without the swaps."""
    import torch
    from adapter import backend, graph_semantics, patching
    with graph_semantics.graph_mode():
        pass
    for cls in backend.graph_executor_classes():
        patching.restore(cls, "compile")
        assert not getattr(cls.__dict__["compile"], "_adapter_compile_hook", False)
    def forward(self, x):
        return x + torch.randn(x.shape[0], 3)
    cell = _cell(forward)
    first = _run(cell, torch.zeros(2, 3)).asnumpy()
    assert not np.array_equal(first, _run(cell, torch.zeros(2, 3)).asnumpy())
    assert all(getattr(cls.__dict__["compile"], "_adapter_compile_hook", False)
               for cls in backend.graph_executor_classes())
