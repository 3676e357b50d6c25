"""``adapter/hooks.py``: the declared cross-layer hook attributes. Each declared hook is set and read only through
``hooks.attr`` / ``hooks.get`` in ``adapter/`` and ``patches/`` (its bare ``_adapter_<name>`` string appears in no
code line there, docstrings and ``Patch.replaces`` strings aside), an undeclared name raises, and after install the
patches that set a hook have set it."""
import ast
import os

import pytest

from adapter import hooks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _code_strings(path):
    """The string constants of the file's code: docstrings and the arguments of ``Patch(...)`` left out."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            skip.add(id(node.body[0].value))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Patch":
            skip.update(id(n) for n in ast.walk(node))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]


def test_declared_hooks_are_named_only_through_the_helpers():
    bare = {hooks.PREFIX + name for name in hooks.HOOKS}
    found = []
    for package in ("adapter", "patches", "app"):
        for folder, _, files in os.walk(os.path.join(ROOT, package)):
            for file in files:
                if file.endswith(".py") and file != "hooks.py":
                    path = os.path.join(folder, file)
                    found += [f"{os.path.relpath(path, ROOT)}:{line}: {value}" for line, value in _code_strings(path)
                              if any(b in value for b in bare)]
    assert found == [], "use adapter.hooks.attr/get for a declared hook"


def test_an_undeclared_hook_raises_naming_the_registry():
    with pytest.raises(KeyError, match="adapter/hooks.py"):
        hooks.attr("no_such_hook")
    with pytest.raises(KeyError):
        hooks.get(object, "no_such_hook")
    assert hooks.attr("float64_lr") == "_adapter_float64_lr"


def test_the_patches_set_their_hooks():
    import torch
    import torchvision.datasets
    assert hooks.get(torchvision.datasets.MNIST, "collated_batch") is not None
    assert hooks.get(torch.optim.SGD, "float64_lr") is True and hooks.get(torch.optim.Adam, "float64_lr") is True
    assert hooks.get(torch.optim.Rprop, "step_count_unread") is True
    assert hooks.get(torch.optim.RMSprop, "step_count_unread", False) is False


def test_handed_down_values_are_declared_and_provided_by_the_application(monkeypatch):
    """``HANDLERS``: what ``app/`` hands the floors below it. An undeclared name raises naming adapter/hooks.py; the
    test session's set-up (``app.bootstrap.setup_mindspore``, tests/conftest.py) has provided the spawn child's main
    module, and importing the launcher provides the failure hints; without a provider the reader gets its default."""
    with pytest.raises(KeyError, match="adapter/hooks.py"):
        hooks.provide("no_such_handler", 1)
    with pytest.raises(KeyError, match="adapter/hooks.py"):
        hooks.provided("no_such_handler")
    assert hooks.provided("spawn_child_main") == "app.mp_main"
    from app import launcher
    assert hooks.provided("failure_hints") is launcher.failure_hints
    monkeypatch.delitem(hooks._PROVIDED, "failure_hints")
    assert hooks.provided("failure_hints", "none") == "none"
