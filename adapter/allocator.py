"""The C allocator run.py's process uses: jemalloc where MindSpore ships it, else glibc malloc tuned (issue 15).

Why: ~22 % of the extra CPU our graph compile costs over native MindSpore is glibc malloc working on a fragmented heap
(``docs/performance.md``, compile-time history; ``bench/compile_phases_malloc.summary.json``). Preloading the jemalloc that
mindspore-dev 2.5's wheel ships (``mindspore/lib/libjemalloc.so.2``) cut ResNet18's step compile CPU 3.16 -> 2.57 s
with the same losses; where it is not shipped (mindspore 2.10's wheel) the glibc tunable
``glibc.malloc.mxfast=0`` (no fastbins: freed small blocks coalesce) gave about half of that. Neither can take effect
once the process has started (the dynamic loader reads ``LD_PRELOAD`` and glibc reads ``GLIBC_TUNABLES`` at start-up;
``mallopt`` / ``malloc_trim`` in the process measured no gain), so :func:`reexec` replaces run.py's process with the
same interpreter and the same command line (``os.execv``: same pid, open files, stdin/tty, signal dispositions and
exit status as seen by the caller) with the environment set, before anything heavy is imported.

The choice, made by :func:`plan` from the environment only (nothing is imported):

* ``ADAPTER_MALLOC`` = ``auto`` (default): jemalloc when ``<mindspore package>/lib/libjemalloc.so.2`` exists (found
  with ``importlib.util.find_spec``, MindSpore not imported) and is an ELF file for this machine's architecture; else
  ``glibc.malloc.mxfast=0`` appended to ``GLIBC_TUNABLES``. ``jemalloc``: as ``auto`` but nothing when the file is
  missing. ``glibc``: only the tunable. ``system``: change nothing (the allocator ``python SCRIPT`` gets).
* A user's ``LD_PRELOAD`` is kept, ours prepended; one that already preloads an allocator (a name containing
  ``jemalloc``, ``tcmalloc`` or ``mimalloc``) is left alone and nothing is added. A ``GLIBC_TUNABLES`` that already
  sets ``glibc.malloc.mxfast`` is left alone.
* Only on Linux (``sys.platform``), only for a command line that can be replayed (``sys.orig_argv``; not a script
  read from stdin), and once: :data:`MARKER_ENV` records what was added, so the re-executed process, and every child
  that inherits the environment (``--nproc-per-node`` workers and their scheduler, ``mp.spawn`` children, forked
  DataLoader workers, a run.py started by the script) uses the same allocator without another exec.
* The device does not change the choice: the file is MindSpore's own build for this wheel, and Huawei's CANN
  documentation recommends preloading jemalloc on Ascend; GPU and Ascend are not measured here.

Children that must see the environment ``python SCRIPT`` would have had (the real-PyTorch reference run of
``--compare``, ``app/tools/parity/compare.py``) get :func:`environ_without_ours`.

Stdlib only and imports no adapter module: ``run.py`` imports it before ``app.launcher``.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from typing import Dict, List, Mapping, Optional

CHOICE_ENV = "ADAPTER_MALLOC"  # auto (default) | jemalloc | glibc | system
MARKER_ENV = "ADAPTER_MALLOC_SET"  # what reexec added: "jemalloc:<path>" or "glibc:<tunable>"
CHOICES = ("auto", "jemalloc", "glibc", "system")
GLIBC_TUNABLE = "glibc.malloc.mxfast=0"
_ALLOCATOR_NAMES = ("jemalloc", "tcmalloc", "mimalloc")


def mindspore_jemalloc() -> Optional[str]:
    """Path of the ``libjemalloc.so.2`` MindSpore's wheel ships (``<package>/lib/``), or None where it is absent, is
    not an ELF shared object for this interpreter's architecture, or MindSpore is not installed. MindSpore is found
    with ``importlib.util.find_spec`` (its ``__init__`` is not run)."""
    try:
        spec = importlib.util.find_spec("mindspore")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(folder, "lib", "libjemalloc.so.2")
        if os.path.isfile(path) and _same_elf_machine(path):
            return os.path.realpath(path)
    return None


def _elf_header(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return None
    return head if len(head) == 20 and head[:4] == b"\x7fELF" else None


def _same_elf_machine(path: str) -> bool:
    """``path`` is ELF with the class, byte order and machine of the running interpreter (``/proc/self/exe``):
    the dynamic loader skips a preload it cannot use with an error line on every start, so check first."""
    lib, exe = _elf_header(path), _elf_header("/proc/self/exe") or _elf_header(sys.executable)
    if lib is None or exe is None:
        return False
    return lib[4:6] == exe[4:6] and lib[18:20] == exe[18:20]  # EI_CLASS, EI_DATA; e_machine


def _tokens(value: str) -> List[str]:
    return value.replace(" ", ":").split(":") if value else []


def plan(environ: Mapping[str, str], platform: str = sys.platform,
         jemalloc: Optional[str] = None) -> Optional[Dict[str, str]]:
    """The environment variables to set for the chosen allocator (``{name: value}``, :data:`MARKER_ENV` included),
    or None when nothing is to change (not Linux, already done, ``ADAPTER_MALLOC=system``, the user preloads an
    allocator, nothing to add). ``jemalloc``: the library path (default :func:`mindspore_jemalloc`). Raises
    ValueError for an ``ADAPTER_MALLOC`` not in :data:`CHOICES`."""
    choice = (environ.get(CHOICE_ENV) or "auto").strip().lower()
    if choice not in CHOICES:
        raise ValueError(f"{CHOICE_ENV}={environ.get(CHOICE_ENV)!r}: expected one of {', '.join(CHOICES)}")
    if not platform.startswith("linux") or MARKER_ENV in environ or choice == "system":
        return None
    preload = environ.get("LD_PRELOAD", "")
    if any(name in os.path.basename(t) for t in _tokens(preload) for name in _ALLOCATOR_NAMES):
        return None  # the user chose an allocator
    if choice in ("auto", "jemalloc"):
        path = jemalloc if jemalloc is not None else mindspore_jemalloc()
        if path:
            return {"LD_PRELOAD": f"{path}:{preload}" if preload else path, MARKER_ENV: f"jemalloc:{path}"}
        if choice == "jemalloc":
            return None
    tunables = environ.get("GLIBC_TUNABLES", "")
    if any(t.split("=", 1)[0] == "glibc.malloc.mxfast" for t in tunables.split(":")):
        return None
    return {"GLIBC_TUNABLES": f"{tunables}:{GLIBC_TUNABLE}" if tunables else GLIBC_TUNABLE,
            MARKER_ENV: f"glibc:{GLIBC_TUNABLE}"}


def replay_argv() -> Optional[List[str]]:
    """The argv that starts this process again (``sys.orig_argv``, its first element replaced by
    ``sys.executable``, so that a bare ``python`` found on PATH does not resolve to another interpreter), or None
    where it cannot be replayed: no ``sys.orig_argv`` (Python < 3.10), no ``sys.executable``, or the program was
    read from stdin (``python - ...`` / ``python < run.py``)."""
    orig = getattr(sys, "orig_argv", None)
    if not orig or not sys.executable or not sys.argv or sys.argv[0] in ("-", ""):
        return None
    return [sys.executable, *orig[1:]]


def reexec(environ=None) -> None:
    """Replace this process with the same command line under the allocator :func:`plan` picks; return (doing
    nothing) when there is nothing to change or the command line cannot be replayed. ``environ``: the mapping to
    update and pass (default ``os.environ``). Call it before MindSpore (or anything that allocates much) is
    imported. On an exec failure (OSError) the environment is restored and the run goes on with the system
    allocator. An invalid ``ADAPTER_MALLOC`` ends the process with exit status 2 and a message naming it."""
    environ = os.environ if environ is None else environ
    try:
        changes = plan(environ)
    except ValueError as err:
        sys.stderr.write(f"run.py: {err}\n")
        raise SystemExit(2)
    argv = replay_argv() if changes else None
    if not changes or argv is None:
        return
    saved = {name: environ.get(name) for name in changes}
    environ.update(changes)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    try:
        os.execve(argv[0], argv, environ)
    except OSError:
        for name, value in saved.items():
            if value is None:
                environ.pop(name, None)
            else:
                environ[name] = value


def in_effect(environ: Optional[Mapping[str, str]] = None) -> str:
    """What :func:`reexec` set up for this process: ``"jemalloc"`` (and libjemalloc is mapped here, per
    ``/proc/self/maps``), ``"glibc.malloc.mxfast=0"``, or ``"system"`` (nothing added, or jemalloc was asked for but
    is not mapped)."""
    environ = os.environ if environ is None else environ
    marker = environ.get(MARKER_ENV, "")
    if marker.startswith("jemalloc:"):
        return "jemalloc" if _mapped(marker.split(":", 1)[1]) else "system"
    if marker.startswith("glibc:"):
        return marker.split(":", 1)[1]
    return "system"


def _mapped(path: str) -> bool:
    try:
        with open("/proc/self/maps") as f:
            return any(line.rstrip().endswith(path) for line in f)
    except OSError:
        return False


_release = {}  # the resolved function of release_free_memory: {"fn": callable or None}
MALLCTL_ARENAS_ALL = 4096  # jemalloc >= 5: "arena.<i>.purge" with i = MALLCTL_ARENAS_ALL purges every arena


def release_free_memory() -> Optional[str]:
    """Hand the C heap's free pages back to the system, with whichever allocator serves ``malloc`` in this process:
    jemalloc's ``mallctl("arena.4096.purge")`` (every arena's dirty pages, which jemalloc otherwise returns only
    after ``opt.dirty_decay_ms``, 10 s by default), else glibc's ``malloc_trim(0)``. Returns what ran
    (``"jemalloc"``, ``"glibc"``) or None (neither is there: another libc / OS). jemalloc is recognised by its
    ``mallctl`` symbol in the process's global namespace, where a preloaded jemalloc puts it
    (``ctypes.CDLL(None)``); MindSpore's build exports it unprefixed. Resolved once."""
    if "fn" not in _release:
        _release["fn"] = _resolve_release()
    found = _release["fn"]
    if found is None:
        return None
    kind, fn = found
    if kind == "jemalloc":
        fn(b"arena.%d.purge" % MALLCTL_ARENAS_ALL, None, None, None, 0)
    else:
        fn(0)
    return kind


def _resolve_release():
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # deferred: only a process that trims needs it
    try:
        mallctl = ctypes.CDLL(None).mallctl
    except (OSError, AttributeError):
        mallctl = None
    if mallctl is not None:
        mallctl.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        mallctl.restype = ctypes.c_int
        return "jemalloc", mallctl
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return "glibc", trim


def environ_without_ours(environ: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """A copy of ``environ`` (default ``os.environ``) without what :func:`reexec` added (our ``LD_PRELOAD`` entry,
    our ``GLIBC_TUNABLES`` entry, :data:`MARKER_ENV`): the environment ``python SCRIPT`` would have had, for a child
    that is not ours (``--compare``'s real-PyTorch reference run). The user's own entries stay."""
    out = dict(os.environ if environ is None else environ)
    marker = out.pop(MARKER_ENV, "")
    kind, _, added = marker.partition(":")
    name = {"jemalloc": "LD_PRELOAD", "glibc": "GLIBC_TUNABLES"}.get(kind)
    if name and added and name in out:
        rest = list(_tokens(out[name]) if name == "LD_PRELOAD" else out[name].split(":"))
        if added in rest:
            rest.remove(added)
        rest = [t for t in rest if t]
        if rest:
            out[name] = ":".join(rest)
        else:
            del out[name]
    return out
