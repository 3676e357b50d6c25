"""torch.unique / Tensor.unique (patches/unique.py) against real PyTorch 2.13 on the same script
(tests/fixtures/unique_reference.json, recorded with ``.venv-ref/bin/python tests/fixtures/unique_script.py``).

Without the patch (``ADAPTER_DISABLE_PATCHES=unique``) MindTorch returned the values alone for ``return_counts=True``
(so timm's ``regnet.py:674`` unpacking failed), ignored ``dim``, raised for ``return_inverse=True`` with
``sorted=True``, and sorted integers through float32 (``big_all``'s values rounded)."""
import os

import pytest

from support import FIXTURES, last_json, load_reference, run_py

SCRIPT = os.path.join(FIXTURES, "unique_script.py")
pytestmark = pytest.mark.stack


@pytest.fixture(scope="module")
def results():
    ref = load_reference("unique_reference.json")
    proc = run_py("--explain", "--original", SCRIPT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return ref, last_json(proc.stdout), proc.stderr


def test_every_case_equals_pytorch(results):
    """Values, dtypes and shapes of each case (dim=None/k, inverse, counts, NaN, 2**40 integers, 0-d, empty, bool)."""
    ref, got, _ = results
    cases = [k for k in ref if k != "losses"]
    assert len(cases) >= 30
    assert {k: got.get(k) for k in cases} == {k: ref[k] for k in cases}


def test_loss_weighted_by_counts_equals_pytorch(results):
    """A forward that calls torch.unique: the 4 losses of the SGD loop within float32 noise of PyTorch's."""
    ref, got, _ = results
    assert got["losses"] == pytest.approx(ref["losses"], rel=1e-6)


def test_compiled_step_falls_back_with_the_reason(results):
    """In a compiled step unique raises (its output shape depends on the values), so the step runs in PyNative and
    run.py says why, naming the user's line: never MindTorch's graph path, which ignores return_counts."""
    _, _, stderr = results
    assert "unique_script.py:58: RuntimeError: 'torch.unique in a compiled graph" in stderr
    assert "eager (PyNative)" in stderr
