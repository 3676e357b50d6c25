"""``run.py --compare``: run a script under real PyTorch, then here on MindSpore from the same start, and report.

1. Reference: ``.venv-ref/bin/python app/tools/parity/reference.py`` runs the script under real PyTorch for N optimizer
   steps, storing its initial weights (``init.pth``), every batch, the losses, step-1 gradients and layer outputs, the
   final weights (``<out>/record/torch``). ``--reference-record DIR`` uses an existing record instead (e.g. a golden
   one committed in ``tests/fixtures/parity``).
2. MindSpore: the script runs here (compiled step as usual) with the reference's ``init.pth`` loaded into the model
   at its first training call, the reference's batches instead of its own DataLoader's, dropout off; same records
   (``<out>/record/mindspore``).
3. Report: ``<out>/report.txt``, ``report.json``, ``loss_curves.png``.

Differences: for two arrays ``a`` (MindSpore) and ``b`` (PyTorch), ``rel = ||a - b||_2 / ||b||_2``,
``max_abs = max |a - b|``, ``cosine = <a, b> / (||a|| ||b||)``. Where a record has no full arrays (golden records)
they are estimated from 8 random projections (``recorder.fingerprint``; ~25 % relative error on ``rel``).

The verdict (issue 18; :func:`judge`, ``RULES``): exit code 0 iff every rule holds.

1. step-1 loss: rel. diff <= 1e-5 (issue 3's target; the same weights and batch give the same loss up to float32
   rounding of one forward pass: measured 2.2e-7 to 2.5e-6 on the fixtures and jobs, docs/parity.md).
2. step-1 gradients, per parameter: cosine >= 0.9999 and rel. diff <= 1e-4 (msprobe's per-tensor criterion is
   cosine > 0.99; identical inputs allow 0.9999. 1e-4: issue 3; measured 1.9e-6 to 2.3e-5 without mask flips).
   A parameter whose module runs before a ReLU whose input changed sign between the two runs (a float32-rounding
   "mask flip", detected in the step-1 layer outputs) is "not comparable (flip at LAYER)", not failed: one flipped
   element changes every gradient below it by ~1 % on both frameworks alike (PyTorch against itself too).
3. loss curve: mean rel. diff <= 2 x the noise floor, the same mean for PyTorch against itself from initial weights
   x (1 + 1e-7 N(0,1)), measured in the same run over the same steps (MindSpore's migration standard: run the
   baseline twice to measure its own noise; the factor 2: issue 18). At least 1e-5 (rule 1's limit): a curve within
   rounding of PyTorch at every step passes however quiet the floor. Runs of >= 200 steps compare moving averages
   (window ``smoothing_window``) of both curves (issue 18: smoothed curves, as MindSpore's standard compares).
4. final weights and BatchNorm statistics: reported against the floor's, not judged (they follow the curve).
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from typing import Dict, List, Optional

import numpy as np

from adapter import allocator
from adapter.script_run import run_script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
LOSS_STEP1_TOL = 1e-5
GRAD_TOL = 1e-4
GRAD_COSINE_MIN = 0.9999
CURVE_FLOOR_FACTOR = 2.0
SMOOTH_FROM_STEPS = 200  # curves of at least this many losses are compared as moving averages
# Modules at whose input a sign change switches the gradient through (a ReLU's mask): a flip in their output's sign
# pattern between the two runs is a float32-rounding event, not an op difference (docs/parity.md).
RELU_LIKE = ("ReLU", "ReLU6", "LeakyReLU", "RReLU", "PReLU", "Hardtanh", "Threshold")
# The rules as the report and docs/parity.md state them, each with its source.
RULES = {
    "step1_loss": "step-1 loss rel. diff <= 1e-5 (issue 3; float32 rounding of one forward pass)",
    "step1_grads": "step-1 gradients, every parameter: cosine >= 0.9999 and rel. diff <= 1e-4 (msprobe: cosine > "
                   "0.99 per tensor, tightened for identical inputs; issue 3: 1e-4); below a ReLU-input sign flip: "
                   "not comparable",
    "curve": "loss curve mean rel. diff <= 2 x PyTorch's own noise floor at the same perturbation (MindSpore's "
             "migration standard: run the baseline twice to measure its noise; factor 2: issue 18)",
}
LAYER_TOL = 1e-4  # a layer output "diverges" above this relative difference
# A gradient whose PyTorch norm is below this fraction of the largest parameter gradient's norm is zero up to float32
# rounding (a conv bias followed by BatchNorm: BN removes the mean, so d loss / d bias = 0 exactly in real numbers).
# Its relative difference is rounding noise over noise; it passes if MindSpore's is as small.
NEGLIGIBLE_GRAD = 1e-5


class CompareError(RuntimeError):
    """The comparison could not be made (no reference environment, reference run failed, no training step)."""


# -- the reference side --------------------------------------------------------------------------------------------
def reference_python(explicit: Optional[str]) -> str:
    """The reference environment's Python: ``explicit``, ``$ADAPTER_REFERENCE_PYTHON``, or ``.venv-ref`` (created with
    ``scripts/setup_reference.sh`` on first use). Raises CompareError if it cannot be had."""
    path = explicit or os.environ.get("ADAPTER_REFERENCE_PYTHON")
    if path:
        if not os.path.exists(path):
            raise CompareError(f"--reference-python {path}: no such file")
        return path
    path = os.path.join(ROOT, ".venv-ref", "bin", "python")
    setup = os.path.join(ROOT, "scripts", "setup_reference.sh")
    result = subprocess.run(["bash", setup])
    if result.returncode != 0 or not os.path.exists(path):
        raise CompareError("could not create the reference environment (.venv-ref with real PyTorch); "
                           "see the messages above, or pass --reference-python PYTHON")
    return path


def _reference_run(python: str, script: str, script_args: List[str], steps: int, out: str, options: List[str],
                   failure: str, quiet: bool = False) -> None:
    """``reference.py`` with ``options`` into the fresh record folder ``out``; CompareError(``failure`` + command)
    if it exits non-zero or writes no ``meta.json``. PyTorch runs in the environment ``python SCRIPT`` would have
    had: without the allocator run.py's process set up for itself (``adapter/allocator.py``: MindSpore's jemalloc
    is not PyTorch's to load)."""
    if os.path.exists(out):
        shutil.rmtree(out)
    cmd = [python, os.path.join(ROOT, "app", "tools", "parity", "reference.py"), "--out", out, "--steps", str(steps),
           *options, script, "--"] + list(script_args)
    result = subprocess.run(cmd, stdout=subprocess.DEVNULL if quiet else None, env=allocator.environ_without_ours())
    if result.returncode != 0 or not os.path.exists(os.path.join(out, "meta.json")):
        raise CompareError(f"{failure} (exit code {result.returncode}): {' '.join(cmd)}")


def run_reference(python: str, script: str, script_args: List[str], steps: int, out: str) -> None:
    """Run ``script`` under real PyTorch into the record folder ``out``. Raises CompareError if it fails."""
    print(f"run.py --compare: [1/2] PyTorch reference ({python})", file=sys.stderr, flush=True)
    _reference_run(python, script, script_args, steps, out, [],
                   "the script failed under real PyTorch; fix that first")


NOISE_FLOOR_PERTURB = 1e-7  # ~ float32 rounding (2^-23 = 1.2e-7)


def run_noise_floor(python: str, script: str, script_args: List[str], steps: int, reference_dir: str,
                    out: str) -> None:
    """PyTorch again, from the reference's weights times ``1 + 1e-7 N(0,1)`` and its batches: how far PyTorch drifts
    from itself after a rounding-sized change. Raises CompareError if it fails."""
    print(f"run.py --compare: [1b] PyTorch noise floor (initial weights x (1 + {NOISE_FLOOR_PERTURB:g} N(0,1)))",
          file=sys.stderr, flush=True)
    _reference_run(python, script, script_args, steps, out,
                   ["--replay", reference_dir, "--perturb", str(NOISE_FLOOR_PERTURB), "--no-arrays"],
                   "the noise-floor run failed", quiet=True)


def smoothing_window(n: int) -> int:
    """The moving-average window for a curve of ``n`` losses: 1 (raw) below ``SMOOTH_FROM_STEPS``, else ``n // 50``
    (20 for 1000 steps: wide enough to average a batch-to-batch loss jitter, narrow enough to follow the trend)."""
    return 1 if n < SMOOTH_FROM_STEPS else max(1, n // 50)


def smooth(values, window: int) -> np.ndarray:
    """Trailing moving average (``numpy.convolve`` 'valid': ``len(values) - window + 1`` points), float64."""
    v = np.asarray(values, dtype=np.float64)
    if window <= 1 or len(v) < window:
        return v
    return np.convolve(v, np.ones(window) / window, mode="valid")


def curve_rel(a, b, window: int) -> List[float]:
    """Per-point relative difference of curve ``a`` against ``b`` after :func:`smooth` with ``window``."""
    sa, sb = smooth(a, window), smooth(b, window)
    return [_rel(float(x), float(y)) for x, y in zip(sa, sb)]


def noise_floor(floor_dir: str, reference_dir: str, n: Optional[int] = None, steps: Optional[int] = None) -> Dict:
    """PyTorch against itself: the noise-floor run's loss curve, final weights and BN statistics against the
    reference's (the same keys as in the main result), over its first ``n`` losses (all if None); the final state
    only if both runs, and the comparison (``steps``, if given), stopped after the same step (else None)."""
    floor_rec, ref_rec = _load(floor_dir), _load(reference_dir)
    floor, ref = floor_rec[0], ref_rec[0]
    n = min(len(floor["losses"]), len(ref["losses"]), n if n is not None else 1 << 62)
    rel = [_rel(floor["losses"][i], ref["losses"][i]) for i in range(n)]
    window = smoothing_window(n)
    smoothed = curve_rel(floor["losses"][:n], ref["losses"][:n], window)
    out = {"perturb": floor.get("perturb"), "loss_rel_diff": rel, "step1_loss_rel_diff": rel[0] if n else None,
           "curve_mean_rel_diff": float(np.mean(rel)) if n else None, "smoothing_window": window,
           "curve_smoothed_mean_rel_diff": float(np.mean(smoothed)) if n else None,
           "smoothed_rel_diff": smoothed if window > 1 else None}
    same_end = floor["steps_run"] == ref["steps_run"] and (steps is None or steps == ref["steps_run"])
    finals = {k[6:]: tensor_diff(k, floor_rec, ref_rec) for k in ref["fingerprints"]
              if k.startswith("final/") and same_end}
    finals = {k: v for k, v in finals.items() if v is not None and not k.endswith("num_batches_tracked")}
    bn = ("running_mean", "running_var")
    out["weights_max_rel_diff"] = max((v["rel"] for k, v in finals.items() if not k.endswith(bn)), default=None)
    out["bn_stats_max_rel_diff"] = max((v["rel"] for k, v in finals.items() if k.endswith(bn)), default=None)
    return out


# -- the MindSpore side --------------------------------------------------------------------------------------------
def install_replay_hooks(recorder) -> None:
    """Feed ``recorder`` from our patch layer (``adapter/events.py``) and MindTorch's ``DataLoader``."""
    import torch
    from adapter import events
    events.subscribe("module_call", recorder.on_module_call)
    events.subscribe("backward", recorder.on_backward)
    events.subscribe("step_begin", recorder.on_step_begin)
    events.subscribe("step_end", recorder.on_step_end)
    from app.tools.parity.recorder import install_sampler_hook
    install_sampler_hook(recorder)
    loader_iter = torch.utils.data.DataLoader.__iter__

    @functools.wraps(loader_iter)
    def dataloader_iter(self):
        recorder.begin_iteration()
        return recorder.wrap_iterator(loader_iter(self))

    torch.utils.data.DataLoader.__iter__ = dataloader_iter


def run_mindspore(script: str, script_args: List[str], steps: int, reference_dir: str, out: str, mode: str) -> int:
    from app.tools.parity.recorder import Recorder
    if os.path.exists(out):
        shutil.rmtree(out)
    print("run.py --compare: [2/2] MindSpore (this adapter)", file=sys.stderr, flush=True)
    recorder = Recorder(out, steps, replay_dir=reference_dir)
    install_replay_hooks(recorder)
    try:
        code = run_script(script, script_args, mode)
    finally:
        recorder.finish()
    return code


# -- comparison ----------------------------------------------------------------------------------------------------
def _load(folder: str):
    with open(os.path.join(folder, "meta.json")) as f:
        meta = json.load(f)
    path = os.path.join(folder, "arrays.npz")
    arrays = dict(np.load(path)) if os.path.exists(path) else {}
    return meta, arrays


def tensor_diff(key: str, ms, ref) -> Optional[Dict]:
    """Differences of one recorded tensor (``ms`` and ``ref`` are (meta, arrays) pairs); None if one side lacks it."""
    fp_a, fp_b = ms[0]["fingerprints"].get(key), ref[0]["fingerprints"].get(key)
    if fp_a is None or fp_b is None:
        return None
    if fp_a["shape"] != fp_b["shape"]:
        return {"shape_ms": fp_a["shape"], "shape_torch": fp_b["shape"], "rel": float("inf"), "estimated": False}
    a, b = ms[1].get(key), ref[1].get(key)
    if a is not None and b is not None:
        a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
        nb, na = np.linalg.norm(b), np.linalg.norm(a)
        d = np.linalg.norm(a - b)
        return {"rel": float(d / nb) if nb else float(d), "max_abs": float(np.abs(a - b).max()) if a.size else 0.0,
                "cosine": float(a @ b / (na * nb)) if na and nb else float(na == nb), "norm_torch": float(nb),
                "norm_ms": float(na), "estimated": False,
                # elements on opposite sides of 0: at a ReLU, one flipped mask bit moves every gradient below it
                "sign_flips": int(np.count_nonzero((a > 0) != (b > 0)))}
    pa, pb = np.array(fp_a["proj"]), np.array(fp_b["proj"])
    nb, na = np.linalg.norm(pb), np.linalg.norm(pa)
    d = np.linalg.norm(pa - pb)
    return {"rel": float(d / nb) if nb else float(d), "max_abs": None,
            "cosine": float(pa @ pb / (na * nb)) if na and nb else float(na == nb), "norm_torch": fp_b["norm"],
            "norm_ms": fp_a["norm"],
            "maxabs_diff": abs(fp_a["maxabs"] - fp_b["maxabs"]), "estimated": True}


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b) if b else abs(a - b)


def compare_records(ms_dir: str, ref_dir: str, floor_dir: Optional[str] = None) -> Dict:
    """The parity result (a JSON-able dict) of a MindSpore record against a PyTorch record, judged (:func:`judge`)
    against the noise-floor record ``floor_dir`` (PyTorch from perturbed weights) when there is one."""
    ms, ref = _load(ms_dir), _load(ref_dir)
    mm, rm = ms[0], ref[0]
    n = min(len(mm["losses"]), len(rm["losses"]))
    loss_rel = [_rel(mm["losses"][i], rm["losses"][i]) for i in range(n)]
    result: Dict = {
        "torch": rm.get("torch"), "mindspore": mm.get("mindspore"), "command": rm.get("command"),
        "steps": min(mm["steps_run"], rm["steps_run"]), "steps_torch": rm["steps_run"],
        "steps_mindspore": mm["steps_run"], "model_class": mm.get("model_class"),
        "init_from_torch": bool(mm.get("init_loaded")),
        "init_seeded": (mm.get("seeded_init") or {}).get("seed"), "models": mm.get("models"),
        "fixed_shuffle": mm.get("fixed_shuffle"), "replayed_batches": mm.get("replayed_batches"),
        "dropout_disabled": mm.get("dropout_disabled"),
        "losses_torch": rm["losses"][:n], "losses_mindspore": mm["losses"][:n], "loss_rel_diff": loss_rel,
        "step1_loss_rel_diff": loss_rel[0] if n else None,
        "curve_mean_rel_diff": float(np.mean(loss_rel)) if n else None,
        "curve_max_rel_diff": float(np.max(loss_rel)) if n else None,
    }
    if n != len(rm["losses"]) or n != len(mm["losses"]):
        result["warning"] = f"loss counts differ: PyTorch {len(rm['losses'])}, MindSpore {len(mm['losses'])}"
    # batches: same data?
    mismatched = [k for k, v in mm["batch_checksums"].items() if k in rm["batch_checksums"]
                  and not np.allclose(v, rm["batch_checksums"][k], rtol=1e-6, atol=1e-6)]
    result["batches_compared"] = len([k for k in mm["batch_checksums"] if k in rm["batch_checksums"]])
    result["first_different_batch"] = sorted(mismatched, key=_batch_order)[0] if mismatched else None
    # gradients, weights, BN statistics, layers
    grads = {k[5:]: tensor_diff(k, ms, ref) for k in rm["fingerprints"] if k.startswith("grad/")}
    result["grads"] = {k: v for k, v in grads.items() if v is not None}
    result["grads_missing_on_mindspore"] = sorted(k for k, v in grads.items() if v is None)
    # final state: only when both stopped after the same step (a golden record of 50 steps, compared over 3: no)
    same_end = mm["steps_run"] == rm["steps_run"]
    result["finals_comparable"] = same_end
    finals = {k[6:]: tensor_diff(k, ms, ref) for k in rm["fingerprints"] if k.startswith("final/") and same_end}
    finals = {k: v for k, v in finals.items() if v is not None and not k.endswith("num_batches_tracked")}
    bn = ("running_mean", "running_var")
    result["weights"] = {k: v for k, v in finals.items() if not k.endswith(bn)}
    result["bn_stats"] = {k: v for k, v in finals.items() if k.endswith(bn)}
    layers = []
    for key in rm.get("layer_order", []):
        d = tensor_diff(f"layer/{key}", ms, ref)
        if d is not None:
            layers.append(dict(d, layer=key))
    result["layers"] = layers
    result["first_divergent_layer"] = next((d["layer"] for d in layers if d["rel"] > LAYER_TOL), None)
    result["sign_flips"] = {d["layer"]: d["sign_flips"] for d in layers if d.get("sign_flips")}
    scale = max((v["norm_torch"] for v in result["grads"].values()), default=0.0)
    for v in result["grads"].values():
        v["negligible"] = bool(v["norm_torch"] < NEGLIGIBLE_GRAD * scale)
        v["ok"] = (v["rel"] <= GRAD_TOL and v["cosine"] >= GRAD_COSINE_MIN) or \
            (v["negligible"] and v["norm_ms"] < NEGLIGIBLE_GRAD * scale)
    result["grads_negligible"] = sorted(k for k, v in result["grads"].items() if v["negligible"])
    grad_rels = [v["rel"] for v in result["grads"].values() if not v["negligible"]]
    result["grad_max_rel_diff"] = max(grad_rels) if grad_rels else None
    result["grad_min_cosine"] = min((v["cosine"] for v in result["grads"].values() if not v["negligible"]),
                                    default=None)
    result["weights_max_rel_diff"] = max((v["rel"] for v in result["weights"].values()), default=None)
    result["bn_stats_max_rel_diff"] = max((v["rel"] for v in result["bn_stats"].values()), default=None)
    _mark_flips(result, mm.get("layer_classes") or rm.get("layer_classes"), rm.get("layer_order", []))
    window = smoothing_window(n)
    smoothed = curve_rel(mm["losses"][:n], rm["losses"][:n], window)
    result["smoothing_window"] = window
    result["curve_smoothed_mean_rel_diff"] = float(np.mean(smoothed)) if n else None
    result["smoothed_rel_diff"] = smoothed if window > 1 else None
    if floor_dir and os.path.exists(os.path.join(floor_dir, "meta.json")):
        result["noise_floor"] = noise_floor(floor_dir, ref_dir, n, mm["steps_run"])
    judge(result)
    return result


def _module_of(param: str) -> str:
    """The module key a parameter key belongs to ("1:main.0.weight" -> "1:main.0"; "bias" -> "<model>")."""
    prefix, _, name = param.rpartition(":") if ":" in param else ("", "", param)
    module = name.rpartition(".")[0] or "<model>"
    return f"{prefix}:{module}" if prefix else module


def _mark_flips(result: Dict, layer_classes: Optional[Dict[str, str]], layer_order: List[str]) -> None:
    """Find the first step-1 ReLU-input sign flip (module docstring, rule 2) and mark the failing gradients of the
    parameters whose modules run before it ``not_comparable``. Sets ``result["relu_flip"]`` (the layer key, or None).

    A flip counts where the layer is ReLU-like (``RELU_LIKE``: its output's sign pattern is its input's) or, when the
    model has no ReLU-like module (``F.relu`` calls are not modules) or the record predates ``layer_classes``, at any
    layer output; and only before the first layer whose output diverges (``LAYER_TOL``): after a real forward
    difference, a flip is no longer rounding."""
    classes = layer_classes or {}
    has_relu = any(c in RELU_LIKE for c in classes.values())
    first_div = next((i for i, d in enumerate(result["layers"]) if d["rel"] > LAYER_TOL), len(result["layers"]))
    flip = None
    for d in result["layers"][:first_div]:
        if not d.get("sign_flips"):
            continue
        if has_relu and classes.get(d["layer"].split("#")[0]) not in RELU_LIKE:
            continue
        flip = d["layer"]
        break
    result["relu_flip"] = flip
    result["grads_not_comparable"] = []
    if flip is None:
        return
    position = {}
    for i, key in enumerate(layer_order):
        position.setdefault(key.split("#")[0], i)
    flip_at = layer_order.index(flip) if flip in layer_order else len(layer_order)
    for name, v in result["grads"].items():
        at = position.get(_module_of(name))
        if not v["ok"] and at is not None and at < flip_at:
            v["not_comparable"] = flip
            result["grads_not_comparable"].append(name)


def judge(result: Dict) -> None:
    """Apply the verdict rules (module docstring) to ``result``: sets ``rules`` (name -> {ok, value, limit, text}),
    ``targets`` (text -> ok, for older readers), ``passed``, ``failed_rules``, ``first_departure`` (the first
    backward() call, 1-based, whose loss leaves PyTorch's noise: rel. diff > max(1e-5, 2 x the floor's at that
    call))."""
    n = len(result["loss_rel_diff"])
    rules: Dict[str, Dict] = {}
    step1 = result["step1_loss_rel_diff"]
    rules["step1_loss"] = {"ok": n > 0 and step1 <= LOSS_STEP1_TOL, "value": step1, "limit": LOSS_STEP1_TOL}
    bad = sorted((k for k, v in result["grads"].items() if not v["ok"] and not v.get("not_comparable")),
                 key=lambda k: -result["grads"][k]["rel"])
    result["grads_failed"] = bad
    grads_ok = bool(result["grads"]) and not result["grads_missing_on_mindspore"] and not bad
    worst = result["grads"][bad[0]] if bad else None
    rules["step1_grads"] = {"ok": grads_ok, "value": worst["rel"] if worst else result["grad_max_rel_diff"],
                            "cosine": worst["cosine"] if worst else result.get("grad_min_cosine"),
                            "limit": GRAD_TOL, "cosine_limit": GRAD_COSINE_MIN, "failed": bad,
                            "not_comparable": result.get("grads_not_comparable", []), "flip": result.get("relu_flip")}
    floor = result.get("noise_floor")
    smoothed = result.get("smoothing_window", 1) > 1
    key = "curve_smoothed_mean_rel_diff" if smoothed else "curve_mean_rel_diff"
    curve = {"value": result[key], "smoothed": smoothed, "window": result.get("smoothing_window", 1)}
    if floor and floor.get(key) is not None and n:
        curve["floor"] = floor[key]
        curve["limit"] = max(CURVE_FLOOR_FACTOR * floor[key], LOSS_STEP1_TOL)
        curve["ok"] = result[key] <= curve["limit"]
        curve["times_floor"] = result[key] / floor[key] if floor[key] else None
        frel = floor["loss_rel_diff"]
        result["first_departure"] = next(
            (i + 1 for i, r in enumerate(result["loss_rel_diff"])
             if r > max(LOSS_STEP1_TOL, CURVE_FLOOR_FACTOR * (frel[i] if i < len(frel) else 0.0))), None)
    else:
        curve["ok"] = None  # not judged: no noise floor
        result["first_departure"] = None
    rules["curve"] = curve
    for name, rule in rules.items():
        rule["rule"] = RULES[name]
    result["rules"] = rules
    result["targets"] = {RULES[k]: v["ok"] for k, v in rules.items()}
    result["failed_rules"] = [k for k, v in rules.items() if v["ok"] is False]
    result["passed"] = not result["failed_rules"]


def _batch_order(key: str):
    i, j = key[4:].split("_")
    return int(i), int(j)


def _init_text(result: Dict) -> str:
    if result["init_from_torch"]:
        return "yes"
    if result.get("init_seeded") is not None:
        return f"the same numpy draw on both sides (seed {result['init_seeded']})"
    return "no (the script initialises deterministically)"


def _verdict_lines(result: Dict) -> List[str]:
    """One line per rule: [ok] / [FAIL] / [not judged], the value, the limit, the source; then the verdict."""
    f = lambda v: "n/a" if v is None else f"{v:.3g}"  # noqa: E731
    rules = result["rules"]
    lines = ["Verdict (rules: docs/parity.md, 'The verdict'; exit code 0 iff every rule holds):"]
    tag = lambda ok: "[ok]  " if ok else ("[FAIL]" if ok is False else "[not judged]")  # noqa: E731
    r = rules["step1_loss"]
    over = f" ({r['value'] / r['limit']:.3g}x the limit)" if r["ok"] is False and r["value"] is not None else ""
    lines.append(f"  {tag(r['ok'])} step-1 loss: rel. diff {f(r['value'])} {'<=' if r['ok'] else '>'} "
                 f"{r['limit']:g}{over}")
    floor = result.get("noise_floor")
    if r["ok"] is False and floor and floor.get("step1_loss_rel_diff") is not None:
        lines.append(f"         (PyTorch against itself at step 1: {f(floor['step1_loss_rel_diff'])})")
    r = rules["step1_grads"]
    text = (f"  {tag(r['ok'])} step-1 gradients: cosine >= {r['cosine_limit']:g} and rel. diff <= {r['limit']:g} "
            f"per parameter")
    if r["failed"]:
        g = result["grads"][r["failed"][0]]
        text += (f": {len(r['failed'])} of {len(result['grads'])} fail, worst {r['failed'][0]} rel. diff "
                 f"{g['rel']:.3g} ({g['rel'] / GRAD_TOL:.3g}x the limit), cosine {g['cosine']:.6f}")
    else:
        text += f": max rel. diff {f(result['grad_max_rel_diff'])}, min cosine " + (
            "n/a" if result.get("grad_min_cosine") is None else f"{result['grad_min_cosine']:.7f}")
    lines.append(text)
    if r["not_comparable"]:
        lines.append(f"         not comparable (flip at {r['flip']}): {len(r['not_comparable'])} parameters before "
                     f"that ReLU-input sign flip ({', '.join(r['not_comparable'][:4])}"
                     f"{', ...' if len(r['not_comparable']) > 4 else ''})")
    if result["grads_missing_on_mindspore"]:
        lines.append(f"         no gradient on MindSpore for: {', '.join(result['grads_missing_on_mindspore'])}")
    r = rules["curve"]
    what = f"moving average over {r['window']} losses, " if r["smoothed"] else ""
    if r["ok"] is None:
        lines.append(f"  {tag(None)} loss curve ({what}mean rel. diff {f(r['value'])}): no noise floor measured "
                     "(--no-noise-floor, or a reference record without floor/): run without it to judge the curve")
    else:
        times = "" if r.get("times_floor") is None else f"{r['times_floor']:.3g}x "
        at_min = r["limit"] > CURVE_FLOOR_FACTOR * r["floor"]
        limit = (f"max(2 x floor, {LOSS_STEP1_TOL:g}) = {r['limit']:.3g}" if at_min
                 else f"2 x floor = {r['limit']:.3g}")
        lines.append(f"  {tag(r['ok'])} loss curve: {what}mean rel. diff {f(r['value'])} ({times}PyTorch's noise floor "
                     f"{f(r['floor'])}) {'<=' if r['ok'] else '>'} {limit}; the floor: PyTorch against itself from "
                     f"initial weights x (1 + {floor['perturb']:g} N(0,1))")
        if r["ok"] is False and result.get("first_departure"):
            k = result["first_departure"]
            lines.append(f"         the curve leaves PyTorch's noise at backward() call {k} (rel. diff "
                         f"{result['loss_rel_diff'][k - 1]:.3g}, PyTorch against itself "
                         f"{(floor['loss_rel_diff'] + [float('nan')] * k)[k - 1]:.3g})"
                         + ("; step-1 outputs and gradients agree: suspect the update (optimizer)" if k == 2 and
                            rules["step1_loss"]["ok"] and rules["step1_grads"]["ok"] else ""))
    if result["first_divergent_layer"]:
        d = next(x for x in result["layers"] if x["layer"] == result["first_divergent_layer"])
        lines.append(f"  first layer whose step-1 output diverges (rel. diff > {LAYER_TOL:g}): "
                     f"{result['first_divergent_layer']} (rel. diff {d['rel']:.3g})")
    elif not result["passed"] and result["layers"]:
        lines.append(f"  no step-1 layer output diverges (all {len(result['layers'])} within {LAYER_TOL:g})")
    if result["passed"]:
        verdict = "PARITY PASSED"
        if rules["curve"]["ok"] is None:
            verdict += " (loss curve not judged: no noise floor)"
        elif rules["curve"]["limit"] > CURVE_FLOOR_FACTOR * rules["curve"]["floor"]:
            verdict += (f": the loss curve stays within {LOSS_STEP1_TOL:g} of PyTorch's (PyTorch's own noise floor "
                        f"{f(rules['curve']['floor'])} lies below that)")
        else:
            verdict += (f": MindSpore stays within {CURVE_FLOOR_FACTOR:g}x PyTorch's own noise floor "
                        f"({f(rules['curve']['floor'])}; MindSpore {f(rules['curve']['value'])})")
    else:
        names = {"step1_loss": "step-1 loss", "step1_grads": "step-1 gradients", "curve": "loss curve"}
        verdict = "PARITY FAILED: " + ", ".join(names[k] for k in result["failed_rules"])
        if result["first_divergent_layer"]:
            verdict += f"; first diverging layer {result['first_divergent_layer']}"
    lines.append(verdict)
    return lines


def format_report(result: Dict) -> str:
    """The text report of :func:`compare_records`'s result."""
    f = lambda v: "n/a" if v is None else f"{v:.3g}"  # noqa: E731
    lines = [f"Parity: MindSpore {result['mindspore']} (MindTorch + this adapter) vs PyTorch {result['torch']}",
             f"  script: {' '.join(result['command'] or [])}",
             f"  model {result['model_class']}: initial weights from PyTorch: {_init_text(result)}; "
             f"batches replayed from PyTorch: {result['replayed_batches']}; dropout disabled in: "
             f"{', '.join(result['dropout_disabled']) or 'none'}",
             f"  steps compared: {result['steps']}"]
    if result.get("warning"):
        lines.append(f"  WARNING: {result['warning']}")
    floor = result.get("noise_floor")
    if result["first_different_batch"]:
        lines.append(f"  DATA DIFFERS from batch {result['first_different_batch']} on (checksums): the two runs do not "
                     "see the same batches")
    fl = lambda key: f" (PyTorch against itself: {f(floor.get(key))})" if floor else ""  # noqa: E731
    lines += ["",
              f"step-1 loss: PyTorch {result['losses_torch'][0]:.7g}, MindSpore {result['losses_mindspore'][0]:.7g}, "
              f"rel. diff {f(result['step1_loss_rel_diff'])}{fl('step1_loss_rel_diff')}" if result["losses_torch"]
              else "no loss recorded",
              f"loss curve over {len(result['loss_rel_diff'])} backward() calls: mean rel. diff "
              f"{f(result['curve_mean_rel_diff'])}{fl('curve_mean_rel_diff')}, max {f(result['curve_max_rel_diff'])}"]
    if result.get("smoothing_window", 1) > 1:
        lines.append(f"  moving average over {result['smoothing_window']} losses: mean rel. diff "
                     f"{f(result['curve_smoothed_mean_rel_diff'])}{fl('curve_smoothed_mean_rel_diff')}")
    lines.append(f"step-1 gradients ({len(result['grads'])} parameters): max rel. diff "
                 f"{f(result['grad_max_rel_diff'])}")
    if result["grads_negligible"]:
        lines.append(f"    zero up to float32 rounding in PyTorch (e.g. a bias before BatchNorm), rated by size, not "
                     f"rel. diff: {', '.join(result['grads_negligible'])}")
    rated = [kv for kv in result["grads"].items() if not kv[1]["negligible"]]
    worst = sorted(rated, key=lambda kv: -kv[1]["rel"])[:5]
    for name, d in worst:
        est = " (estimated)" if d["estimated"] else f", max abs {d['max_abs']:.3g}"
        nc = f"  not comparable (flip at {d['not_comparable']})" if d.get("not_comparable") else ""
        lines.append(f"    {name:40s} rel {d['rel']:.3g}, cosine {d['cosine']:.9f}{est}{nc}")
    if not result.get("finals_comparable", True):
        lines.append(f"final weights: not compared (PyTorch's record stops after {result['steps_torch']} steps, this "
                     f"run after {result['steps_mindspore']})")
    else:
        lines.append(f"weights after {result['steps']} steps: max rel. diff {f(result['weights_max_rel_diff'])}"
                     f"{fl('weights_max_rel_diff')}; BatchNorm running stats: max rel. diff "
                     f"{f(result['bn_stats_max_rel_diff'])}{fl('bn_stats_max_rel_diff')} (reported, not judged: they "
                     "follow the curve)")
    if not result["first_divergent_layer"] and result["layers"]:
        lines.append(f"step-1 forward outputs: all {len(result['layers'])} layer outputs within rel. diff "
                     f"{LAYER_TOL:g} (max {max(x['rel'] for x in result['layers']):.3g})")
    if result.get("sign_flips"):
        flips = ", ".join(f"{k} ({v})" for k, v in list(result["sign_flips"].items())[:8])
        more = f", ... ({len(result['sign_flips'])} layers)" if len(result["sign_flips"]) > 8 else ""
        lines.append(f"step-1 layer outputs with elements on opposite sides of 0 (sign flips): {flips}{more}. Where "
                     "such an output feeds a ReLU, the two runs pass different gradients through it: gradients below "
                     "that layer can differ by ~1 % although every op agrees (float32 rounding of values near 0; "
                     "docs/parity.md)")
    if floor:
        lines.append(f"noise floor: PyTorch against itself from initial weights x (1 + {floor['perturb']:g} N(0,1)), "
                     "the same batches: MindSpore cannot be expected to stay closer than PyTorch stays to itself")
    lines.append("")
    lines += _verdict_lines(result)
    return "\n".join(lines) + "\n"


def plot(result: Dict, path: str) -> None:
    """PNG: both loss curves (top) and their per-step relative difference, log scale (bottom)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    x = np.arange(1, len(result["losses_torch"]) + 1)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    window = result.get("smoothing_window", 1)
    raw = {"alpha": 0.25, "lw": 0.8} if window > 1 else {"lw": 2}
    top.plot(x, result["losses_torch"], color="C0", label=f"PyTorch {result['torch']}", **raw)
    top.plot(x, result["losses_mindspore"], "--", color="C1", label=f"MindSpore {result['mindspore']} (adapter)",
             **(raw if window > 1 else {"lw": 1.5}))
    if window > 1:
        sx = np.arange(window, len(result["losses_torch"]) + 1)
        top.plot(sx, smooth(result["losses_torch"], window), color="C0", lw=2,
                 label=f"PyTorch, moving average over {window}")
        top.plot(sx, smooth(result["losses_mindspore"], window), "--", color="C1", lw=1.5,
                 label=f"MindSpore, moving average over {window}")
    top.set_ylabel("loss")
    top.legend(fontsize=7)
    top.set_title(f"{result['model_class']}: {' '.join(result['command'] or [])}"[:90], fontsize=9)
    smoothed = window > 1 and result.get("smoothed_rel_diff")
    rel = np.maximum(np.array(result["smoothed_rel_diff"] if smoothed else result["loss_rel_diff"]), 1e-12)
    what = f" (moving averages over {window})" if smoothed else ""
    bottom.semilogy(x[len(x) - len(rel):], rel, color="C3", label="MindSpore vs PyTorch" + what)
    floor = result.get("noise_floor")
    if floor:
        frel = floor.get("smoothed_rel_diff") if smoothed else floor["loss_rel_diff"]
        frel = np.maximum(np.array(frel if frel is not None else floor["loss_rel_diff"]), 1e-12)
        bottom.semilogy(x[len(x) - len(frel):] if len(frel) <= len(x) else np.arange(1, len(frel) + 1), frel,
                        color="grey", lw=1, label=f"PyTorch vs PyTorch, init x (1 + {floor['perturb']:g} N(0,1))")
        bottom.legend(fontsize=7)
        limit = (result.get("rules") or {}).get("curve", {}).get("limit")
        if limit:
            bottom.axhline(limit, color="grey", ls=":", lw=1)
    bottom.set_ylabel("|rel. diff|")
    bottom.set_xlabel("backward() call")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_report(result: Dict, out: str) -> str:
    """Write report.txt, report.json, loss_curves.png into ``out``; return the text."""
    os.makedirs(out, exist_ok=True)
    text = format_report(result)
    with open(os.path.join(out, "report.txt"), "w") as fh:
        fh.write(text)
    with open(os.path.join(out, "report.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    if result["losses_torch"]:
        plot(result, os.path.join(out, "loss_curves.png"))
    return text


def main(script: str, script_args: List[str], steps: int, out: str, mode: str,
         reference_python_path: Optional[str] = None, reference_record: Optional[str] = None,
         with_noise_floor: bool = True) -> int:
    """``run.py --compare``: returns 0 if parity targets are met, 1 if not, 2 if the comparison could not be made."""
    out = os.path.abspath(out)
    try:
        if reference_record:
            ref_dir = os.path.abspath(reference_record)
            if not os.path.exists(os.path.join(ref_dir, "meta.json")):
                raise CompareError(f"--reference-record {reference_record}: no meta.json there")
        else:
            ref_dir = os.path.join(out, "record", "torch")
            python = reference_python(reference_python_path)
            run_reference(python, script, script_args, steps, ref_dir)
            if with_noise_floor:
                run_noise_floor(python, script, script_args, steps, ref_dir, os.path.join(out, "record", "floor"))
        ms_dir = os.path.join(out, "record", "mindspore")
        code = run_mindspore(script, script_args, steps, ref_dir, ms_dir, mode)
        if code != 0:
            raise CompareError(f"the script failed on MindSpore (exit code {code}); see above")
        with open(os.path.join(ms_dir, "meta.json")) as fh:
            if not json.load(fh)["losses"]:
                raise CompareError("no backward() was seen: nothing to compare")
        floor_dir = os.path.join(ref_dir if reference_record else os.path.join(out, "record"), "floor")
        result = compare_records(ms_dir, ref_dir, floor_dir)
    except CompareError as exc:
        print(f"run.py --compare: {exc}", file=sys.stderr)
        return 2
    text = write_report(result, out)
    print(text + f"(report.txt, report.json, loss_curves.png in {out})")
    return 0 if result["passed"] else 1


# -- over seeds (--compare-seeds N) ----------------------------------------------------------------------------------
SEED_SPREAD_FACTOR = 2.0


def final_metric(losses: List[float]) -> float:
    """A run's final metric: the mean of its last ``max(1, n // 5)`` losses (one batch's loss alone is noisy; the
    script stops after ``--compare-steps``, before it prints its own accuracy)."""
    k = max(1, len(losses) // 5)
    return float(np.mean(losses[-k:]))


def seeds_verdict(torch_values: List[float], ms_values: List[float]) -> Dict:
    """Within PyTorch's spread: ``|mean(ms) - mean(torch)| <= 2 * std(torch)`` (sample std, ddof 1; issue 18).
    With ``N`` seeds the difference of two means has std ``s * sqrt(2 / N)`` when both sides spread alike, so the
    test is loose enough for N >= 2 (about 2.4 sigma of the difference at N = 3) and catches a shift of the mean by
    more than PyTorch's seed-to-seed spread. A spread of 0 (the seed changes nothing) demands equal means to 1e-5."""
    t, m = np.asarray(torch_values, np.float64), np.asarray(ms_values, np.float64)
    std = float(t.std(ddof=1)) if len(t) > 1 else 0.0
    diff = float(m.mean() - t.mean())
    limit = max(SEED_SPREAD_FACTOR * std, LOSS_STEP1_TOL * abs(float(t.mean())))
    return {"torch": t.tolist(), "mindspore": m.tolist(), "torch_mean": float(t.mean()), "torch_std": std,
            "mindspore_mean": float(m.mean()), "mindspore_std": float(m.std(ddof=1)) if len(m) > 1 else 0.0,
            "mean_diff": diff, "limit": limit, "times_std": abs(diff) / std if std else None,
            "ok": abs(diff) <= limit}


def format_seeds(result: Dict) -> str:
    v = result["verdict"]
    lines = [f"Parity over {len(v['torch'])} seeds: {' '.join(result['command'])}",
             f"  each seed s: initial weights drawn from numpy (seed s, each parameter's own mean/std: --seeded-init), "
             f"shuffling from numpy (seed s), {result['steps']} optimizer steps (or the script's end) under PyTorch; "
             "MindSpore starts from the same weights and replays the batches of the script's DataLoaders "
             f"({', '.join(map(str, result.get('replayed_batches', [])))} per seed; data drawn otherwise, e.g. "
             "torch.randn, is each framework's own)",
             "  final metric: the mean of the last fifth of each run's losses (a script that ends by itself, e.g. "
             "on convergence, may run a different number of steps per side: the count is shown)",
             ""]
    for s, a, b, la, lb in zip(result["seeds"], v["torch"], v["mindspore"], result["losses_torch"],
                               result["losses_mindspore"]):
        lines.append(f"  seed {s}: PyTorch {a:.6g} ({len(la)} losses), MindSpore {b:.6g} ({len(lb)} losses)")
    lines += ["", f"  PyTorch {v['torch_mean']:.6g} +- {v['torch_std']:.3g} (std), MindSpore {v['mindspore_mean']:.6g} "
                  f"+- {v['mindspore_std']:.3g}",
              f"  [{'ok' if v['ok'] else 'FAIL'}]   |mean diff| {abs(v['mean_diff']):.3g} "
              f"{'<=' if v['ok'] else '>'} 2 x PyTorch's std over seeds = {v['limit']:.3g}"
              + (f" ({v['times_std']:.3g}x the std)" if v["times_std"] is not None else "")
              + " (rule: issue 18)",
              "PARITY OVER SEEDS " + ("PASSED: within PyTorch's spread" if v["ok"] else
                                      "FAILED: MindSpore's mean lies outside PyTorch's spread")]
    return "\n".join(lines) + "\n"


def plot_seeds(result: Dict, path: str) -> None:
    """PNG: the final metric per seed on both sides with PyTorch's mean +- 2 std (left); every seed's loss curves
    (right)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    v = result["verdict"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [1, 2]})
    for i, (name, values, color) in enumerate((("PyTorch", v["torch"], "C0"), ("MindSpore", v["mindspore"], "C1"))):
        left.scatter(np.full(len(values), i) + np.linspace(-0.1, 0.1, len(values)), values, color=color, zorder=3)
        left.errorbar(i + 0.25, np.mean(values), yerr=2 * (np.std(values, ddof=1) if len(values) > 1 else 0),
                      fmt="s", color=color, capsize=4, label=f"{name}: mean +- 2 std")
    left.axhspan(v["torch_mean"] - v["limit"], v["torch_mean"] + v["limit"], color="C0", alpha=0.1)
    left.set_xticks([0, 1], ["PyTorch", "MindSpore"])
    left.set_xlim(-0.5, 1.5)
    left.set_ylabel("mean of the last fifth of the losses")
    left.legend(fontsize=7)
    left.set_title(f"{len(v['torch'])} seeds: {'within' if v['ok'] else 'outside'} PyTorch's spread", fontsize=9)
    for j, (a, b) in enumerate(zip(result["losses_torch"], result["losses_mindspore"])):
        right.plot(np.arange(1, len(a) + 1), a, color="C0", lw=1.5, alpha=0.7, label="PyTorch" if j == 0 else None)
        right.plot(np.arange(1, len(b) + 1), b, "--", color="C1", lw=1, label="MindSpore" if j == 0 else None)
    right.set_xlabel("backward() call")
    right.set_ylabel("loss")
    right.legend(fontsize=7)
    right.set_title(" ".join(result["command"])[:80], fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main_seeds(script: str, script_args: List[str], steps: int, out: str, seeds: int,
               reference_python_path: Optional[str] = None, extra_run_args: Optional[List[str]] = None) -> int:
    """``run.py --compare --compare-seeds N``: for seeds 1..N, the script under PyTorch (``reference.py
    --seeded-init s --fixed-shuffle s``), then here in a fresh ``run.py --reference-record`` process replaying it;
    the final metrics judged by :func:`seeds_verdict`. Writes ``seeds_report.txt``, ``seeds_report.json``,
    ``seeds.png`` in ``out``. Returns 0 (within the spread), 1 (not), 2 (a run failed)."""
    out = os.path.abspath(out)
    try:
        python = reference_python(reference_python_path)
        torch_losses, ms_losses, replayed = [], [], []
        for s in range(1, seeds + 1):
            ref_dir = os.path.join(out, f"seed{s}", "torch")
            print(f"run.py --compare-seeds: seed {s}/{seeds}: PyTorch", file=sys.stderr, flush=True)
            _reference_run(python, script, script_args, steps, ref_dir,
                           ["--seeded-init", str(s), "--fixed-shuffle", str(s)],
                           f"the script failed under real PyTorch (seed {s})", quiet=True)
            print(f"run.py --compare-seeds: seed {s}/{seeds}: MindSpore", file=sys.stderr, flush=True)
            ms_out = os.path.join(out, f"seed{s}", "compare")
            cmd = [sys.executable, os.path.join(ROOT, "run.py"), *(extra_run_args or []), "--reference-record",
                   ref_dir, "--compare-steps", str(steps), "--compare-out", ms_out, "--original", script,
                   *script_args]
            result = subprocess.run(cmd, stdout=subprocess.DEVNULL)
            report = os.path.join(ms_out, "report.json")
            if result.returncode not in (0, 1) or not os.path.exists(report):
                raise CompareError(f"the MindSpore run failed (seed {s}, exit code {result.returncode}): "
                                   f"{' '.join(cmd)}")
            with open(report) as fh:
                r = json.load(fh)
            replayed.append(r["replayed_batches"])
            # each side's own losses (report.json's are cut to the shorter side's count)
            torch_losses.append(_load(ref_dir)[0]["losses"])
            ms_losses.append(_load(os.path.join(ms_out, "record", "mindspore"))[0]["losses"])
    except CompareError as exc:
        print(f"run.py --compare-seeds: {exc}", file=sys.stderr)
        return 2
    last_k = sorted({max(1, len(x) // 5) for x in torch_losses + ms_losses})
    result = {"command": [os.path.basename(script)] + list(script_args), "steps": steps,
              "seeds": list(range(1, seeds + 1)), "last_k": last_k, "replayed_batches": replayed,
              "losses_torch": torch_losses,
              "losses_mindspore": ms_losses,
              "verdict": seeds_verdict([final_metric(x) for x in torch_losses],
                                       [final_metric(x) for x in ms_losses])}
    text = format_seeds(result)
    with open(os.path.join(out, "seeds_report.txt"), "w") as fh:
        fh.write(text)
    with open(os.path.join(out, "seeds_report.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    plot_seeds(result, os.path.join(out, "seeds.png"))
    print(text + f"(seeds_report.txt, seeds_report.json, seeds.png in {out})")
    return 0 if result["verdict"]["ok"] else 1
