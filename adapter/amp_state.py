"""Mixed precision, the state the runtime shares with ``patches/amp.py``: the level, the open autocast regions, and
the MindSpore AMP strategy a region runs under.

``patches/amp.py`` implements PyTorch's API on top of this (``torch.autocast``, ``GradScaler``,
``torch.is_autocast_enabled``; its docstring explains the levels and why); the runtime reads it without importing
the patch layer: ``adapter/compiled_step.py`` (a compiled region's strategy, whether an autocast or loss scaler
object is ours), ``adapter/compiled_forward.py`` (no compiled no_grad forward inside a low-precision region),
``app/launcher.py`` (``--amp-level``). Moved here unchanged from ``patches/amp.py`` (issue 16: core modules do
not import ``patches.*``); ``patches/amp.py`` re-exports the names it had.
"""
from __future__ import annotations

import functools
import sys
from typing import List, Optional, Tuple

LEVELS = ("device", "O0", "auto", "O2", "O3")
_level = "device"
_stack: List[Tuple[bool, bool]] = []  # (enabled?, low precision on?) of the open autocast regions, innermost last
_notes_printed: set = set()

# PyTorch's autocast float32 ops that MindSpore's "auto" black list does not already hold (it has exp, log, pow,
# norms, BatchNorm, LayerNorm and several losses): softmax / log_softmax (hence cross_entropy) / NLL in float32.
_EXTRA_FP32_PRIMS = ("Softmax", "LogSoftmax", "SoftmaxExt", "LogSoftmaxExt", "NLLLoss",
                     "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits", "CrossEntropyLoss")


class AutocastRegion:
    """Base of ``patches/amp.py``'s ``autocast`` classes: a ``with`` of one of these in a training step compiles,
    with the strategy of :meth:`region` (``adapter/compiled_step.py``); any other context but a no-op does not."""

    def region(self) -> Tuple[bool, object]:
        """``(enabled, dtype)`` of this context when entered."""
        raise NotImplementedError


class LossScaler:
    """Base of ``patches/amp.py``'s ``GradScaler`` classes: ``scaler.scale(loss).backward()`` with one of these
    compiles (the graph unscales, checks and skips the update); another object's ``scale`` runs eagerly."""


def set_level(level: str) -> None:
    """Choose how autocast regions run: one of :data:`LEVELS` (see ``patches/amp.py``). Raises ValueError."""
    global _level
    if level not in LEVELS:
        raise ValueError(f"amp level must be one of {LEVELS}, got {level!r}")
    _level = level


def effective_level() -> str:
    """The level autocast regions run at on this device: ``"O0"``, ``"auto"``, ``"O2"`` or ``"O3"``."""
    if _level != "device":
        return _level
    import mindspore as ms
    return {"Ascend": "O3", "GPU": "O2"}.get(ms.get_context("device_target"), "O0")


def note(key: str, message: str) -> None:
    """Print ``run.py: FILE:LINE: message`` once per ``key``, FILE:LINE being the user's code that got here."""
    if key not in _notes_printed:
        _notes_printed.add(key)
        from adapter.userframe import user_location
        where = user_location(2)
        print(f"run.py: {where + ': ' if where else ''}{message}", file=sys.stderr, flush=True)


@functools.lru_cache(maxsize=None)
def _lists():
    """MindSpore's "auto" white list and black list (+ :data:`_EXTRA_FP32_PRIMS`), built once."""
    from mindspore.train.amp import AMP_AUTO_BLACK_LIST, AMP_AUTO_WHITE_LIST, AMP_PRIM_ARG_TABLE
    white = [(p.__name__, AMP_PRIM_ARG_TABLE[p]) for p in AMP_AUTO_WHITE_LIST]
    black = [(p.__name__, AMP_PRIM_ARG_TABLE[p]) for p in AMP_AUTO_BLACK_LIST]
    black += [(name, []) for name in _EXTRA_FP32_PRIMS if name not in {n for n, _ in black}]
    return white, black


def _ms_dtype(dtype):
    """The MindSpore low-precision dtype for a torch dtype; bfloat16 becomes float16 on CPU (no bf16 kernels)."""
    import mindspore as ms
    dtype = ms.float16 if dtype is None else dtype
    if dtype == ms.bfloat16 and ms.get_context("device_target") == "CPU":
        note("bf16", "autocast(dtype=torch.bfloat16): MindSpore's CPU kernels have no bfloat16 Conv2D/MatMul; "
                     "the region runs in float16")
        return ms.float16
    if dtype not in (ms.float16, ms.bfloat16):
        raise ValueError(f"autocast: dtype must be torch.float16 or torch.bfloat16, got {dtype}")
    return dtype


def strategy_args(dtype, graph: bool = False):
    """``(AmpLevel, dtype, white_list, black_list)`` for MindSpore's ``push_amp_strategy``/``create_amp_strategy``
    for an enabled region of ``dtype``, or None when the region runs in float32 (level O0)."""
    from adapter import backend
    AmpLevel = backend.internal("AmpLevel")
    level = effective_level()
    if level == "O0":
        return None
    if graph and level in ("O2", "O3"):
        note("graph-level", f"compiled steps run autocast regions at MindSpore's 'auto' level: this MindSpore "
                            f"build does not compile {level} as a function-scoped strategy")
        level = "auto"
    amp_level = {"auto": AmpLevel.AmpAuto, "O2": AmpLevel.AmpO2, "O3": AmpLevel.AmpO3}[level]
    white, black = _lists()
    return amp_level, _ms_dtype(dtype), white, black


def enter_region(enabled: bool, low_precision: bool) -> None:
    """An autocast region opens (``enabled``: as the user asked; ``low_precision``: it runs below float32)."""
    _stack.append((enabled, low_precision))


def exit_region() -> None:
    """The innermost autocast region closes."""
    _stack.pop()


def active() -> bool:
    """True inside an enabled autocast region that runs in low precision."""
    return bool(_stack) and _stack[-1][1]


def is_autocast_enabled(device_type: Optional[str] = None) -> bool:
    """``torch.is_autocast_enabled()``: the innermost region is enabled (whatever level runs it)."""
    return bool(_stack) and _stack[-1][0]
