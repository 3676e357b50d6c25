"""In-place tensor operations write into the tensor, as in PyTorch; ``.data`` and ``.detach()`` write through.

MindTorch 0.4.0 loses in-place writes in two ways, both silently (a third, ``Parameter.add_``/``sub_``/``fill_``...
running MindSpore's methods, which do not write on the CPU, is fixed in ``patches/parameter_methods.py``):

1. **Augmented assignment returns a new tensor.** MindTorch's ``__iadd__``/``__isub__``/``__imul__``... compute
   ``a + b`` and return it, so ``a += b`` rebinds the name: ``for p in model.parameters(): p -= lr * p.grad`` left every
   parameter unchanged, and ``model.fc.weight -= x`` replaced the Parameter by a plain tensor that no optimizer holds.
   They now write the result into ``a`` and return ``a``, with PyTorch's rules: the result type must be castable to
   ``a``'s dtype (``torch.can_cast``: no float into an integer tensor, no int into bool, no complex into float;
   otherwise ``RuntimeError: result type Float can't be cast to the desired output type Long``), and the broadcast
   shape must be ``a``'s (``RuntimeError: output with shape [2] doesn't match the broadcast shape [3, 2]``). Inside a
   compiled graph they stay functional (``a = a + b``), which is what the graph computes.
2. **Copies where PyTorch shares storage.** ``t.detach()`` and ``t.data`` of a tensor, and ``state_dict()`` values,
   share storage with ``t`` in PyTorch; in MindTorch they are new tensors. They are now :class:`AliasTensor`: an
   in-place operation on one (every MindTorch in-place method ends in ``Tensor.assign_value``) is also written into
   the tensor it came from, with ``mindspore.ops.assign`` for a Parameter (in place: the storage compiled graphs
   hold) and ``assign_value`` otherwise. Known difference: an alias does not see later writes into its source (it
   holds the value at the time of ``detach()``); ``Parameter.data`` shares the parameter's storage, so it does
   (``patches/parameter_data.py``). In a compiled graph ``.data`` is ``stop_gradient``, ``detach()`` MindTorch's.
3. **``copy_`` shared the source's storage.** MindTorch's ``t.copy_(src)`` ends in ``t.assign_value(src)`` when
   shapes and dtypes match, and MindSpore's ``assign_value`` adopts ``src``'s buffer: ``t`` and ``src`` were one
   storage. The next in-place kernel write into ``t`` -- every optimizer step writes its parameters in place --
   changed ``src`` too: ``saved = p.detach().clone(); ...; p.copy_(saved); optimizer.step()`` moved ``saved`` with
   ``p`` (a reset-to-saved loop trained on from the moved value; a ``load_state_dict`` source dict followed the
   training). ``copy_`` now writes a copy of ``src``'s value, as PyTorch copies into ``t``'s own storage.

Replaces: ``torch.Tensor.__i<op>__`` / ``torch.nn.Parameter.__i<op>__`` for 10 arithmetic and bitwise operators,
``torch.Tensor.detach``, ``torch.nn.Parameter.detach``, ``torch.Tensor.data`` (getter), ``torch.Tensor.copy_`` /
``torch.nn.Parameter.copy_``. ``state_dict()`` values are ``detach()``es (``patches/state_dict.py``).
"""
from __future__ import annotations

import operator

from . import Patch, get_replaced, patch_attr
from ._wrap_once import wrap_attr
from adapter.graph_semantics import dtype_category

# in-place dunder -> the out-of-place operator whose result it writes (10 of PyTorch's 12)
_AUGMENTED = {
    "__iadd__": operator.add, "__isub__": operator.sub, "__imul__": operator.mul, "__itruediv__": operator.truediv,
    "__ifloordiv__": operator.floordiv, "__imod__": operator.mod, "__ipow__": operator.pow,
    "__iand__": operator.and_, "__ior__": operator.or_, "__ixor__": operator.xor,
}  # <<= and >>= stay as they are: MindTorch has no << / >> (a TypeError either way)

AliasTensor = None  # the class, made once MindTorch is imported (apply())



def write_inplace(target, result, op_name: str):
    """Write ``result`` into ``target`` as PyTorch's in-place ``op_name`` does; return ``target``.

    Raises:
        RuntimeError: ``result``'s dtype is of a higher category than ``target``'s (PyTorch's message), or its shape
            is not ``target``'s (a broadcast that would grow the tensor).
    """
    from mindtorch.torch.tensor import cast_to_ms_tensor
    from adapter.userframe import user_location
    value = cast_to_ms_tensor(result)
    if value.dtype != target.dtype:
        if dtype_category(value.dtype) > dtype_category(target.dtype):
            raise RuntimeError(f"{op_name} at {user_location(3)}: result type {_torch_name(value.dtype)} can't be "
                               f"cast to the desired output type {_torch_name(target.dtype)}")
        value = value.astype(target.dtype)
    if tuple(value.shape) != tuple(target.shape):
        raise RuntimeError(f"{op_name} at {user_location(3)}: output with shape {list(target.shape)} doesn't match "
                           f"the broadcast shape {list(value.shape)}")
    target.assign_value(value)
    return target


def _torch_name(dtype) -> str:
    """PyTorch's scalar-type name in its messages (``Float`` for float32, ``Long`` for int64, ...)."""
    from adapter import backend
    _msdtype2typeDict = backend.internal("dtype_names")
    name = str(_msdtype2typeDict.get(str(dtype), dtype)).rsplit(".", 1)[-1]
    short = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
             "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "bfloat16": "BFloat16",
             "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
    return short.get(name, name)


def _augmented(name: str, op):
    from mindtorch.utils import graph_mode_condition

    def inplace(self, other):
        result = op(self, other)
        if graph_mode_condition():  # in a compiled graph `a += b` is `a = a + b`
            return result
        return write_inplace(self, result, f"'{name}'")

    inplace.__name__ = name
    inplace.__doc__ = f"PyTorch's in-place ``{name}``: the result is written into ``self`` (patches/inplace.py)."
    return inplace


def _alias_class():
    import mindspore as ms
    from mindtorch.torch.tensor import Tensor, cast_to_ms_tensor

    class _AliasTensor(Tensor):
        """A tensor that PyTorch would have share storage with ``_adapter_source`` (``detach()``, ``.data``,
        ``state_dict()`` values): its in-place updates are also written into the source."""

        def assign_value(self, value):
            super().assign_value(value)
            source = self.__dict__.get("_adapter_source")
            if source is None:
                return self
            new = cast_to_ms_tensor(value)
            if new.dtype != source.dtype:
                new = new.astype(source.dtype)
            if tuple(new.shape) != tuple(source.shape):
                return self  # a resize (e.g. `x.data = other_shape`) no longer aliases the source
            if isinstance(source, ms.Parameter):
                ms.ops.assign(source, new)  # in place: the storage compiled graphs hold
            else:
                source.assign_value(new)
            return self

    _AliasTensor.__name__ = _AliasTensor.__qualname__ = "Tensor"
    return _AliasTensor


def alias(tensor, detached):
    """``detached`` (a new MindTorch tensor with ``tensor``'s value) made an alias of ``tensor``; returns it."""
    detached.__class__ = AliasTensor
    detached._adapter_source = tensor
    return detached


_augmented_functions = {}  # dunder -> its function (made by apply(), once)

# set by apply(): what this patch replaced, and MindTorch helpers (module globals: these run for every op)
_original_detach = _original_param_detach = _original_copy = None
graph_mode_condition = cast_to_ms_tensor = cast_to_adapter_tensor = stop_gradient = None


def detach(self):
    """PyTorch's ``detach()``: no gradient history; in-place updates of the result reach ``self``."""
    out = _original_detach(self)
    if graph_mode_condition():
        return out
    return alias(self, out)


def _get_data(self):
    """PyTorch's ``Tensor.data``: ``self``'s value without history; in-place updates of it reach ``self``. In a
    compiled graph ``stop_gradient(self)``: MindTorch's ``detach`` sets ``requires_grad``, which the graph refuses for
    a parameter (``d = w.data`` in a step region: "Do not support to set attribute for a parameter", the site ran
    eagerly)."""
    if graph_mode_condition():
        return cast_to_adapter_tensor(stop_gradient(self))
    return detach(self)


def param_detach(self):
    """PyTorch's ``Parameter.detach()``: a tensor with the parameter's value; in-place updates of it reach the
    parameter."""
    out = _original_param_detach(self)
    if graph_mode_condition():
        return out
    return alias(self, out)


def copy_(self, src, non_blocking=False):
    """PyTorch's ``Tensor.copy_``: ``src``'s value (broadcast, cast to ``self``'s dtype) written into ``self``,
    which does not share storage with ``src`` afterwards (patches/inplace.py)."""
    value = cast_to_ms_tensor(src)
    if not graph_mode_condition() and tuple(value.shape) == tuple(self.shape) and value.dtype == self.dtype:
        src = value.copy()  # else MindTorch's broadcast_to / astype already made a new tensor
    return _original_copy(self, src, non_blocking)


def apply() -> None:
    global AliasTensor, _original_detach, _original_param_detach, _original_copy
    global graph_mode_condition, cast_to_ms_tensor, cast_to_adapter_tensor, stop_gradient
    from mindspore.ops import stop_gradient
    from mindtorch.torch.nn.parameter import Parameter
    from mindtorch.torch.tensor import Tensor, cast_to_adapter_tensor, cast_to_ms_tensor
    from mindtorch.utils import graph_mode_condition

    if AliasTensor is None:  # one class for the process: tensors made by an earlier apply keep being aliases
        AliasTensor = _alias_class()

    # 1. augmented assignment in place, on Tensor and Parameter (patches/parameter_methods.py gave Parameter
    #    MindTorch's functional ones)
    for name, op in _AUGMENTED.items():
        func = _augmented_functions.get(name)
        if func is None:  # once: a second apply installs the same functions
            func = _augmented_functions[name] = _augmented(name, op)
        patch_attr(Tensor, name, func)
        patch_attr(Parameter, name, func)

    # 2. detach() and .data alias their source
    _original_detach = get_replaced(Tensor, "detach", NAME)
    _original_param_detach = get_replaced(Parameter, "detach", NAME)
    patch_attr(Tensor, "detach", detach)
    wrap_attr(Tensor, "data", NAME, lambda original: property(_get_data, original.fset))
    patch_attr(Parameter, "detach", param_detach)

    # 3. copy_ copies
    _original_copy = get_replaced(Tensor, "copy_", NAME)
    patch_attr(Tensor, "copy_", copy_)
    if get_replaced(Parameter, "copy_", NAME) is _original_copy:  # copied by patches/parameter_methods.py
        patch_attr(Parameter, "copy_", copy_)


NAME = "inplace"
PATCH = Patch(NAME, "in-place ops write in place: Parameter.add_/sub_/fill_..., a += b, p -= lr * g; "
                    ".data/.detach()/state_dict() values write through; copy_ does not share the source's "
                    "storage", "post-import", apply,
              replaces=tuple(f"torch.{owner}.{name}" for owner in ("Tensor", "nn.Parameter") for name in _AUGMENTED)
              + ("torch.Tensor.detach", "torch.Tensor.data", "torch.nn.Parameter.detach", "torch.Tensor.copy_",
                 "torch.nn.Parameter.copy_"),
              after=("parameter_methods",))
