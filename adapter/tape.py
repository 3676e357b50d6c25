"""The eager bridge: PyTorch's ``loss.backward()`` on MindSpore PyNative, with one forward per step.

How it works (the "tape")
-------------------------
MindSpore's PyNative executor can record the operations run between ``new_graph(obj)`` and ``end_graph(obj, out)``
and then differentiate ``out`` with ``grad(obj, GradOperation(get_by_list=True), weights, None)``. This is what
``mindspore.value_and_grad`` does internally for a Python function, except that here the "function" is whatever the
user's unchanged script runs between its first module call and ``loss.backward()``:

1. ``Module.__call__`` (patched in ``patches/module_call.py``) calls :func:`on_module_call`. When grad mode is on and
   no tape is open, it opens one (``set_grad_flag(True)`` + ``new_graph(marker)``). Every module called while the
   tape is open is remembered: its parameters are the candidates for gradients.
2. The user's code runs as written: forward, loss arithmetic, several heads, helper functions.
3. ``Tensor.backward()`` (patched in ``patches/backward.py``) calls :func:`backward`: ``end_graph(marker, loss)``,
   ``grad(...)`` w.r.t. the candidate parameters, and accumulates the result into ``param.grad`` as PyTorch does
   (``grad = grad + new`` until ``zero_grad``).

The forward therefore runs exactly once: BatchNorm running statistics and dropout masks change once per step.
An anchor script (``docs/facts.md``, "Two ways to get gradients") measured gradients bit-identical to
``mindspore.value_and_grad`` on the same function; ``tests/test_tape.py`` keeps checking that.

Which parameters get a ``.grad``
--------------------------------
PyTorch gives ``.grad`` only to leaf tensors that the loss depends on. MindSpore returns zeros for weights that do
not take part, so "took part" is approximated by: parameters (``requires_grad=True``) of modules whose ``__call__``
ran while the tape was open, plus parameters of modules below a called one that were not called themselves
(``nn.MultiheadAttention`` reads ``out_proj.weight`` without calling ``out_proj``) and parameters held by a live
optimizer that belong to no module ("free" parameters, e.g. a bare ``nn.Parameter`` used in functional code), each of
these two kinds only where the loss depends on it
(``backend_compat.watch_parameters``: a finished training loop's optimizer, still alive, holds free parameters the
next loop does not use). A parameter of a module that was never called keeps ``grad is None``, as in PyTorch. Known difference: a module that *was* called but whose output does not reach the
loss gets a zero gradient where PyTorch leaves ``None``.

Leaf tensors that are not Parameters
------------------------------------
``x = torch.tensor(1., requires_grad=True)``, ``w = torch.randn(784, 10); w.requires_grad_()`` (PyTorch's basics and
``nn_tutorial``, FGSM's ``data.requires_grad = True``): PyTorch gives them ``.grad`` too. MindSpore differentiates a
recorded graph w.r.t. its Parameters and w.r.t. the *inputs* given to ``new_graph`` (``GradOperation(get_all=True)``,
as ``mindspore.grad(fn, grad_position=...)``), so every live tensor registered by :func:`register_leaf`
(``patches/leaf_grad.py``: ``requires_grad`` set to True on a tensor that is not a Parameter) is passed as an input
when a recording opens, and its gradient is accumulated into its ``.grad`` like a parameter's. One that is not used by
the loss gets a zero gradient (PyTorch: ``None``). A leaf made *while* a recording is open is not an input of that
recording: it gets no gradient from it (its ``.grad`` then raises ``LeafGradientUnsupported``, as before).
Code that uses leaf tensors only (no module call, no step site: ``Q = 3 * a ** 3; Q.backward(gradient=v)``,
PyTorch's autograd tutorials) gets its recording from the leaf: one opens when a leaf is made and none is open.
Known limit: a second ``backward()`` of such code outside a step site (a loop ``loss.backward(v)`` over the same
leaves) still finds no recording (raises); reopening one after the first ``backward()`` would record the ``no_grad``
update of those leaves, which ``patches/inplace_autograd.py`` then rebinds away from the recording's inputs
(measured: nn_tutorial's from-scratch losses stopped decreasing).

In-place writes (MindSpore >= 2.10)
----------------------------------
``patches/inplace_autograd.py`` rebinds a tensor written in place during a recording (its rebindings are cleared when
the recording opens and ends: :func:`adapter.backend_compat.clear_rebinds`), and :func:`backward` resolves a rebound
loss (``loss += reg``). When such a write happened, :func:`backward` first walks the recorded graph for what MindSpore
2.10 differentiates wrongly (:func:`adapter.backend_compat.unreliable_inplace_nodes`) and warns at the user's
``backward()`` line (:data:`UNRELIABLE_INPLACE`); the step still runs.

A forward that raises
---------------------
PyTorch forgets a failed forward's graph: a script that catches the error (a skipped bad batch, an out-of-memory
retry, a check between the forward and ``backward()``) trains on. Here three states could outlive the error, and
each is reset at the next forward (``tests/test_exception_recovery.py``):

* the recording the failed call opened: the module call that opened it discards it when it raises
  (``patches/module_call.py``, :func:`discard`), so its modules get no gradient from the next ``backward()``;
* a recording MindSpore dropped itself (its executor clears its state when an operation fails in its kernel: an
  embedding's out-of-range id, a convolution's channel check; the bridge still thought it open and the next
  ``backward()`` raised MindSpore's "Can not find top cell for backward"): the next module call (or :func:`begin`)
  sees the executor's grad flag down, forgets it and opens a new one; a ``backward()`` with no forward since raises
  :class:`TapeError` saying so;
* MindSpore's own recording, left open by a ``mindspore.value_and_grad`` / ``torch.autograd.functional.vjp`` whose
  function raised (the grad flag stays up, and :func:`begin` took it for a recording in progress: "no forward pass
  was recorded"): ``patches/grad_unwind.py`` notes the frames that opened each such recording, and :func:`begin`
  resets the executor (``clear_res``) when none of them is still running.

The MindSpore calls used here (the PyNative executor's ``new_graph/end_graph/grad/set_grad_flag``) are private APIs of
mindspore-dev 2.5.0.dev20250119; they are reached through ``adapter/backend.py``, as every private name.
"""
from __future__ import annotations

import math
import weakref
from typing import Iterable, List, Optional

import mindspore as ms
from mindspore.ops.composite import GradOperation

from adapter import backend, backend_compat, grad_sync, hooks, param_names


class TapeError(RuntimeError):
    """Raised for a ``backward()`` the bridge cannot serve (no recorded forward, non-scalar loss, ...)."""


def _marker_template():
    """Identity of a recorded graph for MindSpore's PyNative executor (a plain function, as value_and_grad's)."""


def _new_marker():
    import types
    code = _marker_template.__code__.replace(co_name=f"adapter_recording_{len(_markers)}")
    return types.FunctionType(code, {"__name__": __name__})


_markers: dict = {}  # where the recording starts (code, line) -> its marker


def _marker_for(key):
    """One marker per place a recording starts: MindSpore keeps one graph structure per marker, and warns (with a
    Python stack on stderr, "Detect dynamic shape or dynamic graph structure") each time a marker's structure
    changes, as it did when a GAN's three backward() steps shared one marker."""
    marker = _markers.get(key)
    if marker is None:
        marker = _markers[key] = _new_marker()
    return marker


class _TapeState:
    def __init__(self):
        self.open = False
        self.modules: dict = {}  # id(module) -> module, modules called while open
        self.all_modules: "weakref.WeakSet" = weakref.WeakSet()  # every module constructed
        self.optimizers: "weakref.WeakSet" = weakref.WeakSet()
        self.last_params: list = []  # the parameters the last backward() differentiated
        self.last_modules: list = []  # the modules that ran in the last backward()'s forward
        self.marker = None  # the open recording's marker
        self.generation = 0  # counts recordings (and compiled steps): adapter/provenance.py tells them apart
        self.leaves: list = []  # the open recording's leaf-tensor inputs (see "Leaf tensors" above)
        self.last_leaves: list = []  # the leaves the last backward() gave a gradient
        self.inplace_writes = False  # an in-place write into a tensor needing a gradient since the recording opened
        self.unrecorded = 0  # depth of `with unrecorded():` blocks: a module call there opens no recording
        self.opened_by = None  # the `where` the open (or last) recording was opened with (begin)


_leaf_registry: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()  # id -> tensor, see register_leaf
_missed_leaves: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()  # made leaves mid-recording


_state = _TapeState()
_GRAD_OP = GradOperation(get_by_list=True)
_GRAD_OP_LEAVES = GradOperation(get_all=True, get_by_list=True)  # (grads of the inputs, grads of the weights)


def register_leaf(tensor) -> None:
    """Remember (weakly) a tensor whose ``requires_grad`` was set to True and that is not a Parameter: recordings
    opened from now on differentiate w.r.t. it while it lives and still requires grad.

    When a recording is open but no module has been called in it yet (a step site's eager call opens it before the
    region's first statement, and the region starts with ``x = torch.tensor(1., requires_grad=True)``), the recording
    is opened again with the new leaf among its inputs. Known limit: an operation on parameters or leaves (not a
    module call) run between the opening and the new leaf's creation is then not part of the gradient."""
    known = _leaf_registry.get(id(tensor)) is tensor
    _leaf_registry[id(tensor)] = tensor
    if not _state.open:
        # Nothing else opens a recording for code that uses leaf tensors only (no module call, and no step site:
        # ``Q = 3 * a ** 3; Q.backward(gradient=v)``, PyTorch's autograd tutorials): open one now, so the operations
        # on this leaf are recorded for the next backward(), as PyTorch records them from here on.
        from adapter.userframe import user_location
        begin(("leaf", user_location(2)))
        return
    if known:
        return
    if not _state.modules and _state.marker is not None:
        marker = _state.marker
        discard()
        _reopen(marker)
    else:
        _missed_leaves[id(tensor)] = tensor


def missed_leaf(tensor) -> bool:
    """Whether ``tensor`` was made a leaf while a recording that had already called a module was open: that
    recording (and a ``backward()`` closing it) gives it no gradient, where PyTorch would."""
    return _missed_leaves.get(id(tensor)) is tensor


def _live_leaves() -> list:
    return [t for t in list(_leaf_registry.values())
            if backend.requires_grad_flag(t) and not isinstance(t, ms.Parameter)]


def is_leaf_tensor(value) -> bool:
    """Whether ``value`` is a live registered leaf tensor (see :func:`register_leaf`) that still requires grad."""
    return _leaf_registry.get(id(value)) is value and backend.requires_grad_flag(value)


def last_leaves() -> List:
    """The leaf tensors (not Parameters) whose gradient the last ``backward()`` was not all zero."""
    return list(_state.last_leaves)


def note_inplace_write() -> None:
    """Called by ``patches/inplace_autograd.py`` for an in-place write into a tensor that needs a gradient during a
    recording (MindSpore >= 2.10): :func:`backward` then checks the recorded graph for in-place nodes whose gradient
    MindSpore gets wrong (:func:`adapter.backend_compat.unreliable_inplace_nodes`)."""
    _state.inplace_writes = True


# said at the user's backward() line when the recorded graph holds an in-place node MindSpore differentiates wrongly
UNRELIABLE_INPLACE = ("this backward() differentiates through an in-place write whose gradient this MindSpore "
                      "(>= 2.10) gets wrong ({nodes}: a write through a view, then the tensor it views used; one of "
                      "MindSpore's own in-place kernels; or a tensor written in place read outside MindTorch's ops): "
                      "this step's gradients are wrong; write out of place (y = y + b, inplace=False)")


def is_recording() -> bool:
    """True while a forward is being recorded (between the first module call and ``backward()``)."""
    return _state.open


def generation() -> int:
    """The number of the current (or last) recording; :func:`new_generation` also counts compiled steps."""
    return _state.generation


def new_generation() -> int:
    """A new number for a step that runs outside a recording (a compiled step, ``adapter/compiled_step.py``)."""
    _state.generation += 1
    return _state.generation


def track_module(module) -> None:
    """Remember a constructed module (weakly), to tell module-owned parameters from free ones."""
    _state.all_modules.add(module)


def last_params() -> List:
    """The parameters that received a gradient from the last ``backward()`` (in order)."""
    return list(_state.last_params)


def last_modules() -> List:
    """The modules that ran in the last ``backward()``'s forward, in first-call order."""
    return list(_state.last_modules)


def buffers(modules) -> List:
    """The Parameters without gradients (BatchNorm running statistics, ...) of ``modules`` (their own, not their
    children's), each once; a compiled step updates them in the graph (``adapter/compiled_step.py``)."""
    seen, out = set(), []
    for module in modules:
        for p in list(backend.cell_params(module).values()) + list(getattr(module, "_buffers", {}).values()):
            if isinstance(p, ms.Parameter) and not p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                out.append(p)
    return out


def recorded_modules() -> List:
    """The modules called since the recording opened, in first-call order (empty when none is open)."""
    return list(_state.modules.values()) if _state.open else []


def register_optimizer(optimizer) -> None:
    """Remember a live optimizer and its free parameters (owned by no module), which are differentiated too.

    Called when the optimizer is built and when a param group is added; modules are built before their
    parameters are handed to an optimizer, so ownership is known by then.
    """
    owned = {id(p) for m in list(_state.all_modules) for p in backend.cell_params(m).values() if p is not None}
    setattr(optimizer, hooks.attr("free_params"), [p for p in optimizer.parameters if id(p) not in owned])
    _state.optimizers.add(optimizer)


def _holds_parameters(module) -> bool:
    """Whether ``module`` or a submodule (children in ``_cells``, as ``named_modules`` walks them) holds a parameter
    at all. A plain walk of the ``_params`` dicts: no generator chain, no name bookkeeping."""
    for p in backend.cell_params(module).values():
        if p is not None:
            return True
    stack, seen = list(backend.cell_children(module).values()), {id(module)}
    while stack:
        m = stack.pop()
        if m is None or id(m) in seen or not backend.has_cell_dicts(m):
            continue
        seen.add(id(m))
        for p in backend.cell_params(m).values():
            if p is not None:
                return True
        stack.extend(backend.cell_children(m).values())
    return False


def _has_trainable_params(module) -> bool:
    """Whether ``module`` has a parameter with ``requires_grad`` (``module.parameters()``, recursive).

    Modules without any parameter (torchvision transforms such as ``Normalize``, called per sample while the
    DataLoader runs, activation and loss modules) are answered by :func:`_holds_parameters` without
    ``module.parameters()``: MindTorch's generator chain (``named_modules`` -> ``_named_members``, which also renames
    parameters) cost ~20-50 us per call, ~26 % of a ``Normalize`` call (measured with cProfile, this machine).
    A module with parameters goes through ``module.parameters()`` exactly as before (same side effects)."""
    if not _holds_parameters(module):
        return False
    return any(p.requires_grad for p in module.parameters())


def on_module_call(module, where=None) -> bool:
    """Called at the start of every ``Module.__call__`` (PyNative). Opens the tape if needed; records the module.
    ``where``: a hashable id of the calling code (e.g. (code object, line)); one MindSpore marker per place.
    Returns whether this call opened the recording (``patches/module_call.py`` discards it if the call raises)."""
    if not backend.grad_enabled():  # inside torch.no_grad(): nothing to record
        return False
    if _state.open and not backend.grad_flag():
        _lost()  # MindSpore dropped the recording when an operation of it failed (see "A forward that raises")
    if not _state.open:
        if _state.unrecorded:
            return False  # a statement whose outputs reach no backward() (adapter/step_rewrite.py, _mark_unrecorded)
        if not _has_trainable_params(module):
            return False  # e.g. a loss module called on its own: it cannot start a differentiable step
        if not begin(where):
            return False
        _state.modules[id(module)] = module
        return True
    _state.modules[id(module)] = module
    return False


class unrecorded:  # noqa: N801 -- used as a context manager, like torch.no_grad
    """``with unrecorded():`` -- a module call inside opens no recording (one already open keeps recording).

    ``adapter/step_rewrite.py`` wraps in it a statement outside every step region whose outputs, by their def-use
    chains in the scope, reach no ``backward()`` (``metric = model(xv).mean()`` after ``optimizer.step()``): the
    recording such a call opened stayed open into the next step, which then ran eagerly. Values are unchanged
    (grad mode stays on); only an autograd history nothing uses is not recorded. A class, not a generator context
    manager: it runs once per such statement per step (~0.3 us)."""
    __slots__ = ()

    def __enter__(self):
        _state.unrecorded += 1
        return self

    def __exit__(self, *exc):
        _state.unrecorded -= 1
        return False


def begin(where=None) -> bool:
    """Open the recording now, unless one is open, grad mode is off, or MindSpore is already recording for someone
    else (``mindspore.value_and_grad``, grad of a Cell). A compiled site's eager step (``adapter/compiled_step.py``)
    opens it before its first statement, so operations on parameters before any module call are recorded too.
    Returns whether a recording is open."""
    if _state.open:
        if backend.grad_flag():
            return True
        _lost()  # MindSpore dropped it when an operation of it failed (see "A forward that raises")
    if not backend.grad_enabled():
        return False
    if backend.grad_flag() and not reset_left_open():
        return False  # a mindspore.value_and_grad (or a Cell's grad) is recording: this call is inside it
    _reopen(_marker_for(where))
    _state.opened_by = where
    return True


def opened_at() -> Optional[tuple]:
    """``(filename, line)`` of the module call that opened the open recording, when a module call opened it (its
    ``where`` is ``(code, line)``: ``patches/module_call.py``); else None."""
    where = _state.opened_by if _state.open else None
    if isinstance(where, tuple) and len(where) == 2 and hasattr(where[0], "co_filename"):
        return where[0].co_filename, where[1]
    return None


def _reopen(marker) -> None:
    """Open a recording under ``marker`` with the live leaf tensors as its inputs."""
    backend.set_grad_flag(True)
    _state.marker = marker
    _state.leaves = _live_leaves()
    backend.new_graph(_state.marker, *_state.leaves)
    _state.generation += 1
    _state.open = True
    _state.modules = {}
    _state.inplace_writes = False
    backend_compat.clear_rebinds()  # left by a mindspore.grad recording (patches/inplace_autograd.py)


def discard() -> None:
    """Close an open tape without differentiating (used when a run ends, a test resets, or the call that opened the
    recording raised: ``patches/module_call.py``). Never raises for the recording's own state: one that MindSpore
    already dropped (an operation of it failed) is only forgotten here, and one that cannot be closed (a MindSpore
    recording opened inside it was left open by an error) is reset with the executor's ``clear_res``."""
    if not _state.open:
        return
    try:
        if backend.grad_flag():
            leaves = _state.leaves
            backend.end_graph(_state.marker, ms.Tensor(0.0), *leaves)
            # Consume the graph: a recorded-but-never-differentiated top cell would be picked up by the next
            # grad() for the same marker and yield zeros (measured on this MindSpore build).
            backend.run_grad(_state.marker, _GRAD_OP_LEAVES if leaves else _GRAD_OP, ms.ParameterTuple([]), None,
                             *leaves)
    except Exception:  # noqa: BLE001 -- the recording is reset below, whatever its state
        backend.clear_pynative_resources()
    finally:
        _lost()
        backend.set_grad_flag(False)
        _foreign.clear()


def _lost() -> None:
    """Forget the open recording without touching MindSpore's executor: it no longer holds it (its executor clears
    its state when one of its operations fails: IndexError of an embedding, a convolution's channel check), or
    :func:`discard` has closed it."""
    _state.open = False
    _state.leaves = []
    _state.modules = {}
    backend_compat.clear_rebinds()


# -- MindSpore's own recordings (mindspore.value_and_grad / grad / vjp, a Cell's grad), noted by
# patches/failed_forward.py: the frames of the call that opened each one, while it is open
_foreign: list = []  # [(id of the recorded object, (frames of MindSpore/MindTorch's call that opened it))]


def foreign_opened(obj, frames) -> None:
    """MindSpore's executor started recording ``obj``; unless it is the bridge's own marker, noted with ``frames()``:
    the frames of the MindSpore and MindTorch functions that opened it (``_pynative_func_grad_forward``,
    ``Cell.__call__``, ...), innermost first."""
    if obj is not _state.marker:
        _foreign.append((id(obj), tuple(frames())))


def foreign_closed(obj) -> None:
    """MindSpore's executor ended the recording of ``obj``."""
    if obj is _state.marker:
        return
    for i in range(len(_foreign) - 1, -1, -1):
        if _foreign[i][0] == id(obj):
            del _foreign[i]
            return


def reset_left_open() -> bool:
    """When the executor's grad flag is up only because a MindSpore recording's call raised
    (:func:`_foreign_left_open`), reset the executor (``clear_res``, as MindSpore does after a failed ``jit``
    compile) and return True; else False.
    Called by :func:`begin` and, before MindSpore opens a recording, by ``patches/grad_unwind.py`` (a
    ``value_and_grad`` after a failed one must not record inside the one left open)."""
    if _state.open or not backend.grad_flag() or not _foreign_left_open():
        return False
    backend.clear_pynative_resources()
    backend.set_grad_flag(False)
    _foreign.clear()
    return True


def _foreign_left_open() -> bool:
    """Whether the executor's grad flag is up only because a MindSpore recording's call raised: recordings were
    noted (:func:`foreign_opened`), and none of the frames that opened them is still running. A flag raised by
    anything else (nothing noted) counts as a recording in progress, as before."""
    if not _foreign:
        return False
    import sys
    running = set()
    frame = sys._getframe(1)
    while frame is not None:
        running.add(id(frame))
        frame = frame.f_back
    return not any(id(f) in running for _, frames in _foreign for f in frames)


def candidate_parameters() -> List:
    """The parameters that get a gradient from the open tape, in a stable order (see module docstring): the called
    modules' own, then the live optimizers' free ones (:func:`backward` keeps those of the latter that the loss
    depends on)."""
    owned, free = _candidates()
    return owned + free


def _candidates():
    """``(owned, free)``: the called modules' own parameters that need a gradient, and the live optimizers' free
    parameters (owned by no module) that need one and are not among them."""
    seen = set()
    owned, free = [], []
    for module in _state.modules.values():
        for p in backend.cell_params(module).values():  # a module's own parameters (not its children's)
            if p is None or id(p) in seen:
                continue
            seen.add(id(p))
            if p.requires_grad:
                owned.append(p)
    # parameters of modules that were not called but sit below a called one: a parent may use them without calling
    # their module (nn.MultiheadAttention passes out_proj.weight/bias to F.multi_head_attention_forward and never
    # calls out_proj): watched like free parameters, so they get a gradient exactly when the loss uses them
    stack = [child for module in _state.modules.values() for child in backend.cell_children(module).values()]
    visited = set()
    while stack:
        module = stack.pop()
        if module is None or id(module) in visited:
            continue
        visited.add(id(module))
        for p in backend.cell_params(module).values():
            if p is not None and id(p) not in seen and p.requires_grad:
                seen.add(id(p))
                free.append(p)
        stack.extend(reversed(list(backend.cell_children(module).values())))
    for opt in list(_state.optimizers):
        for p in hooks.get(opt, "free_params"):
            if id(p) not in seen and p.requires_grad:
                seen.add(id(p))
                free.append(p)
    return owned, free


def backward(loss, gradient=None, where: Optional[str] = None) -> None:
    """Differentiate ``loss`` w.r.t. the parameters that took part in the recorded forward; accumulate into ``.grad``.

    Args:
        loss: the (MindTorch) tensor ``backward()`` was called on. Scalar unless ``gradient`` is given.
        gradient: tensor of ``loss``'s shape, the vector of the vector-Jacobian product (PyTorch's ``gradient=``).
        where: ``"file:line"`` of the user's ``backward()`` call, for error messages.

    Raises:
        TapeError: no forward was recorded since the last ``backward()`` (e.g. the forward ran under
            ``torch.no_grad()``, or ``backward()`` is called a second time on the same graph), or ``loss`` is not a
            scalar and no ``gradient`` was given.
    """
    at = f" at {where}" if where else ""
    if _state.open and not backend.grad_flag():
        _lost()
        raise TapeError(
            f"backward(){at}: the recording of this forward was dropped by MindSpore when one of its operations raised "
            "(an error the script caught inside the forward): run the forward again before backward()")
    if not _state.open:
        raise TapeError(
            f"backward(){at}: no forward pass was recorded since the last backward(). Either the forward ran under "
            "torch.no_grad()/eval-only code, or backward() is called twice on the same graph (retain_graph=True is "
            "not supported by the MindSpore bridge: sum the losses and call backward() once).")
    if gradient is None and math.prod(loss.shape) != 1:
        discard()
        raise TapeError(f"backward(){at}: grad can be implicitly created only for scalar outputs "
                        f"(loss has shape {tuple(loss.shape)}); pass gradient=... or reduce the loss first.")
    loss = backend_compat.resolved(loss)  # `loss += reg` through a view (patches/inplace_autograd.py)
    if gradient is not None:
        # vector-Jacobian product: d(sum(loss * gradient)) = gradient^T J, recorded while the tape is still open
        loss = (loss * gradient.astype(loss.dtype)).sum()
    if _state.inplace_writes:
        nodes = backend_compat.unreliable_inplace_nodes(loss)
        if nodes:
            from adapter.userframe import warn_user
            warn_user(UNRELIABLE_INPLACE.format(nodes=", ".join(sorted(set(nodes)))))
    owned, free = _candidates()
    params = param_names.unique(owned + free)  # ParameterTuple needs unique names (two models' main.0.weight)
    # which free parameters the loss depends on: every live optimizer's are differentiated, a finished loop's too
    # (its optimizer kept alive), and PyTorch gives .grad only to those the loss uses (tests/test_second_loop.py)
    took_part = backend_compat.watch_parameters(loss, free)
    leaves, _state.leaves = _state.leaves, []
    backend.end_graph(_state.marker, loss, *leaves)
    _state.open = False
    _state.last_modules = list(_state.modules.values())
    _state.modules = {}
    _state.last_params = params
    try:
        # with no parameters this still consumes the recorded graph (see discard())
        if leaves:
            leaf_grads, grads = backend.run_grad(_state.marker, _GRAD_OP_LEAVES, ms.ParameterTuple(params), None,
                                               *leaves)
        else:
            leaf_grads, grads = (), backend.run_grad(_state.marker, _GRAD_OP, ms.ParameterTuple(params), None)
    finally:
        backend.set_grad_flag(False)
        backend_compat.clear_rebinds()
        used = {id(p) for p in took_part()}
    if len(used) < len(free):  # a free parameter the loss does not use: no gradient (PyTorch: .grad unchanged)
        kept = [i for i, p in enumerate(params) if i < len(owned) or id(p) in used]
        params, grads = [params[i] for i in kept], [grads[i] for i in kept]
        _state.last_params = params
    accumulate(params, grads)
    accumulate(leaves, leaf_grads)
    # which leaves took part (a compiled step cannot give them gradients: adapter/compiled_step.py runs such a site
    # eagerly); an unused input's gradient is exactly zero
    _state.last_leaves = [t for t, g in zip(leaves, leaf_grads) if bool(ms.ops.any(ms.Tensor(g) != 0).asnumpy())]
    # DistributedDataParallel (patches/ddp.py): average the accumulated .grad of DDP parameters over the workers,
    # unless under no_sync() (adapter/grad_sync.py; returns at once when no DDP module exists)
    grad_sync.after_backward(params)


def accumulate(params: Iterable, grads: Iterable) -> None:
    """``p.grad = g`` where ``p.grad is None``, else ``p.grad = p.grad + g`` (PyTorch's accumulation rule)."""
    from mindtorch.torch.tensor import cast_to_adapter_tensor  # import here: torch is MindTorch only after start-up

    for p, g in zip(params, grads):
        if not isinstance(g, ms.Tensor):  # PyNative grad returns the C++ base class
            g = ms.Tensor(g)
        g = cast_to_adapter_tensor(g)
        p.grad = g if p.grad is None else p.grad + g
