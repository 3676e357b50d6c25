"""``torchvision.datasets.FakeData`` as torchvision 0.28's: CHW image size, PyTorch's random stream per index.

MindTorch 0.4.0's ``FakeData`` takes ``image_size`` as (H, W, C) (default ``(224, 224, 3)``) and draws the image as
``np.asarray(np.random.RandomState(index).randn(*image_size), dtype=np.uint8)``: a script passing torchvision's
(C, H, W) (``FakeData(1281167, (3, 224, 224), 1000, ToTensor())``: pytorch/examples imagenet ``--dummy``; dcgan
``--dataset fake``) fails in ``ToPILImage`` with "pic should not have > 4 channels. Got 224 channels", and the
values (a float-to-uint8 cast of N(0,1) samples: almost all 0/1/254/255) are not torchvision's either.

torchvision 0.28's ``FakeData.__getitem__`` (``datasets/fakedata.py``): save the global RNG state,
``torch.manual_seed(index + random_offset)``, ``img = torch.randn(*image_size)`` (C, H, W), ``target =
torch.randint(0, num_classes, (1,))[0]``, restore the RNG state, ``img = ToPILImage()(img)`` (float -> ``(x * 255)
.astype(uint8)`` in numpy, HWC), then ``transform``/``target_transform``; returns ``(img, target.item())``;
IndexError past ``size``. Here the same, with PyTorch's CPU random stream reproduced in numpy (:func:`torch_randn`,
:func:`torch_randint`), so the images and targets are PyTorch's for the same index and offset:

* ``torch.manual_seed(s)`` seeds a 32-bit Mersenne Twister with ``init_genrand(s)`` (``aten/src/ATen/core/
  MT19937RNGEngine.h``), which is what ``numpy.random.RandomState(s)`` does for an integer seed; its raw 32-bit
  outputs are ``randint(0, 2**32, dtype=uint32)``.
* ``torch.randn`` of >= 16 float32 elements (``aten/src/ATen/native/cpu/DistributionTemplates.h``, ``normal_fill``):
  one uniform per element, ``(r & (2**24 - 1)) * 2**-24``; then per block of 16, Box-Muller on pairs (j, j + 8):
  ``radius = sqrt(-2 log(1 - u[j]))``, ``theta = 2 pi u[j+8]``, ``x[j] = radius cos(theta)``, ``x[j+8] = radius
  sin(theta)``; when the count is not a multiple of 16, the last 16 are redrawn from 16 new uniforms.
* ``torch.randint(0, n, (1,))``: the next raw output ``% n``.

Measured against real PyTorch 2.13 (``tests/test_vision_pipeline.py``; 300 seeds of 3x64x64): the random stream and
every target are identical; float values differ by at most 4 ulp (PyTorch's AVX2 kernel uses SLEEF's log/sin/cos,
numpy its own), which changed 9 of 3,686,400 image bytes by one (2.4e-6 of the pixels, by 1/255). Images smaller
than 16 elements (PyTorch's scalar double-precision path) are drawn from the same stream by the same formula: not
bit-exact there.

Replaces: ``torchvision.datasets.FakeData.__init__``, ``torchvision.datasets.FakeData.__getitem__``.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

import numpy as np

from . import Patch, patch_attr


def _uniform24(rs: np.random.RandomState, n: int) -> np.ndarray:
    raw = rs.randint(0, 2 ** 32, size=n, dtype=np.uint32)
    return (raw & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(1.0 / (1 << 24))


def _box_muller16(u: np.ndarray) -> np.ndarray:
    """PyTorch's ``normal_fill_16`` on rows of 16 float32 uniforms (shape (..., 16)), in float32."""
    radius = np.sqrt(np.float32(-2) * np.log(np.float32(1) - u[..., :8]))
    theta = np.float32(2.0 * np.pi) * u[..., 8:]
    out = np.empty_like(u)
    out[..., :8] = radius * np.cos(theta)
    out[..., 8:] = radius * np.sin(theta)
    return out


def torch_randn(rs: np.random.RandomState, shape: Tuple[int, ...]) -> np.ndarray:
    """``torch.randn(*shape)`` (float32, CPU) from the Mersenne Twister state ``rs``, which it advances as PyTorch's
    generator advances. See the module docstring for the source and the accuracy."""
    n = int(np.prod(shape))
    u = _uniform24(rs, n)
    out = np.empty(n, np.float32)
    full = n - n % 16
    out[:full] = _box_muller16(u[:full].reshape(-1, 16)).reshape(-1)
    if n % 16:
        tail = _box_muller16(_uniform24(rs, 16))
        if n >= 16:
            out[n - 16:] = tail
        else:
            out[:] = tail[:n]
    return out.reshape(shape)


def torch_randint(rs: np.random.RandomState, high: int) -> int:
    """``torch.randint(0, high, (1,))[0]`` (high < 2**32) from ``rs``: the next raw 32-bit output modulo ``high``."""
    return int(rs.randint(0, 2 ** 32, dtype=np.uint32)) % int(high)


def _init(self, size: int = 1000, image_size: Tuple[int, int, int] = (3, 224, 224), num_classes: int = 10,
          transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
          random_offset: int = 0) -> None:
    """torchvision's ``FakeData(size, image_size (C, H, W), num_classes, transform, target_transform,
    random_offset)``."""
    from mindtorch.torchvision.datasets.vision import VisionDataset
    VisionDataset.__init__(self, None, transform=transform, target_transform=target_transform)
    self.size = size
    self.num_classes = num_classes
    self.image_size = image_size
    self.random_offset = random_offset


def _getitem(self, index: int) -> Tuple[Any, Any]:
    """``(image, target)`` for ``index``: PyTorch's image and class for the seed ``index + random_offset``; the
    global RNG is not touched. Raises IndexError for ``index >= len(self)``."""
    import mindtorch.torch as torch
    from mindtorch.torchvision import transforms
    if index >= len(self):
        raise IndexError(f"{self.__class__.__name__} index out of range")
    rs = np.random.RandomState((index + self.random_offset) & 0xFFFFFFFF)
    img = torch_randn(rs, tuple(self.image_size))
    target = torch.tensor(torch_randint(rs, self.num_classes), dtype=torch.int64)
    img = transforms.ToPILImage()(torch.from_numpy(img))
    if self.transform is not None:
        img = self.transform(img)
    if self.target_transform is not None:
        target = self.target_transform(target)
    return img, target.item()


def apply() -> None:
    from mindtorch.torchvision.datasets.fakedata import FakeData
    patch_attr(FakeData, "__init__", _init)
    patch_attr(FakeData, "__getitem__", _getitem)


PATCH = Patch("fake_data", "FakeData takes (C, H, W) and yields torchvision's images/targets per index "
              "(PyTorch's random stream reproduced in numpy)", "post-import", apply,
              replaces=("torchvision.datasets.FakeData.__init__", "torchvision.datasets.FakeData.__getitem__"))
