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

Replaces: ``torch.Tensor.grad``, ``torch.Tensor.requires_grad`` (properties), ``torch.<creator>`` for every
function with a ``requires_grad`` argument (found at start-up; :data:`CREATORS` with MindTorch 0.4.0),
``mindspore.experimental.optim.Optimizer._preprocess_param_group``; subscribes to the ``backward`` event.
"""
from __future__ import annotations

import sys

from adapter import hooks

from . import Patch, get_replaced, patch_attr
from ._wrap_once import wrap_attr


class LeafGradientUnsupported(NotImplementedError):
    """Raised where PyTorch would give the gradient of a leaf tensor that is not an ``nn.Parameter``."""


_state = {"backward_ran": False}

_WHAT = ("gradients with respect to a tensor that is not an nn.Parameter (made with requires_grad=True or "
         "requires_grad_()) are not computed on MindSpore by this adapter: only the parameters of nn.Modules "
         "(and nn.Parameter objects given to an optimizer) get .grad. PyTorch would have a value here.")


# torch functions with a requires_grad argument that are not wrapped: torch.tensor goes through Tensor.__init__ and
# the setter; torch.arange was kept out before patch_attr (patches/range_dtype.py's marker) and still is
_NOT_CREATORS = ("tensor", "arange")

# set by apply(): mindspore, adapter.tape and adapter.userframe helpers, the Tensor class and what this patch replaced
ms = backend = tape = Tensor = _is_internal = user_location = None
_original_grad = _original_requires_grad = _original_preprocess = None
_subscribed = False


def _on_backward(*_):
    _state["backward_ran"] = True


def grad(self):
    """``Tensor.grad``'s getter: MindTorch's, or :class:`LeafGradientUnsupported` where PyTorch would have a value
    this adapter does not compute (module docstring)."""
    value = _original_grad.fget(self)
    if (value is None and _state["backward_ran"] and backend.requires_grad_flag(self)
            and (not tape.is_leaf_tensor(self) or tape.missed_leaf(self))
            and not isinstance(self, ms.Parameter) and not _is_internal(sys._getframe(1).f_code.co_filename)):
        raise LeafGradientUnsupported(f".grad at {user_location(2)}: {_WHAT}")
    return value


def set_requires_grad(self, requires_grad):
    """``Tensor.requires_grad``'s setter: MindTorch's, and a tensor that is not a Parameter is registered as a leaf
    (``adapter.tape.register_leaf``)."""
    _original_requires_grad.fset(self, requires_grad)
    if requires_grad and not isinstance(self, ms.Parameter):
        tape.register_leaf(self)


def _creator(fn):
    """``fn`` (a ``torch.*`` function with a ``requires_grad`` argument) whose result, with ``requires_grad=True``,
    is registered as a leaf."""
    def create(*args, **kwargs):
        out = fn(*args, **kwargs)
        if kwargs.get("requires_grad") and isinstance(out, Tensor) and not isinstance(out, ms.Parameter):
            tape.register_leaf(out)
        return out
    create.__name__, create.__qualname__, create.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    create.__wrapped__ = fn
    setattr(create, hooks.attr("passthrough"), True)  # MindTorch's own call unless requires_grad=True (run.py --report)
    return create


def _preprocess_param_group(self, param_group):
    """MindSpore's ``Optimizer._preprocess_param_group``; raises :class:`LeafGradientUnsupported` for a tensor that
    is not a Parameter."""
    params = param_group.get("params") if isinstance(param_group, dict) else None
    if isinstance(params, (list, tuple)):
        for t in params:
            if isinstance(t, Tensor) and not isinstance(t, ms.Parameter):
                raise LeafGradientUnsupported(
                    f"{type(self).__name__}(...) at {user_location()}: it is given a tensor of shape "
                    f"{tuple(t.shape)}, not an nn.Parameter; {_WHAT}")
    return _original_preprocess(self, param_group)


def apply() -> None:
    global ms, backend, tape, Tensor, _is_internal, user_location, _subscribed
    global _original_grad, _original_requires_grad, _original_preprocess
    import inspect

    import mindspore as ms
    import mindtorch.torch as mtorch
    from mindtorch.torch.tensor import Tensor
    from adapter import backend, events, tape
    from adapter.userframe import _is_internal, user_location

    if not _subscribed:  # a second subscription would be a second call per backward
        events.subscribe("backward", _on_backward)
        _subscribed = True

    _original_grad = get_replaced(Tensor, "grad", NAME)
    wrap_attr(Tensor, "grad", NAME, lambda g: property(grad, g.fset, g.fdel, g.__doc__))
    _original_requires_grad = get_replaced(Tensor, "requires_grad", NAME)
    wrap_attr(Tensor, "requires_grad", NAME, lambda rg: property(rg.fget, set_requires_grad, rg.fdel, rg.__doc__))

    # torch.zeros/ones/randn/full/empty/*_like(..., requires_grad=True) set the flag on the MindSpore tensor the op
    # returned and MindTorch converts that into a new Tensor object (common/_inner.py _out_inplace_assign,
    # cast_to_adapter_tensor), never through the setter: wrap every torch function taking requires_grad
    for name in dir(mtorch):
        if name in _NOT_CREATORS:
            continue
        fn = get_replaced(mtorch, name, NAME) if hasattr(mtorch, name) else None
        if not inspect.isfunction(fn):
            continue
        try:
            takes = "requires_grad" in inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        if takes:
            wrap_attr(mtorch, name, NAME, _creator)

    owner, attr = backend.internal_slot("ms_optimizer.preprocess_param_group")
    _original_preprocess = get_replaced(owner, attr, NAME)
    patch_attr(owner, attr, _preprocess_param_group)


NAME = "leaf_grad"
# what apply()'s scan finds in MindTorch 0.4.0 (declared by name, not as torch.*: that would claim every torch name
# for this patch in run.py --report; tests/test_patch_contract.py checks the scan still finds exactly these)
CREATORS = ("asarray", "bartlett_window", "blackman_window", "empty", "empty_like", "empty_strided", "eye",
            "frombuffer", "full", "full_like", "hamming_window", "hann_window", "kaiser_window", "linspace",
            "logspace", "ones", "ones_like", "rand", "rand_like", "randint", "randint_like", "randn", "randn_like",
            "randperm", "range", "zeros", "zeros_like")
PATCH = Patch(NAME, "x.grad of a plain requires_grad tensor and optimizers over one raise with the user's "
              "file:line (MindSpore differentiates Parameters only) instead of a silent None", "post-import", apply,
              replaces=("torch.Tensor.grad", "torch.Tensor.requires_grad")
              + tuple(f"torch.{name}" for name in CREATORS)
              + ("mindspore.experimental.optim.Optimizer._preprocess_param_group",),
              effects=("subscribes to adapter.events' backward event",),
              after=("random_draws", "generator", "result_dtypes", "size_arguments"))
