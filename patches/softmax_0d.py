"""``F.softmax`` / ``F.log_softmax`` of a 0-d tensor: PyTorch's values (1 and 0) and gradient (0), without hanging.

PyTorch treats a 0-d input as one element (``dim`` 0 or -1): softmax 1.0, log_softmax 0.0, gradient 0. MindTorch
0.4.0 hands the 0-d tensor to MindSpore's ``LogSoftmax``, whose forward returns 0 but whose backward never returns
(measured: ``mindspore.grad`` of ``F.log_softmax(torch.tensor(0.5), dim=0)`` still running after 25 s, in PyNative
and compiled; conformance case ``F.log_softmax(x, dim=0)`` on a 0-d ``x``): a training step hung.

Replaces ``torch.nn.functional.softmax`` and ``log_softmax``: a 0-d input goes through MindTorch's function as shape
``(1,)`` (``dim`` 0) and comes back 0-d; other inputs call MindTorch's function unchanged. ``dim`` outside
``[-1, 0]`` on a 0-d input raises IndexError as PyTorch does.
"""
from __future__ import annotations

from . import Patch


def _wrap(original, name):
    def function(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002 (PyTorch's names)
        if input.ndim == 0:
            if dim is not None and dim not in (0, -1):
                raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
            return original(input.reshape(1), 0, _stacklevel, dtype).reshape(())
        return original(input, dim, _stacklevel, dtype)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = original.__doc__
    function._adapter_patched = True
    return function


def apply() -> None:
    import mindtorch.torch.nn.functional as F

    for name in ("softmax", "log_softmax"):
        original = getattr(F, name)
        if not getattr(original, "_adapter_patched", False):
            setattr(F, name, _wrap(original, name))


PATCH = Patch("softmax_0d", "F.softmax / F.log_softmax of a 0-d tensor: PyTorch's result and gradient (MindSpore's "
                            "LogSoftmax backward hung on 0-d input)", "post-import", apply)
