"""``torch.fx.wrap(fn_or_name)``: PyTorch's registration of a leaf function for FX symbolic tracing.

MindTorch 0.4.0's ``torch.fx`` has no ``wrap`` (``AttributeError``); torchvision's ``ops/stochastic_depth.py`` calls
``torch.fx.wrap("stochastic_depth")`` at import, and user modules copy that pattern. MindTorch has no FX symbolic
tracer, so there is nothing to register with: this ``wrap`` keeps PyTorch 2.13's checks and return value
(``torch/fx/_symbolic_trace.py``): it returns ``fn_or_name`` unchanged (usable as a decorator), raises RuntimeError
for an argument that is neither callable nor a string, and NotImplementedError when not called at a module's top
level (the caller's code object is not ``<module>``).

Replaces: adds ``torch.fx.wrap`` (where MindTorch lacks it).
"""
from __future__ import annotations

import inspect

from . import Patch, is_patched, patch_attr


def wrap(fn_or_name):
    """PyTorch's ``torch.fx.wrap`` without a tracer to register with (module docstring).

    Returns: ``fn_or_name``. Raises: RuntimeError (not callable nor str), NotImplementedError (not at top level)."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    frame = inspect.currentframe().f_back
    if frame is None or frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    return fn_or_name


def apply() -> None:
    import mindtorch.torch.fx as fx

    if not hasattr(fx, "wrap") or is_patched(fx, "wrap"):
        patch_attr(fx, "wrap", wrap)


PATCH = Patch("fx_wrap", "torch.fx.wrap (missing in MindTorch): PyTorch's checks, returns its argument (no FX tracer "
                         "to register with)", "post-import", apply, replaces=("torch.fx.wrap",))
