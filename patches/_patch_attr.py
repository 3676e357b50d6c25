"""Reversible, self-describing attribute patches: :func:`patch_attr` and its bookkeeping.

Every patch in ``patches/`` replaces attributes of MindTorch, MindSpore or numpy objects through
:func:`patch_attr`, which records the original, so that

* a patch applied twice wraps the original, not its own wrapper (:func:`get_original` returns the pre-patch value);
* tests can undo patches (:func:`restore`) and ask what is patched (:func:`is_patched`, :func:`records`);
* ``--list-patches`` and ``--report`` say which patch replaced which name, from the records and from each patch's
  declared targets (``Patch.replaces``), so they cannot drift from the code.

Model: gevent's ``gevent.monkey`` (``patch_item`` saves the original, ``get_original``, ``is_object_patched``).

Target names (``Patch.replaces``) are dotted paths as a PyTorch user writes them: ``"torch.Tensor.backward"``,
``"torch.nn.functional.embedding"``; ``torch``/``torchvision`` stand for MindTorch's ``mindtorch.torch``/
``mindtorch.torchvision`` (what ``import torch`` gives under ``run.py``); other roots (``mindspore.``, ``numpy.``)
are what they say. A trailing ``.*`` (``"torch.nn.Parameter.*"``) declares names computed at start-up on that owner.
:func:`resolve_target` turns a path into ``(owner, name)``.
"""
from __future__ import annotations

import dataclasses
import importlib
from typing import Any, Dict, List, Optional, Tuple

_MISSING = object()

# Module roots a target path may start with, and the module they stand for under run.py.
_ROOTS = {"torch": "mindtorch.torch", "torchvision": "mindtorch.torchvision"}


@dataclasses.dataclass
class Record:
    """One patched attribute.

    Attributes:
        owner: the object whose attribute was replaced (a class, a module, an instance).
        name: the attribute name.
        original: ``getattr(owner, name)`` before the first patch (what a wrapper calls); ``None`` if it had none.
        raw: ``owner.__dict__[name]`` before the first patch (a ``staticmethod``/``property`` stays one), or the
            private ``_MISSING`` marker when the attribute was inherited or absent (then :func:`restore` deletes it).
        patch: the name of the patch that installed it (``patches.install`` sets it), or ``None`` outside install.
    """
    owner: Any
    name: str
    original: Any
    raw: Any
    patch: Optional[str]


_records: Dict[Tuple[int, str], Record] = {}
_current_patch: List[Optional[str]] = [None]


def _key(owner: Any, name: str) -> Tuple[int, str]:
    return id(owner), name


def patch_attr(owner: Any, name: str, new: Any) -> Any:
    """Set ``owner.<name> = new``, remembering the original the first time; returns the original.

    Safe to call again for the same attribute (a patch applied twice): the recorded original stays the very
    first one, so ``get_original`` never returns one of our own replacements.
    """
    key = _key(owner, name)
    record = _records.get(key)
    if record is None:
        try:
            own = vars(owner)
        except TypeError:  # no __dict__ (slots)
            own = {}
        raw = own[name] if name in own else _MISSING
        record = Record(owner, name, getattr(owner, name, None), raw, _current_patch[0])
        _records[key] = record
    setattr(owner, name, new)
    return record.original


def get_original(owner: Any, name: str, default: Any = _MISSING) -> Any:
    """The value of ``owner.<name>`` before any :func:`patch_attr`, or the current one if it was never patched.

    Raises AttributeError when neither exists and no ``default`` is given."""
    record = _records.get(_key(owner, name))
    if record is not None:
        return record.original
    if default is _MISSING:
        return getattr(owner, name)
    return getattr(owner, name, default)


def is_patched(owner: Any, name: str) -> bool:
    """Whether ``owner.<name>`` was replaced by :func:`patch_attr` (and not restored since)."""
    return _key(owner, name) in _records


def restore(owner: Any = None, name: Optional[str] = None) -> int:
    """Put back originals: one attribute (``owner`` and ``name``), all of one owner (``owner`` only), or every
    patched attribute (no arguments), newest first. Returns how many were restored. For tests: the adapter itself
    never un-patches."""
    keys = [k for k, r in _records.items()
            if (owner is None or r.owner is owner) and (name is None or r.name == name)]
    for key in reversed(keys):
        record = _records.pop(key)
        if record.raw is _MISSING:
            try:
                delattr(record.owner, record.name)
            except AttributeError:
                pass
        else:
            setattr(record.owner, record.name, record.raw)
    return len(keys)


def records(patch: Optional[str] = None) -> List[Record]:
    """The live records, in the order they were made; only those of ``patch`` when given."""
    return [r for r in _records.values() if patch is None or r.patch == patch]


def current_patch() -> Optional[str]:
    """The name of the patch being applied (inside :class:`applying`), else None."""
    return _current_patch[0]


class applying:
    """Context manager: patch_attr calls inside are attributed to the patch named ``name`` (used by install, and by
    ``patches/_import_hooks.py`` for callbacks that run at a later import)."""

    def __init__(self, name: Optional[str]):
        self.name = name

    def __enter__(self):
        self.previous = _current_patch[0]
        _current_patch[0] = self.name

    def __exit__(self, *exc):
        _current_patch[0] = self.previous
        return False


def resolve_target(path: str) -> Tuple[Any, str]:
    """``"torch.Tensor.backward"`` -> ``(mindtorch.torch.Tensor, "backward")``: imports the longest importable
    module prefix (``torch``/``torchvision`` mapped to MindTorch's), then follows attributes.

    A trailing ``.*`` returns ``(owner, "*")``. Raises ImportError/AttributeError when the owner does not exist.
    """
    parts = path.split(".")
    if len(parts) < 2:
        raise ValueError(f"patch target {path!r} is not a dotted attribute path")
    root = _ROOTS.get(parts[0], parts[0])
    names = root.split(".") + parts[1:]
    owner_names, attr = names[:-1], names[-1]
    module = None
    for i in range(len(owner_names), 0, -1):
        try:
            module = importlib.import_module(".".join(owner_names[:i]))
        except ImportError:
            continue
        owner = module
        for part in owner_names[i:]:
            owner = getattr(owner, part)
        return owner, attr
    raise ImportError(f"patch target {path!r}: no importable module prefix")
