"""Indexing with PyTorch's rules for sequence and integer components (patches/indexing.py), against real PyTorch:
83 reads and writes recorded in tests/fixtures/indexing_reference.json (tests/fixtures/indexing_cases.py says how),
and compiled graphs keep MindSpore's indexing."""
import sys
import warnings

import numpy as np
import pytest

from support import FIXTURES, load_reference, ours_fixture

sys.path.insert(0, FIXTURES)
REFERENCE = load_reference("indexing_reference.json", "cases")


ours = ours_fixture("indexing_cases", "evaluate", np)


@pytest.mark.parametrize("case", list(REFERENCE))
def test_index_equals_pytorch(ours, case):
    assert ours[case] == REFERENCE[case]


def test_mnist_forward_forward_overlay():
    """pytorch/examples mnist_forward_forward main.py:26-29 (overlay_y_on_x), with a tensor label and an int one."""
    import torch
    x = torch.rand(6, 20)
    y = torch.tensor([3, 0, 9, 1, 1, 5])
    for label in (y, 4):
        x_ = x.clone()
        x_[:, :10] *= 0.0
        x_[range(x.shape[0]), label] = x.max()
        expect = x.numpy().copy()
        expect[:, :10] = 0
        expect[np.arange(6), label.numpy() if isinstance(label, torch.Tensor) else label] = x.numpy().max()
        np.testing.assert_array_equal(x_.numpy(), expect)


def test_numpy_integer_slice_bounds():
    """timm's CutMix (timm/data/mixup.py:211): ``x[:, :, yl:yh, xl:xh] = x.flip(0)[:, :, yl:yh, xl:xh]`` with numpy
    int64 bounds (from ``np.clip``). PyTorch takes them as ints; MindSpore raised "Slice index type must be int,
    tensor or none". Expected values: numpy's, whose slice semantics are PyTorch's."""
    import torch
    a = np.arange(2 * 3 * 6 * 5, dtype=np.float32).reshape(2, 3, 6, 5)
    yl, yh, xl, xh = np.clip(np.array([1, 4, -2, 3]), 0, 5)
    x = torch.tensor(a)
    np.testing.assert_array_equal(x[:, :, yl:yh, xl:xh].numpy(), a[:, :, 1:4, 0:3])
    np.testing.assert_array_equal(x[np.int64(1):].numpy(), a[1:])
    x[:, :, yl:yh, xl:xh] = x.flip(0)[:, :, yl:yh, xl:xh]
    expect = a.copy()
    expect[:, :, 1:4, 0:3] = a[::-1][:, :, 1:4, 0:3]
    np.testing.assert_array_equal(x.numpy(), expect)


def test_parameter_indexing_and_warning_location():
    import torch
    p = torch.nn.Parameter(torch.zeros(3, 4))
    with torch.no_grad():
        p[range(2), 1] = 2.0
        p[1, :, ] = torch.arange(4.)
    assert p.numpy().tolist() == [[0, 2, 0, 0], [0, 1, 2, 3], [0, 0, 0, 0]]
    np.testing.assert_array_equal(p[2, range(4)].numpy(), [0, 0, 0, 0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.zeros(3, 4)[[range(2), range(2)]]
    assert [w.filename for w in caught if "non-tuple sequence" in str(w.message)] == [__file__]


def test_compiled_graph_keeps_mindspore_indexing():
    import torch
    import torch.nn as nn
    from adapter.compiled_forward import _ForwardCell
    from adapter.graph_semantics import run_cell

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(5, 5)

        def forward(self, x, idx):
            h = self.fc(x)
            a = h[:, 0]
            h2 = h * 1
            h2[0] = 7.0
            h2[:, 1] = a
            h2[idx, 2] = 0.0
            return a, h[idx], h[1:3, [0, 2]], h2

    net = Net()
    x, idx = torch.rand(4, 5), torch.tensor([0, 2])
    eager = [t.numpy() for t in net(x, idx)]
    compiled = [t.asnumpy() for t in run_cell(_ForwardCell(net), x, idx)]
    for e, c in zip(eager, compiled):
        np.testing.assert_array_equal(c, e)


def test_arange_of_ints_stays_int64_after_the_indexing_cases(ours):
    """The cases compute torch.arange(3.); MindSpore's kernel cache then gave torch.arange(3) float32
    (patches/range_dtype.py, tests/test_range_dtype.py)."""
    import torch
    assert torch.arange(3).dtype == torch.int64


PLAIN = [slice(5, 69), slice(None, -1), slice(-3, None, 1), 2, -1, (slice(None), 0), (Ellipsis, slice(None, -1)),
         (None, slice(1, 3)), (1, slice(0, 2), None), slice(100, 200), slice(7, 3)]
NOT_PLAIN = [slice(0, 6, 2), slice(np.int64(1), 4), np.int64(2), (slice(None), [0, 2]), [1, 2], range(2), True,
             (0, [0, 1])]


def test_plain_index_takes_mindtorchs_getitem_directly(monkeypatch):
    """An index of Python ints, None, ... and unit-step int slices (get_batch's ``data[i:i + block]``) goes to
    MindTorch's getitem as is, without the mode check and the scan (~20 us of ~70 on this CPU): the same result as
    the scan's path, which hands such an index to MindTorch unchanged; anything else still takes the scan."""
    import torch
    from patches import indexing
    scans = []
    scan = indexing._normalize
    monkeypatch.setattr(indexing, "_normalize", lambda *a: scans.append(a) or scan(*a))
    x = torch.arange(60.).view(4, 15)
    v = torch.arange(10)
    for index in PLAIN:
        target = v if isinstance(index, slice) else x
        ours = target[index]
        ref = indexing._tensor_getitem(target, index)
        assert ours.dtype == ref.dtype and ours.shape == ref.shape and ours.numpy().tolist() == ref.numpy().tolist()
    assert scans == []
    for index in NOT_PLAIN:
        x[index]
    assert len(scans) == len(NOT_PLAIN)
