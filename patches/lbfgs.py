"""``torch.optim.LBFGS``: L-BFGS with its strong-Wolfe line search, as PyTorch 2.13 has it; MindTorch 0.4.0 lacks it.

pytorch/examples time_sequence_prediction trains with ``optim.LBFGS(seq.parameters(), lr=0.8)`` and
``optimizer.step(closure)``; MindTorch raised ``AttributeError: module 'mindtorch.torch.optim' has no attribute
'LBFGS'``. The algorithm is ours (``patches/_lbfgs.py``, written from Nocedal & Wright and PyTorch's documented
behaviour: same defaults, stopping rules, closure-call counts and state keys as PyTorch 2.13) and runs over MindTorch
tensors: it needs only tensor arithmetic, in-place updates of the parameters under ``no_grad`` (``p.add_(update,
alpha=t)``, ``p.copy_``: patches/parameter_methods.py and patches/inplace.py make them write) and ``closure()``,
whose ``loss.backward()`` fills ``p.grad`` through the eager bridge or a compiled step (adapter/step_rewrite.py: a
``backward()`` inside the closure is a step site). Its class derives from MindTorch's ``Optimizer`` (``isinstance(opt,
torch.optim.Optimizer)``, ``param_groups``, ``zero_grad``, ``state_dict``, lr schedulers).

Tested against real PyTorch's LBFGS, same problem, same initial weights (tests/test_lbfgs.py).

Replaces: adds ``torch.optim.LBFGS`` and the module ``torch.optim.lbfgs`` (also in ``sys.modules``).
"""
from __future__ import annotations

from . import Patch, is_patched, patch_attr


def apply() -> None:
    import sys

    import mindtorch.torch.optim as optim
    if hasattr(optim, "LBFGS") and not is_patched(optim, "LBFGS"):
        return  # a MindTorch that has its own
    from . import _lbfgs
    patch_attr(optim, "LBFGS", _lbfgs.LBFGS)
    patch_attr(optim, "lbfgs", _lbfgs)
    sys.modules.setdefault("mindtorch.torch.optim.lbfgs", _lbfgs)


PATCH = Patch("lbfgs", "torch.optim.LBFGS: L-BFGS with PyTorch 2.13's behaviour (ours) over MindTorch tensors",
              "post-import", apply, replaces=("torch.optim.LBFGS", "torch.optim.lbfgs"),
              effects=("registers the module torch.optim.lbfgs (sys.modules)",))
