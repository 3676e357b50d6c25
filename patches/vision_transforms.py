"""torchvision transform pipelines run as torchvision runs them: ``Compose``, ``ToPILImage``, ``PILToTensor``.

MindTorch 0.4.0 differs from torchvision 0.28 (observed; the reference is torchvision's ``transforms/transforms.py``
and ``transforms/functional.py``):

* ``Compose.__call__`` swaps ``ToTensor`` for ``ToTensorV2`` (a numpy **HWC** array) and converts to a tensor only
  at the end, so every transform after ``ToTensor`` gets a numpy HWC array instead of a CHW tensor: a user's
  ``Lambda(lambda x: torch.flatten(x))`` fails (pytorch/examples mnist_forward_forward), a tensor transform sees the
  wrong layout, and ``ToPILImage`` after ``ToTensor`` is called as ``t()(img)`` (a TypeError). Here ``Compose``
  calls each transform in turn on what the previous one returned, as torchvision does.
* ``to_pil_image`` (``ToPILImage``) of a CHW *tensor* checks ``shape[-3]`` but converts float tensors with
  MindSpore's ``mul(255).byte()``; torchvision 0.28 permutes to HWC and converts in numpy
  (``(npimg * 255).astype(np.uint8)``). Here: torchvision 0.28's function, the same numpy operations, so the same
  bytes for the same input (out-of-range floats wrap as numpy's cast does, as in torchvision).
* ``pil_to_tensor`` (``PILToTensor``): computed in numpy (``np.array(pic)`` reshaped to HWC, then CHW), the same
  values and dtype as torchvision's, without MindSpore ops per image.

Replaces: ``torchvision.transforms.Compose.__call__``, ``torchvision.transforms.functional.to_pil_image``,
``torchvision.transforms.functional.pil_to_tensor``.
"""
from __future__ import annotations

import functools
import sys

import numpy as np

from . import Patch, get_original, patch_attr


def compose_call(self, img):
    """torchvision's ``Compose.__call__``: ``for t in self.transforms: img = t(img)``."""
    for t in self.transforms:
        img = t(img)
    return img


def to_pil_image(pic, mode=None):
    """torchvision 0.28's ``to_pil_image`` (``transforms/functional.py``), line for line, in numpy.

    Raises:
        TypeError: ``pic`` is neither a tensor nor an ndarray, or its dtype has no PIL mode.
        ValueError: not 2-/3-dimensional, more than 4 channels, or a ``mode`` that does not fit.
    """
    import mindtorch.torch as torch
    from PIL import Image
    if isinstance(pic, torch.Tensor):
        if pic.ndim == 3:
            pic = pic.permute((1, 2, 0))
        pic = pic.numpy()
    elif not isinstance(pic, np.ndarray):
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if pic.ndim == 2:
        pic = np.expand_dims(pic, 2)
    if pic.ndim != 3:
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if pic.shape[-1] > 4:
        raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-1]} channels.")
    npimg = pic
    if np.issubdtype(npimg.dtype, np.floating) and mode != "F":
        npimg = (npimg * 255).astype(np.uint8)
    if npimg.shape[2] == 1:
        expected_mode = None
        npimg = npimg[:, :, 0]
        if npimg.dtype == np.uint8:
            expected_mode = "L"
        elif npimg.dtype == np.int16:
            expected_mode = "I;16" if sys.byteorder == "little" else "I;16B"
        elif npimg.dtype == np.int32:
            expected_mode = "I"
        elif npimg.dtype == np.float32:
            expected_mode = "F"
        if mode is not None and mode != expected_mode:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {np.dtype}. "
                             f"Should be {expected_mode}")
        mode = expected_mode
    elif npimg.shape[2] == 2:
        permitted = ["LA"]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for 2D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "LA"
    elif npimg.shape[2] == 4:
        permitted = ["RGBA", "CMYK", "RGBX"]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for 4D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGBA"
    else:
        permitted = ["RGB", "YCbCr", "HSV"]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for 3D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGB"
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    return _image_fromarray(npimg, mode)


def _image_fromarray(obj: np.ndarray, mode: str):
    """torchvision 0.28's ``utils._Image_fromarray``: ``Image.frombuffer`` with the array's bytes read in ``mode``
    (Pillow >= 11.3 deprecates ``fromarray(obj, mode)``, which did that), else ``Image.fromarray(obj, mode)``."""
    import PIL
    from PIL import Image
    try:
        version = tuple(int(x) for x in PIL.__version__.split("."))
    except ValueError:
        version = None
    if version is None or version < (11, 3):
        return Image.fromarray(obj, mode)
    shape = obj.__array_interface__["shape"]
    size = 1 if len(shape) == 1 else shape[1], shape[0]
    data = obj.tobytes() if obj.__array_interface__.get("strides") is not None else obj
    return Image.frombuffer(mode, size, data, "raw", mode, 0, 1)


def pil_to_tensor(pic):
    """torchvision's ``pil_to_tensor`` in numpy: ``np.array(pic)`` as (H, W, C), returned as a (C, H, W)
    tensor of the same dtype. A non-PIL input goes to MindTorch's (a TypeError, as torchvision)."""
    import mindtorch.torch as torch
    import mindtorch.torchvision.transforms.functional as F
    from PIL import Image
    if not isinstance(pic, Image.Image):
        return get_original(F, "pil_to_tensor")(pic)
    arr = np.array(pic, copy=True).reshape(pic.size[1], pic.size[0], len(pic.getbands()))
    return torch.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def apply() -> None:
    import mindtorch.torchvision.transforms.functional as F
    import mindtorch.torchvision.transforms.transforms as T
    functools.update_wrapper(to_pil_image, get_original(F, "to_pil_image"))
    functools.update_wrapper(pil_to_tensor, get_original(F, "pil_to_tensor"))
    patch_attr(T.Compose, "__call__", compose_call)
    patch_attr(F, "to_pil_image", to_pil_image)
    patch_attr(F, "pil_to_tensor", pil_to_tensor)


PATCH = Patch("vision_transforms", "Compose runs each transform on the previous one's output; ToPILImage/PILToTensor "
              "as torchvision 0.28 (CHW tensors, numpy byte conversion)", "post-import", apply,
              replaces=("torchvision.transforms.Compose.__call__", "torchvision.transforms.functional.to_pil_image",
                        "torchvision.transforms.functional.pil_to_tensor"))
