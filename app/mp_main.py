"""The main module of a Python ``multiprocessing`` *spawn* child of a run.py process (``patches/mp_start.py``).

Run by ``multiprocessing.spawn`` as ``__mp_main__`` in the child, before the child unpickles its target: sets up
MindSpore, MindTorch's import hook and our patches as run.py did in the parent (``app.bootstrap.setup_mindspore``
on the device named by ``ADAPTER_MP_DEVICE``), then executes the parent's script (``ADAPTER_MP_SCRIPT``) in this
module's namespace under the name ``__mp_main__``, as Python's spawn does with the script itself: its definitions
(a ``Dataset`` class) exist for unpickling, its ``if __name__ == "__main__":`` block does not run.
"""
import os
import sys

from app.bootstrap import setup_mindspore

setup_mindspore(os.environ.get("ADAPTER_MP_DEVICE", "CPU"))

__script = os.environ.get("ADAPTER_MP_SCRIPT")
if __script:
    __folder = os.path.dirname(__script)
    if __folder not in sys.path:
        sys.path.insert(0, __folder)
    with open(__script, "rb") as __f:
        __code = compile(__f.read(), __script, "exec")
    __file__ = __script
    exec(__code, globals())
