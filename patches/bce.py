"""``F.binary_cross_entropy`` / ``nn.BCELoss``: PyTorch 2.13's values, gradients, dtypes and checks.

MindTorch 0.4.0 calls MindSpore's ``ops.binary_cross_entropy``, which differs from PyTorch where a probability
saturates, i.e. where a sigmoid output rounds to exactly 0 or 1 (GAN discriminators, siamese networks):

* values: MindSpore computes ``-w (y log(x + 1e-12) + (1 - y) log(1 - x + 1e-12))``-like terms: a saturated wrong
  prediction costs 27.63 (``-log 1e-12``) where PyTorch clamps each log at -100 (loss 100); ``x = 1 - 1e-7``
  gave 15.942377 (PyTorch 15.942385). pytorch/examples siamese_network's printed test loss after one step was
  0.0138 here for every seed, 0.0500 under PyTorch (all outputs saturated: 100 / 2 per pair, / 1000 pairs);
* float64 inputs raised ``TypeError: For Primitive[BinaryCrossEntorpy], the type of the input must be [Float16,
  Float32, BFloat16], but got Float64``;
* no checks: inputs or targets outside [0, 1] (or NaN) gave NaN, a target of another shape was broadcast.

PyTorch (``aten/src/ATen/native/Loss.cpp``, CPU kernels; ``torch/nn/functional.py``), values recorded in
tests/fixtures/bce_reference.json::

    loss  = w * ((y - 1) * max(log1p(-x), -100) - y * max(log(x), -100))        then mean / sum / none
    dL/dx = w * (x - y) / max(x (1 - x), float32(1e-12))          dL/dy = w * (log1p(-x) - log(x))

computed in the input's dtype (the two logs in float64, rounded to it: MindSpore's float32 ``Log`` kernel is not
correctly rounded, ``log(0.5)`` 1.5 ulp off, PyTorch's ``std::log`` is). The gradients are not those of the clamped formula (at ``x = 1, y = 0`` PyTorch's
is 1e12, the formula's 0), so the loss is built as ``stop_gradient(loss) + (x - stop_gradient(x)) *
stop_gradient(dL/dx) + (y - stop_gradient(y)) * stop_gradient(dL/dy)``: its value is the loss exactly (the other
terms are 0), its gradients are PyTorch's, in PyNative and in compiled graphs alike. Where ``dL/dy`` is infinite
(``x`` exactly 0 or 1, a target that requires grad: rare) it is 0 here, PyTorch's is +-inf.

Checks as PyTorch's: ``ValueError`` "Using a target size (torch.Size([...])) that is different to the input size
(...) is deprecated. Please ensure they have the same size."; ``RuntimeError`` "Found dtype Float but expected
Double" for mixed dtypes; a ``weight`` broadcast to the target's shape (PyTorch's ``RuntimeError``\ s when it cannot
be);
``RuntimeError`` "all elements of input should be between 0 and 1" (and target) -- in PyNative only (a compiled
step checks nothing: the first call of every step site runs eagerly and checks).

``F.binary_cross_entropy_with_logits`` (``nn.BCEWithLogitsLoss``): float64 inputs, refused by MindSpore, by
PyTorch's formula; its target-size ``ValueError``. Other dtypes: MindSpore's kernel with ``reduction="none"``, the
mean or sum taken here. With ``reduction="mean"`` (the default) MindSpore's ``BCEWithLogitsLossGrad`` (2.10 and
2.5-dev, PyNative) divides by the element count of the *first* call in the process, not of this call: after a
first call on 1 element, the input gradient of a 5-element loss was 5 times PyTorch's (op_db's
``binary_cross_entropy_with_logits:s2``: 5 of 5 values off, up to 0.597); a smaller last batch of an epoch, or a
second loss of another size (YOLO's objectness and class terms), got a gradient scaled by the ratio of the sizes,
silently. Its ``"none"`` gradients are right for every shape sequence (checked against PyTorch's formulas, with
``weight`` and ``pos_weight`` broadcast); a compiled step was right (each graph has its own kernel).

Replaces: ``mindtorch.torch.nn.functional.binary_cross_entropy`` and ``binary_cross_entropy_with_logits``
(``nn.BCELoss`` / ``nn.BCEWithLogitsLoss`` call them through ``F``), and ``torch.binary_cross_entropy_with_logits``
(the same MindTorch function).
"""
from __future__ import annotations

from . import Patch, get_original, patch_attr
from .float64_precision import reduce_loss

# graph code below reads these module globals; set by apply()
ms = cast_to_ms_tensor = cast_to_adapter_tensor = _get_reduce_string = graph_mode_condition = None
_plan = None  # constexpr(_plan_python)

# aten/src/ATen/native/Loss.cpp, binary_cross_entropy_backward: `static const float EPSILON = 1e-12`, a float also
# in the double kernel (measured: PyTorch's float64 gradient at x = 1, y = 0 is 1000000003995.8029 = 1 / float32(1e-12))
_EPSILON = 9.999999960041972e-13  # float(numpy.float32(1e-12))


def _size(shape) -> str:
    return f"torch.Size([{', '.join(str(int(d)) for d in shape)}])"


def _dtype_name(dtype) -> str:
    from .inplace import _torch_name
    return _torch_name(dtype)


def _plan_python(input_shape, target_shape, input_dtype, target_dtype, weight_shape) -> bool:
    """PyTorch's shape and dtype checks (a ``constexpr`` in graphs). Returns whether a weight must be broadcast.

    Raises:
        ValueError: target and input sizes differ (``torch.nn.functional.binary_cross_entropy``'s text).
        RuntimeError: input and target (or weight) dtypes differ; the weight does not broadcast to the target.
    """
    if tuple(target_shape) != tuple(input_shape):
        raise ValueError(f"Using a target size ({_size(target_shape)}) that is different to the input size "
                         f"({_size(input_shape)}) is deprecated. Please ensure they have the same size.")
    if target_dtype != input_dtype:
        raise RuntimeError(f"Found dtype {_short(target_dtype)} but expected {_short(input_dtype)}")
    if weight_shape is None:
        return False
    shape, wshape = tuple(int(d) for d in target_shape), tuple(int(d) for d in weight_shape)
    for i, (w, s) in enumerate(zip(wshape[::-1], shape[::-1])):  # torch.broadcast_shapes(target, weight)
        if w not in (1, s) and s != 1:
            raise RuntimeError(f"Attempting to broadcast a dimension of length {w} at {-(i + 1)}! Mismatching "
                               f"argument at index 1 had {_size(wshape)}; but expected shape should be broadcastable "
                               f"to [{', '.join(str(d) for d in shape)}]")
    broadcast = tuple(max(a, b) for a, b in zip((1,) * (len(wshape) - len(shape)) + shape,
                                                (1,) * (len(shape) - len(wshape)) + wshape))
    if broadcast != shape:  # the expanded weight is larger than the loss (PyTorch's kernel message)
        raise RuntimeError(f"output with shape [{', '.join(str(d) for d in shape)}] doesn't match the broadcast "
                           f"shape [{', '.join(str(d) for d in broadcast)}]")
    return wshape != shape


def _short(dtype) -> str:
    """PyTorch's scalar type name in its "Found dtype ... but expected ..." messages (Float, Double, Half...)."""
    name = _dtype_name(dtype).replace("torch.", "")
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short"}.get(name, name)


def _check_values(x, y) -> None:
    """PyTorch's in-kernel checks (PyNative only: they read the values)."""
    if not bool(ms.ops.logical_and(x >= 0, x <= 1).all()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not bool(ms.ops.logical_and(y >= 0, y <= 1).all()):
        raise RuntimeError("all elements of target should be between 0 and 1")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,  # noqa: A002
                         reduction="mean"):
    """PyTorch's ``F.binary_cross_entropy`` (module docstring). input, target: probabilities of the same shape and
    floating dtype; weight: broadcastable to it; reduction ``'mean'`` | ``'sum'`` | ``'none'``."""
    if size_average is not None or reduce is not None:
        reduction = _get_reduce_string(size_average, reduce)
    x = cast_to_ms_tensor(input)
    y = cast_to_ms_tensor(target)
    w = None if weight is None else cast_to_ms_tensor(weight)
    expand = _plan(x.shape, y.shape, x.dtype, y.dtype, None if w is None else w.shape)
    if not graph_mode_condition():
        _check_values(x, y)
    sg = ms.ops.stop_gradient
    xs, ys = sg(x), sg(y)
    # logs evaluated in float64 and rounded to the input's dtype: PyTorch's std::log(float) is correctly rounded,
    # MindSpore's float32 Log kernel is not (log(0.5) 1.5 ulp off, log(1e-30) 3e-7 relative)
    wide = xs.astype(ms.float64)
    log_x = ms.ops.log(wide).astype(x.dtype)
    log_1mx = ms.ops.log1p(-wide).astype(x.dtype)
    floor = ms.ops.full((), -100.0, dtype=x.dtype)
    loss = (ys - 1) * ms.ops.maximum(log_1mx, floor) - ys * ms.ops.maximum(log_x, floor)
    one = ms.ops.ones((), x.dtype)
    grad_x = (xs - ys) / ms.ops.maximum((one - xs) * xs, ms.ops.full((), _EPSILON, dtype=x.dtype))
    grad_y = log_1mx - log_x
    if w is not None:
        ws = sg(w)
        if expand:
            ws = ms.ops.broadcast_to(ws, y.shape)
        loss = loss * ws
        grad_x = grad_x * ws
        grad_y = grad_y * ws
    grad_y = ms.ops.select(ms.ops.isfinite(grad_y), grad_y, ms.ops.zeros_like(grad_y))
    out = loss + (x - xs) * grad_x + (y - ys) * grad_y
    return cast_to_adapter_tensor(reduce_loss(out, reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,  # noqa: A002
                                     reduction="mean", pos_weight=None):
    """PyTorch's ``F.binary_cross_entropy_with_logits``: float64 inputs by PyTorch's formula (``Loss.cpp``)::

        loss = w * ((1 - y) x - (1 + (pos_weight - 1) y) log_sigmoid(x)),  log_sigmoid(x) = min(x, 0) - log1p(e^-|x|)

    in float64 (MindSpore's ``BCEWithLogitsLoss`` refuses float64: TypeError); other dtypes: MindTorch's (equal to
    PyTorch's to 1 ulp). ``ValueError`` "Target size (...) must be the same as input size (...)" as PyTorch."""
    x = cast_to_ms_tensor(input)
    y = cast_to_ms_tensor(target)
    _logits_plan(x.shape, y.shape)
    if size_average is not None or reduce is not None:
        reduction = _get_reduce_string(size_average, reduce)
    if x.dtype != ms.float64:
        # element-wise by MindSpore's kernel, reduced here: its "mean" gradient divides by the element count of the
        # first call in the process (module docstring)
        loss = cast_to_ms_tensor(_original_with_logits(input, target, weight, None, None, "none", pos_weight))
        return cast_to_adapter_tensor(reduce_loss(loss, reduction))
    zero = ms.ops.zeros((), x.dtype)
    log_sigmoid = ms.ops.minimum(x, zero) - ms.ops.log1p(ms.ops.exp(-ms.ops.abs(x)))
    if pos_weight is not None:
        log_sigmoid = log_sigmoid * ((cast_to_ms_tensor(pos_weight) - 1) * y + 1)
    loss = (1 - y) * x - log_sigmoid
    if weight is not None:
        loss = loss * cast_to_ms_tensor(weight)
    return cast_to_adapter_tensor(reduce_loss(loss, reduction))


def _logits_plan_python(input_shape, target_shape) -> None:
    if tuple(target_shape) != tuple(input_shape):
        raise ValueError(f"Target size ({_size(target_shape)}) must be the same as input size ({_size(input_shape)})")


_logits_plan = _original_with_logits = None


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, _get_reduce_string, graph_mode_condition, _plan
    global _logits_plan, _original_with_logits
    import mindspore
    import mindtorch.torch as torch
    import mindtorch.torch.nn.functional as F
    from mindspore.ops.primitive import constexpr
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter, cast_to_ms_tensor as to_ms
    from mindtorch.utils import graph_mode_condition as in_graph
    from adapter import backend

    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    _get_reduce_string, graph_mode_condition = backend.internal("get_reduce_string"), in_graph
    _plan = constexpr(_plan_python)
    _logits_plan = constexpr(_logits_plan_python)
    for name, function in (("binary_cross_entropy", binary_cross_entropy),
                           ("binary_cross_entropy_with_logits", binary_cross_entropy_with_logits)):
        original = get_original(F, name)
        if name.endswith("logits"):
            _original_with_logits = original
        patch_attr(F, name, function)
        if get_original(torch, name, None) is original:
            patch_attr(torch, name, function)


PATCH = Patch("bce", "F.binary_cross_entropy / nn.BCELoss with PyTorch's log clamp at -100 (MindSpore's eps 1e-12 "
                     "gave 27.6 for a saturated wrong output, PyTorch 100), its gradients, float64, and its checks; "
                     "binary_cross_entropy_with_logits in float64",
              "post-import", apply,
              replaces=("torch.nn.functional.binary_cross_entropy",
                        "torch.nn.functional.binary_cross_entropy_with_logits",
                        "torch.binary_cross_entropy_with_logits"))
