"""``torch.nn.utils.fusion``: folding an eval-mode BatchNorm into the convolution or linear layer before it.

MindTorch 0.4.0 has no ``torch.nn.utils.fusion``; timm 1.0.31 imports ``fuse_conv_bn_eval`` from it at import
(``timm/models/efficientvim.py``), so ``import timm`` failed with ``ModuleNotFoundError:
KeyError('torch.nn.utils.fusion')``. This module gives PyTorch 2.13's four functions, written here from the closed
form of an eval BatchNorm, ``y = (x - mean) / sqrt(var + eps) * gamma + beta`` (Ioffe & Szegedy 2015, eq. in Alg. 1):
with ``s = gamma / sqrt(var + eps)`` (per output channel), the fused layer has weight ``W * s`` (``s`` along the
output-channel axis: dim 0, or dim 1 for a transposed convolution) and bias ``(b - mean) * s + beta`` (``b`` = 0 for a
layer without bias, ``gamma`` = 1 and ``beta`` = 0 for a BatchNorm without affine parameters). The results keep the
layer's dtypes and are new Parameters with the layer's ``requires_grad``.

Errors as PyTorch's: AssertionError for a layer or BatchNorm in training mode, a BatchNorm without running
statistics, or (linear) a BatchNorm whose feature count is neither the layer's ``out_features`` nor 1.

Replaces: adds the module ``torch.nn.utils.fusion`` (``fuse_conv_bn_eval``, ``fuse_conv_bn_weights``,
``fuse_linear_bn_eval``, ``fuse_linear_bn_weights``).
"""
from __future__ import annotations

import copy

from . import Patch, patch_attr


def _fold(weight, bias, mean, var, eps, gamma, beta, channel_dim):
    """(weight * s, (bias - mean) * s + beta) as Parameters; s = gamma / sqrt(var + eps) along ``channel_dim``."""
    import mindtorch.torch as torch
    bias_dtype = weight.dtype if bias is None else bias.dtype
    bias_grad = weight.requires_grad if bias is None else bias.requires_grad
    if bias is None:
        bias = torch.zeros_like(mean)
    if gamma is None:
        gamma = torch.ones_like(mean)
    if beta is None:
        beta = torch.zeros_like(mean)
    scale = gamma * torch.rsqrt(var + eps)
    shape = [1] * weight.dim()
    shape[channel_dim] = -1
    new_w = (weight * scale.reshape(shape)).to(dtype=weight.dtype)
    new_b = ((bias - mean) * scale + beta).to(dtype=bias_dtype)
    return torch.nn.Parameter(new_w, weight.requires_grad), torch.nn.Parameter(new_b, bias_grad)


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """Fused (weight, bias) Parameters of a convolution (weight ``(C_out, C_in/groups, *k)``, or ``(C_in, C_out, *k)``
    with ``transpose``) followed by an eval BatchNorm over ``C_out`` channels (module docstring)."""
    return _fold(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, 1 if transpose else 0)


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` (eval mode) with ``bn`` (eval mode) folded into its weight and bias. Raises
    AssertionError when either is in training mode or ``bn`` has no running statistics."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """Fused (weight, bias) Parameters of a linear layer (weight ``(out, in)``) followed by an eval BatchNorm over
    ``out`` features, or over 1 feature (broadcast, as PyTorch) (module docstring)."""
    return _fold(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, 0)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` (eval mode) with ``bn`` (eval mode) folded in. Raises AssertionError as
    :func:`fuse_conv_bn_eval`, and when ``bn.num_features`` is neither ``linear.out_features`` nor 1."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


_MODULE = None


def apply() -> None:
    global _MODULE
    import mindtorch.torch.nn.utils as utils
    from ._modules import new_module
    if _MODULE is None:
        _MODULE = new_module("mindtorch.torch.nn.utils.fusion", "torch.nn.utils.fusion (patches/nn_fusion.py)")
        for fn in (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights):
            setattr(_MODULE, fn.__name__, fn)
    patch_attr(utils, "fusion", _MODULE)


PATCH = Patch("nn_fusion", "torch.nn.utils.fusion (missing in MindTorch): eval BatchNorm folded into the conv/linear "
                           "layer before it", "post-import", apply, replaces=("torch.nn.utils.fusion",),
              effects=("sys.modules['mindtorch.torch.nn.utils.fusion'] (import torch.nn.utils.fusion)",))
