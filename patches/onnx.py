"""``torch.onnx``: PyTorch's ONNX exporter module, which MindTorch 0.4.0 lacks.

Scripts import it at the top whether or not they export (pytorch/examples word_language_model/main.py:8:
``import torch.onnx``, exporting only under ``--onnx-export``); under MindTorch that import stops the script before
it starts (``ModuleNotFoundError: KeyError('torch.onnx')``). Model code also asks ``torch.onnx.is_in_onnx_export()``
to pick an export-only branch.

This module is installed as ``torch.onnx`` (and ``sys.modules["mindtorch.torch.onnx"]``, so ``import torch.onnx``
works), with PyTorch 2.13's public names (``torch/onnx/__init__.py``, ``__all__``) that make sense without an exporter:

* ``is_in_onnx_export()`` -> False, as PyTorch's outside ``export`` (nothing here ever exports to ONNX);
* ``export(...)`` raises :class:`OnnxExporterError` (a ``RuntimeError``, PyTorch's
  ``torch.onnx.errors.OnnxExporterError``) naming the script's ``file:line`` and pointing at ``run.py export``
  (MindIR); it never writes a file, so a script cannot go on with a missing or partial ``.onnx``;
* ``errors.OnnxExporterError``: the same class, where PyTorch keeps it.

Replaces (adds): ``torch.onnx``.
"""
from __future__ import annotations

import types

from . import Patch


class OnnxExporterError(RuntimeError):
    """PyTorch's ``torch.onnx.errors.OnnxExporterError`` (a ``RuntimeError``): raised by :func:`export`."""


def is_in_onnx_export() -> bool:
    """False: no ONNX export ever runs under this adapter (PyTorch: True only inside ``torch.onnx.export``)."""
    return False


def export(model, args=(), f=None, *rest, **kwargs):
    """PyTorch's ``torch.onnx.export(model, args, f, ...)``: not available on MindSpore.

    Raises:
        OnnxExporterError: always, naming the caller's ``file:line``; nothing is written to ``f``.
    """
    from adapter.userframe import user_location
    where = user_location(2)
    raise OnnxExporterError(
        (f"{where}: " if where else "") + "torch.onnx.export is not available under run.py (MindTorch on MindSpore "
        "has no ONNX exporter); nothing was written. Export the trained model as MindIR with `run.py export` "
        "(docs/checkpoints.md), or save a state_dict and export it under PyTorch.")


__all__ = ["errors", "export", "is_in_onnx_export", "OnnxExporterError"]



def module() -> types.ModuleType:
    """``torch.onnx`` as a module object (registered in ``sys.modules`` as ``mindtorch.torch.onnx``, its
    ``errors`` submodule as ``mindtorch.torch.onnx.errors``)."""
    from ._modules import new_module
    mod = new_module("mindtorch.torch.onnx", __doc__)
    errors = new_module("mindtorch.torch.onnx.errors", "torch.onnx.errors: the exporter's exception classes.")
    errors.OnnxExporterError = OnnxExporterError
    errors.__all__ = ["OnnxExporterError"]
    mod.errors = errors
    mod.export = export
    mod.is_in_onnx_export = is_in_onnx_export
    mod.OnnxExporterError = OnnxExporterError
    mod.__all__ = list(__all__)
    mod.__path__ = []  # a package: `import torch.onnx.errors` resolves its submodule
    return mod


def apply() -> None:
    import mindtorch.torch as torch
    from ._modules import install
    install(torch, "onnx", module)


PATCH = Patch("onnx", "import torch.onnx works: is_in_onnx_export() False; export() raises naming the script's line "
              "(no ONNX exporter on MindSpore; run.py export writes MindIR)", "post-import", apply,
              replaces=("torch.onnx",),
              effects=("sys.modules['mindtorch.torch.onnx'], ['mindtorch.torch.onnx.errors'] (import torch.onnx)",))
