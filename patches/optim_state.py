"""``optimizer.state_dict()`` / ``load_state_dict()`` and the lr schedulers' in PyTorch's layout, restored in place.

What a resume needs (``torch.save({'net': ..., 'optimizer': optimizer.state_dict(), 'scheduler': ...})``, then
``optimizer.load_state_dict(ckpt['optimizer'])`` in a new process) did not work with MindTorch 0.4.0:

* ``Adam``/``AdamW``/``SGD.state_dict()`` returned MindSpore's layout (``{'exp_avg': [...], 'state_step': ...,
  'state': {}}``) that real PyTorch cannot load, and loading replaced each group's lr ``Parameter`` by a new one
  that the optimizer never reads (``self.lrs`` keeps the old): a resumed run trained with the initial lr. Moments
  were written with ``set_data``, which swaps the storage compiled graphs hold.
* Schedulers saved MindSpore internals (``increase_tensor``, a float ``last_epoch``) and loaded with ``set_data``.

Here, for ``torch.optim.Adam``, ``AdamW`` and ``SGD``:

* ``state_dict()`` is PyTorch's: ``{'state': {i: {'step': tensor(5.), 'exp_avg': ..., 'exp_avg_sq': ...
  [, 'max_exp_avg_sq']}}, 'param_groups': [{'lr': 0.001, 'betas': (0.9, 0.999), ..., 'params': [0, 1, ...]}]}``
  (SGD: ``{'momentum_buffer': ...}`` once a momentum step ran). State appears, as in PyTorch, after the first
  step; the values are copies.
* ``load_state_dict(sd)`` takes that layout, whether written by PyTorch or here, and writes moments, the step
  count and each group's lr into the optimizer's existing ``Parameter``s with ``mindspore.ops.assign`` (in place);
  other hyper-parameters (betas, eps, weight_decay, momentum...) are set in the groups. A state tensor whose shape
  differs from its parameter raises ``ValueError`` naming the parameter index and the user's ``file:line``.
  MindTorch's own layout still loads (delegated to MindTorch).
* MindSpore's Adam/AdamW keep one global step count (``state_step``) where PyTorch keeps one per parameter: saving
  writes the global count for every parameter, or, once the optimizer counts per parameter
  (``patches/adam_steps.py``, ``_adapter_step_counts``), each parameter's own (none for a parameter never
  updated); loading sets the global count to the largest and hands the per-parameter counts to
  ``_adapter_load_steps`` (per-parameter mode when they differ). Without that patch, differing counts are warned.

For MindSpore-based schedulers (MindTorch's own; since patches/lr_scheduler.py, ``torch.optim.lr_scheduler`` is
PyTorch's own module, whose state dicts are PyTorch's, so this applies only to schedulers built on
``mindspore.experimental.optim.lr_scheduler`` or MindTorch's ``_LRScheduler_Common``), except ``SequentialLR``:
``state_dict()`` holds plain Python
values (``last_epoch`` an int, ``base_lrs``/``_last_lr`` floats, ``_step_count``), loadable by PyTorch;
``load_state_dict`` accepts PyTorch's and assigns ``last_epoch`` and the lrs in place.

Other optimizers (Adadelta, Adagrad, RMSprop, ...) keep MindTorch's behaviour.

Replaces: ``state_dict`` and ``load_state_dict`` of ``torch.optim.Adam/AdamW/SGD`` and of the scheduler classes in
:data:`SCHEDULERS`.
"""
from __future__ import annotations

import copy
import functools
import types
import warnings

from adapter import backend, hooks

from . import Patch, patch_attr
from ._wrap_once import wrap_attr

_PT_GROUP_DEFAULTS = {
    "Adam": {"foreach": None, "capturable": False, "differentiable": False, "fused": None,
             "decoupled_weight_decay": False},
    "AdamW": {"foreach": None, "capturable": False, "differentiable": False, "fused": None,
              "decoupled_weight_decay": True},
    "SGD": {"foreach": None, "differentiable": False, "fused": None},
}
_MS_ONLY_GROUP_KEYS = {"grad_centralization"}


def _kind(optimizer):
    from mindtorch.torch.optim import SGD, Adam, AdamW
    for cls in (AdamW, Adam, SGD):
        if isinstance(optimizer, cls):
            return cls.__name__
    return None


def _to_np(value):
    import numpy as np
    import mindspore as ms
    if backend.is_tensor(value):
        return value.asnumpy()
    return np.asarray(value)


def _new_tensor(array):
    import mindtorch.torch as torch
    return torch.tensor(array)


def _per_param_slots(opt):
    """[(ms attribute, pytorch name, ParameterTuple)] for per-parameter state; [(attr, name, Parameter)] global."""
    import mindspore as ms
    n = len(opt.parameters)
    per, glob = [], []
    for attr, name in backend.optimizer_state_map(opt).items():
        value = getattr(opt, attr, None)
        if isinstance(value, ms.Parameter):
            glob.append((attr, name, value))
        elif isinstance(value, (tuple, list)) and len(value) == n:
            per.append((attr, name, value))
    return per, glob


def _group_of_index(opt):
    """Flat parameter index -> its param group (dict)."""
    out = []
    for group in opt.param_groups:
        out.extend([group] * len(group["params"]))
    return out


def state_dict(self):
    """PyTorch's ``Optimizer.state_dict()`` layout (see module docstring)."""
    import numpy as np
    kind = _kind(self)
    per, glob = _per_param_slots(self)
    groups = _group_of_index(self)
    step = max((float(_to_np(p).reshape(-1)[0]) for _, _, p in glob), default=0.0)
    counts = hooks.get(self, "step_counts")  # patches/adam_steps.py: each parameter's own count
    counts = counts() if counts is not None else None
    stat = getattr(self, "stat", None) if kind == "SGD" else None
    state = {}
    for i, group in enumerate(groups):
        entry = {}
        if kind in ("Adam", "AdamW"):
            own = step if counts is None else counts[i]
            if own <= 0:
                continue  # never updated: no state (PyTorch creates it at the parameter's first update)
            entry["step"] = _new_tensor(np.array(own, np.float32))
            for attr, name, slots in per:
                if attr == "max_exp_avg_sq" and not dict.get(group, "amsgrad", False):
                    continue
                entry[name] = _new_tensor(_to_np(slots[i]).copy())
        else:  # SGD
            momentum = float(dict.get(group, "momentum", 0.0))
            if momentum == 0.0 or stat is None or float(_to_np(stat[i]).reshape(-1)[0]) != 0.0:
                continue
            for attr, name, slots in per:
                entry[name] = _new_tensor(_to_np(slots[i]).copy())
        state[i] = entry
    param_groups, start = [], 0
    for group in self.param_groups:
        packed = {}
        for key in dict.keys(group):
            if key == "params" or key in _MS_ONLY_GROUP_KEYS:
                continue
            value = group[key]  # lr / initial_lr read as floats (patches/optimizer.py)
            if key in ("lr", "initial_lr"):
                value = float(_to_np(value)) if not isinstance(value, (int, float)) else float(value)
            packed[key] = copy.deepcopy(value)
        for key, value in _PT_GROUP_DEFAULTS.get(kind, {}).items():
            packed.setdefault(key, value)
        n = len(group["params"])
        packed["params"] = list(range(start, start + n))
        start += n
        param_groups.append(packed)
    return {"state": state, "param_groups": param_groups}


def _is_pytorch_layout(opt, sd) -> bool:
    return isinstance(sd, dict) and "state" in sd and "param_groups" in sd and \
        not any(attr in sd for attr in backend.optimizer_state_map(opt))


def load_state_dict(self, state_dict, *, _original=None):
    """Load PyTorch's layout in place (see module docstring).

    Raises:
        ValueError: different number of groups / group sizes (PyTorch's messages), or a state tensor's shape differs
            from its parameter's.
    """
    import numpy as np
    import mindspore as ms
    from adapter.userframe import user_location

    if not _is_pytorch_layout(self, state_dict):
        return _original(self, state_dict)
    where = user_location(3)
    groups, saved_groups = self.param_groups, state_dict["param_groups"]
    if len(groups) != len(saved_groups):
        raise ValueError("loaded state dict has a different number of parameter groups")
    if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
        raise ValueError("loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                         "group")
    saved_ids = [pid for s in saved_groups for pid in s["params"]]
    state = state_dict["state"]
    kind = _kind(self)
    needs_slots = hooks.get(self, "needs_slots")
    if needs_slots is not None and hooks.get(self, "before_update") is not None:
        # patches/sgd.py, patches/adam_slots.py: slots the group's settings do not read are 0-d placeholders (SGD's
        # with momentum 0, Adam's/AdamW's max_exp_avg_sq without amsgrad); the parameters whose saved group or state
        # reads them (a momentum, a momentum_buffer; amsgrad, a max_exp_avg_sq) get full-size slots first
        saved_group_of = [saved for saved in saved_groups for _ in saved["params"]]
        hooks.get(self, "before_update")([i for i, (saved, pid) in enumerate(zip(saved_group_of, saved_ids))
                                     if needs_slots(saved, state.get(pid, {}))])
    per, glob = _per_param_slots(self)
    params = self.parameters

    def assign(target, array, what, index):
        array = np.asarray(array)
        if tuple(array.shape) != tuple(target.shape):
            if array.size == 1 and int(np.prod(target.shape)) == 1:
                array = array.reshape(target.shape)
            else:
                raise ValueError(f"{where + ': ' if where else ''}optimizer.load_state_dict: state '{what}' of "
                                 f"parameter {index} has shape {tuple(array.shape)}, the parameter has "
                                 f"{tuple(target.shape)}: the checkpoint is for another model or another parameter "
                                 "order")
        ms.ops.assign(target, ms.Tensor(array.astype(ms.dtype_to_nptype(target.dtype))))

    for attr, name, slots in per:
        for i, pid in enumerate(saved_ids):
            value = state.get(pid, {}).get(name)
            value = np.zeros(tuple(slots[i].shape)) if value is None else _to_np(value)
            assign(slots[i], value, name, i)
    load_steps = hooks.get(self, "load_steps")  # patches/adam_steps.py: per-parameter counts
    for attr, name, target in glob:
        steps = sorted({float(_to_np(s[name]).reshape(-1)[0]) for s in state.values() if name in s})
        if load_steps is not None and attr == "state_step":
            own = [state.get(pid, {}).get(name) for pid in saved_ids]
            load_steps([None if v is None else float(_to_np(v).reshape(-1)[0]) for v in own])
        elif len(steps) > 1:
            warnings.warn(f"optimizer.load_state_dict: per-parameter '{name}' counts differ ({steps[0]:g}..."
                          f"{steps[-1]:g}); MindSpore's {type(self).__name__} keeps one count: using "
                          f"{steps[-1]:g}", stacklevel=3)
        assign(target, np.full(tuple(target.shape), steps[-1] if steps else 0.0), name, "(all)")
    stat = getattr(self, "stat", None) if kind == "SGD" else None
    if stat is not None and len(stat) == len(params):
        for i, pid in enumerate(saved_ids):
            has_buffer = state.get(pid, {}).get("momentum_buffer") is not None
            assign(stat[i], np.zeros(tuple(stat[i].shape)) if has_buffer else np.ones(tuple(stat[i].shape)),
                   "stat", i)
    for group, saved in zip(groups, saved_groups):
        for key, value in saved.items():
            if key == "params":
                continue
            if key in ("lr", "initial_lr"):
                group[key] = float(_to_np(value)) if not isinstance(value, (int, float)) else float(value)
                continue
            if key not in group:
                continue  # PyTorch-only flags (foreach, fused, capturable, ...)
            current = dict.get(group, key)
            if isinstance(current, float) and isinstance(value, (int, float)) and not isinstance(value, bool):
                value = float(value)
            elif isinstance(current, tuple) and isinstance(value, (list, tuple)):
                value = tuple(float(v) if isinstance(v, (int, float)) else v for v in value)
            group[key] = value
    return None


# ------------------------------------------------------------------------------------------------ schedulers

_SCHEDULER_SKIP = {"optimizer", "increase_tensor"}


def _plain(value):
    """MindSpore tensors (0-d) -> Python numbers, recursively through lists/tuples."""
    import numpy as np
    import mindspore as ms
    if backend.is_tensor(value):
        array = value.asnumpy()
        if array.dtype == np.float32:  # the shortest decimal that round-trips: 0.005, not 0.004999999888
            return float(str(array.reshape(-1)[0])) if array.size == 1 else [float(str(v)) for v in array.ravel()]
        return array.item() if array.size == 1 else array.tolist()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, float) and type(value) is not float:  # patches/optimizer.LearningRate
        return float(value)
    return value


def _is_data(value) -> bool:
    """Plain data (numbers, strings, None, and lists/tuples/dicts of them): what a scheduler's state is made of."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_data(v) for v in value)
    if isinstance(value, dict):  # dict, Counter (MultiStepLR's milestones), OrderedDict
        return all(_is_data(k) and _is_data(v) for k, v in value.items())
    return False


def scheduler_state_dict(self):
    """PyTorch's ``LRScheduler.state_dict()``: the attributes that are data (not the optimizer, not MindSpore
    operators), tensors as plain Python values."""
    out = {}
    for key, value in self.__dict__.items():
        if key in _SCHEDULER_SKIP:
            continue
        if key == "lr_lambdas":
            out[key] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__) for fn in value]
            continue
        value = _plain(value)
        if _is_data(value):  # MindSpore keeps its operators (P.Cos(), ...) as attributes: not state
            out[key] = copy.deepcopy(value)
    if isinstance(out.get("last_epoch"), float) and float(out["last_epoch"]).is_integer():
        out["last_epoch"] = int(out["last_epoch"])
    if "last_epoch" in out:
        out.setdefault("_step_count", int(out["last_epoch"]) + 1)
        out.setdefault("_get_lr_called_within_step", False)
        out.setdefault("_is_initial", False)
    return out


def scheduler_load_state_dict(self, state_dict):
    """Load a scheduler ``state_dict`` written by PyTorch or here; tensors held by the scheduler are assigned in
    place (``last_epoch``, the optimizer's lr ``Parameter``s in ``_last_lr``), other attributes are set."""
    import mindspore as ms
    for key, value in dict(state_dict).items():
        current = self.__dict__.get(key)
        if key == "lr_lambdas":
            for fn, saved in zip(self.lr_lambdas, value):
                if saved is not None:
                    fn.__dict__.update(saved)
        elif isinstance(current, ms.Parameter):
            ms.ops.assign(current, ms.Tensor(_plain(value), current.dtype).reshape(current.shape))
        elif key in ("_last_lr", "base_lrs") and isinstance(current, list) and len(current) == len(value):
            for i, (cur, new) in enumerate(zip(current, value)):
                new = float(_plain(new))
                if isinstance(cur, ms.Parameter):
                    ms.ops.assign(cur, ms.Tensor(new, cur.dtype))
                elif isinstance(cur, ms.Tensor):
                    current[i] = ms.Tensor(new, cur.dtype)
                else:
                    current[i] = new
        elif isinstance(current, ms.Tensor):
            continue  # MindSpore constants
        else:
            self.__dict__[key] = copy.deepcopy(value)


def _load_wrapper(original):
    """``cls.load_state_dict`` for Adam/AdamW/SGD: :func:`load_state_dict` with ``original`` (MindTorch's, for its
    own layout); ``functools.wraps(original)``."""
    @functools.wraps(original)
    def load(self, sd, _original=original):
        return load_state_dict(self, sd, _original=_original)
    return load


OPTIMIZERS = ("Adam", "AdamW", "SGD")
# the scheduler classes apply() finds in MindTorch 0.4.0's lr_scheduler module (MindSpore's, and its own base)
SCHEDULERS = tuple(f"mindspore.experimental.optim.lr_scheduler.{name}" for name in (
    "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR", "ExponentialLR", "LambdaLR",
    "LinearLR", "MultiStepLR", "MultiplicativeLR", "PolynomialLR", "StepLR")) + (
    "torch.optim.lr_scheduler._LRScheduler_Common",)


def apply() -> None:
    import mindtorch.torch.optim as optim
    from mindtorch.torch.optim import lr_scheduler as sched
    from mindspore.experimental.optim.lr_scheduler import LRScheduler as MSLRScheduler

    for name in OPTIMIZERS:
        cls = getattr(optim, name)
        patch_attr(cls, "state_dict", state_dict)
        wrap_attr(cls, "load_state_dict", NAME, _load_wrapper)
    for name in dir(sched):
        cls = getattr(sched, name)
        if not isinstance(cls, type) or cls is sched.SequentialLR:
            continue
        if issubclass(cls, (MSLRScheduler, backend.internal("LRScheduler_Common"))):
            patch_attr(cls, "state_dict", scheduler_state_dict)
            patch_attr(cls, "load_state_dict", scheduler_load_state_dict)


NAME = "optim_state"
PATCH = Patch(NAME, "optimizer/scheduler state_dict() in PyTorch's layout; load_state_dict restores Adam "
                    "moments, step, lr in place", "post-import", apply,
              replaces=tuple(f"{owner}.{name}" for owner in [f"torch.optim.{c}" for c in OPTIMIZERS] + list(SCHEDULERS)
                             for name in ("state_dict", "load_state_dict")))
