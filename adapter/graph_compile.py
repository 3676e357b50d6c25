"""Compiling a step's Cell, for every phase of the compiled step (``adapter/compiled_step.py``): the memory and
parser care around MindSpore's compile.

* :func:`release_eager_caches`: before a step's first graph is built, the PyNative kernels of its reference step go;
* :func:`compile_and_trim`: the compile itself, with Python's cyclic collector paused (:func:`_collector_paused`),
  MindSpore's parser reset to ``construct`` (:func:`parse_as_construct`), and the C heap trimmed after it;
* :func:`_trim_heap` / :class:`_HeapTrimmer`: the heap's free pages handed back, also during the compile cache's
  check (``adapter/step_cache_check.py``).
"""
from __future__ import annotations

import contextlib
import gc
import os
from typing import List

from adapter import allocator, amp_state, backend, hooks, tape

_eager_caches_released = 0  # calls of release_eager_caches that cleared (read by tests)


def release_eager_caches() -> bool:
    """Free what MindSpore's PyNative executor keeps from the eager ops run so far, before a graph is compiled.

    Every eager op signature (primitive, shapes, dtypes) the process ran keeps a compiled single-op kernel graph in
    the PyNative executor's caches (``OpCompiler``, kernel mods, the grad executor's top cells and AD caches), for
    good. The reference step of a site (module docstring, step 1) runs the whole forward and backward eagerly: for a
    ResNet50 (batch 32, 32 px, CPU) that is ~70 MB of kernels, and ~125 MB less at the compiled steady state with
    them gone (``bench/memory_phases.py``; peak RSS 1742 -> ~1610 MB). Once the step runs as one graph, those
    kernels are not used again. The PyNative executor's ``clear_res()`` (``backend.clear_pynative_resources``)
    frees them: MindSpore itself calls it, and goes on running, after a failed ``jit`` compile
    (``mindspore/common/api.py``) or recomputation (``mindspore/common/recompute.py``). The caches are only
    caches: eager ops run later compile their kernel again (once each), with the same results.

    Skipped (returns False) while a recording is open (``adapter/tape.py``: its top cell is in those caches) or an
    autocast region is active (``patches/amp.py``: the executor's mixed-precision state), and with
    ``ADAPTER_KEEP_EAGER_CACHES=1``.
    """
    global _eager_caches_released
    if os.environ.get("ADAPTER_KEEP_EAGER_CACHES") == "1" or tape.is_recording():
        return False
    if amp_state.active() or amp_state.is_autocast_enabled():
        return False
    backend.clear_pynative_resources()  # grad mode is the user's (torch.no_grad()): kept as it was
    _eager_caches_released += 1
    return True


_heap_trims = 0  # calls of _trim_heap that returned the heap's free memory (read by tests)


def compile_and_trim(cell, args) -> None:
    """Compile ``cell`` for ``args`` (graph mode), then return the C heap's free pages to the system, before the
    graph first runs; ``cell(*args)`` afterwards finds the graph in the Cell's cache and does not compile again.

    Compiling a step leaves tens of MB of freed compiler data (IR, analysis results) in glibc's heap; the graph's
    first run then allocates its memory pool and outputs beside it instead of in it, and the process's peak RSS is
    that sum for good. ``malloc_trim(0)`` (glibc) hands the free pages back first: ResNet50 (batch 32, 32 px, Adam,
    CPU) peaks at 1557 instead of 1611 MB (``bench/memory_phases.py``; native MindSpore graph 1422 MB), same losses
    to the bit; trimming before the compile instead saved nothing (1611 MB). Without glibc (another libc, another
    OS) the trim is skipped, and with ``ADAPTER_NO_MALLOC_TRIM=1`` (the behaviour before).

    Python's cyclic garbage collector is paused while MindSpore compiles (:func:`_collector_paused`).
    """
    from adapter.graph_semantics import graph_mode
    parse_as_construct(cell)
    with _collector_paused(), graph_mode():
        cell.compile(*args)
    setattr(cell, hooks.attr("compiled"), True)
    _trim_heap()


@contextlib.contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off inside the block, then one collection of the youngest generation (what
    the block made and left alive: its reference cycles are freed here, before :func:`compile_and_trim`'s trim).

    MindSpore's graph compiler runs its parser in Python (``inspect.getsource``, ``tokenize``, ``ast``, asttokens,
    the resolver): tens of thousands of short-lived objects per compile, which set off the collector's automatic
    collections over and over, each walking the young objects still alive, and now and then a full one, which walks
    every object of MindSpore, MindTorch and the model. Measured with ``bench/first_step_phases.py`` (2026-11-26,
    this 2-core machine, loaded, 3 runs each): a ResNet18 step's compile ran 79 young, 7 middle and 1 full
    collection, 0.18-0.41 s wall, where paused the one collection after it took 0.019-0.028 s; ResNet50's ran 81
    young and 8 middle ones (its full collection fell in the reference step), 0.024-0.033 s, and paused 0.032 s.
    So what the first step saves is a full collection when one falls in the compile: deferred, it runs once later,
    when the collector's own thresholds call for it. Same losses to the bit, same peak RSS (ResNet18 1073 MB,
    ResNet50 1560 MB). Leaves the collector off when the script turned it off (``gc.disable()``)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(0)


def parse_as_construct(cell) -> List[str]:
    """Make MindSpore's parser read ``construct`` again for ``cell`` and every Cell under it (the fused optimizer);
    returns the names of the Cells it reset (their types' names, for tests).

    Calling a Cell's ``@jit`` method from PyNative (``mindspore/common/api.py``, ``_MindsporeFunctionExecutor.compile``:
    ``self.obj.__parse_method__ = method_name``) leaves that method's name on the Cell, and the graph parser
    parses the method named there when a graph calls the Cell. MindTorch's optimizers are Cells whose update is
    ``@jit implementation``: one eager ``optimizer.step()`` (a step compiled without the optimizer because a
    parameter had no gradient, b frozen in the optimizer and unfrozen later; the update that the eager bridge runs)
    and every later graph fusing ``optimizer(grads)`` parsed ``implementation(momentum, lr, group_id, ...)`` for it:
    "The parameters number of the function is 8, but the number of provided arguments is 1", and the step fell
    back to PyNative for the rest of the run. MindSpore resets it only for the top Cell it compiles
    (``_CellGraphExecutor.compile``: ``obj.__parse_method__ = 'construct'``)."""
    reset = []
    for _, sub in cell.cells_and_names():
        method = sub.__dict__.get("__parse_method__")
        if method is not None and method != "construct":
            sub.__parse_method__ = "construct"
            reset.append(type(sub).__name__)
    return reset


def _trim_heap() -> bool:
    """Hand the C heap's free pages back to the system (``adapter/allocator.py`` ``release_free_memory``: glibc's
    ``malloc_trim(0)``, or jemalloc's arena purge where run.py preloaded it; a glibc trim does nothing for a heap
    jemalloc serves). Returns whether it ran: not with ``ADAPTER_NO_MALLOC_TRIM=1``, nor where neither allocator
    is found."""
    global _heap_trims
    if os.environ.get("ADAPTER_NO_MALLOC_TRIM") == "1":
        return False
    if allocator.release_free_memory() is None:
        return False
    _heap_trims += 1
    return True


class _HeapTrimmer:
    """Calls :func:`_trim_heap` each time ``every`` bytes of host arrays have been made and dropped (:meth:`add`).

    The compile cache's check (``adapter/step_cache_check.py``: ``ReferenceRecord``, ``verify_loaded``) goes over
    the model's state one tensor at a time, making and dropping host arrays of each tensor's size. glibc serves them from its heap once a
    freed one has raised its mmap threshold (dynamic, up to 32 MB), and a heap only shrinks from its top: measured
    on ResNet50 + Adam (batch 32), each pass over the state left ~100 MB of free heap resident, and the pass over
    the gradients does so while the loaded graph's memory is held (peak RSS 1695 vs 1565 MB after it)."""

    def __init__(self, every: int = 32 * 2 ** 20):
        self.every = every
        self.made = 0

    def add(self, nbytes: int) -> None:
        self.made += int(nbytes)
        if self.made >= self.every:
            self.made = 0
            _trim_heap()
