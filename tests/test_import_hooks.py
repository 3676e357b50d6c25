"""patches/_import_hooks.py: the post-import finder runs a callback once a watched module has been executed, and
does not recurse when a second finder of the same design watches the same module (found with MindSpore 2.10: a
RecursionError at import)."""
import importlib
import importlib.abc
import sys
import uuid

import pytest

from patches import _import_hooks


class _OtherPostImportFinder(importlib.abc.MetaPathFinder):
    """Another library's post-import finder, built like ours: asks the rest of sys.meta_path, skipping itself."""

    def __init__(self, name):
        self.name, self.calls = name, 0

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        self.calls += 1
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                return spec
        return None


@pytest.fixture
def probe_module(tmp_path, monkeypatch):
    """The name of a fresh importable module (``VALUE = 41``) in a temporary folder on sys.path."""
    name = f"adapter_hook_probe_{uuid.uuid4().hex}"
    (tmp_path / f"{name}.py").write_text("VALUE = 41\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)  # (syspath_prepend would invalidate_caches:
    # a finder class, not instance, in sys.meta_path makes that raise)
    yield name
    sys.modules.pop(name, None)
    _import_hooks._callbacks.pop(name, None)


def _bump(module):
    module.VALUE += 1


def test_callback_runs_after_the_module_is_executed(probe_module):
    _import_hooks.when_imported(probe_module, _bump)
    module = importlib.import_module(probe_module)
    assert module.VALUE == 42
    assert probe_module not in _import_hooks._callbacks


@pytest.mark.parametrize("other_first", [False, True])
def test_second_finder_watching_the_same_module_does_not_recurse(probe_module, monkeypatch, other_first):
    other = _OtherPostImportFinder(probe_module)
    meta_path = list(sys.meta_path)
    monkeypatch.setattr(sys, "meta_path", meta_path)
    _import_hooks.when_imported(probe_module, _bump)  # our finder first in sys.meta_path
    meta_path.insert(0 if other_first else meta_path.index(_import_hooks._FINDER) + 1, other)
    module = importlib.import_module(probe_module)  # RecursionError without the guard
    assert module.VALUE == 42  # the callback ran, once
    assert other.calls <= 2
