"""Run the user's script as ``python FILE ARGS`` would, and report its failure as Python would, pointing at the
user's code: :func:`split_argv` (run.py's command line: our options, the script, its arguments), :func:`run_script`,
:func:`user_traceback`.

Used by ``app/launcher.py`` (``run.py --original FILE``), ``app/tools/parity/compare.py`` (the MindSpore side of
``--compare``) and ``adapter/distributed/mp_spawn.py`` (an ``mp.spawn`` child's command line and its error file).
Moved here from ``app/launcher.py`` (issue 16: the launcher is the command line only). Importing this module
imports neither MindSpore nor MindTorch: the script's loader is imported when it runs.
"""
from __future__ import annotations

import os
import runpy
import sys
import traceback
from typing import List, Optional, Tuple

from adapter import hooks, ms_errors
from adapter.userframe import _is_internal, display_path


def split_argv(argv: List[str]) -> Tuple[List[str], Optional[str], List[str]]:
    """Split ``run.py``'s argv into (our options, script path or None, the script's own arguments).

    ``--original FILE`` (or ``--original=FILE``) ends our options; every argument after FILE is the script's. A ``--``
    right after FILE is dropped (``run.py --original t.py -- --help`` passes ``--help`` to the script).
    """
    for i, arg in enumerate(argv):
        if arg == "--":
            break  # a bare -- before --original: leave it to argparse (it will complain)
        if arg == "--original":
            if i + 1 >= len(argv):
                return argv[:i] + ["--original"], None, []
            script, rest = argv[i + 1], argv[i + 2:]
        elif arg.startswith("--original="):
            script, rest = arg.split("=", 1)[1], argv[i + 1:]
        else:
            continue
        if rest[:1] == ["--"]:
            rest = rest[1:]
        return argv[:i], script, rest
    return argv, None, []


def _map_generated_frames(tb: traceback.TracebackException) -> None:
    """Frames in generated forward_fn files (same line numbers as the user's file) are shown as the user's."""
    from adapter.compiled_step import GENERATED_TO_USER  # deferred: imports MindSpore (only after setup_mindspore)
    import linecache
    frames = []
    for f in tb.stack:
        user_file = GENERATED_TO_USER.get(f.filename)
        if user_file is not None:
            f = traceback.FrameSummary(user_file, f.lineno, f.name,
                                       line=linecache.getline(user_file, f.lineno).strip())
        frames.append(f)
    tb.stack = traceback.StackSummary.from_list(frames)
    if tb.__cause__ is not None:
        _map_generated_frames(tb.__cause__)
    if tb.__context__ is not None:
        _map_generated_frames(tb.__context__)


def user_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` from the script's first frame on, ending with the user's file:line."""
    tb = traceback.TracebackException.from_exception(exc)
    _map_generated_frames(tb)
    # Drop the launcher's frames (run.py, adapter/, runpy) that come before the script's first frame.
    first_user = next((i for i, f in enumerate(tb.stack) if not _is_internal(os.path.abspath(f.filename))), 0)
    frames = [] if isinstance(exc, SyntaxError) else list(tb.stack)[first_user:]  # as `python FILE` shows it
    tb.stack = traceback.StackSummary.from_list(frames)
    text = ms_errors.without_cpp_stack("".join(tb.format()))
    user = [f for f in frames if not _is_internal(os.path.abspath(f.filename))]
    if isinstance(exc, SyntaxError) and exc.filename:
        where = f"{display_path(exc.filename)}:{exc.lineno}"
    elif user:
        where = f"{display_path(user[-1].filename)}:{user[-1].lineno}"
    else:
        where = None
    if where:
        text += f"run.py: the script failed at {where}: {type(exc).__name__}: {ms_errors.summary(str(exc))}\n"
    return text


def run_script(script: str, script_args: List[str], mode: str = "pynative") -> int:
    """Run ``script`` as ``__main__`` with ``script_args``; return its exit code.

    ``mode`` is ``pynative`` (run the file as it is, every step on the eager bridge) or ``auto``/``graph`` (rewrite
    its training steps so that they are compiled, ``adapter/compiled_step.py``).
    """
    path = os.path.abspath(script)
    sys.argv = [script] + list(script_args)
    sys.path[0] = os.path.dirname(path)
    try:
        if mode == "pynative":
            runpy.run_path(path, run_name="__main__")
        else:
            from adapter.script_loader import run_main  # deferred: imports MindSpore (after setup_mindspore)
            run_main(path)
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:  # the user's error: report it like Python would, pointing at their code
        sys.stderr.write(user_traceback(exc))
        hints = hooks.provided("failure_hints")  # app/launcher.py's (the report's findings); none without run.py
        if hints is not None:
            sys.stderr.write(hints(exc, path))
        return 1
    return 0
