"""MindSpore's compile cache, on by default and made safe: a graph is loaded only for what it was compiled from.

MindSpore 2.5's compile cache (``enable_compile_cache``) stores the N-th graph a process compiles as
``<folder>/rank_<r>/graph_cache/compile_cache_<N>.mindir`` and, in a later process, loads file N for the N-th graph,
checking only a hash of the entry script's imports. It does not look at the model: measured on this build
(``docs/compile_cache_bug/``-style probe, 2026-11-25), a ``Dense(4, 5)`` graph loaded for a ``Dense(4, 7)`` Cell ran
and returned the ``Dense(4, 5)`` numbers, silently; a ResNet50 cache loaded by a ResNet18 run segfaulted
(2026-11-21). Three layers make it safe here:

1. The folder is keyed by what is fixed before the script runs (:func:`launch_key`): the script's arguments, every
   ``.py`` of its folder, this adapter's ``adapter/`` and ``patches/`` sources, the MindSpore, MindTorch and Python
   versions, and run.py's options that shape graphs (device, mode, AMP level).
2. Every graph compile of the process goes through :class:`_Gate` (it stands in for MindSpore's ``GraphExecutor_``
   singleton, the one place both ``Cell`` and ``jit`` compiles call), which keeps a manifest per folder: for compile
   number N, a digest of what shapes that graph (:func:`signature`: the Cell's class, its parameters' names, shapes
   and dtypes, the input signature, and for the compiled step its generated ``forward_fn`` source and options). If
   graph N's digest is not the manifest's N-th, MindSpore would load a foreign graph: the cache is turned off for the
   rest of the process (``enable_compile_cache=False``, which MindSpore honours from the next compile on), the stale
   folder is deleted (the next run writes a fresh one), and the graph is compiled.
3. The compiled step verifies a loaded graph on its first call against the eager reference step
   (``adapter/compiled_step.py``, ``SiteRuntime._verify_loaded``): loss, gradients, updated weights and BatchNorm
   statistics from the same starting state and batch; on a mismatch it drops the folder, turns the cache off and
   compiles the step.

A second process on the same folder at the same time (two runs of one script) would read files being written: the
folder is locked (``fcntl.flock``) by the first, and the second runs without the cache. Distributed workers
(``WORLD_SIZE`` > 1) run without it.

Location: ``$XDG_CACHE_HOME/mindtorch_adapter/compile/<key>`` (default ``~/.cache/...``). ``run.py
--no-compile-cache`` (or ``ADAPTER_COMPILE_CACHE=0``) turns it off.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import sys
from typing import List, Optional

ENV = "ADAPTER_COMPILE_CACHE"  # "0": off
MANIFEST = "adapter_manifest.json"

_gate: Optional["_Gate"] = None


def launch_key(script: str, script_args: List[str], options: dict) -> str:
    """Hex digest of what is fixed before ``script`` runs: its arguments, the ``.py`` files of its folder, this
    adapter's sources, the MindSpore / MindTorch / Python versions and ``options`` (run.py's, as a dict)."""
    import mindspore
    try:
        from importlib.metadata import version
        mindtorch_version = version("mindtorch")
    except Exception:  # noqa: BLE001 -- not installed as a distribution: its file's mtime stands in
        import mindtorch
        mindtorch_version = str(os.path.getmtime(mindtorch.__file__))
    digest = hashlib.sha256()
    for part in (mindspore.__version__, mindtorch_version, sys.version, json.dumps(options, sort_keys=True),
                 *script_args):
        digest.update(part.encode() + b"\0")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(script)), "*.py")))
    files += sorted(glob.glob(os.path.join(root, "adapter", "*.py")) + glob.glob(os.path.join(root, "patches", "*.py")))
    for name in files:
        digest.update(name.encode() + b"\0")
        with open(name, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()[:16]


def folder_for(key: str) -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mindtorch_adapter", "compile", key)


def _describe(value, depth: int = 0) -> str:
    """A stable text of one compile input: a tensor's shape and dtype, a number's type and value, a sequence's items;
    other objects by their type (their identity is not stable across processes)."""
    import mindspore as ms
    if isinstance(value, ms.Parameter):
        return f"P({value.name},{tuple(value.shape)},{value.dtype})"
    if isinstance(value, ms.Tensor) or type(value).__name__ == "StubTensor":
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
    ``forward_fn`` source and options), and the inputs' shapes and dtypes (:func:`_describe`)."""
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
    and records it after a fresh compile. Everything else is forwarded."""

    def __init__(self, executor, folder: str, lock):
        object.__setattr__(self, "_executor", executor)
        object.__setattr__(self, "folder", folder)
        object.__setattr__(self, "_lock", lock)
        object.__setattr__(self, "active", True)
        object.__setattr__(self, "count", 0)  # graphs compiled with the cache on (MindSpore's compile number)
        object.__setattr__(self, "loaded", set())  # ids of the Cells whose graph came from the folder
        object.__setattr__(self, "dropped", None)  # why the folder was dropped, once it was
        manifest = []
        try:
            with open(os.path.join(folder, MANIFEST)) as f:
                manifest = list(json.load(f))
        except (OSError, ValueError):
            pass
        object.__setattr__(self, "manifest", manifest)

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
        if self.count < len(self.manifest):
            if self.manifest[self.count] != sig:  # MindSpore would load another graph's file for this one
                self.drop(f"graph {self.count} of the cache is not this run's "
                          f"({getattr(type(obj), '__name__', obj)})")
                return self._executor.compile(obj, args, kwargs, phase, *rest)
            if getattr(obj, "loadable", True) is False:  # a compiled step outside its check: compile it
                self.off()
                return self._executor.compile(obj, args, kwargs, phase, *rest)
            self.loaded.add(id(obj))
            self.count += 1
            return self._executor.compile(obj, args, kwargs, phase, *rest)
        try:
            result = self._executor.compile(obj, args, kwargs, phase, *rest)
        except BaseException:
            self.off()  # the numbering after a failed compile is MindSpore's business: no more cache this run
            raise
        self.count += 1
        self.manifest.append(sig)
        _write_json(os.path.join(self.folder, MANIFEST), self.manifest)
        return result

    def off(self) -> None:
        """No cache for the rest of this process (MindSpore honours it from the next compile)."""
        import mindspore as ms
        if self.active:
            self.active = False
            ms.set_context(enable_compile_cache=False)

    def drop(self, why: str) -> None:
        """The folder holds a graph that is not this run's: turn the cache off and delete the folder (the next run
        compiles and writes a fresh one). Says so once on stderr."""
        self.off()
        if self.dropped is None:
            self.dropped = why
            print(f"run.py: compile cache: {why}; compiling instead, and the stale cache "
                  f"({self.folder}) is deleted", file=sys.stderr, flush=True)
            for name in os.listdir(self.folder) if os.path.isdir(self.folder) else ():
                if name != ".lock":
                    path = os.path.join(self.folder, name)
                    shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.remove(path)


def _write_json(path: str, value) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(value, f)
    os.replace(tmp, path)


def enable(script: str, script_args: List[str], options: dict) -> Optional[str]:
    """Turn the checked compile cache on for this process; return its folder, or None when it stays off
    (``ADAPTER_COMPILE_CACHE=0``, a distributed worker, or another process holding the folder)."""
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
    executor = api._cell_graph_executor._graph_executor
    _gate = _Gate(executor if not isinstance(executor, _Gate) else executor._executor, folder, lock)
    api._cell_graph_executor._graph_executor = _gate

    # jit functions made from now on (api._MindsporeFunctionExecutor) take the executor from here: the gate
    real = getattr(api.GraphExecutor_, "__wrapped_class__", api.GraphExecutor_)
    shim = type("GraphExecutor_", (), {"get_instance": staticmethod(lambda: _gate), "__wrapped_class__": real})
    api.GraphExecutor_ = shim
    ms.set_context(enable_compile_cache=True, compile_cache_path=folder)
    return folder


def gate() -> Optional[_Gate]:
    """The active gate, or None when the cache is off (never enabled, or turned off in this process)."""
    return _gate if _gate is not None and _gate.active else None
