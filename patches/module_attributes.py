"""``nn.Module.__setattr__``: an optimizer assigned to a module attribute is a plain attribute, as in PyTorch.

PyTorch registers only ``nn.Module`` values as submodules (``torch/nn/modules/module.py``, ``Module.__setattr__``);
``self.opt = Adam(self.parameters())`` inside a module (pytorch/examples mnist_forward_forward's ``Layer``) stores the
optimizer in ``self.__dict__``. MindTorch 0.4.0's optimizers are MindSpore ``Cell``\\ s, and MindTorch's
``Module.__setattr__`` hands every value that is not a torch ``Module``/``Parameter``/buffer to MindSpore's
``Cell.__setattr__``, which registers a Cell as a sub-cell and renames every parameter the optimizer holds with the
attribute name as prefix (``Cell.update_parameters_name('opt.')``). So the layer's ``weight`` became ``opt.weight``
(MindSpore name; state dict keys unchanged), ``children()`` listed the optimizer, ``repr(layer)`` printed it, and
``layer.to()``/``train()`` walked into it. Worse, two layers then owned the same MindSpore name ``opt.weight`` for
different tensors, and the compiled step of the second layer failed on it ("its name 'opt.weight' already exists").

Here a MindSpore optimizer (``mindspore.experimental.optim.Optimizer``: every ``torch.optim`` class of MindTorch,
or ``mindspore.nn.Optimizer``) assigned to a module attribute goes to ``object.__setattr__`` unchanged, as PyTorch
stores it; assigning it to a name that holds a submodule or parameter raises PyTorch's ``TypeError``. Any other value
keeps MindTorch's behaviour.

Replaces: ``torch.nn.Module.__setattr__``.
"""
import functools

from . import Patch, get_original, patch_attr

_original_setattr = None  # MindTorch's Module.__setattr__, bound by apply()
_optimizers = ()  # the optimizer base classes (MindSpore's), bound by apply()


def __setattr__(self, name, value):
    """``nn.Module.__setattr__``: a MindSpore optimizer is stored as a plain attribute (module docstring); any other
    value goes to MindTorch's. Raises PyTorch's TypeError for an optimizer assigned over a submodule or parameter."""
    if not isinstance(value, _optimizers) or isinstance(value, _module_class):
        return _original_setattr(self, name, value)
    kind = type(value)
    typename = f"{kind.__module__}.{kind.__qualname__}".removeprefix("mindtorch.")  # torch.optim.sgd.SGD
    cells = self.__dict__.get("_cells")
    params = self.__dict__.get("_params")
    # PyTorch's messages (torch/nn/modules/module.py, Module.__setattr__)
    if cells is not None and name in cells:
        raise TypeError(f"cannot assign '{typename}' as child module '{name}' "
                        "(torch.nn.Module or None expected)")
    if params is not None and name in params:
        raise TypeError(f"cannot assign '{typename}' as parameter '{name}' "
                        "(torch.nn.Parameter or None expected)")
    object.__setattr__(self, name, value)
    if "_attr_synced" in self.__dict__:
        object.__setattr__(self, "_attr_synced", False)  # as Cell.__setattr__ does after any assignment


_module_class = None


def apply() -> None:
    global _original_setattr, _optimizers, _module_class
    from mindspore import nn as ms_nn
    from mindspore.experimental.optim import Optimizer as ExperimentalOptimizer
    from mindtorch.torch.nn.modules.module import Module

    _module_class = Module
    _optimizers = (ExperimentalOptimizer, ms_nn.Optimizer)
    _original_setattr = get_original(Module, "__setattr__")
    functools.update_wrapper(__setattr__, _original_setattr)
    patch_attr(Module, "__setattr__", __setattr__)


PATCH = Patch("module_attributes",
              "an optimizer assigned to a module attribute (self.opt = Adam(...)) is a plain attribute, not a "
              "submodule: parameter names, children(), repr as PyTorch",
              "post-import", apply, replaces=("torch.nn.Module.__setattr__",))
