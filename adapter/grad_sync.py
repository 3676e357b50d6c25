"""Gradient averaging for ``DistributedDataParallel`` (``patches/ddp.py``), in the eager bridge and the compiled step.

PyTorch's DDP averages ``param.grad`` over the workers during ``backward()``, except under ``model.no_sync()``,
where gradients accumulate locally; the first ``backward()`` after it averages the *accumulated* gradients
(``torch/nn/parallel/distributed.py``, "no_sync"). The same rule here, in terms of ``.grad`` after accumulation:

    p.grad = mean over workers of (p.grad before backward + this backward's gradient)

for every parameter of a DDP-wrapped module that got a gradient, unless that module is under ``no_sync()``
(its ``require_backward_grad_sync`` is False, PyTorch's attribute). Where no pending local accumulation exists
(the usual step) this equals ``p.grad += mean(fresh)``, which is what the compiled step does inside its graph.

Callers:

* ``adapter/tape.py`` ``backward()``: :func:`after_backward` once the fresh grads are accumulated;
* ``adapter/compiled_step.py``: :func:`prepare_step` before the graph runs (the mask of weights the graph averages,
  or None; it also broadcasts DDP buffers as DDP's forward does), :func:`after_backward` after accumulation.

With no DDP module alive both return at once: scripts without DDP pay nothing. Collectives run in the same order on
every rank because every decision here depends only on what every rank does identically (which modules are
DDP-wrapped, ``no_sync()`` state, the sequence of backward calls).
"""
from __future__ import annotations

import weakref
from typing import Dict, List, Optional, Sequence, Tuple

from adapter import hooks

_ddps: List["weakref.ref"] = []
_unsynced: set = set()  # ids of DDP parameters whose .grad holds local (no_sync) accumulation
_reducers: Dict[tuple, object] = {}


def register(ddp) -> None:
    """Remember a constructed DDP module (weakly). It must have ``_adapter_params`` (the parameters it averages,
    in module order), ``require_backward_grad_sync`` and ``bucket_cap_mb``."""
    _ddps.append(weakref.ref(ddp))


def live() -> List:
    """The DDP modules alive, in construction order."""
    alive = [d for d in (r() for r in _ddps) if d is not None]
    if len(alive) != len(_ddps):
        _ddps[:] = [weakref.ref(d) for d in alive]
    return alive


def _owners(params: Sequence) -> Optional[List]:
    """For each parameter the DDP module that averages it (or None); None when no parameter is DDP's."""
    ddps = live()
    if not ddps:
        return None
    owner_of = {}
    for ddp in ddps:
        for pid in hooks.get(ddp, "param_ids"):
            owner_of.setdefault(pid, ddp)
    owners = [owner_of.get(id(p)) for p in params]
    return owners if any(o is not None for o in owners) else None


def _reducer(params: Sequence, mask: Sequence[bool], world: int, bucket_mb: float):
    from adapter.collectives import GradAllReduce
    key = (tuple(id(p) for p in params), tuple(mask), world, bucket_mb)
    cell = _reducers.get(key)
    if cell is None:
        if len(_reducers) >= 16:
            _reducers.clear()
        cell = _reducers[key] = GradAllReduce([tuple(p.shape) for p in params], mask, world, bucket_mb)
    return cell


def prepare_step(weights: Sequence) -> Optional[Tuple[bool, ...]]:
    """Before a compiled step over ``weights``: the mask of weights whose fresh gradients the graph must average
    (DDP parameters not under ``no_sync()`` and without pending local accumulation), or None when there are none.

    Also runs DDP's pre-forward work for the DDP modules taking part (buffer broadcast from rank 0), since their
    forward runs inside the graph.
    """
    owners = _owners(weights)
    if owners is None:
        return None
    for ddp in {id(o): o for o in owners if o is not None}.values():
        hooks.get(ddp, "pre_forward")(grad_enabled=True)
    # a weight with local no_sync accumulation pending is averaged after accumulation instead (after_backward)
    mask = tuple(o is not None and o.require_backward_grad_sync and not (id(w) in _unsynced and w.grad is not None)
                 for w, o in zip(weights, owners))
    return mask if any(mask) else None


def graph_reducer(weights: Sequence, mask: Tuple[bool, ...]):
    """The Cell that averages ``grads`` (a tuple over ``weights``) where ``mask`` is set; goes into the graph."""
    owners = _owners(weights)
    ddp = next(o for o, m in zip(owners, mask) if m)
    return _reducer(weights, mask, hooks.get(ddp, "world"), ddp.bucket_cap_mb)


def after_backward(params: Sequence, averaged: Optional[Sequence[bool]] = None) -> None:
    """After a ``backward()`` accumulated into ``p.grad`` for ``params``: average the ``.grad`` of DDP parameters not
    under ``no_sync()`` (except those ``averaged`` already in the graph), and remember no_sync accumulation.

    Raises:
        RuntimeError: from MindSpore's collective if a worker is gone (the launcher stops the others).
    """
    owners = _owners(params)
    if owners is None:
        return
    todo = []
    for i, (p, owner) in enumerate(zip(params, owners)):
        if owner is None or p.grad is None:
            continue
        if not owner.require_backward_grad_sync:
            _unsynced.add(id(p))
        elif averaged is not None and averaged[i]:
            _unsynced.discard(id(p))
        else:
            todo.append((p, owner))
    if not todo:
        return
    world = hooks.get(todo[0][1], "world")
    todo_params = [p for p, _ in todo]
    cell = _reducer(todo_params, [True] * len(todo), world, todo[0][1].bucket_cap_mb)
    from mindtorch.torch.tensor import cast_to_adapter_tensor
    reduced = cell(tuple(p.grad for p in todo_params))
    for p, g in zip(todo_params, reduced):
        p.grad = cast_to_adapter_tensor(g)
        _unsynced.discard(id(p))

