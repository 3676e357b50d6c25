"""``nn.Parameter`` has the methods of a MindTorch ``Tensor``, as a PyTorch Parameter has those of ``torch.Tensor``.

MindTorch 0.4.0's ``Parameter`` subclasses ``mindspore.Parameter`` and copies MindTorch's ``Tensor`` methods onto it
only where ``mindspore.Parameter`` has no attribute of that name (``mindtorch/torch/nn/parameter.py``,
``_init_parameter_api``). About 160 names resolve to MindSpore's ``Tensor`` instead: they return plain MindSpore
tensors (no PyTorch methods, ``'{:+.2f}'.format(fc.bias[0])`` raises "unsupported format string"), follow
MindSpore's signatures (``p.std(dim=1)`` biased, ``p.max(1)`` without ``.indices``), and for the in-place ones
(``add_``, ``sub_``, ``div_``, ``fill_``...) return a new tensor without writing the parameter on the CPU, so
``param.data.add_(-lr * param.grad)`` (``Parameter.data`` is the parameter itself) silently trained nothing
(pytorch/examples regression). Measured with this build: 160 shadowed names, 7 of them in-place.

Here every such name runs MindTorch's ``Tensor`` method, except:

* ``__eq__``, ``__ne__``, ``__hash__``: MindSpore looks parameters up in lists and dicts; MindSpore's keep
  identity-based hashing and the comparisons its code expects;
* ``clone``: MindSpore's optimizers create their state with ``ParameterTuple.clone(prefix, init)``, which calls
  ``Parameter.clone(init)``; a call with MindSpore's arguments gets MindSpore's method, ``p.clone()`` (PyTorch's,
  no positional arguments) gets MindTorch's, a tensor copy.

Replaces: ``torch.nn.Parameter.<name>`` for each shadowed name (the list is computed at start-up from the classes)
and ``torch.nn.Parameter.clone``.
"""
from __future__ import annotations

from . import Patch, get_original, patch_attr

KEEP_MINDSPORE = frozenset({"__eq__", "__ne__", "__hash__", "__subclasshook__", "__init_subclass__", "clone"})


def shadowed_names(parameter_cls, tensor_cls):
    """Names that ``tensor_cls`` (MindTorch's Tensor) defines but ``parameter_cls`` resolves to a class outside
    MindTorch (MindSpore's Parameter/Tensor), in sorted order."""
    out = []
    for name in sorted(tensor_cls.__dict__):
        owner = next((c for c in parameter_cls.__mro__ if name in c.__dict__), None)
        if owner is not None and not owner.__module__.startswith("mindtorch"):
            out.append(name)
    return out


_torch_clone = None  # MindTorch's Tensor.clone when the patch was applied, set by apply()
_mindspore_clone = None  # mindspore.Parameter.clone, set by apply()


def clone(self, *args, **kwargs):
    """``p.clone(memory_format=...)``: PyTorch's, a copy as a tensor; ``p.clone(init, ...)``: MindSpore's
    (``ParameterTuple.clone`` in optimizers), a new Parameter."""
    if args or set(kwargs) - {"memory_format"}:
        return _mindspore_clone(self, *args, **kwargs)
    return _torch_clone(self)


def apply() -> None:
    global _torch_clone, _mindspore_clone
    import inspect

    import mindspore as ms
    from mindtorch.torch.nn.parameter import Parameter
    from mindtorch.torch.tensor import Tensor

    # Applied twice: the names copied the first time resolve to Parameter (MindTorch) now, so none is copied again.
    for name in shadowed_names(Parameter, Tensor):
        if name not in KEEP_MINDSPORE:
            patch_attr(Parameter, name, inspect.getattr_static(Tensor, name))
    _mindspore_clone = get_original(ms.Parameter, "clone")
    _torch_clone = Tensor.clone
    patch_attr(Parameter, "clone", clone)


PATCH = Patch("parameter_methods", "nn.Parameter has MindTorch's Tensor methods where MindSpore's shadowed them "
                                   "(p.data.add_ writes, p.view(-1)[0] formats, p.std(dim) unbiased)",
              "post-import", apply, replaces=("torch.nn.Parameter.*", "torch.nn.Parameter.clone"))
