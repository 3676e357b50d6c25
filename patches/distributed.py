"""``torch.distributed``: the process group on MindSpore's collective backend, and collectives that work on CPU.

MindTorch 0.4.0's ``torch.distributed`` maps ``init_process_group`` onto ``mindspore.communication.init`` but
passes the backend name through (``init('gloo')`` fails: MindSpore knows hccl/nccl/mccl), and its ``all_reduce``,
``all_gather`` and ``barrier`` fail on the CPU backend; ``ReduceOp.AVG`` does not exist (``docs/facts.md``).
Here:

* ``init_process_group(backend, init_method, world_size, rank, timeout)``: any of PyTorch's backend names
  (``nccl``, ``gloo``, ``hccl``, ``mpi``, ``cpu:gloo,cuda:nccl``) selects the backend of the device run.py runs on:
  mccl (MindSpore's CPU collectives) on CPU, NCCL on GPU, HCCL on Ascend. In a worker started by ``run.py
  --nproc-per-node`` (or msrun) the cluster is already described by the environment; in another process
  (``mp.spawn`` children, hand-set ``env://`` variables, ``tcp://HOST:PORT``) the arguments describe it and rank 0
  starts MindSpore's scheduler (``adapter/distributed.py`` ``join_cluster``). ``world_size``/``rank`` given
  explicitly must agree with the launcher's (ValueError otherwise, MindTorch's check). On CPU, MindSpore's
  ``init()`` runs under ``adapter/distributed/cluster.py`` ``nudged_join`` (its fixed 3 s wait for the other ranks'
  collective addresses ends at the next 0.5 s tick; ``ADAPTER_JOIN_NUDGE=0``: off). On every backend, ``init()`` runs
  under ``unpreempted_join``: the threads it creates are ``SCHED_BATCH`` until it returns, so that MindSpore's TCP
  event-loop thread cannot preempt the thread that connects and lose the connection (~2.5 s each;
  ``ADAPTER_JOIN_BATCH=0``: off).
* ``all_reduce`` (``SUM``, ``AVG``, ``MAX``, ``MIN``, ``PRODUCT``), ``all_gather``, ``broadcast``, ``reduce``,
  ``barrier`` through ``adapter/collectives.py`` (exact on every dtype: float sums by ``AllReduce``, the rest by
  ``AllGather`` and a local reduction); in place, as PyTorch; ``async_op=True`` returns a completed work handle.
* ``get_backend()`` of the default group is PyTorch's name of what ``init_process_group`` was given (``'gloo'``,
  ``'nccl'``, lower-cased; ``'undefined'`` for no backend, as PyTorch 2.13 returns), not MindSpore's (``'mccl'``: a
  script printing or branching on it saw another value than under PyTorch).
* ``is_initialized()`` is False again after ``destroy_process_group()`` (which keeps MindSpore's backend: a second
  ``init_process_group`` in the same process is not supported and says so).

Errors name the user's ``file:line``.

Replaces: ``torch.distributed.X`` and ``torch.distributed.distributed_c10d.X`` for X in :data:`REPLACED`;
``torch.distributed.ReduceOp.AVG`` and ``torch.distributed.Backend.GLOO/MPI/UCC`` (added).
"""
import functools

from . import Patch, get_replaced, is_patched, patch_attr

_TORCH_BACKENDS = ("nccl", "gloo", "hccl", "mpi", "mccl", "ucc", "cpu:gloo,cuda:nccl", "cuda:nccl,cpu:gloo")
_state = {"destroyed": False, "backend": None}


class _CompletedWork:
    """What ``async_op=True`` returns: the collective already ran (MindSpore runs it synchronously here)."""

    def __init__(self, result=None):
        self._result = result

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True

    def result(self):
        return self._result

    def exception(self):
        return None


def _where():
    from adapter.userframe import user_location
    return user_location(3) or "?"


def device_backend() -> str:
    """MindSpore's collective backend for the device run.py runs on: ``mccl`` (CPU), ``nccl`` (GPU), ``hccl``."""
    import mindspore as ms
    return {"CPU": "mccl", "GPU": "nccl", "Ascend": "hccl"}[ms.get_context("device_target")]


def map_backend(backend, where: str = "") -> str:
    """PyTorch's ``backend`` argument -> MindSpore's backend for this device. Raises ValueError for unknown names."""
    if backend is None or str(backend).lower() in ("", "undefined"):
        return device_backend()
    name = str(backend).lower().replace(" ", "")
    if name not in _TORCH_BACKENDS:
        raise ValueError(f"init_process_group at {where}: Invalid backend: '{backend}' (supported: nccl, gloo, hccl, "
                         "mpi; on MindSpore each selects the device's collective backend)")
    return device_backend()


def _op_name(op) -> str:
    """PyTorch ``ReduceOp`` (or MindTorch's string ops) -> ``adapter/collectives.py`` op name."""
    name = str(op if op is not None else "sum").lower().rsplit(".", 1)[-1]
    names = {"sum": "sum", "avg": "avg", "mean": "avg", "max": "max", "min": "min", "prod": "product",
             "product": "product"}
    if name not in names:
        raise ValueError(f"all_reduce at {_where()}: ReduceOp {op} is not supported (SUM, AVG, MAX, MIN, PRODUCT)")
    return names[name]


# PyTorch 2.13's Backend.default_device_backend_map
_DEFAULT_DEVICE_BACKEND = {"cpu": "gloo", "cuda": "nccl", "xpu": "xccl", "mps": "gloo"}


# set by apply(): MindTorch's modules and helpers, adapter modules, and the functions this patch replaced
c10d = ReduceOp = private = cast_to_adapter_tensor = collectives = launch = startup_marks = None
_original_init = _original_destroy = _original_get_backend = _original_is_initialized = None


def _begin(op_name, group):
    """``(where, name)`` for a collective: the user's file:line, and MindSpore's name of ``group`` (None when
    this rank is not a member: the call does nothing, as in PyTorch). Raises RuntimeError before
    ``init_process_group``, with PyTorch's message."""
    where = _where()
    if not is_initialized():
        raise RuntimeError(f"{op_name} at {where}: Default process group has not been initialized, please make "
                           "sure to call init_process_group.")
    if group is None or group == c10d.GroupMember.WORLD:
        return where, collectives.world_group()
    if group == c10d.GroupMember.NON_GROUP_MEMBER:
        return where, None
    return where, private("get_pg_name")(group)


def _assign(tensor, value):
    tensor.assign_value(cast_to_adapter_tensor(value).astype(tensor.dtype).reshape(tensor.shape))


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """PyTorch's ``init_process_group`` on MindSpore's cluster (see ``patches/distributed.py``).

    Raises:
        RuntimeError: already initialized (twice, or again after ``destroy_process_group``).
        ValueError: unknown backend; missing env:// variables; world_size/rank that disagree with the launcher.
        NotImplementedError: ``store=``, ``file://`` init methods.
    """
    where = _where()
    if _state["destroyed"]:
        raise RuntimeError(f"init_process_group at {where}: the process group was destroyed; MindSpore's "
                           "backend cannot be initialized twice in one process")
    if is_initialized():
        raise RuntimeError(f"init_process_group at {where}: trying to initialize the default process group "
                           "twice!")
    if store is not None:
        raise NotImplementedError(f"init_process_group at {where}: store= is not supported on MindSpore; use "
                                  "init_method='env://' (run.py --nproc-per-node sets the variables)")
    ms_backend = map_backend(backend, where)
    launch.join_cluster(init_method, world_size, rank, where)
    # MindSpore's fixed 3 s wait for the peers' addresses, cut (CPU); its connection race, avoided (every backend)
    with launch.nudged_join(ms_backend), launch.unpreempted_join():
        _original_init(backend=ms_backend, init_method=None, timeout=None, world_size=world_size, rank=rank,
                       group_name=group_name, pg_options=pg_options)
    startup_marks.mark("joined")
    _state["backend"] = "undefined" if backend is None else str(backend).lower()


def get_backend(group=None):
    """PyTorch's backend name of ``group`` (the default group: the name given to ``init_process_group``; see
    ``patches/distributed.py``); other groups as MindTorch names them. Raises RuntimeError as MindTorch's."""
    name = _original_get_backend(group)
    if (group is None or group == c10d.GroupMember.WORLD) and _state["backend"] is not None:
        return _state["backend"]
    return name


def is_initialized():
    return not _state["destroyed"] and bool(_original_is_initialized()) and \
        private("c10d_world").default_pg is not None


def destroy_process_group(group=None):
    if group is None or group == c10d.GroupMember.WORLD:
        if is_initialized():
            _original_destroy(group)
            private("c10d_world").default_pg = None
            _state["destroyed"] = True
        return
    return _original_destroy(group)


# ``op=ReduceOp.SUM`` as PyTorch's signature says: apply() sets the default (ReduceOp is MindTorch's, imported there)
def all_reduce(tensor, op=None, group=None, async_op=False):
    """In place: ``tensor`` = reduction ``op`` over the workers. Same shape and dtype."""
    _, name = _begin("all_reduce", group)
    if name is not None:
        _assign(tensor, collectives.all_reduce(tensor, _op_name(op), name))
    return _CompletedWork() if async_op else None


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """``tensor_list[i]`` = rank i's ``tensor`` (``tensor_list``: world_size tensors of ``tensor``'s shape)."""
    where, name = _begin("all_gather", group)
    if name is None:
        return None
    if not isinstance(tensor_list, list) or len(tensor_list) != collectives.group_size(name):
        raise ValueError(f"all_gather at {where}: tensor_list must be a list of world_size "
                         f"({collectives.group_size(name)}) tensors")
    gathered = collectives.all_gather(tensor, name)
    for i, out in enumerate(tensor_list):
        _assign(out, gathered[i])
    return _CompletedWork() if async_op else None


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    _, name = _begin("all_gather_into_tensor", group)
    if name is not None:
        _assign(output_tensor, collectives.all_gather(input_tensor, name))
    return _CompletedWork() if async_op else None


def broadcast(tensor, src, group=None, async_op=False):
    """In place: ``tensor`` = rank ``src``'s ``tensor``."""
    _, name = _begin("broadcast", group)
    if name is not None:
        _assign(tensor, collectives.broadcast(tensor, int(src), name))
    return _CompletedWork() if async_op else None


def reduce(tensor, dst, op=None, group=None, async_op=False):
    """In place on rank ``dst`` only: ``tensor`` = reduction ``op`` over the workers."""
    _, name = _begin("reduce", group)
    if name is not None:
        value = collectives.all_reduce(tensor, _op_name(op), name)
        if collectives.group_rank(name) == int(dst):
            _assign(tensor, value)
    return _CompletedWork() if async_op else None


def barrier(group=None, async_op=False, device_ids=None):
    """Returns once every worker has called it."""
    _, name = _begin("barrier", group)
    if name is not None:
        collectives.barrier(name)
    return _CompletedWork() if async_op else None


def is_available():
    return True


def is_gloo_available():
    return True  # 'gloo' maps onto the device's backend (mccl on CPU)


def get_default_backend_for_device(device):
    """PyTorch 2.13's ``torch.distributed.get_default_backend_for_device`` (distributed_c10d.py): ``'gloo'`` for
    cpu and mps, ``'nccl'`` for cuda, ``'xccl'`` for xpu -- PyTorch's names, which ``init_process_group`` maps
    onto the device's MindSpore backend. Raises ValueError for other device types, with PyTorch's message."""
    import mindtorch.torch as torch
    device_str = device.type if isinstance(device, torch.device) else torch.device(device).type
    backend = _DEFAULT_DEVICE_BACKEND.get(device_str)
    if backend is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return backend


# name in torch.distributed (and distributed_c10d) -> this module's function
REPLACED = {"init_process_group": init_process_group, "is_initialized": is_initialized,
            "destroy_process_group": destroy_process_group, "all_reduce": all_reduce,
            "all_gather": all_gather, "all_gather_into_tensor": all_gather_into_tensor,
            "_all_gather_base": all_gather_into_tensor, "broadcast": broadcast, "reduce": reduce,
            "barrier": barrier, "is_available": is_available, "is_gloo_available": is_gloo_available,
            "get_default_backend_for_device": get_default_backend_for_device, "get_backend": get_backend}


def apply() -> None:
    global c10d, ReduceOp, private, cast_to_adapter_tensor, collectives, launch, startup_marks
    global _original_init, _original_destroy, _original_get_backend, _original_is_initialized
    import mindtorch.torch.distributed as dist
    import mindtorch.torch.distributed.distributed_c10d as c10d
    from adapter.backend import internal as private
    ReduceOp = private("ReduceOp")
    from mindtorch.torch.tensor import cast_to_adapter_tensor
    from adapter import collectives, distributed as launch, startup_marks

    launch.worker_setup()
    _original_init = get_replaced(c10d, "init_process_group", NAME)
    _original_destroy = get_replaced(c10d, "destroy_process_group", NAME)
    _original_get_backend = get_replaced(c10d, "get_backend", NAME)
    _original_is_initialized = get_replaced(c10d, "is_initialized", NAME)
    functools.update_wrapper(init_process_group, _original_init)  # as functools.wraps did: name, doc, __wrapped__

    if not is_patched(ReduceOp, "AVG"):  # one AVG object for the process (compared by callers)
        patch_attr(ReduceOp, "AVG", ReduceOp("avg"))
    all_reduce.__defaults__ = (ReduceOp.SUM, None, False)
    reduce.__defaults__ = (ReduceOp.SUM, None, False)
    for name, value in (("GLOO", "gloo"), ("MPI", "mpi"), ("UCC", "ucc")):
        patch_attr(c10d.Backend, name, value)

    for name, fn in REPLACED.items():
        patch_attr(c10d, name, fn)
        patch_attr(dist, name, fn)


NAME = "distributed"
PATCH = Patch(NAME, "torch.distributed: init_process_group maps nccl/gloo/hccl onto the device's backend "
                    "(mccl on CPU); all_reduce SUM/AVG/MAX/MIN, all_gather, broadcast, barrier work on CPU",
              "post-import", apply,
              replaces=tuple(f"torch.distributed.{name}" for name in REPLACED)
              + tuple(f"torch.distributed.distributed_c10d.{name}" for name in REPLACED)
              + ("torch.distributed.ReduceOp.AVG", "torch.distributed.Backend.GLOO", "torch.distributed.Backend.MPI",
                 "torch.distributed.Backend.UCC"))
