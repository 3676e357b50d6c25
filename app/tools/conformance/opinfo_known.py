"""The differences PyTorch's OpInfo replay lists, and what ``run.py --report`` flags of them (issue 35).

Every case of the last committed replay (``tests/fixtures/opinfo/results.json``, ``run.py conformance --opinfo
--replay`` on the default stack) that fails is one :class:`Difference`: a wrong value, dtype, shape or result
structure, an error where PyTorch returns, no error where it raises, another error class, or a wrong or raising
gradient; in PyNative or compiled. A sample that does not compile is not a difference (``run.py`` runs that step in
PyNative, which the PyNative verdict covers), nor is an API MindTorch lacks (``--report`` lists missing APIs itself).

:func:`report_signatures` gives ``run.py --report`` each difference's ``(API, signature)``
(``torch.erfinv(1)``, ``torch.Tensor.tanh(0)``: ``app/tools/conformance/signature.py``), so a user's call of the same
API with the same positional count and keyword names is flagged at its file:line with what differed in op_db's
sample (a function of the ``torch`` namespace also as the Tensor method: ``torch.tanh(x)`` and ``x.tanh()``).
Differences within float32 rounding (:func:`is_rounding`: a value or gradient at most ``ROUNDING_REL`` off,
relative, by the replay's own max-relative measure, never a cosine failure) are listed in docs/opinfo.md but not
flagged: another CPU's summation order moves them, and a flag on every ``bmm`` would bury the real ones.

Reads the JSON files only (not ``golden.npz``): cheap enough for every ``--report`` (~30 ms).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional

from app.tools.conformance.opinfo_spec import GOLDEN_JSON, RESULTS_JSON
from app.tools.conformance.signature import parse, signature

#: A value or gradient failure at most this far off (relative) is float32 rounding at the tolerance's edge.
ROUNDING_REL = 1e-3
#: Verdicts that are not differences: passing, not compiling (the step runs in PyNative), not provided, not run.
NOT_DIFFERENCES = ("pass", "compile", "missing", "not run", None)
_MODE_NAMES = {"pynative": "PyNative", "graph": "compiled"}


@dataclass(frozen=True)
class Difference:
    """One failing case of the replay: op_db ``entry``, its sample's ``expr`` and ``sig`` (API and signature),
    ``mode`` ("PyNative" or "compiled"), ``part`` ("result", "gradient" or "error input"), the fail ``kind`` and the
    replay's message ``why``; ``rounding`` per :func:`is_rounding`."""
    entry: str
    case: str
    sig: str
    expr: str
    mode: str
    part: str
    kind: str
    why: str
    rounding: bool

    def note(self) -> str:
        """One line for ``--report``: where it differs and how, in op_db's sample."""
        why = re.sub(r"\s+", " ", self.why).strip()
        why = why if len(why) <= 140 else why[:137] + "..."
        return (f"differs from PyTorch ({self.mode}, {self.part}: {self.kind}) in PyTorch's OpInfo sample "
                f"`{self.expr}`: {why} (docs/opinfo.md)")


def is_rounding(verdict: Optional[dict]) -> bool:
    """Whether a case's verdict (``{"fwd", "grad", "why"}``) fails by float32 rounding only: every "max rel" its
    message gives is at most :data:`ROUNDING_REL`, it is a value or gradient failure, and no cosine failed."""
    if not verdict or verdict.get("fwd") not in ("pass", "value"):
        return False
    why = verdict.get("why", "")
    rels = [float(r) for r in re.findall(r"max rel ([0-9.e+-]+)", why)]
    return bool(rels) and max(rels) <= ROUNDING_REL and "cosine" not in why and "NaN" not in why


def _load(path: str) -> Optional[dict]:
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def differences(meta: Optional[dict] = None, results: Optional[Dict[str, dict]] = None) -> List[Difference]:
    """Every failing case of ``results`` (default: the committed replay's) over ``meta``'s entries (default:
    ``golden.json``), in op_db's order; empty when the files are absent."""
    meta = meta if meta is not None else _load(GOLDEN_JSON)
    if results is None:
        stored = _load(RESULTS_JSON)
        results = stored["results"] if stored else None
    if not meta or results is None:
        return []
    out = []
    for name, entry in meta["entries"].items():
        for rec in entry["samples"]:
            by_mode = results.get(rec["id"], {})
            for mode, v in ((m, by_mode[m]) for m in _MODE_NAMES if m in by_mode):
                parts = [("result", v.get("fwd"))]
                if v.get("fwd") == "pass":
                    parts.append(("gradient", v.get("grad")))
                for part, verdict in parts:
                    if verdict in NOT_DIFFERENCES or verdict == "crash":
                        continue
                    out.append(Difference(name, rec["id"], rec["sig"], rec["expr"], _MODE_NAMES[mode], part,
                                          verdict, v.get("why", ""), is_rounding(v)))
        for rec in entry["errors"]:
            v = results.get(rec["id"], {}).get("pynative")
            if v and v.get("fwd") not in NOT_DIFFERENCES and v.get("fwd") != "crash":
                out.append(Difference(name, rec["id"], rec["sig"], rec["expr"], "PyNative", "error input",
                                      v["fwd"], v.get("why", ""), False))
    return out


def report_signatures(diffs: Optional[List[Difference]] = None) -> Dict[str, str]:
    """{(API, signature): note} of every difference but the rounding ones (the first one's note where a signature
    has several): the uses ``run.py --report`` flags (:func:`app.tools.conformance.known.report_signatures`)."""
    out: Dict[str, str] = {}
    for d in differences() if diffs is None else diffs:
        if not d.rounding:
            for sig in _uses(d.sig):
                out.setdefault(sig, d.note())
    return out


def _uses(sig: str) -> List[str]:
    """``sig`` and, for a function of the ``torch`` namespace itself whose first argument is the tensor
    (``torch.tanh(1)``), the same call as a Tensor method (``torch.Tensor.tanh(0)``: ``x.tanh()``), which op_db
    samples only once."""
    api, n, kws = parse(sig)
    if api.count(".") == 1 and n >= 1:
        return [sig, signature("torch.Tensor." + api.split(".")[1], n - 1, kws)]
    return [sig]


def doc_rows(diffs: List[Difference]) -> List[str]:
    """docs/opinfo.md's table of the flagged differences, then one line naming the rounding-only ones."""
    rows = ["| op_db entry | sample | mode | part | kind | what differed |", "|---|---|---|---|---|---|"]
    for d in diffs:
        if not d.rounding:
            why = re.sub(r"\s+", " ", d.why).strip().replace("|", "/")
            why = why if len(why) <= 160 else why[:157] + "..."
            rows.append(f"| `{d.entry}` | `{d.expr.replace('|', '/')}` | {d.mode} | {d.part} | {d.kind} | {why} |")
    rounding = sorted({d.entry for d in diffs if d.rounding})
    rows += ["", f"{len(rows) - 2} differences flagged by `run.py --report` at each call of the same (API, "
             f"signature); within float32 rounding (at most {ROUNDING_REL:g} relative, not flagged): "
             + (", ".join(f"`{e}`" for e in rounding) or "none") + "."]
    return rows
