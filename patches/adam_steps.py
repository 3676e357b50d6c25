"""``torch.optim.Adam`` / ``AdamW`` count steps per parameter, as PyTorch's ``state['step']``, once they diverge.

MindSpore's Adam and AdamW (MindTorch 0.4's ``torch.optim.Adam`` / ``AdamW``) keep ONE step count per optimizer
(``state_step``, int32), advanced by every update; the bias corrections ``1 - beta1^t``, ``1 - beta2^t`` read it.
PyTorch 2.13 keeps one per parameter (``torch/optim/adam.py``, ``_init_group``: ``state['step']`` is created, 0, at
the parameter's first update with a grad, and ``_single_tensor_adam`` advances it by 1 at each of that parameter's
updates). They differ for a parameter whose ``.grad`` is None at some step (``step()`` skips it,
``patches/optimizer.py``): a layer unfrozen later, a branch not taken, a GAN's partial update, a group added by
``add_param_group`` after steps ran, a resume from a checkpoint whose counts differ. Measured before this patch
(tests/test_late_first_update.py, 4 steps, lr 0.01): max |difference| to PyTorch 4.7e-3 (first update at step 2,
Adam and AdamW), 2.2e-3 (Adam, grad at steps 1, 3, 4).

Here each such optimizer switches, at the first divergence, to per-parameter counts
(:func:`count_per_parameter`): ``_adapter_steps``, a ``ParameterTuple`` of int32 0-d Parameters, one per parameter,
each starting at the count its parameter has (the global count while no step was skipped, 0 for a parameter added
later or never updated). Every update then advances and reads each parameter's own count inside the update
(``patches/adam.py`` ``_update_counted``; AdamW: :func:`_adamw_counted`), eager and in the fused compiled step (the
counts are Parameters the graph assigns). A skipped parameter's count is restored with its other state slots
(``patches/optimizer.py`` ``_update``), so it does not advance. The divergences seen:

* ``step()`` with some parameters' ``.grad`` None and others not (``_adapter_steps_diverge``, called by
  ``patches/optimizer.py`` ``_update`` before the update);
* ``add_param_group`` after steps ran (``_adapter_steps_grow``, called by ``_extend_slots``): old parameters keep
  the global count, new ones start at 0; in per-parameter mode new counts are appended at 0;
* ``load_state_dict`` with per-parameter ``step``\\ s that differ, or state for some parameters only
  (``_adapter_load_steps``, ``patches/optim_state.py``).

The common case (every parameter updated at every step) never switches: it runs the code it ran before (the
``counted`` branches are compile-time constants), so the same graph and kernels; bench/adam_bits.py against main,
2026-11-26: the 736 arrays identical bit for bit (MindSpore 2.5-dev and 2.10). Per-parameter mode with every count
equal to the global one gives the same bits too (``--counted``: the same operators on the same values, per
parameter). The switch costs one recompile of a fused step (``adapter/compiled_step.py`` keys its graph on
``_adapter_graph_variant``) and, in per-parameter mode, the bias-correction scalars are computed per parameter
instead of per group (more kernels, a longer compile: only for the optimizers that diverged). A fused step updates
every parameter (it fuses only when all of the optimizer's parameters get a grad), so in it every count advances.
The counts are int32, as MindSpore's ``state_step`` (PyTorch: a float32 tensor; equal below 2^24 steps).

``state_dict()`` then saves each parameter's own ``step`` (``_adapter_step_counts``; a parameter never updated has no
state, as in PyTorch) and ``load_state_dict`` restores them.

Not here: Adamax, NAdam, RAdam, ASGD and Adagrad with ``lr_decay`` keep MindSpore's one count (warned,
``patches/optimizer.py`` ``_after_update``; docs/known_differences.md).

Replaces: ``torch.optim.AdamW.construct`` (MindSpore's ``AdamW.construct`` with ``patches/optimizer_graph.py``'s
``maximize`` rewrite, plus the per-parameter branch), and adds ``_adapter_steps_diverge``, ``_adapter_steps_grow``,
``_adapter_load_steps``, ``_adapter_step_counts``, ``_adapter_own_slots`` to ``torch.optim.Adam`` and ``AdamW``
(``_adapter_counted`` (False) and ``_adapter_counted_update`` to AdamW). Adam's per-parameter update is ``patches/adam.py``'s (``implementation``'s
``counted`` argument); without that patch Adam is left alone (optional names).
"""
from __future__ import annotations

from adapter import hooks

from . import Patch, patch_attr

#: attribute of the per-parameter counts (a ParameterTuple as long as ``self.parameters``)
STEPS = hooks.attr("steps")

# graph code below reads these module globals; set by apply()
ms = _adamw_counted_map = _prepare_func = _maximize = _read_once = None
_add_op = _assign_op = _run_adamw_opt = None
_jit_counted_update = None


def count_per_parameter(self, counts=None) -> None:
    """Switch ``self`` (Adam/AdamW) to per-parameter step counts (module docstring); a no-op when switched already.

    Args:
        counts: one int per parameter of ``self.parameters`` (default: the global ``state_step`` for each: every
            parameter was updated at every step so far).
    """
    import mindspore as ms_
    import numpy as np
    if self.__dict__.get(hooks.attr("counted")):
        return
    params = list(self.parameters)
    if counts is None:
        counts = [int(np.asarray(self.state_step.asnumpy()).reshape(-1)[0])] * len(params)
    setattr(self, STEPS, ms_.ParameterTuple([
        ms_.Parameter(ms_.Tensor(int(c), ms_.int32), name=f"adapter_step.{p.name}", requires_grad=False)
        for p, c in zip(params, counts)]))
    setattr(self, hooks.attr("counted"), True)
    setattr(self, hooks.attr("graph_variant"), "per-parameter steps")  # adapter/compiled_step.py: a fused graph compiles again


def _counts(self):
    import numpy as np
    return [int(np.asarray(s.asnumpy()).reshape(-1)[0]) for s in getattr(self, STEPS)]


def steps_diverge(self) -> None:
    """``patches/optimizer.py`` ``_update``: this step skips some parameters and updates others."""
    count_per_parameter(self)


def steps_grow(self, n_old: int) -> None:
    """``patches/optimizer.py`` ``_extend_slots``: ``self.parameters`` grew from ``n_old`` (``add_param_group``). In
    per-parameter mode the new parameters' counts are appended at 0; else, once steps ran, the old ones keep the
    global count and the new ones start at 0 (:func:`count_per_parameter`)."""
    import mindspore as ms_
    import numpy as np
    params = list(self.parameters)
    if self.__dict__.get(hooks.attr("counted")):
        old = list(getattr(self, STEPS))[:n_old]
        setattr(self, STEPS, ms_.ParameterTuple(old + [
            ms_.Parameter(ms_.Tensor(0, ms_.int32), name=f"adapter_step.{p.name}", requires_grad=False)
            for p in params[n_old:]]))
        return
    step = int(np.asarray(self.state_step.asnumpy()).reshape(-1)[0])
    if step > 0:
        count_per_parameter(self, [step] * n_old + [0] * (len(params) - n_old))


def load_steps(self, steps) -> None:
    """``patches/optim_state.py`` ``load_state_dict``: ``steps``, one per parameter, the loaded ``step`` (a float)
    or None (no state). All equal (or all None) in global mode: nothing to do (the global count is loaded);
    otherwise the counts become per-parameter (None: 0)."""
    import mindspore as ms_
    values = [0 if s is None else int(round(float(s))) for s in steps]
    if not self.__dict__.get(hooks.attr("counted")):
        if len(set(values)) <= 1 and (all(s is None for s in steps) or all(s is not None for s in steps)):
            return
        count_per_parameter(self, values)
        return
    for target, value in zip(getattr(self, STEPS), values):
        ms_.ops.assign(target, ms_.Tensor(value, ms_.int32))


def step_counts(self):
    """Each parameter's own step count (ints) in per-parameter mode, else None (``patches/optim_state.py``)."""
    if not self.__dict__.get(hooks.attr("counted")):
        return None
    return _counts(self)


def _adamw_counted(amsgrad, eps, beta1, beta2, lr, weight_decay, one, param, grad, exp_avg, exp_avg_sq,
                   max_exp_avg_sq, step):
    """One AdamW parameter's update with its own count (graph code, registered on ``_adamw_counted_map``): ``step``
    advanced by ``one``, then MindSpore's ``prepare_func`` (the group's scalars, there from ``state_step``) and its
    ``_run_adamw_opt`` (``mindspore/experimental/optim/adamw.py``):
    for a count equal to the global one, the same operators on the same values."""
    t = _add_op(step, one)
    _assign_op(step, t)
    weight_decay_new, step_size, bias_correction2_sqrt = _prepare_func(lr, weight_decay, t, beta1, beta2)
    return _run_adamw_opt(weight_decay_new, step_size, amsgrad, eps, bias_correction2_sqrt, beta1, beta2, param, grad,
                          exp_avg, exp_avg_sq, max_exp_avg_sq)


def _adapter_counted_update(self, lr, weight_decay, beta1, beta2, amsgrad, eps, grads, start_id, end_id):
    """MindSpore's ``AdamW.implementation`` with each parameter's own count (``self._adapter_steps``); installed as
    ``mindspore.jit(_adapter_counted_update)``, ``_adapter_counted_update``. The function's ``__name__`` must be the
    attribute's: a jit'd Cell method is parsed as ``getattr(cell, fn.__name__)`` (``__parse_method__``); under another
    name the update of the last, (1,)-shaped parameter lost its ``exp_avg`` assigns (measured, MindSpore 2.5-dev)."""
    lr = _read_once(lr)
    self.hyper_map(ms.ops.partial(_adamw_counted_map, amsgrad, eps, beta1, beta2, lr, weight_decay,
                                  self.increase_tensor),
                   self.parameters[start_id: end_id], grads, self.exp_avg[start_id: end_id],
                   self.exp_avg_sq[start_id: end_id], self.max_exp_avg_sq[start_id: end_id],
                   self._adapter_steps[start_id: end_id])
    return True


def adamw_construct(self, gradients):
    """MindSpore's ``AdamW.construct`` (with ``patches/optimizer_graph.py``'s ``maximize`` rewrite); in
    per-parameter mode (``self._adapter_counted``, a graph constant) each group's update is
    ``_adapter_counted_update``."""
    self.assignadd(self.state_step, self.increase_tensor)
    for group_id, group in enumerate(self.param_groups):
        beta1, beta2 = group['betas']
        start_id = self.group_start_id[group_id]
        end_id = self.group_start_id[group_id + 1]
        lr = self.lrs[group_id]
        if isinstance(group.get("lr"), float):
            lr = self.op_cast(group.get("lr"), ms.float32)
        grads = _maximize(not group.get("maximize"), ms.ops.neg, gradients[start_id: end_id])
        if self._adapter_counted:
            self._adapter_counted_update(lr, group.get("weight_decay"), beta1, beta2, group.get("amsgrad"),
                                         group.get("eps"), grads, start_id, end_id)
        else:
            self.implementation(lr, group.get("weight_decay"), beta1, beta2, group.get("amsgrad"), group.get("eps"),
                                grads, start_id, end_id)
    return True


_HOOKS = {"steps_diverge": steps_diverge, "steps_grow": steps_grow, "load_steps": load_steps,
          "step_counts": step_counts, "own_slots": (STEPS,)}  # declared in adapter/hooks.py


def apply() -> None:
    global ms, _adamw_counted_map, _prepare_func, _maximize, _read_once, _add_op, _assign_op, _jit_counted_update
    global _run_adamw_opt
    import mindspore
    from mindspore.experimental.optim import adamw as ms_adamw
    from mindspore.ops import composite as C, operations as P
    from mindtorch.torch.optim import Adam, AdamW
    from adapter import backend
    from . import adam as adam_patch
    from .optimizer_graph import _maximize as maximize, _read_once as read_once, prepare

    prepare()
    if _adamw_counted_map is None:
        ms, _maximize, _read_once = mindspore, maximize, read_once
        _prepare_func = getattr(ms_adamw.prepare_func, "__wrapped__", ms_adamw.prepare_func)
        _add_op, _assign_op = P.Add(), P.Assign()
        _run_adamw_opt = backend.internal("adamw.run_adamw_opt")
        _adamw_counted_map = C.MultitypeFuncGraph("adapter_adamw_counted")
        _adamw_counted_map.register("Bool", "Number", "Number", "Number", "Tensor", "Number", "Tensor", "Tensor",
                                    "Tensor", "Tensor", "Tensor", "Tensor", "Tensor")(_adamw_counted)
        _jit_counted_update = mindspore.jit(_adapter_counted_update)
    classes = [AdamW]
    if Adam.__dict__.get("construct") is adam_patch.construct:  # patches/adam.py's update reads _adapter_counted
        classes.insert(0, Adam)
    for cls in classes:
        for name, value in _HOOKS.items():
            patch_attr(cls, hooks.attr(name), value)
    patch_attr(AdamW, hooks.attr("counted"), False)
    patch_attr(AdamW, "_adapter_counted_update", _jit_counted_update)
    patch_attr(AdamW, "construct", adamw_construct)


PATCH = Patch("adam_steps", "torch.optim.Adam/AdamW count steps per parameter as PyTorch's state['step'] once a "
                            "parameter is skipped, added later or loaded with its own count (MindSpore: one count "
                            "per optimizer), eager and in the fused step; state_dict saves each one",
              "post-import", apply,
              replaces=tuple(f"torch.optim.{c}.{n}" for c in ("Adam", "AdamW") for n in map(hooks.attr, _HOOKS))
              + ("torch.optim.AdamW._adapter_counted", "torch.optim.AdamW._adapter_counted_update",
                 "torch.optim.AdamW.construct"),
              optional=tuple(f"torch.optim.Adam.{n}" for n in map(hooks.attr, _HOOKS)))
