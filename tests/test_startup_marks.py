"""adapter/startup_marks.py: run.py's start-up phases for bench/bench_spawn_ready.py, only when asked for."""
import json
import time

from adapter import startup_marks

from support import run_py


def test_nothing_written_without_the_variable(monkeypatch, tmp_path):
    monkeypatch.delenv(startup_marks.ENV, raising=False)
    startup_marks.mark("x")
    assert list(tmp_path.iterdir()) == []


def test_process_start_is_before_now():
    start = startup_marks.process_start()
    assert start is not None and time.time() - 3600 * 24 * 365 < start <= time.time()


def test_run_py_marks_its_phases_in_order(tmp_path):
    """A run.py process writes launcher -> ... -> post_import, its first line with the process's start time."""
    marks = tmp_path / "marks.jsonl"
    script = tmp_path / "s.py"
    script.write_text("print('ok')\n")
    proc = run_py("--original", script, env={startup_marks.ENV: str(marks)}, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = [json.loads(line) for line in marks.read_text().splitlines()]
    assert [r["phase"] for r in records] == ["launcher", "mindspore", "context", "pre_import", "torch",
                                             "post_import"]
    assert {r["pid"] for r in records} == {records[0]["pid"]}
    assert records[0]["process_start"] <= records[0]["t"] <= records[-1]["t"]
