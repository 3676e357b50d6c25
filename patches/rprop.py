"""``torch.optim.Rprop`` initialises a parameter's step sizes at that parameter's first update, as PyTorch does.

MindSpore's Rprop (``mindspore/experimental/optim/rprop.py``, ``_tensor_run_opt``, which MindTorch 0.4.0's
``torch.optim.Rprop`` runs) sets the step sizes to ``lr`` when its one global step count is 1 (``if step == 1:
step_size = ones_like(step_size) * lr``); PyTorch (``torch/optim/rprop.py``, 2.13) does it per parameter, when the
parameter first has a gradient (``state['step_size'] = full_like(grad, lr)`` on an empty state). A parameter whose
first gradient came at a later step (``.grad`` None at step 1, which ``patches/optimizer.py`` skips; or added by
``add_param_group``) kept its zero step sizes, clamped to ``step_sizes[0]`` (1e-6 by default): it moved 1e-6 per
step where PyTorch's moves ``lr`` (0.01) — a silently frozen parameter. Likewise a state dict without the step count
(MindTorch's layout before ``patches/optim_state_map.py``) re-initialised every step size on load.

Here the update is MindSpore's with one change: the step sizes are initialised to ``lr`` when the parameter's own
step sizes are all zero, its state as MindSpore creates it (``step_size`` slots ``init='zeros'``) and as
``patches/optimizer.py`` restores a skipped parameter's; after any update of the parameter they are clamped to at
least ``step_sizes[0]``. So with ``step_sizes[0] > 0`` (PyTorch's default 1e-6) this is PyTorch's rule exactly, and
the values are MindSpore's otherwise (same operations, same order: the same bits where both initialise at step 1).
Residual difference: with ``step_sizes[0] == 0``, a parameter whose step sizes have all reached 0 (``lr == 0`` at its
first update, or underflow) is initialised again to the current ``lr`` where PyTorch keeps 0.

The update no longer reads the global count, so ``torch.optim.Rprop._adapter_step_count_unread`` is set: the
warning of ``patches/optimizer.py`` (``add_param_group`` after steps of an optimizer with one global step count)
is not given for Rprop, whose new parameters now start as PyTorch's.

Must apply before ``patches/optimizer_graph.py``, whose rewritten ``Rprop.implementation`` copies the module's
globals (it is listed before it in ``patches/__init__.py``).

Replaces: ``mindspore.experimental.optim.rprop._rprop_opt`` (the ``MultitypeFuncGraph`` that ``Rprop.implementation``
maps over the parameters), with one of the same signature; sets the marker ``torch.optim.Rprop
._adapter_step_count_unread``.
"""
from __future__ import annotations

from adapter import backend, hooks

from . import Patch, patch_attr

# graph code below reads these module globals; set by apply()
ops = None
_rprop_update = None  # the MultitypeFuncGraph installed, made once by apply()


def _update(etaminus, etaplus, step_size_min, step_size_max, step, lr, param, prev, step_size, gradient):
    """One parameter's Rprop update (graph code): MindSpore's ``_tensor_run_opt`` with the step-size initialisation
    keyed on the parameter's own state (module docstring) instead of the global ``step`` (unused, kept for the
    signature that ``Rprop.implementation`` calls with)."""
    fresh = ops.all(step_size == 0)
    step_size_value = ops.select(ops.broadcast_to(fresh, step_size.shape), ops.ones_like(step_size) * lr,
                                 step_size.value())

    sign = ops.sign(gradient * prev)

    sign[sign.gt(0)] = etaplus
    sign[sign.lt(0)] = etaminus
    sign[sign.eq(0)] = 1

    step_size_clip = ops.clip_by_value(step_size_value * sign, step_size_min, step_size_max)
    ops.assign(step_size, step_size_clip)

    gradient_update = ops.select(sign == etaminus, ops.zeros_like(gradient), gradient)

    ops.assign(prev, gradient_update)
    next_param = param - ops.sign(gradient_update) * step_size_clip

    ops.assign(param, next_param)
    return True


def apply() -> None:
    global ops, _rprop_update
    import mindspore
    if _rprop_update is None:  # made once: applied again, the patch installs the same object
        ops = mindspore.ops
        _rprop_update = mindspore.ops.MultitypeFuncGraph("adapter_rprop_opt")
        _rprop_update.register("Tensor", "Tensor", "Number", "Number", "Tensor", "Tensor", "Tensor", "Tensor",
                               "Tensor", "Tensor")(_update)
    patch_attr(*backend.internal_slot("rprop_opt"), _rprop_update)
    from mindtorch.torch.optim import Rprop
    patch_attr(Rprop, hooks.attr("step_count_unread"), True)


PATCH = Patch("rprop", "torch.optim.Rprop initialises a parameter's step sizes to lr at its own first update (a "
                       "parameter without grad at step 1, or added later, moved 1e-6 per step)",
              "post-import", apply, replaces=("mindspore.experimental.optim.rprop._rprop_opt",
                        "torch.optim.Rprop._adapter_step_count_unread"))
