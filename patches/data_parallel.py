"""``torch.nn.DataParallel`` / ``torch.nn.parallel.data_parallel``: the wrapped module on this process's one device.

MindTorch 0.4.0 has ``nn.parallel.DataParallel`` raise ``NotImplementedError`` and ``nn.DataParallel`` missing, so a
script that wraps its model (``model = nn.DataParallel(model)``, common in older training scripts) fails at that line.
This class is PyTorch's DataParallel for the cases that one process can run (PyTorch 2.13,
``torch/nn/parallel/data_parallel.py``):

* no accelerator (``torch.cuda.is_available()`` False): ``device_ids = []`` and ``forward`` calls the module
  directly, exactly as PyTorch on a CPU-only machine;
* one device (``device_ids`` None or of length 1; each process here owns one device, ``torch.cuda.device_count()`` is
  1): ``forward`` calls the module, as PyTorch's ``len(device_ids) == 1`` path (scatter to one device, no gather);
* ``device_ids`` naming two or more devices: PyTorch replicates the module per device in one process; MindSpore has
  no single-process replication, so the module runs on one device with the whole batch, and a warning names the
  user's file:line (the loss and gradients are the same sums, but BatchNorm statistics are computed over the whole
  batch instead of per device chunk). For data parallelism: ``run.py --nproc-per-node N`` with
  ``DistributedDataParallel``.

``model.module`` is the wrapped module and ``state_dict()`` keys are ``module.<name>``, as PyTorch's.

Replaces: ``torch.nn.parallel.DataParallel``, ``torch.nn.parallel.data_parallel.DataParallel``, ``torch.nn.DataParallel``
(added), ``torch.nn.parallel.data_parallel`` and ``torch.nn.parallel.data_parallel.data_parallel`` (the function).
"""
import importlib
import warnings

from . import Patch, patch_attr

_CLASS = None


def _build_class():
    from mindtorch.torch.nn.modules.module import Module
    from . import device

    class DataParallel(Module):
        """PyTorch's ``DataParallel(module, device_ids=None, output_device=None, dim=0)`` on one device (see
        ``patches/data_parallel.py``).

        Warns:
            UserWarning: ``device_ids`` names two or more devices (only the first is used).
        """

        def __init__(self, module, device_ids=None, output_device=None, dim=0):
            super().__init__()
            self.module = module
            object.__setattr__(self, "dim", dim)
            if not device.is_available():
                object.__setattr__(self, "device_ids", [])
                return
            ids = [_device_index(d) for d in (device_ids if device_ids is not None else range(device.device_count()))]
            if len(ids) > 1:
                from adapter.userframe import user_location
                warnings.warn(f"nn.DataParallel at {user_location(2)}: device_ids={ids} runs the module on one device "
                              f"(cuda:{ids[0]}) with the whole batch here (MindSpore has no single-process replication; "
                              "BatchNorm sees the whole batch). For data parallelism: run.py --nproc-per-node N with "
                              "DistributedDataParallel.", UserWarning, stacklevel=2)
            object.__setattr__(self, "device_ids", ids)
            object.__setattr__(self, "output_device", _device_index(output_device) if output_device is not None
                               else ids[0])

        def forward(self, *inputs, **kwargs):
            return self.module(*inputs, **kwargs)

    return DataParallel


def _device_index(d) -> int:
    """``_get_device_index``: an int, or a ``torch.device``/string's index (None -> 0)."""
    if isinstance(d, int):
        return d
    index = getattr(d, "index", None)
    if isinstance(d, str):
        index = int(d.split(":")[1]) if ":" in d else None
    return 0 if index is None else int(index)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """PyTorch's functional ``torch.nn.parallel.data_parallel``: ``module(*inputs, **module_kwargs)`` on this
    process's device (see the module docstring for what differs with several ``device_ids``).

    Raises:
        RuntimeError: "device type could not be determined" without an accelerator, as PyTorch on a CPU-only machine.
    """
    from . import device
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not device.is_available():
        raise RuntimeError("device type could not be determined")
    return _CLASS(module, device_ids, output_device, dim)(*inputs, **(module_kwargs or {}))


def apply() -> None:
    global _CLASS
    import mindtorch.torch.nn as nn
    import mindtorch.torch.nn.parallel as parallel
    # the module, not the attribute: parallel.data_parallel is the function once applied
    dp_module = importlib.import_module("mindtorch.torch.nn.parallel.data_parallel")
    if _CLASS is None:  # one class for the process (isinstance checks, models already wrapped)
        _CLASS = _build_class()
    for owner in (parallel, dp_module, nn):
        patch_attr(owner, "DataParallel", _CLASS)
    for owner in (parallel, dp_module):
        patch_attr(owner, "data_parallel", data_parallel)


PATCH = Patch("data_parallel", "nn.DataParallel / nn.parallel.data_parallel run the wrapped module on this process's "
                               "device (MindTorch raises NotImplementedError); module.* state_dict keys",
              "post-import", apply,
              replaces=("torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel",
                        "torch.nn.DataParallel", "torch.nn.parallel.data_parallel",
                        "torch.nn.parallel.data_parallel.data_parallel"))
