"""Modules that PyTorch has and MindTorch lacks (``torch.accelerator``, ``torch._dynamo``, ...), built by patches.

MindTorch's import hook maps ``import torch.X`` to ``mindtorch.torch.X`` and then loads that module's ``__spec__``
through importlib, even when the module is already in ``sys.modules``; a bare ``types.ModuleType`` has no spec and
fails there (``AttributeError: ... has no attribute 'loader'``). :func:`new_module` gives the module a spec whose
loader hands back the module itself, and registers it in ``sys.modules``. It replaces no attribute: the patch that
calls it sets the parent's attribute (``torch.return_types``...) with ``patch_attr``, or through :func:`install`.
"""
import importlib.abc
import importlib.util
import sys
import types


class _ExistingModuleLoader(importlib.abc.Loader):
    """An import loader that hands back an already built module."""

    def __init__(self, module: types.ModuleType):
        self._module = module

    def create_module(self, spec):
        return self._module

    def exec_module(self, module) -> None:
        pass


def new_module(name: str, doc: str = None) -> types.ModuleType:
    """A module ``name`` (e.g. ``"mindtorch.torch._dynamo"``) that ``import`` finds: with a spec and loader, and in
    ``sys.modules``. Its attributes are the caller's to set."""
    mod = types.ModuleType(name, doc)
    mod.__spec__ = importlib.util.spec_from_loader(name, _ExistingModuleLoader(mod))
    mod.__loader__ = mod.__spec__.loader
    sys.modules[name] = mod
    return mod


_installed = {}  # (owner module's name, attribute) -> the module install() built there


def install(owner: types.ModuleType, attr: str, build) -> None:
    """``owner.attr`` = the module ``build()`` returns, built once per process (a patch applied twice sets the same
    module again), through ``patch_attr``; nothing where the installed MindTorch already has a module there (its own
    ``torch.onnx``...). For a patch's ``apply`` (accelerator, onnx, tensorboard)."""
    from adapter.patching import get_original, patch_attr
    if isinstance(get_original(owner, attr, None), types.ModuleType):
        return  # a MindTorch that has its own
    key = (owner.__name__, attr)
    if key not in _installed:
        _installed[key] = build()
    patch_attr(owner, attr, _installed[key])
