"""``torch.optim.Adam``: PyTorch's update formula (epsilon outside the bias correction).

MindTorch 0.4's Adam is MindSpore's ``mindspore.experimental.optim.Adam``, which calls the fused ``Adam`` operator
(ApplyAdam). That operator computes (MindSpore docs of ``ops.Adam``)::

    lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t);   p -= lr_t * m / (sqrt(v) + eps)

while PyTorch's Adam (``torch.optim.Adam`` docs, Algorithm 1 of Kingma & Ba 2015 with eps after the correction) is::

    p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

They are the same update when the operator is given ``eps * sqrt(1 - beta2^t)``; MindSpore's effective epsilon is
otherwise ``1 / sqrt(1 - beta2^t)`` times PyTorch's (31.6x at step 1). Measured with ``run.py --compare`` on a
deterministic ResNet18 (batch 8, lr 1e-3): the loss after one Adam step differed by 8.8e-4 (rel.), and the
50-step curves by 27 % on average; parameters with gradients near 1e-7 move differently. This patch passes the
corrected epsilon to the same fused operator, inside the same ``@jit`` ``implementation`` (so the compiled step
still fuses it).

Two more cases go through PyTorch's own update formula (``torch/optim/adam.py`` ``_single_tensor_adam``, 2.13; CPU
parameters take that path) instead of the fused operator:

* float64 parameters: the ``Adam`` operator takes float16/float32 only (``optimizer.step()`` on a ``.double()``
  model raised ``TypeError: For primitive[Adam], the input argument[grad] must be a type of {Float16, Float32}``).
  The update runs in float64 with the group's lr as a float64 ``Parameter`` holding the Python float
  (``patches/optimizer.py``), PyTorch's Python-float bias corrections computed in float64, and the exact
  ``weight_decay`` (MindSpore's ``_decay_weight`` rounds it to float32 first).
* ``amsgrad=True`` (any dtype): MindSpore's Adam ignores the flag (its ``max_exp_avg_sq`` slot is never used), a
  silent difference from PyTorch once a second moment decreases. The maximum is kept in that slot.

The formula, per parameter (``lerp`` as PyTorch's: ``m + w (g - m)`` for ``w = 1 - beta1 < 0.5``)::

    g = grad (+ weight_decay * param);  m = lerp(m, g, 1 - beta1);  v = beta2 v + (1 - beta2) g g
    step_size = lr / (1 - beta1^t);  denom = sqrt(v or max(v_max, v)) / sqrt(1 - beta2^t) + eps
    param = param + (-step_size) m / denom

Scalars (``1 - beta1``, the bias corrections, ``step_size``) are computed in float64, as PyTorch computes them in
Python, and cast to the parameter's dtype where they meet its tensors. ``t`` is MindSpore's global step counter
(``state_step``), as before, or the parameter's own count (below). The lr is read once, before the updates (``optimizer_graph._read_once``: MindSpore 2.10
on CPU made every later read of a float64 lr float32).

Compile time. The compiled step (``adapter/compiled_step.py``) compiles this update into the user's first step.
``hyper_map`` type-infers the per-parameter function once per distinct parameter shape (17 for ResNet18's 62
parameters), and with it every Python-defined graph function that body calls: ``x.astype`` (``standard_method``),
``functional.add`` and the other ``ms.ops`` wrappers, ``+ - * /`` (MindTorch's re-registered type dispatch,
``mindtorch/torch/_register/register_utils.py``), MindTorch's ``Tensor.dtype`` property (``str`` of the dtype and a
dict lookup), and each ``if``. So what is the same for a whole group is decided or computed once per group in
:func:`implementation`: amsgrad picks :func:`_update_amsgrad` or :func:`_update`; the float32 lr and the weight
decay tensor of the fused path; the float64 scalars of PyTorch's formula (:func:`_pytorch_scalars`). The
per-parameter code calls the primitives (Cast, Add, Sub, Mul, RealDiv, Neg, Pow, Sqrt, Maximum, Assign, DType)
directly: the operators those functions reached, on the same values in the same order, so the same bits (checked
bit for bit before/after: Adam and AdamW, eager and compiled, float64, mixed, amsgrad, maximize, low beta1 groups,
MindSpore 2.5 and 2.10). Measured (ResNet18's update compiled alone as the fused step compiles it, CPU seconds of
the compiling thread, bench/compile_parts.py, 2026-11-26): 1.12 -> 0.70 s (native nn.Adam 0.44); amsgrad=True
4.95 -> 2.12 s. The whole ResNet18 step's compile (bench/compile_phases.py): CPU 3.79 -> 3.52 s, type inference
1.21 -> 1.05 s (native 1.99 / 0.58): in the step, the forward and backward already specialize some of the same
functions for the same shapes.

Per-parameter step counts (``patches/adam_steps.py``): once an optimizer is switched (``_adapter_counted``, a
graph constant), ``implementation``'s ``counted`` branch (:func:`_implementation_counted`, :func:`_update_counted`)
computes ``t`` and the scalars above per parameter from its own count; until then the code above runs unchanged.

Replaces: ``torch.optim.Adam.implementation`` and ``construct`` (MindTorch's Adam, a subclass of MindSpore's), and
sets its ``_adapter_float64_lr`` marker (``patches/optimizer.py``) and ``_adapter_counted`` (False).
"""
from adapter import hooks

from . import Patch, patch_attr
from .optimizer_graph import _maximize, _read_once, prepare

# graph code below reads these module globals; set by apply(): mindspore, the fused Adam operator, the
# MultitypeFuncGraphs that :func:`_update` and :func:`_update_amsgrad` are registered on, and the primitives the
# updates call (the ones ``astype``, ``+ - * /``, unary ``-`` and ``ms.ops.pow/sqrt/maximum/assign`` reach)
ms = _adam_op = _torch_adam = _torch_adam_amsgrad = _torch_adam_counted = None
_cast_op = _add_op = _sub_op = _mul_op = _div_op = _neg_op = _pow_op = _sqrt_op = _maximum_op = _assign_op = None
_dtype_op = None
_jit_implementation = None  # mindspore.jit(implementation), made once by apply()


def _pytorch_scalars(lr, beta1, beta2, step):
    """The float64 scalars of PyTorch's formula (module docstring) for one group, graph code, made once per group:
    ``(w, 1 - w, beta2, 1 - beta2, sqrt(bias_correction2), -step_size)``, each a float64 0-d tensor, ``w = 1 -
    beta1``. ``step``: float64 0-d tensor (the step count after this step's increment); ``lr``: 0-d tensor (float64
    for float64 parameters). Tensors, not Python numbers: scalar arithmetic in a graph is float32."""
    f64 = ms.float64
    one = ms.Tensor(1.0, f64)
    b1 = ms.Tensor(beta1, f64)
    b2 = ms.Tensor(beta2, f64)
    w = _sub_op(one, b1)
    bias_correction1 = _sub_op(one, _pow_op(b1, step))
    bias_correction2 = _sub_op(one, _pow_op(b2, step))
    step_size = _div_op(_cast_op(lr, f64), bias_correction1)
    bias_correction2_sqrt = _pow_op(bias_correction2, ms.Tensor(0.5, f64))
    return w, _sub_op(one, w), b2, _sub_op(one, b2), bias_correction2_sqrt, _neg_op(step_size)


def _adam_pytorch(scalars, beta1, eps, weight_decay, amsgrad, gradient, weight, exp_avg, exp_avg_sq,
                  max_exp_avg_sq):
    """PyTorch's Adam update of one parameter (module docstring); graph code. ``scalars``: the group's
    :func:`_pytorch_scalars`, cast to the parameter's dtype where they meet its tensors. Primitives, in the order
    of the expressions they replace (``lerp``, then ``v = beta2 v + (1 - beta2) g g``, ...): the operators that
    ``+ - * /``, ``astype`` and ``ms.ops.*`` reached, so the same bits (module docstring, "Compile time")."""
    w, one_minus_w, b2, one_minus_b2, bias_correction2_sqrt, neg_step_size = scalars
    dtype = _dtype_op(weight)
    if weight_decay != 0:
        gradient = _add_op(gradient, _mul_op(ms.Tensor(weight_decay, dtype), weight))
    if beta1 > 0.5:  # torch.lerp: start + w * (end - start) for |w| < 0.5, else end - (end - start) * (1 - w)
        m = _add_op(exp_avg, _mul_op(_cast_op(w, dtype), _sub_op(gradient, exp_avg)))
    else:
        m = _sub_op(gradient, _mul_op(_sub_op(gradient, exp_avg), _cast_op(one_minus_w, dtype)))
    v = _add_op(_mul_op(exp_avg_sq, _cast_op(b2, dtype)),
                _mul_op(_mul_op(_cast_op(one_minus_b2, dtype), gradient), gradient))
    _assign_op(exp_avg, m)
    _assign_op(exp_avg_sq, v)
    if amsgrad:
        v = _maximum_op(max_exp_avg_sq, v)
        _assign_op(max_exp_avg_sq, v)
    denom = _add_op(_div_op(_sqrt_op(v), _cast_op(bias_correction2_sqrt, dtype)), ms.Tensor(eps, dtype))
    _assign_op(weight, _add_op(weight, _div_op(_mul_op(_cast_op(neg_step_size, dtype), m), denom)))
    return True


def _update(beta1_power, beta2_power, scalars, beta1, beta2, eps, weight_decay, eps_t, lr32, wd_t, gradient,
            param, exp_avg, exp_avg_sq, max_exp_avg_sq):
    """One parameter's update in a group without amsgrad (graph code, registered on ``_torch_adam`` by apply()): the
    fused ``Adam`` operator with PyTorch's epsilon, or :func:`_adam_pytorch` for a float64 parameter.

    ``lr32``: the group's lr cast to float32 once (the operator's lr for every dtype, as before); ``wd_t``: the
    weight decay as a float32 0-d tensor, made once per group; ``scalars``: :func:`_pytorch_scalars`. Primitives only
    (module docstring, "Compile time"): ``param * wd + gradient`` is the Mul and Add that ``*`` and ``+`` reach
    (MindSpore's multitype_ops mul_impl / add_impl), the casts the Cast that ``astype`` reaches
    (``standard_method.astype``)."""
    dtype = _dtype_op(param)
    if dtype == ms.float64:
        return _adam_pytorch(scalars, beta1, eps, weight_decay, False, gradient, param, exp_avg, exp_avg_sq,
                             max_exp_avg_sq)
    if weight_decay != 0:  # MindSpore's _decay_weight (optimizer.py _tensor_apply_decay), as before
        # not `*` and `+`: MindTorch re-registers them on tensors with a type dispatch
        # (mindtorch/torch/_register/register_utils.py), graph code compiled for every parameter shape
        gradient = _add_op(_mul_op(param, _cast_op(wd_t, dtype)), gradient)
    _adam_op(param, exp_avg, exp_avg_sq, beta1_power, beta2_power, lr32, beta1, beta2, _cast_op(eps_t, dtype),
             gradient)
    return True


def _update_amsgrad(beta1_power, beta2_power, scalars, beta1, beta2, eps, weight_decay, eps_t, lr32, wd_t,
                    gradient, param, exp_avg, exp_avg_sq, max_exp_avg_sq):
    """One parameter's update in a group with amsgrad (graph code, registered on ``_torch_adam_amsgrad``):
    :func:`_adam_pytorch` for every dtype. Same arguments as :func:`_update`."""
    return _adam_pytorch(scalars, beta1, eps, weight_decay, True, gradient, param, exp_avg, exp_avg_sq,
                         max_exp_avg_sq)


def _update_counted(amsgrad, beta1, beta2, eps, weight_decay, lr, lr32, wd_t, one, gradient, param, exp_avg,
                    exp_avg_sq, max_exp_avg_sq, step):
    """One parameter's update with its own step count (graph code, registered on ``_torch_adam_counted``; the
    optimizer in per-parameter mode, ``patches/adam_steps.py``): ``step`` (its int32 0-d count Parameter) is advanced
    by ``one`` and the group's expressions of :func:`implementation` (``beta1^t``, ``beta2^t``, the corrected
    epsilon, :func:`_pytorch_scalars`) are computed from it, then :func:`_update` / :func:`_update_amsgrad` as in the
    global mode: for a count equal to the global one, the same operators on the same values (the same bits)."""
    t = _add_op(step, one)
    _assign_op(step, t)
    beta1_power = _pow_op(beta1, t)
    beta2_power = _pow_op(beta2, t)
    eps_t = eps * ms.ops.sqrt(1.0 - beta2_power)
    scalars = _pytorch_scalars(lr, beta1, beta2, _cast_op(t, ms.float64))
    if amsgrad:
        return _update_amsgrad(beta1_power, beta2_power, scalars, beta1, beta2, eps, weight_decay, eps_t, lr32, wd_t,
                               gradient, param, exp_avg, exp_avg_sq, max_exp_avg_sq)
    return _update(beta1_power, beta2_power, scalars, beta1, beta2, eps, weight_decay, eps_t, lr32, wd_t, gradient,
                   param, exp_avg, exp_avg_sq, max_exp_avg_sq)


def _implementation_counted(self, beta1, beta2, eps, lr, start_id, end_id, gradients, maximize, weight_decay,
                            amsgrad):
    """:func:`implementation` in per-parameter mode: each parameter's own count (``self._adapter_steps``)."""
    lr = _read_once(lr)
    params = self.parameters[start_id: end_id]
    grads = _maximize(not maximize, ms.ops.neg, gradients[start_id: end_id])  # patches/optimizer_graph.py
    lr32 = _cast_op(lr, ms.float32)
    wd_t = ms.Tensor(float(weight_decay), ms.float32)
    self.hyper_map(ms.ops.partial(_torch_adam_counted, bool(amsgrad), float(beta1), float(beta2), float(eps),
                                  float(weight_decay), lr, lr32, wd_t, self.increase_tensor),
                   grads, params, self.exp_avg[start_id: end_id], self.exp_avg_sq[start_id: end_id],
                   self.max_exp_avg_sq[start_id: end_id], self._adapter_steps[start_id: end_id])
    return True


def implementation(self, beta1, beta2, eps, lr, start_id, end_id, gradients, maximize, weight_decay,
                   amsgrad=False, counted=False):
    """MindSpore's ``Adam.implementation`` with ``eps * sqrt(1 - beta2^t)`` (PyTorch's formula, see module);
    float64 parameters and amsgrad by PyTorch's formula. Installed as ``mindspore.jit(implementation)``.
    ``counted`` (a compile-time bool, ``self._adapter_counted``): each parameter's own step count
    (:func:`_implementation_counted`, ``patches/adam_steps.py``) instead of the global ``state_step``."""
    if counted:
        return _implementation_counted(self, beta1, beta2, eps, lr, start_id, end_id, gradients, maximize,
                                       weight_decay, amsgrad)
    lr = _read_once(lr)  # one Load of the float64 lr: MindSpore 2.10 made the later ones float32 (see there)
    beta1_power = self.op_pow(beta1, self.state_step)
    beta2_power = self.op_pow(beta2, self.state_step)
    eps_t = eps * ms.ops.sqrt(1.0 - beta2_power)
    scalars = _pytorch_scalars(lr, float(beta1), float(beta2), self.state_step.astype(ms.float64))
    params = self.parameters[start_id: end_id]
    grads = _maximize(not maximize, ms.ops.neg, gradients[start_id: end_id])  # patches/optimizer_graph.py
    # decided and made once per group, not once per parameter shape (module docstring, "Compile time")
    lr32 = _cast_op(lr, ms.float32)  # a group mixing float64 and float32 parameters has a float64 lr
    wd_t = ms.Tensor(float(weight_decay), ms.float32)
    update = _torch_adam_amsgrad if amsgrad else _torch_adam
    self.hyper_map(ms.ops.partial(update, beta1_power, beta2_power, scalars, float(beta1), float(beta2),
                                  float(eps), float(weight_decay), eps_t, lr32, wd_t),
                   grads, params, self.exp_avg[start_id: end_id], self.exp_avg_sq[start_id: end_id],
                   self.max_exp_avg_sq[start_id: end_id])
    return True


def construct(self, gradients):
    """MindSpore's ``Adam.construct``, also passing each group's ``amsgrad`` and the optimizer's per-parameter mode
    (``_adapter_counted``, ``patches/adam_steps.py``) to ``implementation``."""
    self.assignadd(self.state_step, self.increase_tensor)
    for group_id, group in enumerate(self.param_groups):
        start_id = self.group_start_id[group_id]
        end_id = self.group_start_id[group_id + 1]
        lr = self.lrs[group_id]
        beta1, beta2 = group.get("betas")
        if isinstance(group.get("lr"), float):
            lr = self.op_cast(group.get("lr"), ms.float32)
        self.implementation(beta1, beta2, group.get("eps"), lr, start_id, end_id, gradients,
                            group.get("maximize"), group.get("weight_decay"), group.get("amsgrad"),
                            self._adapter_counted)
    return True


def apply() -> None:
    global ms, _adam_op, _torch_adam, _torch_adam_amsgrad, _torch_adam_counted, _jit_implementation
    global _cast_op, _add_op, _sub_op, _mul_op, _div_op, _neg_op, _pow_op, _sqrt_op, _maximum_op, _assign_op, _dtype_op
    import mindspore
    from mindspore.ops import composite as C, operations as P
    from mindtorch.torch.optim import Adam

    prepare()
    if _torch_adam is None:  # made once: applied again, the patch installs the same objects
        ms, _adam_op = mindspore, P.Adam(False, False)
        _cast_op, _add_op, _sub_op, _mul_op, _div_op = P.Cast(), P.Add(), P.Sub(), P.Mul(), P.RealDiv()
        _neg_op, _pow_op, _sqrt_op, _maximum_op = P.Neg(), P.Pow(), P.Sqrt(), P.Maximum()
        _assign_op, _dtype_op = P.Assign(), P.DType()
        _torch_adam = C.MultitypeFuncGraph("adapter_torch_adam")
        sig = ("Tensor", "Tensor", "Tuple", "Number", "Number", "Number", "Number", "Tensor", "Tensor", "Tensor",
               "Tensor", "Tensor", "Tensor", "Tensor", "Tensor")
        _torch_adam.register(*sig)(_update)
        _torch_adam_amsgrad = C.MultitypeFuncGraph("adapter_torch_adam_amsgrad")
        _torch_adam_amsgrad.register(*sig)(_update_amsgrad)
        _torch_adam_counted = C.MultitypeFuncGraph("adapter_torch_adam_counted")
        _torch_adam_counted.register("Bool", "Number", "Number", "Number", "Number", "Tensor", "Tensor", "Tensor",
                                     "Tensor", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor")(
            _update_counted)
        _jit_implementation = mindspore.jit(implementation)
    patch_attr(Adam, "implementation", _jit_implementation)
    patch_attr(Adam, "construct", construct)
    # float64 param groups keep an exact float64 lr (patches/optimizer.py reads this class attribute)
    patch_attr(Adam, hooks.attr("float64_lr"), True)
    # per-parameter step counts: off until patches/adam_steps.py switches an optimizer (construct reads it)
    patch_attr(Adam, hooks.attr("counted"), False)


PATCH = Patch("adam", "torch.optim.Adam updates with PyTorch's formula (MindSpore's Adam op scales eps by "
                      "1/sqrt(1-beta2^t)); float64 parameters and amsgrad by PyTorch's formula", "post-import", apply,
              replaces=("torch.optim.Adam.implementation", "torch.optim.Adam.construct",
                        "torch.optim.Adam._adapter_float64_lr", "torch.optim.Adam._adapter_counted"))
