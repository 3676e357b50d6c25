"""``F.scaled_dot_product_attention`` in PyNative: an adapter tensor out, and a backward that runs on CPU.

MindTorch 0.4.0 decorates its ``scaled_dot_product_attention`` with ``@ms.jit``, so in PyNative it returns a raw
MindSpore tensor (a ``StubTensor``), not a ``torch.Tensor``: the ``cast_to_adapter_tensor`` inside is traced, not
run. The user's next call on it then is MindSpore's method, not torch's (measured 2026-11-29, a GPT block's
``y.transpose(1, 2).contiguous().view(B, T, C)``):

* mindspore-dev 2.5: ``Tensor.transpose(1, 2)`` is MindSpore's ``TransposeExt`` view, which has no CPU kernel for
  its backward: ``loss.backward()`` died with "Unsupported op [TransposeExt] on CPU" (the character-level GPT
  trainer of issue 31);
* 2.5: ``F.scaled_dot_product_attention(q, k, v).sum().backward()`` ran MindSpore's own ``backward`` and filled no
  ``.grad``, silently; on 2.10 it raised ``AttributeError: 'Tensor' object has no attribute 'backward'``.

Here, in PyNative, attention is computed with MindSpore's public ops in PyTorch's formula
(``torch/nn/functional.py`` ``scaled_dot_product_attention`` docstring, 2.13): ``softmax(q @ k^T * scale + bias)
@ v``, ``scale = 1 / sqrt(E)`` unless given, ``bias`` ``-inf`` above the diagonal for ``is_causal`` (lower-left
aligned, ``tril`` of an ``(L, S)`` mask) and where a bool ``attn_mask`` is False, or the float ``attn_mask`` added;
dropout with ``dropout_p`` on the attention weights (always, as PyTorch's functional does). Shapes: ``q`` (..., L, E),
``k`` (..., S, E), ``v`` (..., S, Ev) -> (..., L, Ev). ``is_causal`` together with ``attn_mask`` raises
RuntimeError as PyTorch does. Inside a compiled graph MindTorch's function runs unchanged.

Replaces: ``torch.nn.functional.scaled_dot_product_attention``.
"""
from __future__ import annotations

import math

from . import Patch, get_original, patch_attr

# bound by apply() (module globals: compiled graphs parse the function below, and take no imports inside it)
_original = ms = cast_to_adapter_tensor = cast_to_ms_tensor = graph_mode_condition = None


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """PyTorch's ``F.scaled_dot_product_attention`` (module docstring); MindTorch's inside compiled graphs."""
    if graph_mode_condition():
        return _original(query, key, value, attn_mask, dropout_p, is_causal, scale)
    if enable_gqa:
        raise NotImplementedError("scaled_dot_product_attention(enable_gqa=True) is not supported here; repeat the "
                                  "key/value heads with repeat_interleave before the call")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    q, k, v = cast_to_ms_tensor(query), cast_to_ms_tensor(key), cast_to_ms_tensor(value)
    length, source = q.shape[-2], k.shape[-2]
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    weight = ms.ops.matmul(q, ms.ops.swapaxes(k, -2, -1)) * factor
    if is_causal:
        keep = ms.ops.tril(ms.ops.ones((length, source), ms.bool_))
        weight = ms.ops.masked_fill(weight, ms.ops.logical_not(keep), float("-inf"))
    elif attn_mask is not None:
        mask = cast_to_ms_tensor(attn_mask)
        if mask.dtype == ms.bool_:
            weight = ms.ops.masked_fill(weight, ms.ops.logical_not(mask), float("-inf"))
        else:
            weight = weight + mask.astype(weight.dtype)
    weight = ms.ops.softmax(weight, -1)
    if dropout_p > 0.0:
        weight = ms.ops.dropout(weight, p=dropout_p)
    return cast_to_adapter_tensor(ms.ops.matmul(weight, v))


def apply() -> None:
    global _original, ms, cast_to_adapter_tensor, cast_to_ms_tensor, graph_mode_condition
    import mindspore
    import mindtorch.torch.nn.functional as F
    from mindtorch.torch.tensor import cast_to_adapter_tensor, cast_to_ms_tensor
    from mindtorch.utils import graph_mode_condition
    ms = mindspore
    _original = get_original(F, "scaled_dot_product_attention")
    patch_attr(F, "scaled_dot_product_attention", scaled_dot_product_attention)


PATCH = Patch("attention_eager", "F.scaled_dot_product_attention in PyNative: a torch.Tensor out (MindTorch's @ms.jit "
                                 "one returned a MindSpore tensor: TransposeExt backward crash on 2.5's CPU, no .grad)",
              "post-import", apply, replaces=("torch.nn.functional.scaled_dot_product_attention",))
