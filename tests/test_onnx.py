"""``import torch.onnx`` (patches/onnx.py; MindTorch 0.4.0 has no ``torch.onnx``: pytorch/examples
word_language_model/main.py:8 stopped at ``ModuleNotFoundError: KeyError('torch.onnx')`` before training): what a
script that does not export sees equals real PyTorch 2.13's (tests/fixtures/onnx_import.py, reference
tests/fixtures/onnx_reference.json); ``torch.onnx.export`` raises naming the script's line and writes nothing."""
import os

from support import FIXTURES, load_reference, run_script

SCRIPT = os.path.join(FIXTURES, "onnx_import.py")
REFERENCE = load_reference("onnx_reference.json")


def test_import_and_names_equal_pytorchs():
    assert run_script(SCRIPT).json == REFERENCE


def test_export_raises_at_the_scripts_line_and_writes_nothing():
    got = run_script(SCRIPT, "export").json
    line = next(i for i, text in enumerate(open(SCRIPT), 1) if "# the line named" in text)
    assert got.pop("export_error").startswith(f"tests/fixtures/onnx_import.py:{line}: torch.onnx.export is not "
                                              "available under run.py")
    assert got.pop("file_written") is False
    assert got == REFERENCE
