"""``torch.Generator`` (patches/generator.py): MindTorch 0.4.0 raised NotImplementedError at ``torch.Generator()``, so
``random_split(..., generator=torch.Generator().manual_seed(42))`` and ``DataLoader(..., generator=g)`` failed at the
user's line. Checked against real PyTorch 2.13 CPU on the same script (tests/fixtures/generator_reference.json,
recorded with ``.venv-ref/bin/python tests/fixtures/generator_script.py``): every draw, the split, the loader's
batches over two epochs, its worker base seed and the 5056-byte ``get_state()`` equal PyTorch's."""
import os

import numpy as np
import pytest

from support import FIXTURES, load_reference, run_json

# float32 normals: PyTorch's AVX2 log/sincos approximations vs numpy's; every other value is bit for bit
APPROX = {"randn": 1e-6, "step_noise_sums": 1e-6}


@pytest.fixture(scope="module")
def drawn():
    ref = load_reference("generator_reference.json")
    got, stderr = run_json("--original", os.path.join(FIXTURES, "generator_script.py"))
    return ref, got, stderr


@pytest.mark.parametrize("key", ["initial", "randperm", "rand", "randn", "randint", "randint2", "normal", "uniform_",
                                 "normal_", "state_head", "set_state", "split", "loader", "subset", "base_seed",
                                 "state_sha_cached_normal", "state_sha_after_cache", "after_set_state",
                                 "step_noise_sums"])
def test_draw_equals_pytorch(drawn, key):
    ref, got, _ = drawn
    if key in APPROX:
        np.testing.assert_allclose(got[key], ref[key], rtol=APPROX[key], atol=0)
    else:
        assert got[key] == ref[key]


def test_no_generator_warning_and_the_step_site_says_why_it_runs_eagerly(drawn):
    """MindTorch warned "Don't support generator now." per sampler; a draw from a generator inside a training step
    is PyTorch's only on the host, so that site runs eagerly and says so (before, the compiled step silently drew
    MindSpore's numbers from the second step on)."""
    stderr = drawn[2]
    assert "support generator" not in stderr and "generator is not used" not in stderr
    assert ("the training step runs in PyNative (eager), not compiled: " in stderr
            and "torch.randn(generator=...) draws PyTorch's numbers on the host, which a graph cannot" in stderr)


def test_other_functions_say_the_generator_is_not_used(recwarn):
    """bernoulli and friends draw from MindSpore's RNG: not silent (one warning naming this file's line)."""
    import torch
    g = torch.Generator().manual_seed(0)
    torch.bernoulli(torch.full((3,), 0.5), generator=g)
    messages = [str(w.message) for w in recwarn if "generator" in str(w.message)]
    assert messages and messages[0].startswith("torch.bernoulli(generator=...): the generator is not used here")
    assert recwarn[0].filename.endswith("test_generator.py")
