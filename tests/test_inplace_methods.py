"""Tensor.relu_ / clamp_min_ / clamp_max_ (patches/inplace_methods.py: MindTorch 0.4.0 raised AttributeError for
``x.relu_()``), and an in-place write into a value the loss expression reads, placed between the region's last
statement and ``backward()`` (``h = w * 2.0; h.clamp_(min=0.0); (h * c).sum().backward()``): the rewrite ran the
write after the site call, so the loss and the gradient missed it, silently (2026-12-06, 2.10: grad [2, 4, 6] where
PyTorch gives [2, 0, 6]); such a write is now a barrier (adapter/step_rewrite.py ``_place_others``). Expected values:
tests/fixtures/inplace_methods_reference.json, recorded under real PyTorch 2.13 (closed form of the gradients:
``2 c (2 w > 0)``, and ``2 c`` with the written element 0)."""
import ast

import numpy as np
import pytest

pytestmark = pytest.mark.stack


def test_methods_and_inplace_writes_before_backward_as_pytorch():
    from support import fixture_path, load_reference, run_json
    got, _ = run_json("--original", fixture_path("inplace_methods_cases.py"))
    ref = load_reference("inplace_methods_reference.json")
    for key in ("relu_", "clamp_min_", "clamp_max_"):
        np.testing.assert_array_equal(got[key], ref[key])
    assert got["same"] is True
    for name, grad in ref["grads"].items():
        np.testing.assert_allclose(got["grads"][name], grad, rtol=1e-6)


def test_an_inplace_write_into_a_name_the_loss_reads_is_a_barrier():
    from adapter.step_rewrite import rewrite
    tree, sites = rewrite("h = w * 2.0\nh.clamp_(min=0.0)\n(h * c).sum().backward()\n", "f.py")
    assert not sites  # the region would start after the write: it is empty, the statements run as written
    assert "__adapter_step__" not in ast.unparse(tree)
    _, sites = rewrite("h = w * 2.0\nlog.append_(1)\n(h * c).sum().backward()\n", "f.py")
    assert [ast.unparse(s) for s in sites[0].region] == ["h = w * 2.0"]  # a write into another name runs after
