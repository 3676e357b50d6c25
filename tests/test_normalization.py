"""Normalization layers (patches/normalization.py) against real PyTorch 2.13: parameters, buffers, ``state_dict``
keys and shapes, ``repr``, outputs in training and eval mode after running statistics moved, a strict load of a
PyTorch-saved checkpoint, and a training run through run.py (compiled step and eager bridge).

Reference: tests/fixtures/normalization_reference.json and normalization_checkpoint.pth, recorded with
``.venv-ref/bin/python tests/fixtures/normalization_cases.py --record``. Without the patch
(``ADAPTER_DISABLE_PATCHES=normalization``) every test here fails: extra weight/bias/running-stat entries,
``num_batches_tracked`` stuck at 0, ``momentum=None`` statistics that never move, InstanceNorm without a CPU kernel,
``bias=`` a TypeError, no ``nn.RMSNorm``, and ``repr`` without ``bias=``.
"""
import os

import numpy as np
import pytest

from support import FIXTURES, load_reference, run_json

REF = load_reference("normalization_reference.json")

# float32 results of differently ordered reductions (MindSpore's kernels vs ATen's): a few ulps of the values,
# which are O(1) here.
RTOL, ATOL = 2e-5, 2e-5


def _close(got, want, what, rtol=RTOL, atol=ATOL):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


def _cases():
    from tests.fixtures import normalization_cases
    return normalization_cases


@pytest.mark.parametrize("name", sorted(REF["cases"]))
def test_layer_matches_pytorch(name):
    """Keys/params/buffers/shapes/repr as PyTorch's; the output of the 3rd training forward; the eval output after
    3 training forwards moved the running statistics; the final state_dict values (num_batches_tracked included)."""
    ref = REF["cases"][name]
    got = _cases().run_case(name)
    for key in ("keys", "shapes", "params", "buffers", "weight_is_none", "bias_is_none", "repr"):
        assert got[key] == ref[key], f"{name}: {key}"
    tol = {"rtol": 1e-12, "atol": 1e-12} if "float64" in name else {}  # float64 stays float64 (no float32 step)
    _close(got["train"], ref["train"], f"{name}: training output", **tol)
    _close(got["eval"], ref["eval"], f"{name}: eval output", **tol)
    for key, value in ref["state"].items():
        _close(got["state"][key], value, f"{name}: state_dict[{key!r}]", **tol)


def test_functionals_match_pytorch():
    """``F.layer_norm/group_norm/batch_norm/instance_norm`` with weight/bias None, ``F.rms_norm``/``torch.rms_norm``
    (float16 input computed in float32 as PyTorch), running statistics updated by the functional calls."""
    got = _cases().functionals()
    for key, value in REF["functional"].items():
        rtol = 1e-3 if key.endswith("half") else RTOL  # float16 output: 11-bit mantissa
        _close(got[key], value, f"functional {key}", rtol=rtol, atol=rtol)


def test_pytorch_checkpoint_loads_strict_and_gives_pytorchs_output():
    """A state_dict saved by real PyTorch (after 3 training steps: moved statistics, num_batches_tracked 3) loads
    with strict=True into the same model built here, and its eval output is PyTorch's."""
    import torch
    cases = _cases()
    net = cases.make_net()
    state = torch.load(os.path.join(FIXTURES, "normalization_checkpoint.pth"))
    result = net.load_state_dict(state, strict=True)
    assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
    assert list(net.state_dict().keys()) == list(REF["train"]["state"].keys())
    net.eval()
    with torch.no_grad():
        out = net(cases.eval_input())
    _close(out.flatten().tolist(), REF["train"]["eval"], "eval output of the loaded PyTorch checkpoint")
    assert int(net.bn_cma.num_batches_tracked) == 3


@pytest.mark.parametrize("mode", ["auto", "pynative"])
def test_training_run_matches_pytorch(mode):
    """Three SGD steps of a model with every variant (affine=False, momentum=None, InstanceNorm affine and tracked,
    GroupNorm without affine, BatchNorm1d without running stats, LayerNorm bias=False / no affine, RMSNorm), run
    through run.py compiled and on the eager bridge: losses, eval output, and every state_dict value as PyTorch's,
    so the statistics (and num_batches_tracked) also move inside the compiled step."""
    ref = REF["train"]
    got, stderr = run_json("--explain", "--mode", mode, "--original", os.path.join(FIXTURES, "normalization_cases.py"))
    if mode == "auto":
        with open(os.path.join(FIXTURES, "normalization_cases.py")) as f:
            line = next(i for i, text in enumerate(f, 1) if "loss.backward()" in text)
        assert f"normalization_cases.py:{line}: backward() of loss — compiled (graph mode" in stderr, stderr[-2000:]
    assert got["params"] == ref["params"] and got["buffers"] == ref["buffers"]
    _close(got["losses"], ref["losses"], "losses", rtol=1e-5, atol=0)
    _close(got["eval"], ref["eval"], "eval output", rtol=1e-4, atol=1e-4)
    assert list(got["state"]) == list(ref["state"])
    for key, value in ref["state"].items():
        _close(got["state"][key], value, f"state_dict[{key!r}]", rtol=1e-4, atol=1e-5)


def _bn_layers(torch):
    torch.manual_seed(0)
    return {"bn1d_2d": (torch.nn.BatchNorm1d(6), torch.randn(8, 6)),
            "bn1d_3d": (torch.nn.BatchNorm1d(6, momentum=0.3), torch.randn(4, 6, 5)),
            "bn2d": (torch.nn.BatchNorm2d(3, eps=1e-3), torch.randn(4, 3, 5, 5))}


def _bn_compiled(general: bool):
    """Each plain BatchNorm layer compiled (graph mode), two training calls then one eval call: outputs, running
    statistics and num_batches_tracked, by the fast path or (``general``) with it turned off."""
    import torch
    from adapter.compiled_forward import _ForwardCell
    from adapter.graph_semantics import run_cell
    from patches import normalization
    out = {}
    with pytest.MonkeyPatch.context() as patch:
        if general:
            patch.setattr(normalization, "_bn_fast_ranks", {})
        for name, (layer, x) in _bn_layers(torch).items():
            cell = _ForwardCell(layer)
            layer.train()
            ys = [run_cell(cell, x)[0].asnumpy() for _ in range(2)]
            layer.eval()
            ys.append(run_cell(_ForwardCell(layer), x)[0].asnumpy())
            out[name] = ys + [layer.running_mean.numpy(), layer.running_var.numpy(), int(layer.num_batches_tracked)]
    return out


def test_plain_batchnorm_fast_path_is_the_general_forward(monkeypatch):
    """The fast path of ``_batch_norm_forward`` (BatchNorm1d/2d with weight, bias, tracked statistics and a float
    momentum: the checks decided in Python, fewer graph nodes to compile) gives bit for bit the general path's
    outputs, running statistics and num_batches_tracked, compiled; eagerly, plain layers never reach the general
    path, and the inputs the checks reject still get its errors (PyTorch's messages)."""
    fast, general = _bn_compiled(False), _bn_compiled(True)
    for name in fast:
        for got, want in zip(fast[name], general[name]):
            assert np.array_equal(got, want), name
        assert fast[name][-1] == 2

    import torch
    from patches import normalization
    calls = []
    general_forward = normalization._batch_norm_general
    monkeypatch.setattr(normalization, "_batch_norm_general", lambda m, x: calls.append(1) or general_forward(m, x))
    for layer, x in _bn_layers(torch).values():
        layer(x)
    assert calls == []
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        torch.nn.BatchNorm2d(3)(torch.randn(1, 3, 1, 1))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        torch.nn.BatchNorm2d(3)(torch.randn(3, 4, 4))
    assert len(calls) == 2
    torch.nn.BatchNorm2d(3, momentum=None)(torch.randn(2, 3, 4, 4))  # not plain: the general path
    assert len(calls) == 3
