"""``Parameter.data`` is a tensor without gradient history that shares the parameter's storage, as in PyTorch.

MindTorch 0.4.0's ``Parameter.data`` returns the parameter itself (``mindtorch/torch/nn/parameter.py``), so an
expression built from ``p.data`` was recorded for the backward: with ``w = [0.5, -0.25]``,
``(m(ones) + (m.weight.data ** 2).sum()).backward()`` gave ``w.grad == [2.0, 0.5]`` where PyTorch gives
``[1.0, 1.0]`` -- silently, in every L2 term, EMA / target-network update, weight-norm or clipping expression written
with ``.data``. Its setter (``p.data = t``) ran ``Parameter.set_data``, which on MindSpore 2.5 gives the parameter new
storage: a compiled step or a jit-compiled optimizer update holding the old storage then kept training that one.

Here, eager (PyNative):

* getter: ``mindspore.ops.stop_gradient(p)`` -- a new tensor over the parameter's storage (no copy; ~55 us for any
  size on the CPU) that a backward() recording differentiates as a constant -- with ``requires_grad = False`` and no
  ``grad_fn``, made an
  :class:`patches.inplace.AliasTensor` of ``p``: an in-place operation on it (``p.data.add_(g, alpha=-lr)``,
  ``mul_``, ``copy_``, ``zero_``, ``clamp_``, ``t.data.mul_(d).add_(p.data, alpha=1 - d)``) is also written into
  ``p`` with ``mindspore.ops.assign`` (in place, the storage compiled graphs hold). Reads see later writes into
  ``p``'s storage -- an optimizer's update, a compiled step's, another ``p.data``'s (``d = p.data;
  optimizer.step(); d`` shows the update, as in PyTorch; ``p.add_(1)`` under ``no_grad`` too, written in place by
  ``patches/parameter_storage.py``) -- but not once something has
  been written into ``d`` itself: MindTorch's in-place methods give ``d`` a new buffer (``assign_value``), so after
  ``d.add_(x)`` the name ``d`` holds its own copy (``p`` got the write) and no longer sees later updates of ``p``.
* setter: ``p.data = t`` with ``t`` of ``p``'s shape and dtype writes ``t``'s value into ``p`` with
  ``mindspore.ops.assign`` (``p`` keeps its storage); another shape goes to MindTorch's setter (``set_data``: the
  parameter gets new storage, as PyTorch's does); another dtype too, after ``p.set_dtype`` (MindSpore's ``set_data``
  raised ``TypeError: Incoming Parameter dtype can not be converted`` on 2.5 and kept the old dtype on 2.10). Known difference: in PyTorch ``p`` then shares
  ``t``'s storage (a later ``t.add_(1)`` moves ``p``); here ``p`` holds a copy.

Inside a compiled graph (``graph_mode_condition()``): the getter is ``mindspore.ops.stop_gradient(p)`` (no
gradient through it; in-place methods are functional there, as for every tensor in a graph), the setter MindTorch's.

Cost (2026-11-26, 2 CPU cores, /tmp script: ResNet18's 62 parameters, 20 loops): reading ``p.data`` of each 2.5 ms
per loop on MindSpore 2.5 (3.4 ms on 2.10; was free: the parameter itself); manual SGD ``p.data.add_(p.grad,
alpha=-lr)`` over all 67.8 ms against 66.8 ms without this patch on 2.5, 95.5 against 85.4 ms on 2.10 (the alias
writes its own buffer, then the parameter's).

Replaces: ``torch.nn.Parameter.data`` (getter and setter).
"""
from __future__ import annotations

from . import Patch
from ._wrap_once import wrap_attr

NAME = "parameter_data"

# set by apply(): MindSpore's Tensor and ops, MindTorch helpers, patches/inplace's alias() (module globals: p.data is
# read per parameter per step in manual-SGD / EMA loops)
_assign = _stop_gradient = _alias = None
graph_mode_condition = cast_to_ms_tensor = cast_to_adapter_tensor = None


def _get_data(self):
    """PyTorch's ``Parameter.data``: the parameter's value without history (requires_grad False, no grad_fn), over
    its storage; in-place updates of it reach the parameter (patches/parameter_data.py)."""
    out = _stop_gradient(self)  # PyNative: a new tensor over the parameter's storage, zero gradient on the tape
    if graph_mode_condition():
        return out
    out = _alias(self, cast_to_adapter_tensor(out))
    out.requires_grad = False
    return out


def _make_setter(original_setter):
    def _set_data(self, data):
        """PyTorch's ``p.data = t``: ``t``'s value becomes the parameter's; same shape and dtype: written into the
        parameter's storage (``ops.assign``), else MindTorch's setter (new storage)."""
        if not graph_mode_condition():
            value = cast_to_ms_tensor(data)
            if value.dtype != self.dtype:  # PyTorch's p.data = p.data.double(): MindSpore's set_data refused
                self.set_dtype(value.dtype)  # (2.5: TypeError) or kept float32 (2.10), silently
            elif tuple(value.shape) == tuple(self.shape):
                _assign(self, value)
                return
        original_setter(self, data)
    return _set_data


def apply() -> None:
    global _assign, _stop_gradient, _alias, graph_mode_condition, cast_to_ms_tensor, cast_to_adapter_tensor
    import mindspore as ms
    from mindtorch.torch.nn.parameter import Parameter
    from mindtorch.torch.tensor import cast_to_adapter_tensor, cast_to_ms_tensor
    from mindtorch.utils import graph_mode_condition

    from . import inplace
    if inplace.AliasTensor is None:  # patches/inplace.py disabled: make its class here (its writes-through is ours)
        inplace.AliasTensor = inplace._alias_class()
    _assign, _stop_gradient = ms.ops.assign, ms.ops.stop_gradient
    _alias = inplace.alias
    wrap_attr(Parameter, "data", NAME, lambda original: property(_get_data, _make_setter(original.fset)))


PATCH = Patch(NAME, "Parameter.data has no gradient history (an L2 / EMA term on p.data got gradients); in-place "
                    "writes into it reach the parameter; p.data = t keeps the parameter's storage", "post-import",
              apply, replaces=("torch.nn.Parameter.data",))
