"""``torch.optim.Adam`` / ``AdamW`` without ``amsgrad`` hold two slots per parameter, as PyTorch's, not three.

MindTorch 0.4's Adam and AdamW are MindSpore's ``mindspore.experimental.optim.Adam`` / ``AdamW``, whose ``__init__``
(``mindspore/experimental/optim/adam.py`` and ``adamw.py``) clones three full-size slots for every parameter:
``exp_avg``, ``exp_avg_sq`` and ``max_exp_avg_sq``. ``max_exp_avg_sq`` is read only when the group has
``amsgrad=True`` (Adam: ``patches/adam.py``'s update, ``if amsgrad:``; AdamW: MindSpore's ``_run_adamw_opt``,
``if amsgrad:``), and PyTorch creates no such state without amsgrad (``torch/optim/adam.py`` ``_init_group``:
``if group["amsgrad"]: state["max_exp_avg_sq"] = torch.zeros_like(p)``). For ResNet50 that slot is 25.5M floats
(~98 MB) never read (docs/memory.md, "Adam slots").

Here :func:`adam_init` / :func:`adamw_init` (MindSpore's ``__init__``: the same checks, errors and attributes) give the
parameters of a group with ``amsgrad=False`` a 0-d placeholder ``max_exp_avg_sq`` (0, the parameter's dtype, named
``max_exp_avg_sq.<name>`` as MindSpore's; ``patches/_optim_slots.py``, shared with SGD's momentum slots,
``patches/sgd.py``). The update functions are unchanged: with amsgrad False they pass the placeholder along in
``hyper_map`` and never read it, so the updates are the same bits.

``amsgrad`` switched on later (``param_groups[i]['amsgrad'] = True``, or ``load_state_dict`` of an amsgrad
checkpoint): :func:`ensure_slots` (the ``_adapter_before_update`` hook that ``patches/optimizer.py``'s ``step()`` and
the fused compiled step, ``adapter/compiled_step.py``, call before every update) swaps the placeholders of such a
group for full-size zeros, MindSpore's initial ``max_exp_avg_sq``; amsgrad is part of a compiled update's key, so the
update that reads them is compiled anew. (PyTorch itself raises ``KeyError: 'max_exp_avg_sq'`` at the next step when
amsgrad is switched on after the state was created; here the maximum starts from zeros, as it would have at
construction.) The slots stay full when amsgrad is switched off again. ``add_param_group`` gets placeholders or full
slots by the new group's amsgrad (:func:`new_slots`); ``load_state_dict`` in PyTorch's layout
(``patches/optim_state.py``) makes full slots first for the parameters whose saved group has amsgrad or whose saved
state has a ``max_exp_avg_sq`` (:func:`needs_slots`). ``state_dict()`` reports ``max_exp_avg_sq`` only for amsgrad
groups, as before.

Replaces: ``mindspore.experimental.optim.Adam.__init__`` and ``mindspore.experimental.optim.AdamW.__init__``
(which MindTorch's ``torch.optim.Adam`` / ``AdamW.__init__`` call), and sets ``_adapter_before_update``,
``_adapter_new_slots`` and ``_adapter_needs_slots`` on ``torch.optim.Adam`` and ``torch.optim.AdamW``.
"""
from adapter import hooks

from . import Patch, _optim_slots, patch_attr

_SLOTS = {"max_exp_avg_sq": "zeros"}  # the slot made only for amsgrad groups, and its initial value


def _amsgrad(group) -> bool:
    return bool(dict.get(group, "amsgrad", False))


def _check(lr, betas, eps, weight_decay) -> None:
    """MindSpore's Adam/AdamW ``__init__`` checks, same order and messages."""
    if lr < 0.0:
        raise ValueError("Invalid learning rate: {}".format(lr))
    if eps < 0.0:
        raise ValueError("Invalid epsilon value: {}".format(eps))
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
    if weight_decay < 0.0:
        raise ValueError("Invalid weight_decay value: {}".format(weight_decay))


def _slots_and_step(self) -> None:
    """``exp_avg`` / ``exp_avg_sq`` (full, zeros: MindSpore's ``clone``), ``max_exp_avg_sq`` (full for amsgrad
    groups, else 0-d placeholders), and MindSpore's ``state_step`` counter, ``increase_tensor``, ``assignadd``,
    ``op_cast``."""
    import mindspore as ms
    from mindspore.ops import operations as P
    self.exp_avg = self.parameters.clone(prefix="exp_avg", init="zeros")
    self.exp_avg_sq = self.parameters.clone(prefix="exp_avg_sq", init="zeros")
    with_amsgrad = set(_optim_slots.group_indices(self, _amsgrad))
    _optim_slots.build(self, _SLOTS, lambda i: i in with_amsgrad)
    self.state_step = ms.Parameter(ms.Tensor(0, ms.int32), "state_step")
    self.increase_tensor = ms.Tensor(1, ms.int32)
    self.assignadd = P.AssignAdd()
    self.op_cast = P.Cast()


def adam_init(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
              maximize=False):
    """MindSpore's ``mindspore.experimental.optim.Adam.__init__``, except that ``max_exp_avg_sq`` of a parameter
    whose group has ``amsgrad=False`` is a 0-d placeholder (module docstring).

    Raises:
        ValueError: as MindSpore's (lr < 0, eps < 0, betas outside [0, 1), weight_decay < 0).
    """
    from mindspore.experimental.optim import Adam as AdamMS
    from mindspore.ops import operations as P
    _check(lr, betas, eps, weight_decay)
    defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize)
    super(AdamMS, self).__init__(params, defaults)
    _slots_and_step(self)
    self.op_add = P.AddN()
    self.op_mul = P.Mul()
    self.op_pow = P.Pow()
    self.adam_opt = P.Adam(False, False)


def adamw_init(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
               maximize=False):
    """MindSpore's ``mindspore.experimental.optim.AdamW.__init__``, except that ``max_exp_avg_sq`` of a parameter
    whose group has ``amsgrad=False`` is a 0-d placeholder (module docstring).

    Raises:
        ValueError: as MindSpore's (lr < 0, eps < 0, betas outside [0, 1), weight_decay < 0).
    """
    from mindspore.experimental.optim import AdamW as AdamWMS
    _check(lr, betas, eps, weight_decay)
    defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize)
    super(AdamWMS, self).__init__(params, defaults)
    _slots_and_step(self)


def ensure_slots(self, indices=None) -> None:
    """Swap the ``max_exp_avg_sq`` placeholders of the parameters at ``indices`` (default: those in groups with
    amsgrad) for full-size zeros, keeping every other slot object; a no-op when they are full already (the per-step
    cost: one pass over the param groups). Installed as ``_adapter_before_update`` (module docstring)."""
    _optim_slots.ensure_full(self, _SLOTS, _optim_slots.group_indices(self, _amsgrad) if indices is None
                             else indices)


def new_slots(self, attr, params, group):
    """``max_exp_avg_sq`` slots for ``params`` added by ``add_param_group`` to a built optimizer: full when the
    group has amsgrad (its own or the defaults'), else placeholders; None for other attributes (``exp_avg`` /
    ``exp_avg_sq``: ``patches/optimizer.py``'s ``_extend_slots`` makes them as MindSpore's clone). Installed as
    ``_adapter_new_slots``."""
    if attr not in _SLOTS:
        return None
    return _optim_slots.slots(list(params), attr, _SLOTS[attr], _amsgrad(group))


def needs_slots(self, saved_group, saved_state) -> bool:
    """Whether a parameter loaded from a PyTorch checkpoint needs a full ``max_exp_avg_sq``: its saved group has
    amsgrad or its saved state has one. Installed as ``_adapter_needs_slots`` (``patches/optim_state.py``)."""
    return bool(saved_group.get("amsgrad", False)) or saved_state.get("max_exp_avg_sq") is not None


def apply() -> None:
    from mindspore.experimental.optim import Adam as AdamMS, AdamW as AdamWMS
    from mindtorch.torch.optim import Adam, AdamW
    patch_attr(AdamMS, "__init__", adam_init)
    patch_attr(AdamWMS, "__init__", adamw_init)
    for cls in (Adam, AdamW):
        patch_attr(cls, hooks.attr("before_update"), ensure_slots)
        patch_attr(cls, hooks.attr("new_slots"), new_slots)
        patch_attr(cls, hooks.attr("needs_slots"), needs_slots)


PATCH = Patch("adam_slots", "torch.optim.Adam/AdamW without amsgrad hold no max_exp_avg_sq (MindSpore cloned it "
                            "for every parameter: ResNet50 ~98 MB never read); full-size when amsgrad is switched on",
              "post-import", apply,
              replaces=("mindspore.experimental.optim.Adam.__init__", "mindspore.experimental.optim.AdamW.__init__",
                        "torch.optim.Adam._adapter_before_update", "torch.optim.Adam._adapter_new_slots",
                        "torch.optim.Adam._adapter_needs_slots", "torch.optim.AdamW._adapter_before_update",
                        "torch.optim.AdamW._adapter_new_slots", "torch.optim.AdamW._adapter_needs_slots"))
