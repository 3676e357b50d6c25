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
  (``(npimg * 255).astype(np.uint8)``). Here: torchvision 0.28's rules, our code, the same numpy operations, so the same
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
    """torchvision 0.28's ``to_pil_image`` (``transforms/functional.py``), in numpy: a CHW tensor is permuted to HWC
    and read as an ndarray, then :func:`_array_to_pil` makes the image.

    Raises:
        TypeError: ``pic`` is neither a tensor nor an ndarray, or its dtype has no PIL mode.
        ValueError: not 2-/3-dimensional, more than 4 channels, or a ``mode`` that does not fit.
    """
    import mindtorch.torch as torch
    if isinstance(pic, torch.Tensor):
        return _array_to_pil((pic.permute((1, 2, 0)) if pic.ndim == 3 else pic).numpy(), mode)
    if isinstance(pic, np.ndarray):
        return _array_to_pil(pic, mode)
    raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")


# One-channel images: the PIL mode of each array dtype (compared with ==, as torchvision does).
_GRAY_MODES = ((np.uint8, "L"), (np.int16, "I;16" if sys.byteorder == "little" else "I;16B"), (np.int32, "I"),
               (np.float32, "F"))
# Two to four channels: (modes a caller may ask for, the mode a uint8 array gets when it asks for none).
_COLOUR_MODES = {2: (("LA",), "LA"), 3: (("RGB", "YCbCr", "HSV"), "RGB"), 4: (("RGBA", "CMYK", "RGBX"), "RGBA")}


def _array_to_pil(array: np.ndarray, mode=None):
    """An (H, W) or (H, W, C) ndarray (C <= 4) as a PIL image, with torchvision 0.28's mode rules and messages.

    A float array becomes uint8 as ``(array * 255).astype(np.uint8)`` (out-of-range values wrap as numpy casts
    them) unless ``mode`` is ``"F"``. One channel: the mode follows the dtype (:data:`_GRAY_MODES`) and a given
    ``mode`` must equal it. Two to four channels: a given ``mode`` must be one of :data:`_COLOUR_MODES`; a uint8
    array without one gets the default. Raises TypeError when no mode results, ValueError as :func:`to_pil_image`.
    """
    if array.ndim not in (2, 3):
        raise ValueError(f"pic should be 2/3 dimensional. Got {array.ndim} dimensions.")
    channels = 1 if array.ndim == 2 else array.shape[-1]
    if channels > 4:
        raise ValueError(f"pic should not have > 4 channels. Got {channels} channels.")
    if mode != "F" and np.issubdtype(array.dtype, np.floating):
        array = (array * 255).astype(np.uint8)
    if channels == 1:
        array = array.reshape(array.shape[:2])
        implied = next((name for dtype, name in _GRAY_MODES if array.dtype == dtype), None)
        if mode is not None and mode != implied:
            # torchvision formats the class np.dtype here, not the array's dtype: the same text
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {np.dtype}. Should be {implied}")
        mode = implied
    else:
        kind = channels if channels in _COLOUR_MODES else 3  # an (H, W, 0) array: torchvision's 3-channel rules
        allowed, default = _COLOUR_MODES[kind]
        if mode is None:
            mode = default if array.dtype == np.uint8 else None
        elif mode not in allowed:
            raise ValueError(f"Only modes {list(allowed)} are supported for {kind}D inputs")
    if mode is None:
        raise TypeError(f"Input type {array.dtype} is not supported")
    return _image_fromarray(array, mode)


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
