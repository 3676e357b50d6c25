"""``torchvision.transforms.v2`` (+ ``.functional``) and ``torchvision.tv_tensors``: MindTorch 0.4.0 has neither
(``import torchvision.transforms.v2`` raised ``ModuleNotFoundError KeyError('torchvision.transforms.v2')``).

Built on the v1 transforms that work here (``patches/vision_transforms.py``, ``patches/vision_data.py``), with v2's
semantics where they differ from v1 (reference: torchvision 0.28's ``transforms/v2/``):

* ``ToImage``: PIL image or HWC ndarray -> CHW tensor of the same dtype (uint8 for 8-bit images), no scaling.
* ``ToDtype(dtype, scale)``: ``scale=True`` maps uint8 -> float to [0, 1] (``x * (1 / 255)``, in the float dtype) and float -> uint8 as
  ``x * (255 + 1 - 1e-3)`` truncated (``functional/_misc.py`` ``to_dtype_image``); a dict ``dtype`` is not supported.
* A sample may be an image, or a tuple/list/dict holding one: the image (the PIL images if any, else the first
  tensor, as v2's ``_needs_transform_list`` picks them) is transformed, labels and other items pass through unchanged.
  A random transform on a sample with more than one image raises (v2 shares one draw between them; not done here).
* ``CutMix``/``MixUp`` on ``(images, labels)`` batches: torchvision's formulas (``_augment.py``): ``lam`` ~
  Beta(alpha, alpha) (drawn from numpy's global RNG here, seeded by ``torch.manual_seed``: not PyTorch's values),
  ``images.roll(1, 0) * (1 - lam) + images * lam``; CutMix pastes the rolled batch into the box and mixes the
  one-hot labels with ``1 - box_area / (H * W)``.
* ``Resize`` / ``F.resize`` / ``RandomResizedCrop`` of uint8/float32 tensors: Pillow's bilinear filter per channel,
  which is torchvision's antialiased tensor kernel (MindTorch's v1 tensor resize gives other values); see
  :func:`resize`. PIL images go through v1 (Pillow, as torchvision).
* ``ToPureTensor`` is the identity (MindTorch tensors have no tv_tensor subclasses); ``tv_tensors.Image(x)``
  returns ``x`` as a CHW tensor.

The random transforms use v1's draws (MindTorch's RNG): shapes and ranges as torchvision, values not PyTorch's.
A v2 name not provided here raises AttributeError naming the script's ``file:line``.

Replaces (adds): ``torchvision.transforms.v2``, ``torchvision.tv_tensors``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import Patch, patch_attr


def _missing(module_name: str, name: str):
    from adapter.userframe import user_location
    where = user_location(2) or "<unknown>"
    return AttributeError(f"{where}: {module_name}.{name} is not provided by the adapter (patches/transforms_v2.py "
                          f"implements the common v2 transforms); use the v1 transform from torchvision.transforms "
                          f"or write it as a v2.Lambda")


def _missing_getattr(module_name: str):
    """A module ``__getattr__`` (PEP 562) raising :func:`_missing` for names the module does not define."""
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise _missing(module_name, name)
    return __getattr__


def _is_tensor(x):
    import mindtorch.torch as torch
    return isinstance(x, torch.Tensor)


def _is_pil(x):
    from PIL import Image
    return isinstance(x, Image.Image)


def _flatten(sample, out):
    if isinstance(sample, (tuple, list)):
        for s in sample:
            _flatten(s, out)
    elif isinstance(sample, dict):
        for s in sample.values():
            _flatten(s, out)
    else:
        out.append(sample)
    return out


def _rebuild(sample, it):
    if isinstance(sample, (tuple, list)):
        return type(sample)(_rebuild(s, it) for s in sample)
    if isinstance(sample, dict):
        return {k: _rebuild(v, it) for k, v in sample.items()}
    return next(it)


def _image_mask(leaves):
    """Which leaves are images: all PIL images / ndarrays when present, else the first tensor (v2's rule for pure
    tensors)."""
    mask = [_is_pil(x) for x in leaves]
    if any(mask):
        return mask
    for i, x in enumerate(leaves):
        if _is_tensor(x) or isinstance(x, np.ndarray):
            mask[i] = True
            break
    return mask


class Transform:
    """v2's ``Transform``: ``t(*inputs)`` transforms the image(s) of the sample with :meth:`_image`, and returns the
    sample's structure with other items unchanged."""
    _random = False

    def _image(self, img):  # pragma: no cover - subclasses
        raise NotImplementedError

    def __call__(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        leaves = _flatten(sample, [])
        mask = _image_mask(leaves)
        if self._random and sum(mask) > 1:
            from adapter.userframe import user_location
            raise NotImplementedError(f"{user_location(2) or '<unknown>'}: {type(self).__name__} on a sample with "
                                      f"{sum(mask)} images: v2 applies one random draw to all of them, which the "
                                      f"adapter does not (patches/transforms_v2.py); pass one image per call")
        out = [self._image(x) if m else x for x, m in zip(leaves, mask)]
        return _rebuild(sample, iter(out))

    def forward(self, *inputs):
        return self(*inputs)

    def __repr__(self):
        return f"{type(self).__name__}()"


class _V1(Transform):
    """A v2 transform computed by the v1 transform of the same name (PIL images and CHW tensors)."""
    _v1_name = None

    def __init__(self, *args, **kwargs):
        import mindtorch.torchvision.transforms as T
        kwargs.pop("antialias", None)  # PIL resizes always antialias; v1 here has no antialias for tensors
        self._v1 = getattr(T, self._v1_name or type(self).__name__)(*args, **kwargs)

    def _image(self, img):
        return self._v1(img)

    def __getattr__(self, name):
        if name == "_v1" or name.startswith("__"):  # dunders (pickle's __getstate__) are this object's own
            raise AttributeError(name)
        return getattr(self._v1, name)

    def __repr__(self):
        return repr(self._v1)


def _v1_class(name, random):
    """The v2 class ``name`` over v1's, also a global of this module (so that pickle finds it: spawn workers)."""
    cls = type(name, (_V1,), {"_random": random, "__doc__": f"v2.{name}: torchvision's v1 ``{name}`` on the "
                                                              f"sample's image; other items pass through."})
    globals()[name] = cls
    return cls


_DETERMINISTIC = ["CenterCrop", "Normalize", "Grayscale", "Pad", "GaussianBlur"]
_RANDOM = ["RandomCrop", "RandomHorizontalFlip", "RandomVerticalFlip", "ColorJitter",
           "RandomRotation", "RandomErasing", "AutoAugment", "TrivialAugmentWide", "RandAugment", "RandomGrayscale"]


def _output_size(h: int, w: int, size, max_size=None):
    """torchvision 0.28's ``_compute_resized_output_size`` (``transforms/functional.py``): ``[new_h, new_w]``; an int
    (or 1-list) ``size`` is the smaller edge, the longer one ``int(size * long / short)``, capped by ``max_size``."""
    if isinstance(size, int):
        size = [size]
    short, long = (w, h) if w <= h else (h, w)
    if size is None:
        new_short, new_long = int(max_size * short / long), max_size
    elif len(size) == 1:
        new_short, new_long = size[0], int(size[0] * long / short)
        if max_size is not None:
            if max_size <= size[0]:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the requested size for the "
                                 f"smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
    else:
        return [int(size[0]), int(size[1])]
    new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    return [new_h, new_w]


def resize(inpt, size, interpolation=None, max_size=None, antialias=True):
    """``v2.functional.resize``. PIL images: v1's ``resize`` (Pillow; antialiased as torchvision). (..., H, W)
    tensors with bilinear interpolation: each channel resized by Pillow's bilinear filter (``L`` for uint8, ``F``
    for float32), which is what torchvision 0.28's antialiased tensor kernel computes (uint8: equal byte for byte,
    measured on 3x20x24 down to 10x12 and up to 30x36; float32: to float rounding). MindTorch's v1 tensor resize gave
    other values (that 10x12 case: sum 44846, torchvision 45029), so it is used only for other interpolations or
    dtypes, or an ``antialias=False`` downscale, with a warning at the script's line.
    """
    import mindtorch.torch as torch
    import mindtorch.torchvision.transforms.functional as F1
    from mindtorch.torchvision.transforms.functional import InterpolationMode
    interpolation = InterpolationMode.BILINEAR if interpolation is None else interpolation
    if not _is_tensor(inpt):
        return F1.resize(inpt, size, interpolation, max_size)
    h, w = int(inpt.shape[-2]), int(inpt.shape[-1])
    new_h, new_w = _output_size(h, w, size, max_size)
    if (new_h, new_w) == (h, w):
        return inpt
    downscale = new_h < h or new_w < w
    if interpolation == InterpolationMode.BILINEAR and inpt.dtype in (torch.uint8, torch.float32) \
            and (antialias or not downscale):
        from PIL import Image
        arr = inpt.asnumpy()
        lead = arr.shape[:-2]
        mode = "L" if arr.dtype == np.uint8 else "F"
        chans = [np.asarray(Image.fromarray(np.ascontiguousarray(c), mode=mode).resize((new_w, new_h),
                                                                                      Image.BILINEAR))
                 for c in arr.reshape(-1, h, w)]
        out = np.stack(chans).reshape(*lead, new_h, new_w).astype(arr.dtype)
        return torch.from_numpy(np.ascontiguousarray(out))
    from adapter.userframe import warn_user
    warn_user(f"v2 resize of a {inpt.dtype} tensor with {interpolation}, antialias={antialias}: computed by "
              f"MindTorch's v1 resize, whose values differ from torchvision's (patches/transforms_v2.py handles "
              f"bilinear uint8/float32 only)")
    return F1.resize(inpt, [new_h, new_w], interpolation)


class Resize(Transform):
    """v2.Resize(size, interpolation=BILINEAR, max_size=None, antialias=True): :func:`resize` on the image."""

    def __init__(self, size, interpolation=None, max_size=None, antialias=True):
        self.size = [size] if isinstance(size, int) else (None if size is None else list(size))
        self.interpolation, self.max_size, self.antialias = interpolation, max_size, antialias

    def _image(self, img):
        return resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return f"Resize(size={self.size}, max_size={self.max_size}, antialias={self.antialias})"


class RandomResizedCrop(Transform):
    """v2.RandomResizedCrop: v1's ``get_params`` (crop box from MindTorch's RNG), crop, then :func:`resize`."""
    _random = True

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=None, antialias=True):
        self.size = [size, size] if isinstance(size, int) else list(size) * (2 if len(size) == 1 else 1)
        self.scale, self.ratio = scale, ratio
        self.interpolation, self.antialias = interpolation, antialias

    def _image(self, img):
        import mindtorch.torchvision.transforms as T
        import mindtorch.torchvision.transforms.functional as F1
        i, j, h, w = T.RandomResizedCrop.get_params(img, self.scale, self.ratio)
        return resize(F1.crop(img, i, j, h, w), self.size, self.interpolation, None, self.antialias)

    def __repr__(self):
        return f"RandomResizedCrop(size={self.size}, scale={self.scale}, ratio={self.ratio})"


def to_image(inpt):
    """``F.to_image``: PIL image -> (C, H, W) tensor of its dtype; (H, W[, C]) ndarray -> (C, H, W) tensor; a
    tensor is returned as is. Raises TypeError otherwise (as torchvision)."""
    import mindtorch.torch as torch
    if _is_pil(inpt):
        import mindtorch.torchvision.transforms.functional as F1
        return F1.pil_to_tensor(inpt)
    if isinstance(inpt, np.ndarray):
        arr = inpt[:, :, None] if inpt.ndim == 2 else inpt
        return torch.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))
    if _is_tensor(inpt):
        return inpt
    raise TypeError(f"Input can either be a pure Tensor, a numpy array, or a PIL image, but got {type(inpt)} instead.")


def to_dtype(inpt, dtype=None, scale: bool = False):
    """``F.to_dtype`` for tensor images (torchvision ``to_dtype_image``): ``scale`` maps uint8 <-> float as
    ``x * (1 / 255)`` and ``x * (255 + 1 - 1e-3)`` truncated; other integer ranges are not handled (NotImplementedError)."""
    import mindtorch.torch as torch
    dtype = torch.float32 if dtype is None else dtype
    if not _is_tensor(inpt):
        raise TypeError(f"to_dtype expects a tensor, got {type(inpt)}")
    if inpt.dtype == dtype or not scale:
        return inpt.to(dtype)
    floats = (torch.float16, torch.float32, torch.float64, torch.bfloat16)
    # by equality: a MindTorch dtype that went through pickle (spawn workers) lost ``is_floating_point``
    src_float, dst_float = inpt.dtype in floats, dtype in floats
    arr = inpt.asnumpy()
    if src_float and dst_float:
        return inpt.to(dtype)
    if not src_float and dst_float:
        if inpt.dtype != torch.uint8:
            raise NotImplementedError(f"to_dtype(scale=True) from {inpt.dtype}: only uint8 images are handled")
        np_dt = np.float64 if dtype == torch.float64 else np.float32
        return torch.from_numpy(arr.astype(np_dt) * np_dt(1.0 / 255)).to(dtype)  # torchvision: .mul_(1.0 / 255)
    if src_float and dtype == torch.uint8:
        return torch.from_numpy((arr * np.array(255 + 1.0 - 1e-3, arr.dtype)).astype(np.uint8))
    raise NotImplementedError(f"to_dtype(scale=True) from {inpt.dtype} to {dtype}: only uint8 <-> float is handled")


class ToImage(Transform):
    """v2.ToImage: see :func:`to_image`."""

    def _image(self, img):
        return to_image(img)


class ToDtype(Transform):
    """v2.ToDtype(dtype, scale=False): see :func:`to_dtype`. Only the image is converted (v2 with a plain dtype)."""

    def __init__(self, dtype, scale: bool = False):
        if isinstance(dtype, dict):
            raise NotImplementedError("v2.ToDtype with a dict of dtypes is not provided (patches/transforms_v2.py)")
        self.dtype, self.scale = dtype, scale

    def _image(self, img):
        return to_dtype(img, self.dtype, self.scale)


class ToPureTensor(Transform):
    """v2.ToPureTensor: the identity here (no tv_tensor subclasses)."""

    def __call__(self, *inputs):
        return inputs if len(inputs) > 1 else inputs[0]


class Compose:
    """v2.Compose: each transform on the previous output; several inputs travel as one tuple."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        multi = len(inputs) > 1
        for t in self.transforms:
            sample = t(*sample) if multi else t(sample)
        return sample

    def __repr__(self):
        return "Compose(" + "".join(f"\n    {t}" for t in self.transforms) + "\n)"


class RandomApply(Compose):
    """v2.RandomApply(transforms, p=0.5): the list applied with probability p (one ``torch.rand(1)`` draw)."""

    def __init__(self, transforms, p: float = 0.5):
        super().__init__(transforms if isinstance(transforms, (list, tuple)) else [transforms])
        self.p = p

    def __call__(self, *inputs):
        import mindtorch.torch as torch
        if float(torch.rand(1)) >= self.p:
            return inputs if len(inputs) > 1 else inputs[0]
        return super().__call__(*inputs)


class RandomChoice:
    """v2.RandomChoice(transforms, p=None): one transform picked by ``torch.multinomial(p, 1)`` (torchvision)."""

    def __init__(self, transforms, p=None):
        self.transforms = list(transforms)
        p = [1.0] * len(self.transforms) if p is None else list(p)
        total = sum(p)
        self.p = [x / total for x in p]

    def __call__(self, *inputs):
        import mindtorch.torch as torch
        idx = int(torch.multinomial(torch.tensor(self.p), 1))
        return self.transforms[idx](*inputs)


class RandomOrder(Compose):
    """v2.RandomOrder: the transforms in the order of ``torch.randperm``."""

    def __call__(self, *inputs):
        import mindtorch.torch as torch
        sample = inputs if len(inputs) > 1 else inputs[0]
        for i in torch.randperm(len(self.transforms)).tolist():
            sample = self.transforms[i](*sample) if len(inputs) > 1 else self.transforms[i](sample)
        return sample


class Lambda(Transform):
    """v2.Lambda(fn, *types): ``fn`` on the sample's image (v2 applies it to the items of ``types``; labels pass)."""

    def __init__(self, lambd, *types):
        self.lambd, self.types = lambd, types

    def _image(self, img):
        if self.types and not isinstance(img, self.types):
            return img
        return self.lambd(img)


def _draw_beta(alpha: float) -> float:
    """lam ~ Beta(alpha, alpha) from numpy's global RNG (tests monkeypatch this for a fixed lam)."""
    return float(np.random.beta(alpha, alpha))


class _MixBase:
    def __init__(self, *, alpha: float = 1.0, num_classes=None, labels_getter="default"):
        if labels_getter != "default":
            raise NotImplementedError("labels_getter other than 'default' is not provided (patches/transforms_v2.py)")
        self.alpha, self.num_classes = float(alpha), num_classes

    def _check(self, images, labels):
        if _is_pil(images):
            raise ValueError(f"{type(self).__name__}() does not support PIL images, bounding boxes, keypoints and "
                             f"masks.")
        if not _is_tensor(labels):
            raise ValueError(f"The labels must be a tensor, but got {type(labels)} instead.")
        if labels.ndim not in (1, 2):
            raise ValueError(f"labels should be index based with shape (batch_size,) or probability based with shape "
                             f"(batch_size, num_classes), but got a tensor of shape {labels.shape} instead.")
        if labels.ndim == 1 and self.num_classes is None:
            raise ValueError("num_classes must be passed if the labels are index-based (1D)")
        if images.ndim != 4:
            raise ValueError(f"Expected a batched input with 4 dims, but got {images.ndim} dimensions instead.")
        if images.shape[0] != labels.shape[0]:
            raise ValueError(f"The batch size of the image or video does not match the batch size of the labels: "
                             f"{images.shape[0]} != {labels.shape[0]}.")

    def _mix_label(self, labels, lam):
        """torchvision ``_mixup_label``: one-hot (float32), ``label.roll(1, 0) * (1 - lam) + label * lam``."""
        import mindtorch.torch as torch
        lab = labels.asnumpy()
        if lab.ndim == 1:
            lab = np.eye(self.num_classes, dtype=np.float32)[lab]
        if not np.issubdtype(lab.dtype, np.floating):
            lab = lab.astype(np.float32)
        out = np.roll(lab, 1, 0) * lab.dtype.type(1.0 - lam) + lab * lab.dtype.type(lam)
        return torch.from_numpy(np.ascontiguousarray(out))

    def __call__(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        if not isinstance(sample, (tuple, list)) or len(sample) != 2:
            raise NotImplementedError(f"{type(self).__name__} here takes (images, labels) "
                                      f"(patches/transforms_v2.py)")
        images, labels = sample
        self._check(images, labels)
        images, labels = self._mix(images, labels)
        return type(sample)((images, labels))


class MixUp(_MixBase):
    """v2.MixUp: ``images.roll(1, 0) * (1 - lam) + images * lam``, labels one-hot mixed with lam ~ Beta(a, a)."""

    def _mix(self, images, labels):
        import mindtorch.torch as torch
        lam = _draw_beta(self.alpha)
        arr = images.asnumpy()
        t = arr.dtype.type if np.issubdtype(arr.dtype, np.floating) else np.float32
        out = (np.roll(arr, 1, 0) * t(1.0 - lam) + arr * t(lam)).astype(arr.dtype)
        return torch.from_numpy(np.ascontiguousarray(out)), self._mix_label(labels, lam)


class CutMix(_MixBase):
    """v2.CutMix: the rolled batch pasted into a box centred at (randint(W), randint(H)) of half-sides
    ``int(0.5 sqrt(1 - lam) * W|H)``, clipped; labels mixed with ``1 - box_area / (H W)`` (torchvision)."""

    def _mix(self, images, labels):
        import mindtorch.torch as torch
        lam = _draw_beta(self.alpha)
        H, W = int(images.shape[-2]), int(images.shape[-1])
        r_x, r_y = int(np.random.randint(W)), int(np.random.randint(H))
        r = 0.5 * math.sqrt(1.0 - lam)
        r_w_half, r_h_half = int(r * W), int(r * H)
        x1, y1 = max(r_x - r_w_half, 0), max(r_y - r_h_half, 0)
        x2, y2 = min(r_x + r_w_half, W), min(r_y + r_h_half, H)
        lam_adjusted = float(1.0 - (x2 - x1) * (y2 - y1) / (W * H))
        arr = images.asnumpy()
        out = arr.copy()
        out[..., y1:y2, x1:x2] = np.roll(arr, 1, 0)[..., y1:y2, x1:x2]
        self.last_box = (x1, y1, x2, y2)
        return torch.from_numpy(out), self._mix_label(labels, lam_adjusted)


def get_size(inpt):
    """``v2.functional.get_size``: ``[H, W]`` of a PIL image or a (..., H, W) tensor."""
    if _is_pil(inpt):
        return [inpt.size[1], inpt.size[0]]
    return [int(inpt.shape[-2]), int(inpt.shape[-1])]


def tv_image(data, *, dtype=None, device=None, requires_grad=None):
    """``tv_tensors.Image(data)``: a (C, H, W) tensor (a PIL image via ``to_image``; 2-D data gets C = 1)."""
    import mindtorch.torch as torch
    x = to_image(data) if _is_pil(data) else torch.as_tensor(data)
    if x.ndim == 2:
        x = x.unsqueeze(0)
    return x.to(dtype) if dtype is not None else x


def _functional_module():
    from ._modules import new_module
    import mindtorch.torchvision.transforms.functional as F1
    mod = new_module("mindtorch.torchvision.transforms.v2.functional",
                     "torchvision.transforms.v2.functional (patches/transforms_v2.py): v1's functional ops, plus "
                     "to_image, to_dtype, to_pil_image, pil_to_tensor")
    for name in ("resize", "center_crop", "crop", "pad", "normalize", "hflip", "vflip", "rotate", "affine",
                 "rgb_to_grayscale", "to_grayscale", "gaussian_blur", "adjust_brightness", "adjust_contrast",
                 "adjust_saturation", "adjust_hue", "resized_crop", "erase", "to_pil_image", "pil_to_tensor",
                 "get_image_size", "get_image_num_channels", "invert", "posterize", "solarize", "autocontrast",
                 "equalize", "adjust_sharpness", "perspective", "five_crop", "ten_crop", "to_tensor"):
        if hasattr(F1, name):
            setattr(mod, name, getattr(F1, name))
    mod.resize = resize
    mod.to_image = to_image
    mod.to_dtype = to_dtype
    mod.to_pure_tensor = lambda x: x
    mod.grayscale = getattr(F1, "rgb_to_grayscale", None)
    mod.get_size = get_size
    mod.__getattr__ = _missing_getattr("torchvision.transforms.v2.functional")
    return mod


def _v2_module():
    """``torchvision.transforms.v2`` (a package, with ``.functional``), registered in ``sys.modules``."""
    from ._modules import new_module
    import mindtorch.torchvision.transforms as T
    v2 = new_module("mindtorch.torchvision.transforms.v2", __doc__)
    v2.__path__ = []  # a package: ``import torchvision.transforms.v2.functional``
    v2.__spec__.submodule_search_locations = []
    for cls in (Transform, Resize, RandomResizedCrop, ToImage, ToDtype, ToPureTensor, Compose, RandomApply,
                RandomChoice, RandomOrder, Lambda, MixUp, CutMix):
        setattr(v2, cls.__name__, cls)
    for name in _DETERMINISTIC + _RANDOM:
        if hasattr(T, name):
            setattr(v2, name, _v1_class(name, name in _RANDOM))
    v2.functional = _functional_module()
    v2.__getattr__ = _missing_getattr("torchvision.transforms.v2")
    return v2


def _tv_tensors_module():
    """``torchvision.tv_tensors`` with ``Image``, registered in ``sys.modules``."""
    from ._modules import new_module
    tvt = new_module("mindtorch.torchvision.tv_tensors", "torchvision.tv_tensors (patches/transforms_v2.py)")
    tvt.Image = tv_image
    tvt.__getattr__ = _missing_getattr("torchvision.tv_tensors")
    return tvt


_V2 = _TV_TENSORS = None  # the modules, built once by apply()


def apply() -> None:
    global _V2, _TV_TENSORS
    import mindtorch.torchvision as tv
    import mindtorch.torchvision.transforms as T
    if _V2 is None:
        _V2, _TV_TENSORS = _v2_module(), _tv_tensors_module()
    patch_attr(T, "v2", _V2)
    patch_attr(tv, "tv_tensors", _TV_TENSORS)


PATCH = Patch("transforms_v2", "torchvision.transforms.v2 (+functional) and tv_tensors.Image on v1's transforms: "
              "ToImage/ToDtype(scale)/CutMix/MixUp as torchvision 0.28, labels pass through", "post-import", apply,
              replaces=("torchvision.transforms.v2", "torchvision.tv_tensors"),
              effects=("sys.modules['mindtorch.torchvision.transforms.v2'], ['...v2.functional'], "
                       "['mindtorch.torchvision.tv_tensors'] (their imports)",))
