"""MindTorch 0.4.0 on mindspore-dev 2.5.0.dev20250119: ``import torch`` raises at import time.

``mindtorch/torch/_register/register_utils.py:get_registed_fn`` looks up an existing graph-mode overload of a
MindSpore ``MultitypeFuncGraph`` (e.g. ``(tuple, Tensor)`` for ``+``) so it can wrap it; this MindSpore build has no
such entry, and the lookup raises ``ValueError: For 'MultitypeFuncGraph', cannot find fn match given types``.
The fix: return a stand-in that raises ``TypeError`` with the same text *when called* (i.e. only if graph-mode code
ever uses that operand combination), so the import completes. Measured: ``docs/facts.md``.
"""
from . import Patch
from ._import_hooks import when_imported

_MODULE = "mindtorch.torch._register.register_utils"


def _fix(register_utils) -> None:
    original = register_utils.get_registed_fn
    if getattr(original, "_adapter_patched", False):
        return

    def get_registed_fn(ops, *type_names):
        try:
            return original(ops, *type_names)
        except ValueError as exc:
            message = str(exc)

            def unsupported(*args, **kwargs):
                raise TypeError(message)
            return unsupported

    get_registed_fn._adapter_patched = True
    register_utils.get_registed_fn = get_registed_fn


def apply() -> None:
    when_imported(_MODULE, _fix)


PATCH = Patch("compat_register_utils",
              "mindtorch 0.4.0 import fix: missing graph-mode overloads raise when used, not at import",
              "pre-import", apply)
