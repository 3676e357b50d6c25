"""Run the user's script, and import its sibling modules, with their training steps rewritten for compilation.

``run_main(path)`` does what ``runpy.run_path(path, run_name="__main__")`` does (a fresh ``__main__`` module, the
file's own name in tracebacks), except that the code comes from ``adapter/step_rewrite.py``. While it runs, a
``sys.meta_path`` finder gives the same treatment to modules imported from the script's folder (a project's
``engine.py`` with ``train_one_epoch``): the finder asks the normal path finder, and for a source file under that
folder swaps in a loader that rewrites the module before executing it. Files on disk are never modified; modules
elsewhere (site-packages, the standard library) are imported untouched.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import types

from adapter import compiled_step, step_rewrite


def _exec_rewritten(source: str, path: str, namespace: dict) -> None:
    tree, sites = step_rewrite.rewrite(source, path, compiled_step.next_key())
    compiled_step.register(sites, namespace)
    exec(compile(tree, path, "exec"), namespace)


class _RewritingLoader(importlib.machinery.SourceFileLoader):
    def exec_module(self, module):
        path = self.get_filename(module.__name__)
        _exec_rewritten(self.get_data(path).decode("utf-8"), path, module.__dict__)


class _SiblingFinder(importlib.abc.MetaPathFinder):
    def __init__(self, folder: str):
        self.folder = os.path.realpath(folder) + os.sep

    def find_spec(self, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader) or not spec.origin:
            return None
        if not os.path.realpath(spec.origin).startswith(self.folder):
            return None
        spec.loader = _RewritingLoader(fullname, spec.origin)
        return spec


def run_main(path: str) -> None:
    """Execute the script at ``path`` as ``__main__`` with rewritten step sites (see module docstring)."""
    with open(path, "rb") as f:
        source = f.read().decode("utf-8")
    module = types.ModuleType("__main__")
    module.__dict__.update({"__file__": path, "__builtins__": __builtins__, "__package__": None,
                            "__spec__": None, "__loader__": None, "__cached__": None})
    finder = _SiblingFinder(os.path.dirname(path))
    saved_main = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    sys.meta_path.insert(0, finder)
    try:
        _exec_rewritten(source, path, module.__dict__)
    finally:
        sys.meta_path.remove(finder)
        sys.modules["__main__"] = saved_main
