"""``torch.nn.utils.clip_grad_norm_`` / ``clip_grad_value_`` on ``param.grad``, as PyTorch computes them.

MindTorch 0.4.0's ``clip_grad_norm_`` writes the clipped grads back by position over *all* parameters although it
clipped only those with a grad (misaligned as soon as one grad is None), and ``clip_grad_value_`` requires a ``grads``
argument. Formulas from PyTorch ``torch/nn/utils/clip_grad.py`` (2.x): total norm = ``norm_type``-norm of the
per-parameter norms (max for ``inf``); ``clip_coef = max_norm / (total_norm + 1e-6)``, clamped to 1.0; every grad
is multiplied by ``clip_coef``.

Replaces: ``clip_grad_norm_``, ``clip_grad_value_`` and ``clip_grad_norm`` of ``torch.nn.utils`` and
``torch.nn.utils.clip_grad``.
"""
import math

from . import Patch, patch_attr


def _params_with_grad(parameters):
    from mindtorch.torch.tensor import Tensor
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the grads of ``parameters`` in place so their total ``norm_type``-norm is at most ``max_norm``.

    Returns:
        0-d float32 tensor: the total norm of the grads *before* clipping.
    Raises:
        RuntimeError: ``error_if_nonfinite`` and the total norm is nan/inf.
    """
    import mindtorch.torch as torch
    params = _params_with_grad(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not params:
        return torch.tensor(0.0)
    if norm_type == math.inf:
        norms = [p.grad.abs().max() for p in params]
        total_norm = norms[0] if len(norms) == 1 else torch.stack(norms).max()
    else:
        norms = torch.stack([torch.linalg.vector_norm(p.grad, norm_type) for p in params])
        total_norm = torch.linalg.vector_norm(norms, norm_type)
    if error_if_nonfinite and not bool(torch.isfinite(total_norm)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                           "so it cannot be clipped. To disable this error and scale the gradients by the "
                           "non-finite norm anyway, set `error_if_nonfinite=False`")
    clip_coef = torch.clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for p in params:
        p.grad = p.grad * clip_coef.astype(p.grad.dtype)
    return total_norm


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every grad of ``parameters`` in place to ``[-clip_value, clip_value]``. Returns None."""
    import mindtorch.torch as torch
    clip_value = float(clip_value)
    for p in _params_with_grad(parameters):
        p.grad = torch.clamp(p.grad, min=-clip_value, max=clip_value)


_MODULES = ("torch.nn.utils", "torch.nn.utils.clip_grad")
_NAMES = {"clip_grad_norm_": clip_grad_norm_, "clip_grad_value_": clip_grad_value_,
          "clip_grad_norm": clip_grad_norm_}  # clip_grad_norm: PyTorch's deprecated alias


def apply() -> None:
    import mindtorch.torch.nn.utils as utils
    import mindtorch.torch.nn.utils.clip_grad as clip_grad
    for module in (utils, clip_grad):
        for name, function in _NAMES.items():
            patch_attr(module, name, function)


PATCH = Patch("clip_grad", "clip_grad_norm_/clip_grad_value_ work on param.grad (PyTorch formulas)",
              "post-import", apply, replaces=tuple(f"{m}.{n}" for m in _MODULES for n in _NAMES))
