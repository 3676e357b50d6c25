"""A compiled ``no_grad`` forward returns ``None`` where the module's forward put it (``adapter/graph_none.py``).

``tests/fixtures/graph_none_outputs.py`` calls, twice each (the second call reruns the compiled graph), a forward
returning ``(logits, None)`` (a language model sampling without targets), the same with targets, and one returning
``(None, y, (None, x), [x.sum(), None])``. Expected values are closed forms (weights 1, bias 0.5, inputs 1: each
Linear(3, 2) output is 3.5) and equal what real PyTorch 2.13 prints for the fixture. Without the fix (``construct``
returning ``self.module(*args)`` as it did): ``logits, loss = model(x)`` raised "not enough values to unpack"
(2.10: the tuple came back as ``(logits,)``; nested: ``(tensor(dtype=none), (y,))``), on both stacks.
"""
import re

from support import last_json, run_py

LOGITS = {"shape": [2, 2], "sum": 14.0}
X = {"shape": [2, 3], "sum": 6.0}
EXPECTED = {
    "loss_or_none": {"type": "tuple", "items": [LOGITS, None]},
    # loss = mean((3.5 - 0)^2) = 12.25
    "with_targets": {"type": "tuple", "items": [LOGITS, {"shape": [], "sum": 12.25}]},
    "nested": {"type": "tuple", "items": [None, LOGITS, {"type": "tuple", "items": [None, X]},
                                          {"type": "list", "items": [{"shape": [], "sum": 6.0}, None]}]},
}


def test_none_in_compiled_forward_outputs(tmp_path):
    proc = run_py("--explain", "--original", "tests/fixtures/graph_none_outputs.py", cache_dir=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = last_json(proc.stdout)
    for i in (0, 1):
        for name, want in EXPECTED.items():
            assert got[f"{name}_{i}"] == want, (name, i, got[f"{name}_{i}"])
    assert re.search(r"no_grad forward of LossOrNone: compiled \(graph mode\) for 2 input shape", proc.stderr), \
        proc.stderr[-3000:]
    assert "no_grad forward of Nested: compiled (graph mode)" in proc.stderr, proc.stderr[-3000:]
    # a second run loads the graphs from the compile cache and still gets the Nones
    again = run_py("--explain", "--original", "tests/fixtures/graph_none_outputs.py", cache_dir=tmp_path)
    assert again.returncode == 0 and last_json(again.stdout) == got, again.stderr[-3000:]
    assert "3 graph(s) loaded" in again.stderr, again.stderr[-3000:]
