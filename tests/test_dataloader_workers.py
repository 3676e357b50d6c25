"""DataLoader worker processes (patches/dataloader.py, patches/mp_start.py, patches/random_sampler.py, the MNIST arrays
of patches/vision_data.py) against real PyTorch 2.13.

``tests/fixtures/dataloader_workers.py`` is a plain PyTorch script; it runs through run.py here and under real
PyTorch for the reference (``tests/fixtures/dataloader_workers_reference.json``, its command and date inside). For
three datasets -- one defined in the script holding view tensors made in the parent and read with ``.numpy()`` per
item (as MindTorch's MNIST does), an ImageFolder of PNGs with CenterCrop + ToTensor + Normalize, real Fashion-MNIST
with ToTensor + Normalize -- it reports:

* ``shuffled``: per epoch (2), whether ``DataLoader(shuffle=True, num_workers=2)`` gives the same batches as
  ``num_workers=0`` after the same seeds, *and* the loop's own ``np.random.rand()`` per batch the same values.
  PyTorch: equal in both epochs; with ``persistent_workers=True`` the first epoch equal and the second not (the
  iterator is reset, not remade, so it draws no new base seed: one RNG draw fewer).
* ``ordered``: sha256 of every batch (values, shapes, dtypes) of ``shuffle=False`` loaders with 0 and 2 workers, and
  of an IterableDataset split by ``get_worker_info()`` with a ``worker_init_fn`` (PyTorch's round-robin order):
  equal to PyTorch's digests, bit for bit.
* two workers draw different ``torch.rand`` numbers (PyTorch seeds each with base_seed + worker_id).

Start methods: the default (fork), ``multiprocessing_context="fork"`` / ``"spawn"``, and
``torch.multiprocessing.set_start_method("spawn")``. The two spawn ones are marked slow: their spawned children each
start MindSpore (set_start_method: 22 of them, ~60 s; "spawn": 222 s measured on a loaded 2-core machine).
"""
import json
import os

import pytest

from support import ROOT, last_json, run_py

XDIST_FIRST = True  # spawned DataLoader workers (~2.5 min): started first under xdist (tests/conftest.py)

SCRIPT = os.path.join(ROOT, "tests", "fixtures", "dataloader_workers.py")
REFERENCE = os.path.join(ROOT, "tests", "fixtures", "dataloader_workers_reference.json")
DATA = os.path.join(ROOT, "data")


@pytest.mark.parametrize("context", ["default", "fork", pytest.param("spawn", marks=pytest.mark.slow),
                                     pytest.param("set_start_method", marks=pytest.mark.slow)])
def test_workers_yield_pytorchs_batches(context, tmp_path):
    root = DATA if os.path.isdir(os.path.join(DATA, "FashionMNIST", "raw")) else "-"
    proc = run_py("--original", SCRIPT, context, root, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = last_json(proc.stdout)
    with open(REFERENCE) as f:
        expected = json.load(f)["result"]
    if root == "-":
        for part in ("shuffled", "ordered"):
            del expected[part]["fashion_mnist"]
    assert result == expected
