"""The compile cache is on by default (adapter/compile_cache.py) and never changes results: a cached re-run trains
exactly like the compiling run, and a foreign or tampered cache entry is detected and recompiled. MindSpore alone
loads graph N of the folder for the N-th compile whatever it was compiled from (a Dense(4, 5) graph ran for a
Dense(4, 7) Cell and returned the Dense(4, 5) numbers, measured 2026-11-25)."""
import glob
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tests", "fixtures", "cache_mlp.py")


def run(cache_home, *args, cache=True):
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home), GLOG_v="4")
    cmd = [sys.executable, os.path.join(ROOT, "run.py"), *([] if cache else ["--no-compile-cache"]),
           "--original", SCRIPT, *args]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def folders(cache_home):
    return set(glob.glob(os.path.join(str(cache_home), "mindtorch_adapter", "compile", "*")))


def test_cached_rerun_loads_the_step_and_trains_exactly_like_the_compiling_run(tmp_path):
    first, err1 = run(tmp_path)
    second, err2 = run(tmp_path)
    plain, _ = run(tmp_path / "unused", cache=False)
    assert "loaded from the compile cache, and checked against the reference step" in err2, err2[-2000:]
    assert "loaded from the compile cache" not in err1
    assert first == second == plain  # bit for bit
    assert not os.path.exists(tmp_path / "unused" / "mindtorch_adapter")  # --no-compile-cache writes nothing


def test_a_foreign_cache_folder_is_detected_dropped_and_recompiled(tmp_path):
    """Another model size's folder copied over this run's: the manifest's digest of graph 0 (parameter shapes) is
    not this run's graph's, so nothing is loaded; the folder is rewritten, and the run after that loads it."""
    run(tmp_path, "--hidden", "8")
    small = folders(tmp_path)
    plain, _ = run(tmp_path, "--hidden", "16", cache=False)
    run(tmp_path, "--hidden", "16")
    (big,) = folders(tmp_path) - small
    (small,) = small
    shutil.rmtree(big)
    shutil.copytree(small, big)
    got, err = run(tmp_path, "--hidden", "16")
    assert "compile cache: graph 0 of the cache is not this run's" in err, err[-2000:]
    assert "loaded from the compile cache" not in err
    assert got == plain
    assert not glob.glob(os.path.join(big, "rank_0", "graph_cache", "*.mindir"))  # the stale files are gone
    again, err = run(tmp_path, "--hidden", "16")  # compiles and writes a fresh folder
    assert "compile cache:" not in err and again == plain
    assert glob.glob(os.path.join(big, "rank_0", "graph_cache", "*.mindir"))


def test_a_tampered_entry_is_caught_by_the_reference_step_check_and_recompiled(tmp_path):
    """The tanh model's graph file put in place of the relu model's, the relu manifest kept (as a stale entry that
    the manifest cannot see would be, e.g. a MindSpore
    build that numbers graphs otherwise): same parameter shapes, so MindSpore loads it and it runs; the first call's
    check against the eager reference step finds another loss, drops the folder and compiles."""
    run(tmp_path, "--act", "tanh")
    tanh = folders(tmp_path)
    plain, _ = run(tmp_path, cache=False)
    run(tmp_path)
    (relu,) = folders(tmp_path) - tanh
    (tanh,) = tanh
    for path in glob.glob(os.path.join(tanh, "rank_0", "graph_cache", "compile_cache_*.mindir")):
        target = os.path.join(relu, "rank_0", "graph_cache", os.path.basename(path))
        if os.path.exists(target):
            os.chmod(target, 0o600)
            os.remove(target)
        shutil.copy(path, target)
    got, err = run(tmp_path)
    assert "does not match its eager reference step" in err, err[-2000:]
    assert got == plain
    assert "loaded from the compile cache" not in err
    assert not glob.glob(os.path.join(relu, "rank_0", "graph_cache", "*.mindir"))  # dropped
