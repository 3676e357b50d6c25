"""torch/torchvision names in a script's AST (nothing runs): import aliases, attribute chains, the qualified name
of ``F.gelu`` (``torch.nn.functional.gelu``), whether MindTorch provides it, and what kind of object a receiver is
(optimizer, lr scheduler, GradScaler).

Shared by ``app/tools/migration_report.py`` (``run.py --report``), ``app/tools/report_risks.py`` (its known risks) and
``app/tools/conformance/inventory.py`` (the API inventory). Moved here from ``app/tools/migration_report.py`` (issue 16:
report_risks and the inventory imported these from it, and it imported them back: a cycle).
"""
from __future__ import annotations

import ast
import importlib
import importlib.machinery
import types
from typing import Dict, List, Optional, Set, Tuple

MINDTORCH_ROOTS = {"torch": "mindtorch.torch", "torchvision": "mindtorch.torchvision"}


def aliases(tree: ast.AST) -> Tuple[Dict[str, str], Set[str]]:
    """(local name -> qualified torch/torchvision name, other names bound by imports). File-wide, scopes merged."""
    torch_names: Dict[str, str] = {}
    others: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                local = alias.asname or top
                if top in MINDTORCH_ROOTS:
                    torch_names[local] = alias.name if alias.asname else top
                else:
                    others.add(local)
        elif isinstance(node, ast.ImportFrom):
            top = (node.module or "").split(".")[0]
            for alias in node.names:
                if alias.name == "*":
                    continue
                local = alias.asname or alias.name
                if node.level == 0 and top in MINDTORCH_ROOTS:
                    torch_names[local] = f"{node.module}.{alias.name}"
                else:
                    others.add(local)
    return torch_names, others


def chain(node: ast.AST) -> Optional[List[str]]:
    """``a.b.c`` -> ["a", "b", "c"]; None when the chain does not start with a plain name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def qualify(node: ast.AST, aliases: Dict[str, str]) -> Optional[str]:
    """The fully qualified torch/torchvision name of an attribute chain (``F.gelu`` -> ``torch.nn.functional.gelu``),
    or None when it is not one."""
    parts = chain(node)
    if not parts or parts[0] not in aliases:
        return None
    return ".".join([aliases[parts[0]]] + parts[1:])


_missing_cache: Dict[str, Optional[str]] = {}


def missing_prefix(qualname: str) -> Optional[str]:
    """The shortest prefix of ``qualname`` (``torch.func.vmap``) that MindTorch does not provide (``torch.func``), or
    None when all of it resolves. ``torch`` is looked up as ``mindtorch.torch`` (``torchvision`` likewise): attributes
    by getattr, submodules by importing MindTorch's module of that name (MindTorch code only).

    Raises:
        ImportError: MindTorch itself does not import (set it up as ``run.py`` does first).
        ValueError: ``qualname`` does not start with ``torch`` or ``torchvision``.
    """
    if qualname in _missing_cache:
        return _missing_cache[qualname]
    parts = qualname.split(".")
    if parts[0] not in MINDTORCH_ROOTS:
        raise ValueError(f"not a torch/torchvision name: {qualname!r}")
    obj = importlib.import_module(MINDTORCH_ROOTS[parts[0]])
    result = None
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
            continue
        except Exception:  # AttributeError, or a lazy attribute that fails: not provided either way
            pass
        if isinstance(obj, types.ModuleType) and hasattr(obj, "__path__"):
            sub = f"{obj.__name__}.{part}"
            try:  # the plain path finder: MindTorch's import hook would print "Fail to import" for a missing one
                if importlib.machinery.PathFinder.find_spec(sub, list(obj.__path__)) is not None:
                    obj = importlib.import_module(sub)
                    continue
            except Exception:  # a MindTorch submodule that fails to import is not provided
                pass
        result = ".".join(parts[:i + 1])
        break
    _missing_cache[qualname] = result
    return result


def clear_cache() -> None:
    """Forget :func:`missing_prefix`'s answers (a patch disabled or added since counts at the next look-up)."""
    _missing_cache.clear()


def receiver_kind(recv: ast.AST, kinds: Dict[str, str]) -> Optional[str]:
    """``optimizer`` / ``scheduler`` / ``scaler`` for the receiver of a method call, from what the file assigned to
    it (``opt = torch.optim.SGD(...)``), else from its name (``self.optimizer``, ``lr_sched``), else None."""
    try:
        text = ast.unparse(recv)
    except Exception:
        return None
    if text in kinds:
        return kinds[text]
    parts = chain(recv)
    if not parts:
        return None
    last = parts[-1].lower()
    if "sched" in last:
        return "scheduler"
    if "scaler" in last:
        return "scaler"
    if "optim" in last or last in ("opt", "opt_g", "opt_d") or last.endswith("_opt"):
        return "optimizer"
    return None


def kind_of_class(qual: str) -> Optional[str]:
    if qual.startswith("torch.optim.lr_scheduler."):
        return "scheduler"
    if qual.startswith("torch.optim.") and qual.split(".")[-1][:1].isupper():
        return "optimizer"
    if qual in ("torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.GradScaler"):
        return "scaler"
    return None
