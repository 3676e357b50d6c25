"""Channel dropout (patches/dropout.py) against real PyTorch 2.13: which elements share a mask draw, for every rank,
the errors and warnings (tests/fixtures/dropout_reference.json, recorded with REFERENCE_SCRIPT), the scale 1/(1-p)
per dtype, the zero fraction, the identity cases, in place, and inside compiled graphs (forward and training step).
Masks are random: the tests check their structure, not their values."""
import json
import os
import warnings

import numpy as np
import pytest

from support import FIXTURES, last_json, load_reference, run_py

REFERENCE = load_reference("dropout_reference.json", "cases")
SHAPE = (32, 24, 3, 2, 2, 2)  # 32 and 24 draws along dims 0 and 1: a mask that should vary does (p = 1 - 2**-23)

# Run with .venv-ref/bin/python (real torch); its output, reshaped, is fixtures/dropout_reference.json.
REFERENCE_SCRIPT = '''
import torch, warnings, torch.nn.functional as F, json
SHAPE = (32, 24, 3, 2, 2, 2)
fns = {"dropout1d": F.dropout1d, "dropout2d": F.dropout2d, "dropout3d": F.dropout3d,
       "feature_dropout": lambda x, p: torch.feature_dropout(x, p, True)}
out = {}
for name, fn in fns.items():
    for nd in range(1, 7):
        x = torch.ones(SHAPE[:nd])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                y = fn(x, 0.5)
                res = [d for d in range(y.dim()) if not torch.equal(y, y.narrow(d, 0, 1).expand_as(y))]
            except Exception as e:
                res = [type(e).__name__, str(e)]
        out[f"{name}/{nd}"] = [res, [str(i.message) for i in w]]
print(json.dumps(out))
'''


def _call(name, x, p, **kw):
    import torch
    import torch.nn.functional as F
    if name == "feature_dropout":
        return torch.feature_dropout(x, p, kw.get("training", True))
    return getattr(F, name)(x, p, **kw)


def _varies_along(y):
    return [d for d in range(y.ndim) if not np.array_equal(y, np.broadcast_to(y.take([0], axis=d), y.shape))]


@pytest.mark.parametrize("case", sorted(REFERENCE))
def test_mask_structure_errors_and_warnings_equal_pytorch(case):
    import torch
    name, ndim = case.split("/")
    ref = REFERENCE[case]
    x = torch.ones(SHAPE[:int(ndim)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if "error" in ref:
            with pytest.raises(Exception) as info:
                _call(name, x, 0.5)
            assert [type(info.value).__name__, str(info.value)] == ref["error"]
        else:
            y = _call(name, x, 0.5).numpy()
            assert y.shape == SHAPE[:int(ndim)]
            assert set(np.unique(y)) <= {0.0, 2.0}
            assert _varies_along(y) == ref["mask_varies_along"]
    ours = [w for w in caught if w.category is UserWarning and "dropout" in str(w.message)]
    assert [str(w.message) for w in ours] == ref["warnings"]
    assert all(w.filename == __file__ for w in ours)  # attributed to the line that called the dropout


@pytest.mark.parametrize("dtype,scale", [("float32", np.float32(1) / np.float32(0.7)),
                                         ("float64", 1 / 0.7),  # PyTorch: 1.4285714285714286
                                         ("float16", 1.4287109375)])  # PyTorch: fp32 1/0.7 rounded to half
def test_scale_and_zero_fraction(dtype, scale):
    import torch
    n, c = 200, 300
    x = torch.ones(n, c, 2, dtype=getattr(torch, dtype))
    y = torch.nn.Dropout2d(0.3)(x.view(n, c, 2, 1)).view(n, c, 2).numpy()
    assert y.dtype == np.dtype(dtype)
    assert set(np.unique(y).tolist()) == {0.0, float(np.asarray(scale, dtype))}
    zero = (y[:, :, 0] == 0).mean()
    assert abs(zero - 0.3) < 5 * np.sqrt(0.3 * 0.7 / (n * c))  # binomial, 5 sigma
    assert np.array_equal(y[:, :, 0], y[:, :, 1])


def test_values_are_input_times_the_mask_and_gradient_is_the_mask():
    import torch
    x = torch.rand(64, 10) + 0.5
    w = torch.nn.Linear(10, 12)
    y = torch.nn.Dropout2d(0.25)(w(x))  # 2-D: element-wise (PyTorch's feature dropout of (N, C))
    y.sum().backward()
    h = w(x).detach().numpy()
    mask = y.detach().numpy() / h
    np.testing.assert_allclose(np.unique(np.round(mask, 5)), [0.0, 1.33333], rtol=1e-5)
    keep = (mask > 0.5).astype(np.float32) / np.float32(0.75)
    np.testing.assert_allclose(y.detach().numpy(), h * keep, rtol=1e-6)
    np.testing.assert_allclose(w.weight.grad.numpy(), keep.T @ x.numpy(), rtol=1e-5)


def test_identity_cases_in_place_and_argument_errors():
    import torch
    import torch.nn.functional as F
    x = torch.ones(4, 5, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert F.dropout2d(x, 0.5, training=False) is x  # eval: the input itself, as PyTorch
        assert F.dropout2d(x, 0.0) is x
        assert F.dropout2d(torch.ones(4), 0.5, training=False).shape == (4,)  # no rank error in eval
        assert F.dropout2d(torch.ones(0, 4), 0.5).shape == (0, 4)
        m = torch.nn.Dropout2d(0.5).eval()
        assert m(x) is x
        with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
            F.dropout1d(torch.ones(2, 3, 4, 5), 0.5, training=False)  # PyTorch checks the rank in eval too
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
            F.dropout2d(x, 1.5)
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            F.dropout2d(torch.arange(12).reshape(3, 4), 0.3)
        # p = 1: x * 0, so NaN stays NaN (PyTorch: [[nan, 0], [0, 0]])
        z = F.dropout2d(torch.tensor([[float("nan"), 1.0], [2.0, 3.0]]), 1.0).numpy()
        assert np.isnan(z[0, 0]) and (z.ravel()[1:] == 0).all()
        y = torch.ones(64, 8, 3)
        r = F.dropout2d(y, 0.5, inplace=True)
        assert r is y and set(np.unique(y.numpy())) == {0.0, 2.0}
        assert np.array_equal(y.numpy()[:, :, 0], y.numpy()[:, :, 2])
        y = torch.ones(16, 4)
        assert torch.feature_dropout_(y, 0.5, True) is y and set(np.unique(y.numpy())) == {0.0, 2.0}


def test_compiled_forward_has_pytorch_masks_and_draws_new_ones_each_call():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from adapter.compiled_forward import _ForwardCell
    from adapter.graph_semantics import run_cell

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.d2 = nn.Dropout2d(0.25)
            self.d3 = nn.Dropout3d(0.5)

        def forward(self, a, b, c):
            return self.d2(a), self.d2(b), self.d3(c), F.dropout2d(a, 0.5, inplace=True), F.dropout2d(a, 1.0)

    a, b = torch.ones(64, 32), torch.ones(64, 8, 10)
    c = torch.ones(16, 8, 2, 2, 3, dtype=torch.float64)
    cell = _ForwardCell(Net())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = [[t.asnumpy() for t in run_cell(cell, a, b, c)] for _ in range(2)]
    for y2, y3, y5, yi, yz in outs:
        assert set(np.unique(y2)) == {0.0, np.float32(1) / np.float32(0.75)} and _varies_along(y2) == [0, 1]
        assert abs((y2 == 0).mean() - 0.25) < 5 * np.sqrt(0.25 * 0.75 / y2.size)
        assert _varies_along(y3) == [0, 1] and np.array_equal(y3, np.broadcast_to(y3[:, :, :1], y3.shape))
        assert y5.dtype == np.float64 and set(np.unique(y5)) == {0.0, 2.0}
        assert np.array_equal(y5, np.broadcast_to(y5[:, :, :1, :1, :1], y5.shape))
        assert set(np.unique(yi)) == {0.0, 2.0} and not yz.any()
    assert not np.array_equal(outs[0][0], outs[1][0])  # a new mask per run of the graph
    assert set(np.unique(a.numpy())) == {1.0}  # in place is functional inside a graph


def test_training_step_with_dropout2d_on_2d_and_3d_inputs_compiles_with_pytorch_gradients():
    """tests/fixtures/dropout_train.py: the step compiles (--mode graph refuses to fall back), the masks have PyTorch's
    structure and the gradient is the mask's (W.grad = (ma + mb).T @ x), with new masks each step."""
    proc = run_py("--explain", "--mode", "graph", "--original", os.path.join(FIXTURES, "dropout_train.py"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "compiled (graph mode, fused with optimizer.step()" in proc.stderr, proc.stderr[-3000:]
    rows = last_json(proc.stdout)
    for row in rows:
        assert row["mask_values"] == [0.0, 2.0]
        assert all(abs(f - 0.5) < 0.07 for f in row["zero_fraction"])  # 2048 draws / 512 draws: > 3 sigma
        assert row["b_varies_within_channel"] == 0.0 and row["a_varies_within_sample"] > 0.5
        assert row["grad_error"] < 1e-4
    assert len({tuple(r["mask_a"]) for r in rows}) == len(rows)
    # the two PyTorch warnings, once each (the compile does not repeat them), at the module call's line
    lines = [ln for ln in proc.stderr.splitlines() if "UserWarning: dropout2d" in ln]
    assert len(lines) == 2 and all("dropout_train.py:19:" in ln for ln in lines), lines
