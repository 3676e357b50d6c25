"""PyTorch's OpInfo database (``op_db``, issue 35) as conformance cases: the vocabulary shared by the recorder
(:mod:`app.tools.conformance.opinfo_record`, real PyTorch) and the replayer (:mod:`app.tools.conformance.opinfo_replay`,
here). Imports no framework.

One op_db entry's sample (``SampleInput(input, args, kwargs)``) becomes one :class:`OpCase`: a
:class:`app.tools.conformance.spec.Case` whose ``expr`` calls the entry's public API on inputs named ``t0, t1, ...``
(``torch.nn.functional.conv2d(t0, t1, stride=2)``, or the method form ``t0.addcmul(t1, t2, value=0.5)`` where the
entry has no public function), and whose input values are the ones PyTorch's own ``sample_inputs`` drew, stored as
arrays (PyTorch's generators draw with torch's own random stream, which nothing here reproduces). So the existing
harness runs it unchanged: :func:`app.tools.conformance.record.run_case` under PyTorch,
:func:`app.tools.conformance.replay.run_pynative` / :func:`~app.tools.conformance.replay.run_graph` here.

Files (``tests/fixtures/opinfo/``): ``golden.json`` (per entry: namespace, API, its cases with their result trees and
gradient trees, its ``error_inputs`` with PyTorch's error class and message), ``golden.npz`` (inputs ``<id>/x.tN``,
results ``<id>/out...``, gradients ``<id>/gN``), ``results.json`` (the last replay's verdicts).
"""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from typing import Dict

import numpy as np

from app.tools.conformance.spec import ROOT, Case

OPINFO_DIR = os.path.join(ROOT, "tests", "fixtures", "opinfo")
GOLDEN_JSON = os.path.join(OPINFO_DIR, "golden.json")
GOLDEN_NPZ = os.path.join(OPINFO_DIR, "golden.npz")
RESULTS_JSON = os.path.join(OPINFO_DIR, "results.json")

#: Samples recorded per entry (the first ones PyTorch's ``sample_inputs`` yields that encode, with at most
#: :data:`MAX_NUMEL` tensor elements in all) and ``error_inputs`` per entry.
SAMPLES_PER_ENTRY = 3
ERRORS_PER_ENTRY = 3
MAX_NUMEL = 2000

#: The namespaces of the report, in its order: an entry's namespace is that of its public API.
NAMESPACES = ("torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special", "torch.Tensor")


def slug(text: str) -> str:
    """A name safe in an npz key and a file name: ``nn.functional.conv2d`` stays, ``__radd__`` stays."""
    return re.sub(r"[^A-Za-z0-9_.]+", "-", text)


@dataclass
class OpCase(Case):
    """A :class:`Case` whose inputs' values are stored arrays (``stored``, name -> array) instead of seeded draws;
    ``key`` is its id (``<entry>:s<i>`` for samples, ``<entry>:e<i>`` for error inputs)."""
    stored: Dict[str, np.ndarray] = field(default_factory=dict)
    key: str = ""

    def __post_init__(self):
        super().__post_init__()
        self.id = self.key

    def arrays(self) -> Dict[str, np.ndarray]:
        return {k: np.array(v, copy=True) for k, v in self.stored.items()}


def case_from_record(rec: dict, arrays: Dict[str, np.ndarray]) -> OpCase:
    """The :class:`OpCase` of one recorded sample or error input (``rec``: ``id``, ``expr``, ``sig``, ``inputs``
    {name: [shape, dtype, requires grad]}, ``grad``)."""
    from app.tools.conformance.spec import T
    inputs = {name: T(*shape, dtype=dtype, grad=bool(rg)) for name, (shape, dtype, rg) in rec["inputs"].items()}
    stored = {name: arrays[f"{rec['id']}/x.{name}"] for name in rec["inputs"]}
    return OpCase(rec["expr"], inputs, grad=bool(rec.get("grad")), values=rec.get("values", True), sig=rec["sig"],
                  stored=stored, key=rec["id"])


def namespace_of_entry(name: str, form: str) -> str:
    """The report's namespace of an op_db entry ``name`` called as ``form`` (``function`` or ``method``)."""
    if form == "method":
        return "torch.Tensor"
    for prefix, ns in (("nn.functional.", "torch.nn.functional"), ("linalg.", "torch.linalg"), ("fft.", "torch.fft"),
                       ("special.", "torch.special")):
        if name.startswith(prefix):
            return ns
    return "torch"

