"""``tensor.numpy()`` reuses numpy's parse of the buffer format (patches/numpy_buffer_dtype.py): same arrays, the
Python parser runs once per format string, not once per call."""
import numpy as np
import torch

from patches import numpy_buffer_dtype


def _counting(parse, counts):
    def counted(spec):
        counts[spec] = counts.get(spec, 0) + 1
        return parse(spec)
    return counted


def test_memo_parses_a_plain_format_once_and_a_structured_one_every_time():
    module = numpy_buffer_dtype._internal_module()
    original = getattr(module._dtype_from_pep3118, "__wrapped__", module._dtype_from_pep3118)
    counts = {}
    parse = numpy_buffer_dtype.memoized(_counting(original, counts))
    for _ in range(5):
        assert parse("<f") == np.dtype(np.float32)
        assert parse("<q") == np.dtype(np.int64)
    structured = [parse("T{<f:x:<i:y:}") for _ in range(3)]
    assert counts == {"<f": 1, "<q": 1, "T{<f:x:<i:y:}": 3}
    assert structured[0] is not structured[1]  # field names of a structured dtype can be reassigned: not shared
    assert structured[0].names == ("x", "y")


def test_tensor_numpy_goes_through_the_memo():
    """pybind11 (MindSpore's asnumpy) looks the parser up once, during ``import mindspore``: the launcher installs
    the memo before that (phase "pre-mindspore"), so .numpy() fills it, and a second call parses nothing."""
    module = numpy_buffer_dtype._internal_module()
    installed = module._dtype_from_pep3118
    assert hasattr(installed, "_adapter_memo"), "patch numpy_buffer_dtype not installed"
    memo = installed._adapter_memo
    saved = dict(memo)
    memo.clear()
    try:
        x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
        a = x.numpy()
        filled = dict(memo)
        b = x.numpy()
    finally:
        memo.update(saved)
    assert [np.dtype(d) for d in filled.values()] == [np.dtype(np.float32)]  # MindSpore's asnumpy used the memo
    np.testing.assert_array_equal(a, np.arange(6, dtype=np.float32).reshape(2, 3))
    assert a.dtype == b.dtype == np.float32 and a.shape == (2, 3)
