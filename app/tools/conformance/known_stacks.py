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
    dict(id="93cf14470d99", api="torch.nn.functional.conv2d", modes=("pynative", "graph"), stacks=(V210,),
         reason="2.10's CPU convolution: 1 of 288 values 1.5e-5 relative off, at float32's tolerance edge",
         rounding=True),
    dict(id="e1e9070f95aa", api="torch.Tensor.__setitem__", modes=("pynative",), stacks=(V210,),
         reason="the PyNative gradient through b[0] = 1.0; b[:, 1] = b[:, 2] * 2 on a clone is wrong on 2.10 in 3 of "
                "12 values (2.5-dev right): 2.10's in-place autograd of setitem, open, found 2026-11-29"),
]

PASSES: Dict[str, Dict[str, Tuple[str, ...]]] = {
    # the 2.5-dev entries whose cases pass on 2.10 (replay of 2026-11-29): torch.max(a) and a.max() compiled,
    # int64 a / 2 and a / b compiled, torch.from_numpy's write-through, int64 div(rounding_mode='trunc'), F.nll_loss
    V210: {
        "5900072f432e": ("graph",),
        "2156b0cc2e7b": ("graph",),
        "5dd40e8e5818": ("graph",),
        "6510e1f80fd2": ("graph",),
        "f8a6a9b2c8e0": ("pynative",),
        "ba6a9cd3ae78": ("pynative",),
        "e3164c4ee8cc": ("pynative",),
    },
}
