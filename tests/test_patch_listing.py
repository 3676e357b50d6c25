"""``docs/patches.md`` and ``run.py --list-patches`` are generated from the patches' declarations
(patches/listing.py): the committed page must be what the registry gives now, so a patch added or changed without
regenerating it fails here."""
import patches
from patches import listing


def test_docs_patches_md_is_generated_from_the_registry():
    assert listing.main(["--check"]) == 0, "run: .venv/bin/python -m patches.listing --write"


def test_every_patch_has_a_row_with_its_declarations():
    page = listing.markdown().splitlines()
    for patch in patches.registry():
        row = next(line for line in page if line.startswith(f"| `{patch.name}` |"))
        assert f"| {patch.phase} |" in row
        for name in listing.compact(patch.replaces):
            assert f"`{name}`" in row


def test_compact_groups_names_by_owner_in_order():
    assert listing.compact(["torch.Tensor.device", "torch.arange", "torch.Tensor.is_cuda", "torch.xpu"]) == [
        "torch.Tensor.{device, is_cuda}", "torch.{arange, xpu}"]


def test_text_lists_replaces_and_effects_indented():
    patch = patches.Patch("p", "does p", "post-import", lambda: None, replaces=("torch.a", "torch.b"),
                          effects=("an import hook",))
    bare = patches.Patch("q", "does q", "pre-import", lambda: None)
    assert listing.text([patch, bare]) == (
        f"{'p':24s} [post-import] does p\n    replaces: torch.{{a, b}}\n    effect: an import hook\n"
        f"{'q':24s} [pre-import] does q\n    replaces: {listing.NOT_DECLARED}\n")
