"""``nn.Module.__call__``: tells the eager bridge (``adapter/tape.py``) that a forward is running.

The first module called with grad mode on opens the PyNative recording; every module called while it is open is
remembered (its parameters receive ``.grad`` at ``backward()``). The module's own ``__call__`` then runs unchanged.
Under ``torch.no_grad()``, the outermost module call runs compiled (``adapter/compiled_forward.py``) unless
``--mode pynative``. Inside an autocast region the outermost module's outputs are cast to float32
(``patches/amp.py``). While recording, outermost calls note how their outputs were made, and inputs made by a model
in an earlier step are recomputed so that gradients reach that model (``adapter/provenance.py``). ``nn.Module.__init__`` registers every module (weakly) so that parameters owned by no module can be told apart.
"""
import functools
import sys

from . import Patch


def apply() -> None:
    from mindtorch.torch.nn.modules.module import Module
    from adapter import tape

    original = Module.__call__
    if getattr(original, "_adapter_patched", False):
        return

    from adapter import backend
    executor = backend.pynative_executor()
    from adapter import compiled_forward, compiled_step, events, provenance
    from adapter.userframe import user_location
    from . import amp
    depth = [0]  # module calls in progress (Python-level): only the outermost one may be compiled

    @functools.wraps(original)
    def __call__(self, *args, **kwargs):
        if depth[0] == 0 and compiled_step.get_mode() != "pynative" and not tape.is_recording() \
                and not executor.enable_grad() and compiled_forward.wants(self, args, kwargs):
            return compiled_forward.call(self, args, lambda: original(self, *args, **kwargs))
        if depth[0] == 0 and events.active("module_call"):
            events.emit("module_call", self)
        if depth[0] == 0:
            caller = sys._getframe(1)
            tape.on_module_call(self, (caller.f_code, caller.f_lineno))
        else:
            tape.on_module_call(self)
        outermost_recorded = depth[0] == 0 and tape.is_recording()
        if outermost_recorded:  # inputs made by a model in an earlier step: recompute them here (provenance.py)
            provenance.substitute(args, kwargs, tape.generation(), lambda: user_location(3))
        depth[0] += 1
        try:
            out = original(self, *args, **kwargs)
        finally:
            depth[0] -= 1
        if depth[0] == 0 and amp.active():  # autocast: outermost module outputs in float32 (patches/amp.py)
            out = amp.cast_outputs_to_float32(out)
        if outermost_recorded:
            provenance.record(self, args, kwargs, out, tape.generation())
        return out

    original_init = Module.__init__

    @functools.wraps(original_init)
    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        tape.track_module(self)

    __call__._adapter_patched = True
    Module.__call__ = __call__
    Module.__init__ = __init__


PATCH = Patch("module_call", "nn.Module.__call__ opens the backward() recording and notes which modules ran",
              "post-import", apply)
