"""``torch.optim`` optimizers: ``step()`` reads ``param.grad`` and skips parameters whose grad is None; lr is a float.

MindTorch 0.4.0's optimizers are MindSpore's ``mindspore.experimental.optim`` classes. Three differences from
PyTorch are fixed here:

* ``step()`` without arguments substitutes zeros for a ``None`` grad. For Adam/AdamW/momentum SGD that still moves
  the parameter (weight decay, momentum) and its state, where PyTorch leaves both untouched
  (``torch/optim/adam.py``: ``if p.grad is not None``). Here the update runs over all parameters (one fused call,
  as MindSpore's optimizers are written) and the skipped parameters and their per-parameter state slots are restored
  afterwards. Residual difference: optimizers with one *global* step counter (MindSpore's Adamax/NAdam/RAdam/ASGD
  ``step_t``) count a step for every parameter; it matters only for a parameter that has a grad in some steps and
  not others, and is warned (:func:`_after_update`, below). Adam and AdamW switch to per-parameter counts there
  (``patches/adam_steps.py``: the ``_adapter_steps_diverge`` hook, called before such an update, and
  ``_adapter_steps_grow`` after ``add_param_group``) and are not warned.
* ``param_groups[i]['lr']`` is a MindSpore ``Parameter``; PyTorch users read it as a Python float
  (``f"{lr:.4f}"``) and assign floats to it. Reading now gives a float (:class:`LearningRate`), and assigning writes
  into the same ``Parameter`` that the optimizer and MindSpore's lr schedulers use, so all views agree.
* Before each update, an optimizer class's ``_adapter_before_update()`` hook runs when it has one (SGD,
  ``patches/sgd.py``: the momentum slots of a group whose momentum was switched on); the fused compiled step
  (``adapter/compiled_step.py``) calls it too. After each update, ``_adapter_after_update()`` (:func:`_after_update`)
  warns once when a parameter took its first update at a global step > 1 in an optimizer whose update reads its one
  global step count (Adamax, NAdam, RAdam, ASGD; Adagrad with ``lr_decay``; Adam and AdamW only without
  ``patches/adam_steps.py``): its updates differ from
  PyTorch's, which counts steps per parameter; the fused compiled step calls it too.
* Optimizers are registered with the eager bridge so that parameters owned by no module still get gradients.
* The update runs with grad mode off (:class:`_no_grad`), as PyTorch's ``step()`` does
  (``torch/optim/optimizer.py``, ``_use_grad_for_differentiable``). A module called in grad mode between
  ``backward()`` and ``step()`` (the script's own forward, or one the step rewrite runs after the site call) opens an
  eager-bridge recording (``adapter/tape.py``); the update's ``@jit`` ``implementation`` ran inside it, as a
  ``grad_jit`` call, and where its graph came from MindSpore's compile cache (a script's second run) ``step()``
  raised "Can not find graph_phase_: patches.sgd.implementation... in jit_compile_info_"
  (tests/test_step_after_module_call.py). Grad mode off, the executor runs it as a plain jit call, not recorded.
* A param group holding a float64 parameter, in an optimizer class that updates float64 parameters in float64
  (``_adapter_float64_lr = True``: SGD ``patches/sgd.py``, Adam ``patches/adam.py``), keeps its lr ``Parameter``
  in float64, holding the Python float exactly (MindSpore makes every lr a float32 ``Parameter``: 0.1 became
  0.10000000149, a relative error of 1.5e-8 in every float64 update; PyTorch uses the Python float).

* Parameters of different models that share a MindSpore name (two ``nn.Linear``: both ``weight``) can share an
  optimizer: in one list, in group dicts, or by ``add_param_group`` (:func:`_unique_names`: MindSpore refused "its
  name 'weight' already exists"); and a group added to a built optimizer gets its per-parameter state slots
  (:func:`_extend_slots`: the first ``step()`` raised "The tuples in HyperMap should have the same length").

Replaces: ``mindspore.experimental.optim.Optimizer.add_param_group``, and ``__init__`` and ``step`` of MindTorch's
``_Optimizer`` (and adds its ``_adapter_after_update``) (the base of every ``torch.optim`` class: ``torch.optim.Optimizer``, ``Adam``, ``SGD``...).
"""
from __future__ import annotations

import functools

import numpy as np

from adapter import hooks

from . import Patch, get_original, patch_attr


class LearningRate(float):
    """A learning rate as PyTorch exposes it (a Python float) that MindSpore's lr schedulers can still read with
    ``.value()`` (they call ``group['lr'].value()`` in ``LRScheduler.__init__``)."""

    def value(self):
        import mindspore as ms
        return ms.Tensor(float(self), ms.float32)


class ParamGroup(dict):
    """An optimizer param group whose ``'lr'`` reads as a float and writes into the optimizer's lr ``Parameter``.

    The dict keeps MindSpore's ``Parameter`` as the stored value, so MindSpore code that uses ``dict.get`` /
    ``self.lrs[i]`` is unchanged.
    """

    _FLOAT_KEYS = ("lr", "initial_lr")

    def __init__(self, group, assigned=None):
        super().__init__(group)
        self._assigned = dict(getattr(group, "_assigned", {}))  # key -> the Python float the user gave
        self._assigned.update(assigned or {})

    def __getitem__(self, key):
        value = dict.__getitem__(self, key)
        if key not in self._FLOAT_KEYS:
            return value
        as_float = _as_float(value)
        # A float32 Parameter: give back the exact float the user assigned while it still matches.
        shadow = self._assigned.get(key)
        if shadow is not None and _is_float32(value) and np.float32(shadow) == np.float32(as_float):
            return LearningRate(shadow)
        return as_float

    def __setitem__(self, key, value):
        import mindspore as ms
        stored = dict.get(self, key)
        if key in self._FLOAT_KEYS and isinstance(stored, ms.Parameter):
            value = float(_as_float(value))
            ms.ops.assign(stored, ms.Tensor(value, stored.dtype))  # in place, like the schedulers do
            self._assigned[key] = value
            return
        dict.__setitem__(self, key, value)


def _is_float32(value) -> bool:
    import mindspore as ms
    return isinstance(value, ms.Tensor) and value.dtype == ms.float32


def _as_float(value):
    import mindspore as ms
    if isinstance(value, ms.Tensor) and value.dtype == ms.float64:  # patches/sgd.py, adam.py: the exact float
        return LearningRate(float(value.asnumpy()))
    if isinstance(value, ms.Tensor):  # Parameter or Tensor, float32: its shortest decimal (0.005, not 0.0049999)
        return LearningRate(str(np.float32(value.asnumpy())))
    if isinstance(value, float) and not isinstance(value, LearningRate):
        return LearningRate(value)
    return value


def _per_param_state(optimizer):
    """The optimizer's per-parameter state: ParameterTuples as long as its parameter list (exp_avg, accum, ...).

    MindSpore's ``Cell.__setattr__`` keeps every ParameterTuple attribute in ``_params_list``.
    """
    n = len(optimizer.parameters)
    from adapter import backend
    return [value for name, value in backend.optimizer_params_list(optimizer).items()
            if name != "parameters" and isinstance(value, (tuple, list)) and len(value) == n]


class _no_grad:
    """Grad mode off for the update (PyTorch runs ``Optimizer.step``'s update under ``torch.no_grad()``:
    ``torch/optim/optimizer.py`` ``_use_grad_for_differentiable``), restored afterwards."""

    def __enter__(self):
        from adapter import backend
        self.was = backend.grad_enabled()
        if self.was:
            backend.set_grad_enabled(False)

    def __exit__(self, *exc):
        if self.was:
            from adapter import backend
            backend.set_grad_enabled(True)


def step(self, grads=None, closure=None):
    """PyTorch's ``Optimizer.step(closure=None)``; MindTorch's explicit ``grads`` tuple is still accepted.

    With ``grads=None`` the gradients are the parameters' ``.grad``; a parameter whose ``.grad`` is None is left
    unchanged together with its optimizer state. Returns ``closure()``'s value when a closure is given.
    """
    from mindtorch.torch.autograd import enable_grad
    from adapter import events

    loss = None
    if closure is not None:
        with enable_grad():
            loss = closure()
    events.emit("step_begin", self)
    with _no_grad():
        skipped = _update(self, grads)
    _after_update(self, skipped)
    events.emit("step_end", self)
    return loss


#: optimizer class name -> whether its update reads the global step count with these hyper-parameters, where not
#: always (Adagrad: only through ``lr / (1 + step * lr_decay)``; measured equal to PyTorch with ``lr_decay=0``)
_STEP_COUNT_READ_IF = {"Adagrad": lambda opt: any(float(g.get("lr_decay", 0.0) or 0.0) != 0.0
                                                   for g in opt.param_groups)}


def _global_step(self):
    """The optimizer's global step count Parameter when its update reads it (MindSpore's Adam/AdamW
    ``state_step``, Adamax/NAdam/RAdam/ASGD/Adagrad ``step_t``), else None (SGD, RMSprop, Adadelta have none;
    ``_adapter_step_count_unread`` classes, patches/rprop.py: Rprop, no longer read it; Adagrad with ``lr_decay=0``
    only multiplies it by 0)."""
    import mindspore as ms
    if hooks.get(type(self), "step_count_unread", False):
        return None
    if hooks.get(self, "steps_diverge") is not None:
        return None  # patches/adam_steps.py: Adam/AdamW count per parameter once they diverge, as PyTorch
    for cls in type(self).__mro__:
        read = _STEP_COUNT_READ_IF.get(cls.__name__)
        if read is not None:
            if not read(self):
                return None
            break
    for attr in _GLOBAL_STEPS:
        step = getattr(self, attr, None)
        if isinstance(step, ms.Parameter):
            return step
    return None


def _after_update(self, skipped=()) -> None:
    """After an update (``step()``, or one fused into a compiled step: ``adapter/compiled_step.py`` calls this
    too; ``skipped``: the indices :func:`_update` skipped): warn once, at the user's line, when a parameter's update
    is counted differently from PyTorch's.

    MindSpore's Adam, AdamW, Adamax, NAdam, RAdam, ASGD (and Adagrad with ``lr_decay``) read ONE step count per
    optimizer (:func:`_global_step`), which every update advances; PyTorch keeps one per parameter
    (``state['step']``, created at the parameter's first update, advanced only when it is updated). Two cases differ:

    * a parameter whose ``.grad`` was None at step 1 (skipped by :func:`_update`: a branch not taken, a GAN's other
      model, a layer unfrozen later) gets at its first update the bias correction / schedule of the global count
      instead of step 1: measured 2026-11-26, 4 steps, first update at step 2, max |difference| to PyTorch 2.13 of
      4.7e-3 (Adam, AdamW, lr 0.01), 8.1e-3 (Adamax), 1.0e-3 (NAdam), 6.8e-3 (RAdam), 4.6e-3 (Adagrad
      ``lr_decay=0.5``), 1.1e-5 (ASGD ``lambd=0.1, t0=1``);
    * a parameter updated, then skipped, then updated again: its count runs ahead of PyTorch's (2.2e-3 Adam, 3.5e-3
      RAdam, grad at steps 1, 3, 4) (tests/fixtures/late_first_update_cases.py, both MindSpore 2.5-dev and 2.10).

    Not fixed here (each update would need a per-parameter count): warned, for the first such update.

    Bookkeeping (in the optimizer's ``__dict__``): ``_adapter_pending``, the indices (in ``self.parameters``) never
    updated yet, parameters added by ``add_param_group`` joining it, and ``_adapter_gapped``, those skipped after an
    update; per step only these are looked at (``.grad`` not None: updated, as :func:`_update` and the fused step
    update exactly those). The count is read only when one of them is updated. At the optimizer's first update a
    count above 1 means a loaded state dict (``load_state_dict``: the parameters' state is restored, not their
    history), and nothing is warned for that optimizer. After a warning (or the ``add_param_group`` one,
    :func:`_extend_slots`), or when the class reads no count, nothing is looked at again (``_adapter_pending``
    False). Residuals: a fused step that ``GradScaler`` skipped (inf/NaN) counts as an update here; a
    ``load_state_dict`` into an optimizer that already stepped is not told apart.
    """
    state = self.__dict__
    pending = state.get("_adapter_pending")
    if pending is False:
        return
    import numpy as np
    params = self.parameters
    first = pending is None
    if first:
        pending = state["_adapter_pending"] = []
        state["_adapter_covered"] = 0
        state["_adapter_gapped"] = set()
    if len(params) > state["_adapter_covered"]:  # at the first update, or a group added since
        pending.extend(range(state["_adapter_covered"], len(params)))
        state["_adapter_covered"] = len(params)
    gapped = state["_adapter_gapped"]
    late = [i for i in pending if params[i].grad is not None]
    again = [i for i in gapped if params[i].grad is not None]
    if len(skipped):  # updated before, no grad now: this step is counted for them here, not by PyTorch
        never = set(pending)
        gapped.update(i for i in skipped if i not in never)
    if not late and not again:
        return
    step = _global_step(self)
    if step is None:
        state["_adapter_pending"] = False  # no count read: nothing to watch
        return
    count = int(float(np.asarray(step.asnumpy()).max()))  # after this update: PyTorch's count of `late` is 1
    if first and count > 1:
        state["_adapter_pending"] = False  # a loaded state dict (above)
        return
    name = type(self).__name__
    which = again or (late if count > 1 else None)
    if which:
        from adapter import userframe
        shapes = ", ".join(str(tuple(params[i].shape)) for i in which[:3]) + (" ..." if len(which) > 3 else "")
        what = ("were updated again after step(s) without a grad" if again else
                "took their first update at step " + str(count) + " (their .grad was None before)")
        userframe.warn_user(
            f"{name}: {len(which)} parameter(s) (shapes {shapes}) {what}: MindSpore's {name} keeps one step count "
            f"for all parameters ({count} now), where PyTorch counts each parameter's own updates; their bias "
            f"correction / schedule, and so their updates, differ from PyTorch's (docs/known_differences.md)")
        state["_adapter_pending"] = False
        return
    done = set(late)
    pending[:] = [i for i in pending if i not in done]


def _update(self, grads) -> list:
    """The update over ``grads`` (None: the parameters' ``.grad``, skipping those without one, module docstring).
    Returns the indices (in ``self.parameters``) of the parameters skipped."""
    import mindspore as ms
    before = hooks.get(self, "before_update")  # patches/sgd.py: momentum slots made when switched on
    if before is not None:
        before()
    if grads is None:
        params = self.parameters
        skipped = [i for i, p in enumerate(params) if p.grad is None]
        if len(skipped) == len(params):
            return skipped
        grads = tuple(ms.ops.zeros_like(p) if p.grad is None else p.grad for p in params)
        saved = []
        if skipped:
            diverge = hooks.get(self, "steps_diverge")  # patches/adam_steps.py: per-parameter counts
            if diverge is not None:
                diverge()
            slots = [params] + _per_param_state(self)
            saved = [(slot[i], ms.Tensor(slot[i].asnumpy())) for slot in slots for i in skipped]
        self.construct(grads)
        for param, value in saved:  # in place: set_data would swap the storage that compiled graphs hold
            ms.ops.assign(param, value)
        return skipped
    self.construct(tuple(grads))
    return []


def _float64_lr(self, lr) -> None:
    """The last param group's lr as a float64 MindTorch ``Parameter`` (same name) when the group holds a float64
    parameter:
    the user's Python float exactly (``lr``), or the float32 value it had (a tensor lr). Replaces the Parameter in
    ``self.lrs`` and in the group (``self.lrs`` is a list while ``add_param_group`` runs: patches/optimizer_graph.py
    makes it a ParameterTuple after)."""
    import mindspore as ms
    group = self.param_groups[-1]
    old = dict.get(group, "lr")
    if not isinstance(old, ms.Parameter) or old.dtype != ms.float32 or \
            not any(p.dtype == ms.float64 for p in group["params"]):
        return
    value = float(lr) if isinstance(lr, (int, float)) else float(old.asnumpy())
    # a MindTorch Parameter: the schedulers' `lr * gamma` then keeps gamma a double (patches/float64_precision.py;
    # on a MindSpore Parameter gamma became float32: StepLR's 0.1 * 0.7 gave 0.0699999988)
    from mindtorch.torch import float64, tensor
    from mindtorch.torch.nn import Parameter
    new = Parameter(tensor(value, dtype=float64), requires_grad=old.requires_grad, name=old.name)
    dict.__setitem__(group, "lr", new)
    for i, x in enumerate(self.lrs):
        if x is old:
            self.lrs[i] = new


def _unique_names(param_group) -> None:
    """Give the group's parameters MindSpore names no other parameter in use has (:func:`adapter.param_names.unique`).

    MindSpore's optimizer is a ``Cell``: ``self.parameters += tuple(group["params"])`` and the ``ParameterTuple``
    made after refuse two parameters with one ``Parameter.name`` ("its name 'weight' already exists. Please set a
    unique name for the parameter"), and MindTorch names a parameter by its attribute path, so any two models' (or
    two ``nn.Linear``'s) parameters in one optimizer collided: ``SGD(list(a.parameters()) + list(b.parameters()))``,
    ``[{"params": a...}, {"params": b...}]``, ``add_param_group({"params": head.parameters()})``. PyTorch never
    reads these names. A later parameter is renamed ``<name>#<k>``, the mechanism ``backward()`` already uses;
    ``named_parameters()``, ``state_dict()`` keys and the optimizer's ``state_dict()`` (indices) do not change.

    An iterator of parameters is made a list in the group first (PyTorch's ``add_param_group`` does the same);
    a ``set``, a single ``Parameter`` or non-parameters are left for MindSpore's own checks and errors.
    """
    import mindspore as ms
    from adapter import param_names
    if not isinstance(param_group, dict) or "params" not in param_group:
        return
    params = param_group["params"]
    if isinstance(params, ms.Parameter):
        params = [params]
    elif isinstance(params, (set, frozenset, ms.Tensor)):
        return
    else:
        params = param_group["params"] = list(params)
    param_names.unique([p for p in params if isinstance(p, ms.Parameter)])


#: (optimizer class name, slot attribute) -> the initial value of a new parameter's slot, where not zeros
#: (MindSpore's ``__init__``: ``SGD.stat`` ``init='ones'``; ``ASGD.mu`` / ``NAdam.mu_product`` ``Tensor(1.)``;
#: ``Adagrad.accum`` its ``initial_accumulator_value``, kept in the group's defaults)
_SLOT_INIT = {("SGD", "stat"): lambda opt: 1.0, ("ASGD", "mu"): lambda opt: 1.0,
              ("NAdam", "mu_product"): lambda opt: 1.0,
              ("Adagrad", "accum"): lambda opt: float(opt.defaults.get("initial_accumulator_value", 0.0))}
#: the optimizer's global step counters (one per optimizer in MindSpore, one per parameter in PyTorch)
_GLOBAL_STEPS = ("state_step", "step_t")


def _slot_init(self, attr):
    for cls in type(self).__mro__:
        init = _SLOT_INIT.get((cls.__name__, attr))
        if init is not None:
            return init(self)
    return 0.0


def _extend_slots(self, n_old: int) -> None:
    """After ``add_param_group`` on a built optimizer: the per-parameter state slots for the new parameters.

    MindSpore's optimizers make their slots once, in ``__init__`` (``self.exp_avg = self.parameters.clone(...)``),
    and ``add_param_group`` does not extend them, so the first ``step()`` after adding a group raised "The tuples in
    HyperMap should have the same length" (Adam, AdamW, SGD, RMSprop, ...). Here every ``ParameterTuple`` (and
    ASGD/NAdam's lists) as long as the old parameter list gets the new parameters' slots, named and initialised as
    ``__init__`` makes them (``<attr>.<name>``, zeros unless :data:`_SLOT_INIT` says otherwise); an optimizer class
    may supply its own (``_adapter_new_slots(attr, params, group)``: SGD's 0-d placeholders for momentum 0,
    ``patches/sgd.py``). ``self.parameters`` becomes a ``ParameterTuple`` again (MindSpore left a tuple).

    MindSpore's Adam-family optimizers keep one global step counter (``state_step`` / ``step_t``) where PyTorch
    counts per parameter from 0: a group added after steps ran gets the bias correction of the later step count.
    That is warned at the user's ``add_param_group`` line (docs/known_differences.md).
    """
    import mindspore as ms
    import numpy as np
    from adapter import backend, userframe
    params = list(self.parameters)
    new = params[n_old:]
    self.parameters = ms.ParameterTuple(params)
    if not new:
        return
    group = self.param_groups[-1]
    custom = hooks.get(self, "new_slots")
    lists = {name: value for name, value in vars(self).items()
             if isinstance(value, list) and value and all(isinstance(x, ms.Parameter) for x in value)}
    slots = dict(backend.optimizer_params_list(self), **lists)
    own = tuple(hooks.get(self, "own_slots", ()))  # patches/adam_steps.py: extended by its own hook
    for attr, value in slots.items():
        if attr in ("parameters", "lrs") + own or not isinstance(value, (tuple, list)) or len(value) != n_old \
                or any(x is y for x, y in zip(value, params)):
            continue
        made = custom(attr, new, group) if custom is not None else None
        if made is None:
            init = _slot_init(self, attr)
            if isinstance(value, ms.ParameterTuple):
                made = list(ms.ParameterTuple(new).clone(prefix=attr, init="zeros" if init == 0.0 else "ones")) \
                    if init in (0.0, 1.0) else [ms.Parameter(ms.Tensor(np.full(p.shape, init, ms.dtype_to_nptype(
                        p.dtype))), name=f"{attr}.{p.name}", requires_grad=False) for p in new]
            else:  # ASGD's mu/eta, NAdam's mu_product: a 0-d float32 Parameter per parameter
                made = [ms.Parameter(ms.Tensor(init), f"{attr}_{p.name}") for p in new]
        extended = list(value) + list(made)
        setattr(self, attr, ms.ParameterTuple(extended) if isinstance(value, ms.ParameterTuple) else extended)
    grow = hooks.get(self, "steps_grow")
    if grow is not None:  # patches/adam_steps.py: the new parameters count their own steps from 0, as PyTorch's
        grow(n_old)
        return
    # a class whose update does not read its global count (patches/rprop.py: Rprop; Adagrad with lr_decay=0) starts
    # the new parameters as PyTorch does: nothing to warn (_global_step)
    step = _global_step(self)
    if step is not None and float(np.asarray(step.asnumpy()).max()) > 0:
        userframe.warn_user(
            f"add_param_group after {int(np.asarray(step.asnumpy()).max())} steps: MindSpore's "
            f"{type(self).__name__} keeps one step count for all parameters, so the new group's first updates "
            f"use the bias correction of that count, where PyTorch counts the new parameters' steps from 0; "
            f"their updates differ from PyTorch's (smaller at first)")
        self.__dict__["_adapter_pending"] = False  # warned once: _after_update says no more


def add_param_group(self, param_group):
    """MindSpore's ``Optimizer.add_param_group`` over parameters given unique MindSpore names (:func:`_unique_names`;
    a built optimizer's slots extended, :func:`_extend_slots`), then the group becomes a :class:`ParamGroup` (its lr a float;
    float64 groups of float64-lr classes keep a float64 lr, :func:`_float64_lr`) and a group added after construction
    is registered with the eager bridge."""
    from mindspore.experimental.optim import Optimizer as MSOptimizer
    from adapter import tape
    import mindspore as ms
    lr = param_group.get("lr", self.defaults.get("lr")) if isinstance(param_group, dict) else None
    _unique_names(param_group)
    built = isinstance(getattr(self, "parameters", None), ms.ParameterTuple)  # a list while __init__ runs
    n_old = len(self.parameters) if built else 0
    get_original(MSOptimizer, "add_param_group")(self, param_group)
    if built:
        _extend_slots(self, n_old)
    assigned = {"lr": float(lr)} if isinstance(lr, (int, float)) else {}
    if hooks.get(type(self), "float64_lr", False):
        _float64_lr(self, lr)
    self.param_groups[-1] = ParamGroup(self.param_groups[-1], assigned)
    if hasattr(self, hooks.attr("free_params")):  # a group added after construction
        tape.register_optimizer(self)


def __init__(self, *args, **kwargs):
    """MindTorch's ``Optimizer.__init__``, then every param group is a :class:`ParamGroup` and the optimizer is
    registered with the eager bridge (parameters owned by no module get gradients)."""
    from adapter import backend, tape
    _Optimizer = backend.internal("Optimizer")
    get_original(_Optimizer, "__init__")(self, *args, **kwargs)
    self.param_groups = [g if isinstance(g, ParamGroup) else ParamGroup(g) for g in self.param_groups]
    tape.register_optimizer(self)


def apply() -> None:
    from mindspore.experimental.optim import Optimizer as MSOptimizer
    from adapter import backend
    _Optimizer = backend.internal("Optimizer")

    functools.update_wrapper(add_param_group, get_original(MSOptimizer, "add_param_group"))
    functools.update_wrapper(__init__, get_original(_Optimizer, "__init__"))
    patch_attr(MSOptimizer, "add_param_group", add_param_group)
    patch_attr(_Optimizer, "__init__", __init__)
    patch_attr(_Optimizer, "step", step)
    patch_attr(_Optimizer, hooks.attr("after_update"), _after_update)  # also run after a fused update (compiled_step)


PATCH = Patch("optimizer",
              "optimizer.step() uses param.grad, skips params whose grad is None; param_groups[i]['lr'] is a float; "
              "same-named parameters of two models in one optimizer; add_param_group on a built optimizer; the update "
              "runs with grad mode off (as PyTorch's)",
              "post-import", apply,
              replaces=("mindspore.experimental.optim.Optimizer.add_param_group",
                        "mindtorch.torch.optim.optimizer._Optimizer.__init__",
                        "mindtorch.torch.optim.optimizer._Optimizer.step",
                        "mindtorch.torch.optim.optimizer._Optimizer._adapter_after_update"))
