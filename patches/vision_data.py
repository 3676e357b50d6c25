"""torchvision data pipeline: ``ToTensor``, ``Normalize`` and MNIST-family ``__getitem__`` computed in numpy.

MindTorch 0.4.0 implements these per-sample transforms with MindSpore ops on tiny tensors: measured 3.5 ms for
``ToTensor`` and ~4 ms for ``Normalize`` per 28x28 image, plus ~2 ms for ``FashionMNIST.__getitem__`` (tensor
indexing), i.e. ~7.5 ms per sample and 0.24 s per batch of 32 on this CPU. Here the same arithmetic runs in numpy
and the result is wrapped once with ``torch.from_numpy``. The values are bit-identical to torchvision's: the same
float32 operations in the same order (``to_tensor``: ``img.to(float32).div(255)``; ``normalize``:
``tensor.sub_(mean).div_(std)`` — torchvision ``transforms/functional.py`` and ``_functional_tensor.py``).
Inputs these functions do not cover (other dtypes, ``inplace=True``, accimage) go to MindTorch's originals.

A DataLoader over an MNIST-family dataset whose transform is exactly ``ToTensor()`` or ``Compose([ToTensor(),
Normalize(mean, std)])`` (one channel; no ``target_transform``) collates each batch at once (:func:`mnist_batch`,
called by ``patches/data_tensors.py``'s fetch): one fancy index and the same float32 element-wise operations on the
stacked images, instead of a PIL image, a tensor and ``.numpy()`` per sample; bit-identical batches (tested).

The MNIST family's numpy copies of ``data``/``targets`` are made when the dataset is built, in the process that
builds it: DataLoader workers then read plain numpy arrays (inherited by fork, pickled for spawn), not the
parent's MindSpore tensors (``patches/dataloader.py``), and each worker does not convert the whole set again.

Replaces: ``torchvision.transforms.functional.to_tensor``, ``torchvision.transforms.functional.normalize``,
``torchvision.datasets.MNIST.__getitem__``, ``torchvision.datasets.MNIST.__init__``; adds
``torchvision.datasets.MNIST._adapter_collated_batch`` (:func:`mnist_batch`, read by ``patches/data_tensors.py``).
"""
import functools

import numpy as np

from adapter import backend, hooks

from . import Patch, get_original, patch_attr

_PIL_NP_DTYPE = {"I": np.int32, "I;16": np.int16, "F": np.float32}


def to_tensor(pic):
    """torchvision's ``to_tensor`` in numpy for PIL images and 2-/3-D ndarrays; other inputs: MindTorch's."""
    import mindtorch.torch as torch
    from PIL import Image
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            return _original_to_tensor(pic)
        arr = pic[:, :, None] if pic.ndim == 2 else pic
    elif isinstance(pic, Image.Image):
        arr = np.array(pic, _PIL_NP_DTYPE.get(pic.mode, np.uint8), copy=True)
        if pic.mode == "1":
            arr = 255 * arr
        arr = arr.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
    else:
        return _original_to_tensor(pic)
    arr = np.ascontiguousarray(arr.transpose(2, 0, 1))
    if arr.dtype == np.uint8:
        arr = arr.astype(np.float32) / np.float32(255)
    return torch.from_numpy(arr)


def normalize(tensor, mean, std, inplace=False):
    """torchvision's ``normalize`` in numpy for float32/float64 tensors of rank >= 3, out of place; else
    MindTorch's. Raises ValueError for a zero ``std`` (torchvision's message)."""
    import mindtorch.torch as torch
    if inplace or not isinstance(tensor, torch.Tensor) or tensor.dtype not in (torch.float32, torch.float64) \
            or tensor.ndim < 3:
        return _original_normalize(tensor, mean, std, inplace)
    arr = tensor.asnumpy()
    mean = np.asarray(mean, dtype=arr.dtype)
    std = np.asarray(std, dtype=arr.dtype)
    if (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {arr.dtype}, leading to division by zero.")
    shape = (-1, 1, 1)
    return torch.from_numpy(np.ascontiguousarray((arr - mean.reshape(shape)) / std.reshape(shape)))


_original_to_tensor = _original_normalize = _original_mnist_init = None  # MindTorch's, bound by apply()


def _mnist_arrays(self):
    """``(data, data as numpy, targets as numpy)``, cached; made again when the script replaced ``data``."""
    cache = self.__dict__.get("_adapter_numpy")
    if cache is None or cache[0] is not self.data:
        cache = (self.data, self.data.asnumpy(), self.targets.asnumpy())
        self.__dict__["_adapter_numpy"] = cache
    return cache


def _mnist_init(self, *args, **kwargs):
    """MindTorch's ``MNIST.__init__``, then the numpy copies of ``data``/``targets`` (module docstring)."""
    _original_mnist_init(self, *args, **kwargs)
    _mnist_arrays(self)


def _mnist_getitem(self, index):
    """``MNIST.__getitem__`` (and FashionMNIST, KMNIST, EMNIST) reading the numpy copy of ``self.data``."""
    from PIL import Image
    cache = _mnist_arrays(self)
    img, target = Image.fromarray(cache[1][index], mode="L"), int(cache[2][index])
    if self.transform is not None:
        img = self.transform(img)
    if self.target_transform is not None:
        target = self.target_transform(target)
    return img, target


def _wraps(function, ours) -> bool:
    """``function`` is ``ours``, or wraps it (a ``functools.wraps`` chain of ``__wrapped__`` reaches it)."""
    for _ in range(16):
        if function is ours:
            return True
        function = getattr(function, "__wrapped__", None)
        if function is None:
            return False
    return False


def _batch_transform(transform):
    """``(normalize?, mean, std)`` when ``transform`` is exactly ``ToTensor()`` or ``Compose([ToTensor()])`` /
    ``Compose([ToTensor(), Normalize(mean, std)])`` (torchvision's classes, not subclasses; ``Normalize`` out of
    place, without hooks, one or as many mean/std values as the one channel, no zero std) running this module's
    numpy ``to_tensor`` / ``normalize``; else None."""
    import mindtorch.torch.nn.modules.module as module_mod
    import mindtorch.torchvision.transforms as T
    import mindtorch.torchvision.transforms.functional as F
    if not (_wraps(F.to_tensor, to_tensor) and _wraps(F.normalize, normalize)):
        return None
    steps = list(transform.transforms) if type(transform) is T.Compose else [transform]
    if not steps or type(steps[0]) is not T.ToTensor or len(steps) > 2:
        return None
    if len(steps) == 1:
        return False, None, None
    norm = steps[1]
    if type(norm) is not T.Normalize or norm.inplace or type(norm).forward is not T.Normalize.forward \
            or backend.cell_has_hooks(norm) \
            or backend.internal("global_forward_hooks") or backend.internal("global_forward_pre_hooks"):
        return None
    try:
        mean = np.asarray(norm.mean, dtype=np.float32).reshape(-1)
        std = np.asarray(norm.std, dtype=np.float32).reshape(-1)
    except (TypeError, ValueError):
        return None
    if mean.size != 1 or std.size != 1 or (std == 0).any():
        return None  # the per-sample path gives these cases their own result or error
    return True, mean, std


def mnist_batch(dataset, indices):
    """The collated batch ``[images, targets]`` (numpy, as MindTorch's ``default_collate`` of the samples gives it to
    the loader) of an MNIST-family dataset read through :func:`_mnist_getitem`, computed for the whole batch at once;
    None when the dataset or its transforms are not the plain ones (:func:`_batch_transform`, no
    ``target_transform``, uint8 images, int indices): the caller then fetches sample by sample.

    Per sample the pipeline is ``Image.fromarray(data[i], "L")`` -> ``to_tensor`` (``x.astype(float32) /
    float32(255)``, shape ``(1, H, W)``) [-> ``normalize``: ``(x - mean) / std`` in float32] and ``int(targets[i])``;
    collation stacks the images and makes the ints an int64 array. The same element-wise float32 operations on the
    stacked array give the same bits (IEEE subtraction and division are correctly rounded element by element), without
    making a PIL image and a tensor per sample and taking it apart again (measured: 128 samples, ~4 ms of a vae step
    of ~20 ms)."""
    import mindtorch.torchvision.datasets.mnist as mnist
    if type(dataset).__getitem__ is not _mnist_getitem or dataset.target_transform is not None \
            or dataset.transform is None or not isinstance(dataset, mnist.MNIST):
        return None
    spec = _batch_transform(dataset.transform)
    if spec is None or not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in indices):
        return None
    _, data, targets = _mnist_arrays(dataset)
    if data.dtype != np.uint8 or data.ndim != 3:
        return None
    index = np.asarray(indices, dtype=np.int64)
    images = data[index][:, None, :, :].astype(np.float32) / np.float32(255)
    normalize, mean, std = spec
    if normalize:
        images = (images - mean.reshape(1, -1, 1, 1)) / std.reshape(1, -1, 1, 1)
    return [np.ascontiguousarray(images), np.asarray([int(t) for t in targets[index]], dtype=np.int64)]


def apply() -> None:
    global _original_to_tensor, _original_normalize, _original_mnist_init
    import mindtorch.torchvision.datasets.mnist as mnist
    import mindtorch.torchvision.transforms.functional as F
    _original_to_tensor = get_original(F, "to_tensor")
    _original_normalize = get_original(F, "normalize")
    _original_mnist_init = get_original(mnist.MNIST, "__init__")
    functools.update_wrapper(to_tensor, _original_to_tensor)
    functools.update_wrapper(normalize, _original_normalize)
    functools.update_wrapper(_mnist_init, _original_mnist_init)
    patch_attr(F, "to_tensor", to_tensor)
    patch_attr(F, "normalize", normalize)
    patch_attr(mnist.MNIST, hooks.attr("collated_batch"), mnist_batch)  # read by patches/data_tensors.py's fetch
    patch_attr(mnist.MNIST, "__getitem__", _mnist_getitem)
    patch_attr(mnist.MNIST, "__init__", _mnist_init)


PATCH = Patch("vision_data", "ToTensor/Normalize/MNIST __getitem__ in numpy (plain pipelines: a whole batch at once): "
                             "same values, ~10x less time per sample",
              "post-import", apply,
              replaces=("torchvision.transforms.functional.to_tensor", "torchvision.transforms.functional.normalize",
                        "torchvision.datasets.MNIST.__getitem__", "torchvision.datasets.MNIST.__init__",
                        "torchvision.datasets.MNIST._adapter_collated_batch"))
