"""``run.py corpus``: run a folder of PyTorch scripts through ``run.py`` and judge each against a golden record made
under real PyTorch; ``--record`` makes those records.

    python run.py corpus --scripts DIR --goldens DIR [--only NAME ...] [--work DIR] [--data DIR] [--keep]
    python run.py corpus --scripts DIR --goldens DIR --record PYTHON      # PYTHON: one with real PyTorch

The scripts (``DIR/*.py``, names starting with ``_`` are helpers, not scripts) print what is compared, one value
a line, in one of two forms (``pt_original/idioms/_idiom_common.py`` writes them)::

    <section> loss <step>: <float>        a training loss
    <section> <name> = <float>            any other number (a metric, a count, a flag)

A script may say how it runs in one comment line (JSON): ``# corpus: {"args": [...], "run_opts": [...],
"torchrun": 2, "env": {...}, "compiled": false, "rel_tol": 1e-3, "first_rel_tol": 1e-4}``. ``run_opts`` are
``run.py`` options (``--nproc-per-node 2``); ``torchrun``: the PyTorch side runs under ``torch.distributed.run``
with that many processes; ``compiled`` (default true): every ``backward()`` site that ``--explain`` lists must have
compiled.

Each script runs in a fresh folder under ``--work`` (entries of ``--data`` linked into it), as
``run.py --explain [run_opts] --original SCRIPT args``. The verdict, per script:

* the exit status PyTorch had;
* every value of the golden printed here, and within tolerance: each section's step-0 loss within relative
  ``first_rel_tol`` (default 1e-4: the same weights and data give the same first loss up to float32 rounding), every
  other value within ``rel_tol`` (default 1e-3: later steps add the rounding of every step before), with an
  absolute floor of 1e-6;
* ``compiled``: each ``backward()`` site in ``--explain``'s report says "compiled".

Prints one line per script (``PASS name: ...`` / ``FAIL name: ...`` and what differed); exit status 1 if any script
fails, 2 if a script or golden is missing.

``--record PYTHON``: run each script under ``PYTHON scripts/run_under_torch.py`` (``-m torch.distributed.run`` for
``torchrun``) and write ``GOLDENS/<script stem>.json``: the values, the exit status, the versions, the command.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLOAT = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf|-inf)"
VALUE_LINE = re.compile(r"^(\S+ loss \d+): " + FLOAT + r"$|^(\S+ [\w.]+) = " + FLOAT + r"$", re.MULTILINE)
HEADER = re.compile(r"^# corpus: (\{.*\})\s*$", re.MULTILINE)
BACKWARD_SITE = re.compile(r"^\s+(\S+:\d+): backward\(\) of .*$", re.MULTILINE)
ABS_FLOOR = 1e-6


@dataclass
class Script:
    """One script of the folder and how it runs (its ``# corpus:`` line)."""
    name: str
    path: str
    args: List[str] = field(default_factory=list)
    run_opts: List[str] = field(default_factory=list)
    env: Dict[str, str] = field(default_factory=dict)
    torchrun: int = 0
    compiled: bool = True
    rel_tol: float = 1e-3
    first_rel_tol: float = 1e-4
    timeout: int = 900


def find_scripts(folder: str, only: Optional[List[str]] = None) -> List[Script]:
    """The scripts of ``folder`` (sorted; ``only``: these names, with or without ``.py``). Raises FileNotFoundError
    for a name of ``only`` that is not there."""
    names = sorted(n for n in os.listdir(folder) if n.endswith(".py") and not n.startswith("_"))
    if only:
        wanted = [n if n.endswith(".py") else n + ".py" for n in only]
        missing = [n for n in wanted if n not in names]
        if missing:
            raise FileNotFoundError(f"run.py corpus: no script {', '.join(missing)} in {folder}")
        names = wanted
    out = []
    for n in names:
        path = os.path.join(os.path.abspath(folder), n)
        with open(path) as f:
            m = HEADER.search(f.read())
        opts = json.loads(m.group(1)) if m else {}
        out.append(Script(name=n[:-3], path=path, **opts))
    return out


def parse_values(text: str) -> Dict[str, float]:
    """The ``<section> loss <step>: v`` and ``<section> <name> = v`` lines of ``text`` (a later line with the same
    key replaces an earlier one)."""
    out: Dict[str, float] = {}
    for m in VALUE_LINE.finditer(text):
        key, value = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        out[key] = float(value)
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_dir(work: str, name: str, data: Optional[str]) -> str:
    """A fresh folder ``work/name`` with every entry of ``data`` linked into it."""
    path = os.path.join(work, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    if data:
        for entry in os.listdir(data):
            os.symlink(os.path.abspath(os.path.join(data, entry)), os.path.join(path, entry))
    return path


def _run(cmd: List[str], cwd: str, env: Dict[str, str], timeout: int) -> Tuple[int, str, str]:
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=dict(os.environ, **env), capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return 124, out, f"still running after {timeout} s"
    return proc.returncode, proc.stdout, proc.stderr


def run_here(script: Script, cwd: str) -> Tuple[int, str, str]:
    """``run.py --explain [run_opts] --original SCRIPT args`` in ``cwd``: (exit status, stdout, stderr)."""
    cmd = [sys.executable, os.path.join(ROOT, "run.py"), "--explain", *script.run_opts, "--original", script.path,
           *script.args]
    return _run(cmd, cwd, script.env, script.timeout)


def torch_command(script: Script, python: str) -> List[str]:
    """The command running ``script`` under real PyTorch (``python``)."""
    runner = [os.path.join(ROOT, "scripts", "run_under_torch.py"), script.path, *script.args]
    if script.torchrun:
        return [python, "-m", "torch.distributed.run", "--nproc-per-node", str(script.torchrun), "--master-port",
                str(_free_port()), *runner]
    return [python, *runner]


def judge(script: Script, golden: Dict, code: int, stdout: str, stderr: str) -> List[str]:
    """What differs from the golden (empty: the script passes). Each item is one short sentence."""
    problems = []
    if code != golden["exit"]:
        problems.append(f"exit status {code}, PyTorch {golden['exit']}; stderr ends: {stderr.strip()[-300:]}")
    ours = parse_values(stdout)
    for key, ref in golden["values"].items():
        if key not in ours:
            problems.append(f"{key}: not printed (PyTorch: {ref:.8g})")
            continue
        tol = script.first_rel_tol if re.search(r" loss 0$", key) else script.rel_tol
        diff = abs(ours[key] - ref)
        if not diff <= max(tol * abs(ref), ABS_FLOOR):  # also catches a NaN here
            problems.append(f"{key}: {ours[key]:.8g}, PyTorch {ref:.8g} (rel. diff {diff / max(abs(ref), 1e-12):.2e}"
                            f" > {tol:g})")
    if script.compiled:
        sites = BACKWARD_SITE.findall(stderr)
        eager = [line.strip() for line in re.findall(r"^\s+\S+:\d+: backward\(\) of .*$", stderr, re.MULTILINE)
                 if "— compiled" not in line]
        if not sites:
            problems.append("--explain lists no compiled backward() site")
        problems += [f"not compiled: {line}" for line in eager]
    return problems


def max_rel(golden: Dict, stdout: str) -> float:
    ours = parse_values(stdout)
    rels = [abs(ours[k] - v) / max(abs(v), 1e-12) for k, v in golden["values"].items() if k in ours]
    return max(rels, default=0.0)


def check(script: Script, goldens: str, work: str, data: Optional[str]) -> Tuple[bool, str]:
    """Run ``script`` here and judge it: (passed, the verdict line)."""
    path = os.path.join(goldens, f"{script.name}.json")
    if not os.path.exists(path):
        return False, f"FAIL {script.name}: no golden {path} (record one: run.py corpus ... --record PYTHON)"
    with open(path) as f:
        golden = json.load(f)
    code, out, err = run_here(script, run_dir(work, script.name, data))
    problems = judge(script, golden, code, out, err)
    if problems:
        return False, f"FAIL {script.name}: " + "\n    ".join(problems)
    sites = len(BACKWARD_SITE.findall(err))
    return True, (f"PASS {script.name}: {len(golden['values'])} values as PyTorch's (max rel. diff "
                  f"{max_rel(golden, out):.1e}), exit {code}" + (f", {sites} backward() line(s) compiled"
                                                                  if script.compiled else ""))


def record(script: Script, goldens: str, work: str, data: Optional[str], python: str) -> str:
    """Run ``script`` under real PyTorch and write its golden; the line to print."""
    cwd = run_dir(work, f"{script.name}_torch", data)
    python = os.path.abspath(python) if os.sep in python else python  # the run's folder is not ours
    cmd = torch_command(script, python)
    code, out, err = _run(cmd, cwd, script.env, script.timeout)
    version = subprocess.run([python, "-c", "import sys, torch; print(torch.__version__, sys.version.split()[0])"],
                             capture_output=True, text=True).stdout.split()
    golden = {"script": os.path.basename(script.path), "exit": code, "values": parse_values(out),
              "torch": version[0] if version else None, "python": version[1] if len(version) > 1 else None,
              "date": datetime.date.today().isoformat(),
              "command": ["python", *([f"-m torch.distributed.run --nproc-per-node {script.torchrun}"]
                                      if script.torchrun else []), os.path.basename(script.path), *script.args]}
    os.makedirs(goldens, exist_ok=True)
    with open(os.path.join(goldens, f"{script.name}.json"), "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    tail = f"; stderr ends: {err.strip()[-300:]}" if code else ""
    return f"recorded {script.name}: exit {code}, {len(golden['values'])} values{tail}"


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="run.py corpus", description=__doc__.splitlines()[0])
    p.add_argument("--scripts", required=True, help="folder of the scripts")
    p.add_argument("--goldens", required=True, help="folder of their golden records (<script stem>.json)")
    p.add_argument("--only", nargs="+", help="these scripts only")
    p.add_argument("--work", help="where the run folders go (default: a temporary folder, removed unless --keep)")
    p.add_argument("--data", help="a folder whose entries are linked into each run folder")
    p.add_argument("--keep", action="store_true", help="keep the run folders")
    p.add_argument("--record", metavar="PYTHON", help="record the goldens with this Python (real PyTorch)")
    args = p.parse_args(argv)
    try:
        scripts = find_scripts(args.scripts, args.only)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    work = args.work or tempfile.mkdtemp(prefix="corpus_")
    failed = 0
    try:
        for script in scripts:
            if args.record:
                print(record(script, args.goldens, work, args.data, args.record), flush=True)
                continue
            ok, line = check(script, args.goldens, work, args.data)
            failed += not ok
            print(line, flush=True)
    finally:
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)
    if not args.record:
        print(f"run.py corpus: {len(scripts) - failed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
