"""``run.py --compare``: run a script under real PyTorch, then here on MindSpore from the same start, and report.

1. Reference: ``.venv-ref/bin/python adapter/parity/reference.py`` runs the script under real PyTorch for N optimizer
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
Targets (issue 3): step-1 loss rel. diff <= 1e-5, every step-1 gradient rel. diff <= 1e-4, mean per-step loss rel.
diff over N steps <= 1 %.
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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOSS_STEP1_TOL = 1e-5
GRAD_TOL = 1e-4
CURVE_MEAN_TOL = 0.01
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
    if it exits non-zero or writes no ``meta.json``."""
    if os.path.exists(out):
        shutil.rmtree(out)
    cmd = [python, os.path.join(ROOT, "adapter", "parity", "reference.py"), "--out", out, "--steps", str(steps),
           *options, script, "--"] + list(script_args)
    result = subprocess.run(cmd, stdout=subprocess.DEVNULL if quiet else None)
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


def noise_floor(floor_dir: str, reference_dir: str) -> Dict:
    """Loss-curve differences of the noise-floor run against the reference (same keys as in the main result)."""
    floor, ref = _load(floor_dir)[0], _load(reference_dir)[0]
    n = min(len(floor["losses"]), len(ref["losses"]))
    rel = [_rel(floor["losses"][i], ref["losses"][i]) for i in range(n)]
    return {"perturb": floor.get("perturb"), "loss_rel_diff": rel, "step1_loss_rel_diff": rel[0] if n else None,
            "curve_mean_rel_diff": float(np.mean(rel)) if n else None}


# -- the MindSpore side --------------------------------------------------------------------------------------------
def install_replay_hooks(recorder) -> None:
    """Feed ``recorder`` from our patch layer (``adapter/events.py``) and MindTorch's ``DataLoader``."""
    import torch
    from adapter import events
    events.subscribe("module_call", recorder.on_module_call)
    events.subscribe("backward", recorder.on_backward)
    events.subscribe("step_begin", recorder.on_step_begin)
    events.subscribe("step_end", recorder.on_step_end)
    from adapter.parity.recorder import install_sampler_hook
    install_sampler_hook(recorder)
    loader_iter = torch.utils.data.DataLoader.__iter__

    @functools.wraps(loader_iter)
    def dataloader_iter(self):
        recorder.begin_iteration()
        return recorder.wrap_iterator(loader_iter(self))

    torch.utils.data.DataLoader.__iter__ = dataloader_iter


def run_mindspore(script: str, script_args: List[str], steps: int, reference_dir: str, out: str, mode: str) -> int:
    from adapter.launcher import run_script
    from adapter.parity.recorder import Recorder
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


def compare_records(ms_dir: str, ref_dir: str) -> Dict:
    """The parity result (a JSON-able dict) of a MindSpore record against a PyTorch record."""
    ms, ref = _load(ms_dir), _load(ref_dir)
    mm, rm = ms[0], ref[0]
    n = min(len(mm["losses"]), len(rm["losses"]))
    loss_rel = [_rel(mm["losses"][i], rm["losses"][i]) for i in range(n)]
    result: Dict = {
        "torch": rm.get("torch"), "mindspore": mm.get("mindspore"), "command": rm.get("command"),
        "steps": min(mm["steps_run"], rm["steps_run"]), "model_class": mm.get("model_class"),
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
    finals = {k[6:]: tensor_diff(k, ms, ref) for k in rm["fingerprints"] if k.startswith("final/")}
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
        v["ok"] = v["rel"] <= GRAD_TOL or (v["negligible"] and v["norm_ms"] < NEGLIGIBLE_GRAD * scale)
    result["grads_negligible"] = sorted(k for k, v in result["grads"].items() if v["negligible"])
    grad_rels = [v["rel"] for v in result["grads"].values() if not v["negligible"]]
    result["grad_max_rel_diff"] = max(grad_rels) if grad_rels else None
    result["weights_max_rel_diff"] = max((v["rel"] for v in result["weights"].values()), default=None)
    result["bn_stats_max_rel_diff"] = max((v["rel"] for v in result["bn_stats"].values()), default=None)
    result["targets"] = {
        "step1_loss_rel_diff <= 1e-5": n > 0 and loss_rel[0] <= LOSS_STEP1_TOL,
        "grad_rel_diff <= 1e-4 (every parameter)": bool(result["grads"]) and not result["grads_missing_on_mindspore"]
                                                   and all(v["ok"] for v in result["grads"].values()),
        "curve_mean_rel_diff <= 1%": n > 0 and float(np.mean(loss_rel)) <= CURVE_MEAN_TOL,
    }
    result["passed"] = all(result["targets"].values())
    return result


def _batch_order(key: str):
    i, j = key[4:].split("_")
    return int(i), int(j)


def _init_text(result: Dict) -> str:
    if result["init_from_torch"]:
        return "yes"
    if result.get("init_seeded") is not None:
        return f"the same numpy draw on both sides (seed {result['init_seeded']})"
    return "no (the script initialises deterministically)"


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
    if floor:
        lines_floor = (f"  PyTorch against itself with initial weights x (1 + {floor['perturb']:g} N(0,1)): step-1 loss "
                       f"rel. diff {f(floor['step1_loss_rel_diff'])}, curve mean rel. diff "
                       f"{f(floor['curve_mean_rel_diff'])} (the noise floor: MindSpore cannot be expected to stay "
                       "closer than PyTorch stays to itself)")
    if result["first_different_batch"]:
        lines.append(f"  DATA DIFFERS from batch {result['first_different_batch']} on (checksums): the two runs do not "
                     "see the same batches")
    lines += ["",
              f"step-1 loss: PyTorch {result['losses_torch'][0]:.7g}, MindSpore {result['losses_mindspore'][0]:.7g}, "
              f"rel. diff {f(result['step1_loss_rel_diff'])}" if result["losses_torch"] else "no loss recorded",
              f"loss curve over {len(result['loss_rel_diff'])} backward() calls: mean rel. diff "
              f"{f(result['curve_mean_rel_diff'])}, max {f(result['curve_max_rel_diff'])}",
              f"step-1 gradients ({len(result['grads'])} parameters): max rel. diff {f(result['grad_max_rel_diff'])}"]
    if result["grads_negligible"]:
        lines.append(f"    zero up to float32 rounding in PyTorch (e.g. a bias before BatchNorm), rated by size, not "
                     f"rel. diff: {', '.join(result['grads_negligible'])}")
    rated = [kv for kv in result["grads"].items() if not kv[1]["negligible"]]
    worst = sorted(rated, key=lambda kv: -kv[1]["rel"])[:5]
    for name, d in worst:
        est = " (estimated)" if d["estimated"] else f", max abs {d['max_abs']:.3g}"
        lines.append(f"    {name:40s} rel {d['rel']:.3g}, cosine {d['cosine']:.9f}{est}")
    if result["grads_missing_on_mindspore"]:
        lines.append(f"    no gradient on MindSpore for: {', '.join(result['grads_missing_on_mindspore'])}")
    lines.append(f"weights after {result['steps']} steps: max rel. diff {f(result['weights_max_rel_diff'])}; "
                 f"BatchNorm running stats: max rel. diff {f(result['bn_stats_max_rel_diff'])}")
    if result["first_divergent_layer"]:
        d = next(x for x in result["layers"] if x["layer"] == result["first_divergent_layer"])
        lines.append(f"first layer whose step-1 forward output diverges (rel. diff > {LAYER_TOL:g}): "
                     f"{result['first_divergent_layer']} (rel. diff {d['rel']:.3g})")
    elif result["layers"]:
        lines.append(f"step-1 forward outputs: all {len(result['layers'])} layer outputs within rel. diff "
                     f"{LAYER_TOL:g} (max {max(x['rel'] for x in result['layers']):.3g})")
    if result.get("sign_flips"):
        flips = ", ".join(f"{k} ({v})" for k, v in result["sign_flips"].items())
        lines.append(f"step-1 layer outputs with elements on opposite sides of 0 (sign flips): {flips}. Where such an "
                     "output feeds a ReLU, the two runs pass different gradients through it: gradients below that layer "
                     "can differ by ~1 % although every op agrees (float32 rounding of values near 0; README, Parity)")
    if floor:
        lines.append(lines_floor)
    lines.append("")
    for name, ok in result["targets"].items():
        lines.append(f"  [{'ok' if ok else 'FAIL'}] {name}")
    lines.append(f"PARITY {'PASSED' if result['passed'] else 'FAILED'}")
    return "\n".join(lines) + "\n"


def plot(result: Dict, path: str) -> None:
    """PNG: both loss curves (top) and their per-step relative difference, log scale (bottom)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    x = np.arange(1, len(result["losses_torch"]) + 1)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    top.plot(x, result["losses_torch"], label=f"PyTorch {result['torch']}", lw=2)
    top.plot(x, result["losses_mindspore"], "--", label=f"MindSpore {result['mindspore']} (adapter)", lw=1.5)
    top.set_ylabel("loss")
    top.legend()
    top.set_title(f"{result['model_class']}: {' '.join(result['command'] or [])}"[:90], fontsize=9)
    rel = np.maximum(np.array(result["loss_rel_diff"]), 1e-12)
    bottom.semilogy(x, rel, color="C3", label="MindSpore vs PyTorch")
    floor = result.get("noise_floor")
    if floor:
        fx = np.arange(1, len(floor["loss_rel_diff"]) + 1)
        bottom.semilogy(fx, np.maximum(np.array(floor["loss_rel_diff"]), 1e-12), color="grey", lw=1,
                        label=f"PyTorch vs PyTorch, init x (1 + {floor['perturb']:g} N(0,1))")
        bottom.legend(fontsize=7)
    bottom.axhline(CURVE_MEAN_TOL, color="grey", ls=":", lw=1)
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
        result = compare_records(ms_dir, ref_dir)
        floor_dir = os.path.join(ref_dir if reference_record else os.path.join(out, "record"), "floor")
        if os.path.exists(os.path.join(floor_dir, "meta.json")):
            result["noise_floor"] = noise_floor(floor_dir, ref_dir)
    except CompareError as exc:
        print(f"run.py --compare: {exc}", file=sys.stderr)
        return 2
    text = write_report(result, out)
    print(text + f"(report.txt, report.json, loss_curves.png in {out})")
    return 0 if result["passed"] else 1
