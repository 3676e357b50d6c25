"""``torch.stack`` / ``torch.cat`` joined on the host (patches/host_join.py): MindTorch's results to the bit, where
the fast path applies, and MindTorch's function everywhere else.

The reference is MindTorch's own ``stack`` / ``cat`` (the functions the patch replaced, ``get_original``) on the same
inputs; which path ran is counted (calls of MindTorch's function), not timed (``bench/eager_ops.py`` times it)."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from adapter.patching import get_original
from patches import host_join

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.float32,
          torch.float64]


@pytest.fixture
def calls(monkeypatch):
    """Counts of MindTorch's stack/cat calls (the fallback) while the test runs."""
    counts = {"stack": 0, "cat": 0}
    for name in counts:
        original = getattr(host_join, f"_original_{name}")

        def counted(*args, _original=original, _name=name, **kwargs):
            counts[_name] += 1
            return _original(*args, **kwargs)
        monkeypatch.setattr(host_join, f"_original_{name}", counted)
    return counts


def _mindtorch(name):
    import mindtorch.torch.functional as functional
    return get_original(functional, name)


def _same(ours, ref):
    assert type(ours) is type(ref)
    assert ours.dtype == ref.dtype and tuple(ours.shape) == tuple(ref.shape)
    assert ours.numpy().tobytes() == ref.numpy().tobytes()
    assert ours.requires_grad is False and ref.requires_grad is False


def _inputs(dtype):
    """Slices of a 1-D tensor at offsets (get_batch's rows: views), columns of a matrix (non-contiguous views)."""
    base = (torch.arange(200) % 7 - 3).to(dtype)
    rows = [base[i:i + 6] for i in (0, 13, 101, 150)]
    matrix = (torch.arange(24) % 5).to(dtype).view(4, 6)
    cols = [matrix[:, 1], matrix[:, 4], matrix.t()[2]]
    return rows, cols, matrix


@pytest.mark.parametrize("dtype", DTYPES)
def test_stack_is_mindtorchs_to_the_bit(dtype, calls):
    rows, cols, matrix = _inputs(dtype)
    cases = [(rows, {}), (rows, {"dim": 1}), (rows, {"dim": -1}), (cols, {"dim": -2}), ((matrix, matrix.clone()), {}),
             ([matrix, matrix], {"dim": 2}), ([matrix, matrix], {"axis": 1}), ([rows[0]], {})]
    for tensors, kwargs in cases:
        ours = torch.stack(tensors, **kwargs)
        assert calls["stack"] == 0, (dtype, len(tensors), kwargs)
        _same(ours, _mindtorch("stack")(tensors, **kwargs))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cat_is_mindtorchs_to_the_bit(dtype, calls):
    rows, cols, matrix = _inputs(dtype)
    cases = [(rows, {}), ((matrix, matrix[1:3]), {}), ([matrix, matrix[:, :2], matrix.t()[:3].t()], {"dim": 1}),
             ([matrix, matrix[:, 5:]], {"dim": -1}), ([matrix[2:], matrix], {"axis": 0}), ([cols[0]], {})]
    for tensors, kwargs in cases:
        ours = torch.cat(tensors, **kwargs)
        assert calls["cat"] == 0, (dtype, len(tensors), kwargs)
        _same(ours, _mindtorch("cat")(tensors, **kwargs))


def test_result_shares_memory_with_no_input(calls):
    """A join copies (PyTorch's and MindTorch's too): writes on either side after it are not seen by the other."""
    data = torch.arange(20)
    rows = [data[2:6], data[10:14]]
    stacked, joined = torch.stack(rows), torch.cat(rows)
    data[3] = 100
    rows[1].fill_(-1)
    assert stacked.tolist() == [[2, 3, 4, 5], [10, 11, 12, 13]] and joined.tolist() == [2, 3, 4, 5, 10, 11, 12, 13]
    stacked[0, 0] = 55
    joined.add_(1)
    assert data[2].item() == 2
    assert calls == {"stack": 0, "cat": 0}


def test_mindtorchs_function_where_the_fast_path_does_not_apply(calls):
    x = torch.arange(6.).view(2, 3)
    # mixed dtypes: MindTorch promotes
    _same(torch.stack([x, x.double()]), _mindtorch("stack")([x, x.double()]))
    assert torch.cat([x.int(), x]).dtype == torch.float32
    assert calls == {"stack": 1, "cat": 1}
    # out=
    out = torch.zeros(2, 2, 3)
    torch.stack([x, x], out=out)
    assert out.tolist() == [x.tolist(), x.tolist()] and calls["stack"] == 2
    # a Parameter, an input that requires grad
    p = nn.Parameter(torch.ones(3))
    torch.stack([p, p])
    w = torch.ones(3, requires_grad=True)  # a leaf: opens a recording (adapter/tape.py)
    (torch.cat([w, w]) * torch.arange(6.)).sum().backward()
    assert calls == {"stack": 3, "cat": 2}
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 5.0, 7.0])
    # shapes or dims the kernel refuses: its error, not numpy's
    for bad in (lambda f: f([x, x[:1]]), lambda f: f([x, x], dim=3)):
        with pytest.raises(Exception) as ours:
            bad(torch.stack)
        with pytest.raises(Exception) as ref:
            bad(_mindtorch("stack"))
        assert isinstance(ours.value, type(ref.value))  # patches/torch_errors.py: PyTorch's class, also the kernel's
    for bad in (lambda f: f([x, x.view(3, 2)], dim=0), lambda f: f([x, x], dim=2), lambda f: f([x, torch.ones(2)])):
        with pytest.raises(Exception) as ours:
            bad(torch.cat)
        with pytest.raises(Exception) as ref:
            bad(_mindtorch("cat"))
        assert isinstance(ours.value, type(ref.value))  # patches/torch_errors.py: PyTorch's class, also the kernel's


def test_a_recording_gets_the_kernel_and_its_gradient(calls):
    """Inside the eager bridge's recording (a module called with grad on), the join is MindSpore's recorded op: the
    gradient flows through it (d/dw sum(stack([w x, 2 w x])) = 3 x)."""
    lin = nn.Linear(3, 1, bias=False)
    x = torch.tensor([[1.0, 2.0, 3.0]])
    y = lin(x)  # opens the recording
    joined = torch.stack([y, torch.cat([y, y]).sum(0, keepdim=True)])
    joined.sum().backward()
    assert calls == {"stack": 1, "cat": 1}
    np.testing.assert_allclose(lin.weight.grad.numpy(), [[3.0, 6.0, 9.0]])


def test_compiled_graph_parses_mindtorchs_join():
    """A compiled forward (graph mode) that stacks and concatenates: the graph compiler parses the patch's function
    and takes MindTorch's branch; the values are the eager ones."""
    from adapter.compiled_forward import _ForwardCell
    from adapter.graph_semantics import run_cell

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            return torch.stack([h, h * 2], dim=1), torch.cat((h, x), dim=-1)

    net = Net()
    x = torch.rand(3, 4)
    eager = [t.numpy() for t in net(x)]
    compiled = [t.asnumpy() for t in run_cell(_ForwardCell(net), x)]
    for e, c in zip(eager, compiled):
        np.testing.assert_array_equal(c, e)
