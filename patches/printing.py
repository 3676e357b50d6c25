"""What a script prints for dtypes and sizes: PyTorch's text (``torch.float32``, ``torch.Size([2, 3])``).

Scripts log shapes and dtypes (``print(x.size(), x.dtype)``), and users compare those logs with PyTorch's. MindTorch
0.4.0 printed ``mindtorch.float32`` (``str``; ``repr`` gave MindSpore's ``mindspore.float32``) and
``mindtorch.Size([2, 3])``; code that tests ``str(x.dtype) == "torch.float32"`` took the other branch.

* dtypes: ``str`` and ``repr`` of MindTorch's dtype objects are ``torch.<name>`` as PyTorch's
  (``torch.float32``, ``torch.int64``, ``torch.bool``, ``torch.bfloat16``, ``torch.complex64``...). MindTorch's and
  MindSpore's own code reads dtype names with ``str(dtype).split('.')[-1]`` or from MindSpore dtypes, which are
  unchanged;
* ``torch.Size``: ``repr``/``str`` ``torch.Size([2, 3])``; ``numel()`` of ``torch.Size([])`` is 1 (MindTorch
  raised: ``reduce`` of an empty sequence); a slice of a Size and a Size plus a tuple are Sizes, as PyTorch's.

``x.shape`` stays MindSpore's tuple (``x.size()`` is the Size), and tensors print as MindTorch prints them.

Replaces: ``__str__``/``__repr__`` (and an added ``_adapter_base_str``, MindSpore's ``__str__``) of MindTorch's dtype
classes :data:`DTYPE_CLASSES` (``torch.common.dtype``); ``torch.Size.__repr__/__str__/numel/__getitem__/__add__``.
"""
import functools
import operator

from . import Patch, patch_attr
from ._wrap_once import wrap_attr


def _numel_impl(shape) -> int:
    return functools.reduce(operator.mul, shape, 1)


def _numel(shape):
    from adapter import backend
    _primexpr = backend.internal("primexpr")
    global _numel_primexpr
    if _numel_primexpr is None:
        _numel_primexpr = _primexpr(_numel_impl)  # a constant in graphs, as MindTorch's
    return _numel_primexpr(shape)


_numel_primexpr = None


def _dtype_str(self) -> str:
    return "torch." + self._adapter_base_str(self).lower()


DTYPE_CLASSES = ("Bool", "Int", "UInt", "Float", "BFloat", "Complex")
Size = None  # MindTorch's torch.Size, set by apply()


def size_repr(self) -> str:
    """``torch.Size([2, 3])``."""
    return "torch.Size(" + str(list(self)) + ")"


def numel(self) -> int:
    """The product of the sizes; 1 for ``torch.Size([])``."""
    return _numel(self)


def size_getitem(self, key):
    """An item, or a Size for a slice."""
    item = tuple.__getitem__(self, key)
    return Size(item) if isinstance(key, slice) else item


def size_add(self, other):
    """A Size: ``self`` followed by ``other``'s items."""
    return Size(tuple.__add__(self, tuple(other)))


def apply() -> None:
    global Size
    from adapter import backend
    Size = backend.internal("Size")
    from mindtorch.torch.common import dtype as dtypes
    for name in DTYPE_CLASSES:
        cls = getattr(dtypes, name, None)
        if cls is None:
            continue
        base = cls.__mro__[2]  # (cls, TypeFunc, MindSpore's type class, ...)
        wrap_attr(cls, "_adapter_base_str", NAME, lambda _, base=base: staticmethod(base.__str__))
        patch_attr(cls, "__str__", _dtype_str)
        patch_attr(cls, "__repr__", _dtype_str)
    patch_attr(Size, "__repr__", size_repr)
    patch_attr(Size, "__str__", size_repr)
    patch_attr(Size, "numel", numel)
    patch_attr(Size, "__getitem__", size_getitem)
    patch_attr(Size, "__add__", size_add)


NAME = "printing"
PATCH = Patch(NAME, "dtypes print as torch.float32 (not mindtorch.float32 / mindspore.float32), torch.Size as "
                          "torch.Size([...]); Size([]).numel() is 1, slices of a Size are Sizes",
              "post-import", apply,
              replaces=tuple(f"torch.common.dtype.{cls}.{name}" for cls in DTYPE_CLASSES
                             for name in ("_adapter_base_str", "__str__", "__repr__"))
              + tuple(f"torch.Size.{name}" for name in ("__repr__", "__str__", "numel", "__getitem__", "__add__")))
