"""``torch.nn.parallel.DistributedDataParallel``: gradients averaged over the workers after ``backward()``.

MindTorch 0.4.0's DDP broadcasts rank 0's parameters at construction but never averages gradients by itself (the
user must call ``ddp.all_reduce(grads)``), and its broadcast goes through MindTorch's ``broadcast``, which writes into
a temporary. This DDP does what PyTorch's does, on MindSpore's collectives (``adapter/collectives.py``):

* construction: every parameter and buffer takes rank 0's value (one flat ``Broadcast``), so all workers start equal;
* ``backward()``: ``.grad`` of the wrapped module's parameters is averaged over the workers
  (``adapter/grad_sync.py``: in the eager bridge after accumulation, in the compiled step inside the graph, one
  flat ``AllReduce`` per ``bucket_cap_mb`` bucket), except under :meth:`no_sync`, where gradients accumulate
  locally and the next synchronized ``backward()`` averages the accumulated total, as PyTorch does;
* forward: with ``broadcast_buffers=True`` (default) buffers (BatchNorm statistics) take rank 0's values before each
  training forward, as PyTorch's ``_sync_buffers``;
* ``model.module`` is the wrapped module; ``state_dict()`` keys are ``module.<name>``, as PyTorch's.

``device_ids`` / ``output_device`` are accepted and ignored: each worker process owns one device (``run.py``
launches one process per device, ``DEVICE_ID`` = local rank, as ``msrun`` does).

Replaces: ``torch.nn.parallel.DistributedDataParallel`` and ``torch.nn.parallel.distributed.DistributedDataParallel``.
"""
import contextlib

from adapter import hooks

from . import Patch, patch_attr

_CLASS = None


def _build_class():
    from adapter import backend
    executor = backend.pynative_executor()
    from mindtorch.torch.nn.modules.module import Module
    from adapter import collectives, grad_sync

    class DistributedDataParallel(Module):
        """PyTorch's ``DistributedDataParallel(module, device_ids=None, ..., broadcast_buffers=True,
        process_group=None, bucket_cap_mb=25, ...)`` on MindSpore's collectives (see ``patches/ddp.py``).

        Raises:
            RuntimeError: the default process group is not initialized (``init_process_group`` not called).
        """

        def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                     process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                     gradient_as_bucket_view=False, static_graph=False, **kwargs):
            super().__init__()
            import mindtorch.torch.distributed as dist
            from adapter.userframe import user_location
            if not dist.is_initialized():
                raise RuntimeError(f"DistributedDataParallel at {user_location(2)}: Default process group has not "
                                   "been initialized, please make sure to call init_process_group (and launch with "
                                   "'run.py --nproc-per-node N').")
            self.module = module
            object.__setattr__(self, "device_ids", device_ids)
            object.__setattr__(self, "output_device", output_device)
            object.__setattr__(self, "dim", dim)
            object.__setattr__(self, "broadcast_buffers", bool(broadcast_buffers))
            object.__setattr__(self, "find_unused_parameters", find_unused_parameters)
            object.__setattr__(self, "gradient_as_bucket_view", gradient_as_bucket_view)
            object.__setattr__(self, "static_graph", static_graph)
            object.__setattr__(self, "process_group", process_group)
            object.__setattr__(self, "bucket_cap_mb", 25.0 if bucket_cap_mb is None else float(bucket_cap_mb))
            object.__setattr__(self, "require_backward_grad_sync", True)
            object.__setattr__(self, "require_forward_param_sync", True)
            group = _group_name(process_group)
            object.__setattr__(self, "_adapter_group", group)
            object.__setattr__(self, hooks.attr("world"), collectives.group_size(group))
            object.__setattr__(self, "_adapter_rank", collectives.group_rank(group))
            params = [p for p in module.parameters() if p.requires_grad]
            object.__setattr__(self, "_adapter_params", params)
            object.__setattr__(self, hooks.attr("param_ids"), frozenset(id(p) for p in params))
            # PyTorch's _sync_module_states: all workers start from rank 0's parameters and buffers
            self._adapter_broadcast(list(module.parameters()) + list(module.buffers()))
            if hooks.get(self, "world") > 1:  # the mean over one worker is the gradient itself
                grad_sync.register(self)

        def _adapter_broadcast(self, states) -> None:
            states = [s for s in states if s is not None]
            if not states or hooks.get(self, "world") == 1:
                return
            values = collectives.broadcast_tensors(states, 0, self._adapter_group)
            if self._adapter_rank != 0:
                for state, value in zip(states, values):
                    state.assign_value(value)

        def _pre_forward(self, grad_enabled: bool) -> None:
            """PyTorch's pre-forward buffer sync: rank 0's buffers, for a training forward (not after a forward
            under no_grad or no_sync(), as PyTorch's ``require_forward_param_sync``)."""
            if self.broadcast_buffers and self.require_forward_param_sync:
                self._adapter_broadcast(list(self.module.buffers()))
            object.__setattr__(self, "require_forward_param_sync",
                               bool(grad_enabled and self.require_backward_grad_sync))

        def __call__(self, *args, **kwargs):
            # Python-level call (PyNative, or the start of a compiled evaluation forward); inside a compiled
            # training step compiled_step calls grad_sync.prepare_step, which does the same
            self._pre_forward(executor.enable_grad())
            return super().__call__(*args, **kwargs)

        def forward(self, *inputs, **kwargs):
            return self.module(*inputs, **kwargs)

        @contextlib.contextmanager
        def no_sync(self):
            """Gradients of ``backward()`` calls inside accumulate locally; the first synchronized ``backward()``
            after it averages the accumulated gradients (PyTorch's semantics)."""
            old = self.require_backward_grad_sync
            object.__setattr__(self, "require_backward_grad_sync", False)
            try:
                yield
            finally:
                object.__setattr__(self, "require_backward_grad_sync", old)

    setattr(DistributedDataParallel, hooks.attr("pre_forward"), DistributedDataParallel._pre_forward)  # adapter/grad_sync.py
    return DistributedDataParallel


def _group_name(process_group):
    from adapter import collectives
    if process_group is None:
        return collectives.world_group()
    from adapter import backend
    return backend.internal("get_pg_name")(process_group)


def apply() -> None:
    global _CLASS
    import mindtorch.torch.nn.parallel as parallel
    import mindtorch.torch.nn.parallel.distributed as distributed
    if _CLASS is None:  # one class for the process (isinstance checks, models already wrapped)
        _CLASS = _build_class()
    patch_attr(parallel, "DistributedDataParallel", _CLASS)
    patch_attr(distributed, "DistributedDataParallel", _CLASS)


PATCH = Patch("ddp", "DistributedDataParallel averages gradients over workers after backward() (eager and compiled), "
                     "no_sync(), rank-0 broadcast of weights and buffers, module.* state_dict keys",
              "post-import", apply, replaces=("torch.nn.parallel.DistributedDataParallel",
                                              "torch.nn.parallel.distributed.DistributedDataParallel"))
