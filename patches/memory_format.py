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

Replaces: those ``torch.Tensor`` methods (MindTorch's, called without the argument), and on ``torch.nn.Parameter``
those that patches/parameter_methods.py copied from ``Tensor`` (all but ``clone``: it keeps its own for MindSpore's
calls).
"""
from __future__ import annotations

from . import Patch, get_replaced, patch_attr
from ._wrap_once import wrap_attr

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
    return method


def apply() -> None:
    from adapter import backend
    memory_format_cls = backend.internal("memory_format")
    from mindtorch.torch.nn.parameter import Parameter
    from mindtorch.torch.tensor import Tensor

    for name in CASTS + ("clone", "cpu"):
        if name not in Tensor.__dict__:
            continue
        copied = name != "clone" and name in Parameter.__dict__ and \
            get_replaced(Parameter, name, NAME) is get_replaced(Tensor, name, NAME)  # by parameter_methods
        method = wrap_attr(Tensor, name, NAME,
                           lambda original, name=name: _accepting(name, original, memory_format_cls))
        if copied:
            patch_attr(Parameter, name, method)


NAME = "memory_format"
PATCH = Patch(NAME, "memory_format= accepted by Tensor.clone/cpu/float/double/... (values unchanged: "
                    "MindSpore tensors have no strides)", "post-import", apply,
              replaces=tuple(f"torch.Tensor.{name}" for name in CASTS + ("clone", "cpu"))
              + tuple(f"torch.nn.Parameter.{name}" for name in CASTS + ("cpu",)))
