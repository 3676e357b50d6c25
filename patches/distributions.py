"""``torch.distributions``: PyTorch's probability distributions (vendored), which MindTorch 0.4.0 lacks.

Placeholder docstring; completed below.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import types

from . import Patch

_PACKAGE = "mindtorch.torch.distributions"
_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_distributions_pytorch")


def load() -> types.ModuleType:
    """Import the vendored package as ``mindtorch.torch.distributions`` (idempotent) and return it."""
    if _PACKAGE in sys.modules:
        return sys.modules[_PACKAGE]
    spec = importlib.util.spec_from_file_location(_PACKAGE, os.path.join(_DIR, "__init__.py"),
                                                  submodule_search_locations=[_DIR])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[_PACKAGE] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(_PACKAGE, None)
        raise
    return mod


def apply() -> None:
    import mindtorch.torch as torch
    if isinstance(getattr(torch, "distributions", None), types.ModuleType):
        return
    torch.distributions = load()


PATCH = Patch("distributions", "torch.distributions: PyTorch 2.13's distributions (vendored, BSD-3) over MindTorch "
              "tensors", "post-import", apply)
