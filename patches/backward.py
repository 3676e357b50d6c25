"""``Tensor.backward()``: gradients into ``param.grad`` through the eager bridge (``adapter/tape.py``).

MindTorch 0.4.0's ``backward`` raises ``NotImplementedError`` (or, with ``ENABLE_BACKWARD=1``, silently leaves the
parameters' gradients empty: ``docs/facts.md``). Here it differentiates the recorded forward and accumulates
into ``.grad`` like PyTorch. ``retain_graph``/``create_graph``/``inputs`` are not supported and say so. Inside a
call that a compiled step site hands its loss to (``_backward(loss)``: ``adapter/backward_through.py``), a
backward() of that loss is served with the step's gradients.

Replaces: ``torch.Tensor.backward``.
"""
from . import Patch, patch_attr


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """PyTorch's ``Tensor.backward``; see ``adapter/tape.py``. Raises ``tape.TapeError`` with the user's
    file:line when no forward was recorded, for a non-scalar loss without ``gradient``, and for
    ``create_graph=True`` / ``inputs=...`` (not supported by the bridge)."""
    from adapter import backward_through, events, tape
    from adapter.userframe import user_location

    if create_graph or inputs is not None:
        raise tape.TapeError(f"backward() at {user_location(2)}: create_graph=True and inputs=... are not "
                             "supported on MindSpore by this adapter; use torch.autograd-free code or "
                             "mindspore.grad for higher-order gradients.")
    if backward_through.before_backward(self, gradient):  # served by a compiled step (adapter/backward_through.py)
        return
    events.emit("backward", self)
    tape.backward(self, gradient, where=user_location(2))
    backward_through.after_backward(self)


def apply() -> None:
    from mindtorch.torch.tensor import Tensor

    patch_attr(Tensor, "backward", backward)


PATCH = Patch("backward", "loss.backward() records gradients into param.grad (accumulating, PyTorch rules)",
              "post-import", apply, replaces=("torch.Tensor.backward",))
