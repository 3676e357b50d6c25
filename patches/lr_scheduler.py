"""``torch.optim.lr_scheduler``: ``get_last_lr()`` returns Python floats, as in PyTorch.

MindSpore's schedulers (which MindTorch's StepLR, MultiStepLR, CosineAnnealingLR, LambdaLR... inherit) return
0-d Tensors. The schedulers' arithmetic is untouched: they keep writing the optimizer's lr ``Parameter``, which
``param_groups[i]['lr']`` reads as a float (``patches/optimizer.py``).
"""
from . import Patch


def _to_float(lr):
    """A float32 tensor as the shortest decimal that round-trips (0.005, not 0.004999999888); a float64 one (the lr
    of a float64 param group, patches/optimizer.py) as its value."""
    import mindspore as ms
    import numpy as np
    if isinstance(lr, ms.Tensor) and lr.dtype == ms.float64:
        return float(lr.asnumpy())
    return float(str(np.float32(lr.asnumpy()))) if isinstance(lr, ms.Tensor) else float(lr)


def get_last_lr(self):
    """Last learning rate of each param group, ``list[float]``."""
    return [_to_float(lr) for lr in self._last_lr]


def apply() -> None:
    from mindspore.experimental.optim.lr_scheduler import LRScheduler as MSLRScheduler
    from mindtorch.torch.optim.lr_scheduler import LRScheduler
    for cls in (MSLRScheduler, LRScheduler):
        cls.get_last_lr = get_last_lr


PATCH = Patch("lr_scheduler", "lr schedulers' get_last_lr() returns Python floats", "post-import", apply)
