"""TorchScript's Python-side markers (``torch.jit.script``, ``ignore``, ``unused``, ``annotate``,
``torch.jit.annotations``) as PyTorch behaves when the code runs as ordinary Python.

Libraries mark their code for TorchScript (timm 1.0.31: ``@torch.jit.ignore`` 367 times, ``torch.jit.script`` on a
norm layer, ``from torch.jit.annotations import List`` in ``timm/models/densenet.py``). MindTorch 0.4.0 has no
``torch.jit.annotations`` (``import timm`` failed: ``ModuleNotFoundError: KeyError('torch.jit.annotations')``), its
``ignore`` logs a warning at every use, its ``unused`` is missing from ``torch.jit``, and its ``script`` wraps the
function in ``mindspore.jit`` (a MindSpore graph compiled on its own, inside our compiled step or outside it).

There is no TorchScript compiler here: run.py compiles the whole training step instead. So each marker does what
PyTorch's does for code that is not scripted (PyTorch 2.13 ``torch/_jit_internal.py``, ``torch/jit/_script.py``):

* ``ignore(fn)`` / ``ignore(drop=...)`` and ``unused(fn)`` return the function (``unused`` of a property: the
  property); nothing is logged.
* ``annotate(the_type, the_value)`` returns ``the_value``.
* ``script(obj)`` returns ``obj`` itself: a function or module then runs as the Python it is, with the same values
  PyTorch's scripted one gives. What only a ScriptModule / ScriptFunction has (``.save``, ``.code``, ``.graph``)
  is not there (AttributeError at its use); ``torch.jit.save`` of it raises (MindTorch has none).
* ``torch.jit.annotations``: the typing names PyTorch's module exports (``List``, ``Tuple``, ``Dict``,
  ``Optional``, ``Union``, ``Any``, ``BroadcastingList1..3``), for ``from torch.jit.annotations import List``.

Replaces: ``torch.jit.script``, ``torch.jit.ignore``, ``torch.jit.annotate`` (MindTorch has none),
``torch.jit.unused`` (in ``torch.jit._jit_internal``, not exported by MindTorch), ``torch.jit.annotations`` (a module).
"""
from __future__ import annotations

import typing

from . import Patch, patch_attr


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``torch.jit.script`` for code that runs as Python: ``obj`` (a function, method or ``nn.Module``) unchanged.

    PyTorch compiles ``obj`` to TorchScript; its values are those of the Python code, which run.py runs (and
    compiles with the training step). ScriptModule-only members (``save``, ``code``, ``graph``) are absent."""
    return obj


def ignore(drop=False, **kwargs):
    """``@torch.jit.ignore`` and ``@torch.jit.ignore(drop=...)``: the decorated function, unchanged."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """``@torch.jit.unused``: the function (or property), unchanged."""
    return fn


def annotate(the_type, the_value):
    """``torch.jit.annotate(the_type, the_value)``: ``the_value`` (a type hint for the TorchScript compiler)."""
    return the_value


def _annotations_module():
    from ._modules import new_module
    mod = new_module("mindtorch.torch.jit.annotations",
                     "torch.jit.annotations (patches/torchscript.py): the typing names PyTorch's module exports")
    for name in ("Any", "Dict", "List", "Optional", "Tuple", "Union"):
        setattr(mod, name, getattr(typing, name))
    # PyTorch: BroadcastingListN[T] is a T or a list of N Ts; as a Python annotation it reads as List[T]
    mod.BroadcastingList1 = mod.BroadcastingList2 = mod.BroadcastingList3 = typing.List
    return mod


_ANNOTATIONS = None


def apply() -> None:
    global _ANNOTATIONS
    import mindtorch.torch.jit as jit
    if _ANNOTATIONS is None:
        _ANNOTATIONS = _annotations_module()
    patch_attr(jit, "annotations", _ANNOTATIONS)
    patch_attr(jit, "script", script)
    patch_attr(jit, "ignore", ignore)
    patch_attr(jit, "unused", unused)
    patch_attr(jit, "annotate", annotate)


PATCH = Patch("torchscript", "torch.jit.script/ignore/unused/annotate as for unscripted PyTorch code (no "
                             "TorchScript: the Python runs, run.py compiles the step); torch.jit.annotations",
              "post-import", apply,
              replaces=("torch.jit.script", "torch.jit.ignore", "torch.jit.unused", "torch.jit.annotate",
                        "torch.jit.annotations"),
              effects=("sys.modules['mindtorch.torch.jit.annotations'] (import torch.jit.annotations)",))
