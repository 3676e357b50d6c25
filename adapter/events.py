"""Training events, for observers that must see every step however it runs (eager bridge or compiled graph).

The patch layer and the compiled step emit:

* ``"module_call"`` (``module``): an outermost ``nn.Module`` call is starting in PyNative (not a compiled forward);
* ``"backward"`` (``loss``): a loss was differentiated: ``loss.backward()`` on the eager bridge, or a compiled step
  (``loss`` is then the graph's output, a MindSpore tensor);
* ``"step_begin"`` (``optimizer``): ``optimizer.step()`` is about to update, ``.grad`` holds the gradients;
* ``"step_end"`` (``optimizer``): the update is done (also for an update fused into a compiled step).

:func:`emit` costs one truth test when nobody listens. Used by ``app/tools/parity`` (``run.py --compare``).
"""
from __future__ import annotations

from typing import Callable, Dict, List

_listeners: Dict[str, List[Callable]] = {}


def subscribe(event: str, callback: Callable) -> None:
    """Call ``callback(*args)`` on every ``emit(event, *args)``, in subscription order."""
    _listeners.setdefault(event, []).append(callback)


def clear() -> None:
    """Remove every listener."""
    _listeners.clear()


def active(event: str) -> bool:
    """Whether anybody listens to ``event`` (to skip preparing its arguments)."""
    return bool(_listeners.get(event))


def emit(event: str, *args) -> None:
    """Call the listeners of ``event``; their exceptions propagate to the emitter (and so to the script)."""
    for callback in _listeners.get(event, ()):
        callback(*args)
