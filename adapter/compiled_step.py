"""The compiled step: a rewritten ``backward()`` site (``adapter/step_rewrite.py``) run in MindSpore graph mode.

This module runs a site's calls and holds what ``--explain`` says of them; each phase of a call has its module:

1. **binding selection** (``adapter/step_binding.py``): which objects the call reads (its *binding*: the identity
   of the site's non-tensor inputs and of the modules and parameters they reach). The first call with a binding
   runs eagerly through the tape (``adapter/tape.py``): it is the reference step, and it tells which parameters take
   part (those get gradients). k-fold cross-validation, a sweep or a replaced head each get their own reference step
   and graphs; a site whose objects are new at every call runs eagerly.
2. **graph build** (``adapter/step_graph.py``): later calls build, once per binding and optimizer (and again only if
   a non-tensor input changes, or, fused, the optimizer's hyper-parameters other than the lr),
   ``forward_fn(tensors...) -> (loss, *outputs)`` from the region's source, and compile it as one Cell
   (``adapter/graph_compile.py``):

   * fused: ``value_and_grad(forward_fn, None, weights, has_aux=True)`` followed by ``optimizer(grads)`` in one graph
     (with ``clip_grad_norm_`` between them when the script clips there, norm 2 or inf), when ``optimizer.step()``
     follows ``backward()``, the optimizer updates only parameters that got a gradient, and no ``.grad`` is pending
     (no accumulation);
   * otherwise: the compiled ``value_and_grad`` alone; gradients are accumulated into ``.grad`` and the user's code
     (clipping, accumulation, ``step()``) continues eagerly.
3. **cache check** (``adapter/step_cache_check.py``): a graph loaded from the compile cache runs only once checked
   against its binding's reference step.
4. **run / fallback** (here, :class:`SiteRuntime`): the graph runs; ``p.grad`` holds the step's gradients
   afterwards, and the region's names (``outputs``, ``loss``) are handed back as MindTorch tensors, with their values
   from before the update, as in PyTorch: the graph copies them and updates the weights after computing them
   (``_StepCell.construct``), and a step is not fused when the region's statements that run after the site call read
   a weight (``StepBuilder.after_reads_weights``). A name bound to a parameter itself (``u = w``, ``p =
   self.weight``) gets that parameter (``d = w.data``: a tensor over its storage, patches/parameter_data.py)
   (:meth:`SiteRuntime._handed_back`), so it shows the update as in PyTorch. Known difference: a view of a parameter
   (``w.reshape(3)``, ``w.t()``, ``w[0]``) gets a copy from before the update, where PyTorch's shares the
   parameter's storage; so does eager MindTorch, whose view ops share no storage (tests/test_output_alias.py).
   If compilation fails, the site falls back to the eager bridge for good, after printing once the user's
   ``file:line`` and MindSpore's reason (``--mode graph`` raises instead); unless the call raises eagerly too (the
   script's own error in the forward, for this batch: PyTorch raises it), which leaves the site compiled
   (tests/test_exception_recovery.py). Every decision to run eagerly goes through one call, ``adapter/fallback.py``'s
   ``run_eagerly``, which records its kind (``adapter/diagnostics.py``: the registry of kinds, which ``--explain``,
   ``--explain-json`` and ``--report`` share; :func:`explain_output`).

``mindspore.jit`` caches one graph per input signature, so a smaller last batch compiles once.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import os
import statistics
import time
import types
from typing import Dict, List, Optional

import mindspore as ms

from adapter import (amp_state, backward_through, compile_cache, diagnostics, events, grad_sync, hooks, host_values,
                     provenance, tape)
from adapter.diagnostics import short_reason  # noqa: F401 -- re-exported: it lived here (tests import it)
# set_mode, get_mode, MODES, GraphModeError, Uncompilable: re-exported (the run mode and the errors were here)
from adapter.fallback import (MODES, GraphModeError, Uncompilable, describe, get_mode,  # noqa: F401
                              run_eagerly, set_mode)
from adapter.graph_compile import compile_and_trim
from adapter.graph_semantics import HostRandomDraw, locate_host_draws, random_draws, run_cell
from adapter.step_binding import _MAX_SCAN, Bindings, _Binding, _is_tensor, _to_adapter, hooked
from adapter.step_cache_check import check_graph, reference_record
from adapter.step_graph import GENERATED_TO_USER, _MADE_BY, StepBuilder, _graph_input  # noqa: F401
from adapter.step_rewrite import StepSite
from adapter.userframe import display_path

_sites: Dict[int, "SiteRuntime"] = {}
_SAID = "the training step runs in PyNative (eager), not compiled"  # the line a fallback prints, after its file:line


# the reasons of sites that run eagerly without a fallback of their own (SiteRuntime._eager_state)
_PYNATIVE = "--mode pynative"
_HOOKS_REASON = ("forward hooks registered on a module the step calls run in PyNative only (a graph calls submodules "
                 "without their hooks); the step compiles once they are removed")
_BUILT_BEFORE = "the loss is built from module calls made before the step's statements (outside the region; the " \
                "eager bridge differentiates their recording)"


class _LearnRecomputes(Exception):
    """A site's inputs hold tensors made by a model in an earlier step, and no eager step of the site has shown yet
    whether the region recomputes them (``SiteRuntime._recomputations``): this call runs eagerly and shows it."""


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


class SiteRuntime:
    """Run-time state of one step site: the eager reference step, the compiled graphs, the fallback reason.

    Its phases: ``bindings`` (``adapter/step_binding.py``), ``graph`` (``adapter/step_graph.py``: the site's
    ``forward_fn`` and step Cells), the compile cache's check (``adapter/step_cache_check.py``); this class runs
    them (:meth:`run`) and decides when the site runs eagerly (:meth:`_fall_back`, :meth:`_decide_eager`,
    :meth:`_record_eager_state`: each through ``adapter.fallback.run_eagerly``).
    """

    def __init__(self, site: StepSite, user_globals: dict):
        self.site = site
        self.user_globals = user_globals  # the namespace of the module the site is in
        self.graph = StepBuilder(site, user_globals)
        self.bindings = Bindings()
        self.calls = 0
        self.weights: Optional[List] = None
        self.modules: List = []  # the modules that ran in the reference step (their buffers: the cached graph's)
        self.made_by_modules: List = []  # outputs made by a module call, as the reference step showed (provenance)
        self.reason: Optional[str] = None  # why this site runs eagerly, once decided (set by _decide_eager)
        self.fallback_kind: Optional[str] = None  # its adapter.diagnostics kind
        self._recorded_states: set = set()  # kinds of _eager_state recorded (once each)
        self.fused_last = False
        self.graph_ran = False  # the current call's graph has run (its update happened)
        self.recorded_before = False  # a later call found the recording open (modules ran before the region)
        self.opened_at: Optional[str] = None  # the user's file:line of the module call that had opened it
        self.opened_by_read: Optional[str] = None  # or of a statement before the region reading a Parameter
        # (record_from)
        self.kind = "eager"  # what the last call did: eager, compiled, fused
        self.first_compiled_s: Optional[float] = None
        self.total_norm = None  # the fused clip_grad_norm_'s result of the last call
        self.step_s: List[float] = []
        self._eager_fn = None
        self._chains: Optional[Dict[str, List[str]]] = None  # name -> the chain it is bound to (_handed_back)
        self.recomputes: Dict[str, bool] = {}  # input name -> an eager step recomputed it (_recomputations)
        self.numbers = host_values.Numbers(site.host_values, site.counters)  # numbers passed as tensor inputs (adapter/host_values.py)
        # backward through a call (site.through; adapter/backward_through.py)
        self.through_scaler = None  # the GradScaler whose scale(loss) the call's backward() was of (reference step)
        self.through_seen = False  # a first call showed the call's backward() of the loss (through_done)
        self.not_a_step = False  # the reference step's call ran no backward() of the loss: the region only runs
        self._pending = None  # a compiled call's gradients, until the call's backward() of the loss takes them
        self._awaiting = None  # an eager call: what its backward() must finish (_after_eager_backward, reference)
        self._awaiting_reference = False
        self._finish_reference = None
        self._recording_before = False  # the recording was open when the site's call began (through_done)

    @property
    def where(self) -> str:
        return f"{display_path(self.site.filename)}:{self.site.lineno}"

    # -- eager -------------------------------------------------------------------------------------------------
    def _eager(self, env: dict, scaler=None, reference: bool = False):
        names = self.site.free_names
        if self._eager_fn is None:  # every free name is a parameter: one function serves all calls
            self._eager_fn = self.graph.forward_fn(env, names)[0]
        # record from the first statement; a site whose backward() runs in a call of the script's records as the
        # script would (the call may run no backward() at all: nothing must stay open then)
        opened = not self.site.through and not tape.is_recording() and tape.begin(("site", self.site.key))
        quiet = tape.unrecorded() if self.not_a_step and self.site.value_only else contextlib.nullcontext()
        foreign = [(n, provenance.flat_tensors(env[n])) for n, _ in provenance.foreign_inputs(env)]
        try:
            with provenance.observe() as recomputed, quiet:
                result = self._eager_fn(*[env[n] for n in names])
        except BaseException:
            if opened:
                tape.discard()
            raise
        for name, tensors in foreign:  # what the graph must recompute (_recomputations)
            self.recomputes[name] = self.recomputes.get(name, False) or any(id(t) in recomputed for t in tensors)
        loss = result[0]
        self._last_loss = loss  # the reference record's (_reference)
        self.kind = "eager"
        if self.site.through:  # the script's call runs backward() next: through_after_backward finishes there
            self._awaiting = None if self.not_a_step else functools.partial(self._after_eager_backward, env)
            self._awaiting_reference = reference
        else:
            (loss if scaler is None else scaler.scale(loss)).backward()
            self._after_eager_backward(env)
        outputs = self._outputs(loss, result[1:])
        if reference or self.calls == 1:
            self.made_by_modules = provenance.learn_site_outputs(dict(zip(self.site.outputs, outputs)), env)
        return outputs


    def _after_eager_backward(self, env: dict) -> None:
        """What an eager step learns once its backward() ran: the parameters and modules that took part."""
        self.weights = list(tape.last_params())
        self.modules = tape.last_modules()
        if self.reason is None and (tape.last_leaves() or any(tape.is_leaf_tensor(env[n])
                                                                for n in self.site.free_names)):
            # the graph differentiates Parameters only: a tensor made with requires_grad=True would get no .grad
            self._decide_eager("non-parameter-leaf", "the loss depends on a tensor with requires_grad=True that is "
                               "not an nn.Parameter (its .grad is computed in PyNative only)")

    # -- backward through a call (adapter/backward_through.py) --------------------------------------------------
    def through_backward(self, ctx, how, tensor, gradient) -> bool:
        """A backward() inside the script's call (``ctx``) of the loss (``how`` None), of ``<scaler>.scale(loss)``
        (``how`` the scaler) or of another tensor (``backward_through.OTHER``). A compiled call's gradients go into
        ``.grad`` when it is the backward() the graph computed (the loss, scaled by the scaler and scale the graph
        used): True. An eager call's backward() runs on the eager bridge: False.

        Raises:
            tape.TapeError: a compiled call's loss reaches another backward() than its reference step's (another
                tensor made from it, another scaler or scale, a ``gradient=``): its gradients were computed for
                that one only, and the forward ran in the graph (nothing to differentiate again)."""
        pending = self._pending
        if pending is None:
            return False
        weights, grads, reduce_mask, scaler, scale = pending
        same = how is not backward_through.OTHER and how is scaler and gradient is None and (
            scaler is None or float(scaler.get_scale()) == scale)
        if not same:
            from adapter.userframe import user_location
            self._pending = None
            raise tape.TapeError(
                f"backward() at {user_location(3)}: the compiled step at {self.where} computed the gradients of "
                f"`{ast.unparse(self.site.loss)}`" + (" scaled by its GradScaler" if scaler is not None else "") +
                ", as its reference step's backward() was; this backward() is of another tensor or scale. Run with "
                "--mode pynative")
        self._pending = None
        events.emit("backward", tensor)
        tape.accumulate(weights, grads)
        grad_sync.after_backward(weights, reduce_mask)
        return True

    def through_after_backward(self, ctx, how) -> None:
        """An eager backward() inside the script's call ran: when it was of the loss (or of a scaler's scale of it),
        finish the eager step (its parameters and modules, and the reference step's record and binding)."""
        if self._awaiting is None or how is backward_through.OTHER:
            return
        finish, self._awaiting = self._awaiting, None
        finish()
        finish_reference, self._finish_reference = self._finish_reference, None
        if finish_reference is not None:
            finish_reference()

    def through_done(self, ctx, failed: bool) -> None:
        """The script's call returned (or raised: ``failed``). A compiled call's gradients that no backward() took
        are dropped (PyTorch would have none either). After the site's first call (run as the script does, watched)
        learn what the compiled calls must match: exactly one backward(), of the loss or of a GradScaler's
        ``scale(loss)`` (:attr:`through_seen`); none makes the site a region that only runs (:attr:`not_a_step`: not
        listed by ``--explain``); anything else makes it run eagerly. A reference step must show the same again."""
        self._pending = None
        reference, self._awaiting_reference = self._awaiting_reference, False
        unfinished = self._awaiting is not None
        self._awaiting = None
        unused, self._finish_reference = self._finish_reference, None
        if unused is not None and getattr(unused, "record", None) is not None:
            unused.record.close()  # the reference step's state copy: no backward() of the loss finished it
        first = not self.through_seen and not self.not_a_step
        if failed or not (reference or first) or self.reason is not None:
            return
        seen = ctx.seen
        if first and not seen and unfinished:
            self.not_a_step = True  # e.g. `tracker(val)`: the call ran no backward(): not a training step
            self.bindings.clear()
            if self.site.value_only and tape.is_recording() and not self._recording_before:
                tape.discard()  # the region's values reach no backward(): the recording it opened goes
            return
        if len(seen) == 1 and (seen[0] is None or isinstance(seen[0], amp_state.LossScaler)) and not unfinished \
                and (first or seen[0] is self.through_scaler):
            self.through_seen = True
            self.through_scaler = seen[0]
            return
        what = ("several backward() calls" if len(seen) > 1 else "no backward() this time" if not seen else
                f"a backward() of another tensor than `{ast.unparse(self.site.loss)}` or a GradScaler's scale() of it"
                if seen[0] is backward_through.OTHER else "a backward() of another GradScaler's scale() of it")
        self._decide_eager("backward-call-unrecognised", f"the call the loss is handed to ran {what}")

    # -- bindings (adapter/step_binding.py) ----------------------------------------------------------------------
    def _use(self, binding: _Binding) -> None:
        self.weights = binding.weights
        self.modules = binding.modules
        self.made_by_modules = binding.made_by_modules

    def _reference(self, env: dict, scaler, new, optimizer=None) -> tuple:
        """The eager reference step of a binding not seen yet (``new``: ``(key, objects, reached)`` from
        ``Bindings.select``); keeps it (``Bindings.keep``). Returns the region's values.

        When the compile cache holds graphs this run has not loaded yet (``adapter/compile_cache.py``), also keeps
        what the check of a loaded graph compares it with (``adapter/step_cache_check.py``, ``reference_record``)."""
        gate = compile_cache.gate()
        record = reference_record(env, new[2], optimizer, scaler)
        # a step that draws random numbers cannot be checked against this step: adapter/compile_cache.py compiles it
        # outside the cache, and the first-graph check (step_cache_check.check_graph) leaves it alone
        with (random_draws() if gate is not None or record is not None else contextlib.nullcontext([])) as draws:
            outputs = self._eager(env, scaler, reference=True)

        def finish(record=record):
            if record is not None and draws:
                record.close()
                record = None  # nothing to check a step that draws random numbers against: its state copy goes now
            if record is not None:
                record.finish(self._last_loss, self.weights, self.modules)
                record.calls_at = _site_calls()
            binding = self.bindings.keep(new, self.weights, self.modules, self.made_by_modules)
            binding.check = record
            binding.random = list(draws)

        if self.site.through and self._awaiting is not None:
            self._finish_reference = finish  # once the script's call ran backward() (through_after_backward)
            finish.record = record  # closed by through_done when the call runs no backward() of the loss
        elif not self.site.through:
            finish()
        elif record is not None:
            record.close()
        return outputs

    def _outputs(self, loss, returned) -> tuple:
        """The values of ``site.outputs``, in order, from forward_fn's ``loss`` and ``returned`` values
        (``StepBuilder.returned``)."""
        named = dict(zip(self.graph.returned, returned))
        if isinstance(self.site.loss, ast.Name):
            named[self.site.loss.id] = loss
        return tuple(named[n] for n in self.site.outputs)

    # -- compiled -----------------------------------------------------------------------------------------------
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
        graph = self.graph
        graph.python_objects(env)
        env = self.numbers.convert(env)  # host values and changing numbers: 0-d tensor inputs, never constants
        env, prologue, made_by_buffers = self._recomputations(env)
        scaled = scaler is not None and scaler.is_enabled()
        fused = graph.can_fuse(optimizer, self.weights) and not graph.after_reads_weights(after, self.weights)
        clip = graph.clip_spec(clip_args, self.weights) if fused and clip_args is not None else None
        if clip_args is not None and clip is None:
            fused = False  # a clip the graph does not do (norm type): clip and step eagerly, after the grads
        # DDP: which weights the graph averages over the workers (None: no DDP, or under no_sync())
        reduce_mask = grad_sync.prepare_step(self.weights)
        regions = graph.regions(env)
        binding = self.bindings.current

        def build():
            return graph.build(env, binding, optimizer, fused, clip, scaled, regions, reduce_mask, prologue)

        fn, tensor_names = build()
        draws = binding.random
        exempt = (f"it draws random numbers ({', '.join(draws[:3])}{' ...' if len(draws) > 3 else ''})"
                  if draws else "its host values change every step" if self.numbers.in_use else
                  "its inputs are recomputed in the graph" if prologue else
                  "a GradScaler scales its loss" if scaled else
                  "DDP averages its gradients in the graph" if reduce_mask else None)
        gate = compile_cache.gate()
        start = time.perf_counter()  # a new graph's check compiles it (step_cache_check.check_graph): counted
        fn, tensor_names, cached, unchecked = check_graph(fn, tensor_names, binding, fused, clip, self.where, exempt,
                                                          build, env,
                                                          _site_calls() if binding.check is not None else None)
        # the scale as a fresh 0-d tensor: passing the scaler's Parameter itself made every step ~0.1 s slower
        # (ResNet18 on CPU, measured)
        args = ([ms.Tensor(scaler.get_scale(), ms.float32)] if scaled else []) + [_graph_input(env[n])
                                                                                   for n in tensor_names]
        saved = [(b, ms.Tensor.copy(b)) for b in made_by_buffers]  # the real forward already moved them: once
        if not hooks.get(fn, "compiled", False):  # a new graph: compile it, give back the compiler's garbage
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
        if self.site.through:  # the script's call's backward() takes them (through_backward)
            self._pending = (self.weights, grads, reduce_mask, scaler if scaled else None,
                             float(args[0].asnumpy()) if scaled else None)
        else:
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

    # -- run / fallback -------------------------------------------------------------------------------------------
    def run(self, env: dict, optimizer=None, clip_args=None, scaler=None, after=None):
        self.calls += 1
        self.fused_last = False
        self._pending = None
        if self.site.through:
            self._recording_before = tape.is_recording()
            if self.not_a_step or (not self.through_seen and self.reason is None):
                # the first call runs as the script does, only watched: does the call run backward() of the loss?
                # (a call that runs none costs nothing more: no reference step, no state copy)
                self._awaiting_reference = False
                return self._eager(env)
            scaler = self.through_scaler  # what the reference step's backward() was of (through_done)
        if self.site.host_values:
            host_values.check(self.site, env, self.where)
        if scaler is not None and self.reason is None:
            if not isinstance(scaler, amp_state.LossScaler):
                self._decide_eager("custom-grad-scaler", f"{type(scaler).__name__}.scale(loss) is not torch's "
                                                         "GradScaler")
        if get_mode() == "pynative" or self.reason is not None or tape.is_recording():
            if self.calls > 1 and tape.is_recording():
                self.recorded_before = True  # for explain(): not a compile failure, and not "not compiled yet"
                if self.opened_at is None and tape.opened_at() is not None:
                    filename, line = tape.opened_at()
                    self.opened_at = f"{display_path(filename)}:{line}"
            self._record_eager_state()
            return self._eager(env, scaler)
        try:  # host values (numbers, numpy arrays) are graph inputs, not objects that key a binding
            new = self.bindings.select({n: v for n, v in env.items() if n not in self.site.host_values}
                                       if self.site.host_values else env)
        except Uncompilable as exc:
            return self._fall_back(exc, env, scaler)
        if new is not None:  # the first call, or the first with these objects: the eager reference step
            return self._reference(env, scaler, new, optimizer)
        self._use(self.bindings.current)
        if hooked(self.modules):  # forward hooks: a graph would not run them (kind module-hooks); eager while they are
            if "module-hooks" not in self._recorded_states:
                self._recorded_states.add("module-hooks")
                run_eagerly(self.where, kind="module-hooks", reason=_HOOKS_REASON, said=_SAID)
            return self._eager(env, scaler)
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
        (``--mode graph``: raise :class:`GraphModeError`), through ``adapter.fallback.run_eagerly``; run this call
        eagerly. A draw on the host that stopped the compile (:class:`HostRandomDraw`) is named at the user's line,
        found while this eager call runs, and only then recorded."""
        if get_mode() != "graph" and not isinstance(exc, (HostRandomDraw, Uncompilable)):
            # the compile may have stopped at the script's own error (a forward that raises for this batch: a shape
            # check, a simulated out-of-memory error): the step runs eagerly first, and when it raises too, PyTorch
            # raises that error here; the site stays compiled for its other calls (a skipped or retried batch)
            result = self._eager(env, scaler)
            self.fallback_kind, self.reason = describe(exc, self.graph.generated_path, self.site.filename)
            self.bindings.clear()  # their graphs will not run again: let the models go
            run_eagerly(self.where, kind=self.fallback_kind, reason=self.reason, exc=exc, said=_SAID)
            return result
        self.fallback_kind, self.reason = describe(exc, self.graph.generated_path, self.site.filename)
        self.bindings.clear()  # their graphs will not run again: let the models go
        if not isinstance(exc, HostRandomDraw) or get_mode() == "graph":
            run_eagerly(self.where, kind=self.fallback_kind, reason=self.reason, exc=exc, said=_SAID)
            return self._eager(env, scaler)
        with locate_host_draws() as found:  # name the user's line of the draw: the eager step makes it
            result = self._eager(env, scaler)
        if found:
            self.reason = f"{', '.join(found[:3])}{' ...' if len(found) > 3 else ''} " \
                          f"draw{'s' if len(found) == 1 else ''} on the host, once per compile (" \
                          f"{'its value' if len(found) == 1 else 'their values'} would be a constant of " \
                          f"the graph): the step runs eagerly"
        run_eagerly(self.where, kind=self.fallback_kind, reason=self.reason, exc=exc, said=_SAID,
                    at=found[0].rpartition(" at ")[2] if found else None)
        return result

    def _eager_state(self):
        """``(kind, reason)`` of a site that runs eagerly without a reason of its own (``--mode pynative``, or a
        loss built before the region), or None."""
        if self.reason is not None:
            return None
        if get_mode() == "pynative":
            return "pynative-mode", _PYNATIVE
        if self.first_compiled_s is None and self.recorded_before:
            if self.opened_at is not None and self.opened_at == self.opened_by_read:
                return "loss-built-before-step", "the loss is built from statements that run before the step's " \
                    "region (it cannot start at them: a call or an in-place write between them and backward()); " \
                    f"the eager bridge's recording opens at {self.opened_at}, which reads a Parameter or a tensor " \
                    "that requires grad"
            if self.opened_at is not None:
                return "loss-built-before-step", f"{_BUILT_BEFORE}; the recording was opened by the module call at " \
                    f"{self.opened_at}, whose output (or a tensor made from it) may reach the loss"
            return "loss-built-before-step", _BUILT_BEFORE
        return None

    def _record_eager_state(self) -> None:
        """Record :meth:`_eager_state` once per kind per site (``adapter.fallback.run_eagerly``; not printed)."""
        state = self._eager_state()
        if state is not None and state[0] not in self._recorded_states:
            self._recorded_states.add(state[0])
            run_eagerly(self.where, kind=state[0], reason=state[1], at=self.opened_at)

    def _decide_eager(self, kind: str, reason: str) -> None:
        """This site runs eagerly from now on, for ``reason`` (an ``adapter.diagnostics`` ``kind``), decided
        without an exception; recorded (``adapter.fallback.run_eagerly``), and said by ``--explain`` (not printed at
        run time, as before)."""
        self.fallback_kind, self.reason = run_eagerly(self.where, kind=kind, reason=reason)

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
            entry.graphs = self.bindings.graphs()
            entry.model_sets = self.bindings.seen
            entry.first_compiled_s = self.first_compiled_s
            entry.median_step_s = statistics.median(self.step_s) if self.step_s else None
            entry.steps_timed = len(self.step_s)
            entry.host_inputs = self.numbers.described(self.site, display_path(self.site.filename))
        return entry

    def explain(self) -> str:
        """``--explain``'s line for this site."""
        return self.explain_entry().format()


_log = diagnostics.log  # "run.py: message" on stderr


def _site_calls() -> int:
    """Calls of every step site so far (the first-graph check runs only when no other site ran since the reference
    step: ``step_cache_check.check_graph``)."""
    return sum(runtime.calls for runtime in _sites.values())


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
    user_globals["__adapter_host_calls__"] = host_values.host_calls
    user_globals["__adapter_record_from__"] = record_from
    user_globals["__adapter_backward_through__"] = through_call


def step(key: int, env: dict, optimizer=None, clip_args=None, scaler=None, after=None, create_graph=False):
    """Called by the rewritten script in place of the forward region + ``backward()``; returns the region's names.
    ``scaler``: the GradScaler of ``scaler.scale(loss).backward()``, or None. ``after``: a thunk giving the values
    of ``StepSite.after_reads`` (the names that the region's statements moved after the site call read), or None.
    ``create_graph``: the value of ``backward(create_graph=<expr>)``'s expression.

    Raises:
        tape.TapeError: ``create_graph`` is true (as ``Tensor.backward`` does: patches/backward.py)."""
    if create_graph:
        raise tape.TapeError(f"backward() at {_sites[key].where}: create_graph=True and inputs=... are not "
                             "supported on MindSpore by this adapter; use torch.autograd-free code or "
                             "mindspore.grad for higher-order gradients.")
    return _sites[key].run(env, optimizer, clip_args, scaler, after)


def through_call(key: int, loss) -> "backward_through.Through":
    """``with __adapter_backward_through__(K, loss): <the script's call>``: the context in which that call's
    backward() of ``loss`` is served with site K's gradients (``adapter/backward_through.py``)."""
    return backward_through.Through(_sites[key], loss)


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


def record_from(key: int, values) -> None:
    """Called before the statements the loss of site ``key`` needs that run ahead of its region
    (``adapter/step_rewrite.py``, ``_record_from``); ``values``: ``(line, thunk)`` pairs, each thunk giving what the
    statement at that line reads (``w``, ``net.fc.weight``). When no recording is open and one of them holds a
    tensor that requires grad (a Parameter, a leaf made with ``requires_grad=True``), the eager bridge's recording
    opens here (in grad mode: ``tape.begin``), so that what those statements compute from it keeps its gradient; the
    site then runs eagerly (kind ``loss-built-before-step``, naming that line). A thunk that raises (a name not bound
    yet) is skipped. ~1 us a thunk."""
    if tape.is_recording():
        return
    for line, thunk in values:
        try:
            value = thunk()
        except Exception:  # noqa: BLE001 -- not bound yet, or an attribute that is not there: nothing to record
            continue
        if any(t.requires_grad for t in provenance.flat_tensors(value)):
            import sys
            code = sys._getframe(1).f_code
            if tape.begin((code, line)):  # not in grad mode (torch.no_grad()): opens none
                runtime = _sites[key]
                runtime.opened_by_read = f"{display_path(code.co_filename)}:{line}"
            return


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
        after = hooks.get(optimizer, "after_update")  # patches/optimizer.py: a late first update
        if after is not None:
            after()
        events.emit("step_end", optimizer)
        return
    update = optimizer.step if scaler is None else functools.partial(scaler.step, optimizer)
    if runtime.kind == "eager" and runtime.reason is None and get_mode() != "pynative":
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
    steps = [runtime.explain_entry() for runtime in _sites.values() if not runtime.not_a_step]
    # the sites of one backward() (adapter/step_rewrite.py, "Branches"): the branches not taken are not listed
    called = {e.where for e in steps if e.calls}
    seen: set = set()
    steps = [e for e in steps if e.calls or (e.where not in called and not (e.where in seen or seen.add(e.where)))]
    forwards = _other_entries()
    return diagnostics.ExplainOutput(process, get_mode(), steps, forwards, diagnostics.records(),
                                     compile_cache.explain_line() if steps or forwards else None)


def explain_lines() -> List[str]:
    """``--explain``'s lines of the sites and forwards, and the compile cache's (:func:`explain_output`)."""
    output = explain_output()
    lines = [s.format() for s in output.steps] + [f.format() for f in output.forwards]
    return lines + ([output.compile_cache] if lines and output.compile_cache else [])
