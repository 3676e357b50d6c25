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

The lr is read once, before the updates (``optimizer_graph._read_once``: MindSpore 2.10 on CPU made every later read
of a float64 lr float32). ``maximize`` negates the gradients first, as before (``patches/optimizer_graph.py``). The momentum buffer is
MindSpore's ``accum`` slot, so ``state_dict()`` (``patches/optim_state.py``) is unchanged.

Replaces: ``torch.optim.SGD.implementation`` (MindTorch's SGD, a subclass of MindSpore's), and sets its
``_adapter_float64_lr`` marker (``patches/optimizer.py``).
"""
from . import Patch, patch_attr
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


def _update(opt, momentum_t, lr, momentum, dampening, weight_decay, nesterov, gradient, weight, accum, stat):
    """One parameter's update (graph code, registered on ``_sgd_update`` by apply()): :func:`_sgd_float64` for
    float64 parameters, MindSpore's ``SGD`` operator ``opt`` otherwise."""
    if weight.dtype == ms.float64:
        return _sgd_float64(lr, momentum, dampening, weight_decay, nesterov, gradient, weight, accum, stat)
    if lr.dtype == ms.float64:  # a group mixing float64 and float32 parameters
        opt(weight, gradient, lr.astype(ms.float32), accum, momentum_t, stat)
    else:
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


def apply() -> None:
    global ms, _P, _sgd_update, _jit_implementation
    import mindspore
    from mindspore.ops import composite as C, operations as P
    from mindtorch.torch.optim import SGD

    prepare()
    if _sgd_update is None:  # made once: applied again, the patch installs the same objects
        ms, _P = mindspore, P
        _sgd_update = C.MultitypeFuncGraph("adapter_torch_sgd")
        _sgd_update.register("Function", "Tensor", "Tensor", "Number", "Number", "Number", "Bool", "Tensor",
                             "Tensor", "Tensor", "Tensor")(_update)
        _jit_implementation = mindspore.jit(implementation)
    patch_attr(SGD, "implementation", _jit_implementation)
    # float64 param groups keep an exact float64 lr (patches/optimizer.py reads this class attribute)
    patch_attr(SGD, "_adapter_float64_lr", True)


PATCH = Patch("sgd", "torch.optim.SGD updates float64 parameters with PyTorch's formula in float64 (MindSpore's SGD "
                     "op takes float16/32 only) with the exact lr", "post-import", apply,
              replaces=("torch.optim.SGD.implementation", "torch.optim.SGD._adapter_float64_lr"))
