"""``F.conv2d`` / ``F.conv3d`` of an unbatched input, as PyTorch.

PyTorch's ``torch.nn.functional.conv2d`` takes an input of shape ``(C_in, H, W)`` as well as ``(N, C_in, H, W)``
(``conv3d``: ``(C_in, D, H, W)`` as well as ``(N, C_in, D, H, W)``) and returns the output without the batch
dimension: ``(C_out, H_out, W_out)``. MindTorch 0.4.0's functional forms raise ``ValueError: For primitive[Conv2D],
the x shape size must be equal to 4, but got 3.`` (its ``nn.Conv2d``/``nn.Conv3d`` modules already add and remove
the batch dimension themselves; its ``F.conv1d`` accepts ``(C_in, L)``). Found by PyTorch's OpInfo samples
(``nn.functional.conv2d``, ``nn.functional.conv3d``; ``run.py conformance --opinfo``, issue 35).

Here, when the input has one dimension fewer than the weight (PyTorch's rule for an unbatched input), the call runs
on ``input.unsqueeze(0)`` and the result is ``squeeze(0)``-ed: the same values and gradients as PyTorch's (PyTorch
does the same internally). Anything else goes to MindTorch unchanged. PyNative only: in a compiled function the
unwrapped original runs and raises, so ``run.py`` runs that step eagerly (a fallback with that reason, not a wrong
value).

Replaces: ``torch.nn.functional.conv2d``, ``torch.nn.functional.conv3d``.
"""
import functools

from . import Patch
from ._wrap_once import wrap_attr

NAME = "conv_unbatched"
_NAMES = ("conv2d", "conv3d")


def _unbatched(original):
    @functools.wraps(original)
    def conv(input, weight, *args, **kwargs):  # noqa: A002 (PyTorch's name)
        if hasattr(input, "dim") and hasattr(weight, "dim") and input.dim() == weight.dim() - 1:
            return original(input.unsqueeze(0), weight, *args, **kwargs).squeeze(0)
        return original(input, weight, *args, **kwargs)
    return conv


def apply() -> None:
    import mindtorch.torch.nn.functional as F
    for name in _NAMES:
        wrap_attr(F, name, NAME, _unbatched)


PATCH = Patch(NAME, "F.conv2d/F.conv3d of an unbatched (C, H, W) / (C, D, H, W) input as PyTorch (MindTorch raised "
                    "'x shape size must be equal to 4')", "post-import", apply,
              replaces=tuple(f"torch.nn.functional.{n}" for n in _NAMES))
