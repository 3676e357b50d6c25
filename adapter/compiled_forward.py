"""Compiled evaluation forwards: ``model(x)`` under ``torch.no_grad()`` runs as one MindSpore graph.

``patches/module_call.py`` routes a top-level module call here when grad mode is off and no ``backward()``
recording is open (an evaluation loop). The module is wrapped in a Cell and run in GRAPH_MODE, like the compiled
training step. A graph is cached per (module, the train/eval flags of all its submodules, the identity of every
submodule and parameter it holds): a later ``model.train()`` never reuses an eval graph, and neither does the model
after a layer was replaced (``model.fc = nn.Linear(...)``: the old graph gave the old layer's outputs). The graphs of
the last ``_MAX_CELLS`` (module, state) pairs are kept, so that the models of a k-fold loop or a sweep are let go. Within that, MindSpore caches one graph per input shape/dtype, so a smaller last batch
compiles once, not every epoch (:func:`compiled_shapes` tells how many were compiled).
"""
from __future__ import annotations

import collections
import sys
from typing import Dict, List, Optional, Set, Tuple

import mindspore as ms

from adapter import amp_state, backend, compiled_step, diagnostics
from adapter.compiled_step import GraphModeError, get_mode, _to_adapter, _structure
from adapter.graph_none import mark_none, unmark_none
from adapter.graph_semantics import run_cell
from adapter.userframe import user_location

_MAX_CELLS = 16
# (id(module), train flags, ids of its submodules and parameters) -> (Cell, the objects whose ids the key holds),
# least recently used first
_cells: "collections.OrderedDict[tuple, Tuple[ms.nn.Cell, list]]" = collections.OrderedDict()
_shapes: Dict[int, Set[tuple]] = {}
_eager_reason: Dict[int, str] = {}
_eager_kind: Dict[int, str] = {}  # id(module) -> its adapter.diagnostics kind
_eager_where: Dict[int, str] = {}  # id(module) -> the user's file:line of the call that did not compile
_names: Dict[int, str] = {}
_hook_noted: Dict[int, str] = {}  # id(module) -> its class name: forwards run in PyNative for their hooks
_HOOKS_REASON = "forward hooks registered on the module or a submodule run in PyNative only (module-hooks)"


class _ForwardCell(ms.nn.Cell):
    def __init__(self, module):
        super().__init__(auto_prefix=False)
        self.module = module

    def construct(self, *args):
        return mark_none(self.module(*args))  # a None in the outputs survives STRICT (adapter/graph_none.py)


def _signature(args) -> Optional[tuple]:
    sig = []
    for a in args:
        if not isinstance(a, ms.Tensor) or isinstance(a, ms.Parameter):
            return None
        sig.append((tuple(a.shape), str(a.dtype)))
    return tuple(sig)


def _hooked(module) -> bool:
    """Whether ``module`` or a submodule has forward / forward-pre hooks, or global ones are registered: a graph
    calls submodules' ``construct`` without them (kind ``module-hooks``)."""
    if backend.internal("global_forward_hooks") or backend.internal("global_forward_pre_hooks"):
        return True
    return any(getattr(m, "_forward_hooks", None) or getattr(m, "_forward_pre_hooks", None) for m in module.modules())


def wants(module, args, kwargs) -> bool:
    """Whether this call should run compiled: tensors-only positional args, and the module has not failed before.
    Not inside an autocast region that runs in low precision (its strategy applies to PyNative calls), nor while
    the module or a submodule has forward hooks (they run in PyNative only: :func:`_hooked`; said once per module
    in ``--explain``, kind ``module-hooks``)."""
    if kwargs or amp_state.active() or id(module) in _eager_reason or _signature(args) is None \
            or next(iter(module.parameters()), None) is None:  # parameter-free modules (losses): not worth a graph
        return False
    if _hooked(module):
        if id(module) not in _hook_noted:
            _hook_noted[id(module)] = type(module).__name__
            diagnostics.record("module-hooks", _HOOKS_REASON, user_location(3) or type(module).__name__,
                               scope="forward")
        return False
    return True


def call(module, args, run_eager):
    """Run ``module(*args)`` as a compiled graph; on a compile failure, say why once and use ``run_eager()``."""
    reached = _structure([module])  # module first, then its submodules and parameters (~0.1 ms for a ResNet50)
    flags = tuple(getattr(m, "training", None) for m in reached if isinstance(m, ms.nn.Cell))
    key = (id(module), flags, tuple(map(id, reached)))
    entry = _cells.get(key)
    if entry is None:
        entry = _cells[key] = (_ForwardCell(module), reached)
        while len(_cells) > _MAX_CELLS:
            _cells.popitem(last=False)
    _cells.move_to_end(key)
    cell = entry[0]
    try:
        out = run_cell(cell, *args)
    except Exception as exc:
        reason = diagnostics.short_reason(exc)
        _eager_reason[id(module)] = reason
        _names[id(module)] = type(module).__name__
        where = user_location(3) or type(module).__name__
        _eager_kind[id(module)] = kind = diagnostics.classify(exc, reason)
        _eager_where[id(module)] = where
        diagnostics.record(kind, reason, where, scope="forward")
        if get_mode() == "graph":
            raise GraphModeError(f"{where}: the forward of {type(module).__name__} cannot be compiled "
                                 f"(--mode graph): {reason}") from exc
        diagnostics.log(f"{where}: the no_grad forward of {type(module).__name__} runs in PyNative, not compiled: "
                        f"{reason}")
        return run_eager()
    _shapes.setdefault(id(module), set()).add(_signature(args))
    _names[id(module)] = type(module).__name__
    return _to_adapter(unmark_none(out))


def compiled_shapes(module) -> int:
    """Number of distinct input signatures compiled for ``module``'s no_grad forward."""
    return len(_shapes.get(id(module), ()))


def explain_entries() -> List[diagnostics.ForwardExplain]:
    """``--explain``'s entries of the compiled ``no_grad`` forwards (``adapter.diagnostics.ForwardExplain``): the
    compiled ones (for how many input shapes), then those that run in PyNative, with their kind and reason."""
    entries = [diagnostics.ForwardExplain(_names[mid], "compiled", len(shapes)) for mid, shapes in _shapes.items()]
    entries += [diagnostics.ForwardExplain(_names[mid], "eager", 0, _eager_kind.get(mid), reason,
                                           _eager_where.get(mid)) for mid, reason in _eager_reason.items()]
    entries += [diagnostics.ForwardExplain(name, "eager", 0, "module-hooks", _HOOKS_REASON)
                for mid, name in _hook_noted.items() if mid not in _eager_reason]
    return entries


def explain_lines() -> List[str]:
    """``--explain``'s lines of the compiled ``no_grad`` forwards (:func:`explain_entries`)."""
    return [entry.format() for entry in explain_entries()]


compiled_step.add_explain_source(explain_entries)  # --explain(-json) and steps_run() count these forwards too
