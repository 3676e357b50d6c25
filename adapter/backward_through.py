"""Backward through a call: a step site whose ``backward()`` runs inside a call of the script's (issue 34).

timm's train.py hands its loss to a closure, ``_backward(loss)``, which hands it to timm's ``NativeScaler.__call__``,
which runs ``self._scaler.scale(loss).backward(create_graph=create_graph)`` and then unscales, clips and steps.
``adapter/step_rewrite.py`` ("Backward through a call") makes such a call statement a site: the region that computes
the loss runs in the site call, and the script's call runs after it, unchanged, inside
``with __adapter_backward_through__(K, <loss>):`` (a :class:`Through` context). While it runs, ``Tensor.backward``
(``patches/backward.py``) asks :func:`before_backward` first, and ``GradScaler.scale`` (``patches/amp.py``) tells
:func:`note_scaled` which tensor it made from which: so the site's runtime (``adapter/compiled_step.py``,
``SiteRuntime.through_backward``) sees whether the call's ``backward()`` is of the loss itself, of
``<scaler>.scale(loss)``, or of another tensor. A compiled call has the gradients already (computed in the graph,
not yet in ``.grad``): a ``backward()`` of the loss, or of the scaled loss by the scaler and scale the graph used,
puts them into ``.grad`` instead of differentiating; nothing else does. An eager call (the reference step) lets the
backward() run on the eager bridge and learns from it what the compiled calls must match.

Layering: standard library only; the owner of a context is the site's runtime object (duck-typed:
``through_backward(ctx, how, tensor, gradient)``, ``through_after_backward(ctx, how)``, ``through_done(ctx, failed)``).
"""
from __future__ import annotations

from typing import List

#: ``how`` for a backward() of a tensor that is neither the loss nor a scaler's ``scale(loss)``
OTHER = "other"

_stack: List["Through"] = []


class Through:
    """The context around the script's call that may run ``backward()`` of ``loss``."""

    def __init__(self, owner, loss):
        self.owner = owner
        self.loss = loss
        self.scaled = []  # (scaler, tensor) for each scaler.scale(loss) made inside the call
        self.seen = []  # `how` of each backward() run inside the call: None (the loss), a scaler, or OTHER

    def __enter__(self):
        _stack.append(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        _stack.remove(self)
        self.owner.through_done(self, exc_type is not None)
        return False


def note_scaled(scaler, source, result) -> None:
    """``scaler.scale(source)`` returned ``result`` (``patches/amp.py``)."""
    if _stack and source is _stack[-1].loss:
        _stack[-1].scaled.append((scaler, result))


def _how(ctx: Through, tensor):
    if tensor is ctx.loss:
        return None
    return next((scaler for scaler, made in ctx.scaled if made is tensor), OTHER)


def before_backward(tensor, gradient) -> bool:
    """Called by ``Tensor.backward`` before it differentiates: True when the innermost :class:`Through` context's
    site served this backward() with its compiled gradients (nothing more to do)."""
    if not _stack:
        return False
    ctx = _stack[-1]
    how = _how(ctx, tensor)
    ctx.seen.append(how)
    return bool(ctx.owner.through_backward(ctx, how, tensor, gradient))


def after_backward(tensor) -> None:
    """Called by ``Tensor.backward`` after an eager backward() inside a :class:`Through` context."""
    if _stack:
        ctx = _stack[-1]
        ctx.owner.through_after_backward(ctx, _how(ctx, tensor))
