"""The seed band of ``make run``'s job (issue 33): its test accuracy over seeds, under real PyTorch and through
``run.py`` on the ``MINDSPORE=`` stack, into one JSON file (the README quotes it).

    [MINDSPORE=<version>] .venv/bin/python bench/seed_band.py [--side pytorch ours] [--seeds 1 2 3 4 5]
        [--max-steps 0] [--out bench/make_run_seed_band.json]

Each run is ``pt_original/train_resnet.py --arch resnet18 --epochs 1 --max-steps N --data-root data --seed S`` (the
job of ``make run``; ``--max-steps 0``: the whole epoch), one process at a time: PyTorch with ``.venv-ref``'s Python
through ``scripts/run_under_torch.py``, ours with the stack's Python through ``run.py --original``. The accuracy is
the script's own ``Final test accuracy: X%`` line (the full test set). Accuracy does not depend on the machine's load
(a run is deterministic per CPU and kernel build), so other jobs may run beside it; its times do.

The results are merged into ``--out`` under the key ``"<max-steps or 'epoch'>/<side>"`` (``"epoch/pytorch"``,
``"epoch/ours_2.10.0"``), with the machine, the date, the command and per seed the accuracy, the script's own total
seconds and the load average at the start; each key's ``summary`` gives n, min, max, mean, the sample standard
deviation and the band ``mean +- 2.6 sd`` (a normal distribution's 99 % interval: z = 2.576), which is how the
README compares a run with the spread over seeds.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import machine  # noqa: E402  (bench/machine.py: the machine's description)
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)
from run_bench import stack_machine  # noqa: E402  (the machine as the stack's own interpreter sees it)

JOB = ["pt_original/train_resnet.py", "--arch", "resnet18", "--epochs", "1", "--data-root", "data"]
FINAL = re.compile(r"Final test accuracy: ([0-9.]+)%\s+\(total ([0-9.]+) s\)")


def command(side: str, max_steps: int, seed: int) -> list:
    """The argv of one run: ``side`` "pytorch" (real PyTorch, .venv-ref) or "ours" (run.py on the stack)."""
    job = JOB + ["--max-steps", str(max_steps), "--seed", str(seed)]
    if side == "pytorch":
        return [os.path.join(ROOT, ".venv-ref", "bin", "python"), "scripts/run_under_torch.py"] + job
    return [stack.python(), "run.py", "--original"] + job


def run_one(argv: list) -> dict:
    """Run ``argv`` in the repository root; its accuracy (%), the script's total seconds, the load at the start.
    Raises ``RuntimeError`` with the output's last lines when the run fails or prints no final accuracy."""
    load = os.getloadavg()[0]
    start = time.time()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    found = FINAL.search(proc.stdout)
    if proc.returncode != 0 or not found:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
        raise RuntimeError(f"{' '.join(argv)}: exit {proc.returncode}\n{tail}")
    return {"test_accuracy_pct": float(found.group(1)), "script_total_s": float(found.group(2)),
            "wall_s": round(time.time() - start, 1), "load_average_1min_at_start": round(load, 2),
            "start_utc": datetime.datetime.utcfromtimestamp(start).strftime("%H:%M:%S")}


def summary(accuracies: list) -> dict:
    """n, min, max, mean, sample sd and the 99 % band ``mean +- 2.6 sd`` of the accuracies (%)."""
    out = {"n": len(accuracies), "min": min(accuracies), "max": max(accuracies),
           "mean": round(statistics.mean(accuracies), 3)}
    if len(accuracies) > 1:
        sd = statistics.stdev(accuracies)
        out.update(sd_sample=round(sd, 3), band_99_mean_pm_2_6sd=[round(out["mean"] - 2.6 * sd, 2),
                                                                  round(out["mean"] + 2.6 * sd, 2)])
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--side", nargs="+", choices=["pytorch", "ours"], default=["pytorch", "ours"])
    p.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    p.add_argument("--max-steps", type=int, default=0, help="training steps (0: the whole epoch, make run's job)")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "make_run_seed_band.json"))
    args = p.parse_args(argv)
    scope = str(args.max_steps) if args.max_steps else "epoch"
    for side in args.side:
        described = stack_machine() if side == "ours" else \
            {k: v for k, v in machine.describe().items() if k not in ("mindspore", "mindtorch", "python")}
        name = "pytorch" if side == "pytorch" else f"ours_{described.get('mindspore', 'unknown')}"
        key = f"{scope}/{name}"
        seeds = {}
        for seed in args.seeds:
            seeds[str(seed)] = run_one(command(side, args.max_steps, seed))
            print(f"{key} seed {seed}: {seeds[str(seed)]}", flush=True)
            _merge(args.out, key, side, args.max_steps, seeds, described)
        print(f"{key}: {json.dumps(summary([s['test_accuracy_pct'] for s in seeds.values()]))}")
    return 0


def _merge(path: str, key: str, side: str, max_steps: int, seeds: dict, described: dict) -> None:
    """Write ``seeds`` (and their summary, the ``described`` machine) under ``key`` of the JSON file at ``path``,
    keeping its other keys."""
    data = {}
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    data[key] = {"date": datetime.date.today().isoformat(), "machine": described,
                 "command": " ".join(os.path.relpath(a, ROOT) if a.startswith(ROOT) else a
                                     for a in command(side, max_steps, 0)[:-1]) + " S",
                 "seeds": seeds, "summary": summary([s["test_accuracy_pct"] for s in seeds.values()])}
    with open(path + ".tmp", "w") as f:
        json.dump(data, f, indent=1)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    sys.exit(main())
