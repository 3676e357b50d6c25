"""MindSpore's own gradient recordings, noted so that one left open by an exception is reset at the next forward.

``mindspore.value_and_grad`` / ``grad`` / ``vjp`` (and MindTorch's ``torch.autograd.functional.vjp``, which calls
``mindspore.vjp``) record the function they differentiate between the PyNative executor's ``new_graph(fn)`` and
``end_graph(fn, out)`` with no ``try``/``finally`` (MindSpore 2.10's ``_pynative_func_grad_forward``, 2.5's
``GradOperation`` ``after_grad``). When ``fn`` raises, the executor's grad flag stays up and its top cell stays open.
The eager bridge (``adapter/tape.py``) reads a raised flag as "MindSpore is recording for someone else" and opened no
recording of its own: the next ``loss.backward()`` in the process raised ``TapeError: no forward pass was recorded``
(CI, 2026-12-07: an ``AttributeError`` inside ``value_and_grad`` in tests/test_vision_data.py broke the next test's
``backward()`` in tests/test_weights_only.py; measured the same with ``torch.autograd.functional.vjp``).

This patch wraps the executor's ``new_graph`` / ``end_graph``: for each recording the executor opens for another
object than the bridge's, it notes the frames of the MindSpore/MindTorch functions that opened it (the call that
runs while the recording is open), and drops the note when the recording ends (:func:`adapter.tape.foreign_opened`,
:func:`adapter.tape.foreign_closed`). When the bridge finds the flag raised with notes whose frames are no longer
running, the recording was left open by an exception: it resets the executor (``clear_res``, what MindSpore itself
calls after a failed ``jit`` compile) and opens its own (:func:`adapter.tape.begin`); so does the next MindSpore
recording before it opens (:func:`adapter.tape.reset_left_open`). A ``value_and_grad`` still
running (its function calls the model) keeps its recording, as before.

Replaces: MindSpore's PyNative executor's ``new_graph`` and ``end_graph`` (``mindspore.common.api._pynative_executor``).
"""
import sys

from . import Patch, get_original, patch_attr

_original_new = _original_end = None
_tape = _backend = None


def _opening_frames():
    """(Called by :func:`adapter.tape.foreign_opened`, from :func:`new_graph`.) The frames of MindSpore's and
    MindTorch's functions between the caller of ``new_graph`` and the first frame
    of other code, innermost first (at least the caller's own frame): the call that runs while the recording is
    open is among them (``_pynative_func_grad_forward``; for a Cell, ``Cell.__call__`` above ``_call_pre_process``,
    which has returned by then)."""
    frame = sys._getframe(3)
    frames = [frame]
    frame = frame.f_back
    while frame is not None and frame.f_globals.get("__name__", "").startswith(("mindspore", "mindtorch")):
        frames.append(frame)
        frame = frame.f_back
    return frames


def new_graph(obj, *args, **kwargs):
    """The executor's ``new_graph``; a recording of another object than the eager bridge's is noted. One left open
    by a raised call is reset first (:func:`adapter.tape.reset_left_open`)."""
    if _tape.reset_left_open():
        _backend.set_grad_flag(True)  # as its caller had set it (the reset lowered it)
    result = _original_new(obj, *args, **kwargs)
    _tape.foreign_opened(obj, _opening_frames)
    return result


def end_graph(obj, output, *args, **kwargs):
    """The executor's ``end_graph``; the recording's note goes."""
    result = _original_end(obj, output, *args, **kwargs)
    _tape.foreign_closed(obj)
    return result


def apply() -> None:
    global _original_new, _original_end, _tape, _backend
    from adapter import backend, tape
    _tape, _backend = tape, backend
    executor = backend.pynative_executor()
    _original_new = get_original(executor, "new_graph")
    _original_end = get_original(executor, "end_graph")
    patch_attr(executor, "new_graph", new_graph)
    patch_attr(executor, "end_graph", end_graph)


PATCH = Patch("grad_unwind", "a mindspore.value_and_grad / torch.autograd.functional.vjp whose function raised leaves "
              "no recording open: the next forward and backward() work", "post-import", apply,
              replaces=("mindspore.common.api._pynative_executor.new_graph",
                        "mindspore.common.api._pynative_executor.end_graph"))
