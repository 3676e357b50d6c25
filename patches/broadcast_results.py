"""``torch.broadcast_shapes`` returns a ``torch.Size`` and ``torch.broadcast_tensors`` a tuple, as PyTorch.

MindTorch 0.4.0 returns Python lists from both. Code that compares the result with a tuple or a ``torch.Size``
(``torch.broadcast_shapes(a.shape, b.shape) == x.shape`` is ``False`` for a list), uses it as a dict key or
concatenates it with a tuple (``TypeError: can only concatenate list (not "tuple") to list``) goes another way than
under PyTorch. Found by op_db's ``broadcast_shapes`` and ``broadcast_tensors`` samples (``run.py conformance --opinfo``,
issue 35: "result is list, PyTorch's is Size / tuple").

Here the results are converted: ``torch.Size(list)``, ``tuple(list)``; the values and errors are MindTorch's.
PyNative only: in a compiled function the unwrapped original runs (a list there, as every sequence a graph returns).

Replaces: ``torch.broadcast_shapes``, ``torch.broadcast_tensors`` and the same objects in ``torch.functional``.
"""
import functools

from . import Patch, patch_attr
from ._wrap_once import wrap_attr

NAME = "broadcast_results"
torch = None  # mindtorch.torch, bound by apply()


def _shapes(original):
    @functools.wraps(original)
    def broadcast_shapes(*shapes):
        return torch.Size(original(*shapes))
    return broadcast_shapes


def _tensors(original):
    @functools.wraps(original)
    def broadcast_tensors(*tensors):
        return tuple(original(*tensors))
    return broadcast_tensors


def apply() -> None:
    global torch
    import mindtorch.torch as mt
    import mindtorch.torch.functional as functional
    torch = mt
    patch_attr(functional, "broadcast_shapes", wrap_attr(mt, "broadcast_shapes", NAME, _shapes))
    patch_attr(functional, "broadcast_tensors", wrap_attr(mt, "broadcast_tensors", NAME, _tensors))


PATCH = Patch(NAME, "torch.broadcast_shapes returns a torch.Size and torch.broadcast_tensors a tuple, as PyTorch "
                    "(MindTorch returned lists)", "post-import", apply,
              replaces=("torch.broadcast_shapes", "torch.broadcast_tensors", "torch.functional.broadcast_shapes",
                        "torch.functional.broadcast_tensors"))
