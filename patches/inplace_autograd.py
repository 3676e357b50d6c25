"""In-place writes during the eager bridge's recording keep the values the recorded backward needs.

Every MindTorch in-place operation ends in ``Tensor.assign_value(result)``: ``nn.LeakyReLU(inplace=True)``,
``F.hardtanh(x, inplace=True)``, ``F.leaky_relu_``, the ``_inplace_assign*`` helpers of all in-place activations,
and ``a += b`` / ``copy_`` (``patches/inplace.py``). A MindTorch tensor is a wrapper (MindSpore's ``StubTensor``)
around one C++ tensor, and ``assign_value`` overwrote that C++ tensor's data. With the synchronous PyNative
pipeline that ``run.py`` selects on the CPU (``app/launcher.py``), the C++ tensor an op received is the one
the open recording saves for the op's backward, so the write changed the saved input under it: the backward of
``LeakyReLU(0.2, inplace=True)`` after a convolution then read ``leaky(x)`` instead of ``x``. MindSpore's
``leaky_relu`` is ``maximum(0.2 * x, x)``; with ``x`` overwritten by ``0.2 * x`` the two arguments tie on the
negative side, and ``Maximum``'s gradient passes ``dy`` to both: ``1.2 * dy`` instead of ``0.2 * dy``. No error,
wrong gradients for every layer below. pytorch/examples' dcgan (D is conv -> LeakyReLU(inplace) x 4) got D's
step-1 gradients 2x PyTorch's norm (G's too, through D), and every eager step (``--mode pynative``, and the first,
eager, call of each compiled site) after them: D's mean loss over the last 8 iterations 0.44 where PyTorch gives
0.17-0.26 (issue 13). Measured the same way after a ``Conv2d`` (``tests/test_inplace_autograd.py``): in-place
``LeakyReLU``, ``ReLU6``, ``Hardtanh``, ``SiLU``, ``Hardswish``, ``Hardsigmoid``, ``Mish`` gave wrong input
gradients, module and functional forms alike; ``ReLU``, ``ELU``, ``Threshold`` happened to be right (their
backward reads the output or a mask that the write does not change). MindSpore's asynchronous pipeline was not
affected: there an op's output is a stub whose first use makes a new C++ tensor, so the write never reached the
saved one.

The fix does what that pipeline did and what PyTorch's in-place semantics need: while a recording is open
(``adapter/tape.py``), ``assign_value`` on a MindTorch tensor (not a ``Parameter``) makes the wrapper hold the
result's C++ tensor instead of writing into its own. The Python object the script holds shows the new values and,
for later ops, the new autograd history (as ``x = op(x)`` would); the C++ tensor the recording saved keeps the old
values. Outside a recording nothing is saved, and ``assign_value`` writes as before. Parameters are always written
in place (compiled graphs hold their storage; ``patches/parameter_methods.py``). Graph mode does not run this code:
compiled steps see MindTorch's in-place helpers as functional (``adapter/graph_semantics.py``).

The same applies while MindSpore itself records for a gradient in PyNative (``mindspore.grad`` /
``value_and_grad`` of a function calling the model: ``_pynative_executor.grad_flag()``), as the conformance harness
differentiates its cases (``app/tools/conformance/replay.py``): torchvision's MobileNetV3 (``Hardswish(inplace=True)``)
and EfficientNet (``SiLU(inplace=True)``) got input gradients 12 % and 0.2 % off PyTorch's there before
(``app/tools/conformance/cases/vision.py``).

MindSpore >= 2.10 (``adapter/backend_compat.py``, shim 5): a MindTorch tensor *is* its C++ tensor, and cannot take
another's. MindSpore's own in-place autograd is right there only for ``Tensor.copy_`` into a tensor that is not a view
(measured on the CPU, 2026-11-26: ``copy_`` into a view -- every MindTorch ``nn.Linear`` output is one -- gave zero or
wrong gradients, MindSpore's ``add_`` wrong ones even on a non-view: ``adapter/backend_compat.py`` section 13); the
former write (``copy_`` always) gave ``y = lin(x); y += 1`` a weight gradient of zeros, and in-place activations
whose backward reads their input raised "modified by an inplace operation" at ``backward()`` (dcgan stopped there).
So a write into a tensor with autograd history during a recording does what 2.5's wrapper did, as far as 2.10 allows:

- not a view (its last op is no view op): ``self`` takes ``value``'s storage (``Tensor.set_``: not recorded, the
  storage a recorded backward saved keeps the old values) and is *rebound* to ``value``
  (``backend_compat.rebind_storage``): MindTorch's conversions of ``self`` (every MindTorch op's input, and
  ``cast_to_adapter_tensor``) give ``value``, which holds the new values and their history;
- a view (or no history): MindSpore's recorded ``copy_`` (the viewed tensor sees the values, as in PyTorch), and where
  MindSpore recorded it as a write through a view, ``self`` is rebound to ``value`` too.

Rebindings last until the recording ends (``adapter/tape.py`` clears them). What this cannot repair -- the tensor a
view was taken from used after a write through the view (MindSpore's ``CopySlice`` backward), or a rebound tensor read
by an op outside MindTorch's conversions (its own, old history) -- is found in the recorded graph before
differentiating and said at the user's ``backward()`` line (``adapter/tape.py`` UNRELIABLE_INPLACE).
Measured on 2.10 against PyTorch 2.13's recorded values: the 12 in-place idioms of ``tests/fixtures/inplace_idioms.py``
and the in-place activations after a Conv2d plus dcgan's discriminator (``tests/test_inplace_autograd.py``, 12 tests)
give PyTorch's gradients (before: 8 of the 9 Linear idioms wrong, the activations raised). A write during a recording
that ``set_`` and ``copy_`` cannot take (shape or dtype change, a non-contiguous view: 2.10's ``copy_`` into one does
not take effect on the CPU, ``v = x[:, :2]; v *= 0`` left ``v`` as it was) goes through ``assign_value`` and still
warns at the user's line (:data:`LOST_GRADIENT`). Outside a recording the write is ``copy_`` (2.10's
``assign_value`` refuses a tensor that was an input of a recorded graph: "Can not modify tensor id of input tensor
from network", ``w -= lr * w.grad`` on a leaf tensor); into a Parameter, ``assign_value``.

Known difference (as before, PyTorch-like in the common case): another MindTorch wrapper around the same C++ tensor
(MindTorch returns one for some no-op conversions), and on >= 2.10 a view taken of a non-view tensor before the write
into it, does not see a write made during a recording.

Writes through views (:func:`assign_value`): outside a recording, an in-place write into the result of basic
indexing (``x[:, 1].fill_(9)``, ``x[0].zero_()``, ``x[1] += 10``) is written into the indexed tensor by its
``__setitem__``, as PyTorch's view shares the tensor's storage (it was lost on 2.5-dev; 2.10 raised "InplaceCopy ...
mem_size" or lost it; ``tests/test_inplace_views.py``).

``Tensor.view(*shape)`` remembers its tensor, and an in-place write into the result is written into it reshaped
(``x.view(-1).mul_(2)``: lost on 2.5, where the view is a copy; ``x[1].view(3, 1)`` on 2.10). On >= 2.10 a write
outside a recording into another view of part of a storage (``a, b = x.chunk(2); a.add_(1)``: "InplaceCopy ...
mem_size", and ``b.add_(1)`` lost in ``b`` too) is MindSpore's ``assign_value`` (the view takes the value), with
:data:`VIEW_WRITE` at the user's line: ``x`` keeps its value.

Replaces: ``torch.Tensor.view`` (MindTorch's), ``torch.Tensor.assign_value`` (MindSpore's ``Tensor.assign_value``
inherited through ``StubTensor``). ``patches/inplace.py``'s alias tensors call it through ``super()``.
"""
from __future__ import annotations

from . import Patch, get_replaced, patch_attr

# set by apply() (module globals: assign_value runs for every in-place op)
ms = backend = backend_compat = _executor = tape = _original = warn_user = None
_original_view = graph_mode_condition = None
_rebinds = True  # adapter.backend_compat.wrapper_rebinds(): False on MindSpore >= 2.10


# MindSpore >= 2.10: a write during a recording that neither set_ nor copy_ can take (shape or dtype change, a
# non-contiguous view) goes through assign_value, which MindSpore does not differentiate: said at the user's line.
LOST_GRADIENT = ("in-place op on a tensor that needs a gradient: on this MindSpore (>= 2.10) the gradient through it "
                 "is lost (zeros) in an eager step (PyNative, or a compiled site's first, reference step), so this "
                 "step's update is wrong; use the out-of-place form (y = y + b, inplace=False)")


# MindSpore >= 2.10: an in-place write into a view of part of a storage that no index or view() call recorded
VIEW_WRITE = ("in-place write into a view of a tensor (chunk, split, unbind, narrow, select ...) does not reach the "
              "tensor on MindSpore >= 2.10 (the view alone takes the value): write into the tensor itself "
              "(x[a:b].add_(...), x[i] = ...)")


def _basic_index(index) -> bool:
    """An index PyTorch answers with a view: Python ``int`` (not bool), ``None``, ``...``, slices (any bounds)."""
    for c in (index if type(index) is tuple else (index,)):
        if not (c is None or c is Ellipsis or type(c) is slice or type(c) is int):
            return False
    return True


def _stepped(index) -> bool:
    """A slice with a step other than 1: patches/indexing.py answers it with a copy (``ops.strided_slice``)."""
    return any(type(c) is slice and c.step is not None and c.step != 1
               for c in (index if type(index) is tuple else (index,)))


def assign_value(self, value):
    """PyTorch's in-place write of ``value`` into ``self``; when ``self`` is the result of basic indexing
    (``x[0]``, ``x[:, 1]``, ``x[0:1]``, ``x[..., None]``: ints, slices, ``None``, ``...``; MindTorch's getitem keeps
    the indexed tensor in ``parent_tensor_`` and the index in ``index_of_parent_``) outside a recording, the value
    is written into the indexed tensor as ``x[index] = value``, as PyTorch's view shares ``x``'s storage.

    Before (measured 2026-12-06): ``x[:, 1].fill_(9)``, ``x[0:1].add_(1)``, ``x[1] += 10`` left ``x`` unchanged on
    2.5-dev; on 2.10 ``x[0].zero_()`` raised "For 'InplaceCopy ... mem_size: 24 ... 12" (``copy_`` into a
    contiguous view) and ``b = s[2:5]; b.add_(1)`` changed neither. MindSpore's ``__setitem__`` on the indexed
    tensor writes its storage in place, which the view shares on both stacks (the view shows the value too); a
    stepped slice is a copy (patches/indexing.py), written as well. A parameter's item is handled by
    patches/indexing.py, which keeps the ``Parameter`` itself as the parent (its ``__setitem__`` writes it in place).
    During a recording (the eager bridge's, or ``mindspore.grad``'s) the write is :func:`_assign`'s, unchanged."""
    base = self.__dict__.get("_adapter_view_base")
    if base is not None and isinstance(value, ms.Tensor) and tuple(value.shape) == tuple(self.shape) \
            and not (tape.is_recording() or _executor.grad_flag()):
        if value.dtype != self.dtype:
            value = value.astype(self.dtype)
        if _rebinds or not ms.Tensor.is_contiguous(base):
            _assign(self, value)  # a copy: 2.5's reshape, 2.10's of a non-contiguous tensor
        # 2.10's view shares base's storage: written through base (its own in-place write into a view at an
        # offset, x[1].view(3, 1), is lost on the CPU); base's assign_value writes its own base / parent, if any
        base.assign_value(value.reshape(base.shape))
        return self
    parent = self.parent_tensor_
    if parent is not None and isinstance(value, ms.Tensor) and not isinstance(self, ms.Parameter):
        index = self.index_of_parent_
        if _basic_index(index) and not (tape.is_recording() or _executor.grad_flag()) \
                and tuple(value.shape) == tuple(self.shape):
            if value.dtype != self.dtype:
                value = value.astype(self.dtype)
            if _stepped(index) or not _rebinds and not ms.Tensor.is_contiguous(self):
                _assign(self, value)  # a copy (stepped slice), or 2.10's non-contiguous view: copy_ works there
            parent[index] = value
            return self
    return _assign(self, value)


def view(self, *shape, dtype=None):
    """PyTorch's ``Tensor.view(*shape)``: the result remembers ``self`` (``_adapter_view_base``), so that an in-place
    write into it (``x.view(-1).mul_(2)``) is also written into ``self``, reshaped to ``self.shape``
    (:func:`assign_value`). It was lost on MindSpore 2.5, whose reshape is a copy (which does not show later writes
    into ``self``), and on 2.10 for a view of a tensor at a storage offset (``x[1].view(3, 1)``: 2.10's CPU in-place
    kernels do not write there). ``view(dtype)`` and compiled graphs: MindTorch's, unchanged. Raises as MindTorch's
    ``view``."""
    if graph_mode_condition():  # the graph compiler parses what follows: nothing but MindTorch's view there
        return _original_view(self, *shape, dtype=dtype)
    out = _original_view(self, *shape, dtype=dtype)
    if dtype is None and out is not self:
        out._adapter_view_base = self
    return out


def _assign(self, value):
    """PyTorch's in-place write of ``value`` (a tensor) into ``self`` (module docstring): during a recording
    (the eager bridge's, or MindSpore's own for ``mindspore.grad``), ``self`` takes ``value``'s C++ tensor (2.5) or
    storage and history (>= 2.10, where a non-view takes its storage and a view is written by ``copy_``, both rebound
    to ``value``); otherwise, or for a ``Parameter`` value (``self`` must not become the parameter's storage),
    MindSpore's ``assign_value`` (2.5) / ``copy_`` (>= 2.10). Returns ``self``."""
    if not _rebinds:  # MindSpore >= 2.10: write into self's storage (recorded while a recording is open)
        if isinstance(value, ms.Tensor) and not isinstance(self, ms.Parameter) and ms.Tensor.is_contiguous(self) \
                and tuple(value.shape) == tuple(self.shape) and value.dtype == self.dtype:
            if (tape.is_recording() or _executor.grad_flag()) \
                    and (backend.requires_grad_flag(self) or backend.requires_grad_flag(value)
                         or backend_compat.has_history(self) or backend_compat.has_history(value)):
                tape.note_inplace_write()
                if backend_compat.rebind_storage(self, value, tape.generation()):
                    return self
                if backend_compat.recorded_write(self, value):  # through a view: MindSpore's gradient is wrong
                    backend_compat.rebind(self, value, tape.generation())
                return self
            if ms.Tensor.storage_offset(self) or ms.Tensor.untyped_storage(self).nbytes() > self.nbytes:
                # a view of part of a storage whose tensor is not known here (chunk, split, unbind, narrow,
                # select): copy_ into it raised "InplaceCopy ... mem_size" (offset 0) or was lost, in the view too
                warn_user(VIEW_WRITE)
                return _original(self, value)  # self holds the value (its own storage from now on)
            ms.Tensor.copy_(self, value)
            return self
        if (tape.is_recording() or _executor.grad_flag()) and not isinstance(self, ms.Parameter) \
                and backend.requires_grad_flag(self):
            warn_user(LOST_GRADIENT)
        return _original(self, value)
    if tape.is_recording() or _executor.grad_flag():
        inner = value.stub_sync() if backend.is_stub_tensor(value) else value
        if isinstance(inner, ms.Tensor) and not isinstance(inner, ms.Parameter):
            self.stub = None
            self.tensor = inner
            return self
    return _original(self, value)


def apply() -> None:
    global ms, backend, backend_compat, _executor, tape, _original, _rebinds, warn_user, _original_view
    global graph_mode_condition
    import mindspore as ms
    from adapter import backend, backend_compat
    _rebinds = backend_compat.wrapper_rebinds()
    from mindtorch.torch.tensor import Tensor
    _executor = backend.pynative_executor()
    from adapter import tape
    from adapter.userframe import warn_user
    if not _rebinds:
        backend_compat.set_rebind_token(tape.generation)

    _original = get_replaced(Tensor, "assign_value", NAME)
    patch_attr(Tensor, "assign_value", assign_value)
    from mindtorch.utils import graph_mode_condition
    _original_view = get_replaced(Tensor, "view", NAME)
    # graph code is MindTorch's (view's first branch): adapter/graph_lean.py's lean Reshape form still replaces it
    # while compiling (adapter/graph_semantics.py _from_mindtorch unwraps to MindTorch's method)
    view.__wrapped__ = _original_view
    patch_attr(Tensor, "view", view)


NAME = "inplace_autograd"
PATCH = Patch(NAME, "in-place ops during a backward() recording (nn.LeakyReLU(inplace=True), "
                    "F.hardtanh(x, inplace=True), a += b) keep the values the backward needs: "
                    "gradients as PyTorch's (they were wrong after a conv); in-place writes into x[i] / x[:, j] "
                    "reach x",
              "post-import", apply,
              replaces=("torch.Tensor.assign_value", "torch.Tensor.view"))
