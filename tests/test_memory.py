"""Memory the adapter releases (issue 15): what the eager reference step and the compiler leave behind once the step
runs compiled. The numbers per phase for ResNet18/50: bench/memory_phases.py. RSS of one process does not depend on
the machine's load; each margin is about half the difference measured when the test was written."""
import os
import shutil
import tempfile

import pytest

from support import ROOT, run_script

SCRIPT = os.path.join(ROOT, "tests", "fixtures", "eager_kernels_step.py")


def _run_in_fresh_cache(**env):
    """One run of the fixture, compiling (an empty compile-cache folder of its own: every run takes the same path)."""
    cache = tempfile.mkdtemp(prefix="test_memory_cache_")
    try:
        return run_script(SCRIPT, env=dict(GLOG_v="4", **env), cache_dir=cache).last_object
    finally:
        shutil.rmtree(cache, ignore_errors=True)


@pytest.fixture(scope="module")
def released():
    return _run_in_fresh_cache()


@pytest.fixture(scope="module")
def untrimmed():
    return _run_in_fresh_cache(ADAPTER_NO_MALLOC_TRIM="1")


def test_reference_step_kernels_are_freed_before_compiling(released, untrimmed):
    """compiled_step.release_eager_caches: the PyNative executor's kernels of the reference step's 16 distinct conv
    layers (forward and backward) are freed before the graph compiles: measured 413 MB RssAnon after the compiled
    steps vs 452 MB with them kept (ADAPTER_KEEP_EAGER_CACHES=1: the behaviour before the fix), same losses to the
    bit (the trim of the next test off in both)."""
    freed = untrimmed
    kept = _run_in_fresh_cache(ADAPTER_NO_MALLOC_TRIM="1", ADAPTER_KEEP_EAGER_CACHES="1")
    assert freed["losses"] == kept["losses"] == released["losses"]
    assert freed["after_compiled_mb"] < kept["after_compiled_mb"] - 18, (freed, kept)


def test_compiler_garbage_is_returned_before_the_first_run(released, untrimmed):
    """compiled_step.compile_and_trim: the graph is compiled, the heap's free pages handed back (glibc's malloc_trim,
    or jemalloc's arena purge under run.py's default allocator: adapter/allocator.py; with only malloc_trim this
    failed under jemalloc, 823.5 vs 823.2 MB), then run: peak RSS 803 MB vs 825 MB without the trim
    (ADAPTER_NO_MALLOC_TRIM=1, glibc), same losses to the bit."""
    assert released["losses"] == untrimmed["losses"]
    assert released["peak_mb"] < untrimmed["peak_mb"] - 10, (released, untrimmed)


def test_a_cached_rerun_peaks_no_higher_than_the_compiling_run():
    """The compile cache's warm path (adapter/step_cache_check.py, ReferenceRecord and verify_loaded):
    a re-run loads the step's graph and checks it against the eager reference step. The check keeps the reference
    gradients in files (with the state), reads them back one at a time, drops each graph output once compared and
    trims the heap as it goes: on this 64 MB MLP with Adam and BatchNorm the re-run peaked at 1123 MB vs 950 for the
    compiling run before (the reference gradients held in memory, host copies of the graph outputs, free heap left by
    each pass), and 991 vs 950 after. Losses identical to the bit. (ResNet50 + Adam, batch 32,
    bench/memory_phases.py --warm: 1718 -> 1474 MB, compiling run 1633.)"""
    cache = tempfile.mkdtemp(prefix="test_memory_cache_")
    script = os.path.join(ROOT, "tests", "fixtures", "cache_memory_step.py")
    try:
        runs = []
        for _ in range(2):
            ran = run_script(script, env=dict(GLOG_v="4"), cache_dir=cache)
            runs.append((ran.last_object, ran.stderr))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    (cold, err_cold), (warm, err_warm) = runs
    assert "loaded from the compile cache, and checked against the reference step" in err_warm, err_warm[-2000:]
    assert "loaded from the compile cache" not in err_cold
    assert warm["losses"] == cold["losses"]
    assert warm["peak_mb"] < cold["peak_mb"] + 100, (cold, warm)


def test_compile_runs_without_python_garbage_collections_and_frees_its_cycles_after(monkeypatch):
    """compiled_step.compile_and_trim pauses Python's cyclic collector while MindSpore compiles (its parser makes
    tens of thousands of short-lived objects: a ResNet18 step's compile set off ~90 collections, one of them
    full, 0.18-0.41 s; bench/first_step_phases.py): no collection starts inside the compile even with thresholds
    that start one
    every 10 allocations, the collector is on again afterwards, and a reference cycle made during the compile is
    freed by the time compile_and_trim returns (before the heap trim)."""
    import gc
    import weakref

    import mindspore as ms
    import numpy as np

    from adapter import graph_compile, graph_semantics

    class Net(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = ms.nn.Dense(4, 3)

        def construct(self, x):
            return self.dense(x) * 2

    inside, started, cycle, explicit = [False], [], [], [False]
    original_mode = graph_semantics.graph_mode

    class Cycle:
        pass

    class Watched:
        def __init__(self):
            self.inner = original_mode()

        def __enter__(self):
            inside[0] = True
            node = Cycle()
            node.self = node  # freed only by a collection
            cycle.append(weakref.ref(node))
            return self.inner.__enter__()

        def __exit__(self, *exc):
            inside[0] = False
            return self.inner.__exit__(*exc)

    def on_gc(phase, info):
        # an explicit gc.collect() is not the collector's own: MindSpore >= 2.10 calls one before every compile
        # (mindspore/graph/api.py, _CellGraphExecutor.compile)
        if phase == "start" and inside[0] and not explicit[0]:
            started.append(info["generation"])

    monkeypatch.setattr(graph_semantics, "graph_mode", Watched)
    collect = gc.collect

    def explicit_collect(*args, **kwargs):
        explicit[0] = True
        try:
            return collect(*args, **kwargs)
        finally:
            explicit[0] = False

    monkeypatch.setattr(gc, "collect", explicit_collect)
    thresholds = gc.get_threshold()
    gc.callbacks.append(on_gc)
    gc.set_threshold(10, 2, 2)
    try:
        graph_compile.compile_and_trim(Net(), [ms.Tensor(np.ones((2, 4), np.float32))])
        assert gc.isenabled()
        assert started == [], f"{len(started)} collections ran during the compile"
        assert cycle and cycle[0]() is None, "the cycle made during the compile is still alive"
    finally:
        gc.callbacks.remove(on_gc)
        gc.set_threshold(*thresholds)
