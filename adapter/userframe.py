"""Locate the user's code in a stack: error messages name the user's ``file:line``, not ours or MindTorch's."""
from __future__ import annotations

import os
import sys
import sysconfig
from typing import Optional

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INTERNAL_DIRS = tuple(os.path.join(_ROOT, d) + os.sep for d in ("adapter", "patches", "app"))
_INTERNAL_PACKAGES = ("mindtorch", "mindspore", "importlib")
_STDLIB = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep


def _is_internal(filename: str) -> bool:
    if filename.startswith(_INTERNAL_DIRS) or filename == os.path.join(_ROOT, "run.py"):
        return True
    if "site-packages" in filename or filename.startswith(("<frozen", _STDLIB)):
        return True
    base = os.path.basename(os.path.dirname(filename))
    return base in _INTERNAL_PACKAGES


def display_path(filename: str) -> str:
    """``filename`` relative to the working directory when it lies below it, else absolute."""
    path = os.path.abspath(filename)
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def user_file(filename: str) -> str:
    """The user's file for ``filename``: a compiled step's generated ``forward_fn`` file (the region's statements,
    at the user's line numbers; ``adapter.compiled_step.GENERATED_TO_USER``) is named as the script it came from;
    any other file as it is."""
    generated = getattr(sys.modules.get("adapter.compiled_step"), "GENERATED_TO_USER", None)
    return generated.get(filename, filename) if generated else filename


def user_location(skip: int = 1) -> Optional[str]:
    """``"path/to/file.py:LINE"`` of the innermost frame that belongs to user code, or None. A frame of a compiled
    step's generated file is named by the user's file (:func:`user_location`'s line numbers are the user's there).

    Args:
        skip: frames to skip above this function (1 = the caller).
    """
    frame = sys._getframe(skip)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not _is_internal(os.path.abspath(filename)):
            return f"{display_path(user_file(filename))}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def is_user_frame(frame) -> bool:
    """Whether ``frame`` runs user code (not ours, MindTorch's, MindSpore's, a site-package's or the stdlib's)."""
    return not _is_internal(os.path.abspath(frame.f_code.co_filename))


def user_frame(skip: int = 1):
    """The innermost frame object that belongs to user code (as :func:`user_location`), or None; for
    ``warnings.warn_explicit`` attributions (patches/dropout.py: name its file with :func:`user_file`).

    Args:
        skip: frames to skip above this function (1 = the caller).
    """
    frame = sys._getframe(skip)
    while frame is not None and _is_internal(os.path.abspath(frame.f_code.co_filename)):
        frame = frame.f_back
    return frame


def warn_user(message: str, category=UserWarning) -> None:
    """``warnings.warn(message, category)`` attributed to the innermost frame of user code (as :func:`user_frame`),
    with that module's warning registry, so Python's default filter shows it once per user line, as PyTorch's
    ``stacklevel=2`` warnings point at the script's line. Without a user frame: the caller's caller."""
    import warnings
    frame = user_frame(2)
    if frame is None:
        warnings.warn(message, category, stacklevel=3)
        return
    g = frame.f_globals
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                           module=g.get("__name__", "__main__"), registry=g.setdefault("__warningregistry__", {}),
                           module_globals=g)
