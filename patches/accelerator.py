"""``torch.accelerator``: PyTorch's device-agnostic device API (PyTorch >= 2.6), which MindTorch 0.4.0 lacks.

Current scripts pick their device with it (pytorch/examples: ``use_accel = torch.accelerator.is_available()``,
``device = torch.accelerator.current_accelerator()``, ``torch.accelerator.set_device_index(rank)``); under MindTorch
they stop at ``AttributeError: module 'mindtorch.torch' has no attribute 'accelerator'``. This module is installed
as ``torch.accelerator`` (and ``sys.modules["mindtorch.torch.accelerator"]``, so ``import torch.accelerator`` works).

What "the accelerator" is here follows ``patches/device.py``: MindSpore's device target (``run.py --device``).

* CPU target: exactly PyTorch on a CPU-only machine (PyTorch 2.13's ``torch/accelerator/__init__.py`` and
  ``_utils.py``, observed with ``.venv-ref``): ``is_available()`` False, ``current_accelerator()`` None,
  ``device_count()`` 0; ``current_device_index()``, ``set_device_index(int)``, ``synchronize()``,
  ``device_index(int)``, the memory functions raise ``RuntimeError("Cannot access accelerator device when none is
  available.")``; a ``torch.device``/str argument raises ``RuntimeError("Accelerator expected")``;
  ``device_index(None)`` is a no-op.
* GPU/Ascend target: the accelerator is ``torch.device("cuda")`` (what a script's "cuda" means on this adapter),
  one device per process (``device_count()`` 1; the device itself is chosen by MindSpore's ``DEVICE_ID``, as msrun
  and ``run.py --nproc-per-node`` set it). ``set_device_index(i)`` records ``i`` as the current index (any
  ``i >= 0``: a DDP script passes its rank; each process already owns its device); a negative index is a no-op, as
  PyTorch's. ``synchronize()`` is ``mindspore.runtime.synchronize()``.

Replaces (adds): ``torch.accelerator``.
"""
from __future__ import annotations

import sys
import types
import warnings

from . import Patch

_NO_ACCELERATOR = "Cannot access accelerator device when none is available."
_index = 0  # the current device index on an accelerator target (set_device_index)


def _device_patch():
    from . import device
    return device


def _torch():
    import mindtorch.torch as torch
    return torch


def current_accelerator(check_available: bool = False):
    """``torch.device("cuda")`` on a GPU/Ascend target, None on CPU (PyTorch CPU-only: None)."""
    if not _device_patch().is_available():
        return None
    return _torch().device("cuda")


def is_available() -> bool:
    """True on a GPU/Ascend target (``patches/device.py``), False on CPU."""
    return _device_patch().is_available()


def device_count() -> int:
    """1 on a GPU/Ascend target (one device per process), 0 on CPU."""
    return _device_patch().device_count()


def _require() -> None:
    if not is_available():
        raise RuntimeError(_NO_ACCELERATOR)


def _get_device_index(device, optional: bool = False) -> int:
    """PyTorch's ``torch/accelerator/_utils.py::_get_device_index``: an int, a ``torch.device``/str of the
    accelerator's type, or None (``optional``: the current index).

    Raises:
        RuntimeError: a device/str when there is no accelerator ("Accelerator expected"); an int or None when
            there is none (PyTorch's "Cannot access accelerator device when none is available.").
        ValueError: a device of another type, or a device without index when ``optional`` is False.
    """
    torch = _torch()
    if isinstance(device, bool) or not isinstance(device, (int, str, type(None))) \
            and not isinstance(device, torch.device):
        raise TypeError(f"Expected a torch.device, str, int or None, got {type(device).__name__}")
    if isinstance(device, int):
        _require()
        return device
    index = None
    if device is not None:
        device = torch.device(device) if isinstance(device, str) else device
        acc = current_accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        if acc.type != device.type:
            raise ValueError(f"{device.type} doesn't match the current accelerator {acc}.")
        index = device.index
    if index is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
        return current_device_index()
    return index


def current_device_index() -> int:
    """The current device index (0 unless ``set_device_index`` chose another). Raises RuntimeError on CPU."""
    _require()
    return _index


def set_device_index(device, /) -> None:
    """Make ``device`` (int, or a ``"cuda:N"`` device/str) the current index; negative: no-op (PyTorch).

    Raises:
        RuntimeError / ValueError: as :func:`_get_device_index` (on CPU always, as PyTorch CPU-only).
    """
    global _index
    index = _get_device_index(device, optional=False)
    if index >= 0:
        _index = index


def synchronize(device=None, /) -> None:
    """Wait for the device's queued work (``mindspore.runtime.synchronize()``). Raises RuntimeError on CPU."""
    _get_device_index(device, optional=True)
    import mindspore as ms
    runtime = getattr(ms, "runtime", None)
    if runtime is not None and hasattr(runtime, "synchronize"):
        runtime.synchronize()
    else:
        ms.hal.synchronize()


def _deprecated(new, old_name: str, new_name: str):
    def wrapper(*args, **kwargs):
        warnings.warn(f"Use `{new_name}` instead.", FutureWarning, stacklevel=2)
        return new(*args, **kwargs)
    wrapper.__name__ = old_name
    wrapper.__doc__ = f"(Deprecated) :func:`{new_name}`."
    return wrapper


current_device_idx = _deprecated(current_device_index, "current_device_idx", "current_device_index")
set_device_idx = _deprecated(set_device_index, "set_device_idx", "set_device_index")


class device_index:
    """``with torch.accelerator.device_index(i):`` the current index is ``i`` inside, restored after; None: no-op.

    Raises RuntimeError on entry with an int on CPU (PyTorch CPU-only)."""

    def __init__(self, device, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        global _index
        if self.idx is not None:
            _require()
            self.prev_idx, _index = _index, int(self.idx)

    def __exit__(self, *exc_info) -> None:
        global _index
        if self.idx is not None and self.prev_idx >= 0:
            _index = self.prev_idx


def _cuda_delegate(name: str, default):
    """An accelerator memory function: MindTorch's ``torch.cuda.<name>`` on GPU/Ascend (``default`` when MindTorch
    has none), PyTorch's RuntimeError on CPU."""
    def function(device_index=None, /):
        _get_device_index(device_index, optional=True)
        impl = getattr(_torch().cuda, name, None)
        if impl is None:
            return default() if callable(default) else default
        return impl() if device_index is None else impl(device_index)
    function.__name__ = name
    function.__doc__ = f"``torch.accelerator.{name}``: ``torch.cuda.{name}`` on GPU/Ascend; RuntimeError on CPU."
    return function


def empty_cache() -> None:
    """Release cached device memory (``torch.cuda.empty_cache``). Raises RuntimeError on CPU."""
    _require()
    impl = getattr(_torch().cuda, "empty_cache", None)
    if impl is not None:
        impl()


memory_allocated = _cuda_delegate("memory_allocated", 0)
max_memory_allocated = _cuda_delegate("max_memory_allocated", 0)
memory_reserved = _cuda_delegate("memory_reserved", 0)
max_memory_reserved = _cuda_delegate("max_memory_reserved", 0)
memory_stats = _cuda_delegate("memory_stats", dict)
reset_peak_memory_stats = _cuda_delegate("reset_peak_memory_stats", None)
reset_accumulated_memory_stats = _cuda_delegate("reset_accumulated_memory_stats", None)

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count", "device_index",
           "empty_cache", "is_available", "max_memory_allocated", "max_memory_reserved", "memory_allocated",
           "memory_reserved", "memory_stats", "reset_accumulated_memory_stats", "reset_peak_memory_stats",
           "set_device_idx", "set_device_index", "synchronize"]




def module() -> types.ModuleType:
    """``torch.accelerator`` as a module object holding this file's public functions (registered in
    ``sys.modules`` as ``mindtorch.torch.accelerator``)."""
    from ._modules import new_module
    mod = new_module("mindtorch.torch.accelerator", __doc__)
    this = sys.modules[__name__]
    for name in __all__:
        setattr(mod, name, getattr(this, name))
    mod.__all__ = list(__all__)
    return mod


def apply() -> None:
    torch = _torch()
    from ._modules import install
    install(torch, "accelerator", module)


PATCH = Patch("accelerator", "torch.accelerator (PyTorch >= 2.6): CPU target = PyTorch without accelerator; "
              "GPU/Ascend = 'cuda'", "post-import", apply, replaces=("torch.accelerator",),
              effects=("sys.modules['mindtorch.torch.accelerator'] (import torch.accelerator)",))
