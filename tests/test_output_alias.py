"""Values a compiled training step hands back to the script, read after ``optimizer.step()``, against real PyTorch
2.13 (tests/fixtures/output_alias_reference.json, recorded with
``.venv-ref/bin/python tests/fixtures/output_alias_script.py``). In PyTorch each holds its value from before the
update (unless it is ``w`` itself or a view of it, which shares its storage).

Before the fix (main at 64bd81d), with the update fused into the graph (adapter/compiled_step.py ``_StepCell``):

* ``q = w * 1.0`` showed the updated ``w``: MindSpore simplifies it to the Parameter's Load, and the graph's output
  shared the Parameter's buffer, which the optimizer's Assign then updated (now: the graph copies its outputs,
  ``Identity``);
* ``p = w.pow(2)`` showed ``pow`` of the updated ``w`` on some runs: the auto-monad orders the Assign after the Loads
  of ``w`` only, and the CPU backend's Load is a no-op, so the Square kernel could run after the Assign (IR: the
  UpdateState before the Assign takes the Loads, not the Square) (now: ``depend(grads, outputs)`` before the update);
* ``h = w * 1.0`` not needed for the loss (mode "after") ran after the site call, so after the fused update
  (adapter/step_rewrite.py: the region's other statements run after the site call) (now: such a step is not fused
  when those statements read a weight, ``StepBuilder.after_reads_weights``).

``u = w`` and ``lw = lin.weight`` (names bound to a Parameter itself) came back as copies from before the update,
where in PyTorch they are the Parameter and show the update (now: ``SiteRuntime._handed_back`` gives the script the
Parameter itself, as eager MindTorch does).

Known difference (PyTorch's): ``v = w.reshape(3)`` is a copy from before the update, where PyTorch's view shares
``w``'s storage. Eager MindTorch's view ops share no storage either (``test_eager_mindtorch_views_share_no_storage``:
``reshape``, ``view``, ``flatten``, ``t``, ``transpose``, ``unsqueeze``, slicing, ``select``, ``narrow``, ``expand``,
``detach``, ``contiguous`` of a Parameter do not see an in-place update of it, on 2.5-dev and 2.10), so the compiled
step copies a view as eager MindTorch does (``test_a_view_is_a_copy_as_in_eager_mindtorch``).
"""
import os

import numpy as np
import pytest

from support import FIXTURES, load_reference, run_json

SCRIPT = os.path.join(FIXTURES, "output_alias_script.py")
CASES = [(o, m) for o in ("sgd", "adam") for m in ("fused", "after", "compiled")]
NAMES = {"fused": "p q y u lw loss w lin", "after": "p h z loss w lin", "compiled": "p q y h u lw loss w lin"}
_got = {}


@pytest.fixture(scope="module")
def reference():
    return load_reference("output_alias_reference.json")


def got(opt, mode):
    if (opt, mode) not in _got:
        _got[opt, mode] = run_json("--original", SCRIPT, opt, mode)
    return _got[opt, mode][0]


def _check(reference, opt, mode, name):
    key = f"{opt}_{mode}_{name}"
    np.testing.assert_allclose(np.array(got(opt, mode)[key]), np.array(reference[key]), rtol=1e-4, atol=1e-6,
                               err_msg=key)


@pytest.mark.parametrize("opt,mode", CASES)
def test_values_read_after_step(reference, opt, mode):
    for name in NAMES[mode].split():
        _check(reference, opt, mode, name)


@pytest.mark.parametrize("opt,mode", [c for c in CASES if c[1] != "after"])
def test_a_view_is_a_copy_as_in_eager_mindtorch(reference, opt, mode):
    """``v = w.reshape(3)`` holds ``w`` from before each update (PyTorch's ``q = w * 1.0``), in the eager reference
    step and the compiled ones alike; PyTorch's ``v`` shows the update (a known difference, MindTorch's)."""
    key = f"{opt}_{mode}_"
    np.testing.assert_allclose(np.array(got(opt, mode)[key + "v"]), np.array(reference[key + "q"]), rtol=1e-4,
                               atol=1e-6)
    assert not np.allclose(np.array(reference[key + "v"]), np.array(reference[key + "q"]))  # PyTorch: shared


def test_eager_mindtorch_views_share_no_storage():
    """What the compiled step matches: in eager MindTorch a view of a Parameter is a copy, and only the Parameter
    itself shows an in-place update of it. (``w.data`` shares ``w``'s storage since patches/parameter_data.py, but
    MindTorch's ``w.add_`` gives ``w`` a new buffer: tests/test_parameter_data.py checks that ``.data`` shows an
    optimizer's update, which writes in place.)"""
    import torch
    w = torch.nn.Parameter(torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    with torch.no_grad():
        views = {"reshape": w.reshape(6), "view": w.view(6), "flatten": w.flatten(), "t": w.t(),
                 "transpose": w.transpose(0, 1), "unsqueeze": w.unsqueeze(0), "index": w[0], "slice": w[:, 1:],
                 "select": w.select(0, 1), "narrow": w.narrow(1, 0, 2), "expand": w.expand(2, 2, 3),
                 "detach": w.detach(), "contiguous": w.contiguous()}
        same = {"itself": w}
        before = {k: v.numpy().copy() for k, v in {**views, **same}.items()}
        w.add_(10.0)
    assert [k for k, v in views.items() if not np.array_equal(v.numpy(), before[k])] == []
    assert [k for k, v in same.items() if np.array_equal(v.numpy(), before[k])] == []


@pytest.mark.parametrize("opt,mode,part", [(o, "fused", "(forward+backward+optimizer)") for o in ("sgd", "adam")]
                         + [(o, "after", "(forward+backward)") for o in ("sgd", "adam")])
def test_fused_where_expected(opt, mode, part):
    """The "fused" cases ran fused (so the tests above check the graph's update); "after" did not: its statements
    that run after the site call read the weights."""
    got(opt, mode)
    assert part in _got[opt, mode][1], _got[opt, mode][1][-2000:]
