"""``scripts/record_reference.py``, the one entry point that records a named reference under real PyTorch: every
named recording's fixture script and output exist, ``--list`` names them all, an unknown name exits 2 naming it. (The
recordings themselves need ``.venv-ref``; recorded 2026-12-06 with it, ``onnx``, ``rprop``, ``indexing``,
``constant_pad`` and ``bce`` rewrote their committed files byte for byte, and ``lbfgs`` gave what its old command
gives: the committed file carries a hand-edited date.)"""
import os
import subprocess
import sys

from support import FIXTURES, ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import record_reference  # noqa: E402


def test_each_recording_names_an_existing_script_and_output():
    missing = [f"{name}: {path}" for name, rec in record_reference.RECORDINGS.items()
               for path in (rec.script, rec.output) if not os.path.exists(os.path.join(FIXTURES, path))]
    assert missing == []


def test_list_and_unknown_name():
    script = os.path.join(ROOT, "scripts", "record_reference.py")
    listed = subprocess.run([sys.executable, script, "--list"], capture_output=True, text=True, check=True).stdout
    assert sorted(line.split()[0] for line in listed.splitlines()) == sorted(record_reference.RECORDINGS)
    proc = subprocess.run([sys.executable, script, "no_such"], capture_output=True, text=True)
    assert proc.returncode == 2 and "no_such" in proc.stderr
