"""``torch.utils.tensorboard``: PyTorch's TensorBoard writer, which MindTorch 0.4.0 lacks (issue 31 §5).

Training scripts import it at the top (``from torch.utils.tensorboard import SummaryWriter``); under MindTorch that
line stopped the script before it started (``ModuleNotFoundError``). This patch adds the package
``torch.utils.tensorboard`` (also ``sys.modules["mindtorch.torch.utils.tensorboard"]`` and its ``writer`` and
``summary`` submodules, so ``import torch.utils.tensorboard``, ``from torch.utils.tensorboard.writer import
SummaryWriter`` and ``from torch.utils.tensorboard.summary import hparams`` work) exporting ``SummaryWriter`` and ``FileWriter`` from ``adapter/summary_writer.py``: event files
written by the real ``tensorboard`` package (a declared dependency, requirements*.txt), which TensorBoard reads.

Where ``tensorboard`` is not installed, the import of ``SummaryWriter`` raises ``ImportError`` saying what to
install, as PyTorch's own ``torch.utils.tensorboard`` does.

Replaces (adds): ``torch.utils.tensorboard``. Nothing else; no ordering constraint (it only adds a module).
"""
from __future__ import annotations

import importlib.util
import types

from . import Patch

_NAME = "mindtorch.torch.utils.tensorboard"
_MISSING = ("TensorBoard logging requires the tensorboard package: pip install tensorboard==2.21.0 "
            "(it is in requirements.txt; scripts/setup.sh installs it)")


def _missing(name):
    raise ImportError(f"cannot import {name!r} from torch.utils.tensorboard: {_MISSING}")


def module() -> types.ModuleType:
    """``torch.utils.tensorboard`` as a module object, with its ``writer`` submodule, both in ``sys.modules``."""
    from ._modules import new_module
    mod = new_module(_NAME, __doc__)
    mod.__path__ = []  # a package: `import torch.utils.tensorboard.writer` resolves its submodule
    if importlib.util.find_spec("tensorboard") is None:
        mod.__getattr__ = _missing  # PEP 562: `from ... import SummaryWriter` raises ImportError saying why
        return mod
    from adapter import summary_writer
    writer = new_module(f"{_NAME}.writer", "torch.utils.tensorboard.writer: SummaryWriter and FileWriter.")
    for owner in (mod, writer):
        owner.SummaryWriter = summary_writer.SummaryWriter
        owner.FileWriter = summary_writer.FileWriter
        owner.__all__ = ["SummaryWriter", "FileWriter"]
    mod.writer = writer
    summary = new_module(f"{_NAME}.summary", "torch.utils.tensorboard.summary: Summary record builders "
                         "(scalar, histogram, image, text, hparams).")
    for name in summary_writer.SUMMARY_NAMES:
        setattr(summary, name, getattr(summary_writer, name))
    summary.__all__ = list(summary_writer.SUMMARY_NAMES)
    mod.summary = summary
    return mod


def apply() -> None:
    import mindtorch.torch.utils as utils
    from ._modules import install
    install(utils, "tensorboard", module)


PATCH = Patch("tensorboard", "from torch.utils.tensorboard import SummaryWriter works: scalars, histograms, images, "
              "text, hparams written with the tensorboard package's event writer (adapter/summary_writer.py)",
              "post-import", apply, replaces=("torch.utils.tensorboard",),
              effects=("sys.modules['mindtorch.torch.utils.tensorboard'], ['...tensorboard.writer'], "
                       "['...tensorboard.summary']",))
