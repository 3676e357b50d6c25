"""run.py's allocator re-exec (``adapter/allocator.py``, issue 15): jemalloc (MindSpore's copy) preloaded or the
glibc tunable set in the script's process, the opt-out, and that the re-exec is invisible to the caller (same pid,
argv, stdin, exit status).

What is asserted is the process environment, not numbers: jemalloc changes no arithmetic (the losses with and without
it are compared bit for bit by ``bench/first_step_bench.py --malloc``, docs/performance.md). The end-to-end tests run
on whichever stack runs the tests: mindspore-dev 2.5 ships ``mindspore/lib/libjemalloc.so.2`` (jemalloc expected),
mindspore 2.10 does not (the tunable expected).
"""
import json
import os
import subprocess
import sys

import pytest

from support import ROOT, environ, start_py

sys.path.insert(0, ROOT)
from adapter import allocator  # noqa: E402 -- stdlib only; imports no MindSpore

LIB = "/opt/ms/lib/libjemalloc.so.2"

PROBE = r'''
import json, os, sys
with open("/proc/self/maps") as f:
    maps = f.read()
print(json.dumps({"argv": sys.argv, "pid": os.getpid(), "stdin": sys.stdin.read(),
                  "mapped": sorted({l.split()[-1] for l in maps.splitlines() if "libjemalloc" in l}),
                  "LD_PRELOAD": os.environ.get("LD_PRELOAD"), "GLIBC_TUNABLES": os.environ.get("GLIBC_TUNABLES"),
                  "marker": os.environ.get("ADAPTER_MALLOC_SET"),
                  "release": sys.modules["adapter.allocator"].release_free_memory()}))
sys.exit(int(sys.argv[1]))
'''


# --- the choice (pure: an environment in, the variables to set out) ---------------------------------------------

def test_jemalloc_is_preloaded_where_shipped_and_a_user_preload_is_kept_after_it():
    assert allocator.plan({}, "linux", LIB) == {"LD_PRELOAD": LIB, allocator.MARKER_ENV: f"jemalloc:{LIB}"}
    got = allocator.plan({"LD_PRELOAD": "/usr/lib/libgomp.so.1"}, "linux", LIB)
    assert got["LD_PRELOAD"] == f"{LIB}:/usr/lib/libgomp.so.1"


def test_the_glibc_tunable_is_appended_where_jemalloc_is_not_shipped():
    assert allocator.plan({}, "linux", "") == {"GLIBC_TUNABLES": "glibc.malloc.mxfast=0",
                                               allocator.MARKER_ENV: "glibc:glibc.malloc.mxfast=0"}
    got = allocator.plan({"GLIBC_TUNABLES": "glibc.malloc.check=0"}, "linux", "")
    assert got["GLIBC_TUNABLES"] == "glibc.malloc.check=0:glibc.malloc.mxfast=0"
    assert allocator.plan({"ADAPTER_MALLOC": "glibc"}, "linux", LIB)["GLIBC_TUNABLES"] == "glibc.malloc.mxfast=0"


@pytest.mark.parametrize("env, platform, lib", [
    ({"ADAPTER_MALLOC": "system"}, "linux", LIB),                     # the opt-out
    ({"ADAPTER_MALLOC": "SYSTEM"}, "linux", LIB),
    ({allocator.MARKER_ENV: f"jemalloc:{LIB}"}, "linux", LIB),         # already done: no exec loop
    ({}, "darwin", LIB),                                               # Linux only
    ({}, "win32", ""),
    ({"LD_PRELOAD": "/usr/lib/libtcmalloc.so.4"}, "linux", LIB),       # the user chose an allocator
    ({"LD_PRELOAD": "libmimalloc.so libm.so.6"}, "linux", ""),
    ({"GLIBC_TUNABLES": "glibc.malloc.mxfast=64"}, "linux", ""),      # the user set the tunable
    ({"ADAPTER_MALLOC": "jemalloc"}, "linux", ""),                     # jemalloc only, and it is not shipped
])
def test_nothing_changes(env, platform, lib):
    assert allocator.plan(env, platform, lib) is None


def test_an_unknown_choice_is_an_error_naming_the_variable():
    with pytest.raises(ValueError, match="ADAPTER_MALLOC='tcmalloc'"):
        allocator.plan({"ADAPTER_MALLOC": "tcmalloc"}, "linux", LIB)


@pytest.mark.parametrize("before", [{}, {"LD_PRELOAD": "/usr/lib/libgomp.so.1", "GLIBC_TUNABLES": "a.b=1"}])
@pytest.mark.parametrize("lib", [LIB, ""])
def test_a_foreign_child_gets_the_environment_without_ours(before, lib):
    """``--compare``'s real-PyTorch run: what reexec added is taken out, the user's entries stay."""
    after = dict(before, **allocator.plan(before, "linux", lib))
    assert allocator.environ_without_ours(after) == before


def test_the_shipped_library_is_found_without_importing_mindspore():
    path = allocator.mindspore_jemalloc()
    assert "mindspore" not in sys.modules or path is None or os.path.isfile(path)
    if path is not None:
        assert path.endswith(os.path.join("mindspore", "lib", "libjemalloc.so.2")) and os.path.isfile(path)


# --- end to end: run.py in a subprocess ------------------------------------------------------------------------

def _probe(tmp_path, cmd_prefix, env=None, unset=()):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    proc = subprocess.Popen([*cmd_prefix, "--mode", "pynative", "--original", str(script), "7", "a b", "--x"],
                            cwd=ROOT, env=environ(env, unset), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate("line one\nline two\n", timeout=600)
    assert proc.returncode == 7, err[-2000:]
    got = json.loads(out.strip().splitlines()[-1])
    assert got["argv"] == [str(script), "7", "a b", "--x"]
    assert got["stdin"] == "line one\nline two\n"
    assert got["pid"] == proc.pid  # exec keeps the process: a caller's signals and wait() reach the script
    return got, err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the re-exec is Linux only")
def test_run_py_script_runs_under_jemalloc_or_the_tunable_with_argv_stdin_and_exit_status_unchanged(tmp_path):
    lib = allocator.mindspore_jemalloc()
    got, err = _probe(tmp_path, [sys.executable, os.path.join(ROOT, "run.py")],
                      env={"LD_PRELOAD": "libm.so.6"}, unset=("ADAPTER_MALLOC", allocator.MARKER_ENV,
                                                               "GLIBC_TUNABLES"))
    assert "cannot be preloaded" not in err
    if lib:  # mindspore-dev 2.5: MindSpore's jemalloc is mapped in the script's process; the user's preload kept
        assert got["mapped"] == [lib]
        assert got["LD_PRELOAD"] == f"{lib}:libm.so.6" and got["marker"] == f"jemalloc:{lib}"
        assert got["GLIBC_TUNABLES"] is None
        assert got["release"] == "jemalloc"  # compiled_step's heap trim purges jemalloc's arenas (a glibc trim: no-op)
    else:  # mindspore 2.10: no jemalloc in the wheel, glibc's fastbins off
        assert got["mapped"] == [] and got["LD_PRELOAD"] == "libm.so.6"
        assert got["GLIBC_TUNABLES"] == "glibc.malloc.mxfast=0" and got["release"] == "glibc"


def test_opt_out_leaves_the_allocator_alone_also_under_python_m_run(tmp_path):
    got, _ = _probe(tmp_path, [sys.executable, "-m", "run"], env={"ADAPTER_MALLOC": "system"},
                    unset=("LD_PRELOAD", "GLIBC_TUNABLES", allocator.MARKER_ENV))
    assert got["mapped"] == [] and got["LD_PRELOAD"] is None and got["GLIBC_TUNABLES"] is None
    assert got["marker"] is None and got["release"] == "glibc"


def test_an_unknown_choice_stops_run_py_with_a_usage_error(tmp_path):
    proc = start_py("--list-patches", env={"ADAPTER_MALLOC": "fast"}, unset=(allocator.MARKER_ENV,),
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2 and "ADAPTER_MALLOC='fast'" in err and out == ""
