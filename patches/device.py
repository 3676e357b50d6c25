"""Device calls in real scripts behave as PyTorch's, with MindSpore's device target as "the" device.

MindSpore places tensors on the device chosen by ``mindspore.set_device`` (``run.py --device``); there is no
per-tensor device, so ``.to('cuda')``/``.cuda()``/``non_blocking``/``pin_memory`` stay harmless no-ops. What a
script *reads* about devices is made PyTorch's (MindTorch 0.4.0 differs, observed):

* ``torch.cuda.is_available()``: MindTorch answers True on a CPU-only machine, which sends scripts down their CUDA
  paths. Here it is True only when the device target is GPU or Ascend -- the device a script's "cuda" then means
  (``torch.accelerator``, ``patches/accelerator.py``, says the same). ``torch.cuda.device_count()``: 1 there
  (one device per process), else 0.
* ``Tensor.device``: MindTorch gives ``CPU:-1`` (type ``"CPU"``), so ``x.device.type == "cpu"`` and
  ``x.device == torch.device("cpu")`` are False. Here: ``device(type='cpu')`` on a CPU target,
  ``device(type='cuda', index=0)`` on GPU/Ascend (every tensor lives on the device there). Inside a graph being
  compiled MindTorch's own property runs unchanged.
* ``Tensor.is_cuda``: a *method* in MindTorch, so ``if x.is_cuda:`` is always true. Here a property, as PyTorch's,
  True on GPU/Ascend; ``is_cpu`` (its negation), ``is_xpu``/``is_mps``/``is_meta`` (False) are added.
* ``torch.device``: ``repr`` is PyTorch's ``device(type='cpu')`` (``str`` stays ``cpu``/``cuda:1``); usable as a
  context manager (``with torch.device("cuda"):`` sets the default device inside, as PyTorch >= 2.0).
* ``torch.get_default_device()`` / ``torch.set_default_device(d)``: PyTorch >= 2.3 semantics for what is read back
  (initially ``device(type='cpu')``; a device without index reads back with index 0, PyTorch's
  ``_get_device_with_index``; ``None`` resets). MindTorch's ``set_default_device`` only warns. Factory functions
  ignore the default device here (one device), which matches what the script observes.
* ``torch.get_device_module(d)``: ``torch.cuda`` for "cuda", ``torch.cpu`` for "cpu" (PyTorch 2.2+).
* ``torch.xpu``: a module whose ``is_available()`` is False and ``device_count()`` 0 (PyTorch without XPU).

Replaces: ``torch.cuda.is_available``, ``torch.cuda.device_count``; ``torch.device``'s ``__str__``, ``__repr__``,
``__enter__``, ``__exit__``, ``__hash__``, ``__eq__``; ``device``, ``is_cuda``, ``is_cpu``, ``is_xpu``, ``is_mps``,
``is_meta``, ``is_ipu``, ``is_vulkan``, ``is_mkldnn`` of ``torch.Tensor`` and ``torch.nn.Parameter``;
``torch.get_default_device``, ``torch.set_default_device``, ``torch.get_device_module``, ``torch.xpu``.
"""
from __future__ import annotations

import sys
import types

from . import Patch, get_original, patch_attr

_default_device = None  # what set_default_device set (a torch.device), None = cpu


def _device_target() -> str:
    import mindspore as ms
    return ms.get_context("device_target")


def is_available() -> bool:
    """True when MindSpore's device target is ``GPU`` or ``Ascend`` (what a script's ``"cuda"`` maps to)."""
    return _device_target() in ("GPU", "Ascend")


def device_count() -> int:
    """Number of accelerators usable by this process: 1 under GPU/Ascend (one device per process), else 0."""
    return 1 if is_available() else 0


def tensor_device():
    """The ``torch.device`` every tensor reports: ``cuda:0`` on GPU/Ascend, ``cpu`` on CPU."""
    import mindtorch.torch as torch
    return torch.device("cuda", 0) if is_available() else torch.device("cpu")


def get_default_device():
    """``torch.get_default_device()``: ``device(type='cpu')`` unless :func:`set_default_device` chose another."""
    import mindtorch.torch as torch
    if _default_device is None:
        return torch.device("cpu")
    if _default_device.index is None and _default_device.type != "cpu":
        return torch.device(_default_device.type, 0)
    return _default_device


def set_default_device(device) -> None:
    """``torch.set_default_device(device)``: recorded for :func:`get_default_device`; None resets to cpu."""
    global _default_device
    import mindtorch.torch as torch
    _default_device = None if device is None else torch.device(device)


def get_device_module(device=None):
    """``torch.get_device_module``: ``torch.cuda`` for a cuda device, ``torch.cpu`` for cpu; None = the current
    accelerator's module, else ``torch.cpu``. Raises RuntimeError for other device types (as PyTorch)."""
    import mindtorch.torch as torch
    if device is None:
        kind = "cuda" if is_available() else "cpu"
    else:
        kind = torch.device(device).type if not isinstance(device, str) or ":" in device else device
    if kind == "cuda":
        return torch.cuda
    if kind == "cpu":
        return torch.cpu
    raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as 'torch.{kind}'.")


def _xpu_module() -> types.ModuleType:
    mod = types.ModuleType("mindtorch.torch.xpu", "torch.xpu without an XPU (patches/device.py).")
    mod.is_available = lambda: False
    mod.device_count = lambda: 0
    mod.is_initialized = lambda: False
    return mod


# What every tensor reports, refreshed by _refresh() (apply() and tests): module globals, because MindSpore's graph
# compiler parses a property's getter as graph code, where a global constant folds and a call to get_context fails.
_ON_ACCELERATOR = False
_TENSOR_DEVICE = None


def _refresh() -> None:
    """Recompute what tensors report from the current MindSpore device target."""
    global _ON_ACCELERATOR, _TENSOR_DEVICE
    _ON_ACCELERATOR = is_available()
    _TENSOR_DEVICE = tensor_device()


def _device(self):
    """PyTorch's ``Tensor.device``: cpu on a CPU target, cuda:0 on GPU/Ascend."""
    return _TENSOR_DEVICE


def _is_cuda(self):
    """PyTorch's ``Tensor.is_cuda``: True on GPU/Ascend targets."""
    return _ON_ACCELERATOR


def _is_cpu(self):
    """PyTorch's ``Tensor.is_cpu``: True on a CPU target."""
    return not _ON_ACCELERATOR


def _false(self):
    """False: no such device here."""
    return False


_TENSOR_PROPERTIES = {"device": property(_device), "is_cuda": property(_is_cuda), "is_cpu": property(_is_cpu)}
_TENSOR_PROPERTIES.update({name: property(_false)
                           for name in ("is_xpu", "is_mps", "is_meta", "is_ipu", "is_vulkan", "is_mkldnn")})


def _patch_tensor() -> None:
    """The properties on MindTorch's ``Tensor`` and on its ``nn.Parameter``, which copied Tensor's attributes when
    MindTorch was imported (``mindtorch/torch/nn/parameter.py::_init_parameter_api``)."""
    from mindtorch.torch.nn.parameter import Parameter
    from mindtorch.torch.tensor import Tensor
    for cls in (Tensor, Parameter):
        for name, prop in _TENSOR_PROPERTIES.items():
            patch_attr(cls, name, prop)


def _device_str(self):
    """``str(torch.device)``: ``cpu``, ``cuda:1``."""
    return str(self.type) if self.index is None else f"{self.type}:{self.index}"


def _device_repr(self):
    """PyTorch's ``repr(torch.device)``: ``device(type='cpu')``, ``device(type='cuda', index=0)``."""
    if self.index is None:
        return f"device(type='{self.type}')"
    return f"device(type='{self.type}', index={self.index})"


def _device_enter(self):
    """``with torch.device(d):`` ``d`` is the default device inside."""
    self._adapter_previous = _default_device
    set_default_device(self)
    return self


def _device_exit(self, *exc_info):
    global _default_device
    _default_device = getattr(self, "_adapter_previous", None)
    return False


def _device_hash(self):
    return hash((self.type, self.index))


def _device_eq(self, other):
    """Equal type and index, for two ``torch.device`` objects."""
    return isinstance(other, _DEVICE_CLASS) and (self.type, self.index) == (other.type, other.index)


_DEVICE_CLASS = None  # torch.device, bound by apply()
_DEVICE_METHODS = {"__str__": _device_str, "__repr__": _device_repr, "__enter__": _device_enter,
                   "__exit__": _device_exit, "__hash__": _device_hash, "__eq__": _device_eq}


def _patch_device_class() -> None:
    global _DEVICE_CLASS
    import mindtorch.torch as torch
    _DEVICE_CLASS = get_original(torch, "device")
    for name, method in _DEVICE_METHODS.items():
        patch_attr(_DEVICE_CLASS, name, method)


_XPU = None  # torch.xpu, built once by apply()
_TORCH_FUNCTIONS = {"get_default_device": get_default_device, "set_default_device": set_default_device,
                    "get_device_module": get_device_module}


def apply() -> None:
    global _XPU
    import mindtorch.torch as torch
    import mindtorch.torch.cuda as cuda
    patch_attr(cuda, "is_available", is_available)
    patch_attr(cuda, "device_count", device_count)
    _patch_device_class()
    _refresh()
    _patch_tensor()
    for name, function in _TORCH_FUNCTIONS.items():
        patch_attr(torch, name, function)
    if get_original(torch, "xpu", None) is None:  # MindTorch 0.4.0 has none
        if _XPU is None:
            _XPU = _xpu_module()
            sys.modules.setdefault("mindtorch.torch.xpu", _XPU)
        patch_attr(torch, "xpu", _XPU)


PATCH = Patch("device", "torch.cuda.is_available() True only on GPU/Ascend; Tensor.device/is_cuda, torch.device, "
              "get/set_default_device as PyTorch; .cuda()/.to(device) are no-ops", "post-import", apply,
              replaces=("torch.cuda.is_available", "torch.cuda.device_count")
              + tuple(f"torch.device.{name}" for name in _DEVICE_METHODS)
              + tuple(f"torch.{cls}.{name}" for cls in ("Tensor", "nn.Parameter") for name in _TENSOR_PROPERTIES)
              + tuple(f"torch.{name}" for name in _TORCH_FUNCTIONS) + ("torch.xpu",),
              effects=("sys.modules['mindtorch.torch.xpu'] (import torch.xpu)",))
