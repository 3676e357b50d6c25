"""Per-parameter optimizer slots that exist only where the update reads them (shared by patches/sgd.py and
patches/adam_slots.py).

MindSpore's ``mindspore.experimental.optim`` classes clone every slot for every parameter in ``__init__``
(``self.parameters.clone(prefix=..., init=...)``), also slots that the group's settings never read (SGD's
``accum``/``stat`` with ``momentum=0``, Adam's/AdamW's ``max_exp_avg_sq`` with ``amsgrad=False``). Such a parameter
gets a 0-d placeholder ``Parameter`` instead (same initial value, dtype and name): the ``ParameterTuple`` keeps one
entry per parameter, as MindSpore's ``hyper_map`` over the slots requires. :func:`ensure_full` swaps placeholders for
MindSpore's full-size slots when a setting that reads them is switched on.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Optional


def slots(params, prefix: str, init: str, full: bool) -> list:
    """``prefix`` slots of ``params``: MindSpore's (``ParameterTuple.clone``: same shape and dtype, ``init`` 'zeros'
    or 'ones', named ``<prefix>.<name>``) when ``full``, else 0-d placeholders of the same value, dtype and name."""
    import mindspore as ms
    import numpy as np
    if full:
        return list(ms.ParameterTuple(params).clone(prefix=prefix, init=init))
    value = 1 if init == "ones" else 0
    return [ms.Parameter(ms.Tensor(np.full((), value, ms.dtype_to_nptype(p.dtype))), name=f"{prefix}.{p.name}",
                         requires_grad=False) for p in params]


def build(self, attrs: Dict[str, str], full: Callable[[int], bool]) -> None:
    """Set ``self.<attr>`` for each ``attr -> init`` of ``attrs``: a ``ParameterTuple`` as long as
    ``self.parameters``, MindSpore's slot for parameter ``i`` when ``full(i)``, else a placeholder (:func:`slots`)."""
    import mindspore as ms
    made = {attr: [] for attr in attrs}
    for i, p in enumerate(self.parameters):
        for attr, init in attrs.items():
            made[attr] += slots([p], attr, init, full(i))
    for attr, value in made.items():
        setattr(self, attr, ms.ParameterTuple(value))


def group_indices(self, wanted: Callable[[dict], bool]) -> List[int]:
    """Indices into ``self.parameters`` of the parameters whose param group satisfies ``wanted(group)``."""
    out = []
    for group_id, group in enumerate(self.param_groups):
        if wanted(group):
            out.extend(range(self.group_start_id[group_id], self.group_start_id[group_id + 1]))
    return out


def ensure_full(self, attrs: Dict[str, str], indices: Iterable[int]) -> None:
    """Swap the placeholders of the parameters at ``indices`` in each ``self.<attr>`` (``attr -> init``) for
    MindSpore's full-size slots (:func:`slots`), keeping every other slot object; a no-op when they are full already
    or the optimizer is not built yet (an attribute missing or not as long as ``self.parameters``)."""
    import mindspore as ms
    params = self.parameters
    current: Dict[str, Optional[tuple]] = {attr: getattr(self, attr, None) for attr in attrs}
    if any(value is None or len(value) != len(params) for value in current.values()):
        return
    missing = sorted({i for i in indices for value in current.values()
                      if tuple(value[i].shape) != tuple(params[i].shape)})
    if not missing:
        return
    for attr, init in attrs.items():
        value = list(current[attr])
        for i in missing:
            if tuple(value[i].shape) != tuple(params[i].shape):
                value[i], = slots([params[i]], attr, init, True)
        setattr(self, attr, ms.ParameterTuple(value))
