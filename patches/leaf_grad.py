"""Gradients of plain leaf tensors (``x.requires_grad_()``, ``torch.tensor(..., requires_grad=True)``): not computed
here, and said so instead of a silent ``None``.

PyTorch differentiates with respect to every leaf tensor with ``requires_grad=True``: FGSM-style attacks read
``data.grad`` after ``loss.backward()``, saliency maps read ``image.grad``, style transfer optimizes the input image
(``optim.LBFGS([input_img])``). This adapter's gradients come from MindSpore with respect to ``Parameter`` objects
only (``adapter/tape.py``: ``GradOperation(get_by_list=True)`` over a ``ParameterTuple``; the compiled step:
``mindspore.value_and_grad`` over the model's Parameters); a MindTorch tensor cannot become a Parameter in place.

What this replaces:

* ``Tensor.grad`` (MindTorch: returns ``None`` for such a tensor, as if it had taken no part in the loss). Read by
  user code after a ``backward()`` has run in this process, on a tensor that is not a Parameter, has
  ``requires_grad=True`` and holds no gradient, it raises :class:`LeafGradientUnsupported` naming the user's
  file:line. Our own code (optimizers, clip_grad, the tape) reads only Parameters' ``.grad`` and is not affected.
* ``mindspore.experimental.optim.Optimizer._preprocess_param_group`` (every MindTorch optimizer's constructor) given
  such a tensor: MindSpore's check failed on its own message (``TypeError: can only
  concatenate str (not "_TensorMeta") to str``); now the same error as above, at the optimizer's line.
"""
from __future__ import annotations

import sys

from . import Patch


class LeafGradientUnsupported(NotImplementedError):
    """Raised where PyTorch would give the gradient of a leaf tensor that is not an ``nn.Parameter``."""


_state = {"backward_ran": False}

_WHAT = ("gradients with respect to a tensor that is not an nn.Parameter (made with requires_grad=True or "
         "requires_grad_()) are not computed on MindSpore by this adapter: only the parameters of nn.Modules "
         "(and nn.Parameter objects given to an optimizer) get .grad. PyTorch would have a value here.")


def apply() -> None:
    import mindspore as ms
    from mindspore.experimental.optim import Optimizer as MSOptimizer
    from mindtorch.torch.tensor import Tensor
    from adapter import events
    from adapter.userframe import _is_internal, user_location

    if getattr(Tensor.grad.fget, "_adapter_patched", False):
        return
    events.subscribe("backward", lambda *_: _state.__setitem__("backward_ran", True))
    original = Tensor.grad

    def grad(self):
        value = original.fget(self)
        if (value is None and _state["backward_ran"] and self._requires_grad
                and not isinstance(self, ms.Parameter) and not _is_internal(sys._getframe(1).f_code.co_filename)):
            raise LeafGradientUnsupported(f".grad at {user_location(2)}: {_WHAT}")
        return value

    grad._adapter_patched = True
    Tensor.grad = property(grad, original.fset, original.fdel, original.__doc__)

    original_preprocess = MSOptimizer._preprocess_param_group

    def _preprocess_param_group(self, param_group):
        params = param_group.get("params") if isinstance(param_group, dict) else None
        if isinstance(params, (list, tuple)):
            for t in params:
                if isinstance(t, Tensor) and not isinstance(t, ms.Parameter):
                    raise LeafGradientUnsupported(
                        f"{type(self).__name__}(...) at {user_location()}: it is given a tensor of shape "
                        f"{tuple(t.shape)}, not an nn.Parameter; {_WHAT}")
        return original_preprocess(self, param_group)

    _preprocess_param_group._adapter_patched = True
    MSOptimizer._preprocess_param_group = _preprocess_param_group


PATCH = Patch("leaf_grad", "x.grad of a plain requires_grad tensor and optimizers over one raise with the user's "
              "file:line (MindSpore differentiates Parameters only) instead of a silent None", "post-import", apply)
