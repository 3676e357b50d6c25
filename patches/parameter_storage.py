"""In-place writes into a ``Parameter`` keep its storage, so compiled graphs that hold it see them.

Every MindTorch in-place method ends in ``assign_value`` (``patches/inplace_autograd.py``); MindTorch 0.4.0's
``Parameter.assign_value`` (``mindtorch/torch/nn/parameter.py``) is ``assign_value_cpp``, which gives the parameter a
NEW buffer. A ``mindspore.jit`` graph compiled before the write -- MindTorch's optimizer update, which every eager
``optimizer.step()`` runs -- keeps reading and writing the OLD buffer. So after

    with torch.no_grad():
        net.bias.add_(0.01)        # also: net.bias += 0.01, net.bias.copy_(t), fill_, clamp_, mul_ ...
    ...
    optimizer.step()               # eager (e.g. a statement between backward() and step())

every later update was lost: measured 2026-11-26 (SGD lr 0.1, Linear(4, 2), 3 steps, ``tests/fixtures/
parameter_storage_cases.py``): the bias stayed at its written value ([0.218, -0.43] after step 1, PyTorch 2.13
[0.12286, -0.26608]), in ``--mode pynative`` and auto, on MindSpore 2.5-dev and 2.10, silently; with momentum SGD
and Adam after ``add_``, ``+=``, ``copy_``, ``clamp_`` the weights were 0.05-0.7 off PyTorch's after 4 steps
(``fill_`` and ``load_state_dict`` of a saved copy reach the parameter by other paths and were right).

Here, outside a graph and while no backward() recording is open (``adapter/tape.py``; during one, the recorded
forward may still need the parameter's old value, and MindTorch's write is kept), a value of the parameter's shape
and dtype is written with ``mindspore.ops.assign`` into the parameter's storage, as PyTorch writes in place.
Another shape or dtype (a resize, ``p.set_(...)``-like use) keeps MindTorch's write: the graphs holding the
parameter are recompiled for a new shape anyway. Cost: one ``Assign`` launch per write (~0.06 ms on MindSpore 2.5's
CPU backend, 2026-11-26).

Replaces: ``torch.nn.Parameter.assign_value``.
"""
from __future__ import annotations

from . import Patch, get_replaced, patch_attr

NAME = "parameter_storage"
# set by apply() (module globals: assign_value runs for every in-place op on a parameter)
ms = _assign = _original = graph_mode_condition = tape = _executor = None


def assign_value(self, value):
    """``self.assign_value(value)`` (MindTorch's in-place write) into the parameter's own storage (module
    docstring). Returns ``self``."""
    if isinstance(value, ms.Tensor) and not graph_mode_condition() and not tape.is_recording() \
            and not _executor.grad_flag() and value is not self \
            and tuple(value.shape) == tuple(self.shape) and value.dtype == self.dtype:
        _assign(self, value)
        return self
    return _original(self, value)


def apply() -> None:
    global ms, _assign, _original, graph_mode_condition, tape, _executor
    import mindspore as ms
    from mindtorch.torch.nn.parameter import Parameter
    from mindtorch.utils import graph_mode_condition
    from adapter import backend, tape
    _executor = backend.pynative_executor()
    _assign = ms.ops.assign
    _original = get_replaced(Parameter, "assign_value", NAME)
    patch_attr(Parameter, "assign_value", assign_value)


PATCH = Patch(NAME, "in-place writes into a Parameter (p.add_() under no_grad, p += x, copy_, clamp_) "
                    "keep its storage: a jit-compiled optimizer update kept writing the old one and "
                    "every later update was lost, silently", "post-import", apply,
              replaces=("torch.nn.Parameter.assign_value",))
