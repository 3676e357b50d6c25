"""``torch.nn.modules.linear.NonDynamicallyQuantizableLinear`` (patches/quantizable_linear.py; MindTorch 0.4.0 has
none: pytorch/examples word_language_model/main.py:257 names it in its ``safe_globals`` list and stopped there with
``AttributeError``) against real PyTorch 2.13 (tests/fixtures/quantizable_linear_cases.py, reference
tests/fixtures/quantizable_linear_reference.json)."""
import sys

from support import FIXTURES, load_reference

sys.path.insert(0, FIXTURES)


def test_class_equals_pytorchs():
    import torch
    import quantizable_linear_cases
    reference = load_reference("quantizable_linear_reference.json")
    assert quantizable_linear_cases.run(torch) == reference
