"""``torch.rand`` / ``randn`` / ``rand_like`` / ``randn_like`` (patches/random_draws.py): MindTorch's values to the bit, without a MindSpore cast
per call (ddp-tutorial-series' ``MyTrainDataset(2048)``: 4096 draws, 5.8-7.5 s per process before, about 0.1 s now;
``bench/bench_spawn_ready.py``).

The reference is MindTorch 0.4.0's own formula, ``from_numpy(np.random.<draw>(*size)).to(dtype)``, from the same numpy
seed; the cost is counted (MindTorch ``Tensor.to`` calls: one per draw before), not timed."""
import numpy as np
import pytest
import torch
from mindtorch.torch.functional import from_numpy
from mindtorch.torch.tensor import Tensor

SHAPES = [(20,), (1,), (3, 4), (2, 3, 5)]


def _bits(t):
    return t.numpy().tobytes()


@pytest.mark.parametrize("name", ["rand", "randn"])
@pytest.mark.parametrize("dtype", [None, torch.float32, torch.float64, torch.float16])
def test_values_are_mindtorchs_to_the_bit(name, dtype):
    for shape in SHAPES:
        np.random.seed(11)
        ours = getattr(torch, name)(*shape, dtype=dtype)
        np.random.seed(11)
        ref = from_numpy(getattr(np.random, name)(*shape)).to(dtype or torch.float32)
        assert ours.dtype == ref.dtype and tuple(ours.shape) == shape
        assert _bits(ours) == _bits(ref), (name, shape, dtype)
        assert type(ours) is type(ref)


@pytest.mark.parametrize("name", ["rand_like", "randn_like"])
@pytest.mark.parametrize("like_dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("dtype", [None, torch.float64])
def test_like_values_are_mindtorchs_to_the_bit(name, like_dtype, dtype):
    for shape in SHAPES:
        like = torch.zeros(*shape, dtype=like_dtype)
        np.random.seed(5)
        ours = getattr(torch, name)(like, dtype=dtype)
        np.random.seed(5)
        ref = from_numpy(getattr(np.random, name[:-5])(*shape)).to(dtype or like_dtype)
        assert ours.dtype == ref.dtype and tuple(ours.shape) == shape
        assert _bits(ours) == _bits(ref), (name, shape, like_dtype, dtype)
    assert getattr(torch, name)(like, requires_grad=True).requires_grad


def test_global_stream_and_call_forms():
    """The numpy stream advances as MindTorch's did; torch.rand(2, 3) / ((2, 3)) / (size=(2, 3)) agree."""
    np.random.seed(3)
    a = torch.rand(2, 3)
    b = torch.rand((2, 3))
    c = torch.rand(size=(2, 3))
    np.random.seed(3)
    ref = np.random.rand(3, 2, 3).astype(np.float32)
    assert [_bits(t) for t in (a, b, c)] == [r.tobytes() for r in ref]


def test_requires_grad_and_fallbacks():
    x = torch.randn(3, requires_grad=True)
    assert x.requires_grad and x.is_leaf
    assert tuple(torch.randn(()).shape) == ()  # 0-d: MindTorch's own path
    out = torch.empty(4)
    torch.rand(4, out=out)  # out=: MindTorch's own path
    assert float(out.min()) >= 0.0 and float(out.max()) < 1.0


def test_no_cast_launch_per_draw(monkeypatch):
    """The float32 result is cast on the host: MindTorch's Tensor.to (a MindSpore Cast launch, ~1.7 ms here) is not
    called; before this patch, once per draw."""
    calls = []
    original = Tensor.to

    def counting(self, *args, **kwargs):
        calls.append(args)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Tensor, "to", counting)
    x = torch.zeros(20)
    for _ in range(5):
        torch.rand(20)
        torch.randn(20)
        torch.rand_like(x)
        torch.randn_like(x)
    assert calls == []


RANDINT_FORMS = [((1000, (8,)), {}), ((5, 1000, (3, 4)), {}), ((10,), {"size": (5,)}),
                 ((), {"low": 2, "high": 9, "size": (6,)}), ((3, (2,)), {"dtype": torch.int64}), ((7, ()), {}),
                 ((0, 2 ** 31 - 1, (4,)), {})]


def test_randint_values_are_mindtorchs():
    """The default-dtype (int64) draw: MindTorch's values from the same MindSpore seed, call after call (the seed
    stream advances as MindTorch's), in each of PyTorch's call forms."""
    import mindspore
    import mindtorch.torch.functional as functional
    from adapter.patching import get_original
    mindtorch_randint = get_original(functional, "randint")
    for fn in (torch.randint, mindtorch_randint):
        mindspore.set_seed(7)
        drawn = [fn(*args, **kwargs) for args, kwargs in RANDINT_FORMS for _ in range(2)]
        if fn is torch.randint:
            ours = drawn
        else:
            ref = drawn
    for a, b in zip(ours, ref):
        assert type(a) is type(b) and a.dtype == b.dtype == torch.int64 and a.shape == b.shape
        assert a.numpy().tobytes() == b.numpy().tobytes()
        assert a.requires_grad is False


def test_randint_launches_no_int64_cast(monkeypatch):
    """MindSpore's randint casts its int32 draw to the dtype asked for (``random_func.cast_``, ~0.5 ms a call on this
    CPU): not to int64 any more; other dtypes keep MindTorch's path (and its cast)."""
    from mindspore.ops.function import random_func
    casts = []
    original = random_func.cast_

    def counting(x, dtype):
        casts.append(dtype)
        return original(x, dtype)

    monkeypatch.setattr(random_func, "cast_", counting)
    for _ in range(3):
        torch.randint(100, (8,))
        torch.randint(3, 100, (2, 2), dtype=torch.int64)
    assert torch.int64 not in casts
    assert torch.randint(100, (8,), dtype=torch.int16).dtype == torch.int16
    assert casts[-1] == torch.int16
