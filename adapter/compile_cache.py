"""MindSpore's compile cache, on by default and made safe: a graph is loaded only for what it was compiled from.

MindSpore 2.5's compile cache (``enable_compile_cache``) stores the N-th graph a process compiles as
``<folder>/rank_<r>/graph_cache/compile_cache_<N>.mindir`` and, in a later process, loads file N for the N-th graph,
checking only a hash of the entry script's imports. It does not look at the model: measured on this build
(``docs/compile_cache_bug/``-style probe, 2026-11-25), a ``Dense(4, 5)`` graph loaded for a ``Dense(4, 7)`` Cell ran
and returned the ``Dense(4, 5)`` numbers, silently; a ResNet50 cache loaded by a ResNet18 run segfaulted
(2026-11-21). Three layers make it safe here:

1. The folder is keyed by what is fixed before the script runs (:func:`launch_key`): the script's path and arguments, every
   ``.py`` of its folder, this adapter's ``adapter/``, ``patches/`` and ``app/`` sources, the MindSpore, MindTorch and
   Python versions, and run.py's options that shape graphs (device, mode, AMP level).
2. Every graph compile of the process goes through :class:`_Gate` (it stands in for MindSpore's ``GraphExecutor_``
   singleton, the one place both ``Cell`` and ``jit`` compiles call), which keeps a manifest per folder: for compile
   number N, a digest of what shapes that graph (:func:`signature`: the Cell's class, its parameters' names, shapes
   and dtypes, the input signature, and for the compiled step its generated ``forward_fn`` source and options). If
   graph N's digest is not the manifest's N-th, MindSpore would load a foreign graph: the cache is turned off for the
   rest of the process (``enable_compile_cache=False``, which MindSpore honours from the next compile on), the stale
   folder is deleted (the next run writes a fresh one), and the graph is compiled.
3. The compiled step verifies a loaded graph on its first call against the eager reference step
   (``adapter/step_cache_check.py``, ``verify_loaded``): loss, gradients, updated weights and BatchNorm
   statistics from the same starting state and batch; on a mismatch it drops the folder, turns the cache off and
   compiles the step.

A compiled step that cannot be checked is compiled outside the cache (:meth:`_Gate._outside`), in every run alike,
so that it costs no load and the other graphs keep their numbers: one that draws random numbers (its eager reference
step ran a MindSpore random primitive or a ``numpy.random`` / ``random`` draw,
:func:`adapter.graph_semantics.random_draws`: dropout in training mode, ``F.dropout``, ``torch.randn``; compiled, it
draws other numbers than the reference step, so the check could never pass: before, such a step was loaded, failed,
its folder deleted and recompiled at every run), one whose inputs are recomputed in the graph, one a GradScaler
scales, one DDP averages, and a step's compiles after its first (other input shapes). A step whose loaded graph
failed its check, or could not be checked, is listed in the folder's :data:`UNCACHED` file and compiled outside the
cache from then on (:meth:`_Gate.exclude`).

A second process on the same folder at the same time (two runs of one script) would read files being written: the
folder is locked (``fcntl.flock``) by the first, and the second runs without the cache. Distributed workers
(``WORLD_SIZE`` > 1) run without it.

Location: ``$ADAPTER_COMPILE_CACHE_DIR/<key>`` when set (tests/conftest.py points it at a folder of the test
session), else ``$XDG_CACHE_HOME/mindtorch_adapter/compile/<key>`` (default ``~/.cache/...``). Eviction
(:func:`evict`, at :func:`enable`): the least recently used other folders are deleted while all hold more than
``$ADAPTER_COMPILE_CACHE_MAX_MB`` (2048) MiB or number more than ``$ADAPTER_COMPILE_CACHE_MAX_FOLDERS`` (64); never
one another run holds locked. ``run.py --no-compile-cache`` (or ``ADAPTER_COMPILE_CACHE=0``) turns the cache off.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import sys
import tempfile
from typing import List, Optional

from adapter import patching

ENV = "ADAPTER_COMPILE_CACHE"  # "0": off
DIR_ENV = "ADAPTER_COMPILE_CACHE_DIR"  # the cache root (cache_root), instead of $XDG_CACHE_HOME/...
MAX_MB_ENV = "ADAPTER_COMPILE_CACHE_MAX_MB"  # eviction bound on the folders' total size (evict)
MAX_FOLDERS_ENV = "ADAPTER_COMPILE_CACHE_MAX_FOLDERS"  # eviction bound on their number
MAX_MB, MAX_FOLDERS = 2048, 64
MANIFEST = "adapter_manifest.json"

# What enable() replaces (for --list-patches, patches/listing.py): through adapter/patching.py's patch_attr.
DECLARED = (
    patching.Declared(
        "compile_cache", "every graph compile passes the cache's gate (signature checked against the folder's manifest "
        "before MindSpore loads a file)", "with the compile cache on (default; off: --no-compile-cache, "
        "ADAPTER_COMPILE_CACHE=0, WORLD_SIZE > 1)",
        replaces=("mindspore.common.api._cell_graph_executor._graph_executor", "mindspore.common.api.GraphExecutor_"),
        effects=("mindspore.set_context(enable_compile_cache=True, compile_cache_path=<folder>)",)),
)
UNCACHED = "adapter_uncached.json"  # signatures of graphs compiled outside the cache from now on (_Gate.exclude)

_gate: Optional["_Gate"] = None


def launch_key(script: str, script_args: List[str], options: dict) -> str:
    """Hex digest of what is fixed before ``script`` runs: its path and arguments, the ``.py`` files of its folder, this
    adapter's sources, the MindSpore / MindTorch / Python versions, ``options`` (run.py's, as a dict) and the patches
    ``$ADAPTER_DISABLE_PATCHES`` turns off (a graph traced with a patch is not the graph without it)."""
    import mindspore
    try:
        from importlib.metadata import version
        mindtorch_version = version("mindtorch")
    except Exception:  # noqa: BLE001 -- not installed as a distribution: its file's mtime stands in
        import mindtorch
        mindtorch_version = str(os.path.getmtime(mindtorch.__file__))
    digest = hashlib.sha256()
    disabled = ",".join(sorted({n.strip() for n in os.environ.get("ADAPTER_DISABLE_PATCHES", "").split(",")} - {""}))
    for part in (mindspore.__version__, mindtorch_version, sys.version, json.dumps(options, sort_keys=True),
                 "disabled patches: " + disabled, os.path.abspath(script), *script_args):
        digest.update(part.encode() + b"\0")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(script)), "*.py")))
    files += sorted(glob.glob(os.path.join(root, "adapter", "*.py")) + glob.glob(os.path.join(root, "patches", "*.py"))
                    + glob.glob(os.path.join(root, "app", "*.py")))  # app/: the launcher and bootstrap (issue 32)
    for name in files:
        digest.update(name.encode() + b"\0")
        with open(name, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()[:16]


def cache_root() -> str:
    """The folder that holds one folder per key: ``$ADAPTER_COMPILE_CACHE_DIR`` when set, else
    ``$XDG_CACHE_HOME/mindtorch_adapter/compile`` (``XDG_CACHE_HOME`` defaults to ``~/.cache``)."""
    if os.environ.get(DIR_ENV):
        return os.environ[DIR_ENV]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mindtorch_adapter", "compile")


def folder_for(key: str) -> str:
    return os.path.join(cache_root(), key)


def _describe(value, depth: int = 0) -> str:
    """A stable text of one compile input: a tensor's shape and dtype, a number's type and value, a sequence's items;
    other objects by their type (their identity is not stable across processes)."""
    import mindspore as ms
    from adapter import backend
    if isinstance(value, ms.Parameter):
        return f"P({value.name},{tuple(value.shape)},{value.dtype})"
    if backend.is_tensor(value):
        return f"T({tuple(value.shape)},{value.dtype})"
    if isinstance(value, (bool, int, float, str, type(None))):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, (list, tuple)) and depth < 4:
        return f"{type(value).__name__}[" + ",".join(_describe(v, depth + 1) for v in value) + "]"
    if isinstance(value, dict) and depth < 4:
        return "{" + ",".join(f"{k!r}:{_describe(v, depth + 1)}" for k, v in sorted(value.items(), key=str)) + "}"
    return f"<{type(value).__module__}.{type(value).__qualname__}>"


def signature(obj, args, kwargs=None) -> str:
    """Digest of what shapes the graph of ``obj`` (a Cell or a function) compiled for ``args``: its class (or
    function) name and module, the source of its ``construct`` / body, every parameter's name, shape and dtype (the
    model's and the optimizer's state), ``obj.cache_signature`` when it has one (the compiled step: its generated
    ``forward_fn`` source and options), each sub-Cell's (module's) name, class, training flag and ``extra_repr()``
    (the constants it compiles in: ``Dropout(p=0.5)``, ``LeakyReLU(negative_slope=0.2)``; a compiled forward is
    loaded on this digest alone), and the inputs' shapes and dtypes (:func:`_describe`)."""
    import inspect
    parts = []
    target = obj
    fn = getattr(obj, "construct", None) or obj
    parts.append(f"{getattr(type(target), '__module__', '')}.{getattr(type(target), '__qualname__', '')}")
    parts.append(f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '')}")
    try:
        parts.append(inspect.getsource(fn))
    except (OSError, TypeError):
        pass
    parts.append(str(getattr(obj, "cache_signature", "")))
    cells = getattr(obj, "cells_and_names", None)
    if callable(cells):  # the module tree and what its modules compile in as constants (Dropout's p, training mode)
        try:
            for name, cell in cells():
                extra = getattr(cell, "extra_repr", None) or getattr(cell, "extend_repr", None)
                parts.append(f"{name}:{type(cell).__module__}.{type(cell).__qualname__}:"
                             f"{getattr(cell, 'training', None)}:{extra() if callable(extra) else ''}")
        except Exception:  # noqa: BLE001 -- a Cell that cannot list them: the rest still counts
            parts.append("cells?")
    params = getattr(obj, "parameters_and_names", None)
    if callable(params):
        try:
            parts += [f"{n}:{tuple(p.shape)}:{p.dtype}:{p.requires_grad}" for n, p in params()]
        except Exception:  # noqa: BLE001 -- a Cell that cannot list them: its inputs and source still count
            parts.append("params?")
    parts.append(_describe(tuple(args)))
    parts.append(_describe(dict(kwargs or {})))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


class _Gate:
    """Stands in for MindSpore's ``GraphExecutor_`` singleton: every real compile passes :meth:`compile`, which
    checks the graph's :func:`signature` against the manifest's entry of the same number before MindSpore loads it,
    and records it after a fresh compile. Everything else is forwarded.

    Some graphs are compiled outside the cache (:meth:`_outside`: MindSpore's cache off for that one compile, which
    then neither loads nor writes a file nor advances MindSpore's compile number, measured on this build), in every
    run alike so that the numbering of the others stays the same: a compiled step whose loaded graph could not be
    checked against its eager reference step (its Cell's ``cache_exempt`` says why: it draws random numbers, its
    inputs are recomputed, a GradScaler scales it, DDP averages it), a compiled step's later compiles (other input
    shapes: no reference step to check them against; ``cache_once``), and every graph whose signature is in the
    folder's :data:`UNCACHED` list (a loaded graph that failed its check or could not be checked: :meth:`exclude`)."""

    def __init__(self, executor, folder: str, lock):
        object.__setattr__(self, "_executor", executor)
        object.__setattr__(self, "folder", folder)
        object.__setattr__(self, "_lock", lock)
        object.__setattr__(self, "active", True)
        object.__setattr__(self, "count", 0)  # graphs compiled with the cache on (MindSpore's compile number)
        object.__setattr__(self, "loaded", set())  # ids of the Cells whose graph came from the folder
        object.__setattr__(self, "outside", 0)  # graphs compiled outside the cache (_outside)
        object.__setattr__(self, "n_loaded", 0)  # graphs loaded from the folder
        object.__setattr__(self, "dropped", None)  # why the folder was dropped, once it was
        object.__setattr__(self, "manifest", _read_json(os.path.join(folder, MANIFEST)))
        object.__setattr__(self, "uncached", set(_read_json(os.path.join(folder, UNCACHED))))

    def __getattr__(self, name):
        return getattr(self._executor, name)

    def __call__(self, *args, **kwargs):  # runs a compiled graph (api._CellGraphExecutor._exec_pip)
        return self._executor(*args, **kwargs)

    def __setattr__(self, name, value):
        if name in self.__dict__:
            object.__setattr__(self, name, value)
        else:
            setattr(self._executor, name, value)

    def expects_load(self, obj, args) -> bool:
        """Whether compiling ``obj`` for ``args`` now would load its graph from the folder (a manifest match)."""
        return self.active and self.count < len(self.manifest) and \
            self.manifest[self.count] == signature(obj, args)

    def compile(self, obj, args, kwargs, phase, *rest):
        if not self.active:
            return self._executor.compile(obj, args, kwargs, phase, *rest)
        sig = signature(obj, args, kwargs)
        once = getattr(obj, "cache_once", False)
        later = once and getattr(obj, "_adapter_cache_sig", None) is not None  # a compiled step's later compile
        if not later and once:
            obj._adapter_cache_sig = sig  # for exclude()
        if later or getattr(obj, "cache_exempt", None) or sig in self.uncached:
            return self._outside(obj, args, kwargs, phase, *rest)
        if self.count < len(self.manifest):
            if self.manifest[self.count] != sig:  # MindSpore would load another graph's file for this one
                self.drop(f"graph {self.count} of the cache is not this run's "
                          f"({getattr(type(obj), '__name__', obj)})")
                return self._executor.compile(obj, args, kwargs, phase, *rest)
            if getattr(obj, "loadable", True) is False:  # a compiled step outside its check: compile it
                self.off()
                return self._executor.compile(obj, args, kwargs, phase, *rest)
            self.loaded.add(id(obj))
            self.n_loaded += 1
            self.count += 1
            return self._executor.compile(obj, args, kwargs, phase, *rest)
        try:
            result = self._executor.compile(obj, args, kwargs, phase, *rest)
        except Exception:
            # The numbering after a failed compile is MindSpore's business: no more cache this run. The failure may
            # be the cache's own: a graph holding a PyExecute node (JIT fallback) compiles but cannot be written
            # ("Cannot export a PyExecute CNode in MindIR": dcgan's D step on real data). So the graph is compiled
            # again without the cache, and listed (UNCACHED) so that later runs compile it outside from the start;
            # a graph that does not compile either way raises the uncached compile's error.
            self.off()
            result = self._executor.compile(obj, args, kwargs, phase, *rest)
            self.uncached.add(sig)
            _write_json(os.path.join(self.folder, UNCACHED), sorted(self.uncached))
            return result
        self.count += 1
        self.manifest.append(sig)
        _write_json(os.path.join(self.folder, MANIFEST), self.manifest)
        return result

    def _outside(self, obj, args, kwargs, phase, *rest):
        """Compile with MindSpore's cache off for this one graph (nothing loaded or written, and MindSpore's compile
        number stays where it is: the next graph loads or writes the file this one would have), then on again."""
        import mindspore as ms
        self.outside += 1
        ms.set_context(enable_compile_cache=False)
        try:
            return self._executor.compile(obj, args, kwargs, phase, *rest)
        finally:
            if self.active:
                ms.set_context(enable_compile_cache=True, compile_cache_path=self.folder)

    def off(self) -> None:
        """No cache for the rest of this process (MindSpore honours it from the next compile)."""
        import mindspore as ms
        if self.active:
            self.active = False
            ms.set_context(enable_compile_cache=False)

    def exclude(self, obj, why: str) -> None:
        """``obj`` (a compiled step's Cell, compiled through :meth:`compile`) is not to be loaded from this folder:
        its loaded graph failed the check against the eager reference step, or could not be checked. Its signature
        goes into the folder's :data:`UNCACHED` list, so later runs compile it outside the cache (a step that draws
        random numbers which :func:`adapter.graph_semantics.random_draws` did not see fails its check once, not at
        every run), and the folder's graphs are dropped (:meth:`drop`): the numbering changes, the next run writes
        them afresh."""
        sig = getattr(obj, "_adapter_cache_sig", None)
        self.drop(why)
        if sig is not None:
            self.uncached.add(sig)
            _write_json(os.path.join(self.folder, UNCACHED), sorted(self.uncached))

    def drop(self, why: str) -> None:
        """The folder holds a graph that is not this run's: turn the cache off and delete the folder's graphs and
        manifest (the next run compiles and writes fresh ones; the :data:`UNCACHED` list stays). Says so once on
        stderr."""
        self.off()
        if self.dropped is None:
            self.dropped = why
            print(f"run.py: compile cache: {why}; compiling instead, and the stale cache "
                  f"({self.folder}) is deleted", file=sys.stderr, flush=True)
            for name in os.listdir(self.folder) if os.path.isdir(self.folder) else ():
                if name not in (".lock", UNCACHED):
                    path = os.path.join(self.folder, name)
                    shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.remove(path)


class SpilledArrays:
    """A dict of numpy arrays kept in files (``numpy.save``), not in this process's memory: the host copies of a
    model's state that the compiled step's cache check holds from the reference step to the first compiled call
    (``adapter/step_cache_check.py`` ``_State``; ResNet50 + Adam: weights, BatchNorm statistics and moments ~280 MB per
    copy, which raised a cached re-run's peak RSS from 1629 to 2117 MB, bench/run_bench.py 2026-11-25). The files
    live in a temporary folder beside the cache root (on the cache's file system, not a RAM-backed /tmp), or in the
    system's temporary folder when the cache is off, removed by :meth:`close` (or when the object dies). Keys: ints (``id`` of a Parameter).

    An array whose elements are all equal (an optimizer's moments before its first step, BatchNorm's initial
    statistics) is kept as its shape, dtype and value, not written: at a cached re-run's reference step two thirds of
    ResNet50 + Adam's state (``bench/first_step_bench.py``). Read back, it is a new array of that value."""

    def __init__(self):
        # without the cache (--no-compile-cache: the first-graph check's copies), the system's temporary folder:
        # nothing is written under the cache root
        base = os.path.dirname(cache_root()) if gate() is not None else tempfile.gettempdir()
        os.makedirs(base, exist_ok=True)
        self.folder = tempfile.mkdtemp(prefix="check_state_", dir=base)
        self._keys: set = set()
        self._constant: dict = {}  # key -> (shape, 0-d value of its dtype) of an array whose elements are all equal

    def _path(self, key) -> str:
        return os.path.join(self.folder, f"{int(key)}.npy")

    def __setitem__(self, key, array) -> None:
        import numpy as np
        array = np.asarray(array)
        self._constant.pop(key, None)
        value = _constant_value(array)
        if value is None:
            np.save(self._path(key), array, allow_pickle=False)
        else:
            self._constant[key] = (array.shape, value)
            if key in self._keys and os.path.exists(self._path(key)):
                os.remove(self._path(key))
        self._keys.add(key)

    def __getitem__(self, key):
        import numpy as np
        if key not in self._keys:
            raise KeyError(key)
        if key in self._constant:
            shape, value = self._constant[key]
            return np.broadcast_to(value, shape).copy()  # the same bits
        return np.load(self._path(key), allow_pickle=False)

    def __contains__(self, key) -> bool:
        return key in self._keys

    def get(self, key, default=None):
        return self[key] if key in self._keys else default

    def pop(self, key):
        value = self[key]
        if self._constant.pop(key, None) is None:
            os.remove(self._path(key))
        self._keys.discard(key)
        return value

    def close(self) -> None:
        self._keys.clear()
        self._constant.clear()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 -- at interpreter exit the modules may be gone
            pass


def _constant_value(array):
    """The one value of ``array`` (numpy) when all its elements have the same bits (so -0.0 and 0.0 differ, and an
    all-NaN array is one), as a 0-d array of its dtype; None when they differ, for an empty array, or for a dtype
    of another item size than 1, 2, 4 or 8 bytes."""
    import numpy as np
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}.get(array.dtype.itemsize)
    if not array.size or bits is None or array.dtype.hasobject:
        return None
    flat = np.ascontiguousarray(array).reshape(-1)
    bits_flat = flat.view(bits)
    if not bool((bits_flat[:4096] == bits_flat[0]).all()) or not bool((bits_flat == bits_flat[0]).all()):
        return None  # most fail in the first 4096
    return flat[:1].copy().reshape(())


def _read_json(path: str) -> list:
    try:
        with open(path) as f:
            return list(json.load(f))
    except (OSError, ValueError, TypeError):
        return []


def _write_json(path: str, value) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(value, f)
    os.replace(tmp, path)


def _size(folder: str) -> int:
    total = 0
    for base, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(base, name)).st_size
            except OSError:
                pass
    return total


def _last_used(folder: str) -> float:
    """When a run last used ``folder``: the mtime of its ``.lock`` (:func:`enable` touches it), else the folder's."""
    for path in (os.path.join(folder, ".lock"), folder):
        try:
            return os.stat(path).st_mtime
        except OSError:
            pass
    return 0.0


def _limit(env: str, default: int) -> int:
    try:
        return int(os.environ.get(env, "") or default)
    except ValueError:
        return default


def evict(root: str, keep: str, max_bytes: int, max_folders: int) -> List[str]:
    """Delete the least recently used folders of ``root`` (by :func:`_last_used`) until the rest hold at most
    ``max_bytes`` in all and number at most ``max_folders``; never ``keep`` (this run's) nor a folder another
    process holds locked (running now). Returns the deleted folders."""
    import fcntl
    try:
        names = os.listdir(root)
    except OSError:
        return []
    folders = [os.path.join(root, n) for n in names if os.path.isdir(os.path.join(root, n))]
    folders = [f for f in folders if os.path.abspath(f) != os.path.abspath(keep)]
    folders.sort(key=_last_used)  # least recently used first
    sizes = {f: _size(f) for f in folders}
    total = sum(sizes.values()) + _size(keep)
    count = len(folders) + 1
    deleted = []
    for folder in folders:
        if total <= max_bytes and count <= max_folders:
            break
        try:
            lock = open(os.path.join(folder, ".lock"), "a")
        except OSError:
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another run uses it now
            lock.close()
            continue
        try:
            shutil.rmtree(folder, ignore_errors=True)
        finally:
            lock.close()
        total -= sizes[folder]
        count -= 1
        deleted.append(folder)
    return deleted


def enable(script: str, script_args: List[str], options: dict) -> Optional[str]:
    """Turn the checked compile cache on for this process; return its folder, or None when it stays off
    (``ADAPTER_COMPILE_CACHE=0``, a distributed worker, or another process holding the folder).

    Eviction: the folders of :func:`cache_root` other than this run's are deleted, least recently used first, while
    all of them together hold more than ``$ADAPTER_COMPILE_CACHE_MAX_MB`` (default 2048) MiB or number more than
    ``$ADAPTER_COMPILE_CACHE_MAX_FOLDERS`` (default 64); one that another process holds locked is left alone."""
    global _gate
    import fcntl
    import mindspore as ms
    from mindspore.common import api
    if os.environ.get(ENV) == "0" or int(os.environ.get("WORLD_SIZE", "1") or 1) > 1:
        return None
    folder = folder_for(launch_key(script, script_args, options))
    os.makedirs(folder, exist_ok=True)
    lock = open(os.path.join(folder, ".lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # the same script with the same arguments is running now: it owns the folder
        lock.close()
        return None
    os.utime(os.path.join(folder, ".lock"))  # last used now (evict)
    evict(os.path.dirname(folder), folder, _limit(MAX_MB_ENV, MAX_MB) * 2 ** 20,
          _limit(MAX_FOLDERS_ENV, MAX_FOLDERS))
    from adapter import backend
    executor = backend.graph_executor()
    _gate = _Gate(executor if not isinstance(executor, _Gate) else executor._executor, folder, lock)
    with patching.applying("compile_cache"):
        backend.set_graph_executor(_gate)
        # jit functions made from now on (api._MindsporeFunctionExecutor) take the executor from here: the gate
        real = patching.get_original(api, "GraphExecutor_")
        shim = type("GraphExecutor_", (), {"get_instance": staticmethod(lambda: _gate), "__wrapped_class__": real})
        patching.patch_attr(api, "GraphExecutor_", shim)
    ms.set_context(enable_compile_cache=True, compile_cache_path=folder)
    return folder


def gate() -> Optional[_Gate]:
    """The active gate, or None when the cache is off (never enabled, or turned off in this process)."""
    return _gate if _gate is not None and _gate.active else None


def explain_line() -> Optional[str]:
    """``--explain``'s line on the cache: graphs loaded from the folder, compiled into it, compiled outside it, and
    why it was dropped, if it was; None when the cache was never on in this process."""
    g = _gate
    if g is None:
        return None
    loaded = g.n_loaded
    written = g.count - loaded
    state = "" if g.active else f"; off since {g.dropped}" if g.dropped else "; off for the rest of the run"
    return (f"compile cache {g.folder}: {loaded} graph(s) loaded, {written} compiled and written, {g.outside} "
            f"compiled outside it{state}")
