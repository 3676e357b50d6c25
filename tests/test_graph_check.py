"""The first-graph check (adapter/step_cache_check.py ``check_graph``, kind ``graph-differs``): a binding's first
compiled graph runs on its eager reference step's inputs from that step's starting state and must give the same
loss, gradients, statistics and update; a graph that differs is not used (the step runs in PyNative).

tests/fixtures/graph_check_inplace_fn.py against real PyTorch 2.13 (graph_check_inplace_fn_reference.json): a plain
function returning ``F.relu(t, inplace=True)`` whose caller reads ``h`` again. Before (2026-12-06, 2.10): compiled
and fused, losses 18.69365, 0.51207, 0.29578, 0.19962 where PyTorch gives 18.69365, 7.93637, 4.21751, 2.52523 (the
graph rebinds ``t`` in the function only; PyTorch's ``h`` holds the ReLU's result). The same computation without the
second read compiles and is checked equal (no false alarm)."""
import numpy as np
import pytest

pytestmark = pytest.mark.stack  # what graph mode computes differs between MindSpore builds


def test_a_graph_that_differs_from_its_reference_step_is_not_used():
    from support import fixture_path, load_reference, run_json
    log, stderr = run_json("--explain", "--original", fixture_path("graph_check_inplace_fn.py"))
    ref = load_reference("graph_check_inplace_fn_reference.json")
    np.testing.assert_allclose(log["aliased"], ref["aliased"], rtol=2e-6)
    np.testing.assert_allclose(log["clean"], ref["clean"], rtol=2e-6)
    assert "graph_check_inplace_fn.py:37: backward() of loss — eager (PyNative): Uncompilable: its compiled graph " \
           "differs from its eager reference step (loss" in stderr, stderr[-2000:]
    assert "graph_check_inplace_fn.py:45: backward() of loss — compiled" in stderr, stderr[-2000:]
    assert "fallback kind graph-differs" in stderr


def test_the_check_can_be_turned_off():
    """``ADAPTER_CHECK_FIRST_GRAPH=0``: no check, the aliased site's graph is used (the values this check catches)."""
    from support import fixture_path, load_reference, run_json
    log, stderr = run_json("--explain", "--original", fixture_path("graph_check_inplace_fn.py"),
                           env={"ADAPTER_CHECK_FIRST_GRAPH": "0"})
    ref = load_reference("graph_check_inplace_fn_reference.json")
    assert abs(log["aliased"][1] - ref["aliased"][1]) > 1.0  # the dropped write: PyTorch's 7.936 vs ~0.51
    assert "graph_check_inplace_fn.py:37: backward() of loss — compiled" in stderr
