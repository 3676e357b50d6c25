"""``Tensor.to`` with PyTorch's keywords: ``dtype=None`` keeps the dtype; ``non_blocking``, ``copy`` and
``memory_format`` are accepted.

PyTorch's ``Tensor.to(device=None, dtype=None, non_blocking=False, copy=False, memory_format=torch.preserve_format)``
(and ``to(dtype, ...)``, ``to(other, ...)``) treats ``dtype=None`` as "keep the dtype" and returns ``self`` when
nothing changes; ``copy=True`` returns a new tensor even then. MindTorch 0.4.0's ``to`` casts whenever a ``dtype``
keyword is present, so ``dtype=None`` raised MindSpore's ``TypeError: For Tensor.astype, the input type must be one
of [...], but got 'None'``: timm's ``train.py`` (``input.to(device=device, dtype=model_dtype)`` with
``model_dtype = None`` unless ``--model-dtype`` is given) stopped at its first batch. MindTorch also refused
``memory_format=``/``copy=`` as unknown dtypes were never looked at (it only reads ``dtype``/``other``/``device``).

Here ``dtype=None`` is dropped before MindTorch's method runs (``x.to(device=d, dtype=None)`` is ``x.to(device=d)``:
``self``; ``x.to(dtype=None)`` is ``self``), ``non_blocking`` and ``memory_format`` are accepted (MindSpore tensors
have no user-visible strides, patches/memory_format.py; the copy is synchronous), and ``copy=True`` returns a clone
of the result (a new tensor, PyTorch's aliasing; not inside a compiled graph, where nothing aliases and MindSpore's
CPU has no ``Clone`` kernel). Everything else goes to MindTorch's method unchanged.

Replaces: ``torch.Tensor.to`` (MindTorch's, called without the four keywords), and ``torch.nn.Parameter.to`` where
patches/parameter_methods.py copied it from ``Tensor``.
"""
from __future__ import annotations

from . import Patch, get_replaced, patch_attr
from ._wrap_once import wrap_attr

graph_mode_condition = None  # MindTorch's, bound by apply() (compiled graphs read module globals)


def _to(original, memory_format_cls):
    def to(self, *args, dtype=None, non_blocking=False, copy=False, memory_format=None, **kwargs):
        if memory_format is not None and not isinstance(memory_format, memory_format_cls):
            raise TypeError(f"to(): argument 'memory_format' must be torch.memory_format, not "
                            f"{type(memory_format).__name__}")
        if dtype is not None and dtype == self.dtype and not args and "other" not in kwargs:
            out = self  # PyTorch: nothing to change (MindTorch's astype would copy)
        elif dtype is not None:
            out = original(self, *args, dtype=dtype, **kwargs)
        elif args or kwargs:
            out = original(self, *args, **kwargs)
        else:
            out = self
        if copy and not graph_mode_condition():  # a compiled graph has no aliasing to break (and no CPU Clone)
            out = out.clone()
        return out
    # not functools.wraps: MindSpore's graph compiler unwraps __wrapped__ and would compile the original
    to.__name__ = to.__qualname__ = "to"
    to.__doc__ = ("PyTorch's ``Tensor.to``: ``dtype=None`` keeps the dtype; ``non_blocking``, ``copy``, "
                  "``memory_format`` accepted (patches/tensor_to.py).")
    return to


def apply() -> None:
    global graph_mode_condition
    from mindtorch.utils import graph_mode_condition
    from adapter import backend
    memory_format_cls = backend.internal("memory_format")
    from mindtorch.torch.nn.parameter import Parameter
    from mindtorch.torch.tensor import Tensor

    copied = "to" in Parameter.__dict__ and get_replaced(Parameter, "to", NAME) is get_replaced(Tensor, "to", NAME)
    method = wrap_attr(Tensor, "to", NAME, lambda original: _to(original, memory_format_cls))
    if copied:
        patch_attr(Parameter, "to", method)


NAME = "tensor_to"
PATCH = Patch(NAME, "Tensor.to(device=d, dtype=None) keeps the dtype (MindTorch cast to None: TypeError); "
                    "non_blocking/copy/memory_format accepted", "post-import", apply,
              replaces=("torch.Tensor.to", "torch.nn.Parameter.to"), optional=("torch.nn.Parameter.to",),
              after=("parameter_methods",))
