"""Device calls in real scripts: ``torch.cuda.is_available()`` tells the truth; ``.to('cuda')``/``.cuda()`` are harmless.

MindSpore places tensors on the device chosen by ``mindspore.set_device`` (``run.py --device``); there is no
per-tensor device. MindTorch 0.4.0's ``torch.cuda.is_available()`` answers True on a CPU-only machine, which sends
scripts down their CUDA paths (``pin_memory`` threads, ``torch.cuda.synchronize``...). Here it is True only when the
MindSpore device target is GPU or Ascend — the device the script's "cuda" then means.
"""
from . import Patch


def is_available() -> bool:
    """True when MindSpore's device target is ``GPU`` or ``Ascend`` (what a script's ``"cuda"`` maps to)."""
    import mindspore as ms
    return ms.get_context("device_target") in ("GPU", "Ascend")


def device_count() -> int:
    """Number of accelerators usable by this process: 1 under GPU/Ascend (one device per process), else 0."""
    return 1 if is_available() else 0


def apply() -> None:
    import mindtorch.torch.cuda as cuda
    cuda.is_available = is_available
    cuda.device_count = device_count


PATCH = Patch("device", "torch.cuda.is_available() is True only on GPU/Ascend; .cuda()/.to(device) are no-ops",
              "post-import", apply)
