"""Normalization layers with PyTorch's parameters, buffers, ``state_dict`` keys and forward (train and eval).

Replaces, on MindTorch 0.4.0's classes (``mindtorch/torch/nn/modules/{batchnorm,instancenorm,normalization}.py``),
``__init__`` / ``reset_*`` / ``extra_repr`` / ``_load_from_state_dict`` / ``forward`` with PyTorch 2.13's
(``torch/nn/modules/batchnorm.py``, ``instancenorm.py``, ``normalization.py``), and adds ``nn.RMSNorm`` /
``F.rms_norm`` / ``torch.rms_norm``. What MindTorch did, and why it mattered:

* ``LayerNorm(elementwise_affine=False)``, ``GroupNorm(affine=False)``, ``BatchNorm*d(affine=False)``,
  ``InstanceNorm*d()`` (default ``affine=False``) had ``weight`` and ``bias`` Parameters (``requires_grad=False``)
  in ``parameters()`` and ``state_dict()``, where PyTorch registers them as ``None``: a PyTorch checkpoint failed a
  strict ``load_state_dict`` (missing keys), one saved here failed in PyTorch (unexpected keys), and optimizers got
  two extra tensors per layer. ``LayerNorm(bias=False)`` / ``GroupNorm(bias=False)`` / ``BatchNorm(bias=False)``
  (PyTorch >= 2.1 / 2.13) raised TypeError.
* ``track_running_stats=False`` (the InstanceNorm default, BatchNorm on request) still had ``running_mean`` /
  ``running_var`` buffers; PyTorch has them ``None``.
* ``BatchNorm(momentum=None)`` (cumulative moving average, factor ``1 / num_batches_tracked``) became momentum 0.0:
  the running statistics never moved and ``eval()`` normalized with mean 0 / variance 1, a silent wrong result.
  ``num_batches_tracked`` stayed 0 (PyTorch adds 1 per training forward), so it was wrong in saved checkpoints too.
* ``InstanceNorm*d`` called MindSpore's ``InstanceNorm`` primitive, which has no CPU kernel ("Unsupported op
  [InstanceNorm] on CPU"): every InstanceNorm forward failed on CPU (fast_neural_style, CycleGAN-style scripts); the
  primitive also always normalizes with the input's statistics, so ``eval()`` with ``track_running_stats=True``
  would not use the running ones.
* float64 (``model.double()``): MindSpore's ``BatchNorm`` primitive raised TypeError (float16/float32 only), and
  ``GroupNorm`` / ``F.group_norm`` computed in float32 (1e-7 relative error).
* BatchNorm in training mode on one value per channel (``BatchNorm1d`` on a batch of 1, mnist_rnn's last partial
  batch; ``(1, C, 1, 1)``) returned zeros; PyTorch raises ValueError "Expected more than 1 value per channel when
  training" (``_verify_batch_size``), as it does here now.
* ``nn.RMSNorm`` / ``F.rms_norm`` (PyTorch >= 2.4, LLM scripts) were missing.

Kept: MindSpore's ``BatchNorm`` and ``LayerNorm`` primitives (fused forward and backward kernels). A missing weight or
bias is passed as constant ones / zeros of the layer's shape, which is the identity affine transform PyTorch's
``None`` means. BatchNorm's running statistics stay MindSpore Parameters (the primitive updates them in place, in
PyNative and in a compiled step, exactly as before); ``num_batches_tracked`` is an int64 Parameter incremented with
``mindspore.ops.assign_add`` so that it also counts inside a compiled step (held like running_mean/var: in ``_params``
for its name, kept out of ``parameters()``). Parameters PyTorch registers as None are plain None attributes here
(:func:`_no_param`). With ``momentum=None`` the primitive runs
with momentum 0 on constant statistics, and the running statistics get PyTorch's update
``running = (1 - f) * running + f * batch`` with ``f = 1 / num_batches_tracked`` (unbiased batch variance, as
``torch/nn/modules/batchnorm.py`` and ATen's ``batch_norm_cpu_update_stats_template``). InstanceNorm is written out
with MindSpore ops (PyTorch's ``F.instance_norm``: per-sample, per-channel biased variance for the output; the
running statistics, when tracked, move by the batch average of the per-instance mean and unbiased variance, as
ATen's ``instance_norm`` in ``aten/src/ATen/native/Normalization.cpp``). RMSNorm is PyTorch's decomposition
(``torch/_decomp/decompositions.py`` ``_fused_rms_norm``): ``x * rsqrt(mean(x**2) + eps) * weight`` in float32 for
float16/bfloat16 input, ``eps=None`` meaning ``torch.finfo(float32).eps`` (float64 input: float64's). float64 input
is normalized in float64 by the same formulas written out (BatchNorm, LayerNorm, GroupNorm), with Python-float
constants made float64 tensors first (:func:`_scalar`). ``F.instance_norm`` and ``F.group_norm`` are replaced by the
functions here (MindTorch's ``F.instance_norm`` raised in graph mode when it had to update running statistics);
``F.layer_norm`` / ``F.batch_norm`` with weight/bias None were already right (tests/test_normalization.py).

All forwards are graph code (MindSpore GRAPH_MODE, STRICT): the compiled training step runs them. The BatchNorm
primitive is chosen in Python (``_bn_primitive``, read through ``adapter.graph_lean.PythonAttribute``), so
``adapter/graph_semantics.py`` keeps this forward instead of its lean one when this patch is on. MindTorch's plain
case of ``BatchNorm1d`` / ``BatchNorm2d`` (``_adapter_bn_fast``, also read with Python's getattr) calls the primitive
with its input checks decided in one constant function; only other modules and inputs build the general forward's
graph (compile time: 20 BatchNorm layers of a ResNet18 built and type-inferred it, 0.6 s).

Replaces: ``_NormBase``/``_BatchNorm``/``_InstanceNorm``/``_LazyNormBase``/``LayerNorm``/``GroupNorm`` methods named
above (and ``BatchNorm3d``'s own ``__init__``/``forward``, by ``_BatchNorm``'s; ``InstanceNorm{1,2,3}d.
_check_input_dim``), ``nn.Module._named_members`` (``num_batches_tracked`` out of ``parameters()``), ``nn.RMSNorm``,
``F.rms_norm``, ``torch.rms_norm``, ``F.instance_norm``, ``F.group_norm``.
"""
from __future__ import annotations

import functools
import numbers
import warnings

from adapter import hooks

from . import Patch, get_original, patch_attr

# float eps of the computation dtype, PyTorch's torch.finfo(...).eps (rms_norm with eps=None).
_EPS_F32 = 1.1920928955078125e-07
_EPS_F64 = 2.220446049250313e-16

# Module globals used by the graph-code forwards below; set by apply() once MindTorch is imported.
ms = P = cache_prim = cast_to_ms_tensor = cast_to_adapter_tensor = _verify_batch_size = _bn_fast_ok = None
_bn_fast_ranks = {}  # MindTorch's BatchNorm1d / BatchNorm2d ``_check_input_dim`` -> the ranks it accepts (apply())
# the primitives MindTorch's cast_to_ms_tensor / cast_to_adapter_tensor apply to one tensor (set by apply()): the
# BatchNorm forward, whose input and output are single tensors, calls them directly, without those functions' type
# dispatch (isinstance chains over Tensor/tuple/list/dict: graph code compiled for every layer)
_to_ms = _to_adapter = None


# -- BatchNorm ---------------------------------------------------------------------------------------------------------
def _bn_uses_batch_stats(module) -> bool:
    """PyTorch's ``bn_training``: batch statistics in training mode, and in eval mode when there are no buffers."""
    return module.training or (module.running_mean is None and module.running_var is None)


def _bn_updates_in_primitive(module) -> bool:
    """Whether the ``BatchNorm`` primitive itself moves the running statistics (training, tracked, float momentum)."""
    return module.training and module.track_running_stats and module.running_mean is not None \
        and module.momentum is not None


def _bn_primitive(module):
    """MindSpore's ``BatchNorm`` primitive for ``module``'s current mode (cached per arguments by MindSpore):
    is_training when batch statistics are used; momentum the module's only when the primitive updates the running
    statistics, else 0.0 (constant statistics are passed and left alone)."""
    if not _bn_uses_batch_stats(module):
        return cache_prim(P.BatchNorm)(is_training=False, epsilon=float(module.eps), data_format="NCHW")
    momentum = float(module.momentum) if _bn_updates_in_primitive(module) else 0.0
    return cache_prim(P.BatchNorm)(is_training=True, epsilon=float(module.eps), momentum=momentum,
                                        data_format="NCHW")


def _verify_batch_size_python(shape) -> bool:
    """PyTorch's ``_verify_batch_size`` (``torch/nn/functional.py``): batch statistics need more than one value per
    channel. Raises ValueError with PyTorch's message when ``N * prod(spatial) == 1`` (MindSpore normalized the lone
    value to 0 and put NaN-free garbage in the running variance). A constant function in graph code (``apply``)."""
    size = 1
    for i, dim in enumerate(shape):
        if i != 1:
            size *= dim
    if size == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"torch.Size({list(shape)})")
    return True


def _bn_plain(module) -> bool:
    """MindTorch's own case: weight and bias Parameters, tracked running statistics and counter, a float momentum."""
    return module.weight is not None and module.bias is not None and module.running_mean is not None \
        and module.running_var is not None and module.num_batches_tracked is not None \
        and module.track_running_stats and module.momentum is not None


def _param_dtype(x, *tensors):
    """dtype for constant weight/bias/statistics: that of the first tensor given, else float32 (MindSpore's
    BatchNorm takes float32 scale/statistics for float16 input) unless the input is float64."""
    for t in tensors:
        if t is not None:
            return t.dtype
    if x.dtype == ms.float64:
        return ms.float64
    return ms.float32


def _bn_fast(module):
    """The ranks ``module``'s ``_check_input_dim`` accepts when its forward can take the fast path of
    :func:`_batch_norm_forward` (MindTorch's plain case, :func:`_bn_plain`, of ``BatchNorm1d`` / ``BatchNorm2d`` with
    their own rank check), else None. Computed in Python (a ``PythonAttribute``): a constant in graph code."""
    if not _bn_plain(module):
        return None
    return _bn_fast_ranks.get(type(module)._check_input_dim)


def _bn_fast_ok_python(shape, dtype, ranks, training) -> bool:
    """Whether an input of ``shape`` / ``dtype`` takes the fast path: a rank ``_check_input_dim`` accepts (never
    5-D), not float64, and in training more than one value per channel. False sends it to the general path, which
    raises PyTorch's errors for the other cases. A constant function in graph code (``apply``)."""
    if len(shape) not in ranks or len(shape) == 5 or dtype == ms.float64:
        return False
    if training:
        size = 1
        for i, dim in enumerate(shape):
            if i != 1:
                size *= dim
        return size != 1
    return True


def _batch_norm_forward(self, input):  # noqa: A002 (PyTorch's name); graph code
    """``_BatchNorm.forward`` (PyTorch 2.13, ``torch/nn/modules/batchnorm.py``). Input (N, C), (N, C, L),
    (N, C, H, W) or (N, C, D, H, W) (reshaped to 4-D as MindTorch's BatchNorm3d); output the input's shape.
    Raises ValueError for a wrong input rank (``_check_input_dim``).

    MindTorch's plain case (:func:`_bn_fast`) with an input the checks pass (:func:`_bn_fast_ok_python`) calls the
    primitive here, with the rank and batch-size checks decided once in Python: the same operations as the plain
    branch of :func:`_batch_norm_general`, which the rest goes through. Compile time: the general forward's graph code
    (the ``_check_input_dim`` method, ``_bn_uses_batch_stats``, the branches) was built and type-inferred per
    BatchNorm layer, 0.6 s of a ResNet18 forward's 1.5 s type inference."""
    ranks = self._adapter_bn_fast
    if ranks is not None:
        x = _to_ms(input)
        if _bn_fast_ok(x.shape, x.dtype, ranks, self.training):
            if self.training:
                ms.ops.assign_add(self.num_batches_tracked, ms.ops.ones((), ms.int64))
            return _to_adapter(self._adapter_bn_primitive(x, self.weight, self.bias, self.running_mean,
                                                          self.running_var)[0])
    return _batch_norm_general(self, input)


def _batch_norm_general(self, input):  # noqa: A002; graph code
    """:func:`_batch_norm_forward` for every module and input (the fast path's cases included)."""
    self._check_input_dim(input)
    x = _to_ms(input)
    if _bn_uses_batch_stats(self):
        _verify_batch_size(x.shape)
    if self._adapter_bn_plain and x.ndim != 5 and x.dtype != ms.float64:
        # MindTorch's case (affine with bias, tracked statistics, a float momentum): the primitive with the layer's
        # own tensors; few graph nodes per layer (compile time)
        if self.training:
            ms.ops.assign_add(self.num_batches_tracked, ms.ops.ones((), ms.int64))
        output = self._adapter_bn_primitive(x, self.weight, self.bias, self.running_mean, self.running_var)[0]
        return _to_adapter(output)
    shape = x.shape
    if x.ndim == 5:
        x = x.reshape((shape[0], shape[1], shape[2] * shape[3], shape[4]))
    channels = shape[1]
    dtype = _param_dtype(x, self.weight, self.running_mean)
    weight = self.weight
    if weight is None:
        weight = ms.ops.ones((channels,), dtype)
    bias = self.bias
    if bias is None:
        bias = ms.ops.zeros((channels,), dtype)
    if self.training and self.track_running_stats and self.num_batches_tracked is not None:
        ms.ops.assign_add(self.num_batches_tracked, ms.ops.ones((), ms.int64))
    if x.dtype == ms.float64:  # MindSpore's BatchNorm takes float16/float32 only
        output = _batch_norm_float64(self, x, weight, bias)
    elif _bn_updates_in_primitive(self) or not _bn_uses_batch_stats(self):
        output = self._adapter_bn_primitive(x, weight, bias, self.running_mean, self.running_var)[0]
    else:
        output = self._adapter_bn_primitive(x, weight, bias, ms.ops.zeros((channels,), dtype),
                                            ms.ops.ones((channels,), dtype))[0]
        if self.training and self.track_running_stats and self.running_mean is not None:  # momentum=None
            _update_running_stats(self, x, 1.0 / ms.ops.cast(self.num_batches_tracked, self.running_mean.dtype))
    if len(shape) == 5:
        output = output.reshape(shape)
    return _to_adapter(output)


def _scalar(value, dtype):
    """A 0-d tensor of ``dtype`` holding the Python float ``value``: MindSpore turns a Python float operand into a
    float32 scalar first (1e-8 relative error in float64 arithmetic; see patches/float64_precision.py)."""
    return ms.Tensor(value, dtype)


def _batch_stats(x):
    """Per-channel mean and biased variance of x (N, C, *) over all other dims, kept as (1, C, 1, ...)."""
    axes = (0,) + tuple(range(2, x.ndim))
    mean = ms.ops.mean(x, axes, keep_dims=True)
    return mean, ms.ops.mean(ms.ops.square(x - mean), axes, keep_dims=True)


def _update_running_stats(self, x, factor):
    """running = (1 - factor) * running + factor * batch statistic, the batch variance unbiased (n / (n - 1)), as
    ATen's ``batch_norm_cpu_update_stats_template``; no gradient flows into the statistics."""
    n = 1
    for d in (x.shape[0],) + tuple(x.shape[2:]):
        n = n * d
    mean, var = _batch_stats(ms.ops.stop_gradient(x).astype(self.running_mean.dtype))
    dtype = self.running_mean.dtype
    var = var.reshape((-1,)) * _scalar(n / max(n - 1, 1), dtype)
    keep = _scalar(1.0, dtype) - factor
    ms.ops.assign(self.running_mean, keep * self.running_mean + factor * mean.reshape((-1,)))
    ms.ops.assign(self.running_var, keep * self.running_var + factor * var)


def _batch_norm_float64(self, x, weight, bias):
    """PyTorch's batch norm written out for float64 input (same modes as the primitive path)."""
    stat_shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if _bn_uses_batch_stats(self):
        mean, var = _batch_stats(x)
        if self.training and self.track_running_stats and self.running_mean is not None:
            if self.momentum is None:
                factor = 1.0 / ms.ops.cast(self.num_batches_tracked, self.running_mean.dtype)
            else:
                factor = _scalar(float(self.momentum), self.running_mean.dtype)
            _update_running_stats(self, x, factor)
    else:
        mean = self.running_mean.reshape(stat_shape).astype(x.dtype)
        var = self.running_var.reshape(stat_shape).astype(x.dtype)
    out = (x - mean) / ms.ops.sqrt(var + _scalar(float(self.eps), x.dtype))
    return out * weight.reshape(stat_shape).astype(x.dtype) + bias.reshape(stat_shape).astype(x.dtype)


# -- InstanceNorm ------------------------------------------------------------------------------------------------------
def _instance_norm(x, running_mean, running_var, weight, bias, use_input_stats, momentum, eps):
    """PyTorch's ``F.instance_norm`` on a MindSpore tensor x (N, C, *spatial), graph code. Normalizes each (n, c)
    slice by its own mean and biased variance (``use_input_stats``) or by the running statistics; with
    ``use_input_stats`` and running statistics given (Parameters), moves them in place by the batch mean of the
    per-instance mean and unbiased variance, weighted ``momentum``. Returns (N, C, *spatial)."""
    ndim = x.ndim
    axes = tuple(range(2, ndim))
    stat_shape = (1, x.shape[1]) + (1,) * (ndim - 2)
    if use_input_stats:
        mean = ms.ops.mean(x, axes, keep_dims=True)
        centered = x - mean
        var = ms.ops.mean(ms.ops.square(centered), axes, keep_dims=True)
        out = centered / ms.ops.sqrt(var + _scalar(eps, x.dtype))
        if running_mean is not None and momentum != 0.0:
            n = 1
            for a in axes:
                n = n * x.shape[a]
            mean_s = ms.ops.stop_gradient(mean).astype(running_mean.dtype)
            var_s = ms.ops.stop_gradient(var).astype(running_var.dtype) * _scalar(n / max(n - 1, 1),
                                                                                  running_var.dtype)
            m = _scalar(momentum, running_mean.dtype)
            keep = _scalar(1.0 - momentum, running_mean.dtype)
            ms.ops.assign(running_mean, keep * running_mean + m * ms.ops.mean(mean_s.reshape(x.shape[:2]), 0))
            ms.ops.assign(running_var, keep * running_var + m * ms.ops.mean(var_s.reshape(x.shape[:2]), 0))
    else:
        out = (x - running_mean.reshape(stat_shape).astype(x.dtype)) \
            / ms.ops.sqrt(running_var.reshape(stat_shape).astype(x.dtype) + _scalar(eps, x.dtype))
    if weight is not None:
        out = out * weight.reshape(stat_shape)
    if bias is not None:
        out = out + bias.reshape(stat_shape)
    return out


def _instance_norm_forward(self, input):  # noqa: A002; graph code
    """``_InstanceNorm.forward`` (PyTorch 2.13, ``torch/nn/modules/instancenorm.py``): unbatched input gets a batch
    dimension for the computation. Raises ValueError for a wrong rank, or (affine) a channel count other than
    ``num_features``; warns for that with affine=False, as PyTorch."""
    self._check_input_dim(input)
    x = cast_to_ms_tensor(input)
    feature_dim = x.ndim - self._get_no_batch_dim()
    if x.shape[feature_dim] != self.num_features:
        if self.affine:
            raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                             f"({self.num_features}), but got: {x.shape[feature_dim]}.")
        warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                      "warning by not passing in num_features, which is not used because affine=False", stacklevel=2)
    unbatched = x.ndim == self._get_no_batch_dim()
    if unbatched:
        x = x.expand_dims(0)
    momentum = 0.0 if self.momentum is None else float(self.momentum)
    out = _instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                         self.training or not self.track_running_stats, momentum, float(self.eps))
    if unbatched:
        out = out.squeeze(0)
    return cast_to_adapter_tensor(out)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,  # noqa: A002
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """PyTorch's ``torch.nn.functional.instance_norm`` (see :func:`_instance_norm`). Input (N, C, *spatial).
    Raises RuntimeError without running statistics when ``use_input_stats`` is False, as PyTorch."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    out = _instance_norm(cast_to_ms_tensor(input), running_mean, running_var, weight, bias, use_input_stats,
                         float(momentum), float(eps))
    return cast_to_adapter_tensor(out)


# -- LayerNorm / GroupNorm / RMSNorm -------------------------------------------------------------------------------------
def _layer_norm_forward(self, input):  # noqa: A002; graph code
    """``LayerNorm.forward``: MindSpore's ``LayerNorm`` primitive over the last ``len(normalized_shape)`` dims, with
    constant ones / zeros for a missing weight / bias. Output the input's shape and dtype."""
    x = cast_to_ms_tensor(input)
    begin = x.ndim - len(self.normalized_shape)
    if x.dtype == ms.float64:  # the primitive's epsilon is a float32 attribute: written out in float64
        axes = tuple(range(begin, x.ndim))
        mean = ms.ops.mean(x, axes, keep_dims=True)
        centered = x - mean
        out = centered / ms.ops.sqrt(ms.ops.mean(ms.ops.square(centered), axes, keep_dims=True)
                                     + _scalar(float(self.eps), x.dtype))
        if self.weight is not None:
            out = out * self.weight
        if self.bias is not None:
            out = out + self.bias
        return cast_to_adapter_tensor(out)
    layer_norm = cache_prim(ms.ops.LayerNorm)(begin_norm_axis=begin, begin_params_axis=begin,
                                                   epsilon=float(self.eps))
    weight = self.weight
    if weight is None:
        weight = ms.ops.ones(self.normalized_shape, x.dtype)
    bias = self.bias
    if bias is None:
        bias = ms.ops.zeros(self.normalized_shape, weight.dtype)
    return cast_to_adapter_tensor(layer_norm(x, weight, bias)[0])


def _group_norm_forward(self, input):  # noqa: A002; graph code
    """``GroupNorm.forward``: :func:`group_norm`."""
    return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002 (PyTorch's names); graph code
    """PyTorch's ``F.group_norm``: x (N, C, *) split into ``num_groups`` groups of channels, each (n, group)
    normalized by its mean and biased variance, then ``* weight + bias`` per channel where given. Statistics in
    float32 for float16/bfloat16/float32 input (as MindTorch's), in float64 for float64 input (MindTorch computed
    float64 in float32). Output the input's shape and dtype."""
    x = cast_to_ms_tensor(input)
    shape = x.shape
    compute = ms.float64 if x.dtype == ms.float64 else ms.float32
    xg = x.astype(compute).reshape((shape[0], num_groups, -1))
    mean = ms.ops.mean(xg, 2, keep_dims=True)
    centered = xg - mean
    var = ms.ops.mean(ms.ops.square(centered), 2, keep_dims=True)
    out = (centered / ms.ops.sqrt(var + _scalar(float(eps), compute))).reshape(shape).astype(x.dtype)
    stat_shape = (1, shape[1]) + (1,) * (len(shape) - 2)
    if weight is not None:
        out = out * cast_to_ms_tensor(weight).reshape(stat_shape)
    if bias is not None:
        out = out + cast_to_ms_tensor(bias).reshape(stat_shape)
    return cast_to_adapter_tensor(out)


def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002 (PyTorch's names)
    """PyTorch's ``torch.nn.functional.rms_norm`` / ``torch.rms_norm`` (decomposition ``_fused_rms_norm``,
    ``torch/_decomp/decompositions.py``): ``x * rsqrt(mean(x**2 over the last len(normalized_shape) dims) + eps)``,
    times ``weight`` if given, computed in float32 for float16/bfloat16 input and cast back to the input dtype.
    ``eps=None``: float32's machine epsilon (1.1920929e-07), float64's for float64 input.
    Raises RuntimeError when the input's trailing shape is not ``normalized_shape`` (PyTorch's message)."""
    x = cast_to_ms_tensor(input)
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(x.shape[x.ndim - k:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(str(d) for d in normalized_shape)}], but got input of size{list(x.shape)}")
    compute = ms.float64 if x.dtype == ms.float64 else ms.float32
    if eps is None:
        eps = _EPS_F64 if x.dtype == ms.float64 else _EPS_F32
    xf = x.astype(compute)
    axes = tuple(range(x.ndim - k, x.ndim))
    out = xf * ms.ops.rsqrt(ms.ops.mean(ms.ops.square(xf), axes, keep_dims=True) + _scalar(float(eps), compute))
    if weight is not None:
        out = out * cast_to_ms_tensor(weight).astype(compute)
    return cast_to_adapter_tensor(out.astype(x.dtype))


def _build_rms_norm(Module, Parameter, init, empty):
    class RMSNorm(Module):
        """PyTorch 2.13's ``nn.RMSNorm(normalized_shape, eps=None, elementwise_affine=True, device=None,
        dtype=None)`` (``torch/nn/modules/normalization.py``): ``weight`` (normalized_shape, ones) or ``None``;
        forward :func:`rms_norm`."""

        def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
            super().__init__()
            if isinstance(normalized_shape, numbers.Integral):
                normalized_shape = (normalized_shape,)
            self.normalized_shape = tuple(normalized_shape)
            self.eps = eps
            self.elementwise_affine = elementwise_affine
            if self.elementwise_affine:
                self.weight = Parameter(empty(self.normalized_shape, dtype=dtype))
            else:
                _no_param(self, "weight")
            self.reset_parameters()

        def reset_parameters(self):
            if self.elementwise_affine:
                init.ones_(self.weight)

        def forward(self, x):
            return rms_norm(x, self.normalized_shape, self.weight, self.eps)

        def extra_repr(self):
            return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)

    return RMSNorm


# -- construction (PyTorch 2.13's __init__s) ---------------------------------------------------------------------------
# MindTorch's classes and functions the functions below use; set by apply() once MindTorch is imported
_Module = _Parameter = _init = _empty = _torch = None
_original_named_members = None  # Module._named_members before this patch (get_original)
_RMSNorm = None  # nn.RMSNorm, built once by apply() (a second class would break isinstance checks)
_bn_attributes = None  # (_adapter_bn_primitive, _adapter_bn_plain, _adapter_bn_fast) of _BatchNorm, made by apply()


def _stat(values, dtype=None, name=None):
    return _Parameter(ms.Tensor(values, dtype or ms.float32), requires_grad=False, name=name)


def _register_counter(module):
    """``num_batches_tracked``: an int64 Parameter (``assign_add`` updates it in a compiled step too), held like
    MindTorch's running_mean/var, in ``_params`` as well as ``_buffers``: MindSpore names ``_params`` entries by
    their path as modules are nested, and a graph refuses two Parameters of one name (only in ``_buffers``, two
    ResNet blocks' counters were both ``0.bn1.num_batches_tracked``: the step did not compile). It is kept out
    of ``parameters()`` by the :func:`_named_members` filter, as MindTorch keeps running_mean/var out."""
    counter = _stat(0, ms.int64, "num_batches_tracked")
    _Module.__setattr__(module, "num_batches_tracked", counter)
    module.register_buffer("num_batches_tracked", counter)


# _NormBase ------------------------------------------------------------------------------------------------------
def norm_init(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
              dtype=None, *, bias=True):
    """PyTorch 2.13's ``_NormBase.__init__``: weight/bias only when affine (bias also only when ``bias``),
    running_mean/running_var/num_batches_tracked only when tracking; the others registered as None."""
    _Module.__init__(self)
    self._is_adapter_norm = True  # MindTorch's Module: running_mean/var are Parameters kept out of parameters()
    self.num_features = num_features
    self.eps = eps
    self.momentum = momentum
    self.affine = affine
    self.track_running_stats = track_running_stats
    if self.affine:
        self.weight = _Parameter(_empty(num_features, dtype=dtype))
        if bias:
            self.bias = _Parameter(_empty(num_features, dtype=dtype))
        else:
            _no_param(self, "bias")
    else:
        _no_param(self, "weight")
        _no_param(self, "bias")
    if self.track_running_stats:
        import numpy as np
        # Parameters: MindSpore's BatchNorm updates them in place, also in graph mode (as MindTorch).
        self.running_mean = _stat(np.zeros(num_features, np.float32))
        self.register_buffer("running_mean", self.running_mean)
        self.running_var = _stat(np.ones(num_features, np.float32))
        self.register_buffer("running_var", self.running_var)
        _register_counter(self)
    else:
        self.register_buffer("running_mean", None)
        self.register_buffer("running_var", None)
        self.register_buffer("num_batches_tracked", None)
    self.reset_parameters()


def reset_running_stats(self):
    if self.track_running_stats:
        _init.zeros_(self.running_mean)
        _init.ones_(self.running_var)
        _init.zeros_(self.num_batches_tracked)


def reset_parameters(self):
    self.reset_running_stats()
    if self.affine:
        _init.ones_(self.weight)
        if self.bias is not None:
            _init.zeros_(self.bias)


def norm_extra_repr(self):
    return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={use_bias}, "
            "track_running_stats={track_running_stats}".format(**self.__dict__, use_bias=self.bias is not None))


def norm_load(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
    """PyTorch's ``_NormBase._load_from_state_dict``: a checkpoint from before version 2 (no
    ``num_batches_tracked``) loads with the current count (0 for a fresh layer)."""
    version = local_metadata.get("version", None)
    if (version is None or version < 2) and self.track_running_stats:
        key = prefix + "num_batches_tracked"
        if key not in state_dict:
            state_dict[key] = _torch.tensor(0, dtype=_torch.long) if self.num_batches_tracked is None \
                else self.num_batches_tracked.detach().clone()
    _Module._load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                                  unexpected_keys, error_msgs)


def instance_load(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
    """PyTorch's ``_InstanceNorm._load_from_state_dict``: running statistics in a pre-0.4 checkpoint for a layer
    that does not track them are an error with PyTorch's explanation."""
    version = local_metadata.get("version", None)
    if version is None and not self.track_running_stats:
        keys = [prefix + n for n in ("running_mean", "running_var") if prefix + n in state_dict]
        if keys:
            klass = self.__class__.__name__
            error_msgs.append(
                "Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. If "
                "state_dict is a checkpoint saved before 0.4.0, this may be expected because {klass} does not "
                "track running stats by default since 0.4.0. Please remove these keys from state_dict. If the "
                "running stats are actually needed, instead set track_running_stats=True in {klass} to enable "
                "them. See the documentation of {klass} for details.".format(
                    names=" and ".join(f'"{k}"' for k in keys), klass=klass))
            for key in keys:
                state_dict.pop(key)
    norm_load(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)


def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True, *, from_param=False):
    """MindTorch's ``Module._named_members``, with the norm layers' ``num_batches_tracked`` also left out of
    ``named_parameters()`` (MindTorch leaves out running_mean/running_var, Parameters for the same reason)."""
    if from_param:
        members = get_members_fn

        def get_members_fn(module):
            if not hasattr(module, "_is_adapter_norm"):
                return members(module)
            return [(k, v) for k, v in members(module) if k != "num_batches_tracked"]
    return _original_named_members(self, get_members_fn, prefix, recurse, remove_duplicate, from_param=from_param)


def batch_init(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
               dtype=None, *, bias=True):
    norm_init(self, num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)


def instance_init(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                  device=None, dtype=None, *, bias=True):
    norm_init(self, num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)


# Lazy variants: PyTorch's _LazyNormBase (weight/bias/statistics uninitialized only where the flags ask).
def lazy_init(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
              bias=True):
    from mindtorch.torch.nn.parameter import UninitializedParameter
    from adapter import backend
    # through LazyModuleMixin.__init__ (its forward pre-hook infers num_features) to _BatchNorm/_InstanceNorm
    super(backend.internal("LazyNormBase"), self).__init__(0, eps, momentum, False, False, device, dtype, bias=False)
    self.affine = affine
    self.track_running_stats = track_running_stats
    if self.affine:
        self.weight = UninitializedParameter()
        if bias:
            self.bias = UninitializedParameter()
    if self.track_running_stats:
        self.running_mean = UninitializedParameter(requires_grad=False)
        self.register_buffer("running_mean", self.running_mean)
        self.running_var = UninitializedParameter(requires_grad=False)
        self.register_buffer("running_var", self.running_var)
        _register_counter(self)


def lazy_initialize(self, input):  # noqa: A002
    if self.has_uninitialized_params():
        self.num_features = input.shape[1]
        if self.affine:
            self.weight.materialize((self.num_features,))
            if self.bias is not None:
                self.bias.materialize((self.num_features,))
        if self.track_running_stats:
            self.running_mean.materialize((self.num_features,))
            self.running_var.materialize((self.num_features,))
        self.reset_parameters()


# LayerNorm / GroupNorm ---------------------------------------------------------------------------------------------
def layer_norm_init(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None,
                    dtype=None):
    """PyTorch 2.13's ``LayerNorm.__init__`` (same positional order: ``bias`` before ``device``)."""
    _Module.__init__(self)
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    self.normalized_shape = tuple(normalized_shape)
    self.eps = eps
    self.elementwise_affine = elementwise_affine
    if self.elementwise_affine:
        self.weight = _Parameter(_empty(self.normalized_shape, dtype=dtype))
        if bias:
            self.bias = _Parameter(_empty(self.normalized_shape, dtype=dtype))
        else:
            _no_param(self, "bias")
    else:
        _no_param(self, "weight")
        _no_param(self, "bias")
    self.reset_parameters()


def _affine_reset(self, affine):
    if affine:
        _init.ones_(self.weight)
        if self.bias is not None:
            _init.zeros_(self.bias)


def layer_norm_reset_parameters(self):
    _affine_reset(self, self.elementwise_affine)


def layer_norm_extra_repr(self):
    return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, bias={use_bias}".format(
        **self.__dict__, use_bias=self.bias is not None)


def group_norm_init(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *,
                    bias=True):
    """PyTorch 2.13's ``GroupNorm.__init__``. Raises ValueError if num_channels % num_groups != 0."""
    _Module.__init__(self)
    if num_channels % num_groups != 0:
        raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
    self.num_groups = num_groups
    self.num_channels = num_channels
    self.eps = eps
    self.affine = affine
    if self.affine:
        self.weight = _Parameter(_empty(num_channels, dtype=dtype))
        if bias:
            self.bias = _Parameter(_empty(num_channels, dtype=dtype))
        else:
            _no_param(self, "bias")
    else:
        _no_param(self, "weight")
        _no_param(self, "bias")
    self.reset_parameters()


def group_norm_reset_parameters(self):
    _affine_reset(self, self.affine)


def group_norm_extra_repr(self):
    return "{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}".format(
        **self.__dict__, use_bias=self.bias is not None)


def apply() -> None:
    global ms, P, cache_prim, cast_to_ms_tensor, cast_to_adapter_tensor, _verify_batch_size, _to_ms, _to_adapter
    global _bn_fast_ok
    global _Module, _Parameter, _init, _empty, _torch, _original_named_members, _RMSNorm, _bn_attributes
    import mindspore
    import mindspore.ops as ops_mod
    from adapter import backend
    import mindtorch.torch as torch_mod
    import mindtorch.torch.nn as nn
    import mindtorch.torch.nn.functional as F
    import mindtorch.torch.nn.modules as modules
    from mindtorch.torch.nn import init
    from mindtorch.torch.nn.modules import batchnorm as bn_mod, instancenorm as in_mod, normalization as norm_mod
    from mindtorch.torch.nn.modules.module import Module
    from mindtorch.torch.nn.parameter import Parameter
    from mindtorch.torch.functional import empty
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter, cast_to_ms_tensor as to_ms
    from adapter.graph_lean import PythonAttribute

    ms, P, cache_prim, cast_to_ms_tensor, cast_to_adapter_tensor = \
        mindspore, ops_mod, backend.primitive_cache(), to_ms, to_adapter  # MindSpore's _get_cache_prim: graph code
    inner_ops = backend.internal("inner_ops")
    _to_ms, _to_adapter = inner_ops.convert_to_ms_tensor, inner_ops.convert_to_adapter_tensor
    _verify_batch_size = mindspore.ops.primitive.constexpr(_verify_batch_size_python)
    _bn_fast_ok = mindspore.ops.primitive.constexpr(_bn_fast_ok_python)
    _Module, _Parameter, _init, _empty, _torch = Module, Parameter, init, empty, torch_mod

    _original_named_members = get_original(Module, "_named_members")
    patch_attr(Module, "_named_members", _named_members)

    NormBase, BatchNorm, LazyNormBase, InstanceNorm = (
        backend.internal(key) for key in ("NormBase", "BatchNorm", "LazyNormBase", "InstanceNorm"))
    patch_attr(NormBase, "__init__", norm_init)
    patch_attr(NormBase, "reset_running_stats", reset_running_stats)
    patch_attr(NormBase, "reset_parameters", reset_parameters)
    patch_attr(NormBase, "extra_repr", norm_extra_repr)
    patch_attr(NormBase, "_load_from_state_dict", norm_load)
    # PyTorch's: version 2 added num_batches_tracked (saved in state_dict()._metadata)
    patch_attr(NormBase, "_version", 2)

    patch_attr(BatchNorm, "__init__", batch_init)
    patch_attr(BatchNorm, "forward", _batch_norm_forward)
    if _bn_attributes is None:
        _bn_attributes = (PythonAttribute(_bn_primitive), PythonAttribute(_bn_plain), PythonAttribute(_bn_fast))
        # MindTorch's own rank checks (len(input.shape) in these), read before any patch could replace them
        _bn_fast_ranks.update({backend.internal("BatchNorm1d.check_input_dim"): (2, 3),
                               backend.internal("BatchNorm2d.check_input_dim"): (4,)})
    patch_attr(BatchNorm, hooks.attr("bn_primitive"), _bn_attributes[0])
    patch_attr(BatchNorm, "_adapter_bn_plain", _bn_attributes[1])
    patch_attr(BatchNorm, "_adapter_bn_fast", _bn_attributes[2])
    for attr, value in (("__init__", batch_init), ("forward", _batch_norm_forward)):
        if attr in bn_mod.BatchNorm3d.__dict__:
            # the _BatchNorm function (what BatchNorm3d would inherit without its own: 5-D handled there)
            patch_attr(bn_mod.BatchNorm3d, attr, value)

    patch_attr(InstanceNorm, "__init__", instance_init)
    patch_attr(InstanceNorm, "forward", _instance_norm_forward)
    patch_attr(InstanceNorm, "_load_from_state_dict", instance_load)
    for cls, ranks in ((in_mod.InstanceNorm1d, (2, 3)), (in_mod.InstanceNorm2d, (3, 4)),
                       (in_mod.InstanceNorm3d, (4, 5))):
        patch_attr(cls, "_check_input_dim", _rank_check(ranks))  # PyTorch's takes the input (MindTorch's: ndim)

    patch_attr(LazyNormBase, "__init__", lazy_init)
    patch_attr(LazyNormBase, "initialize_parameters", lazy_initialize)

    patch_attr(norm_mod.LayerNorm, "__init__", layer_norm_init)
    patch_attr(norm_mod.LayerNorm, "reset_parameters", layer_norm_reset_parameters)
    patch_attr(norm_mod.LayerNorm, "forward", _layer_norm_forward)
    patch_attr(norm_mod.LayerNorm, "extra_repr", layer_norm_extra_repr)
    patch_attr(norm_mod.GroupNorm, "__init__", group_norm_init)
    patch_attr(norm_mod.GroupNorm, "reset_parameters", group_norm_reset_parameters)
    patch_attr(norm_mod.GroupNorm, "forward", _group_norm_forward)
    patch_attr(norm_mod.GroupNorm, "extra_repr", group_norm_extra_repr)

    # RMSNorm and the functionals
    if _RMSNorm is None:
        _RMSNorm = _build_rms_norm(Module, Parameter, init, empty)
        _RMSNorm.__module__ = norm_mod.__name__
    for target in (nn, modules, norm_mod):
        patch_attr(target, "RMSNorm", _RMSNorm)
    patch_attr(F, "rms_norm", rms_norm)
    if get_original(torch_mod, "rms_norm", None) is None:
        patch_attr(torch_mod, "rms_norm", rms_norm)
    patch_attr(F, "instance_norm", instance_norm)
    patch_attr(F, "group_norm", group_norm)


def _no_param(module, name: str) -> None:
    """PyTorch's ``register_parameter(name, None)``, as a plain attribute: MindSpore's ``Cell`` walks ``_params``
    and calls ``init_data`` on each value when it compiles the cell (``init_parameters_data``), so a None there fails
    ("'NoneType' object has no attribute 'init_data'"); MindTorch's ``Linear(bias=False)`` does the same."""
    object.__setattr__(module, name, None)


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
def _rank_check(ranks):
    def _check_input_dim(self, input):  # noqa: A002
        if input.ndim not in ranks:
            raise ValueError(f"expected {ranks[0]}D or {ranks[1]}D input (got {input.ndim}D input)")
    return _check_input_dim


PATCH = Patch("normalization", "LayerNorm/GroupNorm/BatchNorm/InstanceNorm with PyTorch's parameters, buffers and "
                               "state_dict keys (None when affine=False / not tracking, bias=False), momentum=None and "
                               "num_batches_tracked counting, InstanceNorm on CPU; nn.RMSNorm / F.rms_norm",
              "post-import", apply,
              replaces=tuple(f"torch.nn.modules.batchnorm._NormBase.{n}" for n in (
                  "__init__", "reset_running_stats", "reset_parameters", "extra_repr", "_load_from_state_dict",
                  "_version"))
              + tuple(f"torch.nn.modules.batchnorm._BatchNorm.{n}" for n in (
                  "__init__", "forward", "_adapter_bn_primitive", "_adapter_bn_plain", "_adapter_bn_fast"))
              + ("torch.nn.BatchNorm3d.__init__", "torch.nn.BatchNorm3d.forward")
              + tuple(f"torch.nn.modules.instancenorm._InstanceNorm.{n}" for n in (
                  "__init__", "forward", "_load_from_state_dict"))
              + ("torch.nn.InstanceNorm1d._check_input_dim", "torch.nn.InstanceNorm2d._check_input_dim",
                 "torch.nn.InstanceNorm3d._check_input_dim",
                 "torch.nn.modules.batchnorm._LazyNormBase.__init__",
                 "torch.nn.modules.batchnorm._LazyNormBase.initialize_parameters")
              + tuple(f"torch.nn.{cls}.{n}" for cls in ("LayerNorm", "GroupNorm") for n in (
                  "__init__", "reset_parameters", "forward", "extra_repr"))
              + ("torch.nn.Module._named_members", "torch.nn.RMSNorm", "torch.nn.modules.RMSNorm",
                 "torch.nn.modules.normalization.RMSNorm", "torch.nn.functional.rms_norm", "torch.rms_norm",
                 "torch.nn.functional.instance_norm", "torch.nn.functional.group_norm"))
