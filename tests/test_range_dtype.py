"""Range / arange output dtype follows each call's own inputs (patches/range_dtype.py).

Without the patch, MindSpore's PyNative kernel cache reuses the kernel of an earlier Range call with equal values
and another dtype: ``torch.arange(3.)`` then ``torch.arange(3)`` gave float32 (PyTorch: int64, its documented rule:
integer arguments give int64, a float argument the default float dtype)."""
import itertools

import numpy as np


def test_ops_range_each_dtype_after_the_others():
    """Both orders of each pair of 4 dtypes with equal values (7, 19, 3): each result has its inputs' dtype and
    numpy.arange's values. Values used nowhere else in the tests, so the loop's first call is the one cached.
    (float64 without the patch: float32 even in a fresh process, MindSpore's CPU Range kernel.)"""
    import mindspore as ms
    from mindspore import ops
    dtypes = [ms.int64, ms.float32, ms.int32, ms.float64]
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


# real PyTorch 2.13: .venv-ref/bin/python -c "import torch; print(torch.arange(0, 1, 0.1, dtype=torch.float64).tolist())"
TORCH_ARANGE_0_1_01_F64 = [0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001, 0.7000000000000001, 0.8,
                           0.9]
# torch.arange(10, 0, -0.7, dtype=torch.float64).tolist()
TORCH_ARANGE_10_0_M07_F64 = [10.0, 9.3, 8.6, 7.9, 7.2, 6.5, 5.800000000000001, 5.1000000000000005, 4.4, 3.7,
                             3.0000000000000004, 2.3000000000000007, 1.6000000000000005, 0.9000000000000006,
                             0.20000000000000062]


def test_torch_arange_float64_is_computed_in_float64():
    """Without the patch: MindSpore computed these in float32 and cast (3.6e-8 off for the first)."""
    import torch
    a = torch.arange(0, 1, 0.1, dtype=torch.float64)
    assert a.dtype == torch.float64 and a.numpy().tolist() == TORCH_ARANGE_0_1_01_F64
    b = torch.arange(10, 0, -0.7, dtype=torch.float64)
    assert b.dtype == torch.float64 and len(b) == 15
    np.testing.assert_allclose(b.numpy(), TORCH_ARANGE_10_0_M07_F64, rtol=0, atol=1e-14)
    assert torch.arange(0, dtype=torch.float64).shape == (0,)  # PyTorch: an empty float64 tensor
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        c = torch.arange(0., 1., 0.1)  # no dtype, a float argument: the default dtype (PyTorch's rule)
    finally:
        torch.set_default_dtype(old)
    assert c.dtype == torch.float64 and c.numpy().tolist() == TORCH_ARANGE_0_1_01_F64
