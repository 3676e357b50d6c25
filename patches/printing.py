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
"""
import functools
import operator

from . import Patch


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


def apply() -> None:
    from mindtorch.torch.common import dtype as dtypes
    from adapter import backend
    Size = backend.internal("Size")
    if getattr(Size, "_adapter_printing", False):
        return
    for name in ("Bool", "Int", "UInt", "Float", "BFloat", "Complex"):
        cls = getattr(dtypes, name, None)
        if cls is None:
            continue
        base = cls.__mro__[2]  # (cls, TypeFunc, MindSpore's type class, ...)
        cls._adapter_base_str = staticmethod(base.__str__)
        cls.__str__ = _dtype_str
        cls.__repr__ = _dtype_str

    def size_repr(self):
        return "torch.Size(" + str(list(self)) + ")"

    def numel(self):
        return _numel(self)

    def getitem(self, key):
        item = tuple.__getitem__(self, key)
        return Size(item) if isinstance(key, slice) else item

    def add(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    Size.__repr__ = Size.__str__ = size_repr
    Size.numel = numel
    Size.__getitem__ = getitem
    Size.__add__ = add
    Size._adapter_printing = True


PATCH = Patch("printing", "dtypes print as torch.float32 (not mindtorch.float32 / mindspore.float32), torch.Size as "
                          "torch.Size([...]); Size([]).numel() is 1, slices of a Size are Sizes",
              "post-import", apply)
