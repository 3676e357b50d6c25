"""MindTorch's other ``isinstance(x, Iterable)`` sites with a tensor ``x``, against real PyTorch 2.13
(tests/fixtures/tensor_iterable_cases.py, its reference JSON).

MindSpore 2.10 made ``mindspore.Tensor`` a ``collections.abc.Iterable``; adapter/backend_compat.py shim 14 gives
MindTorch's ``optim.optimizer`` module 2.5's answer (tensors not Iterable), because that code tells a ParameterTuple
from one Parameter by it. The other sites (``nn/utils/rnn.py:14`` ``pad_sequence``, ``nn/functional.py:213``
``adaptive_max_pool3d``, ``torch_version.py:12``, ``nn/modules/utils.py:15`` ``_ntuple``) are copies of PyTorch's
code, written for PyTorch's tensors, which are Iterable: there 2.10 answers as PyTorch and every case here gives
PyTorch's value or raises PyTorch's exception class (measured 2026-11-26), so shim 14 must not be extended to them.

On 2.5-dev (tensors not Iterable) the cases marked below differ from PyTorch, loudly or leniently, never with another
value: ``pad_sequence(tensor)`` raises RuntimeError "Expected iterable" (PyTorch pads the tensor's rows), a 1-d
tensor ``output_size`` raises ValueError (PyTorch reads it as a sequence), and a 0-d tensor ``output_size`` /
``kernel_size`` is accepted as an int (PyTorch raises TypeError)."""
import collections.abc
import importlib.util
import os

import numpy as np
import pytest

from support import load_reference

HERE = os.path.dirname(os.path.abspath(__file__))
REF = load_reference("tensor_iterable_reference.json", "cases")
_spec = importlib.util.spec_from_file_location(
    "tensor_iterable_cases", os.path.join(HERE, "fixtures", "tensor_iterable_cases.py"))
CASES = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(CASES)


def _tensors_iterable():
    import mindspore
    return issubclass(mindspore.Tensor, collections.abc.Iterable)


# What 2.5-dev (tensors not Iterable) gives instead of PyTorch's result.
_DIFFERS_WHERE_NOT_ITERABLE = {
    "pad_sequence_2d": "RuntimeError 'Expected iterable'",
    "pad_sequence_2d_batch_first": "RuntimeError 'Expected iterable'",
    "pad_sequence_3d_batch_first": "RuntimeError 'Expected iterable'",
    "pad_sequence_0d": "RuntimeError 'Expected iterable', not TypeError",
    "adaptive_max_pool3d_1d": "ValueError: rank of output_size",
    "AdaptiveMaxPool3d_1d": "ValueError: rank of output_size",
    "adaptive_max_pool3d_0d": "accepted as an int",
    "Conv2d_kernel_size_0d": "accepted as an int",
}


@pytest.mark.parametrize("name", sorted(CASES.CASES))
def test_tensor_at_an_iterable_check_gives_pytorchs_result(name, request):
    import torch
    if name in _DIFFERS_WHERE_NOT_ITERABLE and not _tensors_iterable():
        request.applymarker(pytest.mark.xfail(
            reason=f"MindSpore tensors not Iterable (2.5-dev): {_DIFFERS_WHERE_NOT_ITERABLE[name]}", strict=True))
    got = CASES.run(torch, name)
    want = REF[name]
    if "raises" in want:
        assert got == want
    else:
        assert "raises" not in got, got
        assert got["shape"] == want["shape"]
        np.testing.assert_array_equal(np.asarray(got["value"]), np.asarray(want["value"]))
