"""Data-parallel start-up, run.py vs real PyTorch, per phase of each child: from the parent's ``mp.spawn`` call (or
the launcher's start) to "model created" in every child, in one invocation.

    .venv/bin/python bench/bench_spawn_ready.py [--runs 3] [--world 2] [--modes spawn torchrun] [--out FILE]
                                                [--ab 'NAME=VALUE;...']   # + run.py with this environment (A/B)

What runs: the corpus's ddp-tutorial-series scripts (``distributed/ddp-tutorial-series`` of a pytorch/examples
checkout at commit 77f55b9 named by ``CORPUS_EXAMPLES``: third-party code, not in this repository), copied into a
temporary folder with timing marks added (``instrument``), with ``1 1`` (one epoch, as
``tests/test_corpus.py``):

* ``spawn``: ``multigpu.py`` (``mp.spawn(main, nprocs=world)``; the copy spawns ``--world`` processes, where the
  original spawns ``torch.cuda.device_count()`` = 0 on a CPU machine, and uses a free port instead of 12355):
  ``run.py --original multigpu.py 1 1`` vs ``.venv-ref/bin/python multigpu.py 1 1``;
* ``torchrun``: ``multigpu_torchrun.py``: ``run.py --nproc-per-node W --original ...`` vs ``python -m
  torch.distributed.run --nproc-per-node W ...``.

On the PyTorch side the copy applies ``scripts/run_under_torch.py``'s ``cuda_as_cpu`` in every process (the script
calls ``torch.cuda.set_device``, nccl; spawn children do not inherit the parent's patching). The sides and modes are
interleaved run by run, so that each sees the same machine load.

Marks (``adapter/startup_marks.py``, one JSON line per mark into ``ADAPTER_STARTUP_MARKS``): run.py's own (launcher,
mindspore, context, pre_import, torch, post_import, script, fn, scheduler, joined) and the copy's ``s_*`` ones
(s_start: the script's first line; s_torch: ``import torch`` done; s_imported: the module's top level done (before
``if __name__``); s_fn: the child's function starts; s_joined: ``init_process_group`` returned (``ddp_setup``);
s_dataset, s_model: ``load_train_objs``'s ``MyTrainDataset(2048)`` and ``nn.Linear(20, 1)`` done; s_ddp: the
``Trainer`` (DDP wrap: rank 0's weights broadcast) built; s_trained: the epoch done). ``t0``: the parent's
``mp.spawn`` call (spawn), or the launcher's start (torchrun). A child's "ready" is s_model - t0.

Prints, per side and mode, each phase's median seconds over runs and ranks, and ready's ratio run.py / PyTorch;
writes ``--out`` (JSON: every run's marks per process, the medians).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))  # run as a script or imported
from results import summarize  # noqa: E402
VENV_PY = stack.python()
REF_PY = os.path.join(ROOT, ".venv-ref", "bin", "python")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import machine  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import corpus_specs  # noqa: E402
DDP_REL = "distributed/ddp-tutorial-series"
SCRIPTS = {"spawn": "multigpu.py", "torchrun": "multigpu_torchrun.py"}
# phases in the order they happen in a child; a side has a subset of them
ORDER = ["process_start", "launcher", "mindspore", "context", "pre_import", "torch", "post_import", "s_start",
         "s_torch", "s_imported", "script", "fn", "s_fn", "scheduler", "joined", "s_joined", "s_dataset", "s_model",
         "s_ddp", "s_trained"]

PRELUDE = '''\
import importlib.util as _bench_util
_bench_spec = _bench_util.spec_from_file_location("_bench_marks", {marks!r})
_bench_marks = _bench_util.module_from_spec(_bench_spec)
_bench_spec.loader.exec_module(_bench_marks)
_bench_mark = _bench_marks.mark
_bench_mark("s_start")
import torch
_bench_mark("s_torch")
if "mindtorch" not in torch.__name__:  # real PyTorch on a CPU machine: what run_under_torch.py --cuda-as-cpu does
    _bench_spec = _bench_util.spec_from_file_location("_bench_rut", {rut!r})
    _bench_rut = _bench_util.module_from_spec(_bench_spec)
    _bench_spec.loader.exec_module(_bench_rut)
    _bench_rut.cuda_as_cpu()
'''


def _replace(text: str, old: str, new: str) -> str:
    if old not in text:
        raise RuntimeError(f"bench_spawn_ready: the corpus script changed, {old!r} not found")
    return text.replace(old, new)


def instrument(mode: str, folder: str) -> str:
    """Copy the ddp-tutorial-series script of ``mode`` (and its datautils.py) into ``folder`` with the timing marks;
    return the copy's path. Raises RuntimeError without a pytorch/examples checkout (``CORPUS_EXAMPLES``)."""
    shutil.copy(corpus_specs.script_path(f"{DDP_REL}/datautils.py"), folder)
    with open(corpus_specs.script_path(f"{DDP_REL}/{SCRIPTS[mode]}")) as f:
        text = f.read()
    text = PRELUDE.format(marks=os.path.join(ROOT, "adapter", "startup_marks.py"),
                          rut=os.path.join(ROOT, "scripts", "run_under_torch.py")) + text
    text = _replace(text, 'if __name__ == "__main__":', '_bench_mark("s_imported")\nif __name__ == "__main__":')
    text = _replace(text, "    train_set = MyTrainDataset(2048)  # load your dataset\n",
                    "    train_set = MyTrainDataset(2048)  # load your dataset\n    _bench_mark('s_dataset')\n")
    text = _replace(text, "    model = torch.nn.Linear(20, 1)  # load your model\n",
                    "    model = torch.nn.Linear(20, 1)  # load your model\n    _bench_mark('s_model')\n")
    if mode == "spawn":
        text = _replace(text, 'os.environ["MASTER_PORT"] = "12355"', 'os.environ["MASTER_PORT"] = os.environ["BENCH_PORT"]')
        text = _replace(text, "world_size = torch.cuda.device_count()", 'world_size = int(os.environ["BENCH_WORLD"])')
        text = _replace(text, "    mp.spawn(main,", "    _bench_mark('s_spawn_call')\n    mp.spawn(main,")
        head = "def main(rank: int, world_size: int, save_every: int, total_epochs: int, batch_size: int):\n"
        setup = "    ddp_setup(rank, world_size)\n"
        trainer = "    trainer = Trainer(model, train_data, optimizer, rank, save_every)\n"
    else:
        head = 'def main(save_every: int, total_epochs: int, batch_size: int, snapshot_path: str = "snapshot.pt"):\n'
        setup = "    ddp_setup()\n"
        trainer = "    trainer = Trainer(model, train_data, optimizer, save_every, snapshot_path)\n"
    text = _replace(text, head + setup, head + "    _bench_mark('s_fn')\n" + setup + "    _bench_mark('s_joined')\n")
    text = _replace(text, trainer, trainer + "    _bench_mark('s_ddp')\n")
    text = _replace(text, "    trainer.train(total_epochs)\n", "    trainer.train(total_epochs)\n    _bench_mark('s_trained')\n")
    path = os.path.join(folder, SCRIPTS[mode])
    with open(path, "w") as f:
        f.write(text)
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command(side: str, mode: str, script: str, world: int, port: int):
    if side.startswith("run.py"):
        opts = ["--nproc-per-node", str(world), "--master-port", str(port)] if mode == "torchrun" else []
        return [VENV_PY, os.path.join(ROOT, "run.py")] + opts + ["--original", script, "1", "1"]
    if mode == "torchrun":
        return [REF_PY, "-m", "torch.distributed.run", "--nproc-per-node", str(world), "--master-port", str(port),
                script, "1", "1"]
    return [REF_PY, script, "1", "1"]


def run_once(side: str, mode: str, script: str, world: int, work: str, timeout: float) -> dict:
    """One run; ``{"t0", "wall_s", "code", "processes": {pid: {phase: t}}, "error"?}``."""
    run_dir = tempfile.mkdtemp(dir=work, prefix=f"{side}_{mode}_")
    marks = os.path.join(run_dir, "marks.jsonl")
    port = _free_port()
    env = dict(os.environ, ADAPTER_STARTUP_MARKS=marks, BENCH_PORT=str(port), BENCH_WORLD=str(world),
               PYTHONUNBUFFERED="1")
    if side.startswith("run.py["):  # the A/B side: run.py with these variables, e.g. run.py[ADAPTER_DISABLE_PATCHES=x]
        env.update(item.split("=", 1) for item in side[len("run.py["):-1].split(";"))
    cmd = command(side, mode, script, world, port)
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, cwd=run_dir, env=env, capture_output=True, text=True, timeout=timeout)
        code, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired:
        code, err = "timeout", ""
    wall = time.time() - t0
    processes = collections.defaultdict(dict)
    if os.path.exists(marks):
        with open(marks) as f:
            for line in f:
                rec = json.loads(line)
                entry = processes[str(rec["pid"])]
                entry.setdefault(rec["phase"], rec["t"])
                if rec.get("process_start") is not None:
                    entry.setdefault("process_start", rec["process_start"])
    out = {"t0": t0, "wall_s": wall, "code": code, "processes": dict(processes)}
    if code != 0:
        out["error"] = (err.strip().splitlines() or [f"exit {code}"])[-1]
    return out


def children(run: dict, mode: str) -> list:
    """Per child (a process that ran the child function): ``{phase: seconds since t0}``, t0 = the parent's
    mp.spawn call (spawn) or the launcher's start (torchrun)."""
    t0 = run["t0"]
    if mode == "spawn":
        calls = [p["s_spawn_call"] for p in run["processes"].values() if "s_spawn_call" in p]
        if not calls:
            return []
        t0 = calls[0]
    return [{k: v - t0 for k, v in p.items()} for p in run["processes"].values() if "s_fn" in p]


def phase_table(child_lists: list) -> list:
    """``[(phase, median seconds since the previous phase present, median seconds since t0)]`` over the children."""
    deltas, totals = collections.defaultdict(list), collections.defaultdict(list)
    for c in child_lists:
        prev = 0.0
        for name in ORDER:
            if name in c:
                deltas[name].append(c[name] - prev)
                totals[name].append(c[name])
                prev = c[name]
    return [(n, statistics.median(deltas[n]), statistics.median(totals[n])) for n in ORDER if n in deltas]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--world", type=int, default=2, help="processes (default 2)")
    p.add_argument("--modes", nargs="+", choices=sorted(SCRIPTS), default=["spawn", "torchrun"])
    p.add_argument("--sides", nargs="+", choices=["run.py", "pytorch"], default=["run.py", "pytorch"])
    p.add_argument("--ab", metavar="NAME=VALUE[;NAME=VALUE]", action="append", default=[],
                   help="add a side 'run.py[NAME=VALUE;...]': run.py with these environment variables, for a "
                        "before/after in the same invocation (e.g. 'ADAPTER_DISABLE_PATCHES=random_draws;"
                        "ADAPTER_SCHEDULER_PRESTART=0': this work's changes off); repeatable")
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "spawn_ready_results.json"))
    args = p.parse_args(argv)
    args.sides = list(args.sides) + [f"run.py[{spec}]" for spec in args.ab]
    work = tempfile.mkdtemp(prefix="bench_spawn_ready_")
    scripts = {}
    for mode in args.modes:
        folder = os.path.join(work, f"script_{mode}")
        os.makedirs(folder)
        scripts[mode] = instrument(mode, folder)
    runs = {(side, mode): [] for mode in args.modes for side in args.sides}
    for i in range(args.runs):
        for mode in args.modes:
            for side in args.sides:
                r = run_once(side, mode, scripts[mode], args.world, work, args.timeout)
                runs[(side, mode)].append(r)
                kids = children(r, mode)
                ready = [round(c["s_model"], 2) for c in kids if "s_model" in c]
                print(f"run {i + 1} {side} {mode} exit {r['code']} wall {r['wall_s']:.1f} s, model created "
                      f"at {ready} s{'  ' + r['error'] if 'error' in r else ''}", flush=True)
    summary = {}
    for mode in args.modes:
        for side in args.sides:
            kids = [c for r in runs[(side, mode)] for c in children(r, mode)]
            if not kids:
                continue
            table = phase_table(kids)
            summary[f"{side} {mode}"] = {"children": len(kids), "phases": [
                {"phase": n, "delta_s": round(d, 3), "at_s": round(t, 3)} for n, d, t in table]}
            print(f"\n{side} {mode}: {len(kids)} children; phase: median s since the previous phase (median s "
                  f"since {'mp.spawn' if mode == 'spawn' else 'the launcher start'})")
            for n, d, t in table:
                print(f"  {n:14s} {d:7.2f}   {t:7.2f}")
        ready = {side: summary.get(f"{side} {mode}", {}).get("phases", []) for side in args.sides}
        at = {side: next((ph["at_s"] for ph in ready[side] if ph["phase"] == "s_model"), None) for side in ready}
        if at.get("run.py") and at.get("pytorch"):
            ratio = at["run.py"] / at["pytorch"]
            summary[f"ratio {mode}"] = round(ratio, 2)
            print(f"{mode}: model created at {at['run.py']:.2f} s (run.py) vs {at['pytorch']:.2f} s (PyTorch): "
                  f"{ratio:.2f}x")
        for side in args.sides:
            if side.startswith("run.py[") and at.get(side) and at.get("pytorch"):
                summary[f"ratio {mode} {side}"] = round(at[side] / at["pytorch"], 2)
                print(f"{mode}: {side}: model created at {at[side]:.2f} s: {at[side] / at['pytorch']:.2f}x PyTorch")
    with open(args.out, "w") as f:
        json.dump({"args": vars(args), "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                   "cpus": os.cpu_count(), "machine": machine.describe(), "summary": summary,
                   "runs": {f"{s} {m}": r for (s, m), r in runs.items()}}, f, indent=1)
    summarize(args.out)  # bench/results.py: the compact summary git keeps (the raw file is ignored)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
