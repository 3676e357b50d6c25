"""``F.scaled_dot_product_attention`` returns a PyTorch-style tensor on every MindSpore, so ``.backward()`` works.

On mindspore 2.10 + mindtorch 0.4.0, MindTorch's ``scaled_dot_product_attention`` (``nn/functional.py``: softmax of
``q @ k^T * scale`` plus the causal / boolean / additive mask bias, ``ms.ops.dropout`` when ``dropout_p > 0``, then
``@ v``) hands back a plain ``mindspore.Tensor`` (measured: ``type(F.scaled_dot_product_attention(q, q, q))`` is
``mindspore.common.tensor.Tensor`` on 2.10; a ``StubTensor`` on 2.5-dev, see :func:`needed`). Every tensor method called on the
result then has MindSpore's meaning, not PyTorch's: ``loss = sdpa(...).pow(2).mean(); loss.backward()`` raised
``AttributeError: 'Tensor' object has no attribute 'backward'``, and ``y.transpose(1, 2)`` is MindSpore's
``transpose`` (a full permutation). A model whose attention output only goes into an ``nn.Linear`` (a GPT's
``c_proj``) was not hit: the Linear returns MindTorch's type again.

Here the result goes through MindTorch's ``cast_to_adapter_tensor`` (a type change of the same tensor: no copy, no
operator, so gradients and compiled graphs are unchanged). The values are MindTorch's: equal to real PyTorch 2.13's
within rel. 1e-5 for ``is_causal``, a boolean and a float ``attn_mask`` (tests/test_attention_pieces.py).

Replaces: ``torch.nn.functional.scaled_dot_product_attention`` (wraps MindTorch's), only where :func:`needed`.
"""
from __future__ import annotations

from . import Patch
from ._wrap_once import wrap_attr


def _wrap(original):
    from mindtorch.torch.tensor import cast_to_adapter_tensor

    def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                     scale=None):
        return cast_to_adapter_tensor(original(query, key, value, attn_mask, dropout_p, is_causal, scale))
    scaled_dot_product_attention.__doc__ = original.__doc__
    return scaled_dot_product_attention


def needed() -> bool:
    """Whether to wrap: on MindSpore without its own ``set_adapter_config`` (>= 2.7; ``adapter/graph_methods.needed``).
    Not on 2.5-dev: there the result is a ``StubTensor`` too, but casting it launches ``ConvertToMsTensor`` in the
    eager backward, which that build's CPU lacks (a crash where the GPT trainer's forward ran); left as it was."""
    from adapter import graph_methods
    return graph_methods.needed()


def apply() -> None:
    import mindtorch.torch.nn.functional as F
    if needed():
        wrap_attr(F, "scaled_dot_product_attention", "sdpa_result", _wrap)


PATCH = Patch("sdpa_result", "F.scaled_dot_product_attention returns MindTorch's tensor type (2.10 returned a plain "
                             "mindspore.Tensor: no .backward(), MindSpore's method meanings)",
              "post-import", apply, replaces=("torch.nn.functional.scaled_dot_product_attention",),
              optional=("torch.nn.functional.scaled_dot_product_attention",),
              after=("attention_eager",))  # wraps attention_eager's function (PyNative formula, graph: MindTorch's)
