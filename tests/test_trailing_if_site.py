"""A logging ``if`` between the loss and ``backward()`` (adapter/step_rewrite.py): ``if t % 100 == 99: print(t,
loss.item())`` in PyTorch's polynomial tutorials, ``if (i+1) % 100 == 0`` in many others. It ended the step window,
so no step site was found: the step ran uncompiled, and a loss made of leaf tensors only (no module call to open the
eager bridge's recording) failed with ``TapeError: no forward pass was recorded``. Now such ``if`` blocks join the
window after the region and run after it, as a trailing simple statement does. Values recorded with real PyTorch
2.13.0 CPU (``.venv-ref/bin/python tests/fixtures/<script>``, 2026-11-23)."""
import ast
import os

import pytest

from support import FIXTURES, run_script


PYTORCH_POLY = [192.9908905029297, 124.97553253173828, 108.26219940185547]
PYTORCH_POLY_COEFFS = [0.049436070024967194, -0.13529151678085327, 0.018554961308836937, 0.04671798273921013]
PYTORCH_TRAILING = [6.598129749298096, 3.252814769744873, 1.893050193786621]
PYTORCH_TRAILING_WEIGHTS = [0.2744441330432892, -0.6925832629203796, 0.49975359439849854, -0.5403759479522705,
                            0.12173587828874588, 0.8481622338294983, 0.10716273635625839, -0.42707592248916626]


def test_rewrite_keeps_the_if_after_the_region():
    from adapter.step_rewrite import rewrite
    source = ("for t in range(3):\n"
              "    out = model(x)\n"
              "    loss = crit(out, y)\n"
              "    if t % 2 == 0:\n"
              "        print(loss.item())\n"
              "    loss.backward()\n"
              "    opt.step()\n")
    tree, sites = rewrite(source, "t.py")
    assert len(sites) == 1 and sites[0].optimizer_line == 7
    body = [ast.unparse(s).split("\n")[0] for s in tree.body[0].body]
    assert body[0].startswith("(out, loss) = __adapter_step__(0") and body[1] == "if t % 2 == 0:"
    # an `if` that assigns a name the loss needs is not moved: no site, as before
    _, sites = rewrite(source.replace("print(loss.item())", "loss = loss * 2"), "t.py")
    assert sites == []


def test_module_step_with_logging_if_compiles_and_matches_pytorch():
    """Before: eager (no site found). Now fused into one graph; losses within 1e-6 of PyTorch's."""
    ran = run_script(os.path.join(FIXTURES, "trailing_if.py"), options=("--explain", "--original"))
    out, both = ran.stdout, ran.stdout + ran.stderr
    losses = [float(line.split()[2]) for line in out.splitlines() if line.startswith("step")]
    assert losses == pytest.approx(PYTORCH_TRAILING, rel=1e-6)
    weights = [float(v) for v in out.split("weights ")[1].replace("[", " ").replace("]", " ").replace(",", " ").split()]
    assert weights == pytest.approx(PYTORCH_TRAILING_WEIGHTS, rel=1e-6)
    assert "trailing_if.py:20: backward() of loss — compiled (graph mode, fused with optimizer.step()" in both


def test_polynomial_tutorial_with_leaf_tensors_matches_pytorch():
    """Before: TapeError at poly_leaves.py:19 (no recording: no module call, no site). Now the site's eager call
    records from its first statement with the four leaves as inputs."""
    ran = run_script(os.path.join(FIXTURES, "poly_leaves.py"), options=("--explain", "--original"))
    out, both = ran.stdout, ran.stdout + ran.stderr
    losses = [float(line.split()[1]) for line in out.splitlines()[:3]]
    assert losses == pytest.approx(PYTORCH_POLY, rel=1e-6)
    coeffs = out.splitlines()[3].replace("Result: y = ", "").replace(" x^3", "").replace(" x^2", "")
    coeffs = [float(v) for v in coeffs.replace(" x", "").split(" + ")]
    assert coeffs == pytest.approx(PYTORCH_POLY_COEFFS, rel=1e-5)
    assert "requires_grad=True that is not an nn.Parameter" in both


# tests/fixtures/reset_grad_between.py under real PyTorch 2.13.0 CPU (2026-11-23)
PYTORCH_RESET = [9.874062538146973, 6.598129749298096, 4.546952247619629, 3.252814769744873]


def test_a_call_between_loss_and_backward_stays_before_backward():
    """`reset_grad()` (zero_grad of the optimizers, in a helper) between the loss and backward() ran after the site
    call, i.e. after backward(): the first (eager) step's gradients were zeroed before `opt.step()`, and that update
    was lost, silently (losses 9.874, 9.874, 6.598, 4.547 against PyTorch's 9.874, 6.598, 4.547, 3.253; in
    yunjey's GAN the discriminator's site always ran eagerly, so D never learned). Now such a call ends the window:
    no site, the step runs as written."""
    ran = run_script(os.path.join(FIXTURES, "reset_grad_between.py"), options=("--explain", "--original"))
    out, _ = ran.stdout, ran.stdout + ran.stderr
    losses = [float(line.split()[1]) for line in out.splitlines()[:4]]
    assert losses == pytest.approx(PYTORCH_RESET, rel=1e-6)


def test_rewrite_keeps_logging_but_not_other_calls_after_the_region():
    from adapter.step_rewrite import rewrite
    base = ("for t in range(3):\n"
            "    out = model(x)\n"
            "    loss = crit(out, y)\n"
            "    {stmt}\n"
            "    loss.backward()\n"
            "    opt.step()\n")
    for stmt in ("losses.append(loss.item())", "print(loss.item())", "logger.info('%f', loss.item())",
                 "acc = accuracy(out, y)", "if t % 2 == 0: writer.add_scalar('loss', loss.item(), t)"):
        assert len(rewrite(base.format(stmt=stmt), "t.py")[1]) == 1, stmt
    for stmt in ("reset_grad()", "if t % 2 == 0: reset_grad()", "clip_weights(model)"):
        assert rewrite(base.format(stmt=stmt), "t.py")[1] == [], stmt


# tests/fixtures/poly_optim_order.py under real PyTorch 2.13.0 CPU (.venv-ref/bin/python, 2026-11-26)
PYTORCH_POLY_ORDER = [242.54861450195312, 163.56959533691406, 111.28682708740234]
PYTORCH_POLY_ORDER_COEFFS = [0.04885050654411316, 0.5488185286521912, -0.00842752680182457, -0.04953112453222275]


def test_rewrite_finds_the_site_with_zero_grad_after_the_logging_if():
    """PyTorch's polynomial_optim.py order: the logging `if`, then `optimizer.zero_grad()`, then backward(). The
    `if` ended the window before the zero_grad, so no site was found (every step eager)."""
    from adapter.step_rewrite import rewrite
    source = ("for t in range(3):\n"
              "    out = model(x)\n"
              "    loss = crit(out, y)\n"
              "    if t % 2 == 0:\n"
              "        print(loss.item())\n"
              "    opt.zero_grad()\n"
              "    loss.backward()\n"
              "    opt.step()\n")
    tree, sites = rewrite(source, "t.py")
    assert len(sites) == 1 and sites[0].optimizer_line == 8 and len(sites[0].region) == 2
    body = [ast.unparse(s).split("\n")[0] for s in tree.body[0].body]
    assert body[0] == "opt.zero_grad()" and body[2] == "if t % 2 == 0:"
    assert body[1].startswith("(out, loss) = __adapter_step__(0, {") and body[1].endswith(", opt, after=lambda : (t,))")
    # an `if` between two region statements: the region starts after it (it runs before the site, in place)
    source2 = source.replace("    loss = crit(out, y)\n    if t % 2 == 0:\n        print(loss.item())\n",
                             "    if t % 2 == 0:\n        print(t)\n    loss = crit(out, y)\n")
    tree, sites = rewrite(source2, "t.py")
    assert len(sites) == 1 and [ast.unparse(s) for s in sites[0].region] == ["loss = crit(out, y)"]
    # an `if` that assigns a name the loss needs is never in a region: the window starts after it
    source3 = source.replace("print(loss.item())", "loss = loss * 2")
    _, sites = rewrite(source3, "t.py")
    assert sites == []
    source4 = source2.replace("print(t)", "out = out * 2")
    _, sites = rewrite(source4, "t.py")
    assert len(sites) == 1 and [ast.unparse(s) for s in sites[0].region] == ["loss = crit(out, y)"]


def test_polynomial_optim_tutorial_order_compiles_and_matches_pytorch():
    """Before: no site (eager). Now fused into one graph; losses and coefficients within 1e-6 of PyTorch's."""
    ran = run_script(os.path.join(FIXTURES, "poly_optim_order.py"), options=("--explain", "--original"))
    out, both = ran.stdout, ran.stdout + ran.stderr
    lines = out.splitlines()
    losses = [float(line.split()[1]) for line in lines if line[:1].isdigit()]
    assert losses == pytest.approx(PYTORCH_POLY_ORDER, rel=1e-6)
    coeffs = [line for line in lines if line.startswith("Result")][0].replace("Result: y = ", "")
    coeffs = [float(v) for v in coeffs.replace(" x^3", "").replace(" x^2", "").replace(" x", "").split(" + ")]
    assert coeffs == pytest.approx(PYTORCH_POLY_ORDER_COEFFS, rel=1e-5)
    assert "poly_optim_order.py:28: backward() of loss — compiled (graph mode, fused with optimizer.step() at " \
           "line 29)" in both
