"""``run.py --seed S`` (``app/launcher.py`` ``seed_all``): torch's, Python's and numpy's generators seeded before
the script runs, as ``scripts/run_under_torch.py --torch-seed S`` does under PyTorch for the corpus goldens.

Why it exists: a script that seeds nothing (pytorch/examples' mnist_forward_forward) is a new random draw in each run,
here as under PyTorch (2.13's default generator starts from a random seed per process); judged against PyTorch's
band over seeds, such a test fails in some runs and not others (its layer1 loss: 0.69487 in one CI run, below the
band; over 20 unseeded runs here sd 0.0014). ``tests/test_corpus.py`` runs such scripts with ``--seed 1``.
Reference: ``tests/fixtures/seed/seed_draws_reference.json`` (real PyTorch; how it was made is in the file)."""
import json
import os

from support import ROOT, last_json, run_py

SCRIPT = os.path.join(ROOT, "tests", "fixtures", "seed", "seed_draws.py")


def _draws(*opts):
    proc = run_py(*opts, "--original", SCRIPT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return last_json(proc.stdout)


def test_the_same_seed_gives_the_same_draws_and_numpy_and_random_draw_as_under_pytorch():
    with open(os.path.join(ROOT, "tests", "fixtures", "seed", "seed_draws_reference.json")) as f:
        ref = json.load(f)
    first, second, unseeded = _draws("--seed", str(ref["seed"])), _draws("--seed", str(ref["seed"])), _draws()
    assert first == second  # every generator, a Linear's initial weights included
    # Python's random and numpy are the same generators on both sides (drawn before torch's: the fixture says
    # why): the same numbers as PyTorch's run
    assert first["random"] == ref["draws"]["random"] and first["numpy"] == ref["draws"]["numpy"]
    # torch's: MindTorch's (numpy's stream, after the numpy draws above), seeded, but not PyTorch's numbers
    assert len(first["torch_rand"]) == 3 and all(0 <= v < 1 for v in first["torch_rand"])
    # without --seed each run is another draw (what made test_corpus's band checks flaky)
    assert unseeded["torch_rand"] != first["torch_rand"] and unseeded["linear_weight"] != first["linear_weight"]
    assert unseeded["numpy"] != first["numpy"]


def test_a_seed_outside_numpys_range_is_a_usage_error():
    proc = run_py("--seed", "-1", "--original", SCRIPT, timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "--seed -1: must be in [0, 2**32 - 1]" in proc.stderr
