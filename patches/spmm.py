"""``torch.spmm(input, mat2)``: PyTorch's sparse x dense matrix product, which also takes two dense matrices.

MindTorch 0.4.0 has no ``torch.spmm`` (``AttributeError: module 'mindtorch.torch' has no attribute 'spmm'``;
pytorch/examples' mnist_forward_forward/main.py:69 calls it on dense tensors). PyTorch 2.13 computes it as ``mm`` for
a strided ``input`` (measured: ``torch.spmm(ones(2, 3), ones(3, 2))`` equals ``torch.mm``; shape errors are ``mm``'s
RuntimeError) and as ``torch.sparse.mm`` for a sparse COO ``input``.

Replaces: adds ``torch.spmm``: a dense ``input`` (2-D, ``(n, m)``) times ``mat2`` (2-D, ``(m, p)``) -> ``(n, p)`` through
MindTorch's ``mm`` (same dtype rules, gradient to both); a sparse ``input`` through MindTorch's ``torch.sparse.mm``
when it has one, else NotImplementedError naming the user's file:line.
"""
from __future__ import annotations

from . import Patch, patch_attr

torch = user_location = None  # set by apply() (an import inside a function does not compile in graph mode)


def spmm(input, mat2):  # noqa: A002 (PyTorch's name)
    """``input @ mat2`` for 2-D ``input`` (dense or sparse COO) and dense 2-D ``mat2``; see ``patches/spmm.py``.

    Raises:
        RuntimeError: shapes that ``mm`` refuses (PyTorch's message from ``mm``).
        NotImplementedError: a sparse ``input`` where MindTorch has no ``torch.sparse.mm``.
    """
    if getattr(input, "is_sparse", False):
        sparse_mm = getattr(getattr(torch, "sparse", None), "mm", None)
        if sparse_mm is None:
            raise NotImplementedError(f"torch.spmm at {user_location(2) or '?'}: sparse input is not supported "
                                      "on MindTorch; use a dense tensor (input.to_dense())")
        return sparse_mm(input, mat2)
    return torch.mm(input, mat2)


def apply() -> None:
    global torch, user_location
    import mindtorch.torch as torch
    from adapter.userframe import user_location
    patch_attr(torch, "spmm", spmm)


PATCH = Patch("spmm", "torch.spmm (missing in MindTorch): mm for dense input, torch.sparse.mm for sparse, as PyTorch",
              "post-import", apply, replaces=("torch.spmm",))
