"""Post-import hooks: run a callback right after a named module has been executed.

MindTorch 0.4.0 raises at import time on this MindSpore build (see ``patches/compat_register_utils.py``), so the fix
must be in place *between* the moment ``mindtorch.torch._register.register_utils`` is executed and the moment its
callers use it. A ``sys.meta_path`` finder that wraps the real loader's ``exec_module`` is the standard way to do that
without touching site-packages (PEP 451 loaders).

Another finder built the same way (it asks the rest of ``sys.meta_path`` for the real spec, skipping itself) and
watching the same module would ask this one, which would ask it again, forever (``RecursionError``: found with
MindSpore 2.10). A name this finder is already looking up, in this thread, is not looked up again: the nested call
answers None and the outer one goes on to the next finder.

The loader's ``exec_module`` is replaced by a plain assignment, not ``adapter.patching.patch_attr``: the loader is
the one the import machinery made for this import's spec, no library object, and a record would keep it alive.
"""
from __future__ import annotations

import functools
import importlib.abc
import importlib.util
import sys
import threading
from typing import Callable, Dict, List, Optional

from adapter import patching as _patch_attr

_callbacks: Dict[str, List[Callable]] = {}


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself; for a watched name, returns the real spec with its loader wrapped."""

    def __init__(self):
        self._local = threading.local()  # .busy: the names this thread is looking up (re-entrancy guard)

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in _callbacks:
            return None
        busy = self._local.__dict__.setdefault("busy", set())
        if fullname in busy:  # asked again by a finder we asked (module docstring)
            return None
        busy.add(fullname)
        try:
            spec = self._real_spec(fullname, path, target)
        finally:
            busy.discard(fullname)
        if spec is None:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        original_exec = loader.exec_module

        def exec_module(module, _orig=original_exec, _name=fullname):
            _orig(module)
            for callback in _callbacks.pop(_name, []):
                callback(module)

        loader.exec_module = exec_module
        return spec

    def _real_spec(self, fullname, path, target):
        """The spec the rest of ``sys.meta_path`` finds for ``fullname`` (skipping ourselves), or None."""
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                return spec
        return None


_FINDER = _PostImportFinder()


def _attributed(patch: Optional[str], callback: Callable, module) -> None:
    """``callback(module)`` with its ``patch_attr`` calls attributed to ``patch``."""
    with _patch_attr.applying(patch):
        callback(module)


def when_imported(module_name: str, callback: Callable) -> None:
    """Call ``callback(module)`` once ``module_name`` has been executed (at once if it already is).

    The ``patch_attr`` calls the callback makes are attributed to the patch being applied when ``when_imported`` was
    called (``adapter/patching.py``: ``applying``), although the callback runs later, at the import.

    Args:
        module_name: fully qualified module name, e.g. ``"mindtorch.torch._register.register_utils"``.
        callback: called with the module object, before the importer gets it back.
    """
    callback = functools.partial(_attributed, _patch_attr.current_patch(), callback)
    if module_name in sys.modules:
        callback(sys.modules[module_name])
        return
    _callbacks.setdefault(module_name, []).append(callback)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
