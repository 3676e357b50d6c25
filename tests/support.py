"""Shared test support: fixture paths, reference loading, the cases/reference/ours trio, and ``run.py`` in a subprocess.

**Paths.** :data:`ROOT` (the project root) and :data:`FIXTURES` (``tests/fixtures``); :func:`fixture_path` joins under
it. A test imports them from here instead of rebuilding them from ``__file__``.

**References.** A recorded reference is a JSON file in ``tests/fixtures`` (recorded under real PyTorch with
``scripts/record_reference.py NAME``); :func:`load_reference` reads it, or one key of it.

**Trios.** Many tests compare one fixture module's function run under real PyTorch (the reference, recorded) with the
same function run here under MindTorch (ours): :func:`cases_module` imports ``tests/fixtures/<name>.py``;
:func:`ours_fixture` makes the module-scoped ``ours`` pytest fixture that calls its function with this process's
``torch`` (MindTorch).

**run.py.** End-to-end tests start ``run.py`` through the helpers below, the one place tests build that command:

* the command is ``[sys.executable, <root>/run.py, *args]`` (the interpreter running the tests, so ``.venv``);
* the working folder is the project root unless the test names another (``cwd=tmp_path``: paths then show relative
  to it, as a user's do);
* the environment is this process's ``os.environ`` at call time, plus ``env`` (extra variables) less ``unset``
  (names removed). It carries ``ADAPTER_COMPILE_CACHE_DIR``, the test session's compile cache folder, which
  ``tests/conftest.py`` sets; ``cache_dir=`` points one run at another folder;
* stdout and stderr are captured as text; a run past ``timeout`` seconds raises ``subprocess.TimeoutExpired`` as
  ``subprocess.run`` does (no hang);
* a fixture script that reports a result prints it as JSON: on its last stdout line (``last_json``), or as one
  document from its first ``{`` to the end (``json_from_brace``).

:func:`run_script` runs a fixture script (``run.py --original SCRIPT args`` by default) and asserts exit status 0;
:func:`run_json` is the same for any ``run.py`` arguments, returning ``(last_json(stdout), stderr)``; :func:`run_py`
and :func:`start_py` assert nothing.
"""
import importlib
import json
import os
import subprocess
import sys
from typing import NamedTuple

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
RUN_PY = os.path.join(ROOT, "run.py")
CACHE_DIR_ENV = "ADAPTER_COMPILE_CACHE_DIR"  # adapter/compile_cache.py's DIR_ENV (not imported: no adapter here)


def command(*args):
    """The argv of ``run.py *args`` (each arg ``str()``-ed: paths may be ``pathlib.Path``)."""
    return [sys.executable, RUN_PY, *map(str, args)]


def environ(env=None, unset=(), cache_dir=None):
    """A copy of ``os.environ`` with ``env``'s variables set, ``unset``'s names removed, and, when ``cache_dir`` is
    given, the compile cache folder set to it."""
    out = dict(os.environ, **(env or {}))
    if cache_dir is not None:
        out[CACHE_DIR_ENV] = str(cache_dir)
    for name in unset:
        out.pop(name, None)
    return out


def run_py(*args, cwd=ROOT, env=None, unset=(), cache_dir=None, timeout=600):
    """``run.py *args`` to completion; the ``subprocess.CompletedProcess`` (text ``stdout``/``stderr``), whatever
    its exit status. Raises ``subprocess.TimeoutExpired`` past ``timeout`` seconds."""
    return subprocess.run(command(*args), cwd=str(cwd), env=environ(env, unset, cache_dir), capture_output=True,
                          text=True, timeout=timeout)


def start_py(*args, cwd=ROOT, env=None, unset=(), cache_dir=None, **popen_kwargs):
    """``run.py *args`` started, not waited for: the ``subprocess.Popen``. ``popen_kwargs`` go to Popen as given
    (stdout/stderr pipes, ``start_new_session`` ...); ``text=True`` unless given."""
    popen_kwargs.setdefault("text", True)
    return subprocess.Popen(command(*args), cwd=str(cwd), env=environ(env, unset, cache_dir), **popen_kwargs)


def last_json(stdout):
    """The JSON value on ``stdout``'s last non-blank line. Raises ``json.JSONDecodeError`` if it is not JSON and
    ``IndexError`` if stdout is blank."""
    return json.loads(stdout.strip().splitlines()[-1])


def json_from_brace(stdout):
    """The JSON document that runs from ``stdout``'s first ``{`` to its end (a fixture printing its result with
    ``json.dumps(..., indent=...)``). Raises ``ValueError`` if there is no ``{``."""
    return json.loads(stdout[stdout.index("{"):])


def run_json(*args, timeout=600, **kwargs):
    """``run.py *args`` (``run_py``'s keywords); asserts exit status 0, with stderr's last 3000 characters in the
    message. Returns ``(last_json(stdout), stderr)``."""
    proc = run_py(*args, timeout=timeout, **kwargs)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return last_json(proc.stdout), proc.stderr


def fixture_path(*parts):
    """``tests/fixtures/<parts...>`` (absolute)."""
    return os.path.join(FIXTURES, *parts)


def load_reference(name, key=None):
    """The JSON document ``tests/fixtures/<name>``, or its ``key`` entry. Raises ``FileNotFoundError`` /
    ``KeyError`` as ``json.load`` and ``[]`` do."""
    with open(fixture_path(name), encoding="utf-8") as f:
        document = json.load(f)
    return document if key is None else document[key]


def cases_module(name):
    """``tests/fixtures/<name>.py`` imported (``tests/fixtures`` put first on ``sys.path`` once, as the fixture
    modules import each other by plain name)."""
    if FIXTURES not in sys.path:
        sys.path.insert(0, FIXTURES)
    return importlib.import_module(name)


def ours_fixture(module, function="run", *args):
    """A module-scoped pytest fixture (assign it to ``ours`` in the test module) whose value is
    ``tests/fixtures/<module>.py``'s ``function(torch, *args)`` with this process's ``torch`` (MindTorch): the "ours"
    side of a trio whose reference is that function's value under real PyTorch."""
    @pytest.fixture(scope="module")
    def ours():
        import torch
        return getattr(cases_module(module), function)(torch, *args)
    return ours


class Ran(NamedTuple):
    """A finished ``run.py`` run (:func:`run_script`)."""
    stdout: str
    stderr: str
    returncode: int

    @property
    def json(self):
        """The JSON value on stdout's last non-blank line (:func:`last_json`)."""
        return last_json(self.stdout)

    @property
    def last_object(self):
        """The last stdout line that starts with ``{``, parsed (a script that prints more after its result)."""
        return json.loads([line for line in self.stdout.splitlines() if line.startswith("{")][-1])


def run_script(script, *args, options=("--original",), check=True, **kwargs):
    """``run.py *options script *args`` (``run_py``'s keywords: ``cwd``, ``env``, ``unset``, ``cache_dir``,
    ``timeout``) to completion, as a :class:`Ran`. With ``check`` asserts exit status 0, stderr's last 3000
    characters in the message."""
    proc = run_py(*options, script, *args, **kwargs)
    if check:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return Ran(proc.stdout, proc.stderr, proc.returncode)
