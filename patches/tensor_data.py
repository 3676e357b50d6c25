"""``torch.tensor(data)`` / ``torch.as_tensor(data)`` for any sequence PyTorch accepts, such as ``collections.deque``.

pytorch/examples reinforcement_learning/reinforce.py builds its returns in a ``deque`` (``returns.appendleft(R)``)
and calls ``torch.tensor(returns)``; PyTorch takes any sequence, MindTorch 0.4.0 (``Tensor(data)``, MindSpore's
type check) only lists, tuples, ndarrays and scalars: ``TypeError: For 'Tensor', the type of 'input_data' should be
one of [...] but got type 'deque'``. Here a ``collections.deque`` or ``range`` (at any nesting depth) is converted
to a list first; everything else goes to MindTorch's functions unchanged.

Replaces: ``torch.tensor`` and ``torch.as_tensor`` with thin wrappers over MindTorch's.
"""
from __future__ import annotations

import collections
import functools

from . import Patch
from ._wrap_once import wrap_attr

_CONVERTED = (collections.deque, range)


def _plain(data):
    """``data`` with every deque/range (nested in lists, tuples, deques) turned into a list; others unchanged."""
    if isinstance(data, _CONVERTED):
        return [_plain(v) for v in data]
    if isinstance(data, (list, tuple)) and any(isinstance(v, (_CONVERTED, list, tuple)) for v in data):
        return type(data)(_plain(v) for v in data)
    return data


def _wrap(original):
    @functools.wraps(original)
    def wrapper(data, *args, **kwargs):
        if isinstance(data, _CONVERTED) or isinstance(data, (list, tuple)) and data and \
                isinstance(data[0], _CONVERTED):
            data = _plain(data)
        return original(data, *args, **kwargs)
    return wrapper


def apply() -> None:
    import mindtorch.torch as torch
    for name in ("tensor", "as_tensor"):
        wrap_attr(torch, name, NAME, _wrap)


NAME = "tensor_data"
PATCH = Patch(NAME, "torch.tensor / torch.as_tensor take a collections.deque or range as PyTorch does "
              "(reinforce.py's returns)", "post-import", apply, replaces=("torch.tensor", "torch.as_tensor"))
