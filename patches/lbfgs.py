"""``torch.optim.LBFGS``: PyTorch's L-BFGS (with its strong-Wolfe line search), which MindTorch 0.4.0 lacks.

pytorch/examples time_sequence_prediction trains with ``optim.LBFGS(seq.parameters(), lr=0.8)`` and
``optimizer.step(closure)``; MindTorch raised ``AttributeError: module 'mindtorch.torch.optim' has no attribute
'LBFGS'``. The algorithm is vendored from PyTorch 2.13.0 (``patches/_lbfgs_pytorch.py``, BSD-3-Clause, license in
``patches/LICENSE-pytorch.txt``) and runs unchanged over MindTorch tensors: it needs only tensor arithmetic,
in-place updates of the parameters under ``no_grad`` (``p.add_(update, alpha=t)``, ``p.copy_``:
patches/parameter_methods.py and patches/inplace.py make them write) and ``closure()``, whose ``loss.backward()``
fills ``p.grad`` through the eager bridge or a compiled step (adapter/step_rewrite.py: a ``backward()`` inside the
closure is a step site). Its class derives from MindTorch's ``Optimizer`` (``isinstance(opt,
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
    from . import _lbfgs_pytorch
    patch_attr(optim, "LBFGS", _lbfgs_pytorch.LBFGS)
    patch_attr(optim, "lbfgs", _lbfgs_pytorch)
    sys.modules.setdefault("mindtorch.torch.optim.lbfgs", _lbfgs_pytorch)


PATCH = Patch("lbfgs", "torch.optim.LBFGS: PyTorch's L-BFGS (vendored, BSD-3) over MindTorch tensors",
              "post-import", apply, replaces=("torch.optim.LBFGS", "torch.optim.lbfgs"),
              effects=("registers the module torch.optim.lbfgs (sys.modules)",))
