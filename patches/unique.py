"""``torch.unique`` / ``Tensor.unique`` with PyTorch's semantics: sorted, ``return_inverse``, ``return_counts``,
``dim``, exact for every dtype.

MindTorch 0.4.0's ``unique`` ignores ``return_counts`` and ``dim`` (it returns the values alone, or ``(values,
inverse)``), raises for ``sorted=True, return_inverse=True`` (PyTorch's defaults with an inverse), and sorts the
values by casting them to float32. Measured on both stacks: ``torch.unique(torch.tensor([3, 1, 2, 1, 3, 3]),
return_counts=True)`` gave the one tensor ``[1, 2, 3]``, so ``values, counts = torch.unique(...)`` unpacked the
values' elements (timm's ``regnet.py:674``: ``create_model('regnety_002')`` failed; a caller that does not unpack
got the values where it asked for counts: silent), and integers beyond 2**24 came back rounded (``[16777217,
16777216, 3]`` gave ``[3, 16777216, 16777216]``).

PyTorch 2.13's behaviour (values recorded from it in ``tests/fixtures/unique_reference.json``):

* ``dim=None``: the unique elements of the flattened input, in ascending order (CPU PyTorch sorts with
  ``sorted=False`` too); every NaN is its own element (NaN != NaN) and they come last. ``inverse`` has the input's
  shape (0-d for a 0-d input), ``inverse[i] = k`` where ``input[i] == output[k]``; ``counts`` is 1-D, one per output
  element.
* ``dim=k`` (negative allowed): the unique slices along ``k``, ordered lexicographically (element by element in
  memory order of the slice); ``sorted`` is ignored as in PyTorch; ``inverse`` and ``counts`` are 1-D, of length
  ``input.size(k)`` and the number of unique slices.
* ``inverse`` and ``counts`` are int64; the output keeps the input's dtype. The result is a tensor when neither flag
  is set, else the tuple ``(output, inverse)``, ``(output, counts)`` or ``(output, inverse, counts)``.

Here the whole computation runs on the host with numpy (a stable argsort, then group boundaries), in PyNative. The
outputs carry no gradient (PyTorch's ``unique`` has no derivative either: a backward through it raises there).
Inside a compiled (graph-mode) function ``unique`` raises ``RuntimeError`` (its output shape depends on the values;
MindTorch's graph path is the wrong one above), so a compiled step that calls it falls back to PyNative with that
reason instead of computing it wrongly.

``torch.unique_consecutive`` / ``Tensor.unique_consecutive`` (one element per run of equal neighbours, in the input's
order; the same host computation without the sort): MindTorch 0.4.0 passed ``return_idx=`` to mindspore 2.10's
``ops.unique_consecutive``, so every call raised ``TypeError`` (found by PyTorch's OpInfo samples, issue 35).

Replaces: ``torch.unique`` and ``torch.unique_consecutive`` (and ``mindtorch.torch.functional``'s),
``Tensor.unique``, ``Tensor.unique_consecutive``.
"""
from __future__ import annotations

import numpy as np

from . import Patch, patch_attr

# graph code below reads these module globals; set by apply()
torch = pynative_mode_condition = None

GRAPH_MESSAGE = ("torch.unique in a compiled graph: its output shape depends on the values, and MindTorch's graph "
                 "path ignores return_counts/dim and sorts through float32; run this code in PyNative")
GRAPH_MESSAGE_CONSECUTIVE = ("torch.unique_consecutive in a compiled graph: its output shape depends on the values; "
                             "run this code in PyNative")


def _sort_order(flat_rows: np.ndarray) -> np.ndarray:
    """Stable lexicographic order of the rows of a 2-D array (column 0 first), NaN after every number."""
    keys = []
    for column in range(flat_rows.shape[1] - 1, -1, -1):  # lexsort's last key is the primary one
        values = flat_rows[:, column]
        if values.dtype.kind == "f":
            nan = np.isnan(values)
            keys.append(np.where(nan, 0, values))
            keys.append(nan)
        else:
            keys.append(values.astype(np.int8) if values.dtype == np.bool_ else values)
    if not keys:
        return np.arange(flat_rows.shape[0], dtype=np.int64)
    return np.lexsort(keys).astype(np.int64)


def unique_host(values: np.ndarray, return_inverse: bool, return_counts: bool, dim, consecutive: bool = False):
    """PyTorch's unique (``consecutive``: ``unique_consecutive``, runs of equal neighbours in the input's order, not
    sorted) on a numpy array. Returns ``(output, inverse, counts)`` as numpy arrays (inverse and counts int64;
    ``None`` where not asked for)."""
    if dim is None:
        rows = values.reshape(-1, 1)
    else:
        if not -values.ndim <= dim < max(values.ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(values.ndim, 1)}, "
                             f"{max(values.ndim, 1) - 1}], but got {dim})")
        dim = dim % values.ndim
        moved = np.moveaxis(values, dim, 0)
        rows = moved.reshape(moved.shape[0], -1)
    order = np.arange(rows.shape[0], dtype=np.int64) if consecutive else _sort_order(rows)
    ordered = rows[order]
    n = ordered.shape[0]
    starts = np.ones(n, dtype=bool)
    if n > 1:
        # NaN != NaN: each NaN starts its own group, as PyTorch's
        starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    group_first = np.flatnonzero(starts)
    if dim is None:
        output = ordered[group_first, 0]
    else:
        kept = moved[order[group_first]]
        output = np.moveaxis(kept, 0, dim)
    inverse = counts = None
    if return_inverse:
        inverse = np.empty(n, dtype=np.int64)
        inverse[order] = np.cumsum(starts) - 1
        if dim is None:
            inverse = inverse.reshape(values.shape)
    if return_counts:
        counts = np.diff(np.append(group_first, n)).astype(np.int64)
    return np.ascontiguousarray(output), inverse, counts


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002 (PyTorch's names)
    """``torch.unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None)``: PyTorch's
    semantics (module docstring). Returns a tensor (input's dtype) or a tuple with int64 ``inverse`` / ``counts``.
    Raises RuntimeError inside a compiled graph, IndexError for a ``dim`` out of range."""
    if not pynative_mode_condition():
        raise RuntimeError(GRAPH_MESSAGE)
    output, inverse, counts = unique_host(input.detach().numpy(), return_inverse, return_counts, dim)
    result = [torch.tensor(output, dtype=input.dtype)]
    if return_inverse:
        result.append(torch.tensor(inverse, dtype=torch.int64))
    if return_counts:
        result.append(torch.tensor(counts, dtype=torch.int64))
    return result[0] if len(result) == 1 else tuple(result)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """``torch.unique_consecutive(input, return_inverse=False, return_counts=False, dim=None)``: one element (or
    slice along ``dim``) per run of equal neighbours, in the input's order; results as :func:`unique`'s. MindTorch
    0.4.0 passed ``return_idx=`` to mindspore 2.10's ``ops.unique_consecutive``: every call raised TypeError."""
    if not pynative_mode_condition():
        raise RuntimeError(GRAPH_MESSAGE_CONSECUTIVE)
    output, inverse, counts = unique_host(input.detach().numpy(), return_inverse, return_counts, dim,
                                          consecutive=True)
    result = [torch.tensor(output, dtype=input.dtype)]
    if return_inverse:
        result.append(torch.tensor(inverse, dtype=torch.int64))
    if return_counts:
        result.append(torch.tensor(counts, dtype=torch.int64))
    return result[0] if len(result) == 1 else tuple(result)


def unique_consecutive_method(self, return_inverse=False, return_counts=False, dim=None):
    """``Tensor.unique_consecutive``: as :func:`unique_consecutive`."""
    return unique_consecutive(self, return_inverse, return_counts, dim)


def unique_method(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """``Tensor.unique(sorted=True, return_inverse=False, return_counts=False, dim=None)``: as :func:`unique`."""
    return unique(self, sorted, return_inverse, return_counts, dim)


def apply() -> None:
    global torch, pynative_mode_condition
    import mindtorch.torch as torch
    import mindtorch.torch.functional as functional
    from mindtorch.torch.tensor import Tensor
    from mindtorch.utils import pynative_mode_condition
    # no __wrapped__: MindSpore's parser compiles inspect.unwrap(fn), which would be MindTorch's graph path
    unique_method.__name__ = "unique"
    unique_consecutive_method.__name__ = "unique_consecutive"
    for owner in (torch, functional):
        patch_attr(owner, "unique", unique)
        patch_attr(owner, "unique_consecutive", unique_consecutive)
    patch_attr(Tensor, "unique", unique_method)
    patch_attr(Tensor, "unique_consecutive", unique_consecutive_method)


PATCH = Patch("unique", "torch.unique/Tensor.unique as PyTorch: return_counts, return_inverse, dim, exact integer "
                        "order (MindTorch ignored return_counts and dim and sorted through float32); "
                        "unique_consecutive (raised TypeError on mindspore 2.10)", "post-import",
              apply, replaces=("torch.unique", "torch.functional.unique", "torch.Tensor.unique",
                               "torch.unique_consecutive", "torch.functional.unique_consecutive",
                               "torch.Tensor.unique_consecutive"))
