"""``torch.einsum`` (patches/einsum.py) against real PyTorch 2.13: values and gradients of 27 cases in float32 and
float64 (tests/fixtures/einsum_cases.py, reference in tests/fixtures/einsum_reference.json), eagerly and compiled in
one graph; PyTorch's errors and result dtypes; 300 random calls (einsum_cases.random_cases) by checksums; and a
training step made of einsums compiled by run.py (tests/fixtures/einsum_train.py). Without the patch every test
fails: MindSpore's Einsum has no CPU kernel."""
import os
import sys

import numpy as np
import pytest

from support import FIXTURES, ROOT, load_reference

sys.path.insert(0, FIXTURES)
sys.path.insert(0, os.path.join(ROOT, "tests"))
REFERENCE = load_reference("einsum_reference.json")

import einsum_cases  # noqa: E402

TOLERANCE = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-13)}


def _inputs(case, dtype):
    import mindspore as ms
    return [ms.Tensor(einsum_cases.operand(s, k, dtype)) for k, s in enumerate(case[1])]


def _value_and_grads(case, dtype, tensors):
    """The case's einsum and the gradients of its weighted sum (einsum_cases docstring) by mindspore.grad."""
    import mindspore as ms
    import torch
    from mindtorch.torch.tensor import cast_to_adapter_tensor, cast_to_ms_tensor

    def value(*xs):
        return cast_to_ms_tensor(einsum_cases.call(torch, case, [cast_to_adapter_tensor(x) for x in xs]))

    def loss(*xs):
        out = value(*xs)
        return (out * ms.Tensor(einsum_cases.loss_weights(out.shape, dtype))).sum()

    grads = ms.grad(loss, grad_position=tuple(range(len(tensors))))(*tensors)
    return value(*tensors), grads if isinstance(grads, tuple) else (grads,)


def _compare(case, dtype, ref, out, grads):
    tol = TOLERANCE[dtype]
    assert list(out.shape) == ref["shape"], (case[0], out.shape)
    assert str(out.dtype).lower() == dtype, (case[0], out.dtype)
    np.testing.assert_allclose(out.asnumpy().reshape(-1), ref["value"], **tol, err_msg=case[0])
    assert len(grads) == len(ref["grads"])
    for k, (g, r) in enumerate(zip(grads, ref["grads"])):
        np.testing.assert_allclose(g.asnumpy().reshape(-1), r, **tol, err_msg=f"{case[0]}: grad of operand {k}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("index", range(len(einsum_cases.CASES)),
                         ids=[f"{c[0]}|{c[2]}" for c in einsum_cases.CASES])
def test_values_and_gradients_equal_pytorch(index, dtype):
    case = einsum_cases.CASES[index]
    ref = REFERENCE["cases"][dtype][index]
    assert ref["equation"] == case[0]
    out, grads = _value_and_grads(case, dtype, _inputs(case, dtype))
    _compare(case, dtype, ref, out, grads)


def test_errors_and_result_dtypes_are_pytorchs():
    import torch
    ours = einsum_cases.errors(torch)
    for got, ref, case in zip(ours, REFERENCE["errors"], einsum_cases.ERRORS):
        assert got == ref, (case, got, ref)
    assert len(ours) == len(REFERENCE["errors"])
    x = torch.ones(2, 3)
    for args in [(x,), ("ij",), ("ij", [])]:
        with pytest.raises(ValueError, match=r"must specify the equation string and at least one operand"):
            torch.einsum(*args)
    with pytest.raises(ValueError, match=r"subscript in subscript list is not within the valid range \[0, 52\)"):
        torch.einsum(x, [0, 60])


def test_300_random_calls_equal_pytorch():
    """einsum_cases.random_cases (broadcasting, empty operands, repeated subscripts, ellipses, 1-4 operands,
    implicit and permuted outputs, errors) against real PyTorch: shapes, error texts, and checksums of the values and
    of the gradients of the weighted sum (float64, 1e-10)."""
    import mindspore as ms
    import torch
    from mindtorch.torch.tensor import cast_to_adapter_tensor, cast_to_ms_tensor

    reference = REFERENCE["random"]
    cases = einsum_cases.random_cases()
    assert len(cases) == len(reference)
    for (equation, shapes, arrays, seed), ref in zip(cases, reference):
        tensors = [ms.Tensor(x) for x in arrays]
        if isinstance(ref, str):
            with pytest.raises(Exception) as caught:
                torch.einsum(equation, *[cast_to_adapter_tensor(t) for t in tensors])
            assert f"{caught.type.__name__}: {caught.value}" == ref, (equation, shapes)
            continue
        w = np.random.RandomState(seed).randn(*ref[0])

        def loss(*xs):
            out = cast_to_ms_tensor(torch.einsum(equation, *[cast_to_adapter_tensor(x) for x in xs]))
            return (out * ms.Tensor(w)).sum()

        out = cast_to_ms_tensor(torch.einsum(equation, *[cast_to_adapter_tensor(t) for t in tensors]))
        grads = ms.grad(loss, grad_position=tuple(range(len(tensors))))(*tensors)
        grads = grads if isinstance(grads, tuple) else (grads,)
        assert list(out.shape) == ref[0], (equation, shapes)
        ours = einsum_cases.checksums(out.asnumpy(), [g.asnumpy() for g in grads], seed)
        np.testing.assert_allclose(ours, ref[1], rtol=1e-10, atol=1e-12, err_msg=f"{equation} {shapes}")


# one case per feature (attention, ellipsis, diagonal, three operands, list, broadcasting, repeated subscript with a
# contraction, upper case, 0-D, sublists) for the fast graph test; all 27 compile in ~30 s
GRAPH_SUBSET = (0, 4, 5, 10, 11, 13, 16, 18, 20, 25, 26)


@pytest.mark.parametrize("subset", ["features", pytest.param("all", marks=pytest.mark.slow)])
def test_cases_compiled_in_one_graph_equal_pytorch(subset):
    """The cases' values and gradients computed in one GRAPH_MODE graph (shapes and equations constant at compile
    time) equal the reference: the plan runs as a ``constexpr`` and the program loops unroll."""
    import mindspore as ms
    import torch
    from adapter.graph_semantics import run_cell
    from mindtorch.torch.tensor import cast_to_adapter_tensor, cast_to_ms_tensor

    dtype = "float64"
    chosen = GRAPH_SUBSET if subset == "features" else range(len(einsum_cases.CASES))
    cases = tuple(einsum_cases.CASES[i] for i in chosen)
    references = [REFERENCE["cases"][dtype][i] for i in chosen]
    counts = tuple(len(c[1]) for c in cases)
    flat = [t for c in cases for t in _inputs(c, dtype)]
    weights = [ms.Tensor(einsum_cases.loss_weights(tuple(ref["shape"]), dtype)) for ref in references]

    class AllCases(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.weights = tuple(weights)

        def construct(self, *xs):
            outs = ()
            start = 0
            for case, n, w in zip(cases, counts, self.weights):
                ops = cast_to_adapter_tensor(xs[start:start + n])
                if case[2] == "args":
                    out = torch.einsum(case[0], *ops)
                elif case[2] == "list":
                    out = torch.einsum(case[0], ops)
                else:
                    subs = einsum_cases.SUBLISTS[case[0]]
                    args = ()
                    for t, sub in zip(ops, subs):
                        args = args + (t, sub)
                    if len(subs) > n:
                        args = args + (subs[n],)
                    out = torch.einsum(*args)
                out = cast_to_ms_tensor(out)
                outs = outs + ((out * w).sum(),)
                start = start + n
            return outs

    class Loss(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.net = AllCases()
            self.grad = ms.ops.GradOperation(get_all=True)

        def construct(self, *xs):
            return self.net(*xs), self.grad(self._total)(*xs)

        def _total(self, *xs):
            total = 0.0
            for v in self.net(*xs):
                total = total + v
            return total

    sums, grads = run_cell(Loss(), *flat)
    start = 0
    assert len(sums) == len(cases)
    for case, ref, s in zip(cases, references, sums):
        w = einsum_cases.loss_weights(tuple(ref["shape"]), dtype).reshape(-1)
        np.testing.assert_allclose(s.asnumpy(), np.dot(np.array(ref["value"]), w), rtol=1e-12, atol=1e-13,
                                   err_msg=case[0])
        for k, r in enumerate(ref["grads"]):
            np.testing.assert_allclose(grads[start + k].asnumpy().reshape(-1), r, rtol=1e-12, atol=1e-13,
                                       err_msg=f"{case[0]}: grad of operand {k}")
        start += len(case[1])


def test_a_training_step_made_of_einsums_compiles_and_trains_as_pytorch():
    from support import run_json
    ours, stderr = run_json("--explain", "--original", os.path.join(FIXTURES, "einsum_train.py"))
    assert "backward() of loss — compiled (graph mode" in stderr, stderr[-3000:]
    np.testing.assert_allclose(ours["losses"], REFERENCE["einsum_train"]["losses"], rtol=1e-5)


@pytest.mark.slow
def test_the_same_step_on_the_eager_bridge_trains_as_pytorch():
    from support import run_json
    ours, _ = run_json("--mode", "pynative", "--original", os.path.join(FIXTURES, "einsum_train.py"))
    np.testing.assert_allclose(ours["losses"], REFERENCE["einsum_train"]["losses"], rtol=1e-5)
