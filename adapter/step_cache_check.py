"""The graph check, a phase of the compiled step (``adapter/compiled_step.py``): a step graph runs only once checked
against the eager reference step of its binding, when it was loaded from MindSpore's compile cache
(``adapter/compile_cache.py``) and, for every binding, when it is the binding's first compiled graph (the first-graph
check: a graph that computes something else than the eager step, such as an in-place write the graph drops, would
train silently wrong; it is not used, kind ``graph-differs``).

* :func:`reference_record`: what the reference step keeps for the check (:class:`ReferenceRecord`: its inputs, the
  state before it, its loss and gradients);
* :func:`check_graph`: before a step graph first runs, whether it can be checked (else why not: it is compiled
  outside the cache), and the check (:func:`verify_loaded`); a loaded graph that does not match is dropped from the
  cache's folder and compiled anew; a compiled one that does not match raises ``Uncompilable`` (the site runs
  eagerly).

Not checked: steps that draw random numbers (the graph's draws differ from the reference step's), that a GradScaler
scales, whose host values change every step or whose inputs the graph recomputes, that DDP averages, whose first
graph is built for other numbers or objects than the reference step's call, and (first-graph check only) those
whose weights and optimizer state exceed :data:`_MAX_CHECKED_STATE`. Cost: a host copy of the state (in files) from
the reference step to the first compiled call, and one more run of the graph.
"""
from __future__ import annotations

import math
import os
from typing import Optional

import mindspore as ms

from adapter import compile_cache, diagnostics, graph_compile, tape
from adapter.fallback import Uncompilable
from adapter.graph_semantics import run_cell
from adapter.step_binding import _Binding
from adapter.step_graph import _graph_input

_log = diagnostics.log  # "run.py: message" on stderr


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


def _snapshot(value):
    """``value`` with each plain tensor in it (not a Parameter; through lists and tuples) copied."""
    if type(value) in (list, tuple):
        return type(value)(_snapshot(v) for v in value)
    if isinstance(value, ms.Tensor) and not isinstance(value, ms.Parameter):
        from mindtorch.torch.tensor import cast_to_adapter_tensor
        return cast_to_adapter_tensor(ms.Tensor(value.asnumpy().copy()))
    return value


class ReferenceRecord:
    """What a loaded graph is checked against (:func:`verify_loaded`): the reference step's inputs, the
    state before it, its loss and its gradients (``.grad`` after minus before, float32 numpy).

    The state and the gradients are kept in files (``compile_cache.SpilledArrays``), not in memory, from the
    reference step to the first compiled call: held in memory, the gradients alone were one more copy of the weights
    beside the graph's first run (ResNet50 + Adam, batch 32: a cached re-run peaked at 1718 MB RSS vs 1631 for the
    compiling run, ``bench/memory_phases.py --warm``). ``grad_sq`` / ``grad_absmax`` (per gradient: its sum of
    squares in float64 and its largest magnitude, 0 for a missing one) give the clip's total norm and the largest
    norm without reading them back."""

    def __init__(self, env: dict, state: _State, grads_before: dict):
        self.env = {n: _snapshot(v) for n, v in env.items()}  # an input written in place later keeps its value
        self.state = state
        self.grads_before = grads_before
        self.calls_at = None  # compiled_step: the site calls made so far, at the reference step (check_graph)
        self.stats_after: dict = {}  # id -> the BatchNorm statistics right after the reference step (numpy)
        self.loss = None
        self.grads = None  # compile_cache.SpilledArrays: index in the weights -> its gradient (absent: None)
        self.grad_sq: list = []
        self.grad_absmax: list = []

    def finish(self, loss, weights, modules=()) -> None:
        import numpy as np
        self.loss = float(loss.asnumpy())
        for p in tape.buffers(modules):  # what the reference step left in them, before anything else moves them
            self.stats_after[id(p)] = p.asnumpy().copy()
        self.grads = compile_cache.SpilledArrays()
        self.grad_sq, self.grad_absmax = [], []
        trimmer = graph_compile._HeapTrimmer()
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
        graph_compile._trim_heap()

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


def first_graph_check() -> bool:
    """Whether every binding's first compiled graph is checked against its eager reference step
    (:func:`check_graph`); ``ADAPTER_CHECK_FIRST_GRAPH=0`` turns it off."""
    return os.environ.get("ADAPTER_CHECK_FIRST_GRAPH", "1") != "0"


# the first-graph check keeps host copies of the state a step reaches (in files) from the reference step to the
# first compiled call; above this size (bytes) the binding is not checked (a graph loaded from the compile cache
# still is)
_MAX_CHECKED_STATE = 512 * 2 ** 20


def reference_record(env: dict, reached, optimizer, scaler) -> Optional[ReferenceRecord]:
    """What :func:`check_graph` checks a binding's first graph against, kept from its eager reference step when no
    GradScaler scales the loss, and either the compile cache holds graphs this run has not loaded yet or the
    first-graph check is on (:func:`first_graph_check`; state up to :data:`_MAX_CHECKED_STATE`): the state before
    the step (the parameters and buffers the objects reach, ``optimizer``'s own Parameters: its lrs and moments) and
    the inputs; the reference step adds its loss and gradients (:meth:`ReferenceRecord.finish`). Else None."""
    gate = compile_cache.gate()
    loads = gate is not None and gate.count < len(gate.manifest)
    if (not loads and not first_graph_check()) or (scaler is not None and scaler.is_enabled()):
        return None
    if not loads and _state_bytes(reached, optimizer) > _MAX_CHECKED_STATE:
        return None
    state = _reached_state(reached, optimizer)
    # getattr: the optimizer's own Parameters (MindSpore's lrs and moments) have no `grad` on MindSpore 2.10
    return ReferenceRecord(dict(env), state, {id(p): getattr(p, "grad", None) for p in state.params})


def _state_bytes(reached, optimizer) -> int:
    """The size of the weights among ``reached``, times 3 with an optimizer (room for two slots per weight, as
    Adam's moments; an upper estimate for SGD): what :func:`_reached_state` would copy, estimated without copying."""
    size = sum(int(v.nbytes) for v in reached if isinstance(v, ms.Parameter))
    return size * 3 if optimizer is not None else size


def check_graph(fn, tensor_names, binding: _Binding, fused: bool, clip, where: str, exempt: Optional[str],
                rebuild, env: Optional[dict] = None, calls: Optional[int] = None) -> tuple:
    """Before ``fn`` (a step Cell of ``binding``) first runs: check it against ``binding``'s reference step when the
    compile cache may load it (:func:`verify_loaded`), and let the record go.

    A compiled step is loaded only to be checked against the binding's eager reference step. One that cannot be
    checked in any run (``exempt``: why, e.g. it draws random numbers) is compiled outside the cache, in every run
    (``adapter/compile_cache.py`` ``_Gate._outside``), so that it costs no load and the other graphs keep their
    numbers. A loaded graph that does not match is excluded from the cache's folder, and ``rebuild()`` gives the
    step anew ``(fn, tensor_names)``.

    Returns ``(fn, tensor_names, cached, unchecked)``: ``cached``, whether the graph was loaded (and matched);
    ``unchecked``, why a graph the folder may hold could not be checked (the caller excludes it once it ran), or
    None."""
    gate = compile_cache.gate()
    cached = False
    unchecked = None
    checked = False
    first = not fn.compile_cache  # MindSpore's compiled phases of this Cell: none yet
    if gate is not None and first:
        fn.cache_exempt = exempt
        if fn.cache_exempt is None and gate.count < len(gate.manifest):
            # the folder holds graphs not loaded yet: this one may be among them
            check = binding.check
            if check is None or not check.covers(tensor_names):
                unchecked = fn.cache_exempt = "its eager reference step was not recorded for the check"
            elif not gate.expects_load(fn, [_graph_input(check.env[n]) for n in tensor_names]):
                pass  # the folder's next graph is another one: compiled below (the gate drops the folder). No
                # check run: running the graph on the reference step's batch and putting the state back changed
                # the 6th loss of tests/fixtures/module_calls.py by 1 ulp
            else:
                checked = True
                cached, mismatch = verify_loaded(fn, tensor_names, binding.weights, binding.modules, fused, clip,
                                                 check, where)
                if mismatch:
                    gate.exclude(fn, f"the step at {where} loaded from it does not match its eager "
                                     f"reference step ({mismatch})")
                    graphs = binding.graphs
                    for k in [k for k, v in graphs.items() if v is fn]:
                        del graphs[k]
                    fn, tensor_names = rebuild()
                    cached = False
    check = binding.check
    if first and not checked and exempt is None and check is not None and check.covers(tensor_names) \
            and first_graph_check() and _same_constants(check.env, env, tensor_names) \
            and check.calls_at is not None and calls == check.calls_at + 1:
        # (`calls`: the site calls made so far, this one included: no other site ran since the reference step, so
        # the state the check restores is all the step reads; a GAN's other sites move the shared discriminator)
        # the first-graph check: the new graph, run on the reference step's inputs from its starting state, must
        # give the reference step's loss, gradients, statistics and update. A graph that differs (a write the graph
        # dropped: `F.relu(t, inplace=True)` in a plain function whose caller reads `t` again) would train silently
        # wrong: the step runs eagerly instead (kind graph-differs)
        binding.check = None
        _, mismatch = verify_loaded(fn, tensor_names, binding.weights, binding.modules, fused, clip, check, where,
                                    compare=True)
        if mismatch:
            raise Uncompilable(f"its compiled graph differs from its eager reference step ({mismatch}): graph mode "
                               "computes something else than PyTorch's order of operations here", "graph-differs")
    if binding.check is not None:
        binding.check.close()
        binding.check = None  # the state copies go (ResNet50 + Adam: ~300 MB)
    return fn, tensor_names, cached, unchecked


def _same_constants(reference: dict, env: Optional[dict], tensor_names) -> bool:
    """Whether the graph built for ``env`` (its non-tensor inputs are constants of the graph: numbers by value,
    objects by identity) computes the reference step's call: the same numbers and objects in both."""
    if env is None:
        return False
    for name, value in env.items():
        if name in tensor_names:
            continue
        if name not in reference:
            return False
        ref = reference[name]
        if isinstance(value, (bool, int, float, complex, str)) or value is None:
            if type(ref) is not type(value) or ref != value:
                return False
        elif ref is not value:
            return False
    return True


def verify_loaded(fn, tensor_names, weights, modules, fused: bool, clip, check: ReferenceRecord,
                  where: str, compare: bool = False):
    """Run ``fn`` (its first call: MindSpore compiles it, or loads it from the compile cache) on the reference
    step's inputs from the reference step's starting state, then put back the current state. When the graph was
    loaded (``adapter/compile_cache.py``), compare it with the eager reference step: the loss (rtol 1e-4),
    the gradients (clipped like the graph when ``clip``; each tensor's error within 1e-3 of its norm plus 1e-6 of
    the largest), the BatchNorm statistics (each within 1e-2 of the step's change) and, when ``fused``, the
    updated weights (the error over all of them within half the update's norm). Tolerances: compiled and eager
    steps differ by float32 rounding (~1e-6 relative, tests/test_compiled_step.py); a foreign or stale graph differs
    by the whole update or worse.

    Memory: the host copies (the starting state, the state now, the reference gradients) live in files
    (``compile_cache.SpilledArrays``) and are read back one tensor at a time; each graph output is dropped once
    compared; the heap is trimmed before the graph's first run, during the passes (:class:`_HeapTrimmer`) and
    after, so that the check adds little to the run's peak RSS (ResNet50 + Adam, batch 32: 1474 MB vs 1633 for
    the compiling run; 1718 when the gradients were held in memory; ``bench/memory_phases.py --warm``).
    ``compare``: compare a graph that was compiled, not loaded, too (the first-graph check of :func:`check_graph`).
    Returns ``(loaded, mismatch)``: whether the graph came from the cache, and None or what differed."""
    import numpy as np
    gate = compile_cache.gate()
    # the current state is copied and the starting state put back one Parameter at a time, each starting value
    # dropped once assigned (keeping the norm of its change): one host copy of the state at a time, not two
    # (ResNet50 + Adam: ~300 MB each)
    now, change = _State((), spill=True), {}
    # the change of each weight and statistic (the tolerances below); the optimizer's moments are not compared
    compared = {id(w) for w in weights} | {id(b) for b in tape.buffers(modules)}
    trimmer = graph_compile._HeapTrimmer()
    for p in check.state.params:
        before = check.state.values.pop(id(p))
        current = p.asnumpy()  # shares p's storage: written out and measured before p is assigned below
        now.params.append(p)
        now.values[id(p)] = current
        if id(p) in compared:
            after = check.stats_after.get(id(p))
            change[id(p)] = _sum_sq(current if after is None else after, before)
        del current
        _write(p, before)
        trimmer.add(2 * before.nbytes)
        del before
    fn.loadable = True  # adapter/compile_cache.py: this Cell's first graph may be loaded (it is checked here)
    try:
        args = [_graph_input(check.env[n]) for n in tensor_names]
        # loaded (or compiled), then the heap's free pages handed back (the swap's host copies and the load's
        # garbage), then run: its memory pool goes where they were, as in the compiling run (compile_and_trim)
        graph_compile.compile_and_trim(fn, args)
        values, grads, _, _ = run_cell(fn, *args)
        del args
    except BaseException:  # the step falls back to eager (``SiteRuntime.run``): from the current state, not step 1's
        now.restore()
        raise
    finally:
        fn.loadable = False
    loaded = gate is not None and id(fn) in gate.loaded
    mismatch = None
    try:
        if not loaded and not compare:
            return False, None
        values = values if isinstance(values, tuple) else (values,)
        loss = float(values[0].asnumpy())
        if not abs(loss - check.loss) <= 1e-4 * max(abs(check.loss), 1e-3):
            mismatch = f"loss {loss!r} vs {check.loss!r}"
            return True, mismatch
        # the reference gradients are read back one at a time (check.grad); the clip's total norm and the
        # largest norm come from their sums of squares and largest magnitudes, recorded in finish()
        scale = [1.0] * len(weights)
        if clip is not None:
            mask, max_norm, norm_type = clip
            picked = [i for i, m in enumerate(mask) if m]
            total = max([check.grad_absmax[i] for i in picked], default=0.0) if norm_type == float("inf") else \
                math.sqrt(sum(check.grad_sq[i] for i in picked))
            coef = min(max_norm / (total + 1e-6), 1.0)
            scale = [coef if m else 1.0 for m in mask]
        largest = max([math.sqrt(sq) * c for sq, c in zip(check.grad_sq, scale)] + [1e-30])
        grads = list(grads)
        for i, w in enumerate(weights):
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
        for p in tape.buffers(modules):  # BatchNorm statistics: each within 1e-2 of its step's change
            eager, graph = check.stats_after.get(id(p)), p.asnumpy()
            if eager is None:  # not recorded after the reference step: the current value (read back from its file)
                eager = now.value(p)
            if eager is not None and not float(np.linalg.norm(graph - eager)) <= \
                    1e-2 * math.sqrt(change[id(p)]) + 1e-6 * float(np.linalg.norm(eager)):
                mismatch = f"statistic {p.name}"
                return True, mismatch
        if fused and not compare:  # the update as a whole: Adam turns a gradient that is float32 noise (a bias before a
            # BatchNorm) into a full +-lr step of either sign, so per tensor it is no test; frozen weights
            # (docs/compile_cache_bug/) or another optimizer or lr differ by the whole update
            held = [w for w in weights if id(w) in now.values]
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
        graph_compile._trim_heap()  # the check's host copies, before the step's own run
        if os.environ.get("ADAPTER_DEBUG"):
            _log(f"graph check of {where}: loaded={loaded} mismatch={mismatch}")
