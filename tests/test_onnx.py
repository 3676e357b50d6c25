"""``import torch.onnx`` (patches/onnx.py; MindTorch 0.4.0 has no ``torch.onnx``: pytorch/examples
word_language_model/main.py:8 stopped at ``ModuleNotFoundError: KeyError('torch.onnx')`` before training): what a
script that does not export sees equals real PyTorch 2.13's (tests/fixtures/onnx_import.py, reference
tests/fixtures/onnx_reference.json); ``torch.onnx.export`` raises naming the script's line and writes nothing."""
import json
import os

from _runpy import run_py

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
SCRIPT = os.path.join(FIXTURES, "onnx_import.py")
REFERENCE = json.load(open(os.path.join(FIXTURES, "onnx_reference.json")))


def _run(*args):
    proc = run_py("--original", SCRIPT, *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_import_and_names_equal_pytorchs():
    assert _run() == REFERENCE


def test_export_raises_at_the_scripts_line_and_writes_nothing():
    got = _run("export")
    line = next(i for i, text in enumerate(open(SCRIPT), 1) if "# the line named" in text)
    assert got.pop("export_error").startswith(f"tests/fixtures/onnx_import.py:{line}: torch.onnx.export is not "
                                              "available under run.py")
    assert got.pop("file_written") is False
    assert got == REFERENCE
