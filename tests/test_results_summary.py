"""Generated results out of git (issue 32 section 7): each raw result file ``bench/results.py`` summarizes is ignored
by git and has its ``<name>.summary.json`` beside it; the summary keeps every scalar and turns each long list of
numbers into its statistics; no JSON file git tracks under ``bench/`` or ``docs/`` is longer than 1000 lines."""
import json
import os
import subprocess
import sys

import pytest

from support import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import results  # noqa: E402


def test_each_summarized_raw_file_is_ignored_and_has_its_summary():
    for raw in results.SUMMARIZED:
        assert os.path.exists(os.path.join(ROOT, results.summary_path(raw))), raw
    ignored = subprocess.run(["git", "check-ignore", *results.SUMMARIZED], cwd=ROOT, capture_output=True, text=True)
    if ignored.returncode == 128:
        pytest.skip("not a git checkout")
    assert sorted(ignored.stdout.split()) == sorted(results.SUMMARIZED)


def test_compact_keeps_scalars_and_summarizes_long_number_lists():
    data = {"steps": 30, "losses": [float(i) for i in range(30)], "short": [1, 2], "runs": [{"t": 1.5}],
            "nested": {"flags": [True] * 30}}
    out = results.compact(data, drop=("runs",))
    assert out["steps"] == 30 and out["short"] == [1, 2] and "runs" not in out and out["nested"] == data["nested"]
    assert out["losses"] == {"n": 30, "first": 0.0, "last": 29.0, "min": 0.0, "median": 14.5, "max": 29.0,
                             "mean": 14.5}
    assert json.loads(results.dumps(data)) == data


def test_no_long_json_in_git_under_bench_or_docs():
    listed = subprocess.run(["git", "ls-files", "bench", "docs"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    long = []
    for path in listed.stdout.split():
        if path.endswith(".json") and os.path.exists(os.path.join(ROOT, path)):
            with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                n = sum(1 for _ in f)
            if n > 1000:
                long.append(f"{path}: {n} lines")
    assert long == [], "summarize it with bench/results.py (SUMMARIZED) and ignore the raw file"
