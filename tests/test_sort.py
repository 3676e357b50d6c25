"""sort/argsort/msort (patches/sort.py) and the named tuples of multi-output ops (patches/return_types.py), against
real PyTorch 2.13 on the same script (tests/fixtures/sort_reference.json, recorded with ``.venv-ref/bin/python
tests/fixtures/sort_script.py``).

Before the patches: integers beyond 2**24 (and float64) were sorted as float32 (values ``[3, 16777216, 16777216]``,
argsort ``[2, 0, 1, ...]``), ``stable=`` was a TypeError, and ``.indices``/``.eigenvalues``/``.min`` of
``sort``/``cummax``/``aminmax``/``linalg.eigh``... were AttributeErrors on plain tuples."""
import os

import pytest

from support import FIXTURES, load_reference, run_json


@pytest.fixture(scope="module")
def results():
    ref = load_reference("sort_reference.json")
    got, _ = run_json("--original", os.path.join(FIXTURES, "sort_script.py"))
    return ref, got


KEYS = ["int_values", "int_desc_indices", "int_argsort", "int_msort", "f64_values", "stable_int", "stable_desc_float",
        "argsort_desc_stable", "nan_desc_False", "nan_desc_True", "nan_unstable_desc_False",
        "nan_unstable_desc_True", "dim0", "bool", "msort_float",
        "index_dtype_is_int64", "grad_through_sorted_values", "fields"]


@pytest.mark.parametrize("key", KEYS)
def test_equals_pytorch(results, key):
    ref, got = results
    assert got[key] == ref[key]
