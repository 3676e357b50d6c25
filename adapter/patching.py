"""Reversible, self-describing attribute patches: :func:`patch_attr` and its bookkeeping.

Every patch in ``patches/`` replaces attributes of MindTorch, MindSpore or numpy objects through
:func:`patch_attr`, which records the original, so that

* a patch applied twice wraps the original, not its own wrapper (:func:`get_original` returns the pre-patch value);
* tests can undo patches (:func:`restore`) and ask what is patched (:func:`is_patched`, :func:`records`);
* a patch may wrap what an earlier patch installed (``generator`` wraps ``random_draws``' ``torch.rand``):
  :func:`get_replaced` gives each patch the value *it* replaced, so applying it twice still wraps that value;
* ``--list-patches`` and ``--report`` say which patch replaced which name, from the records and from each patch's
  declared targets (``Patch.replaces``), so they cannot drift from the code.

The adapter's runtime replaces a few attributes itself, outside ``patches/``: conditionally (the compile cache's
gate in front of MindSpore's graph executor, ``adapter/compile_cache.py``) or for a scope (while a step compiles,
``adapter/graph_semantics.py``). Those go through :func:`patch_attr` (under :class:`applying`) or :func:`swapped`, and
each module declares them in a :class:`Declared` (``DECLARED``), which ``--list-patches`` lists after the patches.

This module is a leaf of ``adapter/`` (standard library only): ``patches/`` and the runtime both use it.

Model: gevent's ``gevent.monkey`` (``patch_item`` saves the original, ``get_original``, ``is_object_patched``).

Target names (``Patch.replaces``) are dotted paths as a PyTorch user writes them: ``"torch.Tensor.backward"``,
``"torch.nn.functional.embedding"``; ``torch``/``torchvision`` stand for MindTorch's ``mindtorch.torch``/
``mindtorch.torchvision`` (what ``import torch`` gives under ``run.py``); other roots (``mindspore.``, ``numpy.``)
are what they say. A trailing ``.*`` (``"torch.nn.Parameter.*"``) declares names computed at start-up on that owner.
:func:`resolve_target` turns a path into ``(owner, name)``.
"""
from __future__ import annotations

import contextlib
import dataclasses
import importlib
import sys
import types
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

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
        stacked: later patches that replaced it again (each wrapping the previous replacement), name -> the value
            that patch replaced (:func:`get_replaced`).
    """
    owner: Any
    name: str
    original: Any
    raw: Any
    patch: Optional[str]
    stacked: Dict[str, Any] = dataclasses.field(default_factory=dict)


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
    elif _current_patch[0] is not None and _current_patch[0] != record.patch:
        record.stacked.setdefault(_current_patch[0], getattr(owner, name, None))
    setattr(owner, name, new)
    _installed_names.clear()
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


def get_replaced(owner: Any, name: str, patch: str) -> Any:
    """The value of ``owner.<name>`` that the patch named ``patch`` replaced: the original when that patch was the
    first to replace it, the earlier patch's replacement when it was stacked on one (``patches/generator.py`` wraps
    ``patches/random_draws.py``'s ``torch.rand``), the current value when ``patch`` has not replaced it yet.

    For a patch that wraps whatever earlier patches installed: :func:`get_original` would skip their layers, the
    current value would be its own wrapper on a second apply. Raises AttributeError when the attribute is missing."""
    record = _records.get(_key(owner, name))
    if record is not None:
        if record.patch == patch:
            return record.original
        if patch in record.stacked:
            return record.stacked[patch]
    return getattr(owner, name)


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
    _installed_names.clear()
    return len(keys)


_installed_names: Dict[int, Tuple[str, str]] = {}  # id(function) -> (module, name); emptied when records change


def installed_name(obj: Any) -> Optional[Tuple[str, str]]:
    """``(module, name)`` under which :func:`patch_attr` installed the function ``obj`` on a module, when ``obj``
    cannot be found under its own ``__module__``/``__qualname__``; else None.

    A replacement function is a closure (``_make_activation.<locals>.relu``) or carries the replaced function's
    names (``functools.wraps``) while living on another module (``torch.linalg.norm`` wraps
    ``mindtorch.torch.linalg.linalg.norm``). Pickle writes a function as a global by its own names and checks that
    the names lead back to it, so a module holding a replaced function as an attribute (PyTorch's
    ``TransformerEncoderLayer`` keeps ``self.activation = F.relu``) could not be saved whole; the name it was
    installed under leads back to it (``mindtorch.torch.nn.functional.relu``). Several names: the one on the
    module the replaced function came from, else the first installed. ``obj`` of another type: None."""
    if not isinstance(obj, types.FunctionType):
        return None
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    found = module
    for part in str(getattr(obj, "__qualname__", "")).split("."):
        found = getattr(found, part, None)
    if found is obj:
        return None
    if not _installed_names:
        for record in _records.values():
            owner = record.owner
            if not isinstance(owner, types.ModuleType):
                continue
            value = getattr(owner, record.name, None)
            if not isinstance(value, types.FunctionType):
                continue
            home = getattr(record.original, "__module__", None) == owner.__name__
            if id(value) not in _installed_names or home:
                _installed_names[id(value)] = (owner.__name__, record.name)
    return _installed_names.get(id(obj))


def records(patch: Optional[str] = None) -> List[Record]:
    """The live records, in the order they were made; only those ``patch`` replaced (first or stacked) when given."""
    return [r for r in _records.values() if patch is None or r.patch == patch or patch in r.stacked]


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


@dataclasses.dataclass(frozen=True)
class Declared:
    """A replacement the adapter's runtime makes itself (not a registered patch), for ``--list-patches``.

    Attributes:
        name: short identifier (the adapter module, or module:concept).
        summary: one line, what it makes work.
        when: when it is in place (``"with the compile cache on (default)"``, ``"while a step compiles"``).
        replaces: dotted target names as in ``Patch.replaces`` (``.*``: names computed at run time on that owner).
        effects: anything else it does, one short phrase each.
    """
    name: str
    summary: str
    when: str
    replaces: Tuple[str, ...] = ()
    effects: Tuple[str, ...] = ()


@contextlib.contextmanager
def swapped(items: Iterable[Tuple[Any, str, Any]]) -> Iterator[None]:
    """Within the context, ``owner.<name> = new`` for each ``(owner, name, new)``; on exit each gets back the value
    it had on entry (a patch's wrapper stays; :func:`restore` would go back to the pre-patch original instead).

    For the runtime's scoped replacements (``adapter/graph_semantics.py``), which its module declares in a
    :class:`Declared`. Not re-entrant for the same attribute."""
    items = list(items)
    saved = [(owner, name, _own(owner).get(name, _MISSING)) for owner, name, _ in items]
    for owner, name, new in items:
        setattr(owner, name, new)
    try:
        yield
    finally:
        for owner, name, raw in reversed(saved):
            if raw is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, raw)


def _own(owner: Any) -> Dict[str, Any]:
    """``vars(owner)`` (a class's raw entries: a staticmethod stays one), or ``{}`` for an object without one."""
    try:
        return vars(owner)
    except TypeError:
        return {}
