"""Binding selection, the first phase of a compiled step (``adapter/compiled_step.py``): which objects a call of a
step site reads, and which of the site's *bindings* holds the reference step and the graphs made for them.

A binding is the identity of the site's non-tensor inputs (the model, the loss module, a trainer ``self``) and of
the modules and parameters they reach (:func:`_binding_key`). The first call with a binding runs eagerly (the
reference step, ``SiteRuntime._reference``): it tells which parameters take part. k-fold cross-validation, a
hyper-parameter sweep or forward-forward's per-layer training run one site with one new model after another
(``train(model, opt)``), or a head is replaced between two phases: each new binding gets its own reference step and
graphs. :class:`Bindings` keeps those of at most ``_MAX_BINDINGS`` (least recently used dropped, with their models);
a site whose objects are new at every call runs eagerly (:class:`adapter.fallback.Uncompilable`, kind
``new-objects-every-call``).

Also the predicates that sort a site's inputs into tensors, numbers and objects, shared by the other phases.
"""
from __future__ import annotations

import collections
from typing import List, Optional

import mindspore as ms

from adapter import backend, host_values
from adapter.fallback import Uncompilable

_MAX_BINDINGS = 4  # bindings (sets of models) whose graphs a site keeps: GAN-style alternation, small ensembles
_MAX_NEW_BINDINGS_IN_A_ROW = 8  # calls in a row each bringing new objects: they change every call (eager for good)
_MAX_SCAN = 256  # longest list/dict, and most attributes of an object, that _binding_key looks into


def _is_tensor(value) -> bool:
    return backend.is_tensor(value) and not isinstance(value, ms.Parameter)


def _is_tensor_arg(value) -> bool:
    if isinstance(value, (tuple, list)) and value:
        return all(_is_tensor_arg(v) for v in value)
    return _is_tensor(value)


def _is_number(value) -> bool:
    """A Python number (bools included) or a numpy scalar: keyed by value, never by ``id`` (a numpy scalar made at
    each step may reuse a freed one's id: an old graph with the old value as a constant would run, silently)."""
    return isinstance(value, (int, float)) or host_values.is_number(value) or host_values.is_numpy_bool(value)

def _to_adapter(value):
    from mindtorch.torch.tensor import cast_to_adapter_tensor
    if isinstance(value, list):
        return [_to_adapter(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_to_adapter(v) for v in value)
    return cast_to_adapter_tensor(value) if _is_tensor(value) else value

def _objects(env: dict) -> tuple:
    """``(name, value)`` of the site's inputs that are neither tensors nor numbers (bools included): the model, the
    loss module, a trainer object (``self``), Python modules, functions."""
    return tuple((n, v) for n, v in env.items() if not _is_tensor_arg(v) and not _is_number(v))


def _structure(values) -> list:
    """Every module reachable from ``values`` and its parameters (BatchNorm statistics included), in a fixed walk
    order: which modules and parameters a compiled graph of them captured.

    Reached: a module and its submodules; the items of a list, tuple or dict of at most ``_MAX_SCAN`` entries
    (``self.layers = [Layer(...), ...]``); the attributes of a plain object (a trainer ``self``: ``self.model``), one
    level deep. Python modules, classes and functions are not looked into. Costs ~0.1 ms for a ResNet50 (267
    parameters and statistics, measured on this machine's CPU), so it runs on every call.
    """
    import types as _types
    from mindtorch.torch.nn.modules.module import Module
    found: list = []
    seen = set()

    def walk_module(module):
        stack = [module]
        while stack:
            cell = stack.pop()
            if cell is None or id(cell) in seen:
                continue
            seen.add(id(cell))
            found.append(cell)
            found.extend(backend.cell_params(cell).values())
            stack.extend(reversed(list(backend.cell_children(cell).values())))

    def visit(value, depth):
        if isinstance(value, Module):
            walk_module(value)
        elif depth == 0 or isinstance(value, (str, bytes, _types.ModuleType, type, _types.FunctionType,
                                              _types.BuiltinFunctionType, _types.MethodType, ms.Tensor)):
            return
        elif isinstance(value, (list, tuple)):
            if len(value) <= _MAX_SCAN:
                for item in value:
                    visit(item, depth - 1)
        elif isinstance(value, dict):
            if len(value) <= _MAX_SCAN:
                for item in value.values():
                    visit(item, depth - 1)
        else:
            try:
                attrs = vars(value)
            except Exception:  # no __dict__ (slots, builtins) or a proxy that refuses: not looked into
                return
            if isinstance(attrs, dict) and len(attrs) <= _MAX_SCAN:
                for item in list(attrs.values()):
                    visit(item, depth - 1)

    for value in values:
        visit(value, 2)
    return found


def _binding_key(objects: tuple):
    """What a site's reference step and graphs hold for ``objects`` (:func:`_objects`): their identities and the
    identities of the modules and parameters they reach (:func:`_structure`). A new model, a replaced layer
    (``model.fc = nn.Linear(...)``) or a trainer's new ``self.model`` gives a new key. So does a parameter frozen or
    unfrozen (``requires_grad_``) since: the binding's ``weights`` are those its reference step differentiated, and a
    graph of them left an unfrozen layer untrained, silently (fine-tuning that unfreezes a backbone after N epochs;
    PyTorch trains it from the next step). Returns ``(key, reached)``: the binding keeps ``reached`` alive, so that
    no later object takes one of the ids its key holds."""
    reached = _structure(v for _, v in objects)
    frozen = tuple(i for i, v in enumerate(reached) if isinstance(v, ms.Parameter) and not v.requires_grad)
    return (tuple((n, id(v)) for n, v in objects), tuple(map(id, reached)), frozen), reached


class _Binding:
    """One set of objects a site ran with: the reference step's findings and the graphs compiled for them.

    Attributes:
        objects: the ``(name, value)`` pairs of :func:`_objects`; with ``reached`` (:func:`_structure`) held so
            that their ids, in the binding's key, stay theirs while the record lives.
        weights: the parameters that took part in the reference step (they get gradients), in first-call order.
        modules: the modules that ran in it (their buffers: the graph's).
        made_by_modules: outputs made by a module call (``adapter/provenance.py``).
        graphs: build key -> ``_StepCell``.
    """

    def __init__(self, objects, reached, weights, modules, made_by_modules):
        self.objects = objects
        self.reached = reached
        self.weights = weights
        self.modules = modules
        self.made_by_modules = made_by_modules
        self.graphs: dict = {}
        self.check: Optional["ReferenceRecord"] = None  # for a graph loaded from the compile cache
        self.random: List[str] = []  # the random draws of the reference step (graph_semantics.random_draws)


class Bindings:
    """The bindings of one site (:class:`_Binding`), least recently used first, and the current call's.

    Attributes:
        current: the binding of the current call (None before the first).
        seen: reference steps of new bindings; dropped_graphs: graphs of bindings dropped (least recently used);
            both for ``--explain``.
    """

    def __init__(self):
        self._kept: "collections.OrderedDict[tuple, _Binding]" = collections.OrderedDict()
        self.current: Optional[_Binding] = None
        self._new_in_a_row = 0  # calls in a row that each brought a binding not seen (or no longer kept)
        self.dropped_graphs = 0
        self.seen = 0

    def select(self, env: dict):
        """Make the binding of this call's objects current and return None; or, for objects not seen yet, return
        ``(key, objects, reached)`` for :meth:`keep` once the reference step ran.

        Raises:
            Uncompilable: the last ``_MAX_NEW_BINDINGS_IN_A_ROW`` calls each brought new objects.
        """
        objects = _objects(env)
        key, reached = _binding_key(objects)
        binding = self._kept.get(key)
        if binding is not None:
            self._kept.move_to_end(key)
            self._new_in_a_row = 0
            self.current = binding
            return None
        self._new_in_a_row += 1
        if self._new_in_a_row > _MAX_NEW_BINDINGS_IN_A_ROW:
            previous = self.current.objects if self.current is not None else ()
            old = {n: id(v) for n, v in previous}
            changed = [n for n, v in objects if old.get(n) != id(v)] or [n for n, _ in objects]
            what = ", ".join(f"`{n}`" for n in changed[:4])
            raise Uncompilable(f"the objects it uses are new at every call ({what}, or a module or parameter they "
                               f"hold, changed in each of the last {_MAX_NEW_BINDINGS_IN_A_ROW} calls); create them "
                               "once, outside the loop, to compile it", "new-objects-every-call")
        return key, objects, reached

    def keep(self, new, weights, modules, made_by_modules) -> _Binding:
        """The binding of a reference step (``new``: from :meth:`select`), made current; drops the least recently
        used binding (its graphs and its hold on the models) beyond ``_MAX_BINDINGS``."""
        key, objects, reached = new
        binding = _Binding(objects, reached, weights, modules, made_by_modules)
        self._kept[key] = binding
        self.current = binding
        self.seen += 1
        while len(self._kept) > _MAX_BINDINGS:
            _, dropped = self._kept.popitem(last=False)
            self.dropped_graphs += sum(len(cell.compile_cache) for cell in dropped.graphs.values())
        return binding

    def clear(self) -> None:
        """Drop every binding kept: their graphs will not run again (the site runs eagerly): let the models go."""
        self._kept.clear()

    def graphs(self) -> int:
        """Graphs compiled for the site: those of the bindings kept and of those dropped."""
        return self.dropped_graphs + sum(len(cell.compile_cache) for binding in self._kept.values()
                                         for cell in binding.graphs.values())


def hooked(modules) -> bool:
    """Whether one of ``modules`` has forward / forward-pre hooks (``register_forward_hook``,
    ``register_forward_pre_hook``), or global ones are registered (``register_module_forward_hook``): a MindSpore graph
    calls submodules' ``construct`` without them, so a compiled step or forward would not run them (kind
    ``module-hooks``: it runs in PyNative while one is registered)."""
    if backend.internal("global_forward_hooks") or backend.internal("global_forward_pre_hooks"):
        return True
    return any(getattr(m, "_forward_hooks", None) or getattr(m, "_forward_pre_hooks", None) for m in modules)
