"""NaN in max/min/amax/amin/argmax/argmin/aminmax/maximum/minimum/topk/kthvalue/clamp/clip,
relu/relu6/hardtanh/threshold and max pooling as PyTorch 2.13 (patches/nan_propagation.py): values, indices and
input gradients of ``[[1, nan, 3], [2, 5, -1]]`` in PyNative, and a training step compiled in graph mode over an
input with a NaN. MindSpore's kernels skipped NaN: ``torch.max(x)``
was 5., ``x.max(dim=1)`` values [3, 5] indices [2, 1], ``clamp(x, 0, 2)`` turned the NaN into 0, silently.

The literals are real PyTorch 2.13's (``.venv-ref/bin/python tests/fixtures/nan_propagation_cases.py run`` /
``train``, 2026-12-07); "nan" stands for NaN."""
import math
import os

import numpy as np
import pytest

from support import FIXTURES, json_from_brace, ours_fixture, run_py

pytestmark = pytest.mark.stack

INF = float("inf")
REFERENCE = {'max': {'values': ['nan'], 'grad': [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]},
             'min': {'values': ['nan'], 'grad': [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]},
             'max_dim': {'values': [['nan', 5.0], [1, 1]], 'grad': [[0.0, 1.0, 0.0], [0.0, 2.0, 0.0]]},
             'max_dim0_keepdim': {'values': [[[2.0, 'nan', 3.0]], [[1, 0, 0]]],
                                  'grad': [[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]]},
             'min_dim': {'values': [['nan', -1.0], [1, 2]], 'grad': [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]},
             'amax': {'values': [['nan', 5.0]], 'grad': [['nan', 'nan', 'nan'], [0.0, 2.0, 0.0]]},
             'amin_dim0': {'values': [[1.0, 'nan', -1.0]], 'grad': [[1.0, 'nan', 0.0], [0.0, 'nan', 3.0]]},
             'amax_all': {'values': ['nan'], 'grad': [['nan', 'nan', 'nan'], ['nan', 'nan', 'nan']]},
             'aminmax': {'values': [['nan', -1.0], ['nan', 5.0]], 'grad': [['nan', 'nan', 'nan'], [0.0, 0.0, 2.0]]},
             'argmax': {'values': [[1, 1]]},
             'argmin_all': {'values': [1]},
             'argmax_keepdim': {'values': [[[1, 0, 0]]]},
             'topk': {'values': [[['nan', 3.0], [5.0, 2.0]], [[1, 2], [1, 0]]],
                      'grad': [[0.0, 1.0, 2.0], [4.0, 3.0, 0.0]]},
             'topk_smallest': {'values': [[[1.0, 3.0], [-1.0, 2.0]], [[0, 2], [2, 0]]],
                               'grad': [[1.0, 0.0, 2.0], [4.0, 0.0, 3.0]]},
             'topk_dim0': {'values': [[[2.0, 'nan', 3.0]], [[1, 0, 0]]], 'grad': [[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]]},
             'maximum': {'values': [[[1.0, 'nan', 3.0], [2.0, 5.0, 0.0]]],
                         'grad': [[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]]},
             'minimum_method': {'values': [[[0.0, 'nan', 0.0], [0.0, 0.0, -1.0]]],
                                'grad': [[0.0, 2.0, 0.0], [0.0, 0.0, 6.0]]},
             'max_other': {'values': [[[1.0, 'nan', 3.0], [2.0, 5.0, 0.0]]],
                           'grad': [[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]]},
             'clamp': {'values': [[[1.0, 'nan', 2.0], [2.0, 2.0, 0.0]]], 'grad': [[1.0, 0.0, 0.0], [4.0, 0.0, 0.0]]},
             'clamp_min': {'values': [[[2.0, 'nan', 3.0], [2.0, 5.0, 2.0]]],
                           'grad': [[0.0, 0.0, 3.0], [4.0, 5.0, 0.0]]},
             'clip': {'values': [[[1.0, 'nan', 2.0], [2.0, 2.0, 0.0]]], 'grad': [[1.0, 0.0, 0.0], [4.0, 0.0, 0.0]]},
             'clamp_max_fn': {'values': [[[0.0, 'nan', 0.0], [0.0, 0.0, -1.0]]],
                              'grad': [[0.0, 0.0, 0.0], [0.0, 0.0, 6.0]]},
             'kthvalue': {'values': [['nan', 5.0], [1, 1]], 'grad': [[0.0, 1.0, 0.0], [0.0, 2.0, 0.0]]},
             'kthvalue_dim0_keepdim': {'values': [[[2.0, 'nan', 3.0]], [[1, 0, 0]]],
                                       'grad': [[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]]},
             'relu': {'values': [[[1.0, 'nan', 3.0], [2.0, 5.0, 0.0]]], 'grad': [[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]]},
             'relu_module_inplace': {'values': [[[1.0, 'nan', 3.0], [2.0, 5.0, 0.0]]],
                                     'grad': [[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]]},
             'relu6': {'values': [[[1.0, 'nan', 3.0], [2.0, 5.0, 0.0]]], 'grad': [[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]]},
             'hardtanh_module': {'values': [[[1.0, 'nan', 2.5], [2.0, 2.5, -0.5]]],
                                 'grad': [[1.0, 2.0, 0.0], [4.0, 0.0, 0.0]]},
             'threshold': {'values': [[[-5.0, 'nan', 3.0], [2.0, 5.0, -5.0]]],
                           'grad': [[0.0, 2.0, 3.0], [4.0, 5.0, 0.0]]},
             'tensor_relu': {'values': [[[1.0, 'nan', 3.0], [2.0, 5.0, 0.0]]],
                             'grad': [[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]]},
             'fmax': {'values': [[[1.0, 0.0, 3.0], [2.0, 5.0, 0.0]]], 'grad': [[1.0, 0.0, 3.0], [4.0, 5.0, 0.0]]},
             'fmin': {'values': [[[0.0, 0.0, 0.0], [0.0, 0.0, -1.0]]], 'grad': [[0.0, 0.0, 0.0], [0.0, 0.0, 6.0]]},
             'topk_inf': {'values': [['nan', 'nan', INF], [1, 3, 2]]},
             'topk_inf_smallest': {'values': [[-INF, -1.0, 1.0, 'nan', 'nan'], [2, 4, 0, 1, 3]]},
             'max_two_nans': {'values': ['nan', 1]},
             'argmax_float64': {'values': [[2]]},
             'amax_float16': {'values': [['nan', 2.0]]},
             'clamp_': {'values': [[[1.0, 'nan', 2.0], [2.0, 2.0, 0.0]]]},
             'clamp_nan_bound': {'values': [['nan', 1.0]]},
             'relu_inplace': {'values': [[[1.0, 'nan', 3.0], [2.0, 5.0, 0.0]]]},
             'max_pool2d': {'values': [[[[['nan', 'nan'], [5.0, 5.0]]]]]},
             'max_pool2d_padded': {'values': [[[[['nan', 'nan', 'nan'], ['nan', 'nan', 'nan']]]]]},
             'max_pool1d': {'values': [[['nan'], [5.0]]]},
             'adaptive_max_pool2d': {'values': [[[[['nan', 'nan'], [5.0, 5.0]]]]]},
             'adaptive_max_pool1d': {'values': [[['nan'], [5.0]]]},
             'max_int': {'values': [[3], [1]]},
             'topk_int': {'values': [[[3, 2]], [[1, 2]]]},
             'clamp_int': {'values': [[0, 3, 4]]}}
TRAIN_REFERENCE = {"losses": [9190.375, 9166.375, 9152.150390625, 9142.67578125],
                   "w": [-2.700000047683716, -3.3000001907348633, -0.6500000357627869]}
# PyTorch's amax/amin gradient of a row holding a NaN is NaN on every element of the row (grad / count, no element
# equal to the NaN: 0/0); here the row's NaNs share it, finite (patches/nan_propagation.py says why); other rows equal
NAN_ROW_GRADIENT_SHARED = {"amax": [[0.0, 1.0, 0.0], [0.0, 2.0, 0.0]], "amax_all": [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]],
                           "aminmax": [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]}

ours = ours_fixture("nan_propagation_cases")


def _array(value):
    if isinstance(value, list):
        return [_array(v) for v in value]
    return math.nan if value == "nan" else value


def _equal(got, want, case):
    np.testing.assert_array_equal(np.array(_array(got), dtype=float), np.array(_array(want), dtype=float),
                                  err_msg=case)


@pytest.mark.parametrize("case", list(REFERENCE))
def test_values_and_indices_equal_pytorchs(ours, case):
    got, want = ours[case]["values"], REFERENCE[case]["values"]
    assert len(got) == len(want), case
    for mine, theirs in zip(got, want):
        _equal(mine, theirs, case)


@pytest.mark.parametrize("case", [c for c in REFERENCE if "grad" in REFERENCE[c]])
def test_gradients_equal_pytorchs(ours, case):
    want = NAN_ROW_GRADIENT_SHARED.get(case, REFERENCE[case]["grad"])
    _equal(ours[case]["grad"], want, case)


def test_compiled_step_equals_pytorch():
    """max(dim)/topk/maximum/clamp/relu/nn.ReLU/nn.MaxPool2d/argmin/amax of an input with a NaN inside a training
    step compiled in graph mode (the first step eager, the next three compiled): PyTorch's losses and weights."""
    proc = run_py("--explain", "--original", os.path.join(FIXTURES, "nan_propagation_cases.py"), "train")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "backward() of loss — compiled (graph mode" in proc.stderr, proc.stderr[-3000:]
    got = json_from_brace(proc.stdout)
    np.testing.assert_allclose(got["losses"], TRAIN_REFERENCE["losses"], rtol=1e-6)
    np.testing.assert_allclose(got["w"], TRAIN_REFERENCE["w"], rtol=1e-6)


AMAX_METHOD_REFERENCE = {"losses": [-23.799999237060547, -84.3499984741211, -142.27499389648438, -200.1999969482422],
                         "w": [[-2.6000001430511475, -1.8499999046325684, 8.199999809265137],
                               [2.3499999046325684, -1.9499999284744263, -5.399999618530273]]}


def test_amax_amin_methods_compile_in_a_step():
    """``y.amax(1)``, ``y.amin(dim=0, keepdim=True)``, ``y.amax(dim=(0, 1))``, ``y.amin()`` inside a training step
    compile (MindTorch's methods passed ``keepdims=`` to the graph's ``Tensor.amax``: the step ran in PyNative) with
    PyTorch 2.13's losses and weights (``.venv-ref/bin/python tests/fixtures/amax_method_step.py``, 2026-12-07)."""
    proc = run_py("--explain", "--original", os.path.join(FIXTURES, "amax_method_step.py"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "backward() of loss — compiled (graph mode" in proc.stderr, proc.stderr[-3000:]
    got = json_from_brace(proc.stdout)
    np.testing.assert_allclose(got["losses"], AMAX_METHOD_REFERENCE["losses"], rtol=1e-6)
    np.testing.assert_allclose(got["w"], AMAX_METHOD_REFERENCE["w"], rtol=1e-6)


# PyTorch 2.13 (.venv-ref, 2026-12-07): a window holding NaN pools to its last NaN: that index, that element's gradient
POOL_REFERENCE = {
    "adaptive_max_pool2d": {"values": [[[["nan", "nan"], ["nan", 5.0]]]], "indices": [[[[1, 1], [6, 4]]]],
                            "grad": [[[[0.0, 3.0, 0.0], [0.0, 4.0, 0.0], [3.0, 0.0, 0.0]]]]},
    "max_pool2d": {"values": [[[["nan", "nan"], ["nan", 5.0]]]], "indices": [[[[1, 1], [6, 4]]]],
                   "grad": [[[[0.0, 3.0, 0.0], [0.0, 4.0, 0.0], [3.0, 0.0, 0.0]]]]},
    "adaptive_max_pool1d": {"values": [["nan"]], "indices": [[3]], "grad": [[0.0, 0.0, 0.0, 1.0, 0.0]]},
    "max_pool1d": {"values": [["nan"]], "indices": [[3]], "grad": [[0.0, 0.0, 0.0, 1.0, 0.0]]},
}


@pytest.mark.parametrize("case", list(POOL_REFERENCE))
def test_pooled_nan_index_and_gradient_equal_pytorchs(case):
    """MindSpore's pools skipped NaN: ``adaptive_max_pool1d/2d(..., return_indices=True)`` gave the largest number's
    index and every pooled NaN's gradient was 0 (PyTorch: the window's last NaN, its index and its gradient)."""
    import torch
    F = torch.nn.functional
    nan = float("nan")
    if case.endswith("2d"):
        x = torch.tensor([[[[1.0, nan, 3.0], [2.0, 5.0, -1.0], [nan, 1.0, 2.0]]]], requires_grad=True)
        values, indices = (F.adaptive_max_pool2d(x, 2, return_indices=True) if case.startswith("adaptive")
                           else F.max_pool2d(x, 2, 1, return_indices=True))
        weights = torch.arange(1.0, 5.0).reshape(1, 1, 2, 2)
    else:
        x = torch.tensor([[1.0, nan, 3.0, nan, 2.0]], requires_grad=True)
        values, indices = (F.adaptive_max_pool1d(x, 1, return_indices=True) if case.startswith("adaptive")
                           else F.max_pool1d(x, 5, return_indices=True))
        weights = torch.ones(1, 1)
    (values * weights).sum().backward()
    want = POOL_REFERENCE[case]
    _equal(values.tolist(), want["values"], case)
    assert indices.tolist() == want["indices"], case
    _equal(x.grad.tolist(), want["grad"], case)
