"""Record the corpus's golden records under real PyTorch: ``tests/fixtures/corpus/<name>.json`` (and
``<name>.compare/meta.json`` for the exact comparisons), read by ``tests/test_corpus.py`` without PyTorch.

    PYTHONPATH=<six+matplotlib> .venv/bin/python scripts/record_corpus_goldens.py [--only mnist vae ...]

For each spec of ``scripts/corpus_specs.py``: stage the data (``stage_corpus_data.py``, into ``--base``), then per
seed a fresh run folder beside it, the spec's ``pre`` scripts, and the script itself under
``.venv-ref/bin/python scripts/run_under_torch.py`` (real PyTorch; ``torch.distributed.run`` for torchrun specs),
with the spec's arguments. Parsed: the exit code, the logged losses, the script's metrics, the kept stdout lines,
the error (exception, file:line) if it failed. The JSON holds, besides those per seed: the PyTorch/torchvision/Python
versions, the command, the date, the staging sizes, and per metric its values over the seeds with the tolerance band
the tests use (``corpus_specs.tolerance_band``).

Specs with ``compare``: ``app/tools/parity/reference.py --seeded-init --fixed-shuffle --no-batches --no-arrays``
writes a record of the first steps (losses, batch checksums, fingerprints; no weights: the initial weights are a numpy draw
both sides repeat), into ``<name>.compare/``.

The reference environment needs what the scripts import besides torch: six (super_resolution) and matplotlib
(time_sequence_prediction), in requirements-reference.txt (``make reference``) or on PYTHONPATH.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from typing import Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import corpus_specs as cs  # noqa: E402
import stage_corpus_data as staging  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "corpus")
REF_PY = os.path.join(ROOT, ".venv-ref", "bin", "python")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torch_command(spec: cs.Spec, script: str, args: List[str], seed: Optional[int], python: str) -> List[str]:
    """The command running ``script`` (a corpus path) under real PyTorch, as the spec says."""
    runner = [os.path.join(ROOT, "scripts", "run_under_torch.py")]
    if seed and spec.seed_arg is None:  # 0: no seed (PyTorch's default generator state)
        runner += ["--torch-seed", str(seed)]
    if spec.cuda_as_cpu:
        runner.append("--cuda-as-cpu")
    runner += [cs.script_path(script)] + args
    if spec.torchrun and script == spec.script:
        return [python, "-m", "torch.distributed.run", "--nproc-per-node", str(spec.torchrun),
                "--master-port", str(_free_port())] + runner
    return [python] + runner


def run_torch(spec: cs.Spec, base: str, seed: Optional[int], python: str, run_name: str) -> Dict:
    """One PyTorch run of ``spec`` in a fresh folder ``base/run_name``; the parsed result."""
    run = staging.make_run_dir(base, run_name)
    os.makedirs(os.path.join(run, "results"))  # vae saves its images there (upstream ships vae/results/)
    env = dict(os.environ, **spec.env)
    for pre_script, pre_args in spec.pre:
        proc = subprocess.run(torch_command(spec, pre_script, pre_args, None, python), cwd=run, env=env,
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"{pre_script} failed under PyTorch:\n{proc.stderr[-2000:]}")
    cmd = torch_command(spec, spec.script, spec.script_args(seed), seed, python)
    start = time.time()
    proc = subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True, timeout=3600)
    wall = time.time() - start
    out = proc.stdout
    result = {"exit": proc.returncode, "wall_s": round(wall, 2), "losses": cs.parse_losses(spec, out),
              "metrics": cs.parse_metrics(spec, out), "lines": cs.parse_lines(spec, out)}
    if proc.returncode != 0:
        name, where = cs.parse_error(proc.stderr, spec.script)
        result["error"] = [name, where]
        result["stderr_tail"] = proc.stderr.strip().splitlines()[-1][:300] if proc.stderr.strip() else ""
    if spec.expect_exit != proc.returncode:
        raise RuntimeError(f"{spec.name}: PyTorch exit {proc.returncode} (spec expects {spec.expect_exit}):\n"
                           f"{proc.stderr[-3000:]}")
    if spec.pre and spec.name.startswith("time_sequence_prediction"):
        result["traindata"] = traindata_checksum(python, os.path.join(run, "traindata.pt"))
    return result


def traindata_checksum(python: str, path: str) -> List[float]:
    """[sum, sum of squares, rows, columns] of the array generate_sine_wave.py saved (loaded by real PyTorch)."""
    code = ("import sys, torch, numpy as np; a = torch.load(sys.argv[1], weights_only=False); "
            "print(float(np.sum(a, dtype=np.float64)), float(np.sum(np.square(a), dtype=np.float64)), *a.shape)")
    out = subprocess.run([python, "-c", code, path], capture_output=True, text=True, check=True).stdout.split()
    return [float(v) for v in out]


def record_compare(spec: cs.Spec, base: str, python: str) -> str:
    """The PyTorch record of ``spec.compare`` in ``tests/fixtures/corpus/<name>.compare``."""
    run = staging.make_run_dir(base, f"golden_{spec.name}_compare")
    os.makedirs(os.path.join(run, "results"))
    env = dict(os.environ, **spec.env)
    for pre_script, pre_args in spec.pre:
        subprocess.run(torch_command(spec, pre_script, pre_args, None, python), cwd=run, env=env, check=True,
                       capture_output=True)
    out = os.path.join(FIXTURES, f"{spec.name}.compare")
    shutil.rmtree(out, ignore_errors=True)
    c = spec.compare
    cmd = [python, os.path.join(ROOT, "app", "tools", "parity", "reference.py"), "--out", out, "--steps", str(c.steps),
           "--no-batches", "--no-arrays", "--seeded-init", str(c.seed), "--fixed-shuffle", str(c.seed),
           cs.script_path(spec.script), "--"] + spec.script_args(cs.SEEDS[0])
    proc = subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0 or not os.path.exists(os.path.join(out, "meta.json")):
        raise RuntimeError(f"{spec.name}: the compare record failed:\n{proc.stderr[-3000:]}")
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    meta["command"] = [os.path.relpath(a, run) if os.path.isabs(a) else a for a in meta["command"]]
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f)
    return out


def versions(python: str) -> Dict[str, str]:
    code = ("import sys, numpy, torch\ntry:\n import torchvision; tv = torchvision.__version__\nexcept Exception:\n"
            " tv = None\nprint(torch.__version__, tv, sys.version.split()[0], numpy.__version__)")
    code = code.replace("import torchvision", "sys.path.insert(0, %r); from app.tools.parity.reference import "
                        "declare_torchvision_ops; declare_torchvision_ops(); import torchvision" % ROOT)
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return {"torch": out[0], "torchvision": out[1], "python": out[2], "numpy": out[3]}


def bands(spec: cs.Spec, seeds: Dict[str, Dict]) -> Dict:
    """Per metric: its values over the seeds and the band the test accepts (``corpus_specs.tolerance_band``)."""
    metrics = {}
    for name in spec.metrics:
        values = [r["metrics"][name] for r in seeds.values() if r["metrics"].get(name) is not None]
        if values:
            lo, hi = cs.tolerance_band(values, spec.metric_floor.get(name, 0.0))
            metrics[name] = {"values": values, "band": [lo, hi]}
    return metrics


def record(spec: cs.Spec, base: str, python: str, sizes: Dict[str, int]) -> Dict:
    seeds = {}
    for seed in spec.seeds:
        print(f"  {spec.name}: seed {seed}", flush=True)
        seeds[str(seed)] = run_torch(spec, base, seed, python, f"golden_{spec.name}_{seed}")
    metrics = bands(spec, seeds)
    golden = {
        "name": spec.name, **versions(python),
        "date": datetime.date.today().isoformat(),
        "command": (["python", "-m", "torch.distributed.run", "--nproc-per-node", str(spec.torchrun)]
                    if spec.torchrun else ["python"]) + [cs.shown_path(spec.script)] + spec.args
                   + ([spec.seed_arg, "SEED"] if spec.seed_arg else []),
        "seed_via": spec.seed_arg or ("torch.manual_seed before the script (run_under_torch.py --torch-seed)"
                                      if len(spec.seeds) > 1 else "none (one run)"),
        "cuda_as_cpu": spec.cuda_as_cpu, "env": spec.env,
        "pre": [cs.shown_path(p) for p, _ in spec.pre],
        "cwd": "a run folder beside the staged data (scripts/stage_corpus_data.py, make_run_dir)",
        "staging": sizes, "seeds": seeds, "metrics": metrics,
    }
    if spec.compare:
        print(f"  {spec.name}: compare record", flush=True)
        out = record_compare(spec, base, python)
        golden["compare_record"] = os.path.relpath(out, FIXTURES)
    return golden


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="+", choices=sorted(cs.SPECS), help="record these specs only")
    p.add_argument("--base", default=os.path.join(ROOT, "runs", "corpus_golden"), help="staging + run folders")
    p.add_argument("--python", default=REF_PY, help="a Python with real PyTorch (default .venv-ref)")
    p.add_argument("--compare-only", action="store_true",
                   help="re-record only the compare records (and the bands, from the stored values)")
    args = p.parse_args(argv)
    sizes = dict(staging.DEFAULT_SIZES)
    staging.stage(os.path.join(args.base), sizes)
    os.makedirs(FIXTURES, exist_ok=True)
    for name in args.only or sorted(cs.SPECS):
        spec = cs.SPECS[name]
        print(f"recording {name}", flush=True)
        if args.compare_only:
            with open(os.path.join(FIXTURES, f"{name}.json")) as f:
                golden = json.load(f)
            golden["metrics"] = bands(spec, golden["seeds"])
            if spec.compare:
                golden["compare_record"] = os.path.relpath(record_compare(spec, args.base, args.python), FIXTURES)
        else:
            golden = record(spec, args.base, args.python, sizes)
        with open(os.path.join(FIXTURES, f"{name}.json"), "w") as f:
            json.dump(golden, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
