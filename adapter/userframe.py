"""Locate the user's code in a stack: error messages name the user's ``file:line``, not ours or MindTorch's."""
from __future__ import annotations

import os
import sys
import sysconfig
from typing import Optional

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INTERNAL_DIRS = tuple(os.path.join(_ROOT, d) + os.sep for d in ("adapter", "patches"))
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


def user_location(skip: int = 1) -> Optional[str]:
    """``"path/to/file.py:LINE"`` of the innermost frame that belongs to user code, or None.

    Args:
        skip: frames to skip above this function (1 = the caller).
    """
    frame = sys._getframe(skip)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not _is_internal(os.path.abspath(filename)):
            return f"{display_path(filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def user_frame(skip: int = 1):
    """The innermost frame object that belongs to user code (as :func:`user_location`), or None; for
    ``warnings.warn_explicit`` attributions (patches/dropout.py).

    Args:
        skip: frames to skip above this function (1 = the caller).
    """
    frame = sys._getframe(skip)
    while frame is not None and _is_internal(os.path.abspath(frame.f_code.co_filename)):
        frame = frame.f_back
    return frame
