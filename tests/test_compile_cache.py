"""The compile cache is on by default (adapter/compile_cache.py) and never changes results: a cached re-run trains
exactly like the compiling run, and a foreign or tampered cache entry is detected and recompiled. MindSpore alone
loads graph N of the folder for the N-th compile whatever it was compiled from (a Dense(4, 5) graph ran for a
Dense(4, 7) Cell and returned the Dense(4, 5) numbers, measured 2026-11-25)."""
import fcntl
import glob
import json
import os
import re
import shutil
import time

import pytest

from adapter import compile_cache

from support import ROOT, run_json

SCRIPT = os.path.join(ROOT, "tests", "fixtures", "cache_mlp.py")


def run(cache_home, *args, cache=True, env=None):
    """run.py --explain on the fixture with ``$XDG_CACHE_HOME`` = ``cache_home`` (the default location: the
    session's ``ADAPTER_COMPILE_CACHE_DIR`` from tests/conftest.py is taken out); its JSON line and stderr."""
    return run_json("--explain", *([] if cache else ["--no-compile-cache"]), "--original", SCRIPT, *args,
                    env=dict(XDG_CACHE_HOME=str(cache_home), GLOG_v="4", **(env or {})), unset=(compile_cache.DIR_ENV,))


def counts(err):
    """(loaded, compiled and written, compiled outside) from --explain's compile cache line."""
    found = re.search(r"compile cache .*: (\d+) graph\(s\) loaded, (\d+) compiled and written, (\d+) compiled "
                      r"outside it", err)
    assert found, err[-2000:]
    return tuple(int(n) for n in found.groups())


def folders(cache_home):
    return set(glob.glob(os.path.join(str(cache_home), "mindtorch_adapter", "compile", "*")))


def test_cached_rerun_loads_the_step_and_trains_exactly_like_the_compiling_run(tmp_path):
    first, err1 = run(tmp_path)
    second, err2 = run(tmp_path)
    plain, _ = run(tmp_path / "unused", cache=False)
    assert "loaded from the compile cache, and checked against the reference step" in err2, err2[-2000:]
    assert "loaded from the compile cache" not in err1
    assert counts(err1) == (0, 2, 0) and counts(err2) == (2, 0, 0)  # the step and the eval forward
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
    # from now on the step that failed its check is compiled outside the cache (adapter_uncached.json), and the
    # other graph (the eval forward) is written, then loaded
    assert len(json.load(open(os.path.join(relu, compile_cache.UNCACHED)))) == 1
    third, err3 = run(tmp_path)
    fourth, err4 = run(tmp_path)
    assert "compile cache:" not in err3 + err4, (err3 + err4)[-2000:]
    assert counts(err3) == (0, 1, 1) and counts(err4) == (1, 0, 1)
    assert third == fourth == plain


@pytest.mark.parametrize("random", ["dropout", "randn"])
def test_a_step_drawing_random_numbers_is_compiled_not_loaded_and_old_folders_are_evicted(tmp_path, random):
    """A step with nn.Dropout in training mode (MindSpore's Dropout primitive) or torch.randn (numpy in PyNative,
    MindSpore's StandardNormal compiled) draws other numbers compiled than in its eager reference step, so a loaded
    graph can never pass the check: it is compiled outside the cache in every run, and the other graphs (the eval
    forward) still load. Before, the second run loaded the step, failed the check, deleted the folder and compiled;
    and the same at every run. The first run also evicts the least recently used folders beyond
    ADAPTER_COMPILE_CACHE_MAX_FOLDERS (here 2: the run's own and the newest other)."""
    root = os.path.join(str(tmp_path), "mindtorch_adapter", "compile")
    for name in ["old", "older", "newer"]:
        os.makedirs(os.path.join(root, name))
        with open(os.path.join(root, name, ".lock"), "w"):
            pass
        stamp = time.time() - {"old": 200, "older": 300, "newer": 100}[name]
        os.utime(os.path.join(root, name, ".lock"), (stamp, stamp))
    limit = {compile_cache.MAX_FOLDERS_ENV: "2"}
    first, err1 = run(tmp_path, "--random", random, env=limit)
    names = {os.path.basename(f) for f in folders(tmp_path)}
    assert "newer" in names and not names & {"old", "older"} and len(names) == 2, names
    second, err2 = run(tmp_path, "--random", random)
    assert "compile cache:" not in err1 + err2, (err1 + err2)[-2000:]  # nothing dropped, nothing mismatched
    assert counts(err1) == (0, 1, 1) and counts(err2) == (1, 0, 1)
    (folder,) = folders(tmp_path) - {os.path.join(root, "newer")}
    assert len(json.load(open(os.path.join(folder, compile_cache.MANIFEST)))) == 1  # the eval forward only


def test_eviction_drops_least_recently_used_folders_beyond_the_size_and_count_bounds(tmp_path):
    """compile_cache.evict: least recently used first (the .lock's mtime), never the folder kept nor one another
    process holds locked, until the total size and the count are within bounds."""
    root = str(tmp_path)
    for name, size, age in [("a", 300, 50), ("b", 300, 40), ("c", 300, 30), ("d", 300, 20), ("keep", 300, 500)]:
        os.makedirs(os.path.join(root, name, "rank_0"))
        with open(os.path.join(root, name, "rank_0", "g.mindir"), "wb") as f:
            f.write(b"x" * size)
        with open(os.path.join(root, name, ".lock"), "w"):
            pass
        os.utime(os.path.join(root, name, ".lock"), (time.time() - age,) * 2)
    with open(os.path.join(root, "a", ".lock")) as held:  # another run holds "a", the least recently used
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        deleted = compile_cache.evict(root, os.path.join(root, "keep"), max_bytes=1000, max_folders=10)
    assert sorted(os.path.basename(d) for d in deleted) == ["b", "c"]  # 5 x 300 > 1000: a is locked, keep kept
    assert sorted(os.listdir(root)) == ["a", "d", "keep"]
    deleted = compile_cache.evict(root, os.path.join(root, "keep"), max_bytes=10 ** 9, max_folders=2)
    assert [os.path.basename(d) for d in deleted] == ["a"] and sorted(os.listdir(root)) == ["d", "keep"]


def test_the_suite_never_uses_the_users_cache():
    """tests/conftest.py points the cache root at a folder of this test session: the suite neither reads nor fills
    a developer's or CI machine's ~/.cache/mindtorch_adapter (runs within the session still share it)."""
    root = compile_cache.cache_root()
    assert root == os.environ[compile_cache.DIR_ENV]
    assert os.path.basename(os.path.dirname(root)).startswith("adapter_test_session_")
    home = os.path.join(os.path.expanduser("~"), ".cache")
    assert not os.path.abspath(root).startswith(os.path.abspath(home) + os.sep)


def test_a_foreign_folder_changes_no_bit_of_the_training(tmp_path):
    """A folder holding another script's graphs (here tests/fixtures/loss_read_before_step.py's, copied over
    tests/fixtures/module_calls.py's): the step's graph is compiled without being run first for the check (the
    folder's next graph is not this one), so the run trains bit for bit as with --no-compile-cache. Running it first
    on the reference step's batch and putting the state back moved the 6th loss by 1 ulp (1.1264457702636719 vs
    1.1264456510543823)."""
    fixtures = os.path.join(ROOT, "tests", "fixtures")
    other, script = os.path.join(fixtures, "loss_read_before_step.py"), os.path.join(fixtures, "module_calls.py")

    def launch(path, cache=True):
        return run_json("--explain", *([] if cache else ["--no-compile-cache"]), "--original", path,
                        env=dict(XDG_CACHE_HOME=str(tmp_path), GLOG_v="4"), unset=(compile_cache.DIR_ENV,))

    launch(other)
    (foreign,) = folders(tmp_path)
    plain, _ = launch(script, cache=False)
    launch(script)
    (own,) = folders(tmp_path) - {foreign}
    shutil.rmtree(own)
    shutil.copytree(foreign, own)
    got, err = launch(script)
    assert "compile cache: graph 0 of the cache is not this run's" in err, err[-2000:]
    assert got == plain  # bit for bit


def test_spilled_arrays_keep_constant_arrays_as_a_value_bit_for_bit(tmp_path, monkeypatch):
    """compile_cache.SpilledArrays (the cache check's host copies of the state): an array whose elements all have
    the same bits (Adam's moments and BatchNorm's statistics before the first step, -0.0s, NaNs, bools) is kept as
    its value instead of a file and read back with the same shape, dtype and bits; any other array is a file.
    Writing a key again replaces what it held, in either form; pop removes it."""
    import numpy as np
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(compile_cache.DIR_ENV, raising=False)
    spilled = compile_cache.SpilledArrays()
    rng = np.random.default_rng(0)
    arrays = {0: np.zeros((3, 4), np.float32), 1: np.full(5, -0.0, np.float32), 2: np.full(3, np.nan),
              3: np.ones((2, 2), bool), 4: np.full((2,), 7, np.int64), 5: rng.standard_normal(5000).astype(np.float32),
              6: np.zeros(0, np.float32), 7: np.array([0.0, -0.0], np.float32), 8: np.float16([1, 1, 1])}
    for key, array in arrays.items():
        spilled[key] = array
    assert sorted(os.listdir(spilled.folder)) == ["5.npy", "6.npy", "7.npy"]
    for key, array in arrays.items():
        got = spilled[key]
        assert got.dtype == array.dtype and got.shape == array.shape and got.tobytes() == array.tobytes(), key
        got[...] = 0  # a new, writable array each time
    spilled[0], spilled[5] = arrays[5], arrays[0]  # the two forms swap
    assert sorted(os.listdir(spilled.folder)) == ["0.npy", "6.npy", "7.npy"]
    assert spilled[0].tobytes() == arrays[5].tobytes() and spilled[5].tobytes() == arrays[0].tobytes()
    assert spilled.pop(5).tobytes() == arrays[0].tobytes() and spilled.pop(0).tobytes() == arrays[5].tobytes()
    assert 5 not in spilled and 0 not in spilled and sorted(os.listdir(spilled.folder)) == ["6.npy", "7.npy"]
    spilled.close()
    assert not os.path.exists(spilled.folder)


def test_launch_key_depends_on_the_disabled_patches(monkeypatch, tmp_path):
    """A graph traced with a patch is not the graph without it: ADAPTER_DISABLE_PATCHES is part of the folder's key
    (before: a run with a patch disabled loaded the graphs compiled with it, and an A/B of a fix compared one graph)."""
    from adapter import compile_cache
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    monkeypatch.delenv("ADAPTER_DISABLE_PATCHES", raising=False)
    plain = compile_cache.launch_key(str(script), [], {})
    monkeypatch.setenv("ADAPTER_DISABLE_PATCHES", "pow_square")
    one = compile_cache.launch_key(str(script), [], {})
    monkeypatch.setenv("ADAPTER_DISABLE_PATCHES", " pow_square,")
    assert one == compile_cache.launch_key(str(script), [], {}) != plain
