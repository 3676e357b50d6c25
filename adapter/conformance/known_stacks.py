"""Known differences that hold on one supported MindSpore and not the other (issue 33: the whole suite, the conformance
replay included, runs on the default stack, mindspore 2.10.0, and on 2.5-dev where CI's second stack runs it).

``KNOWN``: cases that fail only on the listed MindSpore versions: rows of :class:`known.Known`'s fields
(``id``, ``api``, ``modes``, ``reason``, ``stacks``; ``known.known`` makes them entries, with ``since``).
``PASSES``: ``{version: {case id: modes}}``, case-module entries (written on 2.5-dev) whose case passes there in those
modes, so the entry does not hold on that version. ``tests/test_conformance.py`` checks both ways on each stack: every
failure listed, every listed entry still failing. Measured with ``run.py conformance`` (PyNative and compiled) on
each venv; see docs/mindspore_versions.md.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

V210 = "2.10.0"
# the ``since`` of a row, by its ``stacks``
SINCE = {(V210,): "mindtorch 0.4.0, mindspore 2.10.0"}

KNOWN: List[dict] = [
]

PASSES: Dict[str, Dict[str, Tuple[str, ...]]] = {
    V210: {
    },
}
