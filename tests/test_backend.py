"""The fenced backend (issue 16): ``adapter/backend.py`` and its version shims ``adapter/backend_compat.py`` (issue 17)
are the only modules that touch private MindSpore/MindTorch names, its table resolves on the installed versions, and an untested version stops the run with one line."""
import ast
import os
import subprocess
import sys

import pytest

from adapter import backend

# also on CI's second MindSpore (pytest.ini: stack): the backend fence: private MindSpore/MindTorch names and version checks
pytestmark = pytest.mark.stack

from support import ROOT

# Packages whose private names count: MindSpore, MindTorch, and ``torch`` / ``torchvision``, which are MindTorch
# under run.py (``import torch`` in our code reaches MindTorch's private names).
PACKAGES = ("mindspore", "mindtorch", "torch", "torchvision")

# Private attributes of MindSpore/MindTorch *objects* (a Cell, a tensor, an optimizer, the executor), found whatever
# the receiver is called: their owners are not import names the scan can follow.
INSTANCE_PRIVATE = frozenset({
    "_params", "_cells", "_params_list", "_state_map", "_requires_grad", "_data_ptr", "_stub_method",
    "_graph_executor", "_cell_graph_executor", "_forward_hook", "_forward_pre_hook", "_preprocess_param_group",
    "_child_at_fork_func", "_pynative_executor", "_get_cache_prim", "_c_expression", "_extends",
})

# PyTorch's own nn.Module / Conv / optim protocol, defined the same way by real PyTorch and overridden or read by
# PyTorch code itself (``Module._load_from_state_dict`` is documented for subclasses); MindTorch mirrors it. Not a
# MindSpore/MindTorch internal: allowed.
TORCH_PROTOCOL = frozenset({
    "_load_from_state_dict", "_save_to_state_dict", "_named_members", "_version", "_buffers", "_parameters",
    "_modules", "_non_persistent_buffers_set", "_forward_hooks", "_forward_pre_hooks", "_conv_forward",
    "_LRScheduler",
})

# The fence: the modules allowed private names (backend_compat: what later MindSpore releases removed, put back).
FENCE = ("backend.py", "backend_compat.py")

# Real PyTorch's modules, imported only under .venv-ref (never MindTorch's): PyTorch's OpInfo database, which
# app/tools/conformance/opinfo_record.py records (issue 35); PyTorch publishes it there, under a private name.
REAL_PYTORCH_MODULES = frozenset({"torch.testing._internal.common_methods_invocations"})

GETATTR_LIKE = frozenset({"getattr", "hasattr", "setattr", "delattr", "patch_attr", "get_original", "is_patched"})


def _is_private(name: str) -> bool:
    """A leading underscore, not a dunder, not one of our own ``_adapter*`` markers, not PyTorch's protocol."""
    return (name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
            and not name.startswith("_adapter") and name not in TORCH_PROTOCOL)


def _files():
    """Our Python files. Not scanned: ``adapter/backend.py`` and ``adapter/backend_compat.py`` (the fence itself), the vendored PyTorch sources
    ``patches/_*_pytorch*`` (PyTorch's own code, under its licence, which uses PyTorch's private names as PyTorch
    does), ``tests/fixtures/`` (user scripts: a script may call ``torch._foreach_mul_`` as real scripts do) and this
    test (it names what it looks for)."""
    skip = {os.path.join(ROOT, "adapter", name) for name in FENCE} | {os.path.abspath(__file__)}
    tops = ["adapter", "patches", "app", "bench", "scripts", "tests", "run.py"]
    for top in tops:
        path = os.path.join(ROOT, top)
        if os.path.isfile(path):
            yield path
            continue
        for folder, dirs, names in os.walk(path):
            rel = os.path.relpath(folder, ROOT)
            dirs[:] = [d for d in dirs if not (rel == "patches" and d.startswith("_") and "pytorch" in d)
                       and not (rel == "tests" and d == "fixtures") and d != "__pycache__"]
            for name in names:
                full = os.path.join(folder, name)
                if not name.endswith(".py") or full in skip:
                    continue
                if rel == "patches" and name.startswith("_") and "pytorch" in name:
                    continue
                yield full


def _root_name(node):
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def private_uses(path: str):
    """``["file:line: what"]`` for every private MindSpore/MindTorch name used in ``path`` (module docstring rules:
    imports of private modules or names; attribute chains and getattr-like calls on a name bound by importing one of
    :data:`PACKAGES`; :data:`INSTANCE_PRIVATE` attributes on anything)."""
    rel = os.path.relpath(path, ROOT)
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    bound, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] in PACKAGES:
                    bound.add(alias.asname or parts[0])
                    if any(_is_private(p) for p in parts):
                        found.append(f"{rel}:{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] in PACKAGES and node.module not in REAL_PYTORCH_MODULES:
                for alias in node.names:
                    bound.add(alias.asname or alias.name)
                    if any(_is_private(p) for p in parts) or _is_private(alias.name):
                        found.append(f"{rel}:{node.lineno}: from {node.module} import {alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            if node.attr in INSTANCE_PRIVATE or _root_name(node.value) in bound:
                found.append(f"{rel}:{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in GETATTR_LIKE \
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[1].value, str) and _is_private(node.args[1].value):
            name = node.args[1].value
            if name in INSTANCE_PRIVATE or _root_name(node.args[0]) in bound:
                found.append(f"{rel}:{node.lineno}: {node.func.id}(..., {name!r})")
    return found


def test_private_names_only_in_backend():
    found = [use for path in _files() for use in private_uses(path)]
    assert not found, ("private MindSpore/MindTorch names outside adapter/backend.py (add a helper there):\n"
                       + "\n".join(found))


def test_scan_finds_each_kind(tmp_path, monkeypatch):
    """The scan itself: each rule reports file:line; our markers, dunders and PyTorch's protocol pass."""
    source = ("from mindspore.common.api import _pynative_executor\n"
              "import mindtorch.torch._C as C\n"
              "import torch\n"
              "x = torch._C\n"
              "y = cell._params\n"
              "z = getattr(torch.nn, '_foo', None)\n"
              "ok = (torch.__version__, torch.nn.Module._load_from_state_dict, torch._adapter_marker, self._mine)\n")
    path = tmp_path / "sample.py"
    path.write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", str(tmp_path))
    assert [u.split(": ", 1)[0] for u in private_uses(str(path))] == [
        "sample.py:1", "sample.py:2", "sample.py:4", "sample.py:5", "sample.py:6"]


def test_internals_resolve_on_installed_versions():
    """Every table entry exists in the installed MindSpore/MindTorch (feature detection for the next version)."""
    assert backend.missing_internals() == []


def test_tensor_types():
    import mindspore as ms
    import torch
    t = torch.ones(2) * 2  # a PyNative op output
    assert backend.is_tensor(ms.Tensor([1.0])) and backend.is_tensor(t) and backend.is_tensor(torch.nn.Parameter(t))
    assert not backend.is_tensor(1.0) and not backend.is_tensor([t])
    assert backend.tensor_types()[0] is ms.Tensor


def test_tested_versions_pass():
    """Both supported stacks: mindspore-dev 2.5.0.dev20250119 (default) and mindspore 2.10.0, with MindTorch 0.4.0."""
    assert backend.TESTED["mindspore"] == ("2.5.0.dev20250119", "2.10.0")
    assert backend.installed_versions()["mindspore"] in backend.TESTED["mindspore"]
    assert backend.installed_versions()["mindtorch"] == "0.4.0"
    assert backend.check_versions(environ={}) == []


def test_untested_version_stops_with_one_line():
    with pytest.raises(backend.UntestedVersionError) as info:
        backend.check_versions({"mindspore": "2.9.0", "mindtorch": "0.4.0"}, environ={})
    message = str(info.value)
    assert "\n" not in message and "mindspore 2.9.0" in message and "ADAPTER_ALLOW_UNTESTED_MINDSPORE=1" in message
    assert isinstance(info.value, SystemExit)
    with pytest.raises(backend.UntestedVersionError, match="mindtorch 0.5.0.*ADAPTER_ALLOW_UNTESTED_MINDTORCH"):
        backend.check_versions({"mindspore": "2.5.0.dev20250119", "mindtorch": "0.5.0"}, environ={})


def test_untested_version_allowed_warns_once(capsys):
    environ = {"ADAPTER_ALLOW_UNTESTED_MINDSPORE": "1"}
    versions = {"mindspore": "2.7.0", "mindtorch": "0.4.0"}
    warnings = backend.check_versions(versions, environ=environ)
    assert len(warnings) == 1 and "mindspore 2.7.0 is untested" in warnings[0]
    backend.check_versions(versions, environ=environ)
    assert capsys.readouterr().err.strip().splitlines() == warnings  # printed once per process


def test_not_installed_is_not_checked():
    """The real-PyTorch reference environment has neither package: nothing to check there."""
    assert backend.check_versions({"mindspore": None, "mindtorch": None}, environ={}) == []


def test_import_fails_with_one_line_on_untested_version(tmp_path):
    """At import: a fake installed MindSpore of another version stops the import with one line, no traceback."""
    fake = tmp_path / "mindspore"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "version.py").write_text("__version__ = '2.9.0'\n")
    code = "import adapter.backend"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))
    env.pop("ADAPTER_ALLOW_UNTESTED_MINDSPORE", None)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        "run.py: mindspore 2.9.0 is not a version this adapter was tested on (tested: 2.5.0.dev20250119, 2.10.0); "
        "set ADAPTER_ALLOW_UNTESTED_MINDSPORE=1 to run anyway"]
    env["ADAPTER_ALLOW_UNTESTED_MINDSPORE"] = "1"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stderr.strip().splitlines() == [
        "run.py: warning: mindspore 2.9.0 is untested (ADAPTER_ALLOW_UNTESTED_MINDSPORE=1; tested: 2.5.0.dev20250119, "
        "2.10.0)"]


def test_grad_signature_detection(monkeypatch):
    """``run_grad`` passes ``has_aux=False`` where the executor's ``grad`` has that parameter (later MindSpore)."""
    calls = []

    class NewExecutor:
        def grad(self, obj, grad, weights, grad_position, has_aux, *args):
            calls.append((has_aux, args))
            return "grads"

    monkeypatch.setattr(backend, "_executor", NewExecutor())
    monkeypatch.setattr(backend, "_grad_takes_has_aux", None)
    assert backend.run_grad("marker", "op", (), None, "x") == "grads"
    assert calls == [(False, ("x",))]
    monkeypatch.setattr(backend, "_grad_takes_has_aux", None)  # the real one is detected again after the test


def test_check_reads_the_installed_versions(monkeypatch):
    """Without arguments the check reads what is installed (faked here) and the process environment."""
    monkeypatch.setattr(backend, "installed_versions", lambda: {"mindspore": "2.7.0", "mindtorch": "0.4.0"})
    monkeypatch.delenv("ADAPTER_ALLOW_UNTESTED_MINDSPORE", raising=False)
    with pytest.raises(backend.UntestedVersionError, match="mindspore 2.7.0"):
        backend.check_versions()
