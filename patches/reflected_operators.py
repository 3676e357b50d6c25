"""The reflected bitwise operators and ``__rmod__`` of ``torch.Tensor``, as PyTorch: ``3 | t``, ``True & mask``,
``1 ^ t``, ``t0.__rmod__(t1)``.

MindTorch 0.4.0's ``Tensor`` has no working ``__ror__`` (``t0.__ror__(t1)``: ``AttributeError: 'Tensor' object has
no attribute '__ror__'``; ``3 | t``: ``TypeError: unsupported operand type(s)``) and no ``__rand__`` / ``__rxor__``,
and its ``__rmod__`` takes only a number (``TypeError: rmod(): argument 'input' (position 1) must be Number, not
Tensor``; found by PyTorch's OpInfo samples, ``run.py conformance --opinfo``, issue 35). ``1 - mask`` works but
``True ^ mask`` and ``flags | 1`` written the other way round did not.

Replaces (adds) ``torch.Tensor.__ror__`` / ``__rand__`` / ``__rxor__``: ``other OP self`` is ``self OP other`` (the
three are commutative; ``Tensor.__or__``/``__and__``/``__xor__`` do the type checks and broadcasting); and
``torch.Tensor.__rmod__``: a tensor ``other`` gives ``torch.remainder(other, self)`` (broadcast as PyTorch), a number
goes to the ``__rmod__`` this patch replaced (``patches/float64_precision.py``'s, which it must come after).
"""
from . import Patch, get_replaced, patch_attr

NAME = "reflected_operators"
torch = None  # mindtorch.torch, set by apply()
_rmod = None  # the Tensor.__rmod__ this patch replaced


def __ror__(self, other):
    """``other | self``: ``self | other`` (module docstring)."""
    return self.__or__(other)


def __rand__(self, other):
    """``other & self``: ``self & other`` (module docstring)."""
    return self.__and__(other)


def __rxor__(self, other):
    """``other ^ self``: ``self ^ other`` (module docstring)."""
    return self.__xor__(other)


def __rmod__(self, other):
    """``other % self``: ``torch.remainder(other, self)`` for a tensor ``other`` (module docstring)."""
    if isinstance(other, torch.Tensor):
        return torch.remainder(other, self)
    return _rmod(self, other)


def apply() -> None:
    global torch, _rmod
    import mindtorch.torch
    torch = mindtorch.torch
    from mindtorch.torch.tensor import Tensor
    _rmod = get_replaced(Tensor, "__rmod__", NAME)
    patch_attr(Tensor, "__ror__", __ror__)
    patch_attr(Tensor, "__rand__", __rand__)
    patch_attr(Tensor, "__rxor__", __rxor__)
    patch_attr(Tensor, "__rmod__", __rmod__)


PATCH = Patch(NAME, "Tensor.__ror__ / __rand__ / __rxor__ (3 | t raised TypeError) and __rmod__ of a tensor, as "
                    "PyTorch", "post-import", apply,
              replaces=("torch.Tensor.__ror__", "torch.Tensor.__rand__", "torch.Tensor.__rxor__",
                        "torch.Tensor.__rmod__"),
              after=("float64_precision",))
