"""MindSpore's graph parser treats installed packages as third-party code even when the venv is inside the project.

MindSpore 2.5's parser decides per module whether a function called in a compiled function is compiled into the
graph (user code) or run by the interpreter (a third-party library: numpy, random, ...):
``mindspore/_extends/parse/parser.py``, ``ThirdPartyLibraryChecker.is_third_party_module``. It asks first whether
the module's real path *starts with* the top-level package path of the working directory, and only then whether
the path contains ``site-packages``. With the common layout ``project/.venv`` and ``cd project``, every installed
package (numpy included) starts with the project path and is compiled as user code: ``np.random.beta(...)`` in a
training step then failed to compile with "Unsupported exception type: HostRandomDraw" (our host-draw detector's
exception compiled into the graph) instead of being found as a host random draw, and a script's behaviour depended
on where its venv lives. Measured: tests/fixtures/fallback_kinds.py:111 gave fallback kind compile-error with
``cwd=/work/main`` and ``/work/main/.venv``, host-random-draw with the venv outside the working directory.

Here a module whose real path has a ``site-packages`` (or ``dist-packages``) component is third-party, as MindSpore
decides for a venv outside the working directory, unless ``MS_JIT_MODULES`` names it (MindSpore's own opt-in, kept)
or it is PyTorch model code: it imports ``torch`` (a module-level name bound to a MindTorch module; MindSpore and
MindTorch themselves excepted). Such a library (timm) is compiled as the user's own code, as MindSpore 2.10 compiles
every installed package not on its list: as third-party code, ``model(x)`` of a ``timm.create_model`` ResNet failed
to compile ("the inputs should be constant", at ``self.forward_features(x)``, timm/models/resnet.py:808, measured on
2.5-dev with the venv inside and outside the working directory) and every step ran in PyNative;
MindSpore's checks run unchanged for every other module. Feature-detected: a no-op when the parser has no such checker,
and MindSpore's own answer where its checker has no working-directory rule (no ``user_workspace_dir``): MindSpore
2.10's checker (``mindspore/graph/_parse/jit_fallback_modules/check_utils.py``) no longer looks at the working
directory; it compiles installed packages as user code unless they are on its list of third-party modules (numpy,
scipy, ...), and MindSpore itself is never third-party. This patch's rule there made every installed module
third-party, MindSpore's own ``Tensor.astype`` included: a compiled optimizer step failed with "The
pointer[func_graph] is null".

Replaces: ``mindspore._extends.parse.parser.third_party_checker.is_third_party_module`` (an attribute of the
checker instance the parser consults).
"""
import os
import types

from . import Patch, get_original, patch_attr

_INSTALLED_DIRS = ("site-packages", "dist-packages")


def _checker():
    """The parser's module-global ThirdPartyLibraryChecker, or None where this MindSpore has none."""
    from adapter import backend
    parser = backend.internal("parser")
    return getattr(parser, "third_party_checker", None)


def _torch_model_code(module) -> bool:
    """Whether an installed ``module`` imports torch (MindTorch): a module-level name bound to a MindTorch module
    (``import torch``, ``from torch import nn``). MindSpore and MindTorch themselves: False."""
    if module.__name__.split(".")[0] in ("mindspore", "mindtorch"):
        return False
    return any(isinstance(v, types.ModuleType) and (v.__name__ + ".").startswith("mindtorch.")
               for v in list(vars(module).values()))


def is_third_party_module(module) -> bool:
    """MindSpore's ``is_third_party_module``, with installed packages third-party wherever the venv lives."""
    checker = _checker()
    original = get_original(checker, "is_third_party_module")
    path = getattr(module, "__file__", None)
    if path and hasattr(checker, "user_workspace_dir"):  # only where MindSpore's rule looks at the working directory
        leftmost = module.__name__.split(".")[0]
        parts = os.path.realpath(path).split(os.path.sep)
        if any(d in parts for d in _INSTALLED_DIRS) and leftmost not in checker.get_jit_modules():
            return not _torch_model_code(module)
    return original(module)


def apply() -> None:
    checker = _checker()
    if checker is not None and hasattr(checker, "is_third_party_module"):
        patch_attr(checker, "is_third_party_module", is_third_party_module)


PATCH = Patch("jit_third_party", "installed packages (numpy, ...) stay third-party code for the graph "
                                 "parser when the venv is inside the working directory; torch model "
                                 "libraries (timm) are compiled as user code",
              "post-import", apply,
              replaces=("mindspore._extends.parse.parser.third_party_checker.is_third_party_module",))
