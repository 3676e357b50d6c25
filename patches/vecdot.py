"""``torch.linalg.vecdot`` of empty vectors: 0, as PyTorch.

MindTorch 0.4.0 sums ``conj(x) * y`` with MindSpore's ``Tensor.sum``; with an empty reduced dimension and an input
that requires grad that sum returned 1 instead of 0 (op_db's ``linalg.vecdot:s0/s1``, ``vecdot`` of two empty
vectors: 1.0, PyTorch's 0.0; ``run.py conformance --opinfo``, issue 35), silently.

PyTorch 2.13: ``vecdot(x, y, dim=-1) = sum(conj(x) * y, dim)``, broadcast, both of one dtype (``RuntimeError``
otherwise). Here the same through ``torch.sum`` (MindTorch's with patches/empty_reductions.py: 0 for an empty sum)
and ``torch.conj`` for complex inputs; the gradients are those of the product and the sum.

Must come after nothing (``torch.sum`` is looked up at call time). Replaces: ``torch.linalg.vecdot``.
"""
from __future__ import annotations

from . import Patch, patch_attr

NAME = "vecdot"
torch = None  # mindtorch.torch, set by apply()


def vecdot(x, y, *, dim=-1, out=None):
    """PyTorch's ``torch.linalg.vecdot`` (module docstring): the broadcast shape without ``dim``."""
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type {x.dtype} "
                           f"and y of type {y.dtype} instead")
    if x.is_complex():
        x = torch.conj(x)
    result = torch.sum(x * y, dim)
    if out is not None:
        out.copy_(result)
        return out
    return result


def apply() -> None:
    global torch
    import mindtorch.torch as mt
    import mindtorch.torch.linalg as linalg
    torch = mt
    patch_attr(linalg, "vecdot", vecdot)


PATCH = Patch(NAME, "torch.linalg.vecdot of empty vectors is 0 as PyTorch (MindSpore's sum under grad gave 1, "
                    "silently)", "post-import", apply, replaces=("torch.linalg.vecdot",))
