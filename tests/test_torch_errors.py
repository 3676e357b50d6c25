"""PyTorch's error classes and wording for bad inputs (issue 35, error_inputs): ``patches/torch_errors.py`` (errors
MindSpore raises inside a torch call, raised again as PyTorch's class and the original one) and
``patches/input_checks.py`` (bad inputs MindSpore computed a value for).

Each case of ``tests/fixtures/torch_errors_cases.py`` runs here (every patch installed, PyNative) against the class
and message real PyTorch 2.13 raised (``tests/fixtures/torch_errors_reference.json``, recorded by
``scripts/record_reference.py torch_errors``): ``except <PyTorch's class>`` catches ours, and where the case is in
:data:`WORDED` the first line of the message is PyTorch's. Without the two patches
(``ADAPTER_DISABLE_PATCHES=torch_errors,input_checks``) all 36 cases fail, and the two tests of the classes.
"""
import pickle

import pytest

from support import cases_module, load_reference

pytestmark = pytest.mark.stack  # passes on mindspore-dev 2.5 too (2026-12-07): CI runs it on both stacks

REFERENCE = load_reference("torch_errors_reference.json")
#: cases whose message is PyTorch's word for word (the others: PyTorch's class, MindSpore's or MindTorch's message)
WORDED = {"linear_shape", "nn_linear_shape", "mm_shape", "matmul_shape", "broadcast_mul", "broadcast_add_3d",
          "view_size", "conv2d_channels", "cat_empty", "cross_entropy_target", "cross_entropy_module_target",
          "nll_loss_target", "embedding_index", "gather_index", "sum_dim", "softmax_dim", "transpose_dim",
          "diagonal_dim", "l1_loss_reduction", "t_4d", "trace_3d", "roll_no_shifts", "roll_misaligned",
          "group_norm_groups", "group_norm_1d", "rms_norm_empty", "hardtanh_bounds", "triplet_margin",
          "isclose_rtol", "mean_int_dtype", "embedding_weight_3d", "linalg_cross_length",
          "masked_scatter_float_mask", "multinomial_int"}


def _raised(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001
        return exc
    return None


@pytest.fixture(scope="module")
def cases():
    import torch
    return cases_module("torch_errors_cases").cases(torch)


@pytest.mark.parametrize("name", sorted(REFERENCE["cases"]))
def test_raises_pytorchs_class_and_wording(cases, name):
    import builtins
    want = REFERENCE["cases"][name]
    exc = _raised(cases[name])
    assert exc is not None, f"{name}: returns a value; PyTorch raises {want['type']}: {want['msg']}"
    torch_class = getattr(builtins, want["type"])
    assert isinstance(exc, torch_class), f"{name}: raises {type(exc).__name__}: {exc}; PyTorch {want['type']}"
    assert type(exc).__name__ == want["type"]  # what a traceback prints
    if name in WORDED:
        assert str(exc).strip().splitlines()[0] == want["msg"]


def test_the_original_class_still_catches(cases):
    """Code written against MindSpore's classes (``except ValueError``) still catches the translated error."""
    exc = _raised(cases["linear_shape"])
    assert isinstance(exc, RuntimeError) and isinstance(exc, ValueError)
    assert isinstance(exc.framework_error, ValueError) and "MatMul" in str(exc.framework_error)
    dim = _raised(cases["sum_dim"])
    assert isinstance(dim, IndexError) and isinstance(dim, ValueError)


def test_pickles_as_pytorchs_plain_class(cases):
    """A DataLoader worker's error crosses processes pickled: it arrives as PyTorch's builtin class."""
    exc = _raised(cases["cross_entropy_target"])
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is IndexError and str(back) == "Target 5 is out of bounds."


def test_a_users_own_error_is_left_as_it_is():
    """Only errors raised inside MindSpore/MindTorch/numpy are translated: a forward's own ValueError stays one."""
    import torch

    class Picky(torch.nn.Module):
        def forward(self, x):
            raise ValueError("my own check")

    exc = _raised(lambda: Picky()(torch.ones(2)))
    assert type(exc) is ValueError and str(exc) == "my own check"


def test_valid_calls_are_unchanged():
    """The checks of input_checks.py let PyTorch's valid forms through (results as PyTorch's closed forms)."""
    import torch
    x = torch.arange(6.0).reshape(2, 3)
    assert torch.t(x).shape == (3, 2) and float(torch.trace(torch.eye(3))) == 3.0
    assert torch.roll(torch.arange(5), 2).tolist() == [3, 4, 0, 1, 2]
    assert torch.roll(x, (1, 1), (0, 1)).tolist() == [[5.0, 3.0, 4.0], [2.0, 0.0, 1.0]]
    assert float(torch.mean(x, dtype=torch.float64)) == 2.5
    assert x.mean(0, False, torch.float32).tolist() == [1.5, 2.5, 3.5]
    assert torch.nn.functional.group_norm(torch.ones(2, 4, 3), 2).abs().max() == 0
