"""``torch.utils.data.DataLoader``: PyTorch's defaults, and worker processes that work (fork and spawn).

MindTorch 0.4's DataLoader (``mindtorch/torch/utils/data/dataloader.py``) differs from PyTorch's:

* An omitted ``num_workers`` becomes 1 on Linux, so every loader forks a worker; PyTorch loads in the main process
  by default. Here it defaults to 0; an explicit value is passed through.
* **Forked workers cannot read some tensors the parent made.** The workers are ``mindspore.multiprocessing.Process``
  objects; in a forked child MindSpore runs ``fork_utils.child_at_fork()``, which resets its device runtime. A
  tensor made in the parent that is a *view* (``frombuffer(...).view(...)``: MindTorch's MNIST ``data``;
  ``x.view``/``x.t()``) then fails on ``.numpy()``/``.asnumpy()`` with "RuntimeError: The pointer[mem_manager_] is
  null" (its contiguous copy asks the parent's reset allocator). Indexing it, ops on it, and contiguous parent
  tensors work (measured, this MindSpore build). Here, in every forked MindSpore child
  (``Process._child_at_fork_func``; an explicit ``multiprocessing_context="fork"`` gets a fork context whose
  processes run MindSpore's fork callbacks too: :class:`MindSporeForkProcess`), ``asnumpy`` retries such a failure
  on a copy made by an op in the child (``mindspore.ops.deepcopy``): same values. (``patches/vision_data.py`` also
  keeps MNIST's arrays as numpy, made in the parent.) The worker sends numpy batches (MindTorch's
  ``default_collate`` stacks in numpy) and the main process makes the tensors, so the batches equal ``num_workers=0``'s.
* ``DataLoader(..., num_workers=N)`` itself started a one-worker iterator and fetched a first batch, to size a
  shared-memory result queue (``_SharedQueue``: segments of that size, zero-filled, per prefetched batch). That
  forked a process at construction, ran the dataset there, and drew the sampler's and the base seed's numbers
  from numpy's global RNG, so ``shuffle=True`` gave another order than ``num_workers=0`` under the same seed (and
  than PyTorch). Here no iterator starts at construction and the results travel through a plain queue of the
  loader's multiprocessing context (numpy batches, pickled), as PyTorch's ``multiprocessing_context.Queue()``.
* ``multiprocessing_context="spawn"`` (or a spawn context) raised AttributeError
  (``mindtorch.torch.multiprocessing`` has no ``context``), and the shared queue took Python's *default* start
  method's locks (fork: unusable in a spawned child). Here the context is checked as PyTorch does; spawned children
  start through ``patches/mp_start.py`` (MindTorch, our patches, the script's definitions as ``__mp_main__``).
* Workers seed the torch RNG with ``base_seed + worker_id`` (MindTorch left it a TODO: forked workers shared the
  parent's stream, so random augmentations were the same in every worker), before MindTorch's worker seeds
  ``random`` and numpy as PyTorch does (``torch/utils/data/_utils/worker.py``).
* ``pin_memory=True`` is accepted (a no-op: one device). ``persistent_workers=True`` raised AttributeError on the
  second ``iter()`` (``is_first_iter`` is set only when ``ENABLE_FORK_UTILS=0``); the workers are now kept and
  reset per epoch, as PyTorch's.
* **A fork could hang the worker**: MindSpore's CPU kernel pool threads, still spinning after the parent's last
  kernels, can hold a mutex at the instant of the fork (:func:`wait_for_idle_pool_threads`). Every fork of a
  ``mindspore.multiprocessing.Process`` (MindTorch's default workers) and of :class:`MindSporeForkProcess` first
  waits until those threads sleep.

The shuffle order (``RandomSampler``'s draws from numpy's global RNG) is ``patches/random_sampler.py``'s.
"""
from __future__ import annotations

import functools
import inspect
import multiprocessing
import os
import threading
import time

from . import Patch

_local = threading.local()  # the multiprocessing context of the loader whose iterator is being built


def _retrying_asnumpy(original):
    @functools.wraps(original)
    def asnumpy(self):
        try:
            return original(self)
        except RuntimeError as exc:
            if "mem_manager_" not in str(exc):
                raise
            import mindspore as ms
            return original(ms.ops.deepcopy(self))  # a copy made by this process's runtime
    asnumpy._adapter_retry = True
    return asnumpy


def after_fork_in_child() -> None:
    """In a forked MindSpore child: ``asnumpy`` of a parent's view tensor reads a copy made here (module docstring).
    Idempotent."""
    from mindspore.common.tensor import Tensor
    from adapter import backend
    if getattr(Tensor.asnumpy, "_adapter_retry", False):
        return
    Tensor.asnumpy = _retrying_asnumpy(Tensor.asnumpy)
    backend.internal("StubTensor").asnumpy = backend.internal("stub_method")(Tensor.asnumpy)


_POOL_THREADS = (b"KernelThread", b"ActorThread")  # MindSpore's CPU kernel / actor thread pools' thread names


def _busy_pool_threads() -> int:
    """How many of this process's MindSpore pool threads are running (state R in ``/proc/self/task/*/stat``)."""
    busy = 0
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return 0
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        end = stat.rfind(b")")
        if stat[stat.find(b"(") + 1:end].startswith(_POOL_THREADS) and stat[end + 2:end + 3] == b"R":
            busy += 1
    return busy


def wait_for_idle_pool_threads(timeout: float = 2.0, interval: float = 0.001) -> float:
    """Before a fork: wait until MindSpore's kernel and actor pool threads sleep; returns the seconds waited.

    After running kernels, those threads spin (measured ~150 ms on 2 busy cores) and then go to sleep on their
    condition variables, taking each worker's mutex on the way. A fork in that window copies a locked mutex into the
    child, where no thread will unlock it: the child's first multi-threaded kernel (``ParallelLaunch`` ->
    ``ThreadPool::ActiveWorkers``) waits forever. MindSpore's own fork callbacks (``prepare_before_fork``) do not
    stop these pools. Seen with ``tests/fixtures/dataloader_workers.py`` (~22 forks per run): without this wait 4
    of 84 runs hung (gdb: a worker's main thread and its KernelThread both in ``pthread_mutex_lock`` on one mutex
    that no thread of the child holds); with it, none of 80 (none of 25 with a plain 0.3 s sleep before each
    fork). A thread sleeping in ``pthread_cond_wait`` holds no mutex; two consecutive polls with no pool thread
    running (state R: running or runnable) are taken as idle. After ``timeout`` (another thread keeps the pools busy, or a loaded machine keeps
    the spinning threads runnable) the fork goes ahead as before. Cost: ~0.13 s per loader start after kernels
    (2 workers, measured), nothing when the pools already sleep.
    """
    start = time.monotonic()
    quiet = 0
    while quiet < 2 and time.monotonic() - start < timeout:
        quiet = quiet + 1 if _busy_pool_threads() == 0 else 0
        if quiet < 2:
            time.sleep(interval)
    return time.monotonic() - start


class MindSporeForkProcess(multiprocessing.context.ForkProcess):
    """A fork-context process that runs MindSpore's fork callbacks, as ``mindspore.multiprocessing.Process`` does
    (``prepare_before_fork``/``parent_at_fork`` around the fork, ``child_at_fork`` in the child; a plain fork leaves
    the child's MindSpore runtime waiting on threads that were not copied: a worker drawing ``torch.rand`` hung,
    measured), then :func:`after_fork_in_child`."""

    def start(self):
        from adapter import backend
        fork_utils = backend.internal("fork_utils")
        wait_for_idle_pool_threads()
        fork_utils.prepare_before_fork()
        try:
            super().start()
        finally:
            fork_utils.parent_at_fork()

    def run(self):
        import signal
        from adapter import backend
        fork_utils = backend.internal("fork_utils")
        fork_utils.prctl_set_pdeathsig(signal.SIGINT)
        fork_utils.child_at_fork()
        after_fork_in_child()
        super().run()


class MindSporeForkContext(multiprocessing.context.ForkContext):
    """``multiprocessing.get_context("fork")`` whose processes are :class:`MindSporeForkProcess`."""
    Process = MindSporeForkProcess


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                 base_seed, init_fn, worker_id, *rest):
    """MindTorch's ``_worker_loop`` after seeding the torch RNG with ``base_seed + worker_id`` (PyTorch's rule;
    MindSpore's seed is 32 bits: the value is taken modulo 2**32)."""
    import mindtorch.torch as torch
    from adapter import backend
    worker = backend.internal("data.worker")
    after_fork_in_child()
    torch.manual_seed((base_seed + worker_id) % 2 ** 32)
    return worker._adapter_original_loop(dataset_kind, dataset, index_queue, data_queue, done_event,
                                         auto_collation, collate_fn, drop_last, base_seed, init_fn, worker_id, *rest)


def _result_queue(*args, **kwargs):
    """The workers' result queue, in place of MindTorch's ``_SharedQueue(size, max_rowsize)``: a plain queue of the
    loader's multiprocessing context (module docstring)."""
    ctx = getattr(_local, "context", None) or multiprocessing.get_context()
    return ctx.Queue()


class _NoSizingIterator:
    """Stands in for the one-worker iterator MindTorch's ``DataLoader.__init__`` starts to size its shared-memory
    queue: yields nothing, so no worker starts and no sample is drawn there."""

    def __init__(self, *args, **kwargs):
        pass

    def __next__(self):
        raise StopIteration


def apply() -> None:
    import mindtorch.torch.multiprocessing as mt_mp
    import mindspore.multiprocessing as ms_mp
    from mindtorch.torch.utils.data import dataloader as dl
    from adapter import backend
    worker = backend.internal("data.worker")
    DataLoader = dl.DataLoader

    original = DataLoader.__init__
    if getattr(original, "_adapter_patched", False):
        return
    signature = inspect.signature(original)

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        if bound.arguments.get("num_workers") is None:
            bound.arguments["num_workers"] = 0
        owner, name = backend.internal_slot("MultiProcessingDataLoaderIter")
        iterator_class = getattr(owner, name)
        setattr(owner, name, _NoSizingIterator)
        try:
            original(*bound.args, **bound.kwargs)
        finally:
            setattr(owner, name, iterator_class)
        ctx = self.multiprocessing_context
        if ctx is not None and ctx.get_start_method() == "fork" and not isinstance(ctx, MindSporeForkContext):
            self.multiprocessing_context = MindSporeForkContext()
        if "is_first_iter" not in self.__dict__:  # MindTorch sets it only when ENABLE_FORK_UTILS=0; its __iter__
            self.is_first_iter = False            # reads it with persistent_workers (AttributeError otherwise)

    __init__._adapter_patched = True
    DataLoader.__init__ = __init__

    if not hasattr(mt_mp, "context"):  # the multiprocessing_context setter checks multiprocessing.context.BaseContext
        mt_mp.context = multiprocessing.context

    iter_class = backend.internal("MultiProcessingDataLoaderIter")
    original_iter_init = iter_class.__init__

    @functools.wraps(original_iter_init)
    def iter_init(self, loader, *args, **kwargs):
        ctx = loader.multiprocessing_context
        if ctx is None and multiprocessing.get_start_method(allow_none=True) not in (None, "fork"):
            ctx = multiprocessing.get_context()
        _local.context = ctx
        try:
            return original_iter_init(self, loader, *args, **kwargs)
        finally:
            _local.context = None

    iter_class.__init__ = iter_init
    setattr(*backend.internal_slot("SharedQueue"), _result_queue)
    worker._adapter_original_loop = backend.internal("worker_loop")
    setattr(*backend.internal_slot("worker_loop"), _worker_loop)
    setattr(*backend.internal_slot("ms_process.child_at_fork"), staticmethod(after_fork_in_child))
    fork_start = ms_mp.Process.start

    @functools.wraps(fork_start)
    def start(self):
        if ms_mp.get_start_method() == "fork":
            wait_for_idle_pool_threads()
        return fork_start(self)

    ms_mp.Process.start = start


PATCH = Patch("dataloader", "DataLoader: num_workers defaults to 0; workers (fork and spawn) read the parent's "
              "tensors, seed torch per worker, and yield num_workers=0's batches", "post-import", apply)
