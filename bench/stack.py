"""The MindSpore stack a benchmark measures (issue 33): every bench script that starts a MindSpore process takes its
interpreter from here, so that ``MINDSPORE=<version>`` measures that stack, as ``make run MINDSPORE=<version>`` runs it.

    from stack import python, native_environment   # bench/ is on sys.path for the bench scripts
    python() -> "/repo/.venv/bin/python"                              # MINDSPORE unset: the default stack
    python() -> "/repo/.venv-mindspore-2.5.0.dev20250119/bin/python"  # MINDSPORE=2.5.0.dev20250119

Raises ``SystemExit`` with the set-up command when that venv does not exist (``scripts/setup.sh`` builds it).

``native_environment()``: a native MindSpore baseline (``bench/native_resnet.py``, ``bench/native_dcgan.py``) calls it
before ``import mindspore``. It applies the environment settings our run applies before MindSpore loads
(``adapter/backend_compat.set_environment``: ``ONEDNN_MAX_CPU_ISA=AVX2`` where MindSpore bundles oneDNN 3), so the
anchor and our compiled step use the same convolution kernels; without it, 2.10's native port took oneDNN 3's
AVX-512 plain-layout path (2.712 s per ResNet18 step against our 0.254 s, measured 2026-11-29). A value the user
set is kept. Returns the names it set.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def venv() -> str:
    """The venv folder of ``$MINDSPORE`` (``.venv-mindspore-<version>``), or ``.venv`` when it is unset."""
    version = os.environ.get("MINDSPORE", "").strip()
    return os.path.join(ROOT, f".venv-mindspore-{version}" if version else ".venv")


def python() -> str:
    """The Python of :func:`venv`; ``SystemExit`` naming the set-up command when it is missing."""
    path = os.path.join(venv(), "bin", "python")
    if not os.path.exists(path):
        version = os.environ.get("MINDSPORE", "").strip()
        setup = f"MINDSPORE={version} scripts/setup.sh venv" if version else "scripts/setup.sh venv"
        raise SystemExit(f"bench: {path} does not exist: run `{setup}` first")
    return path


def native_environment() -> list:
    """Before ``import mindspore`` in a native baseline: our pre-import environment settings (module docstring)."""
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    from adapter import backend_compat
    return backend_compat.set_environment()
