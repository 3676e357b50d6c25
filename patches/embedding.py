"""``F.embedding`` / ``nn.Embedding`` with ``padding_idx=0``: no gradient for the padding row, as in PyTorch.

PyTorch (``torch/nn/functional.py`` ``embedding``, ATen ``embedding_backward``): the rows of ``weight`` looked up at
``padding_idx`` get no gradient. MindTorch 0.4.0 (``mindtorch/torch/nn/functional.py``, ``embedding``) blocks that
gradient with ``if padding_idx:`` — false for ``padding_idx=0``, the usual value (``-num_embeddings`` normalizes to
0 too) — so the padding row trained like any other: a silent wrong gradient (conformance case
``nn.Embedding(10, 4, padding_idx=0)``, 4 of 40 weight-gradient values off).

Replaces ``torch.nn.functional.embedding`` (``nn.Embedding.forward`` calls it through the module) and
``torch.embedding`` (the same function) with MindTorch's code and ``padding_idx is not None``. Forward values are unchanged; ``max_norm`` and the ``norm_type != 2``
``max_norm`` also goes: see below.

``scale_grad_by_freq=True`` (PyTorch: each id's gradient divided by how often the id occurs in the mini-batch, ATen
``embedding_dense_backward``): MindTorch 0.4.0 ignored it (``unsupported_attr``), so a repeated id's row got the plain
sum, silently, on both stacks (``Embedding(10, 4, scale_grad_by_freq=True)`` over 10 ids with repeats: gradient squared
norm 21.35, PyTorch 4.19). The gradient is now scaled per occurrence by ``1 / count``; forward values unchanged.

``max_norm`` (PyTorch: ``embedding_renorm_`` under no_grad, in place: each looked-up row whose ``norm_type``-norm
exceeds ``max_norm`` is multiplied by ``max_norm / (norm + 1e-7)``, then a plain lookup): MindTorch applied
``nn.ClipByNorm(axis=1)`` to the whole weight, differentiably, and never wrote the weight: forward values 37 % off
(``max_norm=1.0``: output sum 8.93, PyTorch 6.40), gradient squared norm 1.97 (PyTorch 21.35), weight unchanged
(sum 1.18, PyTorch -1.09), and ``norm_type != 2`` raised NotImplementedError. Now PyTorch's renorm for any
``norm_type``, written into a ``Parameter`` weight with ``ops.assign``, and the lookup's gradient. In a compiled step
on mindspore-dev 2.5 that write stops the compile ("A leaf Variable that requires grad is being used in an in-place
operation"): the step runs eagerly, with PyTorch's values; 2.10 compiles it.
"""
from __future__ import annotations

from . import Patch, get_original, patch_attr


# Read by embedding() (graph code too: no imports inside it), bound by apply().
ms = cast_to_adapter_tensor = cast_to_ms_tensor = padding_index = None


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,  # noqa: A002 (PyTorch's names)
              scale_grad_by_freq=False, sparse=False):
    """``weight[input]``, shape ``input.shape + (embedding_dim,)``, ``weight``'s dtype; the ``padding_idx`` row gets no
    gradient; with ``scale_grad_by_freq`` each occurrence's gradient is divided by its id's count in ``input``
    (PyTorch's ``embedding_dense_backward``); with ``max_norm`` the looked-up rows of ``weight`` are renormed in place
    first (PyTorch's ``embedding_renorm_``). Raises ValueError for a ``padding_idx`` outside ``[-num_embeddings, num_embeddings)``."""
    input_ms = cast_to_ms_tensor(input)
    padding_idx = padding_index(weight.shape, padding_idx)
    flat = input_ms.reshape(-1)
    renormed = None
    if max_norm is not None:
        # PyTorch's embedding_renorm_ (no grad, in place): each row looked up whose norm_type-norm exceeds max_norm
        # is multiplied by max_norm / (norm + 1e-7); the lookup then reads the renormed rows.
        rows = ms.ops.stop_gradient(weight)
        if norm_type == 2:
            norms = ms.ops.sqrt((rows * rows).sum(1))
        else:
            norms = ms.ops.pow(ms.ops.pow(ms.ops.abs(rows), norm_type).sum(1), 1.0 / norm_type)
        seen = ms.ops.unsorted_segment_sum(ms.ops.ones(flat.shape, rows.dtype), flat, weight.shape[0]) > 0
        factor = ms.ops.where(ms.ops.logical_and(seen, norms > max_norm), max_norm / (norms + 1e-7),
                              ms.ops.ones_like(norms))
        renormed = rows * ms.ops.expand_dims(factor, 1)
        if isinstance(weight, ms.Parameter):
            ms.ops.assign(weight, renormed)
    if padding_idx is not None:
        update = ms.ops.stop_gradient(ms.ops.expand_dims(weight[padding_idx], 0))
        indices = ms.ops.fill(ms.int32, update.shape, padding_idx)
        weight = ms.ops.tensor_scatter_elements(weight, indices, update, axis=0)
    out = ms.ops.gather(weight, input_ms, axis=0)
    if renormed is not None:  # the renormed rows' values, the lookup's gradient (PyTorch's: the renorm has none)
        out = ms.ops.stop_gradient(ms.ops.gather(renormed, input_ms, axis=0)) + (out - ms.ops.stop_gradient(out))
    if scale_grad_by_freq:
        # Each occurrence's gradient times 1 / (its id's count in `input`): ATen's embedding_dense_backward (CPU)
        # scales `grad[i]` by `1.0 / counts[k]` before adding it to row k. Forward `held + 0`: the same values.
        counts = ms.ops.unsorted_segment_sum(ms.ops.ones(flat.shape, out.dtype), flat, weight.shape[0])
        inverse = ms.ops.expand_dims(ms.ops.gather(1.0 / counts, input_ms, 0), -1)
        held = ms.ops.stop_gradient(out)
        out = held + (out - held) * inverse
    return cast_to_adapter_tensor(out)


def apply() -> None:
    global ms, cast_to_adapter_tensor, cast_to_ms_tensor, padding_index
    import mindspore
    import mindtorch.torch as torch
    import mindtorch.torch.nn.functional as F
    from adapter import backend
    from mindtorch.torch.tensor import cast_to_adapter_tensor, cast_to_ms_tensor

    ms = mindspore
    padding_index = backend.internal("get_embedding_padding_idx")
    exported = get_original(torch, "embedding", None) is get_original(F, "embedding")
    patch_attr(F, "embedding", embedding)
    if exported:  # MindTorch exports F.embedding as torch.embedding
        patch_attr(torch, "embedding", embedding)


PATCH = Patch("embedding", "F.embedding / nn.Embedding(padding_idx=0): the padding row gets no gradient (MindTorch "
                           "tested `if padding_idx:`, false for 0); scale_grad_by_freq divides each id's gradient by "
                           "its count (MindTorch ignored it); max_norm renorms the looked-up rows in place (MindTorch clipped the "
                           "whole weight, differentiably)", "post-import", apply,
              replaces=("torch.nn.functional.embedding", "torch.embedding"))
