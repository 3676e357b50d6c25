"""``RandomSampler(replacement=True, num_samples=int(1e10))`` under a DataLoader (an endless loader,
karpathy/makemore's ``InfiniteDataLoader``) yields batches at once, with and without workers, as PyTorch 2.13
(tests/fixtures/endless_sampler.py, reference tests/fixtures/endless_sampler.json).

Before: patches/random_sampler.py drew all ``num_samples`` indices in one ``numpy`` call: ``MemoryError: Unable to
allocate 74.5 GiB`` at the first batch (makemore.py failed before its first step). Now 32 at a time, as PyTorch."""
import json

import pytest

from support import fixture_path, load_reference, run_py

REFERENCE = load_reference("endless_sampler.json")


@pytest.mark.parametrize("workers", ["0", "2"])
def test_endless_loader_yields_pytorchs_batches(workers):
    proc = run_py("--original", fixture_path("endless_sampler.py"), workers, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == REFERENCE
