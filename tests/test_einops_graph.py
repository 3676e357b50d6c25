"""einops in a compiled step (patches/einops_graph.py, graph_syntax's map-of-lambda form): tests/fixtures/einops_vit.py
(Rearrange / Reduce layers, rearrange / repeat / reduce, ``map(lambda t: rearrange(t, ...), qkv)``) compiles, with
real PyTorch 2.13's losses (einops_vit_reference.json). Before (2026-12-06, both stacks) the step ran in PyNative:
"Unsupported exception type: EinopsError" (MindSpore parsed einops' own code), then "The Map operator don't support
Closure with free variable yet" for the lambda."""
import ast

import numpy as np
import pytest

from support import fixture_path, load_reference, run_json


def test_einops_vit_compiles_with_pytorch_losses():
    log, stderr = run_json("--explain", "--original", fixture_path("einops_vit.py"))
    assert "einops_vit.py:61: backward() of loss — compiled (graph mode, fused with optimizer.step() at line 62)" \
        in stderr, stderr[-3000:]
    np.testing.assert_allclose(log["losses"], load_reference("einops_vit_reference.json", "losses"), rtol=2e-5)


@pytest.mark.parametrize("pattern, shape, axes, plan", [
    ("b n (h d) -> b h n d", (2, 3, 4), (("h", 2),), ((2, 3, 2, 2), (0, 2, 1, 3), (), (), None)),
    ("b h n d -> b n (h d)", (2, 2, 3, 2), (), (None, (0, 2, 1, 3), (), (), (2, 3, 4))),
    ("1 1 d -> b 1 d", (1, 1, 4), (("b", 3),), ((4,), None, (), ((0, 3),), (3, 1, 4))),
])
def test_plan_is_einops_own(pattern, shape, axes, plan):
    """The plan made while compiling (patches/einops_graph._plan_python) is einops' (init shape, permutation,
    reduced axes, added axes, final shape), checked against einops' eager result on numpy arrays."""
    import einops
    from patches.einops_graph import _plan_python
    operation = "repeat" if "1 1" in pattern else "rearrange"
    assert _plan_python(pattern, operation, shape, axes) == plan
    x = np.arange(int(np.prod(shape))).reshape(shape)
    init, perm, _, added, final = plan
    y = x.reshape(init) if init else x
    y = y.transpose(perm) if perm else y
    for position, length in added:
        y = np.repeat(np.expand_dims(y, position), length, axis=position)
    y = y.reshape(final) if final else y
    np.testing.assert_array_equal(y, getattr(einops, operation)(x, pattern, **dict(axes)))


def test_map_of_a_lambda_becomes_a_list_comprehension():
    from adapter import graph_syntax
    source = "def forward(self, qkv):\n    q, k = map(lambda t: t * self.s, qkv)\n    return q + k\n"
    namespace = {}
    exec(compile(source, "<map_test>", "exec"), namespace)
    tree, count = graph_syntax.rewrite(ast.parse(source), namespace["forward"], 1)
    assert count == 1
    assert ast.unparse(tree).splitlines()[1].strip() == "(q, k) = [t * self.s for t in qkv]"


def test_only_the_reductions_it_knows_are_compiled():
    """The graph form's reductions are sum / mean / max / min / prod; any other (einops' "any" / "all", a callable)
    raises, so the compile stops and the step runs eagerly with einops' own code. Before (2026-12-06, found in review)
    any other reduction was taken as a product, silently."""
    import einops  # noqa: F401  (patches/einops_graph.py registers its forms when einops is installed)
    import torch
    from patches import einops_graph
    x = torch.tensor(np.arange(1, 7, dtype=np.float32).reshape(2, 3))
    np.testing.assert_allclose(einops_graph.apply_plan(x, "a b -> a", "prod", ()).numpy(), [6.0, 120.0])
    np.testing.assert_allclose(einops_graph.apply_plan(x, "a b -> b", "max", ()).numpy(), [4.0, 5.0, 6.0])
    with pytest.raises(RuntimeError, match="not compiled"):
        einops_graph.apply_plan(x, "a b -> a", "any", ())
