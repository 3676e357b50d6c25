"""The known differences from PyTorch: conformance cases that fail here and are not fixed, each with the reason.
Each case module lists its own in ``KNOWN = [Known(id, api, modes, reason), ...]`` beside its ``CASES``.

Every case that fails (a wrong value, dtype, shape, type or error; not a graph-mode fallback, which runs the
PyNative form) must be listed here, and every entry must still fail: ``tests/test_conformance.py`` enforces both,
so a fix removes its entry. The known-differences table of ``docs/conformance.md`` is generated from this list and the
measured verdicts (``run.py conformance --write-docs``, ``app/tools/conformance/cli.py``), and ``run.py --report``
flags each listed API in a user's script at its file:line (:func:`report_signatures`).
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Set, Tuple

from app.tools.conformance.spec import SINCE, Known  # noqa: F401  (the entries' vocabulary; re-exported)


def _installed_mindspore() -> str:
    from adapter import backend
    return backend.installed_versions().get("mindspore", "")


def known(version: str = None) -> List[Known]:
    """The known differences on MindSpore ``version`` (default: the installed one): every case module's ``KNOWN``
    list (``app/tools/conformance/cases/<group>.py``), in module order, then the stack-specific entries of
    ``app/tools/conformance/known_stacks.py``. An entry with ``stacks`` holds only on those versions; a case-module
    entry that passes on a version is taken out there (``known_stacks.PASSES``), mode by mode."""
    from app.tools.conformance import known_stacks
    from app.tools.conformance.cases import case_modules
    version = version or _installed_mindspore()
    passes = known_stacks.PASSES.get(version, {})
    out = []
    extra = [Known(since=known_stacks.SINCE.get(tuple(row["stacks"]), SINCE), **row) for row in known_stacks.KNOWN]
    for k in [k for _, module in case_modules() for k in getattr(module, "KNOWN", ())] + extra:
        if k.stacks and version not in k.stacks:
            continue
        modes = tuple(m for m in k.modes if m not in passes.get(k.id, ()))
        if modes:
            out.append(k if modes == k.modes else dataclasses.replace(k, modes=modes))
    return out


def by_key() -> Dict[Tuple[str, str], Known]:
    return {(k.id, m): k for k in known() for m in k.modes}


def unlisted_failures(results) -> Set[Tuple[str, str]]:
    """(case id, mode) of each failing verdict that :func:`known` does not list."""
    listed = by_key()
    return {(r.id, m) for r in results for m in ("pynative", "graph")
            if getattr(r, m) == "fail" and (r.id, m) not in listed}


def stale_entries(results) -> List[Tuple[str, str]]:
    """(case id, mode) listed in :func:`known` whose case now passes (or falls back) there: the entry must go."""
    verdicts = {(r.id, m): getattr(r, m) for r in results for m in ("pynative", "graph")}
    return [key for key, k in by_key().items() if not k.rounding and verdicts.get(key, "fail") != "fail"]


def report_signatures() -> Dict[str, str]:
    """{(API, signature) string: "differs from PyTorch (modes): reason"}: the uses ``run.py --report`` flags. For a
    case that calls a module (``torch.nn.ConvTranspose2d.__call__``) the uses are the module's constructor calls the
    case makes (``torch.nn.ConvTranspose2d(5;bias,output_padding)``: the difference comes with those arguments);
    otherwise the case's own signature. Rounding-edge entries (:attr:`Known.rounding`) are not flagged (docs/conformance.md only).
    An API with several entries gets the first one's reason. Then the differences of PyTorch's OpInfo replay
    (:func:`app.tools.conformance.opinfo_known.report_signatures`) for signatures no entry here names."""
    from app.tools.conformance import opinfo_known
    from app.tools.conformance.cases import all_cases
    cases = {c.id: c for c in all_cases()}
    out: Dict[str, str] = {}
    for k in known():
        case = cases.get(k.id)
        if case is None or k.rounding:
            continue
        where = "PyNative and compiled" if set(k.modes) == {"pynative", "graph"} else \
            ("compiled (graph mode)" if k.modes == ("graph",) else "PyNative")
        if case.api.endswith(".__call__"):
            cls = case.api[:-len(".__call__")]
            uses = [sig for sig in case.covers if sig.startswith(cls + "(")]
        else:
            uses = [case.sig]
        for sig in uses:
            out.setdefault(sig, f"differs from PyTorch ({where}): {k.reason}")
    for sig, note in opinfo_known.report_signatures().items():
        out.setdefault(sig, note)
    return out


def readme_rows(results) -> List[str]:
    by_id = {r.id: r for r in results}
    rows = ["| API | call | mode | what differs | max rel. error | why | since |", "|---|---|---|---|---|---|---|"]
    for k in known():
        r = by_id.get(k.id)
        if r is None:
            continue
        why = "; ".join(dict.fromkeys(getattr(r, m + "_why") for m in k.modes if getattr(r, m + "_why")))
        rows.append(f"| `{k.api}` | `{r.expr}` | {' + '.join(k.modes)} | {why.replace('|', '/')} | "
                    f"{r.max_rel:.2g} | {k.reason} | {k.since} |")
    return rows
