"""MindSpore cells that MindTorch keeps inside its own modules are not ``torch.nn.Module`` children.

MindTorch 0.4.0's ``nn.RNN`` / ``nn.LSTM`` / ``nn.GRU`` hold a stateless MindSpore cell (``self.rnn_cell =
_DynamicRNNTanh()``, ``_DynamicLSTMCPUGPU()``, ``_DynamicGRUCPUGPU()``: ``mindtorch/torch/nn/modules/rnn.py``), which
MindSpore registers as a child cell. PyTorch's RNN modules have no children. ``named_modules()`` and ``state_dict()``
already skip cells that are not ``Module``s, but two traversals did not:

* ``Module.modules_and_names`` (``buffers_and_names`` -> ``update_buffers_name``, which ``nn.Sequential``,
  ``nn.ModuleList`` and ``nn.ModuleDict`` call on each item): it called ``modules_and_names`` on the MindSpore cell,
  so ``nn.Sequential(nn.Embedding(10, 3), nn.LSTM(3, 5))`` raised ``AttributeError: The '_DynamicLSTMCPUGPU' object
  has no attribute 'modules_and_names'`` at construction (PyTorch builds it);
* ``Module.named_children`` (``children()``, ``apply(fn)``, ``_apply``: ``.to()``, ``.float()``): ``lstm.named_children()``
  listed ``lstm_cell`` and ``model.apply(init_weights)`` called the user's function on the MindSpore cell, where
  PyTorch lists no child and calls it on the LSTM only.

Here both skip a child that is neither a ``torch.nn.Module`` nor ``None`` (``named_children`` yields no ``None``, as
PyTorch's). The MindSpore cells hold no parameters or buffers (the weights are the LSTM's own Parameters, passed at
call time), so nothing a PyTorch script can see is lost; MindSpore's own walks (``cells_and_names``, used for
parameters and graphs) are unchanged.

Replaces: ``torch.nn.Module.modules_and_names``, ``torch.nn.Module.named_children``.
"""
from __future__ import annotations

from . import Patch, patch_attr

Module = None  # MindTorch's torch.nn.Module, set by apply()


def named_children(self):
    """``(name, child)`` for each distinct child that is a ``torch.nn.Module``, in registration order."""
    memo = set()
    for name, module in self._modules.items():
        if isinstance(module, Module) and module not in memo:
            memo.add(module)
            yield name, module


def modules_and_names(self, modules=None, name_prefix=""):
    """MindTorch's walk (``(prefix, module)`` for ``self`` and each ``Module`` below it, each once), skipping cells that
    are not ``Module``s."""
    seen = modules if modules else set()
    if self in seen:
        return
    seen.add(self)
    yield name_prefix, self
    for name, module in self._modules.items():
        if isinstance(module, Module):
            yield from module.modules_and_names(seen, name_prefix + "." + name if name_prefix else name)


def apply() -> None:
    global Module
    from mindtorch.torch import nn
    Module = nn.Module
    patch_attr(nn.Module, "named_children", named_children)
    patch_attr(nn.Module, "modules_and_names", modules_and_names)


NAME = "internal_cells"
PATCH = Patch(NAME, "MindSpore cells inside MindTorch's RNN/LSTM/GRU are no torch children: nn.Sequential(..., "
                    "nn.LSTM(...)) builds, children()/apply(fn) see what PyTorch's do",
              "post-import", apply, replaces=("torch.nn.Module.modules_and_names", "torch.nn.Module.named_children"))
