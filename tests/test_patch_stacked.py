"""``adapter.patching.get_replaced``: a patch that wraps what an earlier patch installed (``generator`` over
``random_draws``' ``torch.rand``, ``data_tensors`` over ``dataloader``'s ``DataLoader.__init__``) wraps that value on
every apply, never its own wrapper, and ``records(name)`` lists the attribute for both patches. Pure Python."""
import types

from adapter import patching as pa


def _wrap(inner, tag):
    def wrapper():
        return f"{tag}({inner()})"
    return wrapper


def test_stacked_patch_wraps_the_earlier_patch_and_applies_twice_safely():
    owner = types.SimpleNamespace(f=lambda: "base")
    base = owner.f

    def apply_first():
        pa.patch_attr(owner, "f", _wrap(pa.get_original(owner, "f"), "first"))

    def apply_second():
        pa.patch_attr(owner, "f", _wrap(pa.get_replaced(owner, "f", "second"), "second"))

    try:
        with pa.applying("first"):
            apply_first()
        with pa.applying("second"):
            apply_second()
        assert owner.f() == "second(first(base))"
        apply_second()  # again, outside install (as a contract test calls apply)
        with pa.applying("second"):
            apply_second()
        assert owner.f() == "second(first(base))"
        assert pa.get_original(owner, "f") is base
        assert pa.get_replaced(owner, "f", "first") is base
        assert [r.name for r in pa.records("first")] == ["f"]
        assert [r.name for r in pa.records("second")] == ["f"]
        assert pa.records("second")[0].patch == "first"
    finally:
        pa.restore(owner)
    assert owner.f is base and not pa.is_patched(owner, "f")


def test_get_replaced_without_a_record_is_the_current_value():
    owner = types.SimpleNamespace(g=1)
    assert pa.get_replaced(owner, "g", "any") == 1
