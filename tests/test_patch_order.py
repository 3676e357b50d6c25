"""Declared patch order (issue 32 §4): each patch names in ``Patch.after`` the patches it must be applied after.

* the registry's order (``patches/__init__.py`` ``_MODULES``, by phase) keeps every ``after`` (``order_problems``),
  and ``install`` refuses an order that does not, naming both patches;
* every attribute two patches replace in this process (``adapter.patching`` ``Record.stacked``: the later patch
  wraps the earlier one's replacement through ``get_replaced``) is declared: the later patch names the earlier one
  in ``after`` (``undeclared_stacks``). The test process has every patch installed (tests/conftest.py); the modules
  whose patches an import hook applies are imported here first.
"""
import dataclasses
import types

import pytest

import patches
from adapter import patching as pa


def _moved_before(registry, name, anchor):
    """``registry`` with the patch ``name`` moved just before ``anchor`` (a reordered ``_MODULES``)."""
    moved = [p for p in registry if p.name != name]
    at = next(i for i, p in enumerate(moved) if p.name == anchor)
    return moved[:at] + [next(p for p in registry if p.name == name)] + moved[at:]


def test_the_registry_order_keeps_every_after():
    registry = patches.registry()
    assert patches.order_problems(registry) == []
    assert ("random_draws" in next(p for p in registry if p.name == "generator").after)


@pytest.mark.parametrize("above, below", [("generator", "random_draws"), ("return_types", "sort"),
                                          ("data_tensors", "dataloader")])
def test_reordering_two_dependent_entries_fails_naming_both(above, below):
    problems = patches.order_problems(_moved_before(patches.registry(), above, below))
    assert len(problems) == 1, problems
    assert f"patch {above!r} must come after {below!r}" in problems[0] and "_MODULES" in problems[0]


def test_install_refuses_a_reordered_registry(monkeypatch):
    """Checked before any patch is applied, so nothing is installed twice here."""
    reordered = _moved_before(patches.registry(), "generator", "random_draws")
    monkeypatch.setattr(patches, "registry", lambda: reordered)
    monkeypatch.setattr(patches, "_installed", dict.fromkeys(patches.PHASES, False))
    with pytest.raises(ValueError, match="'generator' must come after 'random_draws'"):
        patches.install("post-import")


def test_after_an_earlier_phase_unknown_names_and_itself():
    def make(name, phase, after=()):
        return patches.Patch(name, name, phase, lambda: None, after=after)
    early = make("early", "pre-import")
    assert patches.order_problems([make("late", "post-import", ("early",)), early]) == []  # phase decides
    assert patches.order_problems([make("x", "post-import", ("nope", "x")), make("y", "pre-import", ("x",))]) == [
        "patch 'x': after= names 'nope', which is not a registered patch",
        "patch 'x' names itself in after=",
        "patch 'y' must come after 'x' (after=), but the registry applies 'x' later: move 'x' above 'y' in "
        "patches/__init__.py _MODULES"]


def _import_hooked_modules():
    """The modules whose patches an import hook applies when they are first imported."""
    import torch.distributed  # noqa: F401
    import torch.utils.data  # noqa: F401
    import torchvision.datasets  # noqa: F401
    import torchvision.transforms  # noqa: F401


def test_every_stacked_replacement_is_declared_in_after():
    _import_hooked_modules()
    registry = patches.registry()
    stacked = [r for r in pa.records() if r.patch and r.stacked]
    assert any(r.patch == "random_draws" and "generator" in r.stacked for r in stacked)  # the probe sees stacks
    assert patches.undeclared_stacks(pa.records(), registry) == []
    # without its declaration, the same records name both patches
    stripped = [dataclasses.replace(p, after=()) if p.name == "generator" else p for p in registry]
    problems = patches.undeclared_stacks(pa.records(), stripped)
    assert problems and all("patch 'generator' replaces" in line and "'random_draws'" in line for line in problems)


def test_undeclared_stacks_on_a_throwaway_owner():
    owner = types.SimpleNamespace(f=lambda: "base")
    first = patches.Patch("first", "first", "post-import", lambda: None)
    second = patches.Patch("second", "second", "post-import", lambda: None)
    try:
        with pa.applying("first"):
            pa.patch_attr(owner, "f", lambda: "one")
        with pa.applying("second"):
            pa.patch_attr(owner, "f", lambda: "two")
        records = pa.records("second")
        assert patches.undeclared_stacks(records, [first, second]) == [
            "patch 'second' replaces SimpleNamespace.f, which patch 'first' replaced before it: "
            "add after=('first',) to 'second''s Patch"]
        declared = dataclasses.replace(second, after=("first",))
        assert patches.undeclared_stacks(records, [first, declared]) == []
    finally:
        pa.restore(owner)
