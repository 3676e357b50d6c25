"""One line from a MindSpore compile/run error: its real cause and the user's ``file:line``.

MindSpore (2.5) formats the text of the exceptions its graph compiler and runtime raise in sections::

    <message>                                  (may be empty)
    In file /path/x.py:12, 4~20                (where the failing operation is; then its source line)
    ----------------------------------------------------
    - Framework Unexpected Exception Raised:   (a "user message" section: #umsg# in libmindspore)
    ----------------------------------------------------
    This exception is caused by framework's unexpected error. Please create an issue at ...
    ----------------------------------------------------
    - Kernel build failed: (For framework developers)     (a "developer message" section: #dmsg#)
    ----------------------------------------------------
    CPU kernel op [Default/optimizer-SGD/SGD-op9] resize failed.
    ----------------------------------------------------
    - C++ Call Stack: (For framework developers)
    ----------------------------------------------------
    mindspore/ccsrc/...cc:574 CreateKernel
    ----------------------------------------------------
    - The Traceback of Net Construct Code:
    ----------------------------------------------------
    # 0 In file /path/outer.py:135, 24~43       (outermost call first, innermost last)
    ...

The first non-empty line of such a text is often a section title or boilerplate ("Framework Unexpected Exception
Raised:"), which is what the fallback message used to show; the cause is the first line of the message, or else of the
first section that is not boilerplate (the titles in :data:`_BOILERPLATE`). The user's ``file:line`` is the
error's own ``In file`` location when it is in the user's code, else the innermost location of the call chain in the
user's code (not MindSpore's, MindTorch's or this adapter's: ``adapter/userframe.py``), generated step files mapped
back to the user's file (same line numbers), or else the innermost user frame of the Python traceback.
"""
from __future__ import annotations

import os
import re
import traceback
from typing import Dict, List, Optional, Tuple

from adapter.userframe import _is_internal, display_path

#: section titles whose body never tells the cause
_BOILERPLATE = ("Framework Unexpected Exception Raised", "C++ Call Stack", "The Traceback of Net Construct Code")
_RULE = re.compile(r"^-{10,}$")
_TITLE = re.compile(r"^- (.+?):( \(For framework developers\))?$")
_IN_FILE = re.compile(r"In file (.+?):(\d+)")
#: lines that are locations, code excerpts' carets, or pointers to dump files: never the cause
_NOT_CAUSE = re.compile(r"^(# \d+ )?In file |^[\^~ ]+$|^\(See file |^For more details")
#: MindSpore's advice to switch the JIT syntax level: the adapter compiles with STRICT on purpose (a silent constant
#: otherwise), so the advice does not apply to a user of run.py
_LAX_HINT = re.compile(r"\s*You can use os\.environ\['MS_DEV_JIT_SYNTAX_LEVEL'\].*$")
MAX_CAUSE = 240
#: MindSpore's message when graph code calls a Python class or function it can only run with constant inputs (a
#: ``torch.distributions`` constructor, a user class): ``When handling script '__call_func_str__(x,) in graph mode',
#: the inputs should be constant, but found variable 'x' to be nonconstant. Try to set jit_syntax_level to LAX.``
_PYTHON_CALL = re.compile(r"^When handling script '__call_func_str__\(.*\) in graph mode', the inputs should be "
                          r"constant, but found variable .*$")
_PYTHON_CALL_CAUSE = ("graph mode cannot call this Python class or function with tensor arguments (e.g. a "
                      "torch.distributions constructor; MindSpore: \"the inputs should be constant\")")


def _sections(text: str) -> Tuple[List[str], List[Tuple[str, List[str]]]]:
    """``(head lines, [(title, body lines), ...])`` of a MindSpore error text (no sections: all of it is the head)."""
    lines = text.splitlines()
    head: List[str] = []
    sections: List[Tuple[str, List[str]]] = []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if _RULE.match(line) and i + 2 < len(lines) and _TITLE.match(lines[i + 1].strip()) \
                and _RULE.match(lines[i + 2].strip()):
            sections.append((_TITLE.match(lines[i + 1].strip()).group(1), []))
            i += 3
            continue
        (sections[-1][1] if sections else head).append(lines[i])
        i += 1
    return head, sections


def _first_cause_line(lines: List[str]) -> Optional[str]:
    after_location = False
    for line in lines:
        line = line.strip()
        if after_location:  # the source line an "In file" location quotes
            after_location = False
            continue
        if _IN_FILE.match(line) or line.startswith("# ") and _IN_FILE.search(line):
            after_location = True
            continue
        if line and not _RULE.match(line) and not _NOT_CAUSE.match(line):
            return line
    return None


def cause(text: str) -> Optional[str]:
    """MindSpore's own cause in an error text: the message's first line, or else the first line of the first
    section that is not boilerplate (e.g. ``CPU kernel op [Default/optimizer-SGD/SGD-op9] resize failed.``); None
    when there is none. MindSpore's advice to use the lax JIT syntax level is dropped."""
    head, sections = _sections(text)
    found = _first_cause_line(head)
    if found is None:
        for title, body in sections:
            if title not in _BOILERPLATE:
                found = _first_cause_line(body)
                if found is not None:
                    break
    if found is None:
        return None
    found = _LAX_HINT.sub("", found)
    found = _PYTHON_CALL.sub(_PYTHON_CALL_CAUSE, found)
    return found if len(found) <= MAX_CAUSE else found[:MAX_CAUSE - 3] + "..."


def user_location(exc: BaseException, generated: Optional[Dict[str, str]] = None) -> Optional[str]:
    """``"file:line"`` of the innermost user code the error points at, or None.

    Args:
        exc: the exception.
        generated: generated file -> the user's file it was made from (same line numbers), e.g.
            ``adapter.compiled_step.GENERATED_TO_USER``.
    """
    generated = generated or {}

    def user(path: str) -> Optional[str]:
        path = generated.get(path, path)
        if path.startswith("<"):  # "<string>": code MindSpore evaluates itself (eval_script), not a file
            return None
        return None if _is_internal(os.path.abspath(path)) else display_path(path)

    head, sections = _sections(str(exc))
    for match in _IN_FILE.finditer("\n".join(head)):  # where the error itself is, when that is user code
        path = user(match.group(1))
        if path is not None:
            return f"{path}:{match.group(2)}"
    found = None
    for _, body in sections:  # the call chain: MindSpore lists the outermost call first, the innermost last
        for match in _IN_FILE.finditer("\n".join(body)):
            path = user(match.group(1))
            if path is not None:
                found = f"{path}:{match.group(2)}"
    if found is not None:
        return found
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = user(frame.filename)
        if path is not None:
            return f"{path}:{frame.lineno}"
    return None


def summary(text: str) -> str:
    """``text`` itself, or for a MindSpore-formatted error text (it has sections) its :func:`cause`."""
    _, sections = _sections(text)
    return (cause(text) or text.strip().splitlines()[0]) if sections else text


def without_cpp_stack(text: str) -> str:
    """``text`` without MindSpore's "C++ Call Stack: (For framework developers)" sections (file:line lists of
    MindSpore's C++ sources, nothing a script's author can act on); everything else is kept as it is."""
    lines = text.splitlines(keepends=True)
    out: List[str] = []
    i = 0
    while i < len(lines):
        if _RULE.match(lines[i].strip()) and i + 2 < len(lines) and lines[i + 1].strip().startswith("- C++ Call Stack") \
                and _RULE.match(lines[i + 2].strip()):
            i += 3
            while i < len(lines) and lines[i].strip() and not _RULE.match(lines[i].strip()):
                i += 1  # the stack's lines, up to a blank line or the next section
            continue
        out.append(lines[i])
        i += 1
    return "".join(out)


def one_line(exc: BaseException, generated: Optional[Dict[str, str]] = None) -> str:
    """``"file:line: ExcType: cause"`` (``file:line`` only when the error points into the user's code)."""
    text = str(exc)
    for path, user_file in (generated or {}).items():
        text = text.replace(path, display_path(user_file))
    found = cause(text)
    reason = f"{type(exc).__name__}: {found}" if found else type(exc).__name__
    where = user_location(exc, generated)
    return f"{where}: {reason}" if where else reason
