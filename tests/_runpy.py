"""``run.py`` in a subprocess, as a user runs it: the one place tests build that command.

Conventions every end-to-end test shares:

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

Nothing here asserts except ``run_json``, which asserts exit status 0 (the old ``tests/run_json.py``).
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
