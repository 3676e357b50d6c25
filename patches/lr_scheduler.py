"""``torch.optim.lr_scheduler``: PyTorch 2.13's schedulers, computing in Python floats as PyTorch does.

MindTorch 0.4.0's schedulers are MindSpore's (``mindspore.experimental.optim.lr_scheduler``), which keep
``last_epoch`` and the lrs as float32 tensors and write the optimizer's lr ``Parameter`` with ``ops.assign``.
Against PyTorch that failed or differed (survey: ``tests/fixtures/lr_scheduler_cases.py``, 27 scheduler set-ups
over SGD(momentum)/Adam/AdamW with 2 param groups, 15 steps, vs real PyTorch 2.13):

* ``CosineAnnealingWarmRestarts(opt, T_0).step()`` (with or without an epoch, fractional epochs),
  ``ReduceLROnPlateau.step(metric)``, ``CyclicLR(cycle_momentum=False)`` and ``SequentialLR`` (warmup + cosine:
  ``SequentialLR(opt, [LinearLR(...), CosineAnnealingLR(...)], milestones=[...])``) raised
  ``TypeError: Failed calling Assign with "Assign()(variable=float, ...)"`` (they assign into ``group['lr']``,
  a float since patches/optimizer.py);
* ``CyclicLR`` with its default ``cycle_momentum=True`` raised ``NotImplementedError``; ``ChainedScheduler`` was
  missing (AttributeError);
* ``CosineAnnealingLR``'s float32 recurrence drifted from PyTorch's values (2.3e-6 relative after 14 steps);
* state dicts held MindSpore attributes (``groups_num``, ``math_pi``, ...) that PyTorch's do not.

PyTorch's schedulers only read and write ``optimizer.param_groups[i][key]`` (``lr``, ``initial_lr``, and for
CyclicLR/OneCycleLR ``momentum`` or ``betas``) with Python arithmetic. patches/optimizer.py makes ``group['lr']`` a
float that, when assigned, writes the optimizer's own lr ``Parameter`` in place: the eager update and the compiled
step (adapter/compiled_step.py; the lr Parameters are graph inputs, owned by the optimizer: patches/optimizer_graph.py)
read the new value at the next step. So our own module ``patches/_lr_schedulers.py``, written to PyTorch 2.13's
documented behaviour (its formulas in its operation order, its state attributes, warnings and messages), replaces
MindTorch's classes: the lrs are PyTorch's to the last bit of the Python float (the update reads it from the lr
Parameter: float32, or float64 for float64 groups), with PyTorch's warnings ("Detected call of
`lr_scheduler.step()` before `optimizer.step()`", the ``epoch`` deprecation), ``get_last_lr()`` and
``state_dict()`` / ``load_state_dict()`` (plain Python values, loadable by real PyTorch).

``momentum`` / ``betas`` (CyclicLR / OneCycleLR with ``cycle_momentum=True``, the default) are plain Python values
in the group that MindSpore's optimizers read when they run: the eager update uses each new value (MindSpore's
``@jit`` update compiles once per distinct value: ~1 s a step on CPU for a 2-tensor SGD). A compiled step holds
them as graph constants, and MindSpore does not recompile when they change (it updated with a stale momentum: 3.5e-2
relative weight error after 6 OneCycleLR steps, tests/fixtures/lr_scheduler_train.py): adapter/compiled_step.py
keys its graphs by them and runs a site eagerly, with a message, once they took more than 3 values.

Still patched for MindSpore's own schedulers (``mindspore.experimental.optim.lr_scheduler``, not reachable from
``torch``): ``get_last_lr()`` returns Python floats.

Replaces: ``torch.optim.lr_scheduler.*`` (every name of PyTorch's ``__all__``, ``_LRScheduler``,
``EPOCH_DEPRECATION_WARNING``, and ``__all__`` itself), ``mindspore.experimental.optim.lr_scheduler.LRScheduler
.get_last_lr``.
"""
from . import Patch, patch_attr


def _to_float(lr):
    """A float32 tensor as the shortest decimal that round-trips (0.005, not 0.004999999888); a float64 one as its
    value."""
    import mindspore as ms
    import numpy as np
    if isinstance(lr, ms.Tensor) and lr.dtype == ms.float64:
        return float(lr.asnumpy())
    return float(str(np.float32(lr.asnumpy()))) if isinstance(lr, ms.Tensor) else float(lr)


def get_last_lr(self):
    """Last learning rate of each param group, ``list[float]`` (MindSpore's schedulers)."""
    return [_to_float(lr) for lr in self._last_lr]


def apply() -> None:
    from mindspore.experimental.optim.lr_scheduler import LRScheduler as MSLRScheduler
    from mindtorch.torch.optim import lr_scheduler as module

    from . import _lr_schedulers as ours

    patch_attr(MSLRScheduler, "get_last_lr", get_last_lr)
    for name in ours.__all__ + ["_LRScheduler", "EPOCH_DEPRECATION_WARNING"]:
        patch_attr(module, name, getattr(ours, name))
    patch_attr(module, "__all__", ours.__all__)


PATCH = Patch("lr_scheduler", "torch.optim.lr_scheduler as PyTorch 2.13's (ours): every scheduler, PyTorch's "
                              "lrs/momentum/betas, warnings and state dicts; the lr reaches eager and compiled updates",
              "post-import", apply,
              replaces=("torch.optim.lr_scheduler.*",
                        "mindspore.experimental.optim.lr_scheduler.LRScheduler.get_last_lr"))
