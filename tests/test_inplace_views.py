"""In-place writes through the result of basic indexing reach the indexed tensor (patches/inplace_autograd.py).

``tests/fixtures/inplace_views_cases.py`` runs under ``run.py`` and is compared with its run under real PyTorch 2.13
(``inplace_views_reference.json``, ``scripts/record_reference.py inplace_views``). Before the fix (main at e10cf08)
on 2.5-dev ``fill_column``, ``add_rows``, ``zero_row``, ``imul_column``, ``mul_ellipsis_none``, ``add_chain``,
``clamp_stepped`` and ``slice_of_1d`` left the base unchanged
(``iadd_row`` was right: its ``x[1] = ...``); on 2.10 ``add_rows`` / ``zero_row`` raised "For 'InplaceCopy ...
mem_size: 24 ... 12" and the others but ``advanced_copy`` lost the write.
"""
import pytest

from support import fixture_path, last_json, load_reference, run_py

pytestmark = pytest.mark.stack  # both stacks: the write goes through each MindSpore's __setitem__


@pytest.fixture(scope="module")
def results():
    proc = run_py("--original", fixture_path("inplace_views_cases.py"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return last_json(proc.stdout)


@pytest.mark.parametrize("case", sorted(load_reference("inplace_views_reference.json")))
def test_write_through_basic_index_matches_pytorch(results, case):
    """Base tensor and view after the in-place write are PyTorch's (an advanced index stays a copy)."""
    assert results[case] == load_reference("inplace_views_reference.json", case)


def test_chunk_views_take_the_write_and_warn_on_210():
    """MindSpore >= 2.10, ``a, b = x.chunk(2); a.add_(1); b.mul_(2)``: before, ``a.add_`` raised "For 'InplaceCopy
    ... mem_size: 24 ... 12" and ``b.mul_`` was lost in ``b`` itself; now each view holds its value (closed form:
    ``a = [[0, 1, 2]] + 1``, ``b = [[3, 4, 5]] * 2``) and each line gets the VIEW_WRITE warning (``x`` keeps its value:
    the known difference). On 2.5 chunk results are copies (no warning: their own write is right there)."""
    from adapter import backend_compat
    if not backend_compat.applied():
        pytest.skip("MindSpore 2.5: chunk results are copies")
    from patches.inplace_autograd import VIEW_WRITE
    proc = run_py("--original", fixture_path("inplace_view_offset.py"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert last_json(proc.stdout) == {"a": [[1.0, 2.0, 3.0]], "b": [[6.0, 8.0, 10.0]]}
    for line in (10, 11):
        assert f"inplace_view_offset.py:{line}: UserWarning: {VIEW_WRITE}" in proc.stderr
