"""``torch.autograd.Function.apply`` outside a gradient recording: PyTorch's ``forward(ctx, *args)``.

MindTorch 0.4.0's ``Function`` is a ``Module`` (a MindSpore ``Cell`` whose ``bprop`` calls the user's ``backward``),
and ``apply`` calls an instance. A ``Cell`` call in PyNative with no gradient being recorded takes MindSpore's fast
path, ``self.forward(*args)``, which for a ``Function`` is the user's static ``forward(ctx, ...)`` without its
``ctx``: every custom ``autograd.Function`` (straight-through estimators, gradient reversal, custom kernels) raised
``TypeError: forward() missing 1 required positional argument`` in ``torch.no_grad()`` code, evaluation loops and
any call made before a recording opened (2026-12-07, mindspore 2.10 and MindTorch 0.4.0: ``Sq.apply(x, 3.0)``).

Here, when no gradient is recorded (MindSpore's ``_pynative_executor.requires_grad()`` false, the condition of that
fast path) and not inside a compiled graph, ``apply`` runs ``cls.forward(FunctionCtx(), *args, **kwargs)`` as
PyTorch does: the same values, no backward (nothing records it). Otherwise an instance is called as MindTorch does,
so the eager bridge's recording and compiled graphs differentiate through the ``bprop`` as before.

Must come after nothing. Replaces: ``torch.autograd.Function.apply``.
"""
from __future__ import annotations

from . import Patch, patch_attr

NAME = "autograd_function"
_executor = FunctionCtx = graph_mode_condition = None  # set by apply()


def _apply(cls, *args, **kwargs):
    """PyTorch's ``Function.apply(*args, **kwargs)``: the user's ``forward``'s result (module docstring)."""
    if _executor.requires_grad() or graph_mode_condition():
        return cls()(*args, **kwargs)  # MindTorch's: the Function as a Cell, its bprop the user's backward
    return cls.forward(FunctionCtx(), *args, **kwargs)


_APPLY = classmethod(_apply)  # one object: a second apply() installs the same (tests/test_patch_contract.py)


def apply() -> None:
    global _executor, FunctionCtx, graph_mode_condition
    from mindtorch.torch.autograd import function
    from mindtorch.utils import graph_mode_condition as condition

    from adapter import backend
    _executor, FunctionCtx, graph_mode_condition = backend.pynative_executor(), function.FunctionCtx, condition
    patch_attr(function.Function, "apply", _APPLY)


PATCH = Patch(NAME, "torch.autograd.Function.apply outside a gradient recording (no_grad, evaluation) runs the "
                    "user's forward(ctx, ...) (MindTorch's Cell fast path dropped ctx: TypeError)",
              "post-import", apply, replaces=("torch.autograd.Function.apply",))
