"""``wrap_attr``: replace an attribute by a wrapper of what it held, with the same wrapper object on every apply.

A patch applied twice must install the very objects it installed the first time (tests/test_patch_contract.py), not
a new wrapper of the same original: callers may hold the first one (``f = torch.sort``), and identity is what the
contract test can check. :func:`wrap_attr` builds each wrapper once per (owner, name, patch, replaced value).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

from adapter.patching import get_replaced, patch_attr

_made: Dict[Tuple[int, str, str], Tuple[Any, Any]] = {}  # (id(owner), name, patch) -> (replaced value, wrapper)


def wrap_attr(owner: Any, name: str, patch: str, make: Callable[[Any], Any]) -> Any:
    """``patch_attr(owner, name, make(replaced))``, where ``replaced`` is ``get_replaced(owner, name, patch)`` (the
    original, or the earlier patch's replacement this one wraps; None for an attribute the owner lacks: the patch
    adds it); ``make`` runs once per replaced value, so applying again installs the same object. Returns the
    installed object."""
    try:
        replaced = get_replaced(owner, name, patch)
    except AttributeError:
        replaced = None
    key = (id(owner), name, patch)
    entry = _made.get(key)
    if entry is None or entry[0] is not replaced:
        entry = _made[key] = (replaced, make(replaced))
    patch_attr(owner, name, entry[1])
    return entry[1]
