"""nn.functional and linalg calls (and linalg gradients) that raised in PyNative (issue 35, helper fwd-b): op_db's
samples replayed here against the values real PyTorch 2.13 recorded (tests/fixtures/opinfo/), forward and gradient,
one child process for all cases.

Each case below raised before its patch (the committed tests/fixtures/opinfo/results.json of 2026-12-06 lists each as
``fwd: error``, ``error class`` for the error inputs, or ``type`` for a list/int where PyTorch returns a
Size/tuple/tensor); ``ADAPTER_DISABLE_PATCHES=<patch>`` brings the failure back. Only the cases that failed are replayed
(the entries' passing samples are in tests/test_opinfo.py's full-replay regression check), PyNative only (the compiled
forms fall back to eager with a reason, as before).
"""
import re

import pytest

from app.tools.conformance import opinfo_replay as op

#: patch -> op_db cases (entry:sample / entry:error) it makes pass; one or two per distinct failure, to keep the
#: replay short (~35 cases, one child)
CASES = {
    "conv_transpose_padding": ("nn.functional.conv_transpose1d:s0", "nn.functional.conv_transpose2d:s1",
                               "nn.functional.conv_transpose2d:s2", "nn.functional.conv_transpose3d:s2"),
    "batch_norm_momentum": ("nn.functional.batch_norm:s1",),
    "interpolate_modes": ("nn.functional.interpolate.area:s0", "nn.functional.interpolate.nearest-exact:s2"),
    "empty_batch": ("nn.functional.pad.circular:s0", "nn.functional.unfold:s0", "nn.functional.adaptive_avg_pool1d:s0"),
    "margin_losses": ("nn.functional.soft_margin_loss:s1", "nn.functional.multi_margin_loss:s0",
                      "nn.functional.multilabel_margin_loss:s2"),
    "prelu_rrelu": ("nn.functional.prelu:s0", "nn.functional.prelu:s2", "nn.functional.prelu:e2",
                    "nn.functional.rrelu:s2"),
    "op_arguments": ("norm.fro:s2",),
    "small_matrices": ("linalg.det:s1", "linalg.slogdet:s1", "linalg.inv:s1", "linalg.inv_ex:s0"),
    "empty_svd": ("linalg.svd:s0", "linalg.svdvals:s2", "linalg.matrix_rank:s2", "pinverse:s2",
                  "linalg.multi_dot:s1"),
    "broadcast_results": ("broadcast_shapes:s0", "broadcast_tensors:s0"),
    "linalg_grads": ("cholesky:s0", "linalg.cholesky_ex:s1", "linalg.solve:s0", "linalg.solve:s2", "linalg.eigh:s0",
                     "linalg.eigvalsh:s0"),
    "return_types": ("linalg.qr:s2", "linalg.lu_factor_ex:s1", "lu:s1"),
}
#: patches whose cases are checked forward only: their gradients still raise (MindSpore has no backward for the
#: factorizations: "Qr's bprop not defined", "numpy backward issue"), a clear error, not a wrong value
FORWARD_ONLY = ("return_types",)


def _subset(meta, case_ids):
    """``meta`` with only the listed cases in its entries (``op.run`` replays every case of the entries given)."""
    wanted = set(case_ids)
    entries = {}
    for name, entry in meta["entries"].items():
        samples = [r for r in entry["samples"] if r["id"] in wanted]
        errors = [r for r in entry["errors"] if r["id"] in wanted]
        if samples or errors:
            entries[name] = dict(entry, samples=samples, errors=errors)
    return dict(meta, entries=entries)


@pytest.fixture(scope="module")
def replayed():
    meta, _ = op.load_golden()
    cases = sorted({c for group in CASES.values() for c in group})
    sub = _subset(meta, cases)
    assert sum(len(e["samples"]) + len(e["errors"]) for e in sub["entries"].values()) == len(cases)
    return op.run(sub, only=list(sub["entries"]), workers=1, graph_samples=0)


def _rounding(verdict) -> bool:
    """A gradient off by at most 1e-4 relative in a few elements: float32 summation order (the transposed
    convolution's gradient is a sum over the kernel taps taken in another order), not a wrong gradient."""
    rels = [float(r) for r in re.findall(r"max rel ([0-9.e+-]+)", verdict.get("why", ""))]
    return verdict.get("fwd") == "pass" and verdict.get("grad") == "gradient" and bool(rels) and max(rels) <= 1e-4


@pytest.mark.parametrize("patch", sorted(CASES))
def test_cases_that_raised_now_match_pytorch(replayed, patch):
    """PyTorch's recorded result and gradient (or its error class, for ``:e`` cases), PyNative."""
    bad = {}
    for case in CASES[patch]:
        verdict = replayed[case]["pynative"]
        if verdict["fwd"] != "pass" or (patch not in FORWARD_ONLY and verdict.get("grad") not in (None, "pass")):
            if not _rounding(verdict):
                bad[case] = verdict
    assert not bad, bad


def test_one_by_one_matrices():
    """patches/small_matrices.py on closed forms (PyTorch 2.13 gives the same): ``det([[a]]) = a``, ``logdet`` = log a
    (NaN for a < 0), ``slogdet`` = (sign a, log|a|), ``inv`` = 1/a and its gradient -1/a^2, PyTorch's error for a = 0
    and ``inv_ex``'s ``info`` 1 there. Without the patch each raised MindSpore's "row size must be greater than or
    equal to 2"."""
    import math

    import mindspore as ms
    import torch
    from mindtorch.torch.tensor import cast_to_adapter_tensor, cast_to_ms_tensor
    a = torch.tensor([[[-2.0]], [[4.0]]])
    assert torch.det(a).tolist() == [-2.0, 4.0] and torch.linalg.det(a).tolist() == [-2.0, 4.0]
    logdet = torch.logdet(a).tolist()
    assert math.isnan(logdet[0]) and logdet[1] == pytest.approx(math.log(4.0))
    sign, logabs = torch.linalg.slogdet(a)
    assert sign.tolist() == [-1.0, 1.0] and logabs.tolist() == pytest.approx([math.log(2.0), math.log(4.0)])
    assert torch.linalg.inv(a).reshape(-1).tolist() == [-0.5, 0.25]
    grad = ms.grad(lambda x: cast_to_ms_tensor(torch.inverse(cast_to_adapter_tensor(x)).sum()))(cast_to_ms_tensor(a))
    assert cast_to_adapter_tensor(grad).reshape(-1).tolist() == pytest.approx([-0.25, -1.0 / 16])
    with pytest.raises(RuntimeError, match="input matrix is singular"):
        torch.linalg.inv(torch.zeros(1, 1))
    assert torch.linalg.inv_ex(torch.zeros(1, 1)).info.tolist() == 1


def test_rrelu_in_evaluation_is_the_mean_slope():
    """``F.rrelu`` with ``training=False`` (its default) and ``nn.RReLU`` in ``eval()`` use the fixed slope
    ``(lower + upper) / 2``: PyTorch 2.13 gives ``-0.2`` for each of ``-1`` x 6 with bounds 0.1, 0.3 (closed form).
    Without patches/prelu_rrelu.py MindSpore's ``ops.rrelu`` drew a random slope per element, silently. In training
    each negative element gets its own slope in ``[lower, upper]``, and positives pass unchanged."""
    import torch
    import torch.nn.functional as F
    x = -torch.ones(6)
    assert F.rrelu(x, 0.1, 0.3).tolist() == pytest.approx([-0.2] * 6)
    module = torch.nn.RReLU(0.1, 0.3).eval()
    assert module(x).tolist() == pytest.approx([-0.2] * 6)
    drawn = module.train()(torch.tensor([-1.0] * 200 + [2.0])).tolist()
    assert all(-0.3 - 1e-6 <= v <= -0.1 + 1e-6 for v in drawn[:200]) and len(set(drawn[:200])) > 1
    assert drawn[200] == 2.0


def test_decoder_with_output_padding_compiled_matches_pytorch():
    """tests/fixtures/conv_transpose_train.py (``nn.ConvTranspose2d(..., output_padding=1)``, ``output_size=``,
    ``nn.ConvTranspose1d`` with ``output_padding`` and dilation, ``F.conv_transpose2d`` of an unbatched input),
    compiled (``--mode graph``: no fallback), SGD with momentum, 3 steps: PyTorch 2.13's losses, first weight gradient
    and result shapes. Without patches/conv_transpose_padding.py (``ADAPTER_DISABLE_PATCHES=conv_transpose_padding``)
    building the model raises ``ValueError: output_padding '(1, 1)' is not currently supported.``"""
    import numpy as np
    from support import fixture_path, load_reference, run_json
    reference = load_reference("conv_transpose_reference.json")
    out, err = run_json("--mode", "graph", "--explain", "--original", fixture_path("conv_transpose_train.py"))
    assert "compiled (graph mode" in err, err[-2000:]
    assert out["shapes"] == reference["shapes"]
    np.testing.assert_allclose(out["losses"], reference["losses"], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(out["up1_grad"], reference["up1_grad"], rtol=1e-4, atol=1e-8)
