"""The conformance cases, one module per namespace. Each module holds ``CASES``, a list of
:class:`app.tools.conformance.spec.Case` (made with ``C(expr, setup, **inputs_and_options)``).

Add a case: append it to the namespace's module, record it under real PyTorch
(``.venv-ref/bin/python -m app.tools.conformance.record --only <api>``), replay (``run.py conformance``).
"""
from __future__ import annotations

import importlib
from typing import List

MODULES = ("torch_functions", "tensor_methods", "nn_functional", "nn_modules", "optim", "data", "vision", "script_uses")


def case_modules():
    """The case modules that exist, imported, in :data:`MODULES` order: (name, module)."""
    for name in MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue
            raise
        yield name, module


def all_cases() -> List:
    """Every case, in module order, each with ``group`` = its module's name (its golden files are
    ``tests/fixtures/conformance/<group>.json/.npz``); raises ValueError when two cases have the same id (same
    expr/setup/inputs)."""
    out, seen = [], {}
    for name, module in case_modules():
        for case in module.CASES:
            if case.id in seen:
                raise ValueError(f"duplicate conformance case {case.expr!r} ({name} and {seen[case.id]})")
            seen[case.id] = name
            case.group = name
            out.append(case)
    return out
