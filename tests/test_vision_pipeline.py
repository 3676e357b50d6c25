"""torchvision pipelines equal torchvision's: FakeData, ToPILImage, ToTensor, PILToTensor, Normalize, Compose.

References: ``tests/fixtures/vision/golden.npz``, recorded with real torch 2.13 + torchvision 0.28 by
``tests/fixtures/vision/make_golden.py`` from fixed inputs (rebuilt here from the same numpy seeds).
patches/vision_transforms.py and patches/fake_data.py.
"""
import os

import numpy as np
import pytest
import torch
import torchvision
import torchvision.transforms as T
from PIL import Image

from patches import fake_data

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "vision", "golden.npz")


@pytest.fixture(scope="module")
def golden():
    return dict(np.load(GOLDEN))


def inputs():
    rs = np.random.RandomState(0)
    return {"float3": (rs.randn(3, 6, 5) * 0.6 + 0.5).astype(np.float32),
            "float1": (rs.randn(1, 6, 5) * 0.6 + 0.5).astype(np.float32),
            "uint8_hwc": rs.randint(0, 256, (6, 5, 3)).astype(np.uint8),
            "gray": rs.randint(0, 256, (28, 28)).astype(np.uint8)}


def test_inputs_are_the_recorded_ones(golden):
    for k, v in inputs().items():
        np.testing.assert_array_equal(v, golden[f"in_{k}"])


def test_to_pil_image_of_chw_tensors_and_hwc_arrays(golden):
    x = inputs()
    pil3 = T.ToPILImage()(torch.from_numpy(x["float3"]))  # MindTorch: fine here, but MindSpore's byte() cast
    pil1 = T.ToPILImage()(torch.from_numpy(x["float1"]))
    pilu = T.ToPILImage()(x["uint8_hwc"])
    assert [pil3.mode, pil1.mode, pilu.mode] == list(golden["modes"])
    np.testing.assert_array_equal(np.array(pil3), golden["to_pil_float3"])  # out-of-range values wrap as numpy's
    np.testing.assert_array_equal(np.array(pil1), golden["to_pil_float1"])
    np.testing.assert_array_equal(np.array(pilu), golden["to_pil_uint8_hwc"])
    t = T.PILToTensor()(pilu)
    assert t.dtype == torch.uint8 and tuple(t.shape) == (3, 6, 5)
    np.testing.assert_array_equal(t.numpy(), golden["pil_to_tensor_rgb"])
    with pytest.raises(ValueError, match="pic should not have > 4 channels. Got 6 channels"):
        T.ToPILImage()(np.zeros((3, 5, 6), np.uint8))  # an HWC array with 6 "channels", as torchvision


def test_compose_round_trip_and_a_user_transform_after_to_tensor(golden):
    x = inputs()
    rt = T.Compose([T.ToPILImage(), T.ToTensor(), T.Normalize((0.5,) * 3, (0.5,) * 3)])(torch.from_numpy(x["float3"]))
    assert isinstance(rt, torch.Tensor) and rt.dtype == torch.float32
    np.testing.assert_array_equal(rt.numpy(), golden["round_trip"])
    seen = []

    def flatten(t):  # pytorch/examples mnist_forward_forward: Lambda(lambda x: torch.flatten(x))
        seen.append((type(t), tuple(t.shape)))
        return torch.flatten(t)

    out = T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,)), T.Lambda(flatten)])(
        Image.fromarray(x["gray"], mode="L"))
    assert seen == [(torch.Tensor, (1, 28, 28))]  # MindTorch's Compose passed a numpy (28, 28, 1) array
    np.testing.assert_array_equal(out.numpy(), golden["flatten_pipeline"])


def test_torch_random_stream_reproduced(golden):
    for seed in range(len(golden["randint_after"])):
        rs = np.random.RandomState(seed)
        x = fake_data.torch_randn(rs, (3, 7, 5))
        ref = golden["randn_3x7x5"][seed]
        # PyTorch's AVX2 Box-Muller uses SLEEF's log/sin/cos: within 4 float32 ulp of numpy's
        np.testing.assert_array_max_ulp(x, ref, maxulp=4)
        assert fake_data.torch_randint(rs, 1000) == golden["randint_after"][seed]


def _close_images(ours, ref):
    """Equal, except where PyTorch's SLEEF math moved a pixel across a byte boundary (measured: 2.4e-6 of the
    pixels, by one byte): at most 1 pixel here, by at most 1/255 (x 2 after Normalize(0.5, 0.5))."""
    diff = np.abs(ours - ref)
    assert (diff > 0).sum() <= 1 and diff.max() <= 2 / 255 + 1e-6, (diff > 0).sum()


def test_fake_data_imagenet_dummy(golden):
    ds = torchvision.datasets.FakeData(5, (3, 16, 20), 1000, T.ToTensor(), random_offset=3)
    items = [ds[i] for i in range(5)]
    assert [y for _, y in items] == list(golden["fake_imagenet_y"])
    assert all(isinstance(y, int) for _, y in items)
    for (img, _), ref in zip(items, golden["fake_imagenet_x"]):
        assert tuple(img.shape) == (3, 16, 20) and img.dtype == torch.float32
        _close_images(img.numpy(), ref)
    with pytest.raises(IndexError, match="FakeData index out of range"):
        ds[5]


def test_fake_data_dcgan_pipeline_and_global_rng_untouched(golden):
    s = 32
    ds = torchvision.datasets.FakeData(image_size=(3, s, s), transform=T.Compose([
        T.Resize(s), T.CenterCrop(s), T.ToTensor(), T.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))]))
    assert len(ds) == 1000
    torch.manual_seed(7)
    before = torch.rand(3).numpy()
    torch.manual_seed(7)
    items = [ds[i] for i in (0, 999)]
    after = torch.rand(3).numpy()
    np.testing.assert_array_equal(before, after)  # torchvision restores the global RNG state; ours never uses it
    assert [y for _, y in items] == list(golden["fake_dcgan_y"])
    for (img, _), ref in zip(items, golden["fake_dcgan_x"]):
        _close_images(img.numpy(), ref)
        assert img.min() >= -1 and img.max() <= 1


def test_fake_data_gray_pil_to_tensor_and_target_transform(golden):
    ds = torchvision.datasets.FakeData(2, (1, 28, 28), 10, T.PILToTensor(), target_transform=lambda t: t + 100)
    items = [ds[i] for i in range(2)]
    assert [y for _, y in items] == list(golden["fake_gray_y"])  # the transform got a tensor: + 100 then .item()
    for (img, _), ref in zip(items, golden["fake_gray_x"]):
        assert img.dtype == torch.uint8 and tuple(img.shape) == (1, 28, 28)
        diff = np.abs(img.numpy().astype(int) - ref.astype(int))
        assert (diff > 0).sum() <= 1 and diff.max() <= 1
