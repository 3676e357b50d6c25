"""``print(model)``: PyTorch's layout of a module tree (nested children indented, repeated ModuleList items folded).

PyTorch's tutorials print their models (``print(model)`` in quickstart_tutorial / buildmodel_tutorial), and users
diff those lines against PyTorch's. MindTorch 0.4.0's ``Module.__repr__`` (``mindtorch/torch/nn/modules/module.py``)
never indents a child's own lines (its ``_addindent`` is defined but unused), so a ``Sequential`` inside a model
printed its items and its closing ``)`` at the parent's depth; it also listed MindTorch's internal MindSpore cells
(``LSTM(\\n4, 8, ...\\n  (lstm_cell): _DynamicLSTMCPUGPU<>\\n)`` where PyTorch prints ``LSTM(4, 8, ...)``), and
``ModuleList`` had no repr of its own (PyTorch >= 2.1 folds equal consecutive items: ``(0-2): 3 x Linear(...)``).

Here, as PyTorch 2.13's ``torch/nn/modules/module.py`` ``Module.__repr__`` and ``container.py``
``ModuleList.__repr__`` (observed against ``.venv-ref``; tests/test_module_repr.py, fixture
tests/fixtures/module_repr.json):

* ``Module.__repr__``: ``Name(`` + the ``extra_repr()`` lines and one ``(key): <child repr, indented by 2>`` line per
  child in ``_modules`` order + ``)``; an ``extra_repr`` of one line and no child stays on one line. Children that
  are not ``torch.nn.Module``s (MindSpore cells MindTorch registers inside its own modules) are left out, a ``None``
  child prints ``None``, as PyTorch's;
* ``ModuleList.__repr__``: equal consecutive item reprs are folded into ``(i-j): n x <repr>``; an empty list is
  ``ModuleList()``.

A module class that defines its own ``__repr__`` (the user's, or MindTorch's ``Parameter``) keeps it.

Replaces: ``torch.nn.Module.__repr__``, ``torch.nn.ModuleList.__repr__``.
"""
from __future__ import annotations

from . import Patch, patch_attr

Module = None  # MindTorch's torch.nn.Module, set by apply()


def _addindent(text: str, spaces: int) -> str:
    """Every line of ``text`` but the first, indented by ``spaces`` blanks (PyTorch's ``_addindent``)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _children(module):
    """``(name, child)`` for the children PyTorch would list: ``torch.nn.Module``s and ``None`` entries."""
    return [(k, v) for k, v in module._modules.items() if v is None or isinstance(v, Module)]


def module_repr(self) -> str:
    """``Name(extra)`` or ``Name(\\n  extra lines\\n  (key): child\\n)``, as PyTorch's ``Module.__repr__``."""
    extra = self.extra_repr()
    extra_lines = extra.split("\n") if extra else []
    child_lines = ["(" + key + "): " + _addindent(repr(child), 2) for key, child in _children(self)]
    lines = extra_lines + child_lines
    text = self._get_name() + "("
    if lines:
        if len(extra_lines) == 1 and not child_lines:
            text += extra_lines[0]
        else:
            text += "\n  " + "\n  ".join(lines) + "\n"
    return text + ")"


def module_list_repr(self) -> str:
    """``ModuleList(\\n  (0-2): 3 x Linear(...)\\n  (3): ReLU()\\n)``: equal consecutive items folded."""
    reprs = [repr(item) for item in self]
    if not reprs:
        return self._get_name() + "()"
    blocks = []  # [start, end, repr]
    for i, r in enumerate(reprs):
        if blocks and blocks[-1][2] == r:
            blocks[-1][1] = i
        else:
            blocks.append([i, i, r])
    lines = []
    for start, end, r in blocks:
        line = f"({start}): {r}" if start == end else f"({start}-{end}): {end - start + 1} x {r}"
        lines.append(_addindent(line, 2))
    return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


def apply() -> None:
    global Module
    from mindtorch.torch import nn
    Module = nn.Module
    patch_attr(nn.Module, "__repr__", module_repr)
    patch_attr(nn.ModuleList, "__repr__", module_list_repr)


NAME = "module_repr"
PATCH = Patch(NAME, "print(model) in PyTorch's layout: nested children indented, MindSpore-internal cells left out, "
                    "equal consecutive ModuleList items folded (3 x Linear(...))",
              "post-import", apply, replaces=("torch.nn.Module.__repr__", "torch.nn.ModuleList.__repr__"))
