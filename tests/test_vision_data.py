"""The numpy data-pipeline patch gives the same values as MindTorch's own transforms and dataset."""
import os

import numpy as np
import pytest
import torch
import torchvision
import torchvision.transforms as T
import mindtorch.torchvision.transforms.functional as F
from PIL import Image

from support import ROOT


@pytest.mark.parametrize("mode,shape", [("L", (28, 28)), ("RGB", (32, 32, 3))])
def test_to_tensor_and_normalize_bit_identical_to_mindtorch(mode, shape):
    rng = np.random.default_rng(0)
    img = Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8), mode=mode)
    ours, theirs = F.to_tensor(img), F.to_tensor.__wrapped__(img)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == torch.float32
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    c = ours.shape[0]
    mean, std = [0.4914, 0.4822, 0.4465][:c], [0.2023, 0.1994, 0.2010][:c]
    np.testing.assert_array_equal(F.normalize(ours, mean, std).numpy(),
                                  F.normalize.__wrapped__(theirs, mean, std).numpy())
    # and torchvision's documented formula: x / 255, then (x - mean) / std, in float32
    x = np.asarray(img, np.float32).reshape(shape[0], shape[1], -1).transpose(2, 0, 1) / np.float32(255)
    np.testing.assert_array_equal(ours.numpy(), x)


def test_to_tensor_rejects_what_torchvision_rejects():
    with pytest.raises(TypeError):
        F.to_tensor([1, 2, 3])


@pytest.mark.skipif(not os.path.isdir(os.path.join(ROOT, "data", "FashionMNIST", "raw")), reason="run 'make data'")
def test_fashion_mnist_items_unchanged():
    ds = torchvision.datasets.FashionMNIST(os.path.join(ROOT, "data"), train=False, transform=T.ToTensor())
    for i in (0, 1234, 9999):
        img, label = ds[i]
        assert label == int(ds.targets[i])
        np.testing.assert_array_equal(img.numpy()[0], ds.data[i].numpy().astype(np.float32) / np.float32(255))


def test_padded_max_pool2d_equals_mindtorch_values_and_grads():
    """patches/max_pool.py against MindTorch's own max_pool3d route, values and gradients (value_and_grad)."""
    import mindspore as ms
    import mindtorch.torch.nn.functional as F
    x = torch.tensor(np.random.default_rng(3).standard_normal((2, 3, 9, 8)).astype(np.float32))
    ours = lambda t: (F.max_pool2d(t, 3, 2, 1) ** 2).sum()  # noqa: E731
    from adapter.patching import get_original
    mindtorchs = get_original(F, "max_pool2d")  # under max_pool's patch and nan_propagation's (which has no __wrapped__)
    theirs = lambda t: (mindtorchs(t, 3, 2, 1) ** 2).sum()  # noqa: E731
    (v1, g1), (v2, g2) = ms.value_and_grad(ours)(x), ms.value_and_grad(theirs)(x)
    np.testing.assert_allclose(float(v1), float(v2), rtol=1e-6)
    np.testing.assert_allclose(g1.asnumpy(), g2.asnumpy(), rtol=1e-6)
    assert tuple(F.max_pool2d(x, 3, 2, 1).shape) == (2, 3, 5, 4)


def _loader_batches(ds, batch_size=50, n=3):
    loader = torch.utils.data.DataLoader(ds, batch_size=batch_size, shuffle=True)
    np.random.seed(7)  # the RandomSampler's order (patches/random_sampler.py draws from numpy)
    out = []
    for i, (x, y) in enumerate(loader):
        out.append((x, y))
        if i + 1 == n:
            break
    return out


@pytest.mark.skipif(not os.path.isdir(os.path.join(ROOT, "data", "FashionMNIST", "raw")), reason="run 'make data'")
@pytest.mark.parametrize("transform,batched", [
    (lambda: T.ToTensor(), True),
    (lambda: T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))]), True),
    (lambda: T.Compose([T.ToTensor()]), True),
    (lambda: T.Compose([T.ToTensor(), T.Normalize((0.5, 0.4, 0.3), (0.2, 0.2, 0.2))]), False),  # 3 means, 1 channel
    (lambda: T.Compose([T.ToTensor(), T.Lambda(lambda x: x * 2)]), False),  # a transform of the user's
])
def test_mnist_loader_batches_whole_batch_in_numpy_with_per_sample_values(monkeypatch, transform, batched):
    """patches/vision_data.py ``mnist_batch``: an MNIST-family loader with plain ToTensor[/Normalize] collates the
    batch at once (no per-sample __getitem__), with the bits, dtypes and shapes of the per-sample path; other
    pipelines are fetched sample by sample."""
    import functools
    import mindtorch.torchvision.datasets.mnist as mnist
    ds = torchvision.datasets.FashionMNIST(os.path.join(ROOT, "data"), train=False, transform=transform())
    calls = []
    to_tensor = F.to_tensor

    @functools.wraps(to_tensor)
    def counted(pic):  # ToTensor() per sample
        calls.append(1)
        return to_tensor(pic)
    monkeypatch.setattr(F, "to_tensor", counted)
    fast = _loader_batches(ds)
    assert (len(calls) == 0) == batched, len(calls)
    monkeypatch.setattr(mnist.MNIST, "_adapter_collated_batch", lambda dataset, indices: None)
    slow = _loader_batches(ds)
    assert len(calls) > 0
    for (x1, y1), (x2, y2) in zip(fast, slow):
        assert isinstance(x1, torch.Tensor) and isinstance(y1, torch.Tensor)
        assert x1.dtype == x2.dtype and y1.dtype == y2.dtype == torch.int64
        assert tuple(x1.shape) == tuple(x2.shape)
        np.testing.assert_array_equal(x1.numpy(), x2.numpy())
        np.testing.assert_array_equal(y1.numpy(), y2.numpy())


@pytest.mark.skipif(not os.path.isdir(os.path.join(ROOT, "data", "FashionMNIST", "raw")), reason="run 'make data'")
def test_mnist_batch_target_transform_goes_sample_by_sample():
    from patches.vision_data import mnist_batch
    ds = torchvision.datasets.FashionMNIST(os.path.join(ROOT, "data"), train=False, transform=T.ToTensor(),
                                           target_transform=lambda t: t + 1)
    assert mnist_batch(ds, [0, 1]) is None
    ds.target_transform = None
    images, targets = mnist_batch(ds, [0, 1])
    assert images.shape == (2, 1, 28, 28) and images.dtype == np.float32 and targets.dtype == np.int64
