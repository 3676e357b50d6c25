"""Range / arange output dtype follows each call's own inputs (patches/range_dtype.py).

Without the patch, MindSpore's PyNative kernel cache reuses the kernel of an earlier Range call with equal values
and another dtype: ``torch.arange(3.)`` then ``torch.arange(3)`` gave float32 (PyTorch: int64, its documented rule:
integer arguments give int64, a float argument the default float dtype)."""
import itertools

import numpy as np


def test_ops_range_each_dtype_after_the_others():
    """Both orders of each pair of 3 dtypes with equal values (7, 19, 3): each result has its inputs' dtype and
    numpy.arange's values. Values used nowhere else in the tests, so the loop's first call is the one cached.
    (float64 is left out: MindSpore's Range computes float64 inputs in float32 even in a fresh process.)"""
    import mindspore as ms
    from mindspore import ops
    dtypes = [ms.int64, ms.float32, ms.int32]
    for order in itertools.permutations(dtypes, 2):
        for dt in order:
            out = ops.arange(ms.Tensor(7, dt), ms.Tensor(19, dt), ms.Tensor(3, dt))
            assert (order, out.dtype) == (order, dt)
            np.testing.assert_array_equal(out.asnumpy(), [7, 10, 13, 16])
            assert out.asnumpy().dtype == ms.dtype_to_nptype(dt)


def test_torch_arange_int_after_float_with_equal_values():
    """PyTorch 2.13 (closed rule, torch.arange docs): int args -> int64; a float arg -> torch.get_default_dtype()."""
    import torch
    assert torch.arange(11.).dtype == torch.float32
    assert torch.arange(11).dtype == torch.int64
    assert torch.arange(0, 11, 1).dtype == torch.int64
    assert torch.arange(0., 11., 1.).dtype == torch.float32
    assert torch.arange(11, dtype=torch.float64).dtype == torch.float64
    x = torch.arange(11)
    assert x.numpy().dtype == np.int64 and x.numpy().tolist() == list(range(11))
    # an int64 arange used as an index right after a float one with the same values
    assert torch.zeros(12)[torch.arange(3.).long()].shape == (3,)
    assert torch.zeros(12)[torch.arange(3)].shape == (3,)
