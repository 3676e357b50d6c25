"""``torch.utils.data.DataLoader``: ``num_workers`` defaults to 0, as in PyTorch.

MindTorch 0.4's DataLoader turns an omitted ``num_workers`` into 1 on Linux (``dataloader.py``: ``num_workers=None``
-> 1): every loader then forks a worker process. Besides changing what the script asked for (PyTorch loads in the
main process by default), a forked worker cannot use MindSpore tensors: a dataset holding them (MindTorch's MNIST
keeps ``data`` as a tensor) fails there with "RuntimeError: The pointer[mem_manager_] is null" (measured with
``tests/fixtures/parity/small_cnn.py``). An explicit ``num_workers`` is passed through unchanged.
"""
import functools
import inspect

from . import Patch


def apply() -> None:
    from mindtorch.torch.utils.data import DataLoader

    original = DataLoader.__init__
    if getattr(original, "_adapter_patched", False):
        return
    signature = inspect.signature(original)

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        if bound.arguments.get("num_workers") is None:
            bound.arguments["num_workers"] = 0
        return original(*bound.args, **bound.kwargs)

    __init__._adapter_patched = True
    DataLoader.__init__ = __init__


PATCH = Patch("dataloader", "DataLoader's num_workers defaults to 0 as in PyTorch (MindTorch forks 1 worker)",
              "post-import", apply)
