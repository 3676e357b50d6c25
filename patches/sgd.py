"""``torch.optim.SGD`` on float64 parameters: PyTorch's update, in float64, eagerly and inside the compiled step.

MindTorch 0.4's SGD is MindSpore's ``mindspore.experimental.optim.SGD``, whose ``implementation`` calls the fused
``SGD`` operator on every parameter. That operator takes float16/float32 only: ``optimizer.step()`` on a float64
model (``model.double()``: pytorch/examples time_sequence_prediction) raised ``TypeError: For primitive[SGD], the
input argument[parameters] must be a type of {Tensor[Float16], Tensor[Float32]}, but got Ref[Tensor[Float64]]``.

This patch replaces ``SGD.implementation`` (same arguments, still ``@jit``, so the compiled step fuses it as
before). Float16/float32 parameters go through the same ``SGD`` operator, unchanged. Float64 parameters get
PyTorch's single-tensor SGD (``torch/optim/sgd.py`` ``_single_tensor_sgd``, 2.13; CPU parameters take that path),
in float64 with the group's lr as a float64 ``Parameter`` holding the Python float (``patches/optimizer.py``)::

    d_p = grad (+ weight_decay * param)
    momentum != 0:  buf = d_p on the first step (MindSpore's ``stat`` slot is 1 until then), else
                    buf = momentum * buf + (1 - dampening) * d_p;   d_p = d_p + momentum * buf (nesterov) or buf
    param = param - lr * d_p

Second, plain SGD holds no state. MindSpore's ``SGD.__init__`` cloned two slots for every parameter, ``accum``
(zeros, the momentum buffer) and ``stat`` (ones, "no buffer yet"), even with ``momentum=0``, where PyTorch keeps no
state at all (``state_dict()['state'] == {}``): 4x ``Linear(4096, 4096)`` (256 MB of weights) took +256 MB of RSS at
``torch.optim.SGD(...)`` (docs/memory.md, "SGD slots"). Here :func:`__init__` gives the parameters of a group whose
momentum is 0 two 0-d placeholder ``Parameter``s instead (0 and 1, the parameter's dtype, names ``accum.<name>`` /
``stat.<name>`` as MindSpore's), and the update of such a parameter does not take them: ``param = param - lr *
(grad [+ param * weight_decay])``, MindSpore's ``SGD`` CPU kernel's formula for ``momentum == 0``
(``sgd_cpu_kernel.cc``: ``grad_new += param * weight_decay`` when ``weight_decay > 0``; ``param -= lr * grad_new``),
the same float32 operations in the same order (a float16 parameter computed in float32 and rounded once, as the
kernel does), so the same bits on CPU (tests/test_sgd_slots.py,
eager and compiled; the GPU/Ascend kernels were not compared). Groups with momentum keep MindSpore's slots and the ``SGD`` operator, unchanged.

Momentum switched on later (``param_groups[i]['momentum'] = 0.9``, a scheduler's ``cycle_momentum``, or
``load_state_dict`` of a momentum checkpoint): PyTorch creates the ``momentum_buffer`` lazily at the first step with
momentum (``torch/optim/sgd.py``: ``buf = torch.clone(grad)`` when ``momentum_buffer_list[i] is None``). Here
:func:`ensure_slots` (the ``_adapter_before_update`` hook that ``patches/optimizer.py``'s ``step()`` and the fused
compiled step, ``adapter/compiled_step.py``, call before every update; and ``patches/optim_state.py``'s
``load_state_dict``) swaps the placeholders of such a group for MindSpore's full-size slots (``accum`` 0, ``stat`` 1:
the first step copies the gradient, as PyTorch's); the momentum value is part of a compiled update's key, so the
update that reads them is compiled anew. The swapped-in slots stay when the momentum returns to 0 (as PyTorch keeps
its buffer).

The lr is read once, before the updates (``optimizer_graph._read_once``: MindSpore 2.10 on CPU made every later read
of a float64 lr float32). ``maximize`` negates the gradients first, as before (``patches/optimizer_graph.py``). The momentum buffer is
MindSpore's ``accum`` slot, so ``state_dict()`` (``patches/optim_state.py``) is unchanged.

Replaces: ``torch.optim.SGD.implementation`` (MindTorch's SGD, a subclass of MindSpore's),
``mindspore.experimental.optim.SGD.__init__`` (MindSpore's, which MindTorch's ``SGD.__init__`` calls: the same
checks and attributes, the slots per group as above), and sets ``torch.optim.SGD``'s ``_adapter_float64_lr`` marker
(``patches/optimizer.py``), ``_adapter_before_update`` hook (:func:`ensure_slots`), ``_adapter_new_slots``
(:func:`new_slots`) and ``_adapter_needs_slots`` (:func:`needs_slots`). The slots are made by the shared
``patches/_optim_slots.py`` (as Adam's/AdamW's ``max_exp_avg_sq``, ``patches/adam_slots.py``).
"""
from adapter import hooks

from . import Patch, _optim_slots, patch_attr
from .optimizer_graph import _maximize, _read_once, prepare

# graph code below reads these module globals; set by apply(): mindspore, mindspore.ops.operations, and the
# MultitypeFuncGraph that :func:`_update` is registered on
ms = _P = _sgd_update = None
_jit_implementation = None  # mindspore.jit(implementation), made once by apply()


def _scalar(value, like):
    """``value`` (a Python number, a compile-time constant in graphs) as a 0-d tensor of ``like``'s dtype."""
    return ms.Tensor(value, like.dtype)


def _sgd_float64(lr, momentum, dampening, weight_decay, nesterov, gradient, weight, accum, stat):
    """PyTorch's SGD update of one float64 parameter (module docstring); graph code."""
    d_p = gradient
    if weight_decay != 0:
        d_p = d_p + _scalar(weight_decay, weight) * weight
    if momentum != 0:
        m = _scalar(momentum, weight)
        # 1 - dampening as tensors: scalar arithmetic in a graph is float32 (1 - 0.3 -> 0.699999988)
        running = accum * m + (_scalar(1.0, weight) - _scalar(dampening, weight)) * d_p
        buf = ms.ops.select(stat > 0, d_p, running)
        ms.ops.assign(accum, buf)
        ms.ops.assign(stat, ms.ops.zeros_like(stat))
        if nesterov:
            d_p = d_p + m * buf
        else:
            d_p = buf
    ms.ops.assign(weight, weight - lr.astype(weight.dtype) * d_p)
    return True


def _sgd_plain(lr, weight_decay, gradient, weight):
    """``momentum == 0``, float16/float32: MindSpore's ``SGD`` kernel without its slots (module docstring), the same
    float32 operations in the same order: ``d_p = gradient + weight * weight_decay`` (``weight_decay > 0`` only, as
    the kernel), ``weight = weight - lr * d_p``. The kernel computes float16 in float32 and rounds once at the end
    (measured: 0 of 90300 elements differ; per-op float16 rounding: 1947), so other dtypes go through float32 too.
    Graph code; ``lr`` a 0-d float32 tensor."""
    w = weight if weight.dtype == ms.float32 else weight.astype(ms.float32)
    d_p = gradient if gradient.dtype == ms.float32 else gradient.astype(ms.float32)
    if weight_decay > 0:
        d_p = d_p + w * _scalar(weight_decay, w)
    w = w - lr * d_p
    ms.ops.assign(weight, w if weight.dtype == ms.float32 else w.astype(weight.dtype))
    return True


def _update(opt, momentum_t, lr, momentum, dampening, weight_decay, nesterov, gradient, weight, accum, stat):
    """One parameter's update (graph code, registered on ``_sgd_update`` by apply()): :func:`_sgd_float64` for
    float64 parameters, :func:`_sgd_plain` for others when ``momentum == 0`` (``accum``/``stat`` are then 0-d
    placeholders), MindSpore's ``SGD`` operator ``opt`` otherwise."""
    if weight.dtype == ms.float64:
        return _sgd_float64(lr, momentum, dampening, weight_decay, nesterov, gradient, weight, accum, stat)
    if lr.dtype == ms.float64:  # a group mixing float64 and float32 parameters
        lr = lr.astype(ms.float32)
    if momentum == 0:
        return _sgd_plain(lr, weight_decay, gradient, weight)
    opt(weight, gradient, lr, accum, momentum_t, stat)
    return True


def implementation(self, momentum, lr, group_id, gradients, maximize, dampening, weight_decay, nesterov):
    """MindSpore's ``SGD.implementation``; float64 parameters updated by PyTorch's formula (module docstring).
    Installed as ``mindspore.jit(implementation)``."""
    lr = _read_once(lr)  # one Load of the float64 lr: MindSpore 2.10 made the later ones float32 (see there)
    start_id = self.group_start_id[group_id]
    end_id = self.group_start_id[group_id + 1]
    momentum_t = self.op_cast(momentum, ms.float32)
    opt = _P.SGD(dampening, weight_decay, nesterov)
    grads = _maximize(not maximize, ms.ops.neg, gradients[start_id: end_id])
    self.hyper_map(ms.ops.partial(_sgd_update, opt, momentum_t, lr, float(momentum), float(dampening),
                                  float(weight_decay), bool(nesterov)),
                   grads, self.parameters[start_id: end_id], self.accum[start_id: end_id],
                   self.stat[start_id: end_id])
    return True


_SLOTS = {"accum": "zeros", "stat": "ones"}  # MindSpore's SGD slots and their initial values


def _has_momentum(group) -> bool:
    return float(dict.get(group, "momentum", 0.0) or 0.0) != 0.0


def __init__(self, params, lr, momentum=0, dampening=0, weight_decay=0.0, nesterov=False, *, maximize=False):
    """MindSpore's ``mindspore.experimental.optim.SGD.__init__`` (same checks, same errors, same attributes), except
    that the ``accum``/``stat`` slots of a parameter whose group has ``momentum == 0`` are 0-d placeholders (module
    docstring).

    Raises:
        TypeError / ValueError: as MindSpore's (lr, momentum < 0, nesterov without momentum or with dampening).
    """
    from adapter import backend
    Validator = backend.internal("checkparam")
    from mindspore.common.tensor import Tensor
    from mindspore.experimental.optim import Optimizer as MSOptimizer
    Validator.check_value_type("lr", lr, [float, int, Tensor], self.cls_name)
    if lr < 0.0:
        raise ValueError("Invalid learning rate: {}".format(lr))
    Validator.check_value_type("momentum", momentum, [int, float], self.cls_name)
    if momentum < 0.0:
        raise ValueError("Invalid momentum value: {}".format(momentum))
    momentum = float(momentum)
    Validator.check_value_type("nesterov", nesterov, [bool], self.cls_name)
    Validator.check_value_type("maximize", maximize, [bool], self.cls_name)
    defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                    maximize=maximize, grad_centralization=False)
    MSOptimizer.__init__(self, params, defaults)
    for group in self.param_groups:
        Validator.check_value_type("dampening", group.get("dampening"), [int, float], self.cls_name)
        group["dampening"] = float(group.get("dampening"))
    if nesterov and (momentum <= 0.0 or dampening != 0.0):
        raise ValueError("For 'SGD', if 'nesterov' is true, 'momentum' must be > 0.0 and 'dampening' must "
                         "equal to 0.0, but got 'momentum' {}, 'dampening' {}".format(momentum, dampening))
    with_momentum = set(_optim_slots.group_indices(self, _has_momentum))
    _optim_slots.build(self, _SLOTS, lambda i: i in with_momentum)  # placeholders for momentum 0
    self.op_cast = _P.Cast()


def ensure_slots(self, indices=None) -> None:
    """Swap the placeholders of the parameters at ``indices`` (default: those in groups whose momentum is not 0) for
    MindSpore's full-size slots (``accum`` 0, ``stat`` 1: no momentum buffer yet), keeping every other slot object.
    A no-op when they are full already (the per-step cost: one pass over the param groups). Installed as
    ``torch.optim.SGD._adapter_before_update``; called before every update (eager ``step()``, fused compiled step)
    and by ``load_state_dict``."""
    _optim_slots.ensure_full(self, _SLOTS, _optim_slots.group_indices(self, _has_momentum) if indices is None
                             else indices)


def new_slots(self, attr, params, group):
    """``accum`` / ``stat`` slots for ``params`` added by ``add_param_group`` to a built SGD: full when the group has
    momentum, else placeholders (``patches/_optim_slots.py``); None for other attributes. The group's ``dampening`` becomes a
    float, as ``__init__`` makes its groups'. Installed as
    ``torch.optim.SGD._adapter_new_slots`` (``patches/optimizer.py``'s ``_extend_slots``)."""
    if attr not in ("accum", "stat"):
        return None
    # as __init__ does for its groups (MindSpore's update casts it to float: an int 0 failed "Cast failed")
    dict.__setitem__(group, "dampening", float(dict.get(group, "dampening", 0.0)))
    return _optim_slots.slots(list(params), attr, _SLOTS[attr], _has_momentum(group))


def needs_slots(self, saved_group, saved_state) -> bool:
    """Whether a parameter loaded from a PyTorch checkpoint needs full-size slots: its saved group has momentum or
    it has a ``momentum_buffer``. Installed as ``torch.optim.SGD._adapter_needs_slots``
    (``patches/optim_state.py``'s ``load_state_dict`` then calls ``_adapter_before_update`` with those indices)."""
    return _has_momentum(saved_group) or saved_state.get("momentum_buffer") is not None


def apply() -> None:
    global ms, _P, _sgd_update, _jit_implementation
    import mindspore
    from mindspore.ops import composite as C, operations as P
    from mindspore.experimental.optim import SGD as SGD_MS
    from mindtorch.torch.optim import SGD

    prepare()
    if _sgd_update is None:  # made once: applied again, the patch installs the same objects
        ms, _P = mindspore, P
        _sgd_update = C.MultitypeFuncGraph("adapter_torch_sgd")
        _sgd_update.register("Function", "Tensor", "Tensor", "Number", "Number", "Number", "Bool", "Tensor",
                             "Tensor", "Tensor", "Tensor")(_update)
        _jit_implementation = mindspore.jit(implementation)
    patch_attr(SGD, "implementation", _jit_implementation)
    patch_attr(SGD_MS, "__init__", __init__)
    patch_attr(SGD, hooks.attr("before_update"), ensure_slots)
    patch_attr(SGD, hooks.attr("new_slots"), new_slots)
    patch_attr(SGD, hooks.attr("needs_slots"), needs_slots)
    # float64 param groups keep an exact float64 lr (patches/optimizer.py reads this class attribute)
    patch_attr(SGD, hooks.attr("float64_lr"), True)


PATCH = Patch("sgd", "torch.optim.SGD updates float64 parameters with PyTorch's formula in float64 (MindSpore's SGD "
                     "op takes float16/32 only) with the exact lr; momentum=0 holds no per-parameter slots "
                     "(4x Linear(4096, 4096): -256 MB RSS), created when momentum is switched on", "post-import", apply,
              replaces=("torch.optim.SGD.implementation", "torch.optim.SGD._adapter_float64_lr",
                        "torch.optim.SGD._adapter_before_update",
                        "torch.optim.SGD._adapter_new_slots", "torch.optim.SGD._adapter_needs_slots",
                        "mindspore.experimental.optim.SGD.__init__"))
