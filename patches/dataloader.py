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

Replaces: ``DataLoader.__init__``, ``torch.multiprocessing.context`` (added),
``_MultiProcessingDataLoaderIter.__init__``, ``torch.utils.data.dataloader._SharedQueue``,
``torch.utils.data._utils.worker._worker_loop``, ``mindspore.multiprocessing.Process._child_at_fork_func`` /
``start``; in forked children, MindSpore's ``Tensor.asnumpy``.
"""
from __future__ import annotations

import functools
import inspect
import multiprocessing
import os
import threading
import time

from . import Patch, get_original, patch_attr

_local = threading.local()  # the multiprocessing context of the loader whose iterator is being built


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
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
    return asnumpy


def after_fork_in_child() -> None:
    """In a forked MindSpore child: ``asnumpy`` of a parent's view tensor reads a copy made here (module docstring).
    Idempotent."""
    from mindspore.common.tensor import Tensor
    from adapter import backend
    asnumpy = _retrying_asnumpy(get_original(Tensor, "asnumpy"))
    patch_attr(Tensor, "asnumpy", asnumpy)
    patch_attr(backend.internal("StubTensor"), "asnumpy", backend.internal("stub_method")(asnumpy))


_CHILD_AT_FORK = staticmethod(after_fork_in_child)  # mindspore.multiprocessing.Process._child_at_fork_func


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
    after_fork_in_child()
    torch.manual_seed((base_seed + worker_id) % 2 ** 32)
    original_loop = get_original(*backend.internal_slot("worker_loop"))
    return original_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn,
                         drop_last, base_seed, init_fn, worker_id, *rest)


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


# MindTorch's / MindSpore's functions the wrappers below call, set by apply() (get_original)
_loader_init = _loader_signature = _iter_init = _process_start = None


def dataloader_init(self, *args, **kwargs):
    """``DataLoader.__init__``: ``num_workers`` defaults to 0, no sizing iterator, fork contexts run MindSpore's
    fork callbacks, ``is_first_iter`` set (module docstring); MindTorch's arguments otherwise."""
    from adapter import backend
    bound = _loader_signature.bind(self, *args, **kwargs)
    if bound.arguments.get("num_workers") is None:
        bound.arguments["num_workers"] = 0
    owner, name = backend.internal_slot("MultiProcessingDataLoaderIter")
    iterator_class = getattr(owner, name)
    setattr(owner, name, _NoSizingIterator)  # during this call only (not a patch: put back below)
    try:
        _loader_init(*bound.args, **bound.kwargs)
    finally:
        setattr(owner, name, iterator_class)
    ctx = self.multiprocessing_context
    if ctx is not None and ctx.get_start_method() == "fork" and not isinstance(ctx, MindSporeForkContext):
        self.multiprocessing_context = MindSporeForkContext()
    if "is_first_iter" not in self.__dict__:  # MindTorch sets it only when ENABLE_FORK_UTILS=0; its __iter__
        self.is_first_iter = False            # reads it with persistent_workers (AttributeError otherwise)


def iterator_init(self, loader, *args, **kwargs):
    """``_MultiProcessingDataLoaderIter.__init__`` with the loader's multiprocessing context (or a non-fork default
    start method's) visible to :func:`_result_queue` while it builds its queues."""
    ctx = loader.multiprocessing_context
    if ctx is None and multiprocessing.get_start_method(allow_none=True) not in (None, "fork"):
        ctx = multiprocessing.get_context()
    _local.context = ctx
    try:
        return _iter_init(self, loader, *args, **kwargs)
    finally:
        _local.context = None


def process_start(self):
    """``mindspore.multiprocessing.Process.start``: a fork first waits for idle pool threads
    (:func:`wait_for_idle_pool_threads`)."""
    import mindspore.multiprocessing as ms_mp
    if ms_mp.get_start_method() == "fork":
        wait_for_idle_pool_threads()
    return _process_start(self)


def apply() -> None:
    global _loader_init, _loader_signature, _iter_init, _process_start
    import mindtorch.torch.multiprocessing as mt_mp
    import mindspore.multiprocessing as ms_mp
    from mindtorch.torch.utils.data import dataloader as dl
    from adapter import backend

    _loader_init = get_original(dl.DataLoader, "__init__")
    _loader_signature = inspect.signature(_loader_init)
    patch_attr(dl.DataLoader, "__init__", functools.update_wrapper(dataloader_init, _loader_init))

    if get_original(mt_mp, "context", None) is None:  # the multiprocessing_context setter checks
        patch_attr(mt_mp, "context", multiprocessing.context)  # multiprocessing.context.BaseContext

    iter_class = backend.internal("MultiProcessingDataLoaderIter")
    _iter_init = get_original(iter_class, "__init__")
    patch_attr(iter_class, "__init__", functools.update_wrapper(iterator_init, _iter_init))
    patch_attr(*backend.internal_slot("SharedQueue"), _result_queue)
    patch_attr(*backend.internal_slot("worker_loop"), _worker_loop)
    patch_attr(*backend.internal_slot("ms_process.child_at_fork"), _CHILD_AT_FORK)
    _process_start = get_original(ms_mp.Process, "start")
    patch_attr(ms_mp.Process, "start", functools.update_wrapper(process_start, _process_start))


PATCH = Patch("dataloader", "DataLoader: num_workers defaults to 0; workers (fork and spawn) read the parent's "
              "tensors, seed torch per worker, and yield num_workers=0's batches", "post-import", apply,
              replaces=("torch.utils.data.DataLoader.__init__", "torch.multiprocessing.context",
                        "torch.utils.data.dataloader._MultiProcessingDataLoaderIter.__init__",
                        "torch.utils.data.dataloader._SharedQueue", "torch.utils.data._utils.worker._worker_loop",
                        "mindspore.multiprocessing.Process._child_at_fork_func",
                        "mindspore.multiprocessing.Process.start"),
              effects=("in forked MindSpore children (DataLoader workers): mindspore Tensor.asnumpy / "
                       "StubTensor.asnumpy retry a parent's view tensor on a copy",))
