"""What one use of a torch API is, for the conformance inventory and the cases: ``(API, signature)``.

The API is PyTorch's public qualified name: ``torch.add``, ``torch.nn.functional.relu``, ``torch.Tensor.std`` (methods
and operators of tensors and parameters, ``torch.Tensor.__add__``), ``torch.nn.Conv2d`` (a constructor),
``torch.nn.Module.train``, ``torch.optim.SGD``, ``torch.optim.Optimizer.step``, ``torch.utils.data.DataLoader``,
``torchvision.transforms.Normalize``. The signature is how it was called: the number of positional arguments
(without the receiver of a method) and the sorted keyword names, written ``torch.std(1;keepdim,unbiased)``.
This module imports nothing of torch: it runs under real PyTorch (``.venv-ref``) and here alike.
"""
from __future__ import annotations

from typing import Iterable, Tuple


def signature(api: str, n_positional: int, keywords: Iterable[str] = ()) -> str:
    """``api(n;k1,k2)``: ``api`` called with ``n_positional`` positional arguments (receiver excluded) and the
    keyword arguments ``keywords`` (any order; ``**kwargs`` spelled ``**``). Example: ``signature("torch.Tensor.std",
    1, ["unbiased"])`` is ``"torch.Tensor.std(1;unbiased)"``."""
    kws = ",".join(sorted(set(keywords)))
    return f"{api}({n_positional}{';' + kws if kws else ''})"


def parse(sig: str) -> Tuple[str, int, Tuple[str, ...]]:
    """The inverse of :func:`signature`: ``(api, n_positional, keywords)``. Raises ValueError on another form."""
    api, sep, rest = sig.rpartition("(")
    if not sep or not rest.endswith(")"):
        raise ValueError(f"not an (API, signature) string: {sig!r}")
    n, _, kws = rest[:-1].partition(";")
    return api, int(n), tuple(k for k in kws.split(",") if k)
