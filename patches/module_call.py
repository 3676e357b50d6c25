"""``nn.Module.__call__``: tells the eager bridge (``adapter/tape.py``) that a forward is running.

The first module called with grad mode on opens the PyNative recording; every module called while it is open is
remembered (its parameters receive ``.grad`` at ``backward()``). The module's own ``__call__`` then runs unchanged.
Under ``torch.no_grad()``, the outermost module call runs compiled (``adapter/compiled_forward.py``) unless
``--mode pynative``. Inside an autocast region the outermost module's outputs are cast to float32
(``patches/amp.py``). While recording, outermost calls note how their outputs were made, and inputs made by a model
in an earlier step are recomputed so that gradients reach that model (``adapter/provenance.py``). A call that
opened the recording and raises discards it (a skipped bad batch, an out-of-memory retry: the next forward records
afresh, as PyTorch forgets a failed forward's graph). ``nn.Module.__init__`` registers every module (weakly) so
that parameters owned by no module can be told apart.

Replaces: ``torch.nn.Module.__call__``, ``torch.nn.Module.__init__``.
"""
import functools
import sys

from . import Patch, get_original, patch_attr

# Bound by apply() (Module.__call__ is the hottest path here: no lookups per call beyond these globals).
_original_call = _original_init = None
_executor = tape = compiled_forward = compiled_step = events = provenance = user_location = amp = None
_depth = [0]  # module calls in progress (Python-level): only the outermost one may be compiled


def __call__(self, *args, **kwargs):
    """``nn.Module.__call__``: MindTorch's, with the recording bookkeeping of the module docstring."""
    original = _original_call
    if _depth[0] == 0 and compiled_step.get_mode() != "pynative" and not tape.is_recording() \
            and not _executor.enable_grad() and compiled_forward.wants(self, args, kwargs):
        return compiled_forward.call(self, args, lambda: original(self, *args, **kwargs))
    if _depth[0] == 0 and events.active("module_call"):
        events.emit("module_call", self)
    if _depth[0] == 0:
        caller = sys._getframe(1)
        while caller.f_globals.get("__name__") == "patches.torch_errors":  # its Module.__call__ wrapper: the user's
            caller = caller.f_back  # line is the one that called it (one marker per place: adapter/tape.py)
        opened = tape.on_module_call(self, (caller.f_code, caller.f_lineno))
    else:
        opened = tape.on_module_call(self)
    outermost_recorded = _depth[0] == 0 and tape.is_recording()
    if outermost_recorded:  # inputs made by a model in an earlier step: recompute them here (provenance.py)
        args, kwargs = provenance.substitute(args, kwargs, tape.generation(), lambda: user_location(3))
    _depth[0] += 1
    try:
        out = original(self, *args, **kwargs)
    except BaseException:
        if opened:  # the call that opened the recording raised: PyTorch forgets the failed forward's graph
            tape.discard()
        raise
    finally:
        _depth[0] -= 1
    if _depth[0] == 0 and amp.active():  # autocast: outermost module outputs in float32 (patches/amp.py)
        out = amp.cast_outputs_to_float32(out)
    if outermost_recorded:
        provenance.record(self, args, kwargs, out, tape.generation())
    return out


def __init__(self, *args, **kwargs):
    """``nn.Module.__init__``: MindTorch's, then the module is registered (weakly) with the eager bridge."""
    _original_init(self, *args, **kwargs)
    tape.track_module(self)


def apply() -> None:
    global _original_call, _original_init, _executor, tape, compiled_forward, compiled_step, events
    global provenance, user_location, amp
    from mindtorch.torch.nn.modules.module import Module
    from adapter import backend
    _executor = backend.pynative_executor()
    from adapter import compiled_forward, compiled_step, events, provenance, tape
    from adapter.userframe import user_location
    from . import amp

    _original_call = get_original(Module, "__call__")
    _original_init = get_original(Module, "__init__")
    functools.update_wrapper(__call__, _original_call)
    functools.update_wrapper(__init__, _original_init)
    patch_attr(Module, "__call__", __call__)
    patch_attr(Module, "__init__", __init__)


PATCH = Patch("module_call", "nn.Module.__call__ opens the backward() recording and notes which modules ran",
              "post-import", apply, replaces=("torch.nn.Module.__call__", "torch.nn.Module.__init__"))
