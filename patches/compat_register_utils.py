"""MindTorch 0.4.0 on mindspore-dev 2.5.0.dev20250119: ``import torch`` raises at import time.

``mindtorch/torch/_register/register_utils.py:get_registed_fn`` looks up an existing graph-mode overload of a
MindSpore ``MultitypeFuncGraph`` (e.g. ``(tuple, Tensor)`` for ``+``) so it can wrap it; this MindSpore build has no
such entry, and the lookup raises ``ValueError: For 'MultitypeFuncGraph', cannot find fn match given types``.
The fix: return a stand-in that raises ``TypeError`` with the same text *when called* (i.e. only if graph-mode code
ever uses that operand combination), so the import completes. Measured: ``docs/facts.md``.

Replaces: ``mindtorch.torch._register.register_utils.get_registed_fn`` (an internal of MindTorch, replaced by an
import hook the moment that module has been executed, before its callers use it).
"""
import sys

from . import Patch, get_original, patch_attr
from ._import_hooks import when_imported

_MODULE = "mindtorch.torch._register.register_utils"


def get_registed_fn(ops, *type_names):
    """MindTorch's ``get_registed_fn(ops, *type_names)``; where it raises ValueError (no such overload), a function
    that raises ``TypeError`` with that message when called."""
    original = get_original(sys.modules[_MODULE], "get_registed_fn")
    try:
        return original(ops, *type_names)
    except ValueError as exc:
        message = str(exc)

        def unsupported(*args, **kwargs):
            raise TypeError(message)
        return unsupported


def _fix(register_utils) -> None:
    patch_attr(register_utils, "get_registed_fn", get_registed_fn)


def apply() -> None:
    when_imported(_MODULE, _fix)


PATCH = Patch("compat_register_utils",
              "mindtorch 0.4.0 import fix: missing graph-mode overloads raise when used, not at import",
              "pre-import", apply, replaces=(f"{_MODULE}.get_registed_fn",),
              effects=(f"import hook: patches {_MODULE} right after it is executed",))
