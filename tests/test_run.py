"""End-to-end: ``run.py --original`` on unchanged scripts, in a subprocess exactly as a user runs it."""
import json
import os
import sys

import pytest

from support import ROOT, run_py

TINY = os.path.join(ROOT, "tests", "fixtures", "tiny_script", "tiny_train.py")


def test_tiny_script_sees_its_own_argv_file_path_and_trains(tmp_path):
    report = tmp_path / "report.json"
    proc = run_py("--original", TINY, "--steps", "15", "--report", str(report), "--exit-code", "3")
    assert proc.returncode == 3, proc.stderr[-2000:]
    got = json.loads(report.read_text())
    assert got["argv"] == [TINY, "--steps", "15", "--report", str(report), "--exit-code", "3"]
    assert got["file"] == TINY and got["name"] == "__main__"
    assert got["path0"] == os.path.dirname(TINY)
    losses = got["losses"]
    assert len(losses) == 15 and losses[-1] < 0.5 * losses[0]


def test_double_dash_separates_script_args(tmp_path):
    report = tmp_path / "r.json"
    proc = run_py("--device", "CPU", "--original", TINY, "--", "--steps", "2", "--report", str(report))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(report.read_text())["argv"][1:3] == ["--steps", "2"]


def test_failing_script_traceback_points_at_user_line():
    proc = run_py("--original", TINY, "--steps", "1", "--fail")
    assert proc.returncode == 1
    with open(TINY) as f:
        line = next(i for i, text in enumerate(f, 1) if "deliberate failure" in text)
    assert f"tiny_train.py:{line}: ValueError: deliberate failure" in proc.stderr
    assert "runpy" not in proc.stderr and "launcher.py" not in proc.stderr


def test_missing_script(tmp_path):
    proc = run_py("--original", str(tmp_path / "nope.py"))
    assert proc.returncode == 2 and "no such file" in proc.stderr
    proc = run_py()
    assert proc.returncode == 2 and "missing the script" in proc.stderr


def test_unknown_option():
    proc = run_py("--no-such-option", "--original", TINY)
    assert proc.returncode == 2 and "unrecognized arguments: --no-such-option" in proc.stderr


def test_syntax_error_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\nx = (1,\nprint('never')\n")
    proc = run_py("--original", str(bad))
    assert proc.returncode == 1
    assert "bad.py:2: SyntaxError" in proc.stderr or "bad.py:3: SyntaxError" in proc.stderr
    assert proc.stderr.count("\n") < 15  # one clear message, not a dump


def test_list_patches_names_every_registered_patch():
    """One line per patch, then what it replaces (from its declarations: patches/listing.py), indented."""
    import patches
    proc = run_py("--list-patches")
    assert proc.returncode == 0
    names = [p.name for p in patches.registry()]
    patch_part, _, runtime_part = proc.stdout.partition("\nReplaced by the adapter's runtime itself")
    lines = patch_part.strip().splitlines()
    assert [line.split()[0] for line in lines if not line.startswith(" ")] == names
    assert "    replaces: torch.Tensor.backward" in lines
    runtime = [line.split()[0] for line in runtime_part.splitlines()[1:] if line and not line.startswith(" ")]
    from patches import listing
    assert runtime == [d.name for d in listing.declared()]
    assert runtime[:2] == ["compile_cache", "graph_semantics"] and "graph_semantics:locate_host_draws" in runtime


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/task")
@pytest.mark.parametrize("mode", ["pynative", "auto"])
def test_no_thread_spins_while_the_script_sleeps(mode):
    """After eager ``optimizer.step()`` calls (MindTorch's jit-compiled Adam ``implementation`` called from
    PyNative), PyNative's ``frontend_queue`` thread spun for the rest of the run: ~1 CPU s per second of the
    script's sleep on an idle machine (0.28 s under a load of 8 processes on 2 cores), 0 with
    ``bootstrap.quiet_pipeline``. A count of CPU seconds, not a timing."""
    script = os.path.join(ROOT, "tests", "fixtures", "pipeline_spin", "idle_after_step.py")
    proc = run_py("--mode", mode, "--original", script, "1.0")
    assert proc.returncode == 0, proc.stderr[-2000:]
    burned = json.loads(proc.stdout.strip().splitlines()[-1])
    assert burned.get("frontend_queue", 0.0) < 0.05, burned
    assert sum(burned.values()) < 0.1, burned
