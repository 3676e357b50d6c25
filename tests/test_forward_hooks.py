"""Forward hooks run as in PyTorch in a ``no_grad`` forward that would compile (adapter/compiled_forward.py, kind
``module-hooks``): a MindSpore graph calls submodules' ``construct`` without their hooks, so before, a hook on a
layer of a compiled evaluation forward silently never ran (measured on 2.10 and 2.5-dev: 0 calls in 3 forwards;
PyTorch: one per forward). Expected values: PyTorch's hook semantics (a forward hook runs once per module call, with
its output; a pre-hook once, before)."""
import numpy as np


def _model():
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def test_hooks_run_in_a_no_grad_forward_and_the_forward_compiles_once_they_are_removed():
    import torch
    from adapter import compiled_forward, compiled_step, diagnostics
    model = _model()
    seen, pre = [], []
    h1 = model[0].register_forward_hook(lambda mod, inputs, out: seen.append(out.numpy().copy()))
    h2 = model[2].register_forward_pre_hook(lambda mod, inputs: pre.append(tuple(inputs[0].shape)))
    x = torch.ones(5, 3)
    compiled_step.set_mode("auto")
    try:
        with torch.no_grad():
            outs = [model(x).numpy() for _ in range(3)]
            assert compiled_forward.compiled_shapes(model) == 0
            h1.remove()
            h2.remove()
            after = model(x).numpy()
    finally:
        compiled_step.set_mode("pynative")
    assert len(seen) == 3 and pre == [(5, 4)] * 3  # PyTorch: each hook once per forward
    want = (x.numpy() @ model[0].weight.detach().numpy().T + model[0].bias.detach().numpy())
    np.testing.assert_allclose(seen[0], want, rtol=1e-6)  # the hook saw the layer's output
    assert compiled_forward.compiled_shapes(model) == 1  # no hooks left: compiled
    np.testing.assert_allclose(after, outs[0], rtol=1e-6)
    assert any(r.kind == "module-hooks" and r.scope == "forward" for r in diagnostics.records())


def test_a_global_forward_hook_keeps_the_forward_eager():
    import torch
    from torch.nn.modules.module import register_module_forward_hook
    from adapter import compiled_forward, compiled_step
    model = _model()
    calls = []
    handle = register_module_forward_hook(lambda mod, inputs, out: calls.append(type(mod).__name__))
    compiled_step.set_mode("auto")
    try:
        with torch.no_grad():
            model(torch.ones(2, 3))
    finally:
        compiled_step.set_mode("pynative")
        handle.remove()
    assert calls.count("Linear") == 2 and "Sequential" in calls
    assert compiled_forward.compiled_shapes(model) == 0


def test_hooks_run_in_a_training_step_which_compiles_once_they_are_removed():
    """tests/fixtures/step_forward_hooks.py against real PyTorch 2.13 (step_forward_hooks_reference.json): a forward
    hook that doubles a layer's output and a counting pre-hook, 6 steps, then removed. Before (2026-12-06, 2.10) the
    compiled step ran the hooks on its eager first step only: 1 call each where PyTorch makes 6, and the losses
    left PyTorch's from the second (1.18029 where PyTorch gives 1.25627: the doubling missing from the graph). Now the step runs in PyNative while a
    hook is registered (kind module-hooks) and compiles after."""
    from support import fixture_path, load_reference, run_json
    log, stderr = run_json("--explain", "--original", fixture_path("step_forward_hooks.py"))
    ref = load_reference("step_forward_hooks_reference.json")
    assert log["calls"] == ref["calls"]
    np.testing.assert_allclose(log["losses"], ref["losses"], rtol=2e-6)
    assert "step_forward_hooks.py:37: backward() of loss — compiled" in stderr, stderr[-2000:]
    assert "fallback kind module-hooks" in stderr
