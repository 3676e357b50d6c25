"""Channel ("feature") dropout as PyTorch 2.13 defines it: ``F.dropout1d/2d/3d``, ``F.feature_dropout(_)``,
``torch.feature_dropout(_)`` and the modules ``nn.Dropout1d/2d/3d`` (which call them), for every input rank PyTorch
accepts, in PyNative and inside compiled graphs.

PyTorch (``torch/nn/functional.py`` and ATen ``Dropout.cpp``, ``_dropout_impl<feature_dropout=true>``):

* ``feature_dropout(x, p, train)``: ``x`` itself when ``p == 0``, ``not train`` or ``x.numel() == 0``; ``x * 0`` when
  ``p == 1`` (a NaN stays NaN); otherwise ``x * noise`` with ``noise = bernoulli(1 - p) / (1 - p)`` of shape
  ``(N, C, 1, ..., 1)`` = ``x.shape[:2]`` padded with ones: one draw per (sample, channel), shared by all the
  channel's elements. ``x.ndim < 2``: ``RuntimeError: Feature dropout requires at least 2 dimensions in the input``.
  A 2-D ``(N, C)`` input is therefore element-wise dropout.
* ``dropout2d``: warns (``UserWarning``) for a rank other than 3 or 4 ("which is deprecated ... please use dropout
  instead"), and for rank 3 that it is taken as ``(N, C, L)`` (channel-wise 1-D dropout); then ``feature_dropout``
  of the input as it is, any rank.
* ``dropout1d``: ``RuntimeError`` unless rank 2 or 3 (also in eval mode); rank 2 is one unbatched ``(C, L)`` sample
  (``unsqueeze(0)``, feature dropout, ``squeeze(0)``: one draw per row).
* ``dropout3d``: warns unless rank 4 or 5; any rank but 5 is one unbatched sample (one draw per entry of dim 0).
* ``p`` outside [0, 1]: ``ValueError: dropout probability has to be between 0 and 1, but got {p}``.
* ``inplace=True`` / ``feature_dropout_``: the product is written into ``x``, which is returned.

MindTorch 0.4.0 differs: ``dropout2d`` hands a 2-D input to MindSpore's ``Dropout2D`` (rank 4 only: pytorch/examples
``mnist_rnn`` applies ``nn.Dropout2d`` to an ``(N, 64)`` tensor and failed with "the rank of input must be equal to
4"), treats a 3-D input as one unbatched ``(C, H, W)`` sample (``expand_dims(0)``: whole samples dropped where
PyTorch drops (sample, channel) rows: a silent difference), rejects ranks above 5 in ``feature_dropout``, scales
float64 inputs by a float32 ``1/(1-p)``, skips the dimension checks in eval mode, and logs its warnings through its
own logger instead of ``warnings``.

Here the mask is drawn with MindSpore's ``Dropout`` kernel (the one behind ``nn.Dropout``; it works in GRAPH_MODE)
on ones of the mask's shape in float32; ``noise = keep / (1 - p)`` is computed in float64 for float64 inputs and in
float32 otherwise (PyTorch's opmath for float16/bfloat16), then cast to the input's dtype, and ``out = x * noise``,
so kept values are exactly PyTorch's ``x * (1/(1-p))``. The checks and warnings run in a ``constexpr`` (Python at
compile time inside a graph); warnings are ``UserWarning``\\ s with PyTorch's text, attributed to the user's line
that called the dropout (PyTorch attributes them to the caller of ``F.dropout2d``: for a module, its ``forward`` in
torch/nn/modules/dropout.py). In-place goes through MindTorch's ``_inplace_assign_pynative`` (functional in a
graph, see adapter/graph_semantics.py).

Replaces: ``torch.nn.functional.{dropout1d, dropout2d, dropout3d, feature_dropout, feature_dropout_}``
(and the same names exported to ``torch``: ``_export_func_to_root``; with MindTorch 0.4.0 ``torch.feature_dropout``
and ``torch.feature_dropout_``), adds ``torch.feature_dropout(_)`` where missing; ``torch.nn.Dropout.forward``
(``p=1``).
Not changed: ``dropout``, ``alpha_dropout``, ``feature_alpha_dropout`` (MindTorch's match PyTorch's formulas).
"""
from __future__ import annotations

import sys
import warnings

from . import Patch, get_original, patch_attr

# Graph code below reads these module globals (no imports inside compiled code); set by apply().
ms = cast_to_ms_tensor = _inner = None
_plan = None  # constexpr(_plan_python), set by apply()

_IDENTITY, _ZERO, _RANDOM = 0, 1, 2

_RANK_WARNING = {
    "dropout2d": ("dropout2d: Received a {ndim}-D input to dropout2d, which is deprecated and will result in an "
                  "error in a future release. To retain the behavior and silence this warning, please use dropout "
                  "instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial "
                  "dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).", (3, 4)),
    "dropout3d": ("dropout3d: Received a {ndim}-D input to dropout3d, which is deprecated and will result in an "
                  "error in a future release. To retain the behavior and silence this warning, please use dropout "
                  "instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial "
                  "dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).", (4, 5)),
}
_DROPOUT2D_3D = ("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
                 "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
                 "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
                 "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d "
                 "instead.")
_DROPOUT1D_RANK = ("dropout1d: Expected 2D or 3D input, but received a {ndim}D input. Note that dropout1d exists to "
                   "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an "
                   "optional batch dimension (i.e. 2D or 3D inputs).")


_issued = set()  # messages warned so far in this process


def _warn(message: str) -> None:
    """``warnings.warn(message, UserWarning)`` attributed to the innermost frame of user code (not ours, MindTorch's
    or MindSpore's), with that module's warning registry: Python's default filter shows it once per user line.
    While a graph compiles (the only time this runs there) the user's frame is the line that started the
    compilation, not the module's call: a message already given in PyNative (a compiled step's first call is
    eager) is not repeated then."""
    from adapter.userframe import user_file, user_frame
    from mindtorch.utils import graph_mode_condition
    if graph_mode_condition() and message in _issued:
        return
    _issued.add(message)
    frame = user_frame()
    if frame is None:
        warnings.warn(message, UserWarning, stacklevel=3)
        return
    g = frame.f_globals
    warnings.warn_explicit(message, UserWarning, user_file(frame.f_code.co_filename), frame.f_lineno,
                           module=g.get("__name__", "__main__"), registry=g.setdefault("__warningregistry__", {}),
                           module_globals=g)


def _plan_python(op_name, shape, dtype, p, training):
    """What ``op_name`` does to an input of ``shape``/``dtype``: ``(action, mask_shape)``, after PyTorch's checks and
    warnings (module docstring). A ``constexpr`` in graphs (all arguments are compile-time constants there).

    Raises:
        ValueError: ``p`` outside [0, 1].
        RuntimeError: ``dropout1d`` on a rank other than 2 or 3; feature dropout of a rank < 2 input;
            a non-floating input (PyTorch's "result type Float can't be cast to the desired output type Long").
    """
    p = float(p)
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    ndim = len(shape)
    batched = True
    if op_name == "dropout1d":
        if ndim not in (2, 3):
            raise RuntimeError(_DROPOUT1D_RANK.format(ndim=ndim))
        batched = ndim == 3
    elif op_name in _RANK_WARNING:
        message, ranks = _RANK_WARNING[op_name]
        if ndim not in ranks:
            _warn(message.format(ndim=ndim))
        if op_name == "dropout2d" and ndim == 3:
            _warn(_DROPOUT2D_3D)
        if op_name == "dropout3d":
            batched = ndim == 5
    numel = 1
    for s in shape:
        numel *= s
    if p == 0.0 or not training or numel == 0:
        return _IDENTITY, ()
    if p == 1.0:
        return _ZERO, ()
    view = tuple(shape) if batched else (1,) + tuple(shape)  # PyTorch's unsqueeze(0) of an unbatched input
    if len(view) < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not _is_floating(dtype):
        from .inplace import _torch_name
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_torch_name(dtype)}")
    mask = view[:2] + (1,) * (len(view) - 2)
    return _RANDOM, (mask if batched else mask[1:])


def _is_floating(dtype) -> bool:
    import mindspore
    return dtype in (mindspore.float16, mindspore.float32, mindspore.float64, mindspore.bfloat16)


def _feature_dropout_nd(input, p, training, inplace, op_name):  # noqa: A002 (PyTorch's name); graph code
    """The body shared by every function here: ``input * noise`` (module docstring). ``input`` is returned itself
    where PyTorch returns it (identity cases, and in place)."""
    action, mask_shape = _plan(op_name, input.shape, input.dtype, p, training)
    if action == _IDENTITY:
        return input
    x = cast_to_ms_tensor(input)
    if action == _ZERO:
        out = x * ms.ops.zeros((), x.dtype)
    else:
        keep = ms.ops.dropout(ms.ops.ones(mask_shape, ms.float32), p=float(p)) > 0
        opmath = ms.float64 if x.dtype == ms.float64 else ms.float32
        # a tensor divisor: a Python float would be taken as float32 for a float64 tensor
        noise = ms.ops.div(keep.astype(opmath), ms.Tensor(1.0 - float(p), opmath))
        out = x * noise.astype(x.dtype)
    return _inner._inplace_assign_pynative(input, inplace, out, op_name)


def dropout1d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """PyTorch's ``F.dropout1d``: input (N, C, L) or unbatched (C, L); one draw per (n, c) (per c unbatched)."""
    return _feature_dropout_nd(input, p, training, inplace, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """PyTorch's ``F.dropout2d``: feature dropout of the input as it is, one draw per ``input[n, c]``; warns for
    ranks other than 4 (module docstring)."""
    return _feature_dropout_nd(input, p, training, inplace, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """PyTorch's ``F.dropout3d``: input (N, C, D, H, W), or any other rank as one unbatched sample (one draw per
    entry of dim 0); warns for ranks other than 4 and 5."""
    return _feature_dropout_nd(input, p, training, inplace, "dropout3d")


def feature_dropout(input, p, train, inplace=False):  # noqa: A002
    """PyTorch's ``torch.feature_dropout(input, p, train)``: one draw per ``input[n, c]``, rank >= 2."""
    return _feature_dropout_nd(input, p, train, inplace, "feature_dropout")


def feature_dropout_(input, p, train):  # noqa: A002
    """PyTorch's ``torch.feature_dropout_``: :func:`feature_dropout` written into ``input``; returns ``input``."""
    return _feature_dropout_nd(input, p, train, True, "feature_dropout_")


_FUNCTIONS = {"dropout1d": dropout1d, "dropout2d": dropout2d, "dropout3d": dropout3d,
              "feature_dropout": feature_dropout, "feature_dropout_": feature_dropout_}


def dropout_forward(self, input):  # noqa: A002 (PyTorch's name)
    """``nn.Dropout`` with ``p=1`` in training: zeros (``x * 0``, written into ``x`` when ``inplace``), as
    PyTorch; MindTorch passed ``keep_prob=0`` to MindSpore's Dropout, which raised RuntimeError."""
    if self.training and self.p == 1.0:
        out = input * 0
        return input.copy_(out) if self.inplace else out
    return _original_dropout_forward(self, input)


_original_dropout_forward = None  # MindTorch's nn.Dropout.forward, bound by apply()
# MindTorch exports these F functions to torch (``_export_func_to_root``); the others of _FUNCTIONS are F's only.
_TORCH_EXPORTED = ("feature_dropout", "feature_dropout_")


def apply() -> None:
    global ms, cast_to_ms_tensor, _inner, _plan, _original_dropout_forward
    import mindspore
    import mindtorch.torch as torch
    from adapter import backend
    inner = backend.internal("common_inner")
    import mindtorch.torch.nn.functional as F
    from mindspore.ops.primitive import constexpr
    from mindtorch.torch.tensor import cast_to_ms_tensor as to_ms
    from mindtorch.torch.nn.modules.dropout import Dropout

    ms, cast_to_ms_tensor, _inner = mindspore, to_ms, inner
    if _plan is None:  # built once: graphs compiled with it stay valid
        _plan = constexpr(_plan_python)
    _original_dropout_forward = get_original(Dropout, "forward")
    dropout_forward.__name__ = dropout_forward.__qualname__ = "forward"
    patch_attr(Dropout, "forward", dropout_forward)
    for name, function in _FUNCTIONS.items():
        patch_attr(F, name, function)
        # torch.dropout2d etc. (MindTorch exports F's functions to torch: _export_func_to_root)
        if name.startswith("feature_dropout") or get_original(torch, name, None) is get_original(F, name, None):
            patch_attr(torch, name, function)


PATCH = Patch("dropout", "dropout1d/2d/3d, feature_dropout, nn.Dropout1d/2d/3d: PyTorch's mask shapes for every "
                         "rank (2-D Dropout2d = element-wise, 3-D = per (N, C)), scale, checks and warnings",
              "post-import", apply,
              replaces=("torch.nn.Dropout.forward",) + tuple(f"torch.nn.functional.{n}" for n in _FUNCTIONS)
              + tuple(f"torch.{n}" for n in _TORCH_EXPORTED))
