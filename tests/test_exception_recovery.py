"""An error raised inside the differentiated part of a step, caught by the script, leaves the next forward and
``backward()`` working, as in PyTorch (adapter/tape.py, "A forward that raises"; patches/module_call.py,
patches/grad_unwind.py).

Before (2026-12-07): after a bad embedding id (an error in MindSpore's kernel, which drops its recording) the next
``backward()`` raised MindSpore's "Can not find top cell for backward" (2.5-dev: "The pointer[finded_top_cell_] is
null"); after ``mindspore.value_and_grad`` or ``torch.autograd.functional.vjp`` of a function that raised (2.10),
``TapeError: no forward pass was recorded`` (CI: tests/test_vision_data.py's AttributeError inside value_and_grad broke
tests/test_weights_only.py's backward()). Values: tests/fixtures/exception_recovery_reference.json (real PyTorch 2.13;
the fixture's docstring gives the command).
"""
import json

import mindspore as ms
import numpy as np
import pytest
import torch
import torch.nn as nn

from support import fixture_path, load_reference, run_py

pytestmark = pytest.mark.stack  # passes on mindspore-dev 2.5 too (2026-12-07)

SCRIPT = fixture_path("exception_recovery.py")
CASES = ["skip_bad_batch", "skip_bad_tokens", "oom_retry", "reject_after_forward", "vjp_raises"]


@pytest.fixture(scope="module", params=["pynative", "auto"])
def ran_with_steps(request, tmp_path_factory):
    """The fixture's output, and ``--explain-json``'s steps by line."""
    tmp = tmp_path_factory.mktemp(f"exc_{request.param}")
    proc = run_py("--mode", request.param, "--explain-json", tmp / "explain.json", "--original", SCRIPT,
                  cache_dir=tmp / "cache")
    assert proc.returncode == 0, proc.stderr[-3000:]
    steps = {int(s["where"].rsplit(":", 1)[1]): s for s in json.loads((tmp / "explain.json").read_text())["steps"]}
    return request.param, json.loads(proc.stdout.strip().splitlines()[-1]), steps


@pytest.fixture
def ran(ran_with_steps):
    return ran_with_steps[1]


@pytest.mark.parametrize("case", CASES)
def test_losses_and_errors_as_pytorch(ran, case):
    got, want = ran[case], load_reference("exception_recovery_reference.json", case)
    assert got["errors"] == want["errors"]  # class, the script's line, the message's start
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(got["weights"], want["weights"], rtol=1e-5, atol=2e-6)


def test_a_step_whose_forward_raises_while_compiling_stays_compiled(ran_with_steps):
    """--mode auto: oom_retry's 12-row batch raises in the forward while its graph compiles; the step runs eagerly,
    raises the script's RuntimeError at its line (test above), and the site keeps its graph for the 6-row batches
    (before: it ran eagerly from then on, kind compile-error)."""
    mode, _, steps = ran_with_steps
    if mode != "auto":
        pytest.skip("compiled steps: --mode auto")
    with open(SCRIPT, encoding="utf-8") as f:
        line = next(n for n, text in enumerate(f, 1) if "# oom_retry's step" in text)
    assert steps[line]["state"] == "compiled", steps[line]


def _net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))


def _grads_of_one_step(net, x):
    net.zero_grad()
    net(x).sum().backward()
    return [p.grad.asnumpy().copy() for p in net.parameters()]


def test_backward_after_value_and_grad_raised():
    """The CI case, in this process: value_and_grad's function raises AttributeError; the next backward() gives the
    gradients it gives without that error."""
    net, x = _net(), torch.ones(2, 3)
    want = _grads_of_one_step(net, x)
    with pytest.raises(AttributeError):
        ms.value_and_grad(lambda t: (t * 2).no_such_attribute)(x)
    for got, w in zip(_grads_of_one_step(net, x), want):
        np.testing.assert_array_equal(got, w)


def test_value_and_grad_calling_the_model_still_records_for_itself():
    """A value_and_grad in progress (its function calls the model) keeps its recording: the bridge opens none inside
    it, and the gradients are value_and_grad's own (after a failed one was reset)."""
    net, x = _net(), torch.ones(2, 3)
    with pytest.raises(AttributeError):
        ms.value_and_grad(lambda t: t.no_such_attribute)(x)
    from adapter import tape
    seen = []

    def loss(t):
        out = net(t).sum()
        seen.append(tape.is_recording())
        return out
    _, grads = ms.value_and_grad(loss, None, ms.ParameterTuple(list(net.parameters())))(x)
    assert seen == [False]
    for g, w in zip(grads, _grads_of_one_step(net, x)):
        np.testing.assert_allclose(g.asnumpy(), w, rtol=1e-6)


def test_backward_after_kernel_error_in_a_module_that_did_not_open_the_recording():
    """The recording was opened by an earlier call; an embedding's bad id fails in MindSpore's kernel (which drops
    the recording): the next forward records afresh, and a backward() with no forward since says why it cannot."""
    from adapter import tape
    torch.manual_seed(0)
    emb, fc = nn.Embedding(10, 4), nn.Linear(4, 1)
    ids = torch.tensor(np.array([[1, 2], [4, 5]]))
    h = fc(torch.ones(2, 4))  # opens the recording
    with pytest.raises(IndexError):
        emb(torch.tensor(np.array([[1, 12]])))
    with pytest.raises(tape.TapeError, match="dropped by MindSpore"):
        h.sum().backward()
    fc(emb(ids)).sum().backward()
    first = fc.weight.grad.asnumpy().copy()
    fc.zero_grad()
    fc(emb(ids)).sum().backward()
    np.testing.assert_array_equal(fc.weight.grad.asnumpy(), first)


def test_failed_forward_modules_get_no_gradient():
    """The call that opened the recording raised: its recording is gone, so a module that ran only in it keeps
    ``grad is None`` (PyTorch: the failed forward's graph is freed), and the next step's model trains."""
    torch.manual_seed(0)
    a, b = nn.Linear(3, 3), nn.Linear(3, 1)

    class Fails(nn.Module):
        def forward(self, x):
            a(x)
            raise RuntimeError("bad batch")

    failing = Fails()
    failing.a = a
    with pytest.raises(RuntimeError):
        failing(torch.ones(2, 3))
    b(torch.ones(2, 3)).sum().backward()
    assert a.weight.grad is None and b.weight.grad is not None
