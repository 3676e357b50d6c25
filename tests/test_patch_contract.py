"""The contract every registered patch keeps (``patches/__init__.py`` ``Patch``, ``adapter/patching.py``):

* it declares what it does: ``replaces`` (dotted names, ``.*`` for names computed at start-up) and/or ``effects``;
* each declared target resolves (``patching.resolve_target``) and, after ``install``, exists;
* a target it declares ``optional`` (feature-detected: not needed on this MindSpore) may stay unpatched;
* the attributes ``patch_attr`` recorded for it while ``install`` applied it are exactly its declared targets (a
  ``.*`` target: at least one name on that owner, and any number);
* applying it a second time is safe: the recorded originals stay the pre-patch values and the installed objects
  stay the same ones (no wrapper of a wrapper).

Plus unit tests of ``patch_attr`` / ``get_original`` / ``is_patched`` / ``restore`` on throwaway objects.
"""
import types

import pytest

import patches
from adapter import patching as _patch_attr
from adapter.patching import get_original, is_patched, patch_attr, records, resolve_target, restore

_PATCHES = {p.name: p for p in patches.registry()}


def _targets(patch):
    """``(exact, wildcard_owners)``: the ``(id(owner), name)`` pairs of the declared targets, and the ids of the
    owners declared with ``.*``. Raises what ``resolve_target`` raises for a target whose owner does not exist."""
    exact, wild = {}, {}
    for path in patch.replaces:
        owner, name = resolve_target(path)
        if name == "*":
            wild[id(owner)] = path
        else:
            exact[(id(owner), name)] = path
    return exact, wild


def contract_problems(patch, recorded):
    """What ``patch`` breaks of the contract (module docstring), given the records ``patch_attr`` made for it:
    a list of one-line messages, empty when it keeps it."""
    problems = []
    if not patch.replaces and not patch.effects:
        problems.append(f"{patch.name}: declares neither replaces nor effects")
    try:
        exact, wild = _targets(patch)
    except (ImportError, AttributeError, ValueError) as exc:
        return problems + [f"{patch.name}: a declared target does not resolve: {exc}"]
    seen_wild = set()
    for record in recorded:
        key = (id(record.owner), record.name)
        if key in exact:
            continue
        if id(record.owner) in wild:
            seen_wild.add(id(record.owner))
            continue
        owner = getattr(record.owner, "__qualname__", getattr(record.owner, "__name__", repr(record.owner)))
        problems.append(f"{patch.name}: patched {owner}.{record.name}, not declared in replaces")
    keys = {(id(r.owner), r.name) for r in recorded}
    for key, path in exact.items():
        if key not in keys and path not in patch.optional:  # optional: feature-detected, may be left alone
            problems.append(f"{patch.name}: declares {path} but did not patch it through patch_attr")
    for owner_id, path in wild.items():
        if owner_id not in seen_wild:
            problems.append(f"{patch.name}: declares {path} but patched no name there")
    return problems


def _converted():
    off = patches.disabled_names()
    return [name for name in _PATCHES if name not in off]


@pytest.mark.parametrize("name", _converted())
def test_patch_declares_and_records_exactly_its_targets(name):
    patch = _PATCHES[name]
    assert contract_problems(patch, records(name)) == []
    exact, _ = _targets(patch)
    for (_, attr), path in exact.items():
        owner, _ = resolve_target(path)
        assert hasattr(owner, attr), f"{path} does not exist after install"


def _raw(owner, name):
    """``owner.__dict__[name]`` (a staticmethod/property as stored), else ``getattr(owner, name, None)``."""
    try:
        own = vars(owner)
    except TypeError:
        own = {}
    return own[name] if name in own else getattr(owner, name, None)


@pytest.mark.parametrize("name", _converted())
def test_patch_applied_twice_is_safe(name):
    """Applied again (twice: a later patch may have wrapped one of its attributes since install, which the first
    of them replaces), the patch keeps its recorded originals and installs the same objects again: it never wraps
    its own wrapper. The attributes are put back as they were after, for the tests that follow."""
    patch = _PATCHES[name]
    recorded = records(name)
    originals = [r.original for r in recorded]
    installed = [_raw(r.owner, r.name) for r in recorded]
    try:
        with _patch_attr.applying(name):
            patch.apply()
        first = [_raw(r.owner, r.name) for r in recorded]
        with _patch_attr.applying(name):
            patch.apply()
        assert records(name) == recorded, "a second apply patched other attributes"
        for record, original, value in zip(recorded, originals, first):
            assert get_original(record.owner, record.name) is original, f"{record.name}: original replaced"
            assert _raw(record.owner, record.name) is value, \
                f"{record.name}: a second apply installed another object (a wrapper of the wrapper?)"
            assert value is None or getattr(value, "__wrapped__", None) is not value, \
                f"{record.name}: the replacement wraps itself (it took the patched value for the original)"
    finally:
        for record, value in zip(recorded, installed):
            setattr(record.owner, record.name, value)


# ---------------------------------------------------------------------------------------------------------------
# The checker itself


def test_a_patch_without_declarations_fails():
    patch = patches.Patch("bare", "does something", "post-import", lambda: None)
    assert contract_problems(patch, []) == ["bare: declares neither replaces nor effects"]


def test_undeclared_and_missing_targets_fail():
    """A throwaway patch on ``torch.nn.functional``: what it patched but did not declare, and what it declared but
    did not patch, are both reported. It patches names of its own: ``restore`` of a real function (``F.relu6``)
    would put back MindTorch's original under every patch that replaced it, for the tests that follow in this
    process (nan_propagation's NaN-keeping relu6 was lost that way when the two files shared a worker)."""
    import mindtorch.torch.nn.functional as F
    patch = patches.Patch("probe", "probe", "post-import", lambda: None,
                          replaces=("torch.nn.functional.contract_probe_declared", "torch.nn.functional.silu"))
    try:
        with _patch_attr.applying("probe"):
            patch_attr(F, "contract_probe_declared", lambda x: x)
            patch_attr(F, "contract_probe_undeclared", lambda x: x)
        assert contract_problems(patch, records("probe")) == [
            "probe: patched mindtorch.torch.nn.functional.contract_probe_undeclared, not declared in replaces",
            "probe: declares torch.nn.functional.silu but did not patch it through patch_attr"]
        wild = patches.Patch("probe", "probe", "post-import", lambda: None, replaces=("torch.nn.functional.*",))
        assert contract_problems(wild, records("probe")) == []
        bad = patches.Patch("probe", "probe", "post-import", lambda: None, replaces=("torch.no_such_module.x",))
        assert contract_problems(bad, [])[0].startswith("probe: a declared target does not resolve")
    finally:
        restore(F, "contract_probe_declared")
        restore(F, "contract_probe_undeclared")
    assert records("probe") == []
    assert not hasattr(F, "contract_probe_declared") and not hasattr(F, "contract_probe_undeclared")


# ---------------------------------------------------------------------------------------------------------------
# patch_attr / get_original / is_patched / restore


class _Base:
    def inherited(self):
        return "base"


class _Owner(_Base):
    @staticmethod
    def static(x):
        return x + 1

    def method(self):
        return "own"


def test_patch_attr_keeps_the_first_original_and_restores_it():
    original = _Owner.__dict__["method"]
    assert patch_attr(_Owner, "method", lambda self: "one") is original
    assert patch_attr(_Owner, "method", lambda self: "two") is original  # a second apply: still the first
    assert is_patched(_Owner, "method") and _Owner().method() == "two"
    assert get_original(_Owner, "method") is original
    assert restore(_Owner, "method") == 1
    assert _Owner.__dict__["method"] is original and not is_patched(_Owner, "method")
    assert get_original(_Owner, "method") is original  # not patched: the current value


def test_restore_puts_a_staticmethod_back_as_one():
    patch_attr(_Owner, "static", staticmethod(lambda x: x * 10))
    assert _Owner.static(2) == 20 and get_original(_Owner, "static")(2) == 3  # original: the function (getattr)
    restore(_Owner, "static")
    assert isinstance(_Owner.__dict__["static"], staticmethod) and _Owner().static(2) == 3


def test_restore_of_an_inherited_or_new_attribute_deletes_it():
    patch_attr(_Owner, "inherited", lambda self: "patched")
    patch_attr(_Owner, "added", 5)
    assert _Owner().inherited() == "patched" and _Owner.added == 5
    assert get_original(_Owner, "added") is None  # it had none
    assert restore(_Owner) == 2
    assert "inherited" not in _Owner.__dict__ and _Owner().inherited() == "base"
    assert not hasattr(_Owner, "added")


def test_module_attributes_and_attribution():
    module = types.ModuleType("probe_module")
    module.value = 1
    with _patch_attr.applying("probe_module_patch"):
        patch_attr(module, "value", 2)
    assert module.value == 2 and get_original(module, "value") == 1
    assert [(r.name, r.patch) for r in records("probe_module_patch")] == [("value", "probe_module_patch")]
    assert get_original(module, "absent", "default") == "default"
    with pytest.raises(AttributeError):
        get_original(module, "absent")
    restore(module)
    assert module.value == 1 and records("probe_module_patch") == []


def test_resolve_target_maps_torch_to_mindtorch():
    import mindtorch.torch as torch
    import mindtorch.torch.nn.functional as F
    assert resolve_target("torch.Tensor.backward") == (torch.Tensor, "backward")
    assert resolve_target("torch.nn.functional.embedding") == (F, "embedding")
    assert resolve_target("torch.nn.functional.*") == (F, "*")
    with pytest.raises(ValueError):
        resolve_target("torch")


# The runtime's own replacements (adapter/patching.py Declared, listed by --list-patches after the patches).
def test_runtime_declared_targets_exist():
    from patches import listing
    declared = listing.declared()
    assert {d.name for d in declared} >= {"compile_cache", "graph_semantics"}
    for d in declared:
        for path in d.replaces:
            owner, name = resolve_target(path)
            assert name == "*" or hasattr(owner, name), f"{d.name}: {path} does not exist"


def test_compile_cache_records_exactly_its_declared_targets(tmp_path):
    """enable() in a fresh process: what patch_attr recorded under "compile_cache" is its DECLARED targets."""
    import json
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = (f"import sys, json; sys.path.insert(0, {root!r})\n"
            "from app import bootstrap; bootstrap.setup_mindspore('CPU')\n"
            "from adapter import compile_cache, patching\n"
            "assert compile_cache.enable('train.py', [], {}) is not None\n"
            "(d,) = compile_cache.DECLARED\n"
            "got = {(id(r.owner), r.name) for r in patching.records('compile_cache')}\n"
            "want = {(id(o), n) for o, n in map(patching.resolve_target, d.replaces)}\n"
            "print(json.dumps([got == want, sorted(r.name for r in patching.records('compile_cache'))]))\n")
    env = dict(os.environ, ADAPTER_COMPILE_CACHE_DIR=str(tmp_path), ADAPTER_COMPILE_CACHE="1")
    env.pop("WORLD_SIZE", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    same, names = json.loads(proc.stdout.strip().splitlines()[-1])
    assert same and names == ["GraphExecutor_", "_graph_executor"], names


def test_swapped_restores_the_value_on_entry_not_the_original():
    class Owner:
        @staticmethod
        def f():
            return "original"
    patch_attr(Owner, "f", staticmethod(lambda: "patch"))  # a patch's wrapper in place before the scope
    try:
        with _patch_attr.swapped([(Owner, "f", staticmethod(lambda: "scoped")), (Owner, "g", 1)]):
            assert Owner.f() == "scoped" and Owner.g == 1
        assert Owner.f() == "patch" and isinstance(vars(Owner)["f"], staticmethod) and not hasattr(Owner, "g")
    finally:
        restore(Owner)
