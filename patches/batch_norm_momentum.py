"""``F.batch_norm(..., training=False, momentum=m)`` with any ``momentum``, as PyTorch.

In evaluation (``training=False``) PyTorch normalizes with the running statistics and never reads ``momentum`` (it
only weighs the running statistics' update in training), so any number passes. MindTorch 0.4.0 hands it to
``ms.ops.batch_norm``, whose primitive checks it in every mode: ``ValueError: For primitive[BatchNorm], the momentum
must be in (0,1], but got -1.2.`` (op_db's ``nn.functional.batch_norm`` sample ``training=False, momentum=-1.2``;
``run.py conformance --opinfo``, issue 35).

Here an evaluation-mode call passes ``momentum=0.1`` (PyTorch's default, unused in that mode) where the given one is
outside ``(0, 1]``: the same result, as PyTorch's. Training-mode calls go to MindTorch unchanged. The replacement is a
plain function (no ``__wrapped__``), so a compiled graph compiles it too.

Replaces: ``torch.nn.functional.batch_norm``.
"""
from . import Patch, get_replaced, patch_attr

NAME = "batch_norm_momentum"
_originals = {}


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,  # noqa: A002
               eps=1e-05):
    """PyTorch's ``F.batch_norm`` (module docstring): ``momentum`` is not read in evaluation mode."""
    if not training and not (isinstance(momentum, (int, float)) and 0 < momentum <= 1):
        momentum = 0.1
    return _originals["batch_norm"](input, running_mean, running_var, weight, bias, training, momentum, eps)


def apply() -> None:
    import mindtorch.torch.nn.functional as F
    _originals["batch_norm"] = get_replaced(F, "batch_norm", NAME)
    batch_norm.__doc__ = _originals["batch_norm"].__doc__ or batch_norm.__doc__
    patch_attr(F, "batch_norm", batch_norm)


PATCH = Patch(NAME, "F.batch_norm in evaluation mode with any momentum (unused there) as PyTorch (MindSpore's "
                    "primitive raised 'momentum must be in (0,1]')", "post-import", apply,
              replaces=("torch.nn.functional.batch_norm",))
