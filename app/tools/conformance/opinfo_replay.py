"""Replay PyTorch's OpInfo cases (:mod:`app.tools.conformance.opinfo_record`'s ``tests/fixtures/opinfo/``) here, in
PyNative and compiled, and classify every entry.

    python run.py conformance --opinfo [--replay] [--only NAME ...] [--summary] [--failures] [--write-docs]

Each recorded sample runs through the existing harness's steps: :func:`app.tools.conformance.replay.run_pynative`
(the expression as a script's line, its gradient by ``mindspore.grad`` of the weighted-sum loss) and
:func:`app.tools.conformance.replay.run_graph` (the expression as the ``forward`` of a generated module compiled
under ``graph_mode()``, its gradient by a ``GradOperation`` in the same graph), compared by
:func:`app.tools.conformance.replay.compare` / :func:`~app.tools.conformance.replay.compare_grads` with the same
tolerances (float32 ``1e-6 + 1e-5 |torch|``). Compiled: the first :data:`GRAPH_SAMPLES` sample(s) of each entry (a
compile costs ~100x a PyNative call). ``error_inputs``: PyNative only; the verdict is whether we raise PyTorch's class.

Verdicts per case and mode: ``pass``; a fail kind: ``value``, ``dtype``, ``shape``, ``type`` (another result
structure), ``error`` (raises where PyTorch returns), ``no error`` (returns where PyTorch raises), ``error class``
(raises another class than PyTorch), ``gradient`` (the gradient differs or raises), ``compile`` (graph only: does not
compile, so ``run.py`` would run that step eagerly); ``missing`` (MindTorch has no such API); ``crash`` (the child
process died or hung in the case: a crash costs that case only, the next child goes on with the next case).

Each child replays up to :data:`WORKER_CASES` cases; ``$CONFORMANCE_WORKERS`` children at once (default 1).
"""
from __future__ import annotations

import collections
import datetime
import json
import os
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Tuple

import numpy as np

from app.tools.conformance.opinfo_spec import (GOLDEN_JSON, GOLDEN_NPZ, NAMESPACES, RESULTS_JSON, case_from_record)
from app.tools.conformance.spec import ROOT

GRAPH_SAMPLES = 1
WORKER_CASES = 120
CHILD_TIMEOUT_S = 900


def load_golden() -> Tuple[dict, Dict[str, np.ndarray]]:
    """(golden.json's tree, golden.npz's arrays)."""
    with open(GOLDEN_JSON) as f:
        meta = json.load(f)
    with np.load(GOLDEN_NPZ) as z:
        arrays = {k: z[k] for k in z.files}
    return meta, arrays


def units(meta: dict, only=None, graph_samples: int = GRAPH_SAMPLES) -> List[Tuple[str, str, Tuple[str, ...]]]:
    """(entry, case id, modes) of every case to replay, in op_db's order; compiled too for the first
    ``graph_samples`` samples of each entry."""
    out = []
    for name, entry in meta["entries"].items():
        if only and name not in only and entry["name"] not in only:
            continue
        for i, rec in enumerate(entry["samples"]):
            out.append((name, rec["id"], ("pynative", "graph") if i < graph_samples else ("pynative",)))
        for rec in entry["errors"]:
            out.append((name, rec["id"], ("pynative",)))
    return out


def kind_of(why: str) -> str:
    """The fail kind of a :func:`app.tools.conformance.replay.compare` message."""
    if why.startswith("PyTorch raises"):
        return "no error"
    if why.startswith("raises"):
        return "error"
    if " dtype " in why:
        return "dtype"
    if " shape " in why:
        return "shape"
    if " is " in why or " items, " in why:
        return "type"
    return "value"


def provided(torch, entry: dict) -> bool:
    """Whether MindTorch has the entry's API (``torch.nn.functional.conv2d``, ``torch.Tensor.addcmul``)."""
    obj = torch
    for part in entry["api"].split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return True


def check(entry: dict, rec: dict, arrays, mode: str, torch) -> dict:
    """One case in one mode: ``{"fwd": verdict, "grad": verdict or None, "why": what differed}``."""
    from app.tools.conformance.replay import compare, compare_grads, run_graph, run_pynative
    from adapter import tape
    try:
        tape.discard()  # no eager-bridge recording left open by the previous case (as replay.check)
    except Exception:
        pass
    if not provided(torch, entry):
        return {"fwd": "missing", "grad": None, "why": f"{entry['api']} is not provided"}
    case = case_from_record(rec, arrays)
    golden = {"out": rec["out"], "grads": rec["grads"]}
    want_error = rec["out"]["t"] == "error"
    try:
        tree, grads, store = (run_pynative if mode == "pynative" else run_graph)(case, golden)
    except Exception as exc:
        why = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ''}"
        return {"fwd": "compile" if mode == "graph" else "error", "grad": None, "why": why}
    if want_error:
        if tree["t"] != "error":
            return {"fwd": "no error", "grad": None, "why": f"PyTorch raises {rec['out']['type']}"}
        # what `except <PyTorch's class>` catches: our class or one of its builtin bases is PyTorch's class
        ok = tree["type"] == rec["out"]["type"] or rec["out"]["type"] in tree.get("classes", ())
        return {"fwd": "pass" if ok else "error class", "grad": None,
                "why": f"raises {tree['type']}: {tree['msg'][:160]}; PyTorch {rec['out']['type']}: "
                       f"{rec['out']['msg'][:160]}", "msg": tree["msg"][:200]}
    ok, why, _ = compare(rec["out"], arrays, tree, store, graph=mode == "graph", values=case.values)
    out = {"fwd": "pass" if ok else kind_of(why), "grad": None, "why": why[:300]}
    if rec.get("grads") is not None and case.values:
        if grads and grads[0] is not None and grads[0].get("t") == "error":
            gok, gwhy = False, f"gradient raises {grads[0]['type']}: {grads[0]['msg']}"
        else:
            gok, gwhy, _ = compare_grads(rec["grads"], arrays, grads, store)
        out["grad"] = "pass" if gok else "gradient"
        if not gok and ok:
            out["why"] = gwhy[:300]
        elif not gok:
            out["why"] += f"; {gwhy[:200]}"
    return out


def _worker(ids_path: str, out_path: str) -> int:
    """The child: set up as ``run.py`` does, replay the listed ``entry<TAB>id<TAB>modes`` lines, writing a
    ``{"started": [id, mode]}`` line before each case and mode and its verdict after."""
    import warnings
    from app.bootstrap import setup_mindspore
    setup_mindspore("CPU")
    import torch
    warnings.simplefilter("ignore")
    meta, arrays = load_golden()
    recs = {rec["id"]: rec for e in meta["entries"].values() for rec in e["samples"] + e["errors"]}
    with open(ids_path) as f:
        todo = [line.split("\t") for line in f.read().splitlines() if line]
    with open(out_path, "a") as out:
        for name, case_id, modes in todo:
            for mode in modes.split(","):
                out.write(json.dumps({"started": [case_id, mode]}) + "\n")
                out.flush()
                try:
                    verdict = check(meta["entries"][name], recs[case_id], arrays, mode, torch)
                except Exception as exc:  # the harness's own step failed: counted as an error, not lost
                    verdict = {"fwd": "error", "grad": None, "why": f"harness: {type(exc).__name__}: {exc}"[:300]}
                out.write(json.dumps({"id": case_id, "mode": mode, **verdict}) + "\n")
                out.flush()
    return 0


def _share(todo: list, tmp: str, results: dict, progress, lock) -> None:
    """Replay ``todo`` (units) through successive children; a child that dies or hangs costs the case it had started
    (``crash``), and the next child starts after it."""
    os.makedirs(tmp, exist_ok=True)
    while todo:
        batch, rest = todo[:WORKER_CASES], todo[WORKER_CASES:]
        ids_path, out_path = os.path.join(tmp, "ids"), os.path.join(tmp, "out")
        with open(ids_path, "w") as f:
            f.write("".join(f"{n}\t{i}\t{','.join(m)}\n" for n, i, m in batch))
        if os.path.exists(out_path):
            os.remove(out_path)
        try:
            proc = subprocess.run([sys.executable, "-m", "app.tools.conformance.opinfo_replay", "--worker", ids_path,
                                   out_path], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                  timeout=CHILD_TIMEOUT_S)
            rc, err = proc.returncode, proc.stderr
        except subprocess.TimeoutExpired:
            rc, err = "timeout", ""
        started = None
        with open(out_path) if os.path.exists(out_path) else open(os.devnull) as f:
            for line in f:
                record = json.loads(line)
                if "started" in record:
                    started = record["started"]
                    continue
                started = None
                with lock:
                    results.setdefault(record.pop("id"), {})[record.pop("mode")] = record
        if progress:
            with lock:
                progress(len(results))
        if rc == 0:
            todo = rest
            continue
        if started is None:
            raise RuntimeError(f"opinfo worker exited {rc} outside a case: {err[-2000:]}")
        case_id, mode = started
        tail = [ln for ln in (err or "").strip().splitlines() if ln.strip()][-1:] or [""]
        with lock:
            results.setdefault(case_id, {})[mode] = {"fwd": "crash", "grad": None,
                                                     "why": f"the process died ({rc}) in this case: {tail[0][:200]}"}
        index = next(k for k, u in enumerate(batch) if u[1] == case_id)
        name, _, modes = batch[index]
        later = modes[modes.index(mode) + 1:]
        todo = ([(name, case_id, later)] if later else []) + batch[index + 1:] + rest


def run(meta: dict, only=None, workers=None, progress=None, graph_samples: int = GRAPH_SAMPLES) -> Dict[str, dict]:
    """{case id: {mode: verdict}} of every unit (module docstring, :func:`units`), in child processes."""
    todo = units(meta, only, graph_samples)
    workers = max(1, min(int(workers or os.environ.get("CONFORMANCE_WORKERS") or 1), len(todo) or 1))
    size = -(-len(todo) // workers)
    shares = [todo[i:i + size] for i in range(0, len(todo), size)]
    results: Dict[str, dict] = {}
    lock = threading.Lock()
    with tempfile.TemporaryDirectory(prefix="opinfo_") as tmp:
        with ThreadPoolExecutor(max_workers=len(shares) or 1) as pool:
            list(pool.map(lambda j: _share(j[1], os.path.join(tmp, str(j[0])), results, progress, lock),
                          enumerate(shares)))
    return results


def write_results(results: Dict[str, dict], command: str, path: str = RESULTS_JSON) -> None:
    """The verdicts with the command, date and stack that produced them (compact JSON)."""
    import importlib.metadata as md
    stack = {}
    for dist in ("mindspore", "mindspore-dev", "mindtorch"):
        try:
            stack[dist] = md.version(dist)
        except md.PackageNotFoundError:
            pass
    with open(path, "w") as f:
        json.dump({"command": command, "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
                   "stack": stack, "python": sys.executable, "results": results}, f, separators=(",", ":"),
                  sort_keys=True)


# ---------------------------------------------------------------- the report

def entry_verdicts(meta: dict, results: Dict[str, dict]) -> Dict[str, dict]:
    """Per entry: ``namespace``, ``recorded`` (has samples), ``provided``, ``forward`` / ``gradient`` (None when
    not differentiable) / ``graph`` (pass or the first failing kind), ``crash``, the error inputs' counts, and
    ``why`` (the first failure)."""
    out = {}
    for name, entry in meta["entries"].items():
        v = {"namespace": entry.get("namespace", "torch"), "api": entry.get("api"), "recorded": bool(entry["samples"]),
             "provided": False, "forward": None, "gradient": None, "graph": None, "crash": False,
             "errors": 0, "errors_class": 0, "why": ""}
        verdicts = []
        for i, rec in enumerate(entry["samples"]):
            r = results.get(rec["id"], {})
            p = r.get("pynative", {"fwd": "not run", "grad": None, "why": ""})
            verdicts.append(p["fwd"])
            if p["fwd"] != "missing":
                v["provided"] = True
            if v["forward"] in (None, "pass"):
                v["forward"] = p["fwd"]
                if p["fwd"] != "pass":
                    v["why"] = v["why"] or f"pynative {p['fwd']}: {p.get('why', '')}"
            if rec.get("grads") is not None and v["gradient"] in (None, "pass"):
                v["gradient"] = p.get("grad") or p["fwd"]
                if v["gradient"] != "pass":
                    v["why"] = v["why"] or f"gradient: {p.get('why', '')}"
            if "graph" in r and v["graph"] in (None, "pass"):
                g = r["graph"]
                v["graph"] = g["fwd"] if g["fwd"] != "pass" else (g.get("grad") or "pass")
                if v["graph"] != "pass":
                    v["why"] = v["why"] or f"graph {v['graph']}: {g.get('why', '')}"
            v["crash"] |= any(m.get("fwd") == "crash" for m in r.values())
        for rec in entry["errors"]:
            r = results.get(rec["id"], {}).get("pynative")
            if r and r["fwd"] != "missing":
                v["errors"] += 1
                v["errors_class"] += r["fwd"] == "pass"
                v["crash"] |= r["fwd"] == "crash"
        out[name] = v
    return out


def counts(verdicts: Dict[str, dict], namespace=None) -> dict:
    """The summary's numbers over the entries (of ``namespace``, else all)."""
    vs = [v for v in verdicts.values() if namespace is None or v["namespace"] == namespace]
    prov = [v for v in vs if v["recorded"] and v["provided"]]
    diff = [v for v in prov if v["gradient"] is not None]
    graph = [v for v in prov if v["graph"] is not None]
    return {"N": len(vs), "recorded": sum(v["recorded"] for v in vs), "M": len(prov),
            "P": sum(v["forward"] == "pass" for v in prov), "MG": len(diff),
            "G": sum(v["gradient"] == "pass" for v in diff), "MC": len(graph),
            "C": sum(v["graph"] == "pass" for v in graph), "K": sum(v["crash"] for v in vs),
            "E": sum(v["errors"] for v in vs), "EC": sum(v["errors_class"] for v in vs)}


def summary_line(verdicts: Dict[str, dict]) -> str:
    c = counts(verdicts)
    return (f"opinfo: {c['N']} entries, {c['M']} provided; pynative forward {c['P']}/{c['M']}, gradient "
            f"{c['G']}/{c['MG']}; graph {c['C']}/{c['MC']}; crashes {c['K']}")


def table(verdicts: Dict[str, dict]) -> List[str]:
    """Markdown rows per namespace (docs/opinfo.md)."""
    rows = ["| namespace | op_db entries | recorded | provided | PyNative forward | gradient | compiled | "
            "error_inputs: PyTorch's class | crashes |", "|---|---|---|---|---|---|---|---|---|"]
    for ns in (*NAMESPACES, None):
        c = counts(verdicts, ns)
        if not c["N"]:
            continue
        pct = lambda a, b: f"{a}/{b} ({100 * a / b:.0f}%)" if b else "0/0"  # noqa: E731
        rows.append(f"| {'**all**' if ns is None else '`' + ns + '`'} | {c['N']} | {c['recorded']} | {c['M']} | "
                    f"{pct(c['P'], c['M'])} | {pct(c['G'], c['MG'])} | {pct(c['C'], c['MC'])} | "
                    f"{pct(c['EC'], c['E'])} | {c['K']} |")
    return rows


def failure_kinds(verdicts: Dict[str, dict]) -> Dict[str, collections.Counter]:
    """{"forward"|"gradient"|"graph": Counter(kind)} over the provided entries that fail."""
    out = {k: collections.Counter() for k in ("forward", "gradient", "graph")}
    for v in verdicts.values():
        if v["recorded"] and v["provided"]:
            for k in out:
                if v[k] not in (None, "pass"):
                    out[k][v[k]] += 1
    return out


def failing(meta: dict, verdicts: Dict[str, dict]) -> List[str]:
    """One line per provided entry that fails somewhere, and per entry MindTorch lacks."""
    lines = []
    for name, v in verdicts.items():
        if not v["recorded"]:
            continue
        if not v["provided"]:
            lines.append(f"missing  {name}: {v['api']}")
        elif "pass" != v["forward"] or v["gradient"] not in (None, "pass") or v["graph"] not in (None, "pass") \
                or v["crash"]:
            lines.append(f"fail     {name} (forward {v['forward']}, gradient {v['gradient']}, graph {v['graph']}"
                         f"{', CRASH' if v['crash'] else ''}): {v['why'][:240]}")
    return lines


def main(argv=None) -> int:
    """``run.py conformance --opinfo``: the report of the last replay (``--summary``), or a new replay
    (``--replay``, or when no results are stored; ``--only`` replays the named entries, into a file in the temp
    folder, unless ``--results`` names a file to read). Exit status 1 when a case crashed."""
    import argparse
    import time
    parser = argparse.ArgumentParser(prog="run.py conformance --opinfo", description=__doc__.splitlines()[0])
    parser.add_argument("--replay", action="store_true", help="re-run every case (else: read the last results)")
    parser.add_argument("--summary", action="store_true", help="the table and the summary line only")
    parser.add_argument("--only", nargs="*", default=None, help="op_db entry names")
    parser.add_argument("--failures", action="store_true", help="list every failing or missing entry")
    parser.add_argument("--results", default=None, help=f"the verdicts file (default {RESULTS_JSON})")
    parser.add_argument("--workers", type=int, default=None, help="children at once ($CONFORMANCE_WORKERS, 1)")
    parser.add_argument("--write-docs", action="store_true",
                        help="regenerate docs/opinfo.md's table and summary from the results")
    args = parser.parse_args(argv)
    meta, _ = load_golden()
    path = args.results or (RESULTS_JSON if not args.only else os.path.join(tempfile.gettempdir(),
                                                                            "opinfo_results.json"))
    if args.replay or not os.path.exists(path) or (args.only and not args.results):
        start = time.time()
        done = {"n": 0}
        total = len(units(meta, args.only))

        def progress(n):
            if n - done["n"] >= 100 or n == total:
                done["n"] = n
                print(f"  {n}/{total} cases ({time.time() - start:.0f} s)", file=sys.stderr, flush=True)
        results = run(meta, args.only, args.workers, progress)
        write_results(results, "run.py conformance --opinfo --replay" + (f" --only {' '.join(args.only)}"
                                                                          if args.only else ""), path)
        print(f"replayed {len(results)} cases in {time.time() - start:.0f} s into {path}",
              file=sys.stderr)
    with open(path) as f:
        stored = json.load(f)
    if args.only:
        meta = dict(meta, entries={n: e for n, e in meta["entries"].items() if n in args.only or e["name"] in args.only})
    verdicts = entry_verdicts(meta, stored["results"])
    if args.failures or (args.only and not args.summary):
        print("\n".join(failing(meta, verdicts)))
    print("\n".join(table(verdicts)))
    kinds = failure_kinds(verdicts)
    print("failing entries by kind: " + "; ".join(f"{k} " + ", ".join(f"{n} {c}" for n, c in v.most_common())
                                                  for k, v in kinds.items() if v))
    c = counts(verdicts)
    print(f"error_inputs: {c['EC']}/{c['E']} raise PyTorch's error class; results of {stored['command']} on "
          f"{stored['date']} ({', '.join(f'{k} {v}' for k, v in stored['stack'].items())}); op_db of torch "
          f"{meta['torch']}, up to {meta['samples_per_entry']} samples per entry")
    if args.write_docs:
        write_docs(meta, verdicts, stored)
    print(summary_line(verdicts))
    return 1 if c["K"] else 0


DOC = os.path.join(ROOT, "docs", "opinfo.md")
README = os.path.join(ROOT, "README.md")

#: the published coverage of comparable projects (issue 35 quotes them from their repositories), for README's table
COMPARABLE = ("torchax (PyTorch on JAX) runs all of `op_db` but about 33 entries, at atol 1e-3 / rtol 1e-5 (ours: "
              "1e-6 + 1e-5 of PyTorch's value); torch-xla runs PyTorch's `test_torch`, `test_nn`, `test_indexing` and "
              "`test_type_promotion` with about 200 tests disabled.")


def _replace_block(path: str, start: str, end: str, lines: List[str]) -> None:
    """Write ``lines`` between the ``start`` and ``end`` markers of ``path`` (``spec.replace_block``). Raises
    ValueError without them."""
    from app.tools.conformance.spec import replace_block
    with open(path) as f:
        text = f.read()
    text = replace_block(text, start, end, lines, path)
    with open(path, "w") as f:
        f.write(text)


def write_docs(meta: dict, verdicts: Dict[str, dict], stored: dict, path: str = DOC, readme: str = README) -> None:
    """Regenerate the ``<!-- opinfo:counts -->`` block of ``docs/opinfo.md`` (the table per namespace, the fail
    kinds, the summary line, and the replay's command, date and stack), its ``<!-- opinfo:differences -->`` block (the
    differences ``run.py --report`` flags: :mod:`app.tools.conformance.opinfo_known`) and README's
    ``<!-- opinfo:table -->`` block
    (the same table and summary line, beside :data:`COMPARABLE`). Raises ValueError when a page lacks its block."""
    c = counts(verdicts)
    kinds = failure_kinds(verdicts)
    lines = [*table(verdicts), "",
             f"Replayed by `{stored['command']}` on {stored['date']} "
             f"({', '.join(f'{k} {v}' for k, v in stored['stack'].items())}, CPU), against op_db of torch "
             f"{meta['torch']} recorded on {meta['date']} (up to {meta['samples_per_entry']} samples and "
             f"{meta['errors_per_entry']} error inputs per entry; compiled: the first {GRAPH_SAMPLES} sample).", "",
             "Failing entries by kind (an entry counts under its first failing case): " + "; ".join(
                 f"{k}: " + ", ".join(f"{n} {kind}" for kind, n in v.most_common()) for k, v in kinds.items() if v)
             + ".", "", f"error_inputs: {c['EC']}/{c['E']} raise PyTorch's error class.", "",
             "    " + summary_line(verdicts)]
    _replace_block(path, "<!-- opinfo:counts -->", "<!-- /opinfo:counts -->", lines)
    from app.tools.conformance import opinfo_known
    _replace_block(path, "<!-- opinfo:differences -->", "<!-- /opinfo:differences -->",
                   opinfo_known.doc_rows(opinfo_known.differences(meta, stored["results"])))
    if readme:
        _replace_block(readme, "<!-- opinfo:table -->", "<!-- /opinfo:table -->", [
            *table(verdicts), "", "    " + summary_line(verdicts), "",
            f"From `{stored['command']}` on {stored['date']} "
            f"({', '.join(f'{k} {v}' for k, v in stored['stack'].items())}, CPU), op_db of torch {meta['torch']} "
            "([opinfo.md](docs/opinfo.md): method, fail kinds, fixes). " + COMPARABLE])


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        sys.exit(_worker(*sys.argv[2:]))
    sys.exit("usage: python -m app.tools.conformance.opinfo_replay --worker IDS_FILE OUT_FILE (run.py conformance "
             "--opinfo)")
