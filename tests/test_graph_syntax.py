"""What Python code writes compiles, with PyTorch's values (issue 31 §1; adapter/graph_syntax.py): a lambda passed to
a wrapper module over two lines, a lambda stored on a module, ModuleDict attribute / item reads and
items()/values()/keys() loops, ModuleList / Sequential indexing, slicing and iteration, nn.ReLU(inplace=True) and
nn.Dropout built inside forward, and an inplace=True activation whose input is read again.

The end-to-end test runs tests/fixtures/graph_syntax_train.py with --mode graph (a fallback is an error) and compares
its losses and the gradients of a compiled step with real PyTorch 2.13's (tests/fixtures/graph_syntax_reference.json,
written by the same script under .venv-ref). Without adapter/graph_syntax.py (measured 2026-11-29, both stacks) the
lambda fails to compile ("Parse Lambda Function Fail. Node type must be Lambda, but got Call"), and so does
``self.transformer.drop`` ("the Dictionary[...] object has no attribute 'drop'"); without the
``_inplace_limit_pynative`` swap ``nn.ReLU(inplace=True)(x)`` fails on 2.10 ("`inplace` in `ReLU` should not be
True"); without the rebinding ``y = F.relu(x, inplace=True); x + y`` compiles to ``x + relu(x)`` (2.5-dev: losses
0.882, 0.074, 0.037 where the eager step gives 0.882, 0.427, 0.242: a silently wrong gradient); without the pick
helper for modules held as attributes (``y = self.relu(h)`` then ``h`` read) the second loss was 1.17337 where
PyTorch gives 1.27136 (2026-12-06); a lambda starting a continuation line (``LambdaLayer(\n lambda x: F.pad(...))``)
failed to parse ("SyntaxError: unmatched ')'"), and a lambda's default value (``lambda x, s=0.25: x + s``; a name
read where the lambda was made) did not resolve ("The name 'planes' is not defined")."""
import ast
import json
import os

import numpy as np
import pytest

from support import FIXTURES, load_reference, run_py


def _function(source: str, env: dict):
    namespace = dict(env)
    exec(compile(source, "<graph_syntax_test>", "exec"), namespace)
    return namespace


def test_lambda_inside_a_call_is_parsed_as_that_lambda():
    from adapter import graph_syntax
    source = "self.short = Wrap(lambda x:\n    relu(x) * 2, lambda y: y + 1)\n"
    namespace = _function("def make(Wrap, relu):\n    return Wrap(lambda x:\n    relu(x) * 2, lambda y: y + 1)\n",
                          {})
    fns = namespace["make"](lambda *fs: fs, None)
    tree = ast.parse(source)
    for fn, body in zip(fns, ("relu(x) * 2", "y + 1")):
        # the snippet MindSpore parses starts at the first lambda's line (line_offset)
        new, count = graph_syntax.rewrite(tree, fn, fns[0].__code__.co_firstlineno)
        assert count == 1 and isinstance(new.body[0], ast.Expr) and isinstance(new.body[0].value, ast.Lambda)
        assert ast.unparse(new.body[0].value.body) == body
    assert ast.unparse(tree) == ast.unparse(ast.parse(source))  # MindSpore's cached tree is left alone


def test_inplace_call_rebinds_its_input():
    import torch.nn as nn
    import torch.nn.functional as F
    from adapter import graph_syntax
    source = ("def forward(self, x, p):\n"
              "    y = F.relu(x, inplace=True)\n"
              "    z = nn.ReLU(inplace=True)(y) + nn.Dropout(p, inplace=True)(x)\n"
              "    d = nn.Dropout(p, inplace=True)\n"
              "    F.relu_(z)\n"
              "    return x + y + z + (F.relu(x, inplace=True) if p else x)\n")
    fn = _function(source, {"F": F, "nn": nn})["forward"]
    new, count = graph_syntax.rewrite(ast.parse(source), fn, 1)
    assert ast.unparse(new.body[0]).splitlines()[1:] == [
        "    x = F.relu(x, inplace=True)",
        "    y = x",
        "    y = nn.ReLU(inplace=True)(y)",
        "    x = nn.Dropout(p, inplace=True)(x)",
        "    z = y + x",
        "    d = nn.Dropout(p, inplace=True)",  # a module built, not a call that writes: p is not rebound
        "    z = F.relu_(z)",
        "    return x + y + z + (F.relu(x, inplace=True) if p else x)"]  # may not run: left as written
    assert count == 4


def test_held_inplace_module_call_rebinds_its_input_through_the_pick_helper():
    """``y = self.relu(h)`` with ``h`` read again, ``self.leaky(g)`` alone, and a held module's call inside an
    expression: each is followed by ``h = pick(self.relu, y, h)``, decided while compiling by the module's class and
    ``inplace`` flag. Without it (2026-12-06, both stacks) tests/fixtures/graph_syntax_train.py's compiled second loss
    was 1.17337 where PyTorch 2.13 gives 1.27136: the held modules' writes were dropped, silently."""
    import torch.nn as nn
    from adapter import graph_syntax
    source = ("def forward(self, x):\n"
              "    h = self.fc(x)\n"
              "    y = self.relu(h)\n"
              "    self.leaky(y)\n"
              "    z = self.fc(self.relu(h)) + h\n"
              "    w = self.fc(z)\n"
              "    q = self.fc(w)\n"
              "    return x + y + z + q\n")
    fn = _function(source, {})["forward"]
    new, count = graph_syntax.rewrite(ast.parse(source), fn, 1)
    pick = "__adapter_syntax__.inplace_pick__"
    assert ast.unparse(new.body[0]).splitlines()[1:] == [
        "    h = self.fc(x)",
        f"    x = {pick}(self.fc, h, x)",  # x is read again (the return): an in-place self.fc would have written it
        "    y = self.relu(h)",
        f"    h = {pick}(self.relu, y, h)",
        f"    y = {pick}(self.leaky, self.leaky(y), y)",
        "    __adapter_inplace_5_16 = self.relu(h)",
        f"    h = {pick}(self.relu, __adapter_inplace_5_16, h)",
        "    z = self.fc(__adapter_inplace_5_16) + h",
        "    w = self.fc(z)",
        f"    z = {pick}(self.fc, w, z)",  # z is read again (the return)
        "    q = self.fc(w)",  # w is read once more, but not after a call on it: nothing to pick
        "    return x + y + z + q"]
    assert count == 5
    helper = getattr(graph_syntax._helpers(), graph_syntax.pick_helper())
    assert helper(nn.ReLU(inplace=True), "out", "in") == "out"
    assert helper(nn.ReLU(), "out", "in") == "in" and helper(nn.Linear(2, 2), "out", "in") == "in"
    assert helper(nn.Dropout(0.5, inplace=True), "out", "in") == "out"


def test_lambda_on_a_continuation_line_is_cut_at_its_end():
    """``inspect`` gives a lambda that starts a continuation line with the rest of the enclosing statement; the parse
    keeps the lambda: up to its unmatched closing bracket, a comma outside brackets, or the end of the line."""
    from adapter import graph_syntax
    src = "lambda x: F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, p // 4, p // 4), 'constant', 0))\n"
    assert src[:graph_syntax._lambda_end(src)] == src[:-2]
    assert graph_syntax._lambda_end("lambda y: y + 1, lambda z: z)\n") == len("lambda y: y + 1")
    two_lines = "lambda x: torch.cat([x,\n                       x], 1))\n"
    assert two_lines[:graph_syntax._lambda_end(two_lines)] == two_lines[:-2]


def test_container_attribute_reads_go_through_the_helper():
    from adapter import graph_syntax
    source = "def forward(self, x):\n    return self.transformer.drop(self.d.items(), self.fc.weight.shape, x.y.z)\n"
    fn = _function(source, {})["forward"]
    new, count = graph_syntax.rewrite(ast.parse(source), fn, 1)
    assert count == 2
    assert ast.unparse(new.body[0].body[0]) == (
        "return __adapter_syntax__.attr__drop(self.transformer)(self.d.items(), "
        "__adapter_syntax__.attr__weight(self.fc).shape, x.y.z)")
    helper = getattr(graph_syntax._helpers(), graph_syntax.attribute_helper("drop"))
    assert helper({"drop": 1}) == 1 and helper(type("M", (), {"drop": 2})) == 2


def test_python_constructs_compile_with_pytorch_values():
    reference = load_reference("graph_syntax_reference.json")
    result = run_py("--mode", "graph", "--explain", "--original", os.path.join(FIXTURES, "graph_syntax_train.py"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "compiled (graph mode" in result.stderr and "PyNative" not in result.stderr, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(out["losses"], reference["losses"], rtol=1e-5)
    assert out["grads"].keys() == reference["grads"].keys()
    for name, (total, squares) in reference["grads"].items():
        got = out["grads"][name]
        np.testing.assert_allclose(got[1], squares, rtol=1e-4, err_msg=name)
        np.testing.assert_allclose(got[0], total, rtol=1e-4, atol=1e-5 * max(squares, 1e-12) ** 0.5 * 10,
                                   err_msg=name)


@pytest.mark.parametrize("message", [
    # MindSpore's own messages for the constructs above before adapter/graph_syntax.py (2.5-dev and 2.10, 2026-11-29)
    "probe.py:9: TypeError: Parse Lambda Function Fail. Node type must be Lambda, but got Call. Please check lambda "
    "expression to make sure it is defined on a separate line.",
    "probe.py:37: AttributeError: In JIT strict mode, cannot get attributes a or the Dictionary[[a,b,],[Func*2]] "
    "object has no attribute: 'a'.",
    "ValueError: In MindSpore static graph mode, `inplace` in `ReLU` should not be True, please set inplace=False and "
    "use return value instead of `input`.",
    "probe.py:75: RuntimeError: The pointer[local_dict_cnode] is null.",
])
def test_what_still_does_not_compile_is_unsupported_python_syntax(message):
    from adapter import diagnostics
    assert diagnostics.classify(RuntimeError(message)) == "unsupported-python-syntax"


def test_an_inplace_write_through_an_alias_is_refused_not_dropped():
    """``shortcut = h`` then an in-place write into ``h``: PyTorch's shortcut sees the write, a graph cannot give it
    (it rebinds ``h`` only), so compiling refuses: at rewrite time for a call known to write (``F.relu(h,
    inplace=True)``), while compiling for a held module (``inplace_refuse__`` raises when the module writes in place).
    A name bound anew between the store and the write (``shortcut = x; x = self.fc(x); x = self.relu(x)``) is no
    alias."""
    import torch.nn as nn
    import torch.nn.functional as F
    from adapter import graph_syntax
    source = ("def forward(self, x, feats):\n"
              "    h = self.fc(x)\n"
              "    shortcut = h\n"
              "    h = self.relu(h)\n"
              "    identity = x\n"
              "    x = self.fc(x)\n"
              "    x = self.relu(x)\n"
              "    for i in range(2):\n"
              "        x = self.relu(x)\n"
              "        feats.append(x)\n"
              "    return h + shortcut + identity + x\n")
    fn = _function(source, {})["forward"]
    lines = ast.unparse(graph_syntax.rewrite(ast.parse(source), fn, 1)[0].body[0]).splitlines()
    refused = [line for line in lines if "inplace_refuse__" in line]
    assert len(refused) == 3, lines
    assert refused[0].startswith('    h = __adapter_syntax__.inplace_refuse__(self.relu, h, h, "`self.relu(h)` is an '
                                 'in-place operation on `h`, which `shortcut` also holds (line 3)')
    # self.fc may be an in-place module too, for all the rewrite knows: checked while compiling (Linear: no refusal)
    assert refused[1].startswith('    x = __adapter_syntax__.inplace_refuse__(self.fc, x, x, "`self.fc(x)` is an '
                                 'in-place operation on `x`, which `identity` also holds (line 5)')
    assert refused[2].startswith('        x = __adapter_syntax__.inplace_refuse__(self.relu, x, x, "`self.relu(x)` is '
                                 'an in-place operation on `x`, which `feats` also holds (line 10)')  # next iteration
    # x was bound anew by `x = self.fc(x)`: identity is not an alias of the tensor self.relu writes
    assert lines[lines.index("    x = self.relu(x)") + 1] == "    for i in range(2):"
    helper = getattr(graph_syntax._helpers(), graph_syntax.refuse_helper())
    assert helper(nn.ReLU(), "out", "in", "no") == "in"
    with pytest.raises(RuntimeError, match="^refused$"):
        helper(nn.ReLU(inplace=True), "out", "in", "refused")
    static = "def forward(self, x):\n    a = x\n    F.relu(x, inplace=True)\n    return a\n"
    with pytest.raises(graph_syntax.InplaceAlias, match=r"<graph_syntax_test>:3: `F.relu\(x, inplace=True\)` is an "
                                                          r"in-place operation on `x`, which `a` also holds \(line 2\)"):
        graph_syntax.rewrite(ast.parse(static), _function(static, {"F": F})["forward"], 1)


def test_inplace_alias_steps_run_eagerly_with_pytorch_losses():
    """tests/fixtures/inplace_alias.py against real PyTorch 2.13 (inplace_alias_reference.json). Before (2026-12-06,
    2.10) the pre-activation model compiled with the write dropped: second loss 1.33977 where PyTorch gives 3.27733,
    silently."""
    reference = load_reference("inplace_alias_reference.json")
    result = run_py("--explain", "--original", os.path.join(FIXTURES, "inplace_alias.py"))
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    for name in ("pre_activation", "fresh_tensor"):
        np.testing.assert_allclose(out[name], reference[name], rtol=1e-5, err_msg=name)
    assert "`self.relu(h)` is an in-place operation on `h`, which `shortcut` also holds (line 20)" in result.stderr
    assert "fallback kind inplace-tensor-method" in result.stderr


def test_sequential_with_an_inplace_first_layer_writes_the_callers_input():
    """tests/fixtures/inplace_sequential.py against real PyTorch 2.13 (inplace_sequential_reference.json): ``residual
    = self.conv1(x); shortcut + residual`` with ``conv1 = nn.Sequential(nn.ReLU(inplace=True), ...)`` (Xception's
    middle flow) reads ``relu(x)`` as ``x`` in PyTorch. Without graph_syntax._input_write (2026-12-06, 2.10) the
    compiled step read the unwritten ``x``: second loss 1.19018 where PyTorch gives 1.18594, silently. An alias of the
    input, a random first layer (Dropout in training), or a module whose forward writes its argument, is refused:
    eager."""
    reference = load_reference("inplace_sequential_reference.json")
    result = run_py("--explain", "--original", os.path.join(FIXTURES, "inplace_sequential.py"))
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    for name in reference:
        np.testing.assert_allclose(out[name], reference[name], rtol=2e-6, err_msg=name)
    assert "inplace_sequential.py:74: backward() of loss — compiled (graph mode, fused with optimizer.step() at line " \
           "75); 4 graph(s) for 4 sets of models" in result.stderr, result.stderr[-3000:]
    assert "`self.conv1(x)` is an in-place operation on `x`, which `keep` also holds (line 29)" in result.stderr
    assert "inplace_sequential.py:99: backward() of loss — eager (PyNative): tests/fixtures/inplace_sequential.py:22: " \
           "RuntimeError: 'this call of an nn.Sequential is an in-place operation on its input" in result.stderr
    # a module of ours whose forward does `x *= 0.5` on its argument: refused (2.5-dev's graph rebinds the callee's
    # name only: second loss 1.19267 where PyTorch gives 1.21593; 2.10's graph writes through, refused all the same)
    assert "inplace_sequential.py:116: backward() of loss — eager (PyNative): tests/fixtures/inplace_sequential.py:52: " \
           "RuntimeError: 'this module call is an in-place operation on its input" in result.stderr
