"""Gradients of plain leaf tensors (``x.requires_grad_()``, ``torch.tensor(..., requires_grad=True)``): computed by the
eager bridge where it can, and said so instead of a silent ``None`` where it cannot.

PyTorch differentiates with respect to every leaf tensor with ``requires_grad=True``: FGSM-style attacks read
``data.grad`` after ``loss.backward()``, saliency maps read ``image.grad``, style transfer optimizes the input image
(``optim.LBFGS([input_img])``). This adapter's gradients come from MindSpore with respect to ``Parameter`` objects
only (``adapter/tape.py``: ``GradOperation(get_by_list=True)`` over a ``ParameterTuple``; the compiled step:
``mindspore.value_and_grad`` over the model's Parameters); a MindTorch tensor cannot become a Parameter in place.

What this replaces:

* ``Tensor.requires_grad``'s setter (``requires_grad_()``, ``x.requires_grad = True``, ``torch.tensor(...,
  requires_grad=True)``) and every ``torch.*`` function with a ``requires_grad`` argument (``torch.zeros/randn/
  full/*_like(..., requires_grad=True)``: MindTorch sets that flag on a new object without the setter): a tensor that is not a Parameter is registered
  with ``adapter.tape.register_leaf``, so the recordings opened afterwards differentiate w.r.t. it (as an input of
  MindSpore's recorded graph) and ``backward()`` accumulates its ``.grad`` as PyTorch does (``y = w * x + b;
  y.backward(); x.grad``, ``with torch.no_grad(): w -= w.grad * lr; w.grad.zero_()``). A step site whose loss
  depends on such a tensor runs eagerly (``adapter/compiled_step.py``: the compiled graph differentiates
  Parameters only). Before, ``x.grad`` raised the error below for every such tensor (PyTorch's 01-basics tutorial,
  ``nn_tutorial``'s from-scratch model).

* ``Tensor.grad`` (MindTorch: returns ``None`` for such a tensor, as if it had taken no part in the loss). Read by
  user code after a ``backward()`` has run in this process, on a tensor that is not a Parameter, has
  ``requires_grad=True``, holds no gradient and either was not registered (above) or was made a leaf while a
  recording that had already called a module was open (so it was not one of that recording's inputs:
  ``adapter.tape.missed_leaf``), it raises :class:`LeafGradientUnsupported` naming the user's
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
    from adapter import tape
    events.subscribe("backward", lambda *_: _state.__setitem__("backward_ran", True))
    original = Tensor.grad

    def grad(self):
        value = original.fget(self)
        if (value is None and _state["backward_ran"] and backend.requires_grad_flag(self)
                and (not tape.is_leaf_tensor(self) or tape.missed_leaf(self))
                and not isinstance(self, ms.Parameter) and not _is_internal(sys._getframe(1).f_code.co_filename)):
            raise LeafGradientUnsupported(f".grad at {user_location(2)}: {_WHAT}")
        return value

    grad._adapter_patched = True
    Tensor.grad = property(grad, original.fset, original.fdel, original.__doc__)

    original_rg = Tensor.requires_grad

    def set_requires_grad(self, requires_grad):
        original_rg.fset(self, requires_grad)
        if requires_grad and not isinstance(self, ms.Parameter):
            tape.register_leaf(self)

    Tensor.requires_grad = property(original_rg.fget, set_requires_grad, original_rg.fdel, original_rg.__doc__)

    # torch.zeros/ones/randn/full/empty/*_like(..., requires_grad=True) set the flag on the MindSpore tensor the op
    # returned and MindTorch converts that into a new Tensor object (common/_inner.py _out_inplace_assign,
    # cast_to_adapter_tensor), never through the setter: wrap every torch function taking requires_grad
    import inspect
    import mindtorch.torch as mtorch

    def creator(fn):
        def create(*args, **kwargs):
            out = fn(*args, **kwargs)
            if kwargs.get("requires_grad") and isinstance(out, Tensor) and not isinstance(out, ms.Parameter):
                tape.register_leaf(out)
            return out
        create.__name__, create.__qualname__, create.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
        create.__wrapped__ = fn
        create._adapter_patched = True
        create._adapter_passthrough = True  # MindTorch's own call unless requires_grad=True (run.py --report)
        return create

    for name in dir(mtorch):
        fn = getattr(mtorch, name, None)
        if not inspect.isfunction(fn) or getattr(fn, "_adapter_patched", False):
            continue
        try:
            takes = "requires_grad" in inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        if takes and name != "tensor":  # torch.tensor goes through Tensor.__init__ and the setter
            setattr(mtorch, name, creator(fn))


    from adapter import backend
    original_preprocess = backend.internal("ms_optimizer.preprocess_param_group")

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
    setattr(*backend.internal_slot("ms_optimizer.preprocess_param_group"), _preprocess_param_group)


PATCH = Patch("leaf_grad", "x.grad of a plain requires_grad tensor and optimizers over one raise with the user's "
              "file:line (MindSpore differentiates Parameters only) instead of a silent None", "post-import", apply)
