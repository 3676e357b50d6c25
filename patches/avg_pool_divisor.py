"""``F.avg_pool2d`` / ``F.avg_pool3d`` (and ``nn.AvgPool2d/3d``) with ``divisor_override`` and
``count_include_pad=False``: PyTorch's gradient, not MindSpore's.

With ``divisor_override`` set, PyTorch divides every window's sum by that number, whatever ``count_include_pad``
says (ATen's ``avg_pool2d``: ``divide_factor = divisor_override`` before it looks at ``count_include_pad``). MindSpore's
CPU backward of the same call divides by the window's count of in-bounds elements when ``count_include_pad=False``:
the forward is right, the input gradient silently wrong (op_db's ``nn.functional.avg_pool2d``
``avg_pool2d(x, 3, 1, 1, True, False, 2)`` of a (1, 3, 9, 9) input: 168 of 243 gradient values off, up to 1.9;
``avg_pool3d(..., count_include_pad=False, divisor_override=2)``: 112 of 128, up to 12.6; found by
``run.py conformance --opinfo``, issue 35). With ``count_include_pad=True`` MindSpore's forward and backward both
match PyTorch's.

Here a call with ``divisor_override`` runs with ``count_include_pad=True``: the same forward by PyTorch's rule
above, and MindSpore's correct backward. Everything else goes to MindTorch unchanged. The replacements are plain
functions (no ``__wrapped__``), so a compiled graph compiles them too (``nn.AvgPool2d``'s forward calls
``F.avg_pool2d`` by attribute at call time).

Replaces: ``torch.nn.functional.avg_pool2d``, ``torch.nn.functional.avg_pool3d``.
"""
from . import Patch, get_replaced, patch_attr

NAME = "avg_pool_divisor"
_originals = {}


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,  # noqa: A002
               divisor_override=None):
    """PyTorch's ``F.avg_pool2d`` (module docstring): (N, C, H, W) or (C, H, W) in, the pooled shape out."""
    if divisor_override is not None:
        count_include_pad = True
    return _originals["avg_pool2d"](input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                    divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,  # noqa: A002
               divisor_override=None):
    """PyTorch's ``F.avg_pool3d`` (module docstring): (N, C, D, H, W) or (C, D, H, W) in, the pooled shape out."""
    if divisor_override is not None:
        count_include_pad = True
    return _originals["avg_pool3d"](input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                    divisor_override)


def apply() -> None:
    import mindtorch.torch.nn.functional as F
    for name, replacement in (("avg_pool2d", avg_pool2d), ("avg_pool3d", avg_pool3d)):
        _originals[name] = get_replaced(F, name, NAME)
        patch_attr(F, name, replacement)


PATCH = Patch(NAME, "avg_pool2d/avg_pool3d with divisor_override and count_include_pad=False: PyTorch's input "
                    "gradient (MindSpore's backward divided by the in-bounds count: 168 of 243 values off, silently)",
              "post-import", apply, replaces=("torch.nn.functional.avg_pool2d", "torch.nn.functional.avg_pool3d"))
