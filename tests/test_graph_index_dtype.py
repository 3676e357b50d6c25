"""Compiled code gets PyTorch's int64 indices and counts from ``sort`` / ``argsort`` / ``count_nonzero``
(patches/sort.py, patches/result_dtypes.py), and ``bucketize`` compiles (patches/bucketize.py).

Their PyNative replacements cast MindSpore's int32 to int64, but they carried ``__wrapped__`` (set by hand,
``functools.wraps``), and MindSpore's graph parser compiles ``inspect.unwrap(fn)``: a compiled forward ran
MindTorch's own functions and returned int32 (measured 2026-12-06, mindspore 2.10: OpInfo ``argsort:s0``,
``sort:s0``, ``count_nonzero:s0`` graph "dtype int32, PyTorch's int64"; every result below was Int32 without the fix).
Values: numpy's order of distinct values and count (closed forms); dtype: PyTorch's (int64)."""
import numpy as np
import pytest
import torch  # MindTorch (tests/conftest.py); a module global: an import inside compiled code does not compile

pytestmark = pytest.mark.stack  # passes on mindspore-dev 2.5 too (2026-12-07): CI runs it on both stacks


def _forward(x):
    return (torch.argsort(x, 1), x.argsort(0, descending=True), torch.sort(x, 0)[1], x.sort(descending=True)[1],
            torch.count_nonzero(x), x.count_nonzero(1))


def test_compiled_indices_and_counts_are_int64():
    import mindspore
    from adapter.compiled_forward import _ForwardCell
    from adapter.graph_semantics import run_cell

    class Net(torch.nn.Module):
        def forward(self, x):
            return _forward(x)

    sample = ((np.arange(12.0) * 7) % 12 / 12).reshape(3, 4).astype(np.float32)  # distinct values, one zero
    out = run_cell(_ForwardCell(Net()), torch.tensor(sample))
    want = (np.argsort(sample, 1), np.argsort(-sample, 0), np.argsort(sample, 0), np.argsort(-sample, 1),
            np.count_nonzero(sample), np.count_nonzero(sample, 1))
    assert len(out) == len(want)
    for i, (got, expected) in enumerate(zip(out, want)):
        assert got.dtype == mindspore.int64, (i, got.dtype)
        np.testing.assert_array_equal(got.asnumpy(), expected, err_msg=str(i))


def _bucketize(x):
    edges = torch.tensor([0.1, 0.3, 0.5, 0.5, 0.9])
    return torch.bucketize(x, edges), torch.bucketize(x, edges, right=True, out_int32=True)


def test_compiled_bucketize():
    """patches/bucketize.py: compiled (before: "cannot get attributes numpy"), numpy's searchsorted values (PyTorch's
    definition of bucketize: left / right side), int64 and int32 (``out_int32``)."""
    import mindspore
    from adapter.compiled_forward import _ForwardCell
    from adapter.graph_semantics import run_cell

    class Net(torch.nn.Module):
        def forward(self, x):
            return _bucketize(x)

    sample = ((np.arange(12.0) * 7) % 12 / 12).reshape(3, 4).astype(np.float32)
    left, right = run_cell(_ForwardCell(Net()), torch.tensor(sample))
    edges = np.array([0.1, 0.3, 0.5, 0.5, 0.9], np.float32)
    assert (left.dtype, right.dtype) == (mindspore.int64, mindspore.int32)
    np.testing.assert_array_equal(left.asnumpy(), np.searchsorted(edges, sample, side="left"))
    np.testing.assert_array_equal(right.asnumpy(), np.searchsorted(edges, sample, side="right"))
