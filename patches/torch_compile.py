"""``torch.compile`` / ``nn.Module.compile`` / ``torch._dynamo``: accepted, the model runs as given.

PyTorch 2.x scripts write ``model = torch.compile(model)`` (often behind a flag that defaults to on); MindTorch
0.4.0 has no ``torch.compile``, so they fail there with AttributeError. Here the training step is compiled by
``run.py`` itself (``adapter/compiled_step.py``: forward, backward and optimizer in one MindSpore graph), so
TorchDynamo/Inductor have nothing to add; what remains is PyTorch's observable behaviour of the call (PyTorch 2.13,
``torch/__init__.py`` ``compile`` and ``torch/_dynamo/eval_frame.py`` ``OptimizedModule``, checked in ``.venv-ref``):

* ``torch.compile(module)`` returns an ``OptimizedModule`` wrapping it: ``_orig_mod`` is the module, its
  ``state_dict()``/``named_parameters()`` keys start with ``_orig_mod.`` (scripts strip that prefix when they save
  or load), attributes not found on the wrapper are read from ``_orig_mod``, ``train()``/``eval()`` reach it;
* ``torch.compile(fn)`` returns a function calling ``fn``; ``torch.compile(mode=...)`` (no model) returns a
  decorator; ``disable=True`` returns the model itself;
* ``module.compile(...)`` compiles in place: returns None, keys unchanged;
* ``torch._dynamo``: ``config`` accepts any setting (``suppress_errors``, ``cache_size_limit``...), ``reset()``,
  ``disable(fn)`` and ``allow_in_graph``/``mark_dynamic`` are no-ops; ``import torch._dynamo`` works.

``backend=``/``mode=``/``fullgraph=``/``dynamic=``/``options=`` are accepted and have no effect.

Replaces (adds): ``torch.compile``, ``torch.nn.Module.compile``, ``torch._dynamo``, ``torch.compiler``.
"""
from __future__ import annotations

import functools
import types

from . import Patch, get_original, patch_attr

_CLASS = None


def _build_class():
    from mindtorch.torch.nn.modules.module import Module

    class OptimizedModule(Module):
        """PyTorch's ``torch._dynamo.eval_frame.OptimizedModule``: ``forward`` calls ``_orig_mod``."""

        def __init__(self, mod):
            super().__init__()
            self._orig_mod = mod
            self.training = mod.training

        def forward(self, *args, **kwargs):
            return self._orig_mod(*args, **kwargs)

        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                if name == "_orig_mod":
                    raise
                return getattr(self._orig_mod, name)

        def __len__(self):
            try:
                return len(self._orig_mod)
            except TypeError:
                raise TypeError(f"{type(self._orig_mod).__name__} does not support len()") from None

    OptimizedModule.__module__ = "torch._dynamo.eval_frame"
    return OptimizedModule


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """PyTorch's ``torch.compile``: see the module docstring. Returns an ``OptimizedModule`` for a module, a function
    for a function, a decorator when ``model`` is None."""
    if model is None:
        def decorator(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           disable=disable)
        return decorator
    if disable:
        return model
    from mindtorch.torch.nn.modules.module import Module
    if isinstance(model, Module):
        return _CLASS(model)
    if not callable(model):
        raise RuntimeError(f"torch.compile: expected a callable or a Module, got {type(model).__name__}")

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)
    return compiled


def _module_compile(self, *args, **kwargs) -> None:
    """``nn.Module.compile``: compiles in place in PyTorch (the module object and its keys stay)."""
    return None


class _Config(types.SimpleNamespace):
    """``torch._dynamo.config``: any setting is accepted and remembered; unknown ones read as None."""

    def __getattr__(self, name):
        return None


def _identity_decorator(fn=None, *args, **kwargs):
    if fn is None or not callable(fn):
        return lambda f: f
    return fn


def _dynamo_module() -> types.ModuleType:
    from ._modules import new_module
    mod = new_module("mindtorch.torch._dynamo", "torch._dynamo (patches/torch_compile.py): settings accepted, nothing "
                                                "to configure")
    mod.config = _Config(suppress_errors=False, cache_size_limit=8)
    mod.reset = lambda: None
    mod.disable = _identity_decorator
    mod.allow_in_graph = _identity_decorator
    mod.mark_dynamic = lambda *args, **kwargs: None
    mod.mark_static = lambda *args, **kwargs: None
    mod.is_compiling = lambda: False
    mod.OptimizedModule = _CLASS
    return mod


def _compiler_module() -> types.ModuleType:
    from ._modules import new_module
    compiler = new_module("mindtorch.torch.compiler", "torch.compiler (patches/torch_compile.py)")
    compiler.is_compiling = lambda: False
    compiler.is_dynamo_compiling = lambda: False
    compiler.disable = _identity_decorator
    compiler.reset = lambda: None
    return compiler


_DYNAMO = _COMPILER = None  # torch._dynamo, torch.compiler: built once by apply()


def apply() -> None:
    global _CLASS, _DYNAMO, _COMPILER
    import mindtorch.torch as torch
    from mindtorch.torch.nn.modules.module import Module
    if _CLASS is None:
        _CLASS = _build_class()
        _DYNAMO = _dynamo_module()
    patch_attr(torch, "compile", compile)
    patch_attr(Module, "compile", _module_compile)
    from adapter import backend
    patch_attr(*backend.internal_slot("torch.dynamo"), _DYNAMO)
    if get_original(torch, "compiler", None) is None:  # MindTorch 0.4.0 has none
        if _COMPILER is None:
            _COMPILER = _compiler_module()
        patch_attr(torch, "compiler", _COMPILER)


PATCH = Patch("torch_compile", "torch.compile returns PyTorch's OptimizedModule wrapper (_orig_mod. keys) and the "
                               "model runs as given (run.py compiles the step); torch._dynamo settings accepted",
              "post-import", apply,
              replaces=("torch.compile", "torch.nn.Module.compile", "torch._dynamo", "torch.compiler"),
              effects=("sys.modules['mindtorch.torch._dynamo'], ['mindtorch.torch.compiler'] (import torch._dynamo, "
                       "torch.compiler)",))
