"""``None`` inside a compiled graph's outputs comes back as ``None``, where it sits.

Why. Graphs compile with ``jit_syntax_level=STRICT`` (``adapter/graph_semantics.graph_mode``). Under STRICT, a graph
output that holds ``None`` inside a tuple comes back wrong, on mindspore 2.10 and 2.5-dev alike (measured with a plain
``nn.Cell`` returning ``(None, x * 2, (None, x))``): the tuple loses elements and the ``None`` becomes a tensor of
dtype ``none`` (2.10: ``(tensor((), dtype=torch.none), (x * 2,))``; 2.5-dev: a crash in ``data_sync`` when it is
read). Under LAX the same Cell returns the tuple as written. PyTorch code returns ``None`` in tuples all the time: a
language model's ``forward(idx, targets=None)`` returns ``(logits, None)`` when sampling, so ``logits, _ = model(idx)``
under ``torch.no_grad()`` failed with "not enough values to unpack" once that forward compiled.

How. The graph wraps what it returns in :func:`mark_none`: every ``None`` in nested tuples and lists becomes
:data:`NONE_MARK`, an int constant (returned as a Python int under STRICT, and kept by the compile cache: a string
constant output made a cached graph fail to load, "The pointer[abstract] is null"), resolved when the graph is compiled
(``is None`` and ``isinstance`` of a tuple are constants there: no operator is added). The host side undoes it with
:func:`unmark_none`. Other values (tensors, numbers, dicts) pass through both unchanged.
"""
from __future__ import annotations

NONE_MARK = -1913357071  # an int32 no forward returns by chance


def mark_none(value):
    """Graph side (parsed by MindSpore): ``value`` with each ``None`` in nested tuples/lists replaced by
    :data:`NONE_MARK`; anything else as it is."""
    if value is None:
        return NONE_MARK
    if isinstance(value, tuple):
        out = ()
        for item in value:
            out = out + (mark_none(item),)
        return out
    if isinstance(value, list):
        out_list = []
        for item in value:
            out_list.append(mark_none(item))
        return out_list
    return value


def unmark_none(value):
    """Host side: the inverse of :func:`mark_none` on a graph's result (tuples stay tuples, lists lists)."""
    if type(value) is int and value == NONE_MARK:  # noqa: E721 (not a bool, not a tensor)
        return None
    if isinstance(value, tuple):
        return tuple(unmark_none(v) for v in value)
    if isinstance(value, list):
        return [unmark_none(v) for v in value]
    return value
