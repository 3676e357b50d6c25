"""Anomaly detection: ``torch.autograd.detect_anomaly()`` / ``set_detect_anomaly(True)`` / ``run.py --detect-anomaly``
name the first module whose forward output or gradient is non-finite, and the training step.

MindTorch 0.4.0 has no anomaly mode (``torch.autograd.detect_anomaly`` is missing). This patch adds PyTorch's API:
``torch.autograd.set_detect_anomaly(mode, check_nan=True)`` (a call, or a context manager that restores the previous
state), ``torch.autograd.detect_anomaly(check_nan=True)`` (context manager and decorator, warns as PyTorch does),
``torch.autograd.anomaly_mode``, ``torch.is_anomaly_enabled()``, ``torch.is_anomaly_check_nan_enabled()`` and
``torch.set_anomaly_enabled(enabled, check_nan=True)``.

While it is on (and ``check_nan`` is True), a :class:`AnomalyError` (a ``RuntimeError``, as PyTorch's anomaly mode
raises) names the module, relative to the outermost module called (``layer3.2.bn2``), its class, the step and the
user's ``file:line``:

* **Forward**: every ``nn.Module`` call's output (tensors, also inside tuples/lists/dicts) is checked when the module
  returns, so the first module to return a non-finite value is the innermost one that produced it. The message says
  whether its inputs or its own parameters/buffers were already non-finite (bad data, a diverged earlier step).
* **Backward**: backward hooks (``Tensor.register_hook``, which work under the eager bridge) record the gradient
  w.r.t. every module's tensor inputs (registered before the call) and outputs (after it). After ``backward()`` the
  culprit is the module whose output gradients are finite but whose input gradients or own parameter gradients are
  not; of several, the last one called (the deepest, the first in backward order). An input gradient that is
  non-finite only because another consumer of the same tensor propagated a non-finite gradient (a residual branch)
  does not count. If the gradient is already non-finite at the model's output, the loss code is named; if the
  forward ran with anomaly detection off (only ``backward()`` inside ``detect_anomaly()``), the parameters'
  gradients are checked and the last module in forward order with a non-finite parameter gradient is named, with
  that caveat in the message.
* **The loss** passed to ``backward()`` is checked too (computed outside any module).

The step: ``training step N`` counts ``backward()`` calls made while anomaly detection is on, over the whole process
(1-based; a forward error is in step N = completed backward() calls + 1, a forward under ``torch.no_grad()`` is
"after step N"). With ``run.py --detect-anomaly`` or ``set_detect_anomaly(True)`` at the top of the script this is
the run's step number; with ``detect_anomaly()`` around part of a run it counts the steps inside it.

Differences from PyTorch, on purpose: PyTorch checks only the backward, and only for NaN; here forward outputs and
gradients are checked for NaN *and* inf (an inf in the forward is what becomes the NaN later). ``check_nan=False``
turns the checks off (PyTorch then only records forward tracebacks, which have no use here). Gradients are checked
after ``backward()`` returns, so ``.grad`` already holds them when the error is raised.

Cost: nothing while off (``nn.Module.__call__`` and ``Tensor.backward`` are wrapped only while it is on). While on,
every module output is checked and every training step runs on the eager bridge: enabling it switches
``adapter.compiled_step`` to ``pynative`` for the rest of the run (a compiled graph cannot check per-module outputs,
and an optimizer update run eagerly would break later fused graphs on this MindSpore build), printing one line when
that changes the mode. Measured (ResNet18, batch 32, 2-core CPU, in-process): 0.83 s per eager step on vs 0.75 s off.

A forward error leaves its step half-recorded; the recording is dropped when a module is called again or anomaly
detection is turned off (code that catches the error can go on), not at once (see :func:`_abandon_step`).

Replaces: ``torch.autograd.detect_anomaly`` / ``set_detect_anomaly`` / ``anomaly_mode`` (a module registered here),
``torch.is_anomaly_enabled`` / ``is_anomaly_check_nan_enabled`` / ``set_anomaly_enabled``; while on, it wraps
``nn.Module.__call__`` and ``Tensor.backward``.
"""
from __future__ import annotations

import functools
import os
import sys
import warnings
from typing import Dict, List, Optional

from adapter import backend

from . import Patch, patch_attr


class AnomalyError(RuntimeError):
    """A non-finite forward output, gradient or loss found by anomaly detection."""


# -- state ---------------------------------------------------------------------------------------------------------
class _Call:
    """One module call seen while anomaly detection is on (for the backward analysis)."""
    __slots__ = ("module", "parent", "root", "ins", "outs")

    def __init__(self, module, parent: Optional["_Call"]):
        self.module = module
        self.parent = parent
        self.root = parent.root if parent is not None else module
        self.ins: List["_Slot"] = []
        self.outs: List["_Slot"] = []

    def is_descendant_of(self, other: "_Call") -> bool:
        node = self.parent
        while node is not None:
            if node is other:
                return True
            node = node.parent
        return False


class _Slot:
    """A tensor input or output of a module call, with the gradient its backward hook received."""
    __slots__ = ("tensor", "key", "grad", "handle")

    def __init__(self, tensor, key):
        self.tensor = tensor  # kept alive so that ids stay unique until backward()
        self.key = key
        self.grad = None
        self.handle = None

    def hook(self, grad):
        self.grad = grad
        return grad


class _State:
    def __init__(self):
        self.enabled = False
        self.check_nan = True
        self.backward_calls = 0  # backward() calls made while on (process-wide, never reset)
        self.stack: List[_Call] = []  # module calls in progress
        self.calls: List[_Call] = []  # module calls of the forward being recorded, in call-start order
        self.generation: Dict[int, int] = {}  # id(tensor) -> times it was a module's output (in-place ops)
        self.inner_call = None  # nn.Module.__call__ as it was before enabling
        self.inner_backward = None  # Tensor.backward as it was before enabling
        self.mode_switched = False
        self.abandoned = False  # a forward error left its recording open (see _abandon_step)


_state = _State()


# -- PyTorch's API -------------------------------------------------------------------------------------------------
def is_anomaly_enabled() -> bool:
    return _state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _state.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """``torch.set_anomaly_enabled``: turn anomaly detection on or off (``check_nan``: check for non-finite values)."""
    enabled = bool(enabled)
    _state.check_nan = bool(check_nan)
    if enabled == _state.enabled:
        return
    if enabled:
        _switch_to_eager()
        _install()
    else:
        _uninstall()
    _state.enabled = enabled


class set_detect_anomaly:
    """``torch.autograd.set_detect_anomaly(mode, check_nan=True)``: sets the mode now; as a context manager it
    restores the previous mode on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class detect_anomaly:
    """``torch.autograd.detect_anomaly(check_nan=True)``: anomaly detection inside the ``with`` block, or for every
    call of a decorated function."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._saved: List[tuple] = []
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        self._saved.append((is_anomaly_enabled(), is_anomaly_check_nan_enabled()))
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args) -> None:
        set_anomaly_enabled(*self._saved.pop())

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


def steps_counted() -> int:
    """``backward()`` calls made while anomaly detection was on, in this process (the step numbers' count)."""
    return _state.backward_calls


def enable() -> None:
    """``run.py --detect-anomaly``: anomaly detection on for the whole run (call after the patches are installed)."""
    set_anomaly_enabled(True)


# -- switching on and off ------------------------------------------------------------------------------------------
def _switch_to_eager() -> None:
    from adapter import compiled_step
    if compiled_step.get_mode() != "pynative":
        compiled_step.set_mode("pynative")
        if not _state.mode_switched:
            _state.mode_switched = True
            print("run.py: anomaly detection is on: training steps run in PyNative (eager), not compiled, from now "
                  "on, so that every module's output and gradient can be checked", file=sys.stderr, flush=True)


def _install() -> None:
    """Wrap ``nn.Module.__call__`` and ``Tensor.backward`` while anomaly detection is on. Scoped by design, so not
    through ``patch_attr`` (whose ``restore`` puts back MindTorch's original, under the other patches' wrappers):
    :func:`_uninstall` puts back exactly the values wrapped here."""
    from mindtorch.torch.nn.modules.module import Module
    from mindtorch.torch.tensor import Tensor
    if getattr(Module.__call__, "_adapter_anomaly", False):
        return
    _state.inner_call = Module.__call__
    _state.inner_backward = Tensor.backward
    _reset_watch()
    Module.__call__ = _make_call(_state.inner_call)
    Tensor.backward = _make_backward(_state.inner_backward)


def _uninstall() -> None:
    from mindtorch.torch.nn.modules.module import Module
    from mindtorch.torch.tensor import Tensor
    if getattr(Module.__call__, "_adapter_anomaly", False):
        Module.__call__ = _state.inner_call
    if getattr(Tensor.backward, "_adapter_anomaly", False):
        Tensor.backward = _state.inner_backward
    _discard_abandoned()
    _reset_watch()


def _reset_watch() -> None:
    """Forget the recorded module calls and remove their gradient hooks."""
    for call in _state.calls:
        for slot in call.ins + call.outs:
            if slot.handle is not None:
                try:
                    slot.handle.remove()
                except Exception:  # the tensor is gone or its graph was consumed: nothing left to remove
                    pass
    _state.calls = []
    _state.generation = {}


# -- tensors -------------------------------------------------------------------------------------------------------
def _float_tensors(value, out: list) -> list:
    """The floating-point tensors in ``value`` (a tensor, or tuples/lists/dicts of them), in order."""
    import mindspore as ms
    from adapter import backend
    if backend.is_tensor(value):
        if value.dtype in ms.common.dtype.float_type:
            out.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _float_tensors(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _float_tensors(v, out)
    return out


def _all_finite(tensors) -> bool:
    """Whether every value of ``tensors`` is finite (computed outside any gradient recording)."""
    import mindspore as ms
    from adapter import backend
    executor = backend.pynative_executor()
    if not tensors:
        return True
    prev = executor.enable_grad()
    executor.set_enable_grad(False)
    try:
        return all(bool(ms.ops.isfinite(t).all().asnumpy()) for t in tensors)
    finally:
        executor.set_enable_grad(prev)


def _describe(tensors) -> str:
    """``"2 inf, 1 nan of 512 values"`` over ``tensors``."""
    import numpy as np
    n_inf = n_nan = total = 0
    for t in tensors:
        a = t.asnumpy()
        n_inf += int(np.isinf(a).sum())
        n_nan += int(np.isnan(a).sum())
        total += a.size
    parts = [f"{n} {kind}" for n, kind in ((n_inf, "inf"), (n_nan, "nan")) if n]
    return f"{', '.join(parts)} of {total} values"


def _own_tensors(module) -> list:
    """``(kind, name, tensor)`` of the module's own parameters and buffers (not its children's)."""
    found = [("parameter", n, p) for n, p in backend.cell_params(module).items() if p is not None]
    buffers = getattr(module, "_buffers", None) or {}
    found += [("buffer", n, b) for n, b in buffers.items() if b is not None]
    return found


# -- names and places ----------------------------------------------------------------------------------------------
def _name_in(root, module) -> Optional[str]:
    for name, m in root.named_modules():
        if m is module:
            return name
    return None


def _label(module, root) -> str:
    """``module 'layer3.2.bn2' (BatchNorm2d)``, or ``the top-level module (Net)`` for the outermost one."""
    cls = type(module).__name__
    if module is root:
        return f"the top-level module ({cls})"
    name = _name_in(root, module)
    if name is None:
        return f"an unregistered {cls} module (not a submodule of {type(root).__name__}; called inside it)"
    return f"module '{name}' ({cls})"


def _call_label(call: _Call) -> str:
    if call.module is not call.root and _name_in(call.root, call.module) is None:
        # not registered (e.g. created in forward): name it after the nearest registered module calling it
        node = call.parent
        while node is not None and node.module is not node.root and _name_in(node.root, node.module) is None:
            node = node.parent
        if node is not None:
            return f"an unregistered {type(call.module).__name__} module called inside {_label(node.module, node.root)}"
    return _label(call.module, call.root)


def _where() -> Optional[str]:
    """The innermost user ``file:line`` of the current stack (generated step files mapped to the user's file)."""
    from adapter.userframe import _is_internal, display_path
    try:
        from adapter.compiled_step import GENERATED_TO_USER
    except ImportError:  # pragma: no cover
        GENERATED_TO_USER = {}
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        mapped = GENERATED_TO_USER.get(filename)
        if mapped is not None:
            return f"{display_path(mapped)}:{frame.f_lineno}"
        if not _is_internal(os.path.abspath(filename)):
            return f"{display_path(filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


_HEADER = "Anomaly detected (anomaly detection is on: torch.autograd.detect_anomaly() / run.py --detect-anomaly): "


# -- forward -------------------------------------------------------------------------------------------------------
def _make_call(inner):
    from adapter import backend, tape
    executor = backend.pynative_executor()

    @functools.wraps(inner)
    def __call__(self, *args, **kwargs):
        st = _state
        if not st.check_nan:
            return inner(self, *args, **kwargs)
        if not st.stack:
            _discard_abandoned()
            if not tape.is_recording():
                _reset_watch()  # a new forward (a new recording) starts: forget the last one's calls
        call = _Call(self, st.stack[-1] if st.stack else None)
        grad_on = executor.enable_grad()
        if grad_on:
            st.calls.append(call)
            for t in _float_tensors((args, kwargs), []):
                _watch(call.ins, t, (id(t), st.generation.get(id(t), 0)))
        st.stack.append(call)
        try:
            out = inner(self, *args, **kwargs)
        finally:
            st.stack.pop()
        outs = _float_tensors(out, [])
        if not _all_finite(outs):
            _forward_error(call, args, kwargs, outs, grad_on)
        if grad_on and tape.is_recording():
            for t in outs:
                st.generation[id(t)] = st.generation.get(id(t), 0) + 1
                _watch(call.outs, t, (id(t), st.generation[id(t)]))
        return out

    __call__._adapter_anomaly = True
    return __call__


def _watch(slots: list, tensor, key) -> None:
    slot = _Slot(tensor, key)
    try:
        slot.handle = tensor.register_hook(slot.hook)
    except Exception:  # a tensor that cannot take a hook (outside any recording): its gradient stays unknown
        slot.handle = None
    slots.append(slot)


def _abandon_step() -> None:
    """The step dies with the error. Its recording is closed (as PyTorch drops the graph) when code that caught the
    error calls a module again, or turns anomaly detection off: not now, since closing a half-recorded graph makes
    MindSpore print a bare Python stack ("dynamic graph structure") just before the error's own traceback."""
    _state.abandoned = True
    _reset_watch()


def _discard_abandoned() -> None:
    from adapter import tape
    if _state.abandoned:
        _state.abandoned = False
        if not _state.stack:
            tape.discard()


def _forward_error(call: _Call, args, kwargs, outs, grad_on: bool) -> None:
    st = _state
    module = call.module
    label = _call_label(call)
    where = _where()
    if grad_on:
        step = f"in the forward of training step {st.backward_calls + 1}"
    else:
        step = f"in a forward without gradients (torch.no_grad()) after training step {st.backward_calls}"
    text = _HEADER + f"the output of {label} contains non-finite values ({_describe(outs)}), {step}"
    text += f", called at {where}.\n" if where else ".\n"
    _abandon_step()
    bad_own = [f"{kind} '{name}'" for kind, name, t in _own_tensors(module) if not _all_finite(_float_tensors(t, []))]
    ins = _float_tensors((args, kwargs), [])
    if not _all_finite(ins):
        text += ("Its input is already non-finite: the data, or code that runs before this module outside any "
                 "module, produced it. What to do: check the batch (torch.isfinite(x).all()) and the code that "
                 "computes this module's input.")
    elif bad_own:
        verb = "holds" if len(bad_own) == 1 else "hold"
        text += (f"Its own {', '.join(bad_own)} already {verb} non-finite values: an earlier optimizer step diverged. "
                 "What to do: lower the learning rate, clip gradients (torch.nn.utils.clip_grad_norm_), or find the "
                 "step whose gradients were non-finite (enable anomaly detection from the first step).")
    else:
        children = any(True for _ in module.children()) if hasattr(module, "children") else False
        own = ("its own forward code (outside its submodules, whose outputs were finite)" if children
               else "its own computation")
        text += (f"Its inputs and parameters are finite, so {own} produced them: an overflow (exp, pow, large "
                 "activations), a division by zero, or log/sqrt of a non-positive value. What to do: add an "
                 "epsilon or clamp there, lower the learning rate, or use a numerically stable form "
                 "(log_softmax, logsumexp).")
    raise AnomalyError(text)


# -- backward ------------------------------------------------------------------------------------------------------
def _make_backward(inner):
    from adapter import tape

    @functools.wraps(inner)
    def backward(self, *args, **kwargs):
        st = _state
        if not st.check_nan:
            return inner(self, *args, **kwargs)
        st.backward_calls += 1
        step = st.backward_calls
        where = _where()
        modules = tape.recorded_modules()  # the forward's modules, in first-call order (before backward clears them)
        calls = st.calls
        try:
            result = inner(self, *args, **kwargs)
            _check_backward(self, calls, modules, step, where)
        finally:
            _reset_watch()
        return result

    backward._adapter_anomaly = True
    return backward


def _finite_grad(slot: _Slot) -> Optional[bool]:
    """True/False for a slot whose hook received a gradient, None when it got none."""
    return None if slot.grad is None else _all_finite([slot.grad])


def _check_backward(loss, calls: List[_Call], modules: list, step: int, where: Optional[str]) -> None:
    from adapter import tape
    at = f"backward() at {where}" if where else "backward()"
    head = _HEADER + f"in training step {step}, {at}: "
    if not _all_finite(_float_tensors(loss, [])):
        raise AnomalyError(
            head + f"the loss itself is non-finite ({_describe([loss])}), although every module output was finite "
            "(or the forward ran with anomaly detection off): the code between the model's output and backward() "
            "produced it (e.g. log of 0, a division, an overflow in a hand-written loss). What to do: use "
            "numerically stable forms (F.cross_entropy / log_softmax instead of log(softmax)), add an epsilon.")
    params = tape.last_params()
    bad_params = {id(p) for p in params if p.grad is not None and not _all_finite([p.grad])}
    bad_slots = set()
    for call in calls:
        for slot in call.ins + call.outs:
            if _finite_grad(slot) is False:
                bad_slots.add(id(slot))
    if not bad_params and not bad_slots:
        return
    if calls:
        culprit, reason = _culprit(calls, bad_slots, bad_params)
        if culprit is not None:
            raise AnomalyError(
                head + f"the gradient became non-finite in {_call_label(culprit)}: the gradient w.r.t. its "
                f"output is finite, but {reason} is not, so the backward of this module's forward computation "
                "produced it (sqrt/pow/log at 0, division by ~0, an overflow: the derivative is inf or nan there "
                "although the forward value is finite). What to do: add an epsilon or clamp the input of that "
                "operation (e.g. sqrt(x + eps)), or use a numerically stable form.")
        roots = [c for c in calls if c.parent is None]
        bad_out_roots = [c for c in roots if any(id(s) in bad_slots for s in c.outs)]
        if bad_out_roots:
            raise AnomalyError(
                head + f"the gradient is already non-finite at the output of {_call_label(bad_out_roots[-1])}: "
                "the code between the model's output and backward() (the loss computation) produced it. What to "
                "do: use numerically stable forms (F.cross_entropy / log_softmax instead of log(softmax)), add an "
                "epsilon to divisions, sqrt and log there.")
    # no module call was watched (the forward ran with anomaly detection off), or nothing narrower was found:
    # name the last module, in forward order, whose own parameters got a non-finite gradient
    owner = None
    for module in modules:
        if any(id(p) in bad_params for p in backend.cell_params(module).values() if p is not None):
            owner = module
    if owner is not None:
        root = _root_of(owner, modules)
        names = [n for n, p in backend.cell_params(owner).items() if p is not None and id(p) in bad_params]
        raise AnomalyError(
            head + f"the parameter gradient ({', '.join(names)}) of {_label(owner, root)} is non-finite; it is "
            "the last module in forward order (the first in backward order) with a non-finite parameter gradient. "
            "The cause is this module or one called after it whose backward produced it"
            + (" (the forward ran with anomaly detection off, so module outputs were not watched: enable it before "
               "the forward to name the module exactly)" if not calls else "")
            + ". What to do: add an epsilon or clamp where that code divides, takes sqrt/log/pow, or overflows.")
    raise AnomalyError(head + "a gradient is non-finite (a parameter owned by no module, or an intermediate "
                       "tensor); enable anomaly detection before the forward to locate it.")


def _culprit(calls: List[_Call], bad_slots: set, bad_params: set):
    """The last-called module whose output gradients are finite but whose input or own parameter gradients are not.

    An input gradient does not count when another consumer of the same tensor (not inside this module) had a
    non-finite output gradient: the tensor's gradient is the sum over its consumers, and that one propagated it.
    """
    consumers: Dict[tuple, List[_Call]] = {}
    for call in calls:
        for slot in call.ins:
            consumers.setdefault(slot.key, []).append(call)

    def out_bad(call):
        return any(id(s) in bad_slots for s in call.outs)

    for call in reversed(calls):
        if out_bad(call):
            continue
        own_bad = [n for n, p in backend.cell_params(call.module).items() if p is not None and id(p) in bad_params]
        bad_inputs = []
        for i, slot in enumerate(call.ins):
            if id(slot) not in bad_slots:
                continue
            explained = any(other is not call and not other.is_descendant_of(call) and out_bad(other)
                            for other in consumers.get(slot.key, ()))
            if not explained:
                bad_inputs.append(i)
        if bad_inputs or own_bad:
            parts = []
            if bad_inputs:
                parts.append("the gradient w.r.t. its input" + ("" if len(call.ins) == 1 else
                                                                 f" #{', #'.join(str(i) for i in bad_inputs)}"))
            if own_bad:
                parts.append(f"that of its parameter(s) {', '.join(own_bad)}")
            return call, " and ".join(parts)
    return None, None


def _root_of(module, modules: list):
    """The first recorded module (the outermost one of the forward) that contains ``module``."""
    for candidate in modules:
        if _name_in(candidate, module) is not None:
            return candidate
    return module


# -- the patch -----------------------------------------------------------------------------------------------------
_mode_module = None  # torch.autograd.anomaly_mode, made once by apply() (registered in sys.modules)


def apply() -> None:
    global _mode_module
    import mindtorch.torch as torch
    import mindtorch.torch.autograd as autograd

    if _mode_module is None:  # a module registered in sys.modules: made once, not again on a second apply
        from ._modules import new_module
        _mode_module = new_module("mindtorch.torch.autograd.anomaly_mode",
                                  "PyTorch's torch.autograd.anomaly_mode, provided by patches/anomaly.py")
        _mode_module.detect_anomaly = detect_anomaly
        _mode_module.set_detect_anomaly = set_detect_anomaly
    patch_attr(autograd, "detect_anomaly", detect_anomaly)
    patch_attr(autograd, "set_detect_anomaly", set_detect_anomaly)
    patch_attr(autograd, "anomaly_mode", _mode_module)
    patch_attr(torch, "is_anomaly_enabled", is_anomaly_enabled)
    patch_attr(torch, "is_anomaly_check_nan_enabled", is_anomaly_check_nan_enabled)
    patch_attr(torch, "set_anomaly_enabled", set_anomaly_enabled)


PATCH = Patch("anomaly", "torch.autograd.detect_anomaly()/set_detect_anomaly(): name the first module whose output "
              "or gradient is non-finite, and the step", "post-import", apply,
              replaces=("torch.autograd.detect_anomaly", "torch.autograd.set_detect_anomaly",
                        "torch.autograd.anomaly_mode", "torch.is_anomaly_enabled", "torch.is_anomaly_check_nan_enabled",
                        "torch.set_anomaly_enabled"),
              effects=("registers the module torch.autograd.anomaly_mode",
                       "while anomaly detection is on: wraps nn.Module.__call__ and Tensor.backward (put back when "
                       "it is turned off)"))
