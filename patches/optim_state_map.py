"""MindTorch-layout optimizers save every MindSpore state slot their update reads: a loaded Rprop resumes.

The optimizers that keep MindTorch's own ``state_dict()`` layout (RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam,
ASGD, Rprop; ``patches/optim_state.py`` gives Adam/AdamW/SGD PyTorch's) save and load the MindSpore attributes named
in their ``_state_map`` (``mindtorch/torch/optim/<name>.py``; MindSpore attribute -> PyTorch state key). MindTorch
0.4.0's ``Rprop`` maps ``prev`` and ``step_size`` but not ``step_t``, MindSpore's step count, which its update reads
(``mindspore/experimental/optim/rprop.py`` ``_tensor_run_opt``: ``if step == 1: step_size = lr``, PyTorch's
per-parameter state initialisation in ``torch/optim/rprop.py``). So ``state_dict()`` did not save it and an
optimizer loaded from it took its next step as a first one: every step size re-initialised to ``lr``, the resumed
run silently off PyTorch's (0.0024 on a weight of tests/fixtures/optim_mindtorch_layout_cases.py after a resumed
3rd step, both MindSpore 2.5-dev and 2.10).

``patches/rprop.py`` also keys Rprop's step-size initialisation on each parameter's own state, so even a state dict
without ``step_t`` (saved before this patch) resumes as PyTorch's; the count is still saved here so that the state
dict holds every slot (and its ``step``, PyTorch's key, loads).

Here the missing entries of :data:`MISSING` are added to each new optimizer's map (``adapter.backend
.add_optimizer_state_slot``), so ``state_dict()`` saves ``step_t`` (a 0-d int32 tensor, MindTorch's layout) and
``load_state_dict()`` restores it, from MindTorch's layout or from PyTorch's (``state[i]['step']``, as MindTorch
maps Adagrad's, Adamax's... ``step_t``). Checked for the other MindTorch-layout optimizers (every MindSpore state
attribute their update reads is in their map; tests/test_optim_mindtorch_layout.py asserts it for each):
Adadelta (``accum``, ``accum_update``), Adagrad (``accum``, ``step_t``), Adamax (``exp_avg``, ``exp_inf``,
``step_t``), ASGD (``eta``, ``mu``, ``ax``, ``step_t``), NAdam (``exp_avg``, ``exp_avg_sq``, ``mu_product``,
``step_t``), RAdam (``exp_avg``, ``exp_avg_sq``, ``step_t``), RMSprop (``mean_grad``, ``mean_square``, ``moment``):
complete.

Replaces: ``torch.optim.Rprop.__init__`` (MindTorch's; calls it, then adds ``step_t -> step`` to the map).
"""
from __future__ import annotations

import functools

from adapter import backend

from . import Patch
from ._wrap_once import wrap_attr

# MindTorch optimizer class name -> {MindSpore state attribute its update reads: PyTorch state key} that MindTorch
# 0.4.0's ``_state_map`` lacks.
MISSING = {"Rprop": {"step_t": "step"}}


def _make_init(cls_name, original):
    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        for attr, pt_name in MISSING[cls_name].items():
            if hasattr(self, attr):
                backend.add_optimizer_state_slot(self, attr, pt_name)
    return __init__


def apply() -> None:
    from mindtorch.torch import optim
    for cls_name in MISSING:
        wrap_attr(getattr(optim, cls_name), "__init__", "optim_state_map",
                  functools.partial(_make_init, cls_name))


PATCH = Patch("optim_state_map", "Rprop's state_dict() saves its step count: a loaded Rprop resumes its step "
                                 "sizes as PyTorch's (MindTorch-layout optimizers save every slot their update reads)",
              "post-import", apply, replaces=("torch.optim.Rprop.__init__",))
