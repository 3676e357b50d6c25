"""memory_format= accepted as PyTorch accepts it (patches/memory_format.py): same values, PyTorch's TypeError."""
import numpy as np
import pytest


@pytest.mark.parametrize("call,dtype", [
    ("x.clone(memory_format=torch.contiguous_format)", "float32"),
    ("x.clone(memory_format=torch.preserve_format)", "float32"),
    ("x.float(memory_format=torch.channels_last)", "float32"), ("x.double(memory_format=torch.preserve_format)", "float64"),
    ("x.half(memory_format=torch.contiguous_format)", "float16"), ("x.long(memory_format=torch.preserve_format)", "int64"),
    ("x.int(memory_format=torch.preserve_format)", "int32"), ("x.bool(memory_format=torch.preserve_format)", "bool"),
    ("x.cpu(memory_format=torch.contiguous_format)", "float32"),
    ("torch.nn.Parameter(x).clone(memory_format=torch.contiguous_format)", "float32"),
])
def test_memory_format_is_accepted_and_values_unchanged(call, dtype):
    import torch
    x = torch.arange(120.).reshape(2, 3, 4, 5) / 7
    y = eval(call)
    assert str(y.dtype).rsplit(".", 1)[-1] == dtype
    np.testing.assert_array_equal(y.detach().numpy(), x.numpy().astype(dtype))


def test_memory_format_of_the_wrong_type_raises_pytorchs_error():
    import torch
    x = torch.ones(2, 3)
    with pytest.raises(TypeError, match="clone\\(\\): argument 'memory_format' must be torch.memory_format, not str"):
        x.clone(memory_format="a")
    with pytest.raises(TypeError, match="float\\(\\): argument 'memory_format' must be torch.memory_format, not int"):
        x.float(memory_format=1)
