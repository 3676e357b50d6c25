"""The performance tables of docs/performance.md are generated from the benchmarks' JSON (bench/perf_table.py): they
must say what bench/results.json and bench/corpus_results.json hold, so a re-run benchmark without a regenerated page
fails."""
import json
import os
import sys

import pytest

from support import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import perf_table  # noqa: E402


def test_performance_page_tables_match_the_benchmark_json():
    assert perf_table.main(["--check"]) == 0, "run: .venv/bin/python bench/perf_table.py --write"


def test_first_training_step_and_ratios_from_a_record():
    data = {"date": "2026-01-01", "machine": {"cpu": "X", "cores": 2},
            "resnet18": {"a_compiled": {"batch": 32, "image_size": 32, "first_step_s": 1.0, "compile_step_s": 3.0,
                                        "median_step_s": 0.3, "peak_rss_mb": 1100.0},
                         "c_native_graph": {"first_step_s": 2.0, "median_step_s": 0.25, "peak_rss_mb": 1000.0}}}
    block = perf_table.resnet_block(data)
    assert "| (a) run.py, compiled (empty compile cache) | 0.300 | 4.00 | 1100 |" in block  # 1.0 + 3.0
    assert "step (a)/(c) 1.20x" in block and "first training step (a)/(c) 2.00x" in block
    assert "peak RSS (a)/(c) 1.10x" in block and "X, 2 cores" in block


def test_a_page_without_the_markers_is_refused():
    with pytest.raises(KeyError, match="perf:corpus"):
        perf_table.render("# no markers\n", {"corpus": "table\n"})
    assert perf_table.render("a\n<!-- perf:corpus -->\nold\n<!-- /perf:corpus -->\nb\n", {"corpus": "new\n"}) == \
        "a\n<!-- perf:corpus -->\nnew\n<!-- /perf:corpus -->\nb\n"


def test_a_stack_record_names_its_load_its_command_and_each_runs_onednn_cap(tmp_path, monkeypatch):
    data = {"date": "2026-01-01", "time_utc": "14:30", "machine": {"cpu": "X", "cores": 2, "mindspore": "2.10.0"},
            "load_average_1min": {"start": 3.14, "end": 2.0},
            "command": "MINDSPORE=2.10.0 .venv/bin/python bench/run_bench.py --arch resnet18",
            "resnet18": {"a_compiled": {"first_step_s": 1.0, "median_step_s": 0.3, "peak_rss_mb": 1100.0,
                                        "onednn_max_cpu_isa": "AVX2"},
                         "c_native_graph": {"first_step_s": 2.0, "median_step_s": 0.25, "peak_rss_mb": 1000.0,
                                            "onednn_max_cpu_isa": "AVX2"},
                         "d_torch_eager": {"first_step_s": 0.1, "median_step_s": 0.1, "peak_rss_mb": 500.0,
                                           "onednn_max_cpu_isa": None}}}
    block = perf_table.resnet_block(data)
    assert block.startswith("Measured 2026-01-01 14:30 UTC on X, 2 cores, mindspore 2.10.0, load average 3.1 at the "
                            "start, 2.0 at the end; one invocation of `MINDSPORE=2.10.0 .venv/bin/python "
                            "bench/run_bench.py --arch resnet18`.")
    assert "ONEDNN_MAX_CPU_ISA: (a) AVX2, (c) AVX2, (d) not set." in block
    # one block per stack file, named by the version in the file name
    (tmp_path / "results_mindspore-2.10.0.json").write_text(json.dumps(data))
    monkeypatch.setattr(perf_table, "RESNET_JSONS", str(tmp_path / "results_mindspore-*.json"))
    for name in ("CORPUS_JSON", "SPAWN_JSON"):
        monkeypatch.setattr(perf_table, name, str(tmp_path / "absent.json"))
    assert list(perf_table.blocks()) == ["resnet-2.10.0"]
