"""What scripts print for dtypes and sizes (patches/printing.py), against PyTorch 2.13's text (observed with
``.venv-ref/bin/python``): MindTorch printed ``mindtorch.float32`` / ``mindspore.float32`` / ``mindtorch.Size([2])``,
and ``torch.Size([]).numel()`` raised."""
import pytest
import torch


@pytest.mark.parametrize("dtype, text", [(torch.float32, "torch.float32"), (torch.int64, "torch.int64"),
                                         (torch.bool, "torch.bool"), (torch.bfloat16, "torch.bfloat16"),
                                         (torch.complex64, "torch.complex64"), (torch.uint8, "torch.uint8"),
                                         (torch.long, "torch.int64"), (torch.double, "torch.float64"),
                                         (torch.half, "torch.float16")])
def test_dtype_text(dtype, text):
    assert str(dtype) == repr(dtype) == f"{dtype}" == text


def test_tensor_dtype_compares_as_in_pytorch():
    x = torch.ones(2)
    assert str(x.dtype) == "torch.float32" and str(torch.tensor([1]).dtype) == "torch.int64"
    assert x.dtype == torch.float32 and x.double().dtype == torch.float64


def test_size():
    s = torch.ones(2, 3, 4).size()
    assert (repr(s), str(s), repr(s[1:]), repr(s + (5,))) == (
        "torch.Size([2, 3, 4])", "torch.Size([2, 3, 4])", "torch.Size([3, 4])", "torch.Size([2, 3, 4, 5])")
    assert type(s[0]) is int and s.numel() == 24 and s[1:].numel() == 12
    assert torch.Size([]).numel() == 1 and repr(torch.Size([])) == "torch.Size([])"
    assert s == (2, 3, 4) and list(s) == [2, 3, 4]
