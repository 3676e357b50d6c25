"""The parity verdict of ``run.py --compare`` (issue 18; ``app/tools/parity/compare.py``, ``judge``): rules judged
against PyTorch's own noise floor, on synthetic records (fast, no MindSpore run) and end to end against a golden
PyTorch 2.13 record (``tests/fixtures/parity/golden/small_cnn_adam``) with and without the Adam patch."""
import json
import os

import numpy as np
import pytest

from app.tools.parity import compare
from app.tools.parity.recorder import fingerprint

from support import ROOT, run_py

PARITY = os.path.join(ROOT, "tests", "fixtures", "parity")

# a model conv -> bn -> relu -> fc, as the recorder names it (layer_order is the step-1 forward order)
ORDER = ["conv", "bn", "relu", "fc", "<model>"]
CLASSES = {"<model>": "Net", "conv": "Conv2d", "bn": "BatchNorm2d", "relu": "ReLU", "fc": "Linear"}


def _base(seed=0):
    rng = np.random.default_rng(seed)
    grads = {"conv.weight": rng.standard_normal(200), "bn.weight": rng.standard_normal(8),
             "fc.weight": rng.standard_normal(80), "fc.bias": rng.standard_normal(10)}
    layers = {k: rng.standard_normal(64) for k in ORDER}
    layers["bn"][0] = 3e-6  # near 0: float32 rounding can put it on either side
    layers["relu"] = np.maximum(layers["bn"], 0)
    finals = {"conv.weight": rng.standard_normal(200), "bn.running_mean": rng.standard_normal(8)}
    return grads, layers, finals


def _record(folder, losses, grads, layers, finals, perturb=0.0):
    os.makedirs(folder, exist_ok=True)
    arrays = {}
    for prefix, d in (("grad/", grads), ("layer/", layers), ("final/", finals)):
        arrays.update({prefix + k: np.asarray(v, np.float32) for k, v in d.items()})
    meta = {"torch": "x", "mindspore": "y", "command": ["net.py"], "steps_requested": len(losses),
            "steps_run": len(losses), "model_class": "Net", "losses": list(losses), "batch_checksums": {},
            "replayed_batches": 0, "dropout_disabled": [], "init_loaded": "init.pth", "perturb": perturb,
            "layer_order": ORDER, "layer_classes": CLASSES,
            "fingerprints": {k: fingerprint(v) for k, v in arrays.items()}}
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f)
    np.savez(os.path.join(folder, "arrays.npz"), **arrays)
    return folder


def _scaled(d, rel, seed):
    """Each array of ``d`` moved by a random vector of relative size ``rel``."""
    rng = np.random.default_rng(seed)
    out = {}
    for k, v in d.items():
        noise = rng.standard_normal(v.shape)
        out[k] = v + rel * np.linalg.norm(v) / np.linalg.norm(noise) * noise
    return out


LOSSES = [2.3, 2.1, 1.9, 1.8, 1.6, 1.5, 1.45, 1.4]


def _setup(tmp_path, ms_losses, floor_losses=None, ms_grads=None, ms_layers=None):
    grads, layers, finals = _base()
    ref = _record(str(tmp_path / "ref"), LOSSES, grads, layers, finals)
    if floor_losses is not None:
        _record(str(tmp_path / "ref" / "floor"), floor_losses, grads, layers, _scaled(finals, 0.02, 1), 1e-7)
    if ms_layers is None:
        ms_layers = _scaled(layers, 1e-7, 3)
        ms_layers["bn"][0] = layers["bn"][0]
        ms_layers["relu"] = np.maximum(ms_layers["bn"], 0)
    ms = _record(str(tmp_path / "ms"), ms_losses, ms_grads or _scaled(grads, 2e-6, 2), ms_layers,
                 _scaled(finals, 0.01, 4))
    return compare.compare_records(ms, ref, os.path.join(ref, "floor"))


def _drift(rel_per_step, sign=1.0):
    return [v * (1 + sign * rel_per_step * i) for i, v in enumerate(LOSSES)]


def test_within_twice_the_floor_passes_and_names_the_floor(tmp_path):
    # MindSpore's curve mean rel. diff 7e-3 * 3.5 = 2.45e-2 against PyTorch's own 1.3 x that: 0.77x the floor
    r = _setup(tmp_path, _drift(7e-3), floor_losses=_drift(9e-3, -1))
    assert r["passed"] and r["failed_rules"] == []
    curve = r["rules"]["curve"]
    assert curve["floor"] == pytest.approx(9e-3 * 3.5, rel=1e-5) and curve["limit"] == pytest.approx(2 * curve["floor"])
    assert curve["times_floor"] == pytest.approx(7 / 9, rel=1e-4)
    text = compare.format_report(r)
    assert "PARITY PASSED: MindSpore stays within 2x PyTorch's own noise floor (0.0315" in text
    # final weights and BN statistics: reported with the floor's, not judged
    assert "(PyTorch against itself: 0.02" in text and "reported, not judged" in text
    for name in compare.RULES.values():  # every rule printed with its source
        assert "issue" in name


def test_curve_beyond_twice_the_floor_fails_naming_rule_and_factor(tmp_path):
    r = _setup(tmp_path, _drift(3e-2), floor_losses=_drift(1e-2, -1))
    assert not r["passed"] and r["failed_rules"] == ["curve"]
    assert r["rules"]["curve"]["times_floor"] == pytest.approx(3.0, rel=1e-4)
    assert r["first_departure"] == 2  # the first loss after the first update
    text = compare.format_report(r)
    assert "[FAIL] loss curve: mean rel. diff 0.105 (3x PyTorch's noise floor 0.035) > 2 x floor = 0.07" in text
    assert "suspect the update (optimizer)" in text and text.rstrip().endswith("PARITY FAILED: loss curve")


def test_quiet_floor_limit_is_the_step1_tolerance(tmp_path):
    # PyTorch identical to itself (floor 0): a curve within 1e-5 passes, one at 1e-4 fails
    assert _setup(tmp_path / "a", _drift(1e-6), floor_losses=LOSSES)["passed"]
    r = _setup(tmp_path / "b", _drift(3e-5), floor_losses=LOSSES)
    assert r["failed_rules"] == ["curve"] and r["rules"]["curve"]["limit"] == 1e-5


def test_no_floor_leaves_the_curve_not_judged(tmp_path):
    r = _setup(tmp_path, _drift(3e-2))
    assert r["rules"]["curve"]["ok"] is None and r["passed"]
    assert "PARITY PASSED (loss curve not judged: no noise floor)" in compare.format_report(r)


def test_step1_loss_and_first_divergent_layer(tmp_path):
    grads, layers, _ = _base()
    ms_layers = _scaled(layers, 1e-6, 3)
    ms_layers["bn"] = layers["bn"] * 1.01  # a BatchNorm that differs
    ms_layers["relu"] = np.maximum(ms_layers["bn"], 0)
    losses = [LOSSES[0] * (1 + 1e-3)] + LOSSES[1:]
    r = _setup(tmp_path, losses, floor_losses=LOSSES, ms_layers=ms_layers)
    assert "step1_loss" in r["failed_rules"] and r["first_divergent_layer"] == "bn"
    text = compare.format_report(r)
    assert "[FAIL] step-1 loss: rel. diff 0.001 > 1e-05 (100x the limit)" in text
    assert "first diverging layer bn" in text.splitlines()[-1]


def test_gradients_below_a_relu_input_sign_flip_are_not_comparable(tmp_path):
    """One element of the ReLU's input on the other side of 0 (relu's output mask differs): the parameters whose
    modules run before it (conv, bn) are not comparable; those after it (fc) are judged as usual."""
    grads, layers, _ = _base()
    ms_layers = _scaled(layers, 1e-7, 3)
    ms_layers["bn"][0] = -2e-6
    ms_layers["relu"] = np.maximum(ms_layers["bn"], 0)
    ms_grads = _scaled(grads, 1e-6, 2)
    ms_grads["conv.weight"] = _scaled({"x": grads["conv.weight"]}, 1e-2, 5)["x"]  # 1 %: the flip's effect
    ms_grads["bn.weight"] = _scaled({"x": grads["bn.weight"]}, 1e-2, 6)["x"]
    r = _setup(tmp_path, LOSSES, floor_losses=LOSSES, ms_grads=ms_grads, ms_layers=ms_layers)
    assert r["relu_flip"] == "relu"
    assert sorted(r["grads_not_comparable"]) == ["bn.weight", "conv.weight"]
    assert r["rules"]["step1_grads"]["ok"] and r["passed"]
    assert "not comparable (flip at relu): 2 parameters" in compare.format_report(r)
    # the same 1 % on fc (after the flip) fails, named with its factor over the limit
    ms_grads["fc.weight"] = _scaled({"x": grads["fc.weight"]}, 1e-2, 7)["x"]
    r = _setup(tmp_path / "b", LOSSES, floor_losses=LOSSES, ms_grads=ms_grads, ms_layers=ms_layers)
    assert r["failed_rules"] == ["step1_grads"] and r["grads_failed"] == ["fc.weight"]
    assert "worst fc.weight rel. diff 0.01 (100x the limit)" in compare.format_report(r)
    # without the flip, conv and bn fail too
    r = _setup(tmp_path / "c", LOSSES, floor_losses=LOSSES, ms_grads=ms_grads)
    assert r["relu_flip"] is None and sorted(r["grads_failed"]) == ["bn.weight", "conv.weight", "fc.weight"]


def test_long_curves_are_smoothed():
    assert compare.smoothing_window(50) == 1 and compare.smoothing_window(1000) == 20
    np.testing.assert_allclose(compare.smooth([1, 2, 3, 4], 2), [1.5, 2.5, 3.5])
    # batch-to-batch jitter in opposite phase: raw curves differ by ~20 %, their moving averages by < 1 %
    x = np.arange(1000)
    a, b = 2 + 0.2 * (-1) ** x, 2 - 0.2 * (-1) ** x
    assert np.mean(compare.curve_rel(a, b, 1)) == pytest.approx(0.2, rel=0.02)
    assert np.mean(compare.curve_rel(a, b, 20)) < 1e-9


def _run_adam(tmp_path, disable):
    out = tmp_path / "report"
    proc = run_py("--reference-record", os.path.join(PARITY, "golden", "small_cnn_adam"), "--compare-steps", "8",
                  "--compare-out", out, "--original", os.path.join(PARITY, "small_cnn.py"), "--data-root", "data",
                  "--optim", "adam", "--adam-eps", "1e-3", "--steps", "8", env=dict(ADAPTER_DISABLE_PATCHES=disable))
    assert os.path.exists(out / "report.json"), proc.stdout + proc.stderr
    return proc, json.load(open(out / "report.json"))


def test_adam_run_passes_against_golden(tmp_path):
    proc, r = _run_adam(tmp_path, "")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert r["passed"] and r["first_different_batch"] is None and r["batches_compared"] == 8
    assert r["rules"]["curve"]["ok"] and r["rules"]["curve"]["floor"] is not None
    assert "PARITY PASSED" in proc.stdout and "noise floor" in proc.stdout


def test_adam_without_its_patch_fails_naming_the_curve_rule(tmp_path):
    """MindSpore's own Adam epsilon (patches/adam.py disabled): step 1 agrees, the second loss differs by 3 %; the
    run exits 1 naming the curve rule, its factor over PyTorch's floor and the step it departs at."""
    proc, r = _run_adam(tmp_path, "adam")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert r["failed_rules"] == ["curve"] and r["first_departure"] == 2 and r["rules"]["curve"]["times_floor"] > 100
    assert "[FAIL] loss curve" in proc.stdout and "PARITY FAILED: loss curve" in proc.stdout
    assert "leaves PyTorch's noise at backward() call 2" in proc.stdout
    assert "no step-1 layer output diverges" in proc.stdout


def test_seeds_verdict_is_two_pytorch_stds(tmp_path):
    """``--compare-seeds``: |mean(MindSpore) - mean(PyTorch)| <= 2 x PyTorch's sample std over seeds."""
    torch_values = [1.0, 1.2, 1.4]  # mean 1.2, std 0.2
    ok = compare.seeds_verdict(torch_values, [1.5, 1.6, 1.45])  # mean 1.5167: 1.58 std away
    assert ok["ok"] and ok["torch_std"] == pytest.approx(0.2) and ok["limit"] == pytest.approx(0.4)
    assert ok["times_std"] == pytest.approx((1.5166667 - 1.2) / 0.2, rel=1e-5)
    bad = compare.seeds_verdict(torch_values, [1.7, 1.6, 1.65])  # 2.25 std away
    assert not bad["ok"]
    # a seed that changes nothing: the means must agree to 1e-5
    assert compare.seeds_verdict([2.0, 2.0], [2.0 + 1e-6, 2.0])["ok"]
    assert not compare.seeds_verdict([2.0, 2.0], [2.001, 2.0])["ok"]
    assert compare.final_metric(list(range(10))) == 8.5  # mean of the last 10 // 5 = 2
    result = {"command": ["net.py"], "steps": 3, "seeds": [1, 2, 3], "last_k": [1], "verdict": bad,
              "losses_torch": [[2, 1.5, v] for v in torch_values],
              "losses_mindspore": [[2, 1.5, v] for v in bad["mindspore"]]}
    text = compare.format_seeds(result)
    assert "[FAIL]   |mean diff| 0.45 > 2 x PyTorch's std over seeds = 0.4 (2.25x the std)" in text
    assert text.rstrip().endswith("outside PyTorch's spread")
    compare.plot_seeds(result, str(tmp_path / "seeds.png"))
    assert (tmp_path / "seeds.png").stat().st_size > 10_000


def test_final_state_compared_only_after_the_same_step(tmp_path):
    """A golden record of 8 steps compared over 3: the final weights are not each other's (the old report compared
    MindSpore's step-3 weights with PyTorch's step-8 ones)."""
    r = _setup(tmp_path, LOSSES[:3], floor_losses=LOSSES)
    assert not r["finals_comparable"] and r["weights_max_rel_diff"] is None
    assert r["noise_floor"]["weights_max_rel_diff"] is None
    assert "final weights: not compared (PyTorch's record stops after 8 steps, this run after 3)" in \
        compare.format_report(r)
    assert _setup(tmp_path / "b", LOSSES, floor_losses=LOSSES)["weights_max_rel_diff"] == pytest.approx(0.01, rel=0.01)
