"""``torch.cartesian_prod`` of one tensor, ``torch.combinations`` with no combination: PyTorch's shapes.

Found by PyTorch's OpInfo samples (``run.py conformance --opinfo``, issue 35), silently wrong shapes (a later
``for a, b in torch.combinations(x)`` or a ``[:, 0]`` then misbehaves far from the call):

* ``torch.cartesian_prod(a)`` of a single 1-D tensor is ``a`` itself in PyTorch (shape ``(n,)``); MindSpore's
  ``cartesian_prod`` gave ``(n, 1)`` (``cartesian_prod:s0``);
* ``torch.combinations(x, r)`` with fewer than ``r`` elements (and ``with_replacement=False``) is an empty ``(0, r)``
  tensor in PyTorch; MindSpore's gave ``(0,)`` and its gradient raised (``combinations:s2``).

PyTorch 2.13: ``combinations(x, r, with_replacement)`` of a 1-D ``x`` is the ``(count, r)`` tensor of the
``r``-element combinations of ``x``'s elements in lexicographic order of their positions (``itertools.combinations``
/ ``combinations_with_replacement``), ``(0,)`` for ``r = 0``. Here, in PyNative, the positions are enumerated on the
host and the values gathered (``index_select``: the gradient sums each element's copies, as PyTorch's); compiled, and
for inputs that are not 1-D, MindTorch's function runs as before. ``cartesian_prod`` of one tensor returns it.

Must come after nothing. Replaces: ``torch.cartesian_prod``, ``torch.combinations``.
"""
from __future__ import annotations

import itertools

from . import Patch, get_replaced, patch_attr

NAME = "combinatorics"
torch = graph_mode_condition = None  # mindtorch.torch and MindTorch's graph test, set by apply()
_originals = {}


def cartesian_prod(*tensors):
    """PyTorch's ``torch.cartesian_prod``: one tensor is returned as it is; more go to MindTorch's."""
    if len(tensors) == 1:
        return tensors[0]
    return _originals["cartesian_prod"](*tensors)


def combinations(input, r=2, with_replacement=False):  # noqa: A002 (PyTorch's name)
    """PyTorch's ``torch.combinations`` (module docstring): ``(count, r)``, ``(0,)`` for ``r = 0``."""
    if graph_mode_condition() or input.dim() != 1:
        return _originals["combinations"](input, r, with_replacement)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return torch.empty(0, dtype=input.dtype)
    positions = _positions(input.shape[0], r, with_replacement)
    index = torch.tensor(positions, dtype=torch.int64)
    return torch.index_select(input, 0, index).reshape(len(positions) // r, r)


def _positions(n, r, with_replacement):
    """The flattened positions of every ``r``-combination of ``range(n)``, in PyTorch's order (host; a separate
    function: the graph compiler parses :func:`combinations` whole and refuses a nested comprehension)."""
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    return [i for combination in pick(range(n), r) for i in combination]


def apply() -> None:
    global torch, graph_mode_condition
    import mindtorch.torch as mt
    from mindtorch.utils import graph_mode_condition as graph_mode
    torch, graph_mode_condition = mt, graph_mode
    for name, replacement in (("cartesian_prod", cartesian_prod), ("combinations", combinations)):
        _originals[name] = get_replaced(mt, name, NAME)
        patch_attr(mt, name, replacement)


PATCH = Patch(NAME, "torch.cartesian_prod of one tensor and torch.combinations with no combination in PyTorch's shapes "
                    "((n,) not (n, 1); (0, r) not (0,))", "post-import", apply,
              replaces=("torch.cartesian_prod", "torch.combinations"))
