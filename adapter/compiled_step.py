"""The compiled step: a rewritten ``backward()`` site (``adapter/step_rewrite.py``) run in MindSpore graph mode.

For each site, at run time:

1. The first call runs eagerly through the tape (``adapter/tape.py``): it is the reference step, and it tells which
   parameters take part (those get gradients). The same holds for the first call with other objects (a *binding*:
   the identity of the site's non-tensor inputs and of the modules and parameters they reach, :func:`_binding_key`):
   k-fold cross-validation, a hyper-parameter sweep or forward-forward's per-layer training run one site with one new
   model after another (``train(model, opt)``), or a head is replaced between two phases; each new binding gets its
   own reference step and graphs. The graphs of at most ``_MAX_BINDINGS`` bindings are kept (least recently used
   dropped, with their models); a site whose objects are new at every call runs eagerly (one line says so).
2. Later calls build, once per binding and optimizer (and again only if a non-tensor input changes, or,
   fused, the optimizer's hyper-parameters other than the lr: :func:`_hyperparameters`),
   ``forward_fn(tensors...) -> (loss, *outputs)`` from the region's source, and compile with ``mindspore.jit``:

   * fused: ``value_and_grad(forward_fn, None, weights, has_aux=True)`` followed by ``optimizer(grads)`` in one graph
     (with ``clip_grad_norm_`` between them when the script clips there, norm 2 or inf), when ``optimizer.step()``
     follows ``backward()``, the optimizer updates only parameters that got a gradient, and no ``.grad`` is pending
     (no accumulation);
   * otherwise: the compiled ``value_and_grad`` alone; gradients are accumulated into ``.grad`` and the user's code
     (clipping, accumulation, ``step()``) continues eagerly.

   Either way ``p.grad`` holds the step's gradients afterwards, and the region's names (``outputs``, ``loss``) are
   handed back as MindTorch tensors, with their values from before the update, as in PyTorch: the graph copies
   them and updates the weights after computing them (``_StepCell.construct``), and a step is not fused when the
   region's statements that run after the site call read a weight (``SiteRuntime._after_reads_weights``).
   A name bound to a parameter itself (``u = w``, ``p = self.weight``) gets that parameter (``d = w.data``: a
   tensor over its storage, patches/parameter_data.py)
   (:meth:`SiteRuntime._handed_back`), so it shows the update as in PyTorch. Known difference: a view of a parameter
   (``w.reshape(3)``, ``w.t()``, ``w[0]``) gets a copy from before the update, where PyTorch's shares the parameter's
   storage; so does eager MindTorch, whose view ops share no storage (tests/test_output_alias.py).
3. If compilation fails, the site falls back to the eager bridge for good, after printing once the user's
   ``file:line`` and MindSpore's reason (``--mode graph`` raises instead), and records the fallback's kind
   (``adapter/diagnostics.py``: the registry of kinds, which ``--explain``, ``--explain-json`` and ``--report``
   share; :func:`explain_output`).

``mindspore.jit`` caches one graph per input signature, so a smaller last batch compiles once.
"""
from __future__ import annotations

import ast
import collections
import contextlib
import copy
import functools
import gc
import hashlib
import math
import os
import statistics
import sys
import tempfile
import time
import types
from typing import Dict, List, Optional

import mindspore as ms

from adapter import (allocator, amp_state, backend, backend_compat, compile_cache, diagnostics, events, grad_sync,
                     param_names, provenance, tape, torchfile)
from adapter.diagnostics import short_reason  # noqa: F401 -- re-exported: it lived here (tests import it)
from adapter import host_values
from adapter.graph_semantics import HostRandomDraw, locate_host_draws, random_draws, run_cell
from adapter.step_rewrite import StepSite
from adapter.userframe import display_path

MODES = ("auto", "graph", "pynative")
_mode = "pynative"
_sites: Dict[int, "SiteRuntime"] = {}
_GEN_DIR = os.path.join(tempfile.gettempdir(), "mindtorch_adapter_steps")
_MADE_BY = "__adapter_made_by_"  # forward_fn's names for a recomputed input's producing call (_recomputations)
# generated forward_fn file -> the user's file (same line numbers); the dict is diagnostics' (short_reason reads it)
GENERATED_TO_USER: Dict[str, str] = diagnostics.GENERATED_TO_USER


_MAX_BINDINGS = 4  # bindings (sets of models) whose graphs a site keeps: GAN-style alternation, small ensembles
_MAX_NEW_BINDINGS_IN_A_ROW = 8  # calls in a row each bringing new objects: they change every call (eager for good)
_MAX_SCAN = 256  # longest list/dict, and most attributes of an object, that _binding_key looks into


# the reasons of sites that run eagerly without a fallback of their own (SiteRuntime._eager_state)
_PYNATIVE = "--mode pynative"
_BUILT_BEFORE = "the loss is built from module calls made before the step's statements (outside the region; the " \
                "eager bridge differentiates their recording)"


class _LearnRecomputes(Exception):
    """A site's inputs hold tensors made by a model in an earlier step, and no eager step of the site has shown yet
    whether the region recomputes them (``SiteRuntime._recomputations``): this call runs eagerly and shows it."""


class GraphModeError(RuntimeError):
    """``--mode graph`` requires a step or forward to compile, and it could not be compiled."""


class Uncompilable(RuntimeError):
    """A site's inputs rule out a compiled step (reported as the fallback reason).

    Attributes:
        fallback_kind: its kind, an ``adapter.diagnostics.KINDS`` id (``diagnostics.classify`` reads it).
        at: the user's ``file:line`` of the construct, when the message does not start with it; else None.
    """

    def __init__(self, message: str, kind: str, at: Optional[str] = None):
        super().__init__(message)
        self.fallback_kind = diagnostics.get(kind).id
        self.at = at


def set_mode(mode: str) -> None:
    """``auto``: compile, fall back to eager per site; ``graph``: compile or fail; ``pynative``: never compile."""
    global _mode
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    _mode = mode


def get_mode() -> str:
    return _mode


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


def _graph_input(value):
    """A step input as the graph takes it: a list of tensors (a DataLoader batch ``[images, labels]``) as a tuple.
    MindSpore compiles a list argument as a constant, and a tuple one too unless the Cell broadens tuples
    (``_StepCell.enable_tuple_broaden``): dcgan's ``data`` recompiled its step on every call (0.9 s per step instead
    of 0.04 s). Indexing reads the same."""
    if isinstance(value, list):
        return tuple(_graph_input(v) for v in value)
    return value


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
        self.check: Optional[_ReferenceRecord] = None  # for a graph loaded from the compile cache
        self.random: List[str] = []  # the random draws of the reference step (graph_semantics.random_draws)


class _StepCell(ms.nn.Cell):
    """``value_and_grad(forward_fn)`` (+ ``optimizer(grads)``) as one Cell, compiled and run in GRAPH_MODE.

    Measured (ResNet18, batch 32, CPU): the same graph costs 0.50 s/step as ``mindspore.jit`` inside PyNative and
    0.25 s/step as a Cell run in GRAPH_MODE, equal to a hand-written TrainOneStepCell; hence
    :func:`adapter.graph_semantics.graph_mode`.
    """

    def __init__(self, forward_fn, weights, optimizer, has_aux: bool, clip=None, scaled: bool = False,
                 reducer=None):
        super().__init__(auto_prefix=False)
        # tuple inputs (a DataLoader batch `data`, indexed in the region) are graph inputs, not constants: without it
        # MindSpore keyed every call's tuple anew and recompiled the step each time (dcgan: 0.9 s vs 0.04 s a step)
        self.enable_tuple_broaden = True
        # reducer (DistributedDataParallel): averages the grads of DDP parameters over the workers, in the graph
        # (adapter/collectives.py GradAllReduce, from adapter/grad_sync.py); None without DDP or under no_sync()
        self.reducer = reducer
        self.reduce = reducer is not None
        # adapter/compile_cache.py loads this Cell's graph only while SiteRuntime._verify_loaded checks it; only its
        # first compile goes through the cache (cache_once), and none when cache_exempt says why it cannot be checked
        self.loadable = False
        self.cache_once = True
        self.cache_exempt: Optional[str] = None
        # scaled (a GradScaler is on): the first input is the loss scale; gradients are those of loss * scale, and
        # the loss itself comes back as the first aux output (patches/amp.py)
        self.scaled = scaled
        self.grad_sizes = tuple(int(math.prod(w.shape)) for w in weights)
        self.grad_shapes = tuple(tuple(w.shape) for w in weights)
        fn = _scaled_forward(forward_fn) if scaled else forward_fn
        self.grad_fn = ms.value_and_grad(fn, None, ms.ParameterTuple(param_names.unique(weights)),
                                         has_aux=has_aux or scaled)
        self.optimizer = optimizer
        self.fused = optimizer is not None
        self.identity = ms.ops.Identity()
        # optimizer(grads) pairs grads[i] with optimizer.parameters[i]: the weights (first-call order of the modules,
        # adapter/tape.py) in the optimizer's order (model.parameters(): registration order), when they differ
        self.opt_index = _optimizer_order(weights, optimizer) if self.fused else None
        self.reorder = self.opt_index is not None
        # clip: (mask over weights, max_norm, norm_type) of a fused clip_grad_norm_, or None
        self.clip = clip is not None
        self.clip_mask, self.max_norm, self.inf_norm = (clip[0], clip[1], clip[2] == float("inf")) if clip \
            else ((), 0.0, False)

    def _check_construct_args(self, *args):
        """MindSpore's ``Cell.__call__`` checks the argument count against ``inspect.signature(self.construct)`` on
        every graph-mode call (~0.1 ms) and returns at once for a ``*args`` construct like this one: the same
        verdict, without the signature."""
        return

    def construct(self, *args):
        values, grads = self.grad_fn(*args)
        if isinstance(values, tuple):
            # The region's outputs are the script's values from before the update (PyTorch). Each tensor one is
            # copied (Identity): MindSpore simplifies `w * 1.0` (and views of w) to the Parameter's Load, and that
            # output would share the Parameter's buffer, updated in place by the optimizer below or by the
            # script's own step() (tests/test_output_alias.py). A view of w is a copy too, as in eager MindTorch
            # (its reshape/view/t/slices share no storage); a name bound to w itself gets w
            # (SiteRuntime._handed_back)
            copied = values[:2] if self.scaled else values[:1]
            for v in values[len(copied):]:
                copied = copied + ((self.identity(v),) if isinstance(v, ms.Tensor) else (v,))
            values = copied
        if self.reduce:
            grads = self.reducer(grads)
        total_norm = ms.ops.zeros((), ms.float32)
        found_inf = ms.ops.zeros((), ms.bool_)
        if self.scaled and self.fused:  # GradScaler.unscale_ + the inf/NaN check of GradScaler.step, in the graph
            grads, found_inf = self.unscale(grads, ms.ops.reciprocal(args[0]))
        if self.clip:
            grads, total_norm = self.clip_grad_norm(grads)
        if self.fused:
            opt_grads = grads
            if self.reorder:
                opt_grads = ()
                for i in self.opt_index:
                    opt_grads = opt_grads + (grads[i],)
            # the update runs after the outputs are computed: the auto-monad orders the optimizer's Assign after
            # the Loads of the Parameters only, and the CPU backend's Load is a no-op, so a kernel reading w for an
            # output alone (`p = w.pow(2)`) could run after the Assign and see the new w (tests/test_output_alias.py)
            opt_grads = ms.ops.depend(opt_grads, values)
            if self.scaled:
                if not found_inf:  # GradScaler.step skips the update (weights and optimizer state) on inf/NaN
                    self.optimizer(opt_grads)
            else:
                self.optimizer(opt_grads)
        return values, grads, total_norm, found_inf

    def unscale(self, grads, inv_scale):
        """``grads * inv_scale`` and whether any is inf/NaN (``torch._amp_foreach_non_finite_check_and_unscale_``),
        over one flat vector: a few kernels instead of two per parameter. Float32 grads (PyTorch refuses to unscale
        float16 ones)."""
        flat = ()
        for g in grads:
            flat = flat + (g.reshape(-1),)
        flat = ms.ops.concat(flat) * inv_scale
        found_inf = ms.ops.logical_not(ms.ops.isfinite(flat).all())
        parts = ms.ops.split(flat, self.grad_sizes)
        unscaled = ()
        for i in range(len(grads)):
            unscaled = unscaled + (parts[i].reshape(self.grad_shapes[i]),)
        return unscaled, found_inf

    def clip_grad_norm(self, grads):
        """``torch.nn.utils.clip_grad_norm_`` in the graph (formula: ``patches/clip_grad.py``)."""
        norms = ()
        for i in range(len(grads)):
            if self.clip_mask[i]:
                g = grads[i]
                if self.inf_norm:
                    norms = norms + (ms.ops.abs(g).max(),)
                else:
                    norms = norms + (ms.ops.sqrt((g * g).sum()),)
        stacked = ms.ops.stack(norms)
        total = stacked.max() if self.inf_norm else ms.ops.sqrt((stacked * stacked).sum())
        coef = ms.ops.minimum(self.max_norm / (total + 1e-6), 1.0)
        clipped = ()
        for i in range(len(grads)):
            if self.clip_mask[i]:
                clipped = clipped + (grads[i] * coef.astype(grads[i].dtype),)
            else:
                clipped = clipped + (grads[i],)
        return clipped, total


# tensor attributes that make a new tensor (PyTorch: a view): a chain through one is not the object it starts from
_TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag", "grad"})


def _object_chain(expr) -> Optional[List[str]]:
    """``[name, attr, ...]`` when ``expr`` (AST, or None) is a name or a chain of attribute reads of one
    (``w``, ``self.weight``, ``model.fc.weight.data``) with no attribute of :data:`_TENSOR_ATTRIBUTES`; else None."""
    attrs = []
    while isinstance(expr, ast.Attribute) and expr.attr not in _TENSOR_ATTRIBUTES:
        attrs.append(expr.attr)
        expr = expr.value
    return [expr.id] + attrs[::-1] if isinstance(expr, ast.Name) else None


def _optimizer_order(weights, optimizer) -> Optional[tuple]:
    """Index into ``weights`` of each of ``optimizer.parameters``, or None when they are the same sequence.

    Raises:
        Uncompilable: an optimizer parameter is not among ``weights`` (``SiteRuntime._can_fuse`` rules that out).
    """
    index = {id(w): i for i, w in enumerate(weights)}
    params = list(optimizer.parameters)
    if len(params) == len(weights) and all(index.get(id(p)) == i for i, p in enumerate(params)):
        return None
    try:
        return tuple(index[id(p)] for p in params)
    except KeyError:
        raise Uncompilable("the optimizer updates a parameter the step's forward does not use",
                           "optimizer-parameter-outside-step") from None


def _scaled_forward(forward_fn):
    """``(scale, *args) -> (loss * scale, loss, *outputs)``: what ``scaler.scale(loss)`` differentiates."""
    def scaled_forward(scale, *args):
        out = forward_fn(*args)
        return (out[0] * scale.astype(out[0].dtype),) + out

    return scaled_forward


class _DirectForward(ast.NodeTransformer):
    """``<expr>.forward(args)`` -> ``__adapter_forward__(<expr>, args)`` in the eager forward_fn: a model whose
    ``forward`` is called directly (pytorch/examples mnist_forward_forward's ``self.forward(x_pos)``) takes part in
    the recording as if it had been called."""
    FN = "__adapter_forward__"

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "forward":
            return ast.copy_location(ast.Call(ast.Name(self.FN, ast.Load()), [node.func.value] + node.args,
                                              node.keywords), node)
        return node


def module_forward(obj, *args, **kwargs):
    """``obj.forward(*args, **kwargs)``; when ``obj`` is a module, the eager bridge counts it as called."""
    from mindtorch.torch.nn.modules.module import Module
    if isinstance(obj, Module):
        tape.on_module_call(obj)
    return obj.forward(*args, **kwargs)


def amp_outputs_to_float32(values):
    """An autocast block's assigned values, float16/bfloat16 tensors cast to float32 (``patches/amp.py``); graph
    code: the dtype tests are resolved at compile time."""
    out = ()
    for v in values:
        if isinstance(v, ms.Tensor) and (v.dtype == ms.float16 or v.dtype == ms.bfloat16):
            out = out + (v.astype(ms.float32),)
        else:
            out = out + (v,)
    return out


def _hyperparameters(optimizer) -> tuple:
    """The optimizer's per-group hyper-parameters other than the lr (``momentum``, ``betas``, ``weight_decay``,
    ``eps``...): Python values that MindSpore's optimizers read in ``construct``, so a compiled update holds them as
    constants; part of the key of a fused step's graph. (The lr is a Parameter, a graph input: patches/optimizer.py.)
    CyclicLR / OneCycleLR (``cycle_momentum=True``) write ``momentum`` or ``betas`` every step."""
    out = []
    for group in optimizer.param_groups:
        items = []
        for key, value in dict.items(group):
            if key in ("params", "lr", "initial_lr"):
                continue
            if isinstance(value, (bool, int, float, str, type(None))) or (
                    isinstance(value, tuple) and all(isinstance(v, (int, float)) for v in value)):
                items.append((key, value))
        out.append(tuple(items))
    return tuple(out)


def _has_graph_update(optimizer) -> bool:
    """Whether ``optimizer``'s class has a graph form of its update: a ``construct`` of its own or of a MindTorch
    optimizer, not only the abstract one of MindSpore's base class (it raises NotImplementedError when compiled). A
    ``torch.optim.Optimizer`` subclass that writes only ``step()`` (timm's Lamb) has none: its step is not fused."""
    from mindspore.experimental.optim import Optimizer as abstract
    owner = next((k for k in type(optimizer).__mro__ if "construct" in vars(k)), None)
    return owner is not None and owner is not abstract


# distinct hyper-parameter sets (_hyperparameters) a fused site compiles for before it runs eagerly
_MAX_HYPERPARAMETER_SETS = 3


class _State:
    """Copies of some Parameters' values (numpy, host): :meth:`restore` assigns them back in place (the graphs hold
    the Parameter objects). ``spill``: the copies are kept in files (``compile_cache.SpilledArrays``), not in memory
    (the compile cache's check of a loaded step holds them from step 1 to step 2)."""

    def __init__(self, params, spill: bool = False):
        self.params = list(params)
        self.values = compile_cache.SpilledArrays() if spill else {}
        for p in self.params:
            # asnumpy() shares the Parameter's storage: copied when kept in memory; written out as it is when spilled
            self.values[id(p)] = p.asnumpy() if spill else p.asnumpy().copy()

    def value(self, p):
        return self.values.get(id(p))

    def restore(self) -> None:
        for p in self.params:
            _write(p, self.values[id(p)])


def _write(p, array) -> None:
    """Give Parameter ``p`` the values of numpy ``array`` (same shape and dtype) in place, so that the compiled graphs
    holding ``p`` read them from then on: ``ops.assign``, on every MindSpore.

    Not ``Parameter.set_data`` (used on 2.5 before, 0.09 ms against assign's 1.1 ms per launch there; ResNet50 +
    Adam: 805 of them, ~0.9 s twice per cache check): it gives ``p`` new storage, and a ``jit`` graph compiled
    before it (the eager ``optimizer.step()``'s update, patches/sgd.py) kept writing the old one. A non-fused step
    (a statement between ``backward()`` and ``step()``) checked against the compile cache on a script's second run
    then trained nothing from that step on, silently (tests/test_cache_rerun_update.py). ``set_data`` also raised a
    cached re-run's peak RSS by 140 MB on 2.10 (tests/test_memory.py's MLP, 2026-11-26 CI).
    ``tests/test_compile_cache.py`` checks on both stacks that a compiled graph reads the written values."""
    ms.ops.assign(p, ms.Tensor(array))


def _reached_state(reached, optimizer) -> _State:
    """The state a step reads and writes: the Parameters among ``reached`` (:func:`_structure`: the models' weights
    and BatchNorm statistics), the modules' other Parameter buffers, and ``optimizer``'s own Parameters (lrs,
    moments, step counts) when it is a MindSpore Cell."""
    from mindtorch.torch.nn.modules.module import Module
    params, seen = [], set()

    def add(p):
        if isinstance(p, ms.Parameter) and id(p) not in seen:
            seen.add(id(p))
            params.append(p)

    for value in reached:
        add(value)
    for p in tape.buffers([m for m in reached if isinstance(m, Module)]):
        add(p)
    if isinstance(optimizer, ms.nn.Cell):
        for p in optimizer.get_parameters():
            add(p)
    return _State(params, spill=True)


def _sum_sq(a, b=None, chunk: int = 2 ** 20) -> float:
    """Sum of the squares of ``a - b`` (``a`` when ``b`` is None), in float64, ``chunk`` elements at a time: the
    float64 temporaries of a whole tensor (three at once in ``np.square(a.astype(np.float64) - b)``: 96 MB for a
    Linear(2048, 2048)) raised the compile cache check's peak RSS."""
    import numpy as np
    a = np.asarray(a).reshape(-1)
    b = None if b is None else np.asarray(b).reshape(-1)
    total = 0.0
    for i in range(0, a.size, chunk):
        d = a[i:i + chunk].astype(np.float64)
        if b is not None:
            d -= b[i:i + chunk]
        total += float(np.dot(d, d))
    return total


class _ReferenceRecord:
    """What a loaded graph is checked against (``SiteRuntime._verify_loaded``): the reference step's inputs, the
    state before it, its loss and its gradients (``.grad`` after minus before, float32 numpy).

    The state and the gradients are kept in files (``compile_cache.SpilledArrays``), not in memory, from the
    reference step to the first compiled call: held in memory, the gradients alone were one more copy of the weights
    beside the graph's first run (ResNet50 + Adam, batch 32: a cached re-run peaked at 1718 MB RSS vs 1631 for the
    compiling run, ``bench/memory_phases.py --warm``). ``grad_sq`` / ``grad_absmax`` (per gradient: its sum of
    squares in float64 and its largest magnitude, 0 for a missing one) give the clip's total norm and the largest
    norm without reading them back."""

    def __init__(self, env: dict, state: _State, grads_before: dict):
        self.env = env
        self.state = state
        self.grads_before = grads_before
        self.loss = None
        self.grads = None  # compile_cache.SpilledArrays: index in the weights -> its gradient (absent: None)
        self.grad_sq: list = []
        self.grad_absmax: list = []

    def finish(self, loss, weights) -> None:
        import numpy as np
        self.loss = float(loss.asnumpy())
        self.grads = compile_cache.SpilledArrays()
        self.grad_sq, self.grad_absmax = [], []
        trimmer = _HeapTrimmer()
        for i, w in enumerate(weights):  # one gradient in memory at a time
            g = w.grad
            if g is None:
                self.grad_sq.append(0.0)
                self.grad_absmax.append(0.0)
                continue
            g = g.asnumpy().astype(np.float32, copy=False)  # written out below, not kept
            before = self.grads_before.get(id(w))
            if before is not None:
                g = g - before.asnumpy()
            self.grads[i] = g
            self.grad_sq.append(_sum_sq(g))
            self.grad_absmax.append(float(np.abs(g).max()) if g.size else 0.0)
            trimmer.add(2 * g.nbytes)
            del g
        self.grads_before = None
        _trim_heap()

    def grad(self, i: int, shape):
        """The ``i``-th weight's reference gradient (zeros of ``shape`` when it had none), read back from its file."""
        import numpy as np
        g = self.grads.get(i)
        return g if g is not None else np.zeros(tuple(shape), np.float32)

    def close(self) -> None:
        """Delete the files now (they also go when the record dies)."""
        if isinstance(self.state.values, compile_cache.SpilledArrays):
            self.state.values.close()
        if self.grads is not None:
            self.grads.close()

    def covers(self, names) -> bool:
        return self.loss is not None and all(n in self.env for n in names)


class SiteRuntime:
    """Run-time state of one step site: the eager reference step, the compiled graphs, the fallback reason."""

    def __init__(self, site: StepSite, user_globals: dict):
        self.site = site
        self.user_globals = user_globals  # the namespace of the module the site is in
        self.calls = 0
        self.weights: Optional[List] = None
        self.hyperparameter_sets: Dict[int, set] = {}  # id(optimizer) -> the _hyperparameters compiled for
        self.modules: List = []  # the modules that ran in the reference step (their buffers: the cached graph's)
        self.made_by_modules: List = []  # outputs made by a module call, as the reference step showed (provenance)
        self.reason: Optional[str] = None  # why this site runs eagerly, once decided (set by _decide_eager)
        self.fallback_kind: Optional[str] = None  # its adapter.diagnostics kind
        self._recorded_states: set = set()  # kinds of _eager_state recorded (once each)
        self.fused_last = False
        self.graph_ran = False  # the current call's graph has run (its update happened)
        self.recorded_before = False  # a later call found the recording open (modules ran before the region)
        self.opened_at: Optional[str] = None  # the user's file:line of the module call that had opened it
        self._calls_checked = False  # _python_objects found no torch.distributions call in the region
        self.kind = "eager"  # what the last call did: eager, compiled, fused
        self.first_compiled_s: Optional[float] = None
        self.total_norm = None  # the fused clip_grad_norm_'s result of the last call
        self.step_s: List[float] = []
        self._bindings: "collections.OrderedDict[tuple, _Binding]" = collections.OrderedDict()  # least recent first
        self._binding: Optional[_Binding] = None  # the current call's
        self._new_in_a_row = 0  # calls in a row that each brought a binding not seen (or no longer kept)
        self._graphs_dropped = 0  # graphs of bindings dropped (least recently used), for --explain
        self._bindings_seen = 0  # reference steps of new bindings, for --explain
        self._eager_fn = None
        self._generated_path: Optional[str] = None
        self._chains: Optional[Dict[str, List[str]]] = None  # name -> the chain it is bound to (_handed_back)
        self.recomputes: Dict[str, bool] = {}  # input name -> an eager step recomputed it (_recomputations)
        self.numbers = host_values.Numbers(site.host_values, site.counters)  # numbers passed as tensor inputs (adapter/host_values.py)

    @property
    def where(self) -> str:
        return f"{display_path(self.site.filename)}:{self.site.lineno}"

    # -- eager -------------------------------------------------------------------------------------------------
    def _eager(self, env: dict, scaler=None, reference: bool = False):
        names = self.site.free_names
        if self._eager_fn is None:  # every free name is a parameter: one function serves all calls
            self._eager_fn = self._forward_fn(env, names)[0]
        opened = not tape.is_recording() and tape.begin(("site", self.site.key))  # record from the first statement
        foreign = [(n, provenance.flat_tensors(env[n])) for n, _ in provenance.foreign_inputs(env)]
        try:
            with provenance.observe() as recomputed:
                result = self._eager_fn(*[env[n] for n in names])
        except BaseException:
            if opened:
                tape.discard()
            raise
        for name, tensors in foreign:  # what the graph must recompute (_recomputations)
            self.recomputes[name] = self.recomputes.get(name, False) or any(id(t) in recomputed for t in tensors)
        loss = result[0]
        self._last_loss = loss  # the reference record's (_reference)
        (loss if scaler is None else scaler.scale(loss)).backward()
        self.weights = list(tape.last_params())
        self.modules = tape.last_modules()
        self.kind = "eager"
        if self.reason is None and (tape.last_leaves() or any(tape.is_leaf_tensor(env[n]) for n in names)):
            # the graph differentiates Parameters only: a tensor made with requires_grad=True would get no .grad
            self._decide_eager("non-parameter-leaf", "the loss depends on a tensor with requires_grad=True that is "
                               "not an nn.Parameter (its .grad is computed in PyNative only)")
        outputs = self._outputs(loss, result[1:])
        if reference or self.calls == 1:
            self.made_by_modules = provenance.learn_site_outputs(dict(zip(self.site.outputs, outputs)), env)
        return outputs

    # -- bindings (module docstring, step 1) -------------------------------------------------------------------
    def _select_binding(self, env: dict):
        """Make the binding of this call's objects current (its weights, modules, made_by_modules) and return None;
        or, for objects not seen yet, return ``(key, objects, reached)`` for :meth:`_reference` to record.

        Raises:
            Uncompilable: the last ``_MAX_NEW_BINDINGS_IN_A_ROW`` calls each brought new objects.
        """
        objects = _objects(env)
        key, reached = _binding_key(objects)
        binding = self._bindings.get(key)
        if binding is not None:
            self._bindings.move_to_end(key)
            self._new_in_a_row = 0
            self._use(binding)
            return None
        self._new_in_a_row += 1
        if self._new_in_a_row > _MAX_NEW_BINDINGS_IN_A_ROW:
            previous = self._binding.objects if self._binding is not None else ()
            old = {n: id(v) for n, v in previous}
            changed = [n for n, v in objects if old.get(n) != id(v)] or [n for n, _ in objects]
            what = ", ".join(f"`{n}`" for n in changed[:4])
            raise Uncompilable(f"the objects it uses are new at every call ({what}, or a module or parameter they "
                               f"hold, changed in each of the last {_MAX_NEW_BINDINGS_IN_A_ROW} calls); create them "
                               "once, outside the loop, to compile it", "new-objects-every-call")
        return key, objects, reached

    def _use(self, binding: _Binding) -> None:
        self._binding = binding
        self.weights = binding.weights
        self.modules = binding.modules
        self.made_by_modules = binding.made_by_modules

    def _reference(self, env: dict, scaler, new, optimizer=None) -> tuple:
        """The eager reference step of a binding not seen yet (``new``: ``(key, objects, reached)`` from
        :meth:`_select_binding`); keeps it, dropping the least recently used binding (its graphs and its hold on
        the models) beyond ``_MAX_BINDINGS``. Returns the region's values.

        When the compile cache holds graphs this run has not loaded yet (``adapter/compile_cache.py``), also keeps
        what :meth:`_verify_loaded` checks a loaded graph against: the state before the step (the parameters and
        buffers the objects reach, ``optimizer``'s own Parameters: its lrs and moments), the inputs, the loss and the
        gradients."""
        gate = compile_cache.gate()
        record = None
        if gate is not None and gate.count < len(gate.manifest) and (scaler is None or not scaler.is_enabled()):
            state = _reached_state(new[2], optimizer)
            # getattr: the optimizer's own Parameters (MindSpore's lrs and moments) have no `grad` on MindSpore 2.10
            record = _ReferenceRecord(dict(env), state, {id(p): getattr(p, "grad", None) for p in state.params})
        # a step that draws random numbers cannot be checked against this step: adapter/compile_cache.py compiles it
        with (random_draws() if gate is not None else contextlib.nullcontext([])) as draws:
            outputs = self._eager(env, scaler, reference=True)
        if record is not None and draws:
            record = None  # nothing to check a step that draws random numbers against: its state copy goes now
        if record is not None:
            record.finish(self._last_loss, self.weights)
        key, objects, reached = new
        binding = _Binding(objects, reached, self.weights, self.modules, self.made_by_modules)
        binding.check = record
        binding.random = list(draws)
        self._bindings[key] = binding
        self._binding = binding
        self._bindings_seen += 1
        while len(self._bindings) > _MAX_BINDINGS:
            _, dropped = self._bindings.popitem(last=False)
            self._graphs_dropped += sum(len(cell.compile_cache) for cell in dropped.graphs.values())
        return outputs

    @property
    def _returned(self) -> List[str]:
        """The region's names that forward_fn returns after the loss: all but the loss itself when the loss is one
        of them (``loss = ...; loss.backward()``). A graph that returns one node twice gives two tensors sharing one
        buffer, which MindSpore frees when the first of them dies (``adapter/graph_semantics.py``, ``run_cell``)."""
        loss = self.site.loss
        return [n for n in self.site.outputs if not (isinstance(loss, ast.Name) and n == loss.id)]

    def _outputs(self, loss, returned) -> tuple:
        """The values of ``site.outputs``, in order, from forward_fn's ``loss`` and ``returned`` values."""
        named = dict(zip(self._returned, returned))
        if isinstance(self.site.loss, ast.Name):
            named[self.site.loss.id] = loss
        return tuple(named[n] for n in self.site.outputs)

    # -- code generation ----------------------------------------------------------------------------------------
    def _source(self, tensor_names: List[str], graph: bool = False, prologue=()):
        """forward_fn's source, each region statement on its line number in the user's file; and, for ``graph``,
        the source of one function per ``with`` block (autocast regions), each in its own file at the user's lines,
        called from forward_fn as ``(a, b,) = amp_outputs_to_float32(__adapter_amp_block_I(x, ...))``.
        ``prologue``: statements run first, on the line before the region's first (:meth:`_recomputations`).
        Returns ``(source, [(block name, block source), ...])``."""
        from adapter.step_rewrite import _reads, _writes
        site = self.site
        returns = ast.unparse(ast.Tuple([site.loss] + [ast.Name(n, ast.Load()) for n in self._returned], ast.Load()))
        first = site.region[0].lineno
        lines = [f"# forward_fn of {site.filename}:{site.lineno} (generated by adapter/compiled_step.py)"]
        def_line = max(first - (2 if prologue else 1), 2)
        lines += [""] * (def_line - 1 - len(lines))
        lines.append(f"def forward_fn({', '.join(tensor_names)}):")
        if prologue:
            lines.append("    " + "; ".join(prologue))
        local_names = set(tensor_names)
        blocks = []

        def place(target: List[str], lineno: int, text: List[str], indent: str = "    ") -> None:
            target += [""] * max(0, lineno - 1 - len(target))
            target += [indent + t for t in text]

        for stmt in site.region:
            if not graph:  # `layer.forward(x)` called directly counts as a module call (its parameters get grads)
                stmt = _DirectForward().visit(copy.deepcopy(stmt))
            if graph and isinstance(stmt, ast.With):
                name = f"__adapter_amp_block_{len(blocks)}"
                body_reads = _reads(ast.With(items=[], body=stmt.body))
                params = [n for n in sorted(body_reads) if n in local_names]
                outs = sorted(set().union(*(_writes(b) for b in stmt.body)))
                block = [f"# autocast block of {site.filename}:{stmt.lineno} (generated by adapter/compiled_step.py)"]
                place(block, stmt.lineno, [f"def {name}({', '.join(params)}):"], "")
                for inner in stmt.body:
                    place(block, inner.lineno, ast.unparse(inner).splitlines())
                block.append(f"    return ({''.join(o + ', ' for o in outs)})")
                blocks.append((name, "\n".join(block) + "\n"))
                call = f"{name}({', '.join(params)})"
                place(lines, stmt.lineno, [f"({''.join(o + ', ' for o in outs)}) = amp_outputs_to_float32({call})"
                                           if outs else call])
                local_names |= set(outs)
                continue
            place(lines, stmt.lineno, ast.unparse(stmt).splitlines())
            local_names |= _writes(stmt)
        lines.append(f"    return {returns}")
        return "\n".join(lines) + "\n", blocks

    def _write(self, source: str, suffix: str = "") -> str:
        digest = hashlib.sha1(source.encode()).hexdigest()[:12]
        os.makedirs(_GEN_DIR, exist_ok=True)
        stem = os.path.splitext(os.path.basename(self.site.filename))[0]
        path = os.path.join(_GEN_DIR, f"{stem}_site{self.site.key}_{digest}{suffix}.py")
        if not os.path.exists(path):  # data-parallel workers may write the same file at once: atomically
            with torchfile.atomic_write(path) as f:
                f.write(source.encode())
        GENERATED_TO_USER[path] = self.site.filename
        return path

    def _forward_fn(self, env: dict, tensor_names: List[str], graph: bool = False, regions=(), prologue=()):
        """forward_fn from :meth:`_source`, in a fresh module whose globals are the user's module's plus the
        non-tensor free names; ``regions`` (one ``(enabled, dtype)`` per ``with`` block, for ``graph``) gives each
        enabled autocast block MindSpore's AMP strategy (its ``amp_strategy`` attribute, read by the compiler)."""
        source, blocks = self._source(tensor_names, graph, prologue)
        path = self._write(source)
        # MindSpore's parser resolves a function's globals through sys.modules[fn.__module__]: a real module
        module = types.ModuleType(f"adapter_generated.{os.path.splitext(os.path.basename(path))[0]}")
        namespace = module.__dict__
        namespace.update({k: v for k, v in self.user_globals.items() if not k.startswith("__")})
        namespace.update({k: v for k, v in env.items() if k not in tensor_names})
        namespace["__file__"] = path
        namespace["amp_outputs_to_float32"] = amp_outputs_to_float32
        namespace[_DirectForward.FN] = module_forward
        sys.modules[module.__name__] = module
        for i, (name, block_source) in enumerate(blocks):
            exec(compile(block_source, self._write(block_source, f"_block{i}"), "exec"), namespace)
            enabled, dtype = regions[i]
            if enabled:
                create_amp_strategy = backend.internal("create_amp_strategy")
                args = amp_state.strategy_args(dtype, graph=True)
                if args is not None:
                    namespace[name].amp_strategy = create_amp_strategy(*args)
                    # the AMP pass deepens MindSpore's call simulation: ResNet50 exceeds the default 1000
                    # ("Exceed function call depth limit"); 4000 compiles it (measured)
                    ms.set_recursion_limit(4000)
        exec(compile(source, path, "exec"), namespace)
        self._generated_path = path
        self._generated_source = source + "".join(b for _, b in blocks)
        return namespace["forward_fn"], namespace

    def _regions(self, env: dict):
        """``(enabled, dtype)`` of each ``with`` block of the region, from its context evaluated now.

        Raises:
            Uncompilable: a context that is neither an autocast nor a no-op (``nullcontext()``, ``suppress()``).
        """
        if not any(isinstance(stmt, ast.With) for stmt in self.site.region):
            return ()  # no context to evaluate: spares a copy of the user's globals per call
        regions = []
        namespace = {**self.user_globals, **env}
        for stmt in self.site.region:
            if not isinstance(stmt, ast.With):
                continue
            region = (False, None)
            for item in stmt.items:
                expr = ast.Expression(item.context_expr)
                ctx = eval(compile(expr, self.site.filename, "eval"), namespace)  # noqa: S307 (the user's code)
                if isinstance(ctx, amp_state.AutocastRegion):
                    region = ctx.region()
                elif not isinstance(ctx, (contextlib.nullcontext, contextlib.suppress)):
                    raise Uncompilable(f"`with {ast.unparse(item.context_expr)}:` in the step (only autocast and "
                                       "no-op contexts compile)", "unsupported-context-manager",
                                       f"{display_path(self.site.filename)}:{stmt.lineno}")
            regions.append((region[0], region[1] if region[0] else None))
        return tuple(regions)

    def _python_objects(self, env: dict) -> None:
        """Rule out a region that builds or uses ``torch.distributions`` objects (``patches/distributions.py``).

        A distribution is a Python object whose constructor runs Python-side logic (argument checks, broadcasting,
        lazy properties); MindSpore's graph compiler (STRICT syntax) cannot construct it and stops with "the inputs
        should be constant, but found variable" at that line, and a distribution made before the region would be
        baked into the graph as constants. Checking the region's calls and inputs up front names the cause and
        spares the failed compilation.

        Raises:
            Uncompilable: a call in the region whose callee (a name or attribute chain, evaluated without calling it)
                belongs to ``torch.distributions`` (a distribution class, ``kl_divergence``), or an input of the
                region that is a distribution object.
        """
        package = "mindtorch.torch.distributions"
        for name in self.site.free_names:
            value = env.get(name)
            if type(value).__module__.startswith(package):
                raise Uncompilable(f"`{name}` is a torch.distributions.{type(value).__name__} object (made before the "
                                   "step), which graph mode cannot take as an input", "torch-distributions")
        if self._calls_checked:
            return
        namespace = {**self.user_globals, **env}  # a copy of the user's globals: built only for the first check
        for stmt in self.site.region:
            for node in ast.walk(stmt):
                if not isinstance(node, ast.Call):
                    continue
                callee = node.func
                chain = callee
                while isinstance(chain, ast.Attribute):
                    chain = chain.value
                if not isinstance(chain, ast.Name) or chain.id not in namespace:
                    continue
                try:
                    target = eval(compile(ast.Expression(callee), self.site.filename, "eval"),  # noqa: S307
                                  namespace)  # a name or attribute chain of the user's: no call
                except Exception:  # noqa: BLE001 -- not resolvable now (e.g. an attribute set later): no verdict
                    continue
                owner = target if isinstance(target, type) else getattr(target, "__self__", None)
                module = getattr(target, "__module__", None) or ""
                if module.startswith(package) or type(owner).__module__.startswith(package):
                    raise Uncompilable(
                        f"{display_path(self.site.filename)}:{node.lineno}: `{ast.unparse(callee)}(...)` builds or "
                        "uses a torch.distributions object (a Python object with Python-side checks), which graph "
                        "mode cannot construct; same values eagerly", "torch-distributions")
        self._calls_checked = True  # the region's code does not change: its calls are checked once per site

    def _clip_spec(self, clip_args):
        """(mask over self.weights, max_norm, norm_type) for a fusable clip, or None (unsupported norm type)."""
        params, max_norm, *rest = clip_args()
        norm_type = float(rest[0]) if rest else 2.0
        if norm_type not in (2.0, float("inf")):
            return None
        from mindtorch.torch.tensor import Tensor
        params = [params] if isinstance(params, Tensor) else list(params)
        ids = {id(p) for p in params}
        return tuple(id(w) in ids for w in self.weights), float(max_norm), norm_type

    def _build(self, env: dict, optimizer, fused: bool, clip=None, scaled: bool = False, regions=(),
               reduce_mask=None, prologue=()):
        assigned = set(self.site.outputs)  # a free name the region also assigns must be a parameter of forward_fn
        tensor_names = [n for n in self.site.free_names if n in env and (_is_tensor_arg(env[n]) or n in assigned)]
        tensor_names += [n for n in env if n.startswith(_MADE_BY) and _is_tensor_arg(env[n])]
        # the optimizer a fused graph updates is part of the key: a script that replaces its optimizer (a new
        # `optimizer = SGD(model.parameters(), lr=...)` for a second phase) must not keep updating with the old one;
        # so are its hyper-parameters other than the lr, which a compiled update holds as constants
        if fused and getattr(optimizer, "_adapter_before_update", None) is not None:
            optimizer._adapter_before_update()  # patches/sgd.py: slots of a momentum switched on, before compiling
        hyper = _hyperparameters(optimizer) if fused else None
        if fused:
            seen = self.hyperparameter_sets.setdefault(id(optimizer), set())
            seen.add(hyper)
            if len(seen) > _MAX_HYPERPARAMETER_SETS:
                changed = sorted({k for i, group in enumerate(hyper) for k, _ in group
                                  if len({dict(h[i]).get(k) for h in seen if i < len(h)}) > 1})
                raise Uncompilable(f"optimizer hyper-parameter(s) {'/'.join(changed) or '?'} changed between steps "
                                   "(a scheduler with cycle_momentum=True?): a compiled update holds them as "
                                   "constants", "optimizer-hyperparameters-change")
        # an optimizer's own graph variant (patches/adam_steps.py: per-parameter step counts) compiles anew
        variant = getattr(optimizer, "_adapter_graph_variant", None) if fused else None
        key = (fused, id(optimizer) if fused else None, variant, clip, scaled, hyper, tuple((e, str(d)) for e, d in regions),
               reduce_mask, tuple(tensor_names),
               tuple((n, id(v)) for n, v in env.items() if n not in tensor_names and not _is_number(v)),
               tuple((n, type(v), v) for n, v in env.items() if _is_number(v)))
        graphs = self._binding.graphs
        fn = graphs.get(key)
        if fn is None:
            if len(graphs) >= 8:
                raise Uncompilable("its non-tensor inputs (Python numbers or objects) change every step; "
                                   "pass them as tensors to compile it", "non-tensor-inputs-change")
            release_eager_caches()  # the reference step's kernels: not run again once the step runs compiled
            forward_fn, _ = self._forward_fn(env, tensor_names, graph=True, regions=regions, prologue=prologue)
            reducer = grad_sync.graph_reducer(self.weights, reduce_mask) if reduce_mask else None
            fn = _StepCell(forward_fn, self.weights, optimizer if fused else None, bool(self._returned), clip,
                           scaled, reducer)
            # what shapes this graph beyond its Cell's parameters and inputs (adapter/compile_cache.py signature)
            fn.cache_signature = repr((self._generated_source, [(w.name, tuple(w.shape), str(w.dtype)) for w in self.weights],
                                  type(optimizer).__qualname__ if fused else None, variant, clip, scaled, hyper,
                                  tuple((e, str(d)) for e, d in regions), reduce_mask, tuple(tensor_names),
                                  key[-1], self.site.key))
            if ms.get_context("enable_compile_cache"):
                # A graph loaded from MindSpore's compile cache writes back only the Parameters its Cell owns
                # (docs/compile_cache_bug/repro.py): own the BN statistics too, so they keep moving.
                fn.buffers = ms.ParameterTuple(param_names.unique(tape.buffers(self.modules)))
            graphs[key] = fn
        return fn, tensor_names

    # -- compiled -----------------------------------------------------------------------------------------------
    def _can_fuse(self, optimizer) -> bool:
        if optimizer is None or not isinstance(optimizer, backend.internal("Optimizer")):
            return False
        if not _has_graph_update(optimizer):
            return False  # a torch-style subclass with only step() (timm's Lamb): it steps eagerly, after the grads
        weight_ids = {id(w) for w in self.weights}
        if not all(id(p) in weight_ids for p in optimizer.parameters):
            return False  # a parameter without a grad must be skipped by step(): eager step does that
        return all(w.grad is None for w in self.weights)

    def _handed_back(self, env: dict) -> Dict[str, object]:
        """The region's names that the script binds to an object it already holds, and that object: ``u = w`` (a
        free name: its value, a Parameter or a tensor input), ``p = self.weight`` or ``d = w.data`` (a chain of
        attribute reads of a free name that gives a Parameter, or a Parameter's ``.data``: patches/parameter_data.py's
        tensor over the parameter's storage).
        In the script, as in PyTorch, the name IS that object and shows a later in-place update (``optimizer.step()``);
        the graph's output is a copy from before it (tests/test_output_alias.py), so :meth:`_compiled` hands back
        the object instead. Only for a name whose last assignment in the region is that one (``u = <chain>``), from
        a free name the region neither assigns nor mutates (``x.a = ...``, ``x[i] = ...``)."""
        if self._chains is None:
            from adapter.step_rewrite import _mutated
            assigned = set(self.site.outputs)
            mutated = set().union(set(), *(_mutated(stmt) for stmt in self.site.region))
            last = {}
            for stmt in self.site.region:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    last[stmt.targets[0].id] = _object_chain(stmt.value)
                else:
                    for node in ast.walk(stmt):
                        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                            last[node.id] = None
            self._chains = {n: chain for n, chain in last.items()
                            if chain is not None and chain[0] in self.site.free_names
                            and chain[0] not in assigned and chain[0] not in mutated}
        out = {}
        for name, chain in self._chains.items():
            if chain[0] not in env:
                continue
            value = owner = env[chain[0]]
            try:
                for attr in chain[1:]:
                    owner, value = value, getattr(value, attr)
            except Exception:  # noqa: BLE001 -- not there now: the graph's value stays
                continue
            if len(chain) == 1 or isinstance(value, ms.Parameter) or \
                    (chain[-1] == "data" and isinstance(owner, ms.Parameter)):  # w.data: over w's storage
                out[name] = value
        return out

    def _after_reads_weights(self, after) -> bool:
        """Whether the statements that the rewrite moved after the site call (``adapter/step_rewrite.py``,
        ``StepSite.after_reads``) read one of the binding's weights: directly (``q = w * 1.0``) or through a module
        or object that reaches it (``h = model(x)``, :func:`_structure`). In the script they run before
        ``optimizer.step()``, so a fused step (which updates the weights in the site call) would show them the
        updated weights: such a step is not fused (the optimizer steps eagerly, after them). A thunk that fails
        (a name not defined yet) counts as reading them."""
        if after is None:
            return False
        try:
            values = after()
        except Exception:
            return True
        ids = {id(w) for w in self.weights}
        hit = any(id(v) in ids for v in values) or any(id(v) in ids for v in _structure(values))
        if hit and not getattr(self, "_after_logged", False):
            self._after_logged = True
            if os.environ.get("ADAPTER_DEBUG"):
                _log(f"the step at {self.where} is not fused: statements of the region that run after it read "
                     f"the weights ({', '.join(self.site.after_reads)}), as in the script before step()")
        return hit

    def _recomputations(self, env: dict):
        """Inputs made by a model in an earlier step (``fake = netG(noise)`` before ``errG = criterion(netD(fake))``,
        ``adapter/provenance.py``) are recomputed inside the graph, so the gradient reaches that model as in PyTorch.
        Only the inputs that an eager step of this site recomputed (``self.recomputes``, learned in :meth:`_eager`
        through ``provenance.observe``): one the region detaches before any module call (truncated BPTT's
        ``hidden = repackage_hidden(hidden)``) is an ordinary input. An input not seen by an eager step yet raises
        :class:`_LearnRecomputes`: :meth:`run` runs that call eagerly, and learns it.
        Returns ``(env, prologue, buffers)``: ``env`` with each such input replaced by what its producing call needs
        (``__adapter_made_by_I`` the module, ``..._argJ`` its arguments), the statements that recompute it, and the
        buffers (BatchNorm statistics) of the producing models, which the recomputation must leave as they were.

        Raises:
            Uncompilable: an argument of the producing call was itself made by a model in an earlier step.
        """
        foreign = provenance.foreign_inputs(env)
        if not foreign:
            return env, (), []
        unknown = [name for name, _ in foreign if name not in self.recomputes]
        if unknown:
            raise _LearnRecomputes(unknown)
        # only the inputs an eager step recomputed: one that the region detaches before any module call
        # (`hidden = repackage_hidden(hidden)`, truncated BPTT) is an ordinary input
        foreign = [(name, recipe) for name, recipe in foreign if self.recomputes[name]]
        if not foreign:
            return env, (), []
        env, prologue, buffers = dict(env), [], []
        for i, (name, recipe) in enumerate(foreign):
            del env[name]
            fn = f"{_MADE_BY}{i}"
            env[fn] = recipe.module
            args = []
            for j, value in enumerate(list(recipe.args) + list(recipe.kwargs.values())):
                if _is_tensor(value) and provenance.recipe_of(value) is not None:
                    raise Uncompilable(f"`{name}` was made in an earlier step from a tensor made in a step before "
                                       "that (recomputed on the eager bridge)", "recomputation-chain")
                env[f"{fn}_arg{j}"] = value
                args.append(f"{fn}_arg{j}")
            keywords = [f"{k}={a}" for k, a in zip(recipe.kwargs, args[len(recipe.args):])]
            pick = "".join(f"[{k}]" for k in recipe.index or ())
            prologue.append(f"{name} = {fn}({', '.join(args[:len(recipe.args)] + keywords)}){pick}")
            buffers += provenance.buffers(recipe.module)
            provenance.warn_dropout(recipe, self.where)
        return env, tuple(prologue), buffers

    def _compiled(self, env: dict, optimizer, clip_args, scaler=None, after=None):
        inputs = env
        self._python_objects(env)
        env = self.numbers.convert(env)  # host values and changing numbers: 0-d tensor inputs, never constants
        env, prologue, made_by_buffers = self._recomputations(env)
        scaled = scaler is not None and scaler.is_enabled()
        fused = self._can_fuse(optimizer) and not self._after_reads_weights(after)
        clip = self._clip_spec(clip_args) if fused and clip_args is not None else None
        if clip_args is not None and clip is None:
            fused = False  # a clip the graph does not do (norm type): clip and step eagerly, after the grads
        # DDP: which weights the graph averages over the workers (None: no DDP, or under no_sync())
        reduce_mask = grad_sync.prepare_step(self.weights)
        regions = self._regions(env)
        fn, tensor_names = self._build(env, optimizer, fused, clip, scaled, regions, reduce_mask, prologue)
        gate = compile_cache.gate()
        cached = False
        unchecked = None  # why this step's graph, loadable from the cache, could not be checked
        if gate is not None and not fn.compile_cache:
            # A compiled step is loaded only to be checked against the binding's eager reference step. One that
            # cannot be checked in any run is compiled outside the cache, in every run (adapter/compile_cache.py
            # _Gate._outside), so that it costs no load and the other graphs keep their numbers.
            draws = self._binding.random
            fn.cache_exempt = (f"it draws random numbers ({', '.join(draws[:3])}{' ...' if len(draws) > 3 else ''})"
                               if draws else "its host values change every step" if self.numbers.in_use else "its inputs are recomputed in the graph" if prologue else
                               "a GradScaler scales its loss" if scaled else
                               "DDP averages its gradients in the graph" if reduce_mask else None)
            if fn.cache_exempt is None and gate.count < len(gate.manifest):
                # the folder holds graphs not loaded yet: this one may be among them
                check = self._binding.check
                if check is None or not check.covers(tensor_names):
                    unchecked = fn.cache_exempt = "its eager reference step was not recorded for the check"
                elif not gate.expects_load(fn, [_graph_input(check.env[n]) for n in tensor_names]):
                    pass  # the folder's next graph is another one: compiled below (the gate drops the folder). No
                    # check run: running the graph on the reference step's batch and putting the state back changed
                    # the 6th loss of tests/fixtures/module_calls.py by 1 ulp
                else:
                    cached, mismatch = self._verify_loaded(fn, tensor_names, fused, clip, check)
                    if mismatch:
                        gate.exclude(fn, f"the step at {self.where} loaded from it does not match its eager "
                                         f"reference step ({mismatch})")
                        graphs = self._binding.graphs
                        for k in [k for k, v in graphs.items() if v is fn]:
                            del graphs[k]
                        fn, tensor_names = self._build(env, optimizer, fused, clip, scaled, regions, reduce_mask,
                                                       prologue)
                        cached = False
        if self._binding.check is not None:
            self._binding.check = None  # the state copies go (ResNet50 + Adam: ~300 MB)
        # the scale as a fresh 0-d tensor: passing the scaler's Parameter itself made every step ~0.1 s slower
        # (ResNet18 on CPU, measured)
        args = ([ms.Tensor(scaler.get_scale(), ms.float32)] if scaled else []) + [_graph_input(env[n])
                                                                                   for n in tensor_names]
        start = time.perf_counter()
        saved = [(b, ms.Tensor.copy(b)) for b in made_by_buffers]  # the real forward already moved them: once
        if not getattr(fn, "_adapter_compiled", False):  # a new graph: compile it, give back the compiler's garbage
            compile_and_trim(fn, args)
        values, grads, total_norm, found_inf = run_cell(fn, *args)
        self.graph_ran = True  # from here on the step has happened: an error is not a reason to run it again
        if unchecked is not None and gate is not None and gate.active:  # later runs compile it (_Gate.exclude)
            gate.exclude(fn, f"the step at {self.where} could not be checked ({unchecked})")
        if os.environ.get("ADAPTER_DEBUG") and getattr(fn, "cache_exempt", None) and self.first_compiled_s is None:
            _log(f"compile cache: the step at {self.where} is compiled, not loaded: {fn.cache_exempt}")
        for buffer, value in saved:
            ms.ops.assign(buffer, value) if isinstance(buffer, ms.Parameter) else buffer.assign_value(value)
        self.total_norm = _to_adapter(total_norm) if clip is not None else None
        values = values if isinstance(values, tuple) else (values,)
        if scaled:
            values = values[1:]  # (loss * scale, loss, *outputs): the script's names hold the unscaled loss
            if fused:
                scaler.record_fused_step(optimizer, bool(found_inf.asnumpy()))
        events.emit("backward", values[0])
        tape.accumulate(self.weights, grads)
        grad_sync.after_backward(self.weights, reduce_mask)  # DDP: no_sync() bookkeeping, or averaging left to do
        self.fused_last = fused
        self.kind = "fused" if fused else "compiled"
        outputs = tuple(_to_adapter(v) for v in self._outputs(values[0], values[1:]))
        handed = self._handed_back(inputs) if self._chains != {} else {}
        if handed:  # `u = w`: the script's u is w itself (the graph's output is a copy from before the update)
            outputs = tuple(handed.get(n, v) for n, v in zip(self.site.outputs, outputs))
        if self.made_by_modules:  # e.g. `fake = netG(noise)`: a later step can differentiate through it
            provenance.register_outputs(self.made_by_modules, dict(zip(self.site.outputs, outputs)), inputs,
                                        tape.new_generation())
        elapsed = time.perf_counter() - start
        if self.first_compiled_s is None:
            float(values[0].asnumpy())  # the first call's time includes compilation: wait for it
            self.first_compiled_s = time.perf_counter() - start
            parts = "forward+backward" + ("+clip_grad_norm_" if clip is not None else "") + \
                ("+GradScaler" if scaled and fused else "") + ("+optimizer" if fused else "")
            _log(f"compiled the step at {self.where} ({parts}) in {self.first_compiled_s:.1f} s" +
                 (" (loaded from the compile cache, and checked against the reference step)" if cached else ""))
        else:
            self.step_s.append(elapsed)
        return outputs

    def _verify_loaded(self, fn, tensor_names, fused: bool, clip, check: "_ReferenceRecord"):
        """Run ``fn`` (its first call: MindSpore compiles it, or loads it from the compile cache) on the reference
        step's inputs from the reference step's starting state, then put back the current state. When the graph was
        loaded (``adapter/compile_cache.py``), compare it with the eager reference step: the loss (rtol 1e-4),
        the gradients (clipped like the graph when ``clip``; each tensor's error within 1e-3 of its norm plus 1e-6 of
        the largest), the BatchNorm statistics (each within 1e-2 of the step's change) and, when ``fused``, the
        updated weights (the error over all of them within half the update's norm). Tolerances: compiled and eager steps differ by float32 rounding (~1e-6 relative, tests/
        test_compiled_step.py); a foreign or stale graph differs by the whole update or worse.

        Memory: the host copies (the starting state, the state now, the reference gradients) live in files
        (``compile_cache.SpilledArrays``) and are read back one tensor at a time; each graph output is dropped once
        compared; the heap is trimmed before the graph's first run, during the passes (:class:`_HeapTrimmer`) and
        after, so that the check adds little to the run's peak RSS (ResNet50 + Adam, batch 32: 1474 MB vs 1633 for
        the compiling run; 1718 when the gradients were held in memory; ``bench/memory_phases.py --warm``).
        Returns ``(loaded, mismatch)``: whether the graph came from the cache, and None or what differed."""
        import numpy as np
        gate = compile_cache.gate()
        # the current state is copied and the starting state put back one Parameter at a time, each starting value
        # dropped once assigned (keeping the norm of its change): one host copy of the state at a time, not two
        # (ResNet50 + Adam: ~300 MB each)
        now, change = _State((), spill=True), {}
        # the change of each weight and statistic (the tolerances below); the optimizer's moments are not compared
        compared = {id(w) for w in self.weights} | {id(b) for b in tape.buffers(self.modules)}
        trimmer = _HeapTrimmer()
        for p in check.state.params:
            before = check.state.values.pop(id(p))
            current = p.asnumpy()  # shares p's storage: written out and measured before p is assigned below
            now.params.append(p)
            now.values[id(p)] = current
            if id(p) in compared:
                change[id(p)] = _sum_sq(current, before)
            del current
            _write(p, before)
            trimmer.add(2 * before.nbytes)
            del before
        fn.loadable = True  # adapter/compile_cache.py: this Cell's first graph may be loaded (it is checked here)
        try:
            args = [_graph_input(check.env[n]) for n in tensor_names]
            # loaded (or compiled), then the heap's free pages handed back (the swap's host copies and the load's
            # garbage), then run: its memory pool goes where they were, as in the compiling run (compile_and_trim)
            compile_and_trim(fn, args)
            values, grads, _, _ = run_cell(fn, *args)
            del args
        except BaseException:  # the step falls back to eager (SiteRuntime.run): from the current state, not step 1's
            now.restore()
            raise
        finally:
            fn.loadable = False
        loaded = gate is not None and id(fn) in gate.loaded
        mismatch = None
        try:
            if not loaded:
                return False, None
            values = values if isinstance(values, tuple) else (values,)
            loss = float(values[0].asnumpy())
            if not abs(loss - check.loss) <= 1e-4 * max(abs(check.loss), 1e-3):
                mismatch = f"loss {loss!r} vs {check.loss!r}"
                return True, mismatch
            # the reference gradients are read back one at a time (check.grad); the clip's total norm and the
            # largest norm come from their sums of squares and largest magnitudes, recorded in finish()
            scale = [1.0] * len(self.weights)
            if clip is not None:
                mask, max_norm, norm_type = clip
                picked = [i for i, m in enumerate(mask) if m]
                total = max([check.grad_absmax[i] for i in picked], default=0.0) if norm_type == float("inf") else \
                    math.sqrt(sum(check.grad_sq[i] for i in picked))
                coef = min(max_norm / (total + 1e-6), 1.0)
                scale = [coef if m else 1.0 for m in mask]
            largest = max([math.sqrt(sq) * c for sq, c in zip(check.grad_sq, scale)] + [1e-30])
            grads = list(grads)
            for i, w in enumerate(self.weights):
                e = check.grad(i, w.shape)
                if scale[i] != 1.0:
                    e = e * scale[i]
                # asnumpy() gives a graph output a host copy for as long as it lives: each one goes once compared
                g, grads[i] = grads[i].asnumpy(), None
                if g.shape != e.shape or not float(np.linalg.norm(g - e)) <= 1e-3 * float(np.linalg.norm(e)) + \
                        1e-6 * largest:
                    mismatch = f"gradient of {w.name}"
                    return True, mismatch
                trimmer.add(3 * e.nbytes)
                del e, g
            for p in tape.buffers(self.modules):  # BatchNorm statistics: each within 1e-2 of its step's change
                eager, graph = now.value(p), p.asnumpy()
                if eager is not None and not float(np.linalg.norm(graph - eager)) <= \
                        1e-2 * math.sqrt(change[id(p)]) + 1e-6 * float(np.linalg.norm(eager)):
                    mismatch = f"statistic {p.name}"
                    return True, mismatch
            if fused:  # the update as a whole: Adam turns a gradient that is float32 noise (a bias before a
                # BatchNorm) into a full +-lr step of either sign, so per tensor it is no test; frozen weights
                # (docs/compile_cache_bug/) or another optimizer or lr differ by the whole update
                held = [w for w in self.weights if id(w) in now.values]
                error = 0.0
                for w in held:
                    updated = now.value(w)
                    error += _sum_sq(w.asnumpy(), updated)
                    trimmer.add(2 * updated.nbytes)
                    del updated
                error = math.sqrt(error)
                step = math.sqrt(sum(change[id(w)] for w in held))
                if not error <= 0.5 * step + 1e-7:
                    mismatch = f"updated weights (error {error:.3g} for an update of {step:.3g})"
                    return True, mismatch
            return True, None
        finally:
            now.restore()
            now.values.close()
            check.close()
            del values, grads
            _trim_heap()  # the check's host copies, before the step's own run
            if os.environ.get("ADAPTER_DEBUG"):
                _log(f"compile cache check of {self.where}: loaded={loaded} mismatch={mismatch}")

    def run(self, env: dict, optimizer=None, clip_args=None, scaler=None, after=None):
        self.calls += 1
        self.fused_last = False
        if self.site.host_values:
            host_values.check(self.site, env, self.where)
        if scaler is not None and self.reason is None:
            if not isinstance(scaler, amp_state.LossScaler):
                self._decide_eager("custom-grad-scaler", f"{type(scaler).__name__}.scale(loss) is not torch's "
                                                         "GradScaler")
        if _mode == "pynative" or self.reason is not None or tape.is_recording():
            if self.calls > 1 and tape.is_recording():
                self.recorded_before = True  # for explain(): not a compile failure, and not "not compiled yet"
                if self.opened_at is None and tape.opened_at() is not None:
                    filename, line = tape.opened_at()
                    self.opened_at = f"{display_path(filename)}:{line}"
            self._record_eager_state()
            return self._eager(env, scaler)
        try:  # host values (numbers, numpy arrays) are graph inputs, not objects that key a binding
            new = self._select_binding({n: v for n, v in env.items() if n not in self.site.host_values}
                                       if self.site.host_values else env)
        except Uncompilable as exc:
            return self._fall_back(exc, env, scaler)
        if new is not None:  # the first call, or the first with these objects: the eager reference step
            return self._reference(env, scaler, new, optimizer)
        self.graph_ran = False
        try:
            return self._compiled(env, optimizer, clip_args, scaler, after)
        except _LearnRecomputes:  # this call runs eagerly: it shows which of those inputs the region recomputes
            return self._eager(env, scaler)
        except Exception as exc:  # compilation (or graph execution) failed: this site runs eagerly from now on
            if self.graph_ran:
                raise
            if not self.numbers.demote():
                return self._fall_back(exc, env, scaler)
            # numbers passed as tensors did not compile (a shape, a slice bound): constants again, built once more
            if os.environ.get("ADAPTER_DEBUG"):
                _log(f"the step at {self.where} did not compile with its Python numbers as inputs ({exc}); "
                     "they are constants of the graph again")
        try:
            return self._compiled(env, optimizer, clip_args, scaler, after)
        except _LearnRecomputes:
            return self._eager(env, scaler)
        except Exception as exc:
            if self.graph_ran:
                raise
            return self._fall_back(exc, env, scaler)

    def _fall_back(self, exc: Exception, env: dict, scaler):
        """This site runs eagerly from now on: say so once, with the user's ``file:line`` and the reason
        (``--mode graph``: raise :class:`GraphModeError`); run this call eagerly. A draw on the host that stopped
        the compile (:class:`HostRandomDraw`) is named at the user's line, found while this eager call runs."""
        self.reason = short_reason(exc, self._generated_path, self.site.filename)
        self.fallback_kind = diagnostics.classify(exc, self.reason)
        self._bindings.clear()  # their graphs will not run again: let the models go
        if _mode == "graph":
            raise GraphModeError(f"{self.where}: the training step cannot be compiled (--mode graph): "
                                 f"{self.reason}") from exc
        if os.environ.get("ADAPTER_DEBUG"):
            import traceback
            traceback.print_exception(exc)
        if isinstance(exc, HostRandomDraw):  # name the user's line of the draw: the eager step makes it
            with locate_host_draws() as found:
                result = self._eager(env, scaler)
            if found:
                self.reason = f"{', '.join(found[:3])}{' ...' if len(found) > 3 else ''} " \
                              f"draw{'s' if len(found) == 1 else ''} on the host, once per compile (" \
                              f"{'its value' if len(found) == 1 else 'their values'} would be a constant of " \
                              f"the graph): the step runs eagerly"
            diagnostics.record(self.fallback_kind, self.reason, self.where,
                               at=found[0].rpartition(" at ")[2] if found else None)
            _log(f"{self.where}: the training step runs in PyNative (eager), not compiled: {self.reason}")
            return result
        diagnostics.record(self.fallback_kind, self.reason, self.where, at=getattr(exc, "at", None))
        _log(f"{self.where}: the training step runs in PyNative (eager), not compiled: {self.reason}")
        return self._eager(env, scaler)

    def _eager_state(self):
        """``(kind, reason)`` of a site that runs eagerly without a reason of its own (``--mode pynative``, or a
        loss built before the region), or None."""
        if self.reason is not None:
            return None
        if _mode == "pynative":
            return "pynative-mode", _PYNATIVE
        if self.first_compiled_s is None and self.recorded_before:
            if self.opened_at is not None:
                return "loss-built-before-step", f"{_BUILT_BEFORE}; the recording was opened by the module call at " \
                    f"{self.opened_at}, whose output (or a tensor made from it) may reach the loss"
            return "loss-built-before-step", _BUILT_BEFORE
        return None

    def _record_eager_state(self) -> None:
        """Record :meth:`_eager_state` once per kind per site (``adapter.diagnostics.record``)."""
        state = self._eager_state()
        if state is not None and state[0] not in self._recorded_states:
            self._recorded_states.add(state[0])
            diagnostics.record(state[0], state[1], self.where, at=self.opened_at)

    def _decide_eager(self, kind: str, reason: str) -> None:
        """This site runs eagerly from now on, for ``reason`` (an ``adapter.diagnostics`` ``kind``), decided
        without an exception; recorded, and said by ``--explain`` (not printed at run time, as before)."""
        self.reason, self.fallback_kind = reason, kind
        diagnostics.record(kind, reason, self.where)

    def explain_entry(self) -> "diagnostics.StepExplain":
        """This site for ``--explain`` / ``--explain-json``, as data (``adapter.diagnostics.StepExplain``)."""
        site = self.site
        entry = diagnostics.StepExplain(self.where, ast.unparse(site.loss), "eager", self.calls)
        if self.reason is not None:
            entry.kind, entry.reason = self.fallback_kind, self.reason
        elif self._eager_state() is not None:
            # e.g. reinforce.py: `policy(state)` per time step saves log-probs; the loss is summed from them later
            entry.kind, entry.reason = self._eager_state()
        elif self.first_compiled_s is None:
            entry.state = "not-compiled-yet"
        else:
            entry.state = "compiled"
            entry.fused = self.kind == "fused"
            entry.optimizer_line = site.optimizer_line if entry.fused else None
            entry.clip_line = site.clip_line if entry.fused and site.clip_line and self.total_norm is not None \
                else None
            entry.graphs = self._graphs_dropped + sum(len(cell.compile_cache) for binding in self._bindings.values()
                                                      for cell in binding.graphs.values())
            entry.model_sets = self._bindings_seen
            entry.first_compiled_s = self.first_compiled_s
            entry.median_step_s = statistics.median(self.step_s) if self.step_s else None
            entry.steps_timed = len(self.step_s)
            entry.host_inputs = self.numbers.described(self.site, display_path(self.site.filename))
        return entry

    def explain(self) -> str:
        """``--explain``'s line for this site."""
        return self.explain_entry().format()


_eager_caches_released = 0  # calls of release_eager_caches that cleared (read by tests)


def release_eager_caches() -> bool:
    """Free what MindSpore's PyNative executor keeps from the eager ops run so far, before a graph is compiled.

    Every eager op signature (primitive, shapes, dtypes) the process ran keeps a compiled single-op kernel graph in
    the PyNative executor's caches (``OpCompiler``, kernel mods, the grad executor's top cells and AD caches), for
    good. The reference step of a site (module docstring, step 1) runs the whole forward and backward eagerly: for a
    ResNet50 (batch 32, 32 px, CPU) that is ~70 MB of kernels, and ~125 MB less at the compiled steady state with
    them gone (``bench/memory_phases.py``; peak RSS 1742 -> ~1610 MB). Once the step runs as one graph, those
    kernels are not used again. The PyNative executor's ``clear_res()`` (``backend.clear_pynative_resources``)
    frees them: MindSpore itself calls it, and goes on running, after a failed ``jit`` compile
    (``mindspore/common/api.py``) or recomputation (``mindspore/common/recompute.py``). The caches are only
    caches: eager ops run later compile their kernel again (once each), with the same results.

    Skipped (returns False) while a recording is open (``adapter/tape.py``: its top cell is in those caches) or an
    autocast region is active (``patches/amp.py``: the executor's mixed-precision state), and with
    ``ADAPTER_KEEP_EAGER_CACHES=1``.
    """
    global _eager_caches_released
    if os.environ.get("ADAPTER_KEEP_EAGER_CACHES") == "1" or tape.is_recording():
        return False
    if amp_state.active() or amp_state.is_autocast_enabled():
        return False
    backend.clear_pynative_resources()  # grad mode is the user's (torch.no_grad()): kept as it was
    _eager_caches_released += 1
    return True


_heap_trims = 0  # calls of _trim_heap that returned the heap's free memory (read by tests)


def compile_and_trim(cell, args) -> None:
    """Compile ``cell`` for ``args`` (graph mode), then return the C heap's free pages to the system, before the
    graph first runs; ``cell(*args)`` afterwards finds the graph in the Cell's cache and does not compile again.

    Compiling a step leaves tens of MB of freed compiler data (IR, analysis results) in glibc's heap; the graph's
    first run then allocates its memory pool and outputs beside it instead of in it, and the process's peak RSS is
    that sum for good. ``malloc_trim(0)`` (glibc) hands the free pages back first: ResNet50 (batch 32, 32 px, Adam,
    CPU) peaks at 1557 instead of 1611 MB (``bench/memory_phases.py``; native MindSpore graph 1422 MB), same losses
    to the bit; trimming before the compile instead saved nothing (1611 MB). Without glibc (another libc, another
    OS) the trim is skipped, and with ``ADAPTER_NO_MALLOC_TRIM=1`` (the behaviour before).

    Python's cyclic garbage collector is paused while MindSpore compiles (:func:`_collector_paused`).
    """
    from adapter.graph_semantics import graph_mode
    parse_as_construct(cell)
    with _collector_paused(), graph_mode():
        cell.compile(*args)
    cell._adapter_compiled = True
    _trim_heap()


@contextlib.contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off inside the block, then one collection of the youngest generation (what
    the block made and left alive: its reference cycles are freed here, before :func:`compile_and_trim`'s trim).

    MindSpore's graph compiler runs its parser in Python (``inspect.getsource``, ``tokenize``, ``ast``, asttokens,
    the resolver): tens of thousands of short-lived objects per compile, which set off the collector's automatic
    collections over and over, each walking the young objects still alive, and now and then a full one, which walks
    every object of MindSpore, MindTorch and the model. Measured with ``bench/first_step_phases.py`` (2026-11-26,
    this 2-core machine, loaded, 3 runs each): a ResNet18 step's compile ran 79 young, 7 middle and 1 full
    collection, 0.18-0.41 s wall, where paused the one collection after it took 0.019-0.028 s; ResNet50's ran 81
    young and 8 middle ones (its full collection fell in the reference step), 0.024-0.033 s, and paused 0.032 s.
    So what the first step saves is a full collection when one falls in the compile: deferred, it runs once later,
    when the collector's own thresholds call for it. Same losses to the bit, same peak RSS (ResNet18 1073 MB,
    ResNet50 1560 MB). Leaves the collector off when the script turned it off (``gc.disable()``)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(0)


def parse_as_construct(cell) -> List[str]:
    """Make MindSpore's parser read ``construct`` again for ``cell`` and every Cell under it (the fused optimizer);
    returns the names of the Cells it reset (their types' names, for tests).

    Calling a Cell's ``@jit`` method from PyNative (``mindspore/common/api.py``, ``_MindsporeFunctionExecutor.compile``:
    ``self.obj.__parse_method__ = method_name``) leaves that method's name on the Cell, and the graph parser
    parses the method named there when a graph calls the Cell. MindTorch's optimizers are Cells whose update is
    ``@jit implementation``: one eager ``optimizer.step()`` (a step compiled without the optimizer because a
    parameter had no gradient, b frozen in the optimizer and unfrozen later; the update that the eager bridge runs)
    and every later graph fusing ``optimizer(grads)`` parsed ``implementation(momentum, lr, group_id, ...)`` for it:
    "The parameters number of the function is 8, but the number of provided arguments is 1", and the step fell
    back to PyNative for the rest of the run. MindSpore resets it only for the top Cell it compiles
    (``_CellGraphExecutor.compile``: ``obj.__parse_method__ = 'construct'``)."""
    reset = []
    for _, sub in cell.cells_and_names():
        method = sub.__dict__.get("__parse_method__")
        if method is not None and method != "construct":
            sub.__parse_method__ = "construct"
            reset.append(type(sub).__name__)
    return reset


def _trim_heap() -> bool:
    """Hand the C heap's free pages back to the system (``adapter/allocator.py`` ``release_free_memory``: glibc's
    ``malloc_trim(0)``, or jemalloc's arena purge where run.py preloaded it; a glibc trim does nothing for a heap
    jemalloc serves). Returns whether it ran: not with ``ADAPTER_NO_MALLOC_TRIM=1``, nor where neither allocator
    is found."""
    global _heap_trims
    if os.environ.get("ADAPTER_NO_MALLOC_TRIM") == "1":
        return False
    if allocator.release_free_memory() is None:
        return False
    _heap_trims += 1
    return True


class _HeapTrimmer:
    """Calls :func:`_trim_heap` each time ``every`` bytes of host arrays have been made and dropped (:meth:`add`).

    The compile cache's check (``_ReferenceRecord``, ``SiteRuntime._verify_loaded``) goes over the model's state one
    tensor at a time, making and dropping host arrays of each tensor's size. glibc serves them from its heap once a
    freed one has raised its mmap threshold (dynamic, up to 32 MB), and a heap only shrinks from its top: measured
    on ResNet50 + Adam (batch 32), each pass over the state left ~100 MB of free heap resident, and the pass over
    the gradients does so while the loaded graph's memory is held (peak RSS 1695 vs 1565 MB after it)."""

    def __init__(self, every: int = 32 * 2 ** 20):
        self.every = every
        self.made = 0

    def add(self, nbytes: int) -> None:
        self.made += int(nbytes)
        if self.made >= self.every:
            self.made = 0
            _trim_heap()


_log = diagnostics.log  # "run.py: message" on stderr


def next_key() -> int:
    """The number the next rewritten file's first site gets (site numbers are unique in the process)."""
    return max(_sites, default=-1) + 1


def register(sites: List[StepSite], user_globals: dict) -> None:
    """Make ``sites`` callable from the rewritten module whose namespace is ``user_globals``."""
    for site in sites:
        if site.key in _sites:
            raise ValueError(f"step site {site.key} registered twice")
        _sites[site.key] = SiteRuntime(site, user_globals)
    user_globals["__adapter_step__"] = step
    user_globals["__adapter_optimizer_step__"] = optimizer_step
    user_globals["__adapter_clip_grad_norm__"] = clip_grad_norm
    user_globals["__adapter_unscale__"] = unscale
    user_globals["__adapter_unrecorded__"] = tape.unrecorded
    user_globals["__adapter_in_order__"] = in_order


def step(key: int, env: dict, optimizer=None, clip_args=None, scaler=None, after=None):
    """Called by the rewritten script in place of the forward region + ``backward()``; returns the region's names.
    ``scaler``: the GradScaler of ``scaler.scale(loss).backward()``, or None. ``after``: a thunk giving the values
    of ``StepSite.after_reads`` (the names that the region's statements moved after the site call read), or None."""
    return _sites[key].run(env, optimizer, clip_args, scaler, after)


def _changes_in_a_forward(value) -> bool:
    """Whether a forward may change ``value`` in place: not a trainable Parameter (an optimizer changes those, not a
    forward), a Python number, string, bool or None, nor a module without buffers. A buffer (BatchNorm's
    ``running_mean``), another tensor, a module with buffers, or any other object may be."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return False
    if isinstance(value, ms.Parameter):
        return not value.requires_grad
    buffers = getattr(value, "buffers", None)
    if callable(buffers) and hasattr(value, "parameters"):
        try:
            return any(True for _ in buffers())
        except Exception:  # noqa: BLE001 -- not a module after all
            return True
    return True


def _holds_grads(value) -> bool:
    """Whether ``value`` reaches a parameter (so a ``.grad`` the step's backward() changes): a Parameter, a module
    with parameters, an optimizer, or a list, tuple or dict holding one (first ``_MAX_SCAN`` items)."""
    if isinstance(value, ms.Parameter):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_grads(v) for v in value[:_MAX_SCAN])
    if isinstance(value, dict):
        return any(_holds_grads(v) for v in list(value.values())[:_MAX_SCAN])
    if isinstance(value, types.ModuleType) or callable(value) and not hasattr(value, "parameters"):
        return False
    if hasattr(value, "param_groups"):
        return True
    parameters = getattr(value, "parameters", None)
    if callable(parameters):
        try:
            return any(True for _ in parameters())
        except Exception:  # noqa: BLE001 -- not a module after all
            return False
    return False


def in_order(key: int, watched, grad_watched=None) -> bool:
    """Called before a site whose statements moved after the site call read objects that a later statement of the
    region may change (``StepSite.watched``, ``adapter/step_rewrite.py``): ``m = net[1].running_mean.clone()``
    between ``o1 = net(x1)`` and ``o2 = net(x2)`` (the second forward updates the statistics). ``watched`` is a thunk
    giving those objects. True (the script's statements run as written, the step on the eager bridge, so ``m`` holds
    the statistics after the first forward, as in PyTorch) when one may change in a forward
    (:func:`_changes_in_a_forward`) or the thunk fails; False (the rewritten site runs) otherwise (``z =
    lin.weight * 1.0``: a trainable Parameter). ``grad_watched`` (``StepSite.grad_watched``): a thunk giving the
    values that moved statements hand to calls of unknown effect; True as well when one reaches a parameter
    (:func:`_holds_grads`: ``n = grad_norm(model)`` may read the ``.grad`` backward() changes). Said once per site
    (stderr)."""
    runtime = _sites[key]
    try:
        values = watched()
        handed = grad_watched() if grad_watched is not None else ()
    except Exception:  # noqa: BLE001 -- a name not bound yet: run the script as written
        values = handed = None
    state = values is None or any(_changes_in_a_forward(v) for v in values)
    grads = handed is None or any(_holds_grads(v) for v in handed)
    if (state or grads) and not getattr(runtime, "_in_order_logged", False):
        runtime._in_order_logged = True
        what = (f"read {', '.join(runtime.site.watched)}, which a later call of the step may change"
                if state and runtime.site.watched else
                f"hand {', '.join(runtime.site.grad_watched)} to a call that may read its .grad before backward()")
        _log(f"the step at {runtime.where} runs eagerly, its statements in the script's order: they {what}")
    return state or grads


def unscale(key: int, user_call):
    """Called in place of ``scaler.unscale_(optimizer)`` between a site and its ``scaler.step()``: nothing to do when
    the step was fused (the graph unscaled), else the user's call."""
    if _sites[key].fused_last:
        return None
    return user_call()


def clip_grad_norm(key: int, user_call):
    """Called in place of a ``clip_grad_norm_(...)`` between a site and its ``step()``: the total norm the graph
    computed when the step was fused (the grads in ``.grad`` are already clipped), else the user's call."""
    runtime = _sites[key]
    if runtime.fused_last and runtime.total_norm is not None:
        return runtime.total_norm
    return user_call()


def optimizer_step(key: int, optimizer, scaler=None) -> None:
    """Called in place of ``optimizer.step()`` (or ``scaler.step(optimizer)``) right after a site: nothing to do when
    the step was fused."""
    runtime = _sites[key]
    if runtime.fused_last:  # the graph did the update ("step_begin" is not emitted: the grads are inside it)
        runtime.fused_last = False
        after = getattr(optimizer, "_adapter_after_update", None)  # patches/optimizer.py: a late first update
        if after is not None:
            after()
        events.emit("step_end", optimizer)
        return
    update = optimizer.step if scaler is None else functools.partial(scaler.step, optimizer)
    if runtime.kind == "eager" and runtime.reason is None and _mode != "pynative":
        # The reference step of a site that will be compiled with this optimizer inside: run the update without
        # calling the optimizer's @jit `implementation` from PyNative (its undecorated function computes the same
        # update). A PyNative call of it leaves `__parse_method__ = 'implementation'` on the optimizer, which broke
        # every later graph calling the optimizer ("The parameters number of the function is 9, but the number of
        # provided arguments is 1"); parse_as_construct (compile_and_trim) now resets that before every compile,
        # so an eager update elsewhere (a step compiled without the optimizer) no longer breaks them either.
        with _undecorated_implementation(optimizer):
            update()
        return
    update()


class _undecorated_implementation:
    def __init__(self, optimizer):
        self.optimizer = optimizer
        fn = getattr(type(optimizer), "implementation", None)
        self.plain = getattr(fn, "__wrapped__", None)

    def __enter__(self):
        if self.plain is not None:
            object.__setattr__(self.optimizer, "implementation", types.MethodType(self.plain, self.optimizer))

    def __exit__(self, *exc):
        if self.plain is not None:
            object.__delattr__(self.optimizer, "implementation")


# other compiled paths' ``--explain`` entries (``adapter/compiled_forward.py`` adds its no_grad forwards when
# imported: it builds on this module, so this module does not import it)
_explain_sources: List = []


def add_explain_source(entries) -> None:
    """Count ``entries()`` (a list of ``adapter.diagnostics.ForwardExplain``, one per compiled or eager path) in
    :func:`steps_run`, :func:`explain_output` and :func:`explain_lines`."""
    if entries not in _explain_sources:
        _explain_sources.append(entries)


def _other_entries() -> list:
    return [entry for source in _explain_sources for entry in source()]


def steps_run() -> int:
    """Calls of rewritten step sites and compiled no_grad forwards in this process (0: it ran no training itself)."""
    return sum(runtime.calls for runtime in _sites.values()) + len(_other_entries())


def explain_output(process: str = "") -> "diagnostics.ExplainOutput":
    """What ``--explain`` says about this process, as data: every step site and compiled ``no_grad`` forward, the
    fallbacks recorded, the compile cache's line (``adapter.diagnostics.ExplainOutput``; ``process``: which process
    of a data-parallel job, ``adapter.distributed.process_label``)."""
    steps = [runtime.explain_entry() for runtime in _sites.values()]
    # the sites of one backward() (adapter/step_rewrite.py, "Branches"): the branches not taken are not listed
    called = {e.where for e in steps if e.calls}
    seen: set = set()
    steps = [e for e in steps if e.calls or (e.where not in called and not (e.where in seen or seen.add(e.where)))]
    forwards = _other_entries()
    return diagnostics.ExplainOutput(process, _mode, steps, forwards, diagnostics.records(),
                                     compile_cache.explain_line() if steps or forwards else None)


def explain_lines() -> List[str]:
    """``--explain``'s lines of the sites and forwards, and the compile cache's (:func:`explain_output`)."""
    output = explain_output()
    lines = [s.format() for s in output.steps] + [f.format() for f in output.forwards]
    return lines + ([output.compile_cache] if lines and output.compile_cache else [])
