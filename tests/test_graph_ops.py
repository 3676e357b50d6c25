"""Ops that ran in PyNative but did not compile in a graph, or compiled to something else (issue 35, op_db's
compiled column), each against a closed form computed with numpy: the forward and the gradient of
``(out * 1.5).sum()`` in one compiled graph, as ``run.py``'s compiled step and the OpInfo replay compile them.

Measured without the fixes (mindspore 2.10, 2026-12-06): ``torch.var(x)`` / ``x.var()`` / ``torch.var_mean(x)``
"For primitive[AddN], the input type must be same" (MindSpore's graph ``Tensor.var`` over every axis to a 0-d
result: its gradient; patches/empty_reductions.py); ``torch.logsumexp`` "cannot get attributes detach"
(patches/result_dtypes.py); ``torch.squeeze(x, (0, -1))`` "tuple indices must be integers or slices, not tuple"
(patches/op_arguments.py); ``torch.meshgrid`` of one tensor "For primitive[Meshgrid], the number of input tensors
must be greater than 1" (patches/meshgrid_single.py); ``x.repeat_interleave(2, dim=1)`` "The parameters number of
the function is 2, but the number of provided arguments is 3" (patches/repeat_interleave.py);
``torch.round(x, decimals=-3)`` NaN everywhere, silently (an integer ``10**-3`` in the graph:
patches/round_decimals.py); explicit operator methods ``x.__rsub__(1.5)``, ``x.__rmatmul__(y)``... "cannot get
attributes __rsub__", and ``torch.index_fill(x, 1, idx, v)`` "the input argument[index] must be a type of
{Tensor[Int32]}" (MindSpore's same-named method; adapter/graph_methods.py)."""
import numpy as np
import pytest
import torch  # MindTorch (tests/conftest.py); module globals: an import inside compiled code does not compile

SAMPLE = ((np.arange(12.0) * 7) % 12 / 12).reshape(3, 4).astype(np.float32)
N = SAMPLE.size


def _logsumexp_grad(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def var_all(x):
    return torch.var(x)


def var_method(x):
    return x.var()


def var_mean_all(x):
    v, m = torch.var_mean(x)
    return v + m


def logsumexp_keepdim(x):
    return torch.logsumexp(x, (1,), True)


def squeeze_dims(x):
    return torch.squeeze(x.reshape(1, 12, 1), (0, -1)) * x.reshape(1, 12, 1).squeeze((2, 0))


def meshgrid_one(x):
    return torch.meshgrid([x[0, 1]], indexing="xy")[0] * torch.meshgrid(x[1], indexing="ij")[0].sum()


def _first_row_grad(x):
    g = np.zeros_like(x)
    g[0, 1] = x[1].sum()
    g[1] = x[0, 1]
    return g


def repeat_interleave_dims(x):
    return x.repeat_interleave(2, dim=1).sum(0) + torch.repeat_interleave(x, 3)[:8] * 0.5


def _repeat_forward(x):
    return np.repeat(x, 2, axis=1).sum(0) + np.repeat(x.ravel(), 3)[:8] * 0.5


def _repeat_grad(x):
    g = np.full_like(x, 2.0)
    g.ravel()[:2] += 1.5  # x.ravel()[0] has 3 copies in [:8], [1] 3, [2] 2
    g.ravel()[2] += 1.0
    return g


def round_decimals(x):
    return torch.round(x * 3000 - 1500, decimals=-3) + x.round(decimals=2)


def _round_forward(x):  # PyTorch 2.13 gives exactly these float32 values for SAMPLE (checked under .venv-ref)
    x = x.astype(np.float32)
    return (np.round((x * np.float32(3000) - np.float32(1500)) / np.float32(1000)) * np.float32(1000)
            + np.round(x * np.float32(100)) / np.float32(100))


def reflected_operators(x):
    return x.__rsub__(1.5) * x.__rmul__(2.0) + x.__rpow__(2.0) + x.__radd__(x) - (x + 1).__rmod__(0.7)


def reflected_matmul(x):
    return (x.__rmatmul__(x.t()) * 3 + x.t().__matmul__(x).__neg__()).sum(0)


def exported_function(x):
    return torch.index_fill(x, 1, torch.tensor([0, 2]), -1.0) + torch.masked_fill(x, x > 0.5, 2.0)


def _exported_forward(x):
    filled = x.copy()
    filled[:, [0, 2]] = -1.0
    return filled + np.where(x > 0.5, 2.0, x)


def _exported_grad(x):
    g = np.ones_like(x)
    g[:, [0, 2]] = 0.0
    return g + (x <= 0.5)


def _var_grad(x):
    return 2 * (x - x.mean()) / (N - 1)


# compiled function of x (plain functions: MindSpore's parser reads their source) -> (closed-form forward,
# closed-form gradient of sum(out) w.r.t. x)
CASES = {
    var_all: (lambda x: x.var(ddof=1), _var_grad),
    var_method: (lambda x: x.var(ddof=1), _var_grad),
    var_mean_all: (lambda x: x.var(ddof=1) + x.mean(), lambda x: _var_grad(x) + 1.0 / N),
    squeeze_dims: (lambda x: x.ravel() ** 2, lambda x: 2 * x),
    meshgrid_one: (lambda x: np.array([x[0, 1] * x[1].sum()]), _first_row_grad),
    repeat_interleave_dims: (_repeat_forward, _repeat_grad),
    round_decimals: (_round_forward, np.zeros_like),
    reflected_operators: (
        lambda x: (1.5 - x) * 2 * x + 2.0 ** x + 2 * x - np.mod(0.7, x + 1),
        lambda x: 3 - 4 * x + np.log(2.0) * 2.0 ** x + 2 + np.floor(0.7 / (x + 1))),
    reflected_matmul: (lambda x: 2 * (x.T @ x).sum(0), lambda x: np.repeat(4 * x.sum(1, keepdims=True), 4, 1)),
    exported_function: (_exported_forward, _exported_grad),
    logsumexp_keepdim: (lambda x: np.log(np.exp(x).sum(1, keepdims=True)), lambda x: _logsumexp_grad(x, 1)),
}
BY_NAME = {fn.__name__: fn for fn in CASES}


def _compiled(fn, x):
    import mindspore as ms
    from adapter.graph_semantics import graph_mode

    class Net(torch.nn.Module):
        def forward(self, x):
            return fn(x)

    class Loss(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x):
            return (self.net(x) * 1.5).sum()

    net = Net()
    loss = Loss(net)

    class Both(ms.nn.Cell):
        def __init__(self):
            super().__init__(auto_prefix=False)
            self.net, self.loss = net, loss
            self.grad = ms.ops.GradOperation(get_all=True)

        def construct(self, x):
            return self.net(x), self.grad(self.loss)(x)[0]

    with graph_mode():
        out, grad = Both()(x)
    return out.asnumpy(), grad.asnumpy()


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_compiles_with_closed_form_values(name):
    fn = BY_NAME[name]
    forward, gradient = CASES[fn]
    out, grad = _compiled(fn, torch.tensor(SAMPLE))
    x = SAMPLE.astype(np.float64)
    np.testing.assert_allclose(out, forward(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad, 1.5 * gradient(x), rtol=1e-5, atol=1e-6)


def test_squeeze_dims_eager_as_pytorch():
    """PyTorch 2.13's shapes (closed rule: listed dims of size 1 go) and its IndexError for a dim out of range."""
    x = torch.zeros(1, 3, 1, 2)
    assert tuple(torch.squeeze(x, ()).shape) == (1, 3, 1, 2)
    assert tuple(torch.squeeze(x, (0, 1, -2)).shape) == (3, 2)
    assert tuple(x.squeeze([2]).shape) == (1, 3, 2)
    with pytest.raises(IndexError, match=r"expected to be in range of \[-4, 3\], but got 4"):
        torch.squeeze(x, (0, 4))
    assert [tuple(t.shape) for t in torch.meshgrid(torch.tensor(2.0), indexing="ij")] == [(1,)]
