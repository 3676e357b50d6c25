"""``memory_format=`` accepted where PyTorch accepts it: ``Tensor.clone``, ``Tensor.cpu`` and the dtype casts
(``float``, ``double``, ``half``, ``bfloat16``, ``int``, ``long``, ``short``, ``char``, ``byte``, ``bool``,
``cfloat``, ``cdouble``).

PyTorch's ``memory_format`` (``torch.preserve_format``, ``contiguous_format``, ``channels_last``,
``channels_last_3d``) chooses the strides of the result, never its values. MindSpore tensors have no user-visible
strides (MindTorch's ``is_contiguous()`` is always True and ``contiguous(memory_format=)`` already ignores it), so the
format is accepted and the values are PyTorch's. MindTorch 0.4.0 instead raised ``TypeError: Tensor.clone() got an
unexpected keyword argument 'memory_format'`` (PyTorch's own ``torch/optim/lbfgs.py`` calls
``g.clone(memory_format=torch.contiguous_format)``), ``NotImplementedError: memory_format is not supported.`` from
``x.float(memory_format=...)`` and the other casts, and a TypeError from ``x.cpu(memory_format=...)``.
A value that is not a ``torch.memory_format`` raises PyTorch's ``TypeError: clone(): argument 'memory_format' must
be torch.memory_format, not str``.

Replaces: those ``Tensor`` methods (MindTorch's, called without the argument). ``nn.Parameter`` gets them too
(patches/parameter_methods.py copies ``Tensor`` methods, and keeps its own ``clone`` for MindSpore's calls).
"""
from __future__ import annotations

from . import Patch

CASTS = ("float", "double", "half", "bfloat16", "int", "long", "short", "char", "byte", "bool", "cfloat", "cdouble")


def _check(name, memory_format, memory_format_cls):
    if memory_format is not None and not isinstance(memory_format, memory_format_cls):
        raise TypeError(f"{name}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(memory_format).__name__}")


def _accepting(name, original, memory_format_cls):
    def method(self, *args, memory_format=None, **kwargs):
        _check(name, memory_format, memory_format_cls)
        return original(self, *args, **kwargs)
    # not functools.wraps: MindSpore's graph compiler unwraps __wrapped__ (mindspore/_extends/parse/parser.py,
    # inspect.unwrap) and would compile the original, which refuses memory_format
    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"PyTorch's ``Tensor.{name}``; ``memory_format`` is accepted and does not change the values "
                      "(patches/memory_format.py).")
    method._adapter_memory_format = True
    return method


def apply() -> None:
    from adapter import backend
    memory_format_cls = backend.internal("memory_format")
    from mindtorch.torch.nn.parameter import Parameter
    from mindtorch.torch.tensor import Tensor

    if getattr(Tensor.clone, "_adapter_memory_format", False):
        return
    for name in CASTS + ("clone", "cpu"):
        original = Tensor.__dict__.get(name)
        if original is None:
            continue
        method = _accepting(name, original, memory_format_cls)
        setattr(Tensor, name, method)
        if name != "clone" and Parameter.__dict__.get(name) is original:  # copied by parameter_methods
            setattr(Parameter, name, method)


PATCH = Patch("memory_format", "memory_format= accepted by Tensor.clone/cpu/float/double/... (values unchanged: "
                               "MindSpore tensors have no strides)", "post-import", apply)
