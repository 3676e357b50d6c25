"""Set up this process for an unchanged PyTorch script: MindSpore's device and mode, then ``import torch`` resolving
to MindTorch with the patch layer installed, in that order (:func:`setup_mindspore`).

What every process that runs the user's code does first: ``run.py`` (``app/launcher.py``), its workers and
``mp.spawn`` children (they are run.py processes too), Python ``multiprocessing`` spawn children
(``app/mp_main.py``), ``run.py conformance``'s replay workers, ``run.py export`` and the test suite
(``tests/conftest.py``). Moved here from ``app/launcher.py`` (issue 16: the launcher is the command line only).

MindSpore and MindTorch are imported inside :func:`setup_mindspore`, never at this module's import: the
``pre-mindspore`` patches must come before ``import mindspore``.
"""
from __future__ import annotations

import os
import sys

import patches  # the registry: install(); a patch module imports MindSpore/MindTorch only when applied
from adapter import hooks
from adapter.hooks import VERBOSE_ENV  # "1": MindSpore's and MindTorch's own log lines are shown (patches/log_noise.py)
from adapter.startup_marks import mark as _mark

MP_MAIN = "app.mp_main"  # a multiprocessing spawn child's main module (patches/mp_start.py reads it, handed down)


def setup_mindspore(device: str, verbose: bool = False) -> None:
    """Select the device and PyNative mode, then make ``import torch`` resolve to patched MindTorch.

    ``verbose`` (``--verbose``, or ``ADAPTER_VERBOSE=1`` inherited from a parent run.py): MindSpore logs warnings
    (``GLOG_v=2``, its default) and patches/log_noise.py hides nothing."""
    hooks.provide("spawn_child_main", MP_MAIN)  # before the patches: patches/mp_start.py may not import app/
    if verbose:
        os.environ[VERBOSE_ENV] = "1"  # children (workers, mp.spawn, DataLoader workers) inherit it
    verbose = os.environ.get(VERBOSE_ENV) == "1"
    # MindSpore C++ logs: critical only. Errors reach the user as Python exceptions (or, for a step that falls back
    # to PyNative, as our one-line reason), not as multi-page analyzer dumps.
    os.environ.setdefault("GLOG_v", "2" if verbose else "4")
    # MindSpore writes rank_0/om/analyze_fail.ir for every graph that fails to compile, by default into the working
    # directory: a step that falls back to PyNative left that folder in the user's project. Here: the temp folder.
    import tempfile
    os.environ.setdefault("MS_OM_PATH", os.path.join(tempfile.gettempdir(), "mindtorch_adapter_om"))
    from adapter import backend_compat
    backend_compat.set_environment()  # what a MindSpore needs set before its import (none on 2.5-dev)
    patches.install("pre-mindspore")  # before MindSpore's extension modules look numpy's helpers up
    try:
        import mindspore as ms
    except ImportError as exc:
        raise SystemExit(f"run.py: MindSpore is not importable from {sys.executable} ({exc}).\n"
                         "Set up the environment with 'make setup' and run '.venv/bin/python run.py ...'.")
    _mark("mindspore")
    from adapter import backend  # noqa: F401  (checks the MindSpore/MindTorch versions: one line if untested)
    backend_compat.install()  # what later MindSpore releases removed from under MindTorch 0.4.0 (none on 2.5-dev)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_device(device)
    if device == "CPU":
        # PyNative's asynchronous pipeline keeps two queue threads spinning; on a 2-core CPU they take most of the
        # cores from the kernels (measured: ResNet18 compiled step 1.2-2.5 s/step async vs 0.26 s synchronous,
        # equal to native MindSpore's 0.25 s). Synchronous launch costs nothing on CPU, where kernels run on the host.
        ms.set_context(pynative_synchronize=True)
        quiet_pipeline()
        os.register_at_fork(after_in_parent=quiet_pipeline)  # a fork may rebuild the queues (spinning again)
    _mark("context")
    patches.install("pre-import")
    _mark("pre_import")
    from mindtorch.tools import mstorch_enable  # noqa: F401  (import hook: torch -> mindtorch.torch)
    import torch  # noqa: F401  (imports MindTorch now, under the pre-import patches)
    backend_compat.install_after_mindtorch()  # shims inside MindTorch's modules (none on 2.5-dev)
    _mark("torch")
    patches.install("post-import")
    _mark("post_import")


def quiet_pipeline() -> None:
    """Make PyNative's ``frontend_queue`` thread wait for work instead of spinning (CPU).

    ``pynative_synchronize`` does not cover it: the first call of a ``mindspore.jit`` function from PyNative (MindTorch
    optimizers' ``implementation``, run by every ``optimizer.step()`` that is not fused into a compiled step, e.g.
    dcgan's) starts that thread, and its queue (``runtime/pipeline/ring_queue.h``) busy-waits for tasks for the rest
    of the run: a core taken from the kernels. Measured with ``bench/kernel_gap.py`` (thread CPU seconds, which the
    machine's load does not change): pytorch/examples dcgan burned 0.95-1.03 CPU s per iteration in
    ``frontend_queue`` against 0.4 s in the graphs' kernel threads; mnist (update fused, no such call) none.
    ``PyNativeExecutor::SetAsyncForGraph(false)`` (``backend.set_async_for_graph``, effective only in
    GRAPH_MODE) turns the queue's spin off: it waits for tasks (this build; ``tests/test_run.py``). Runs the queued
    work first; the mode is restored."""
    import mindspore as ms
    from adapter import backend
    mode = ms.get_context("mode")
    if mode != ms.GRAPH_MODE:
        ms.set_context(mode=ms.GRAPH_MODE)
    try:
        backend.set_async_for_graph(False)
    finally:
        if mode != ms.GRAPH_MODE:
            ms.set_context(mode=mode)
