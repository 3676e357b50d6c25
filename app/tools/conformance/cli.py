"""``run.py conformance``: replay every conformance case here and print the pass/fail counts per namespace.

    python run.py conformance [--only API_OR_ID ...] [--mode both|pynative|graph] [--failures] [--json PATH]
                              [--write-docs] [--results JSON] [--coverage]
    python run.py conformance --opinfo [--replay] [--summary] [--only NAME ...] [--failures]

Without PyTorch: it reads the golden files (``tests/fixtures/conformance/``) that
``.venv-ref/bin/python -m app.tools.conformance.record`` wrote. ``--failures`` lists every fail/fallback with what
differed; ``--json`` writes the verdicts; ``--write-docs`` regenerates ``docs/conformance.md``'s conformance counts and its
known-differences table (:mod:`app.tools.conformance.known`). Exit status 1 when a case fails that the known-differences
table does not list. ``--opinfo``: PyTorch's own OpInfo database instead (:mod:`app.tools.conformance.opinfo_replay`).
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import sys
import time
from typing import Dict, Iterable, List

from app.bootstrap import setup_mindspore
from app.tools.conformance import inventory, known, replay
from app.tools.conformance.cases import all_cases
from app.tools.conformance.spec import ROOT, replace_block

NAMESPACES = ("torch", "torch.Tensor", "torch.nn.functional", "torch.nn", "torch.optim", "torch.utils.data",
              "torchvision")


def counts(results) -> Dict[str, Dict[str, collections.Counter]]:
    """{namespace: {"pynative": Counter(verdict), "graph": Counter(verdict)}} plus "all"."""
    out: Dict[str, Dict[str, collections.Counter]] = {}
    for r in results:
        for ns in (r.namespace, "all"):
            entry = out.setdefault(ns, {"pynative": collections.Counter(), "graph": collections.Counter()})
            entry["pynative"][r.pynative] += 1
            entry["graph"][r.graph] += 1
    return out


def table(results) -> List[str]:
    """The per-namespace counts as Markdown table lines."""
    c = counts(results)
    lines = ["| namespace | cases | PyNative pass / fail | graph pass / fail / fallback / n.a. |", "|---|---|---|---|"]
    for ns in (*NAMESPACES, "all"):
        if ns not in c:
            continue
        p, g = c[ns]["pynative"], c[ns]["graph"]
        n = sum(p.values())
        name = f"**{ns}**" if ns == "all" else f"`{ns}`"
        lines.append(f"| {name} | {n} | {p['pass']} / {p['fail'] + p['fallback']} | "
                     f"{g['pass']} / {g['fail']} / {g['fallback']} / {g['skip']} |")
    return lines


def summary_line(results) -> str:
    a = counts(results).get("all", {"pynative": collections.Counter(), "graph": collections.Counter()})
    p, g = a["pynative"], a["graph"]
    return (f"conformance: {sum(p.values())} cases vs PyTorch; PyNative {p['pass']} pass, "
            f"{p['fail'] + p['fallback']} fail; graph {g['pass']} pass, {g['fail']} fail, {g['fallback']} fall back "
            f"to PyNative, {g['skip']} n.a.")


def case_coverage():
    """(covered fraction of the inventory's (API, signature) pairs, the uncovered entries)."""
    return inventory.coverage({sig for case in all_cases() for sig in case.covers})


def print_coverage() -> int:
    fraction, missing = case_coverage()
    for entry in missing:
        print(f"  {entry['signature']}  {(entry.get('examples') or [''])[0]}")
    print(f"inventory coverage: {fraction:.1%} of the (API, signature) pairs the corpus (pytorch/examples' scripts, "
          f"pt_original/, torchvision's models) uses; {len(missing)} not covered by a case")
    return 0


def _replace_block(text: str, name: str, lines: Iterable[str]) -> str:
    return replace_block(text, f"<!-- conformance:{name} -->", f"<!-- /conformance:{name} -->", lines, DOC)


#: The page holding the generated blocks ``<!-- conformance:counts -->`` and ``<!-- conformance:known -->``.
DOC = os.path.join(ROOT, "docs", "conformance.md")


def write_docs(results, path: str = DOC) -> None:
    """Regenerate ``docs/conformance.md``'s counts and known-differences blocks (:func:`table`,
    :func:`app.tools.conformance.known.readme_rows`) from ``results``. Moved here from ``known.py`` (issue 16: known
    imported this module back, a cycle).

    Raises ``ValueError`` when the page lacks one of the two marker pairs."""
    with open(path) as f:
        text = f.read()
    text = _replace_block(text, "counts", [*table(results), "", summary_line(results) + "."])
    text = _replace_block(text, "known", known.readme_rows(results))
    with open(path, "w") as f:
        f.write(text)


write_readme = write_docs  # the name before the table moved from README.md to docs/conformance.md (issue 16)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--opinfo" in argv:  # PyTorch's OpInfo database (issue 35): its own options, app/tools/conformance/opinfo_replay
        from app.tools.conformance import opinfo_replay
        return opinfo_replay.main([a for a in argv if a != "--opinfo"])
    parser = argparse.ArgumentParser(prog="run.py conformance", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="case ids or APIs (torch.Tensor.std)")
    parser.add_argument("--mode", choices=("both", "pynative", "graph"), default="both")
    parser.add_argument("--failures", action="store_true", help="list every failing case")
    parser.add_argument("--json", default=None, help="write the verdicts here")
    parser.add_argument("--write-docs", "--write-readme", dest="write_docs", action="store_true",
                        help="regenerate docs/conformance.md's counts and known-differences table "
                             "(--write-readme: the former name)")
    parser.add_argument("--device", default="CPU")
    parser.add_argument("--results", default=None,
                        help="use the verdicts a previous run wrote (--json, or tests/test_conformance.py's "
                             "$CONFORMANCE_JSON) instead of replaying")
    parser.add_argument("--coverage", action="store_true",
                        help="only print how much of the inventory the cases cover, and what they miss")
    args = parser.parse_args(argv)
    if args.coverage:
        return print_coverage()

    setup_mindspore(args.device)

    cases = all_cases()
    if args.only:
        cases = [c for c in cases if c.id in args.only or c.api in args.only]
    modes = ("pynative", "graph") if args.mode == "both" else (args.mode,)
    start = time.perf_counter()
    if args.results:
        with open(args.results) as f:
            wanted = {c.id for c in cases}
            results = [replay.Result(**r) for r in json.load(f) if r["id"] in wanted]
    else:
        results = replay.run_all(cases, modes, isolated=True)
    elapsed = time.perf_counter() - start
    print("\n".join(table(results)))
    unlisted = known.unlisted_failures(results)
    if args.failures or unlisted:
        for r in results:
            for mode in modes:
                verdict = getattr(r, mode)
                if verdict in ("fail", "fallback") and (args.failures or (r.id, mode) in unlisted):
                    print(f"{mode:8s} {verdict:8s} {r.id} {r.expr}: {getattr(r, mode + '_why')}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([dataclasses.asdict(r) for r in results], f, indent=1)
    if args.write_docs:
        write_docs(results)
    print(f"{summary_line(results)} ({elapsed:.0f} s); {len(unlisted)} failures not in the known-differences table")
    return 1 if unlisted else 0


if __name__ == "__main__":
    sys.exit(main())
