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

from . import Patch, get_original, patch_attr


def softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002 (PyTorch's names)
    """MindTorch's ``F.softmax``, a 0-d input as shape ``(1,)`` (module docstring)."""
    if input.ndim == 0:
        if dim is not None and dim not in (0, -1):
            raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
        return _original_softmax(input.reshape(1), 0, _stacklevel, dtype).reshape(())
    return _original_softmax(input, dim, _stacklevel, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002 (PyTorch's names)
    """MindTorch's ``F.log_softmax``, a 0-d input as shape ``(1,)`` (module docstring)."""
    if input.ndim == 0:
        if dim is not None and dim not in (0, -1):
            raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
        return _original_log_softmax(input.reshape(1), 0, _stacklevel, dtype).reshape(())
    return _original_log_softmax(input, dim, _stacklevel, dtype)


_original_softmax = _original_log_softmax = None  # MindTorch's, bound by apply()


def apply() -> None:
    global _original_softmax, _original_log_softmax
    import mindtorch.torch.nn.functional as F
    _original_softmax = get_original(F, "softmax")
    _original_log_softmax = get_original(F, "log_softmax")
    softmax.__doc__ = _original_softmax.__doc__
    log_softmax.__doc__ = _original_log_softmax.__doc__
    patch_attr(F, "softmax", softmax)
    patch_attr(F, "log_softmax", log_softmax)


PATCH = Patch("softmax_0d", "F.softmax / F.log_softmax of a 0-d tensor: PyTorch's result and gradient (MindSpore's "
                            "LogSoftmax backward hung on 0-d input)", "post-import", apply,
              replaces=("torch.nn.functional.softmax", "torch.nn.functional.log_softmax"))
