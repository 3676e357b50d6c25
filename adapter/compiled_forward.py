"""Compiled evaluation forwards: ``model(x)`` under ``torch.no_grad()`` runs as one MindSpore graph.

``patches/module_call.py`` routes a top-level module call here when grad mode is off and no ``backward()``
recording is open (an evaluation loop). The module is wrapped in a Cell and run in GRAPH_MODE, like the compiled
training step. A graph is cached per (module, the train/eval flags of all its submodules, the identity of every
submodule and parameter it holds): a later ``model.train()`` never reuses an eval graph, and neither does the model
after a layer was replaced (``model.fc = nn.Linear(...)``: the old graph gave the old layer's outputs). The graphs of
the last ``_MAX_CELLS`` (module, state) pairs are kept, so that the models of a k-fold loop or a sweep are let go. Within that, MindSpore caches one graph per input shape/dtype, so a smaller last batch
compiles once, not every epoch (:func:`compiled_shapes` tells how many were compiled).

Shapes that never come back. Autoregressive sampling (``idx = torch.cat((idx, idx_next), 1)`` then ``model(idx)``,
minGPT's and nanoGPT's ``generate``) calls the model with a longer input each time, each length once: a graph per
length cost a compile (~0.2-2 s) for one use (pt_original/train_gpt.py's 60 sampled characters: 33 graphs). So
once a module has :data:`_EAGER_FIRST_AFTER` compiled signatures, a new signature runs in PyNative at its first call
and compiles at its second (an evaluation loop's shapes come back every epoch; torch._dynamo likewise stops
specializing once a dimension has changed). ``--explain`` counts those eager calls.
"""
from __future__ import annotations

import collections
import sys
from typing import Dict, List, Optional, Set, Tuple

import mindspore as ms

from adapter import amp_state, compiled_step, diagnostics
from adapter.fallback import describe, get_mode, run_eagerly
from adapter.step_binding import _structure, _to_adapter, hooked
from adapter.graph_none import mark_none, unmark_none
from adapter.graph_semantics import run_cell
from adapter.userframe import user_location

_MAX_CELLS = 16
_EAGER_FIRST_AFTER = 3  # compiled signatures of a module after which a new one first runs eagerly (module docstring)
# (id(module), train flags, ids of its submodules and parameters) -> (Cell, the objects whose ids the key holds),
# least recently used first
_cells: "collections.OrderedDict[tuple, Tuple[ms.nn.Cell, list]]" = collections.OrderedDict()
_shapes: Dict[int, Set[tuple]] = {}
_eager_reason: Dict[int, str] = {}
_eager_kind: Dict[int, str] = {}  # id(module) -> its adapter.diagnostics kind
_eager_where: Dict[int, str] = {}  # id(module) -> the user's file:line of the call that did not compile
_names: Dict[int, str] = {}
_seen_once: Dict[int, Set[tuple]] = {}  # id(module) -> signatures run eagerly once (compiled at their next call)
_eager_calls: Dict[int, int] = {}  # id(module) -> how many
_running_eagerly = [0]  # depth of such eager forwards in progress (wants() is False inside)
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


def wants(module, args, kwargs) -> bool:
    """Whether this call should run compiled: tensors-only positional args, and the module has not failed before.
    Not inside an autocast region that runs in low precision (its strategy applies to PyNative calls), nor while
    the module or a submodule has forward hooks (they run in PyNative only: ``step_binding.hooked``; said once per module
    in ``--explain``, kind ``module-hooks``)."""
    if kwargs or _running_eagerly[0] or amp_state.active() or id(module) in _eager_reason or _signature(args) is None \
            or next(iter(module.parameters()), None) is None:  # parameter-free modules (losses): not worth a graph
        return False
    if hooked(module.modules()):
        if id(module) not in _hook_noted:
            _hook_noted[id(module)] = type(module).__name__
            run_eagerly(user_location(3) or type(module).__name__, kind="module-hooks", reason=_HOOKS_REASON,
                        scope="forward", what=f"the forward of {type(module).__name__}")
        return False
    return True


def call(module, args, run_eager):
    """Run ``module(*args)`` as a compiled graph; on a compile failure, say why once and use ``run_eager()``. A
    signature new to a module that has :data:`_EAGER_FIRST_AFTER` compiled ones runs ``run_eager()`` at its first
    call (module docstring)."""
    shapes = _shapes.get(id(module), ())
    if len(shapes) >= _EAGER_FIRST_AFTER and get_mode() != "graph":
        signature = _signature(args)
        once = _seen_once.setdefault(id(module), set())
        if signature not in shapes and signature not in once:
            once.add(signature)
            _eager_calls[id(module)] = _eager_calls.get(id(module), 0) + 1
            _running_eagerly[0] += 1  # its submodules' calls are part of this eager forward, not compiled alone
            try:
                return run_eager()
            finally:
                _running_eagerly[0] -= 1
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
    except Exception as exc:  # this module's forward runs eagerly from now on (--mode graph: GraphModeError)
        name = type(module).__name__
        kind, reason = describe(exc)
        where = user_location(3) or name
        _eager_reason[id(module)], _eager_kind[id(module)], _eager_where[id(module)] = reason, kind, where
        _names[id(module)] = name
        run_eagerly(where, kind=kind, reason=reason, exc=exc, scope="forward", what=f"the forward of {name}",
                    said=f"the no_grad forward of {name} runs in PyNative, not compiled")
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
    entries = [diagnostics.ForwardExplain(_names[mid], "compiled", len(shapes), eager_calls=_eager_calls.get(mid, 0))
               for mid, shapes in _shapes.items()]
    entries += [diagnostics.ForwardExplain(_names[mid], "eager", 0, _eager_kind.get(mid), reason,
                                           _eager_where.get(mid)) for mid, reason in _eager_reason.items()]
    entries += [diagnostics.ForwardExplain(name, "eager", 0, "module-hooks", _HOOKS_REASON)
                for mid, name in _hook_noted.items() if mid not in _eager_reason]
    return entries


def explain_lines() -> List[str]:
    """``--explain``'s lines of the compiled ``no_grad`` forwards (:func:`explain_entries`)."""
    return [entry.format() for entry in explain_entries()]


compiled_step.add_explain_source(explain_entries)  # --explain(-json) and steps_run() count these forwards too
