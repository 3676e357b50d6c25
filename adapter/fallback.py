"""The decision to run a training step or a ``no_grad`` forward eagerly (PyNative) instead of compiled: one call.

Every path that makes a step site or a compiled forward run eagerly ends in :func:`run_eagerly`, as every graph
break of ``torch._dynamo`` goes through ``unimplemented(gb_type, context, explanation, hints)``. It carries the
decision's *kind* (an ``adapter.diagnostics.KINDS`` id, whose registry entry holds the explanation and the hint that
``--explain``, ``--explain-json`` and ``--report`` give) and its *context* (the one-line reason, the user's
``file:line`` of the site or call, the line the reason points at), and it:

1. names the kind and the reason: given, or read from the exception that stopped the compile
   (``diagnostics.classify``: a ``fallback_kind`` attribute, else MindSpore's message; ``diagnostics.short_reason``);
2. records it (``diagnostics.record``: ``--explain-json``'s ``fallbacks``);
3. under ``--mode graph``, for a failure (an exception), raises :class:`GraphModeError`;
4. else prints its one line on stderr when the decision is one the user is told of at run time.

The deciders, and the kinds each can give:

* ``adapter/compiled_step.py`` ``SiteRuntime``: a compile that failed (``_fall_back``: every MindSpore kind, and the
  adapter's own exceptions that say their kind: :class:`Uncompilable`, ``graph_semantics.HostRandomDraw``,
  ``graph_syntax.InplaceAlias`` / ``ParameterDictRead``, ``host_values.HostValueError``); a decision made without
  an exception (``_decide_eager``: ``non-parameter-leaf``, ``custom-grad-scaler``); and a site that runs eagerly
  without a reason of its own (``_record_eager_state``: ``pynative-mode``, ``loss-built-before-step``);
* the phases below it raise :class:`Uncompilable` with their kind (``adapter/step_binding.py``: objects new at every
  call; ``adapter/step_graph.py``: a context manager, ``torch.distributions``, changing non-tensor inputs or optimizer
  hyper-parameters, an optimizer parameter outside the step): the run loop hands it to :func:`run_eagerly`;
* ``adapter/compiled_forward.py``: a ``no_grad`` forward that did not compile (scope ``"forward"``).

Also the run mode (``--mode``: :func:`set_mode`, :func:`get_mode`), which decides whether a step is compiled at all
and whether a failure raises.

Layering: imports only ``adapter/diagnostics`` (standard library): every phase of the step may import it.
"""
from __future__ import annotations

import os
from typing import Optional, Tuple

from adapter import diagnostics

MODES = ("auto", "graph", "pynative")
_mode = "pynative"


def set_mode(mode: str) -> None:
    """``auto``: compile, fall back to eager per site; ``graph``: compile or fail; ``pynative``: never compile.

    Raises:
        ValueError: ``mode`` is not one of :data:`MODES`."""
    global _mode
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    _mode = mode


def get_mode() -> str:
    return _mode


class GraphModeError(RuntimeError):
    """``--mode graph`` requires a step or forward to compile, and it could not be compiled."""


class Uncompilable(RuntimeError):
    """A site's inputs rule out a compiled step (reported as the fallback reason): raised by the phases of the step
    (binding selection, graph build) and handed to :func:`run_eagerly` by the run loop.

    Attributes:
        fallback_kind: its kind, an ``adapter.diagnostics.KINDS`` id (``diagnostics.classify`` reads it).
        at: the user's ``file:line`` of the construct, when the message does not start with it; else None.

    Raises:
        KeyError: ``kind`` is not registered.
    """

    def __init__(self, message: str, kind: str, at: Optional[str] = None):
        super().__init__(message)
        self.fallback_kind = diagnostics.get(kind).id
        self.at = at


def describe(exc: BaseException, generated: Optional[str] = None, user_file: Optional[str] = None) -> Tuple[str, str]:
    """``(kind, reason)`` of a compile stopped by ``exc``: ``diagnostics.short_reason`` (``generated``: the generated
    ``forward_fn`` file, read as ``user_file``) and ``diagnostics.classify``."""
    reason = diagnostics.short_reason(exc, generated, user_file)
    return diagnostics.classify(exc, reason), reason


def run_eagerly(where: str, *, kind: Optional[str] = None, reason: Optional[str] = None,
                exc: Optional[BaseException] = None, at: Optional[str] = None, scope: str = "step",
                what: str = "the training step", said: Optional[str] = None, generated: Optional[str] = None,
                user_file: Optional[str] = None, record: bool = True) -> Tuple[str, str]:
    """Decide that a step site or forward runs eagerly: the one call (module docstring).

    Args:
        where: the user's ``file:line`` of the site (its ``backward()``) or of the forward's call.
        kind, reason: the ``diagnostics.KINDS`` id and the one-line reason; required without ``exc``; with it,
            default: :func:`describe`'s.
        exc: the exception that stopped the compile, for a failure; None for a decision made without one. Its
            traceback is printed with ``ADAPTER_DEBUG=1``.
        at: the user's ``file:line`` the reason points at; default: ``exc.at`` when the exception has one, else the
            one the reason starts with (``diagnostics.location``).
        scope: ``"step"`` or ``"forward"``.
        what: the words for the step or forward in the messages (``"the forward of Net"``).
        said: the line printed on stderr (``run.py: ...``), after ``where``; None: nothing is printed (a decision
            ``--explain`` tells of).
        record: False when only the ``--mode graph`` rule applies (the caller records once it has refined the
            reason: ``SiteRuntime._fall_back`` for a host random draw).

    Returns:
        ``(kind, reason)``.

    Raises:
        GraphModeError: under ``--mode graph`` when ``exc`` is given (a compile that failed), chained from it,
            once recorded (``--explain-json`` lists the fallback that stopped the run) and before the line is
            printed.
        KeyError: ``kind`` is not registered.
    """
    if exc is not None and reason is None:
        reason = diagnostics.short_reason(exc, generated, user_file)
    if exc is not None and kind is None:
        kind = diagnostics.classify(exc, reason)
    kind = diagnostics.get(kind).id
    if exc is not None and os.environ.get("ADAPTER_DEBUG"):
        import traceback
        traceback.print_exception(exc)
    if record:
        diagnostics.record(kind, reason, where, scope=scope, at=at if at is not None else getattr(exc, "at", None))
    if exc is not None and _mode == "graph":
        raise GraphModeError(f"{where}: {what} cannot be compiled (--mode graph): {reason}") from exc
    if said is not None:
        diagnostics.log(f"{where}: {said}: {reason}")
    return kind, reason
