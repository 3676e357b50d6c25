"""``torch.utils.tensorboard`` (issue 31 §5; patches/tensorboard.py, adapter/summary_writer.py). MindTorch 0.4.0 has
none: ``from torch.utils.tensorboard import SummaryWriter`` stopped a CIFAR-100 trainer at its import.

The event files our writer makes, read back with TensorBoard's own readers (``EventAccumulator``, the raw event
loader), equal those of real PyTorch 2.13's writer for the same calls (tests/fixtures/tensorboard_calls.py; reference
tests/fixtures/tensorboard_reference.json, recorded with .venv-ref): run folders, file names, tags, steps, scalar
values, histogram statistics, bucket limits and counts, image sizes, colour spaces and decoded pixels, text,
hparams plugin records, purge_step's records, and the default ``runs/<Mon><DD>_<HH>-<MM>-<SS>_<host><comment>``.
"""
import json
import os
import sys

import numpy as np
import pytest

from support import FIXTURES, ROOT, run_py

SCRIPT = os.path.join(FIXTURES, "tensorboard_calls.py")
REFERENCE = os.path.join(FIXTURES, "tensorboard_reference.json")


def _line(marker):
    return next(i for i, text in enumerate(open(SCRIPT), 1) if f"# line: {marker}" in text)


def _rounded(tree):
    """``tree`` (JSON: dicts, lists, numbers, strings) with every float rounded to 12 significant digits."""
    if isinstance(tree, dict):
        return {k: _rounded(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_rounded(v) for v in tree]
    return float(f"{tree:.12g}") if isinstance(tree, float) else tree


def test_event_files_read_back_equal_pytorchs(tmp_path):
    proc = run_py("--original", SCRIPT, tmp_path / "out", "--extras", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    want = json.load(open(REFERENCE))
    extras = got.pop("extras")
    assert sorted(got["runs"]) == sorted(want["runs"])
    # floats to 12 significant digits: a histogram's sum_squares is numpy's dot (PyTorch's writer's too), whose last
    # bit follows the machine's BLAS kernel (CI's and this machine's differed in the 16th digit)
    got, want = _rounded(got), _rounded(want)
    for run, expected in want["runs"].items():
        for key, value in expected.items():
            assert got["runs"][run][key] == value, f"run {run!r}: {key} differs from PyTorch's"
    assert got == want

    # What PyTorch has and this writer does not: named at the script's line, nothing silently dropped.
    name = os.path.basename(SCRIPT)
    assert extras["add_graph_warning"] and extras["add_graph_warning"][0].startswith(f"{name}:{_line('add_graph')}:")
    assert f"{name}:{_line('add_embedding')}: SummaryWriter.add_embedding is not available" \
        in extras["add_embedding_error"]
    assert f"{name}:{_line('add_scalar two')}: a scalar summary needs one element" \
        in extras["two_element_scalar_error"]
    assert "no values" in extras["empty_histogram_error"]
    assert extras["bf16"] == [1.5]  # a bfloat16 tensor, widened exactly
    assert extras["zero_d_hparam_tags"] == ["m"]  # a 0-d tensor hparam is taken (PyTorch 2.13: IndexError)


def test_histogram_edges_and_trimming():
    """The default edges are TensorBoard's (0, +-1e-12*1.1**k below 1e20: 774 each side); trimming keeps one empty
    bucket left of the data (closed form on a small case)."""
    from adapter.summary_writer import histogram_proto, tensorflow_bins
    edges = tensorflow_bins()
    assert len(edges) == 2 * 774 + 1 and edges[774] == 0.0 and edges[775] == 1e-12
    assert edges[-1] < 1e20 <= edges[-1] * 1.1 and np.all(np.diff(edges) > 0)
    hist = histogram_proto(np.array([1.5, 2.5, 2.6]), [0.0, 1.0, 2.0, 3.0, 4.0])
    assert list(hist.bucket_limit) == [1.0, 2.0, 3.0] and list(hist.bucket) == [0.0, 1.0, 2.0]
    assert (hist.min, hist.max, hist.num, hist.sum) == (1.5, 2.6, 3, pytest.approx(6.6))
    first = histogram_proto(np.array([0.5, 3.5]), [0.0, 1.0, 2.0, 3.0, 4.0])
    assert list(first.bucket_limit) == [0.0, 1.0, 2.0, 3.0, 4.0] and list(first.bucket) == [0, 1, 0, 0, 1]
    with pytest.raises(ValueError, match="no value lies within"):
        histogram_proto(np.array([np.nan]), [0.0, 1.0])


def test_missing_tensorboard_names_the_install(monkeypatch):
    """Without the tensorboard package, importing SummaryWriter raises ImportError saying what to install."""
    import importlib.util
    import patches.tensorboard as patch
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "tensorboard" else real(name, *a))
    before = {k: v for k, v in sys.modules.items() if k.startswith("mindtorch.torch.utils.tensorboard")}
    try:
        mod = patch.module()
        with pytest.raises(ImportError, match="pip install tensorboard==2.21.0"):
            mod.SummaryWriter
    finally:
        for key in [k for k in sys.modules if k.startswith("mindtorch.torch.utils.tensorboard")]:
            del sys.modules[key]
        sys.modules.update(before)


def test_unclosed_writer_is_flushed_at_exit(tmp_path):
    """A writer the script never closes, in a process that exits right after: its queued events are written by the
    exit-time flush (PyTorch 2.13's writer drops them: 5 add_scalar calls without close() read back as 0 events)."""
    import subprocess
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    code = ("import sys; from adapter.summary_writer import SummaryWriter; w = SummaryWriter(sys.argv[1]); "
            "[w.add_scalar('x', float(i), i) for i in range(5)]")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, check=True, timeout=120)
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    assert [(s.step, s.value) for s in acc.Scalars("x")] == [(i, float(i)) for i in range(5)]
