"""``torch.nn.modules.linear.NonDynamicallyQuantizableLinear``: PyTorch's ``Linear`` subclass for
``nn.MultiheadAttention.out_proj``, which MindTorch 0.4.0 lacks.

Scripts name it in ``torch.serialization.safe_globals([...])`` lists for loading a saved Transformer (pytorch/examples
word_language_model/main.py:257); under MindTorch that attribute lookup raised ``AttributeError`` after training.
PyTorch's class (``torch/nn/modules/linear.py``, 2.13) is ``Linear`` with the same constructor and nothing else;
here it is the same subclass of MindTorch's ``Linear``. MindTorch's ``MultiheadAttention.out_proj`` stays a plain
``Linear`` (same parameters, names and values; ``type(mha.out_proj)`` differs).

Replaces (adds): ``torch.nn.modules.linear.NonDynamicallyQuantizableLinear``.
"""
from __future__ import annotations

from . import Patch, get_original, patch_attr

_CLASS = None  # built once by apply()


def _make(linear_cls):
    class NonDynamicallyQuantizableLinear(linear_cls):
        """PyTorch's ``NonDynamicallyQuantizableLinear``: ``Linear(in_features, out_features, bias, device,
        dtype)``, nothing else."""

        def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
            super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)

    NonDynamicallyQuantizableLinear.__module__ = linear_cls.__module__
    return NonDynamicallyQuantizableLinear


def apply() -> None:
    global _CLASS
    from mindtorch.torch.nn.modules import linear
    if get_original(linear, "NonDynamicallyQuantizableLinear", None) is not None:
        return  # a MindTorch that has its own
    if _CLASS is None:
        _CLASS = _make(linear.Linear)
    patch_attr(linear, "NonDynamicallyQuantizableLinear", _CLASS)


PATCH = Patch("quantizable_linear", "torch.nn.modules.linear.NonDynamicallyQuantizableLinear exists (PyTorch's Linear "
              "subclass, named in safe_globals lists for saved Transformers)", "post-import", apply,
              replaces=("torch.nn.modules.linear.NonDynamicallyQuantizableLinear",))
