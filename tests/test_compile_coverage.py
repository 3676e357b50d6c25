"""Steps that used to fall back to PyNative (or worse) now compile, and those that still cannot say why in one line
(issue 13: fallback reasons, steps that did not compile)."""
import os
import re

import numpy as np
import pytest

from support import FIXTURES, run_json, run_py


@pytest.mark.parametrize("optimizer,same_shapes,head_only", [
    ("sgd", False, False), ("sgd", True, False), ("adam", True, False), ("sgd", True, True)])
def test_fused_update_pairs_gradients_with_their_parameters(optimizer, same_shapes, head_only):
    """Modules registered in one order and run in another: the fused optimizer must get each parameter's own
    gradient. Before the fix, differing shapes failed to compile ("CPU kernel op [Default/optimizer-SGD/SGD-op0]
    resize failed") and equal shapes trained silently wrong (each layer updated with the other's gradient); an
    optimizer over the head only got the body's gradients."""
    script = os.path.join(FIXTURES, "param_order.py")
    args = ["--optimizer", optimizer] + (["--same-shapes"] if same_shapes else []) + (["--head-only"] if head_only else [])
    eager, _ = run_json("--mode", "pynative", "--original", script, *args)
    compiled, err = run_json("--explain", "--original", script, *args)
    assert "compiled (graph mode, fused with optimizer.step() at line 49)" in err, err
    np.testing.assert_allclose(compiled["losses"], eager["losses"], rtol=1e-5)


def _kernel_failure() -> RuntimeError:
    """A real MindSpore error: an SGD kernel given a gradient whose shape is not its parameter's, compiled in graph
    mode (text: 'Framework Unexpected Exception Raised' + 'Kernel build failed' + 'C++ Call Stack' sections)."""
    import mindspore as ms
    from mindspore.ops import operations as P
    from adapter.graph_semantics import graph_mode

    class BadSGD(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(ms.Tensor(np.ones(3, np.float32)), name="w")
            self.accum = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), name="accum")
            self.stat = ms.Parameter(ms.Tensor(np.ones(3, np.float32)), name="stat")
            self.op = P.SGD(0.0, 0.0, False)

        def construct(self, g):
            return self.op(self.w, g, ms.Tensor(0.1, ms.float32), self.accum, ms.Tensor(0.9, ms.float32), self.stat)

    with pytest.raises(RuntimeError) as info:
        with graph_mode():
            BadSGD()(ms.Tensor(np.ones(2, np.float32)))  # the failing line
    assert "Framework Unexpected Exception Raised" in str(info.value)  # the text these tests are about
    assert "C++ Call Stack" in str(info.value)
    return info.value


def test_fallback_reason_of_a_kernel_failure_is_mindspore_cause():
    """MindSpore's text starts with the boilerplate section "Framework Unexpected Exception Raised:"; the reason is
    the first line of the section that has the cause (here "Kernel build failed")."""
    from adapter.compiled_step import short_reason
    reason = short_reason(_kernel_failure())
    assert reason.endswith("RuntimeError: CPU kernel op [Default/SGD-op0] resize failed."), reason
    assert reason.startswith("tests/test_compile_coverage.py:")  # the innermost user frame (the call above)


def test_a_script_failing_with_a_mindspore_error_ends_with_its_cause_on_one_line():
    """run.py's traceback of a script that failed: MindSpore's C++ call stack (for its developers) is left out, and
    the closing 'the script failed at file:line' line carries the cause, not a copy of the whole text."""
    from adapter.script_run import user_traceback
    text = user_traceback(_kernel_failure())
    assert "C++ Call Stack" not in text and "cpu_device_context.cc" not in text, text
    assert "- Kernel build failed: (For framework developers)" in text  # the rest of MindSpore's text is kept
    last = text.splitlines()[-1]
    assert re.fullmatch(r"run\.py: the script failed at tests/test_compile_coverage\.py:\d+: RuntimeError: "
                        r"CPU kernel op \[Default/SGD-op0\] resize failed\.", last), last


def test_fallback_reason_names_the_user_line_the_compiler_stopped_at():
    """The step site is line 19; the line graph mode cannot compile is the model's line 9. MindSpore's advice to
    switch to its lax syntax level is not shown (run.py compiles STRICT on purpose)."""
    script = os.path.join(FIXTURES, "uncompilable_step.py")
    _, err = run_json("--explain", "--original", script)
    reasons = [line for line in err.splitlines() if "runs in PyNative (eager), not compiled" in line]
    assert len(reasons) == 1, err
    expect = ("tests/fixtures/uncompilable_step.py:19: the training step runs in PyNative (eager), not compiled: "
              "tests/fixtures/uncompilable_step.py:9: AttributeError: In JIT strict mode, cannot get attributes "
              "asnumpy or the Tensor[Float32] object has no attribute: 'asnumpy'.")
    assert reasons[0] == "run.py: " + expect, reasons[0]
    explained = [line.strip() for line in err.splitlines() if "backward() of loss — eager (PyNative)" in line]
    assert explained == ["tests/fixtures/uncompilable_step.py:19: backward() of loss — eager (PyNative): "
                         "tests/fixtures/uncompilable_step.py:9: AttributeError: In JIT strict mode, cannot get "
                         "attributes asnumpy or the Tensor[Float32] object has no attribute: 'asnumpy'.; 6 calls"], err


def test_no_grad_forward_fallback_reason_names_the_model_line(tmp_path):
    script = tmp_path / "eval_uncompilable.py"
    script.write_text(
        "import torch, torch.nn as nn\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 2)\n"
        "    def forward(self, x):\n"
        "        out = self.fc(x)\n"
        "        if out.numpy().mean() > 0:\n"
        "            out = out * 2\n"
        "        return out\n"
        "net = Net()\n"
        "with torch.no_grad():\n"
        "    y = net(torch.ones(3, 4))\n"
        "print(y.shape[0])\n")
    proc = run_py("--original", script, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "not compiled" in line]
    assert lines == ["run.py: eval_uncompilable.py:13: the no_grad forward of Net runs in PyNative, not compiled: "
                     "eval_uncompilable.py:8: AttributeError: In JIT strict mode, cannot get attributes asnumpy or "
                     "the Tensor[Float32] object has no attribute: 'asnumpy'."], proc.stderr


def test_fallback_reason_names_the_line_of_the_error_itself_and_leaves_no_files_behind(tmp_path):
    """MindSpore's own location ('In file loop_variable.py:10', before its sections) is the line to name, not the
    last user frame of the call chain (the generated step's line 20). And a failed compile leaves no
    rank_0/om/analyze_fail.ir in the working directory (MindSpore's default there; MS_OM_PATH moves it)."""
    script = os.path.join(FIXTURES, "loop_variable.py")
    proc = run_py("--original", script, cwd=tmp_path, unset=("MS_OM_PATH",))
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr
    reasons = [line for line in proc.stderr.splitlines() if "not compiled" in line]
    assert len(reasons) == 1 and reasons[0].endswith(
        f"loop_variable.py:20: the training step runs in PyNative (eager), not compiled: {script}:10: "
        "UnboundLocalError: The local variable 'output' defined in the 'for' loop body cannot be used outside of "
        "the loop body. Please define variable 'output' before 'for'."), reasons
    assert os.listdir(tmp_path) == [], os.listdir(tmp_path)
