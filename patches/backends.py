"""``torch.backends.*`` flags that scripts read and set: PyTorch's attributes, with PyTorch's defaults.

MindTorch 0.4.0's ``torch.backends.cudnn`` module has no ``benchmark``/``deterministic``/``enabled``/``allow_tf32``
attributes: ``cudnn.benchmark = True`` works (a new module attribute) but reading one first
(``if torch.backends.cudnn.benchmark:``, ``flag = cudnn.deterministic``, ``torch.backends.cudnn.flags(...)``)
raises AttributeError. ``torch.backends.cuda.matmul.allow_tf32`` does not exist either. Here they exist with the
defaults of PyTorch 2.13 (observed in ``.venv-ref``): ``cudnn.enabled`` True, ``benchmark`` False,
``deterministic`` False, ``allow_tf32`` True, ``benchmark_limit`` None; ``cuda.matmul.allow_tf32`` False,
``allow_fp16_reduced_precision_reduction`` True, ``allow_bf16_reduced_precision_reduction`` True;
``mkldnn.enabled`` True. MindSpore chooses its kernels itself, so the flags are recorded only: setting
``benchmark``/``allow_tf32`` changes nothing, and ``deterministic`` is not needed on CPU (MindSpore's CPU kernels
give the same result run to run) -- on GPU it is not enforced (no MindSpore equivalent per call).
``cudnn.flags(...)`` is PyTorch's context manager that sets the flags and restores them.
``cudnn.is_available()`` stays MindTorch's (False without cuDNN), as PyTorch's on a CPU build.
"""
from __future__ import annotations

import contextlib
import types

from . import Patch

_CUDNN_DEFAULTS = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True,
                   "benchmark_limit": None}
_MATMUL_DEFAULTS = {"allow_tf32": False, "allow_fp16_reduced_precision_reduction": True,
                    "allow_bf16_reduced_precision_reduction": True}


def _flags(cudnn):
    @contextlib.contextmanager
    def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
        """``torch.backends.cudnn.flags``: set the flags inside the ``with`` block, restore them after."""
        names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
        old = {n: getattr(cudnn, n) for n in names}
        new = dict(zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)))
        for n, v in new.items():
            setattr(cudnn, n, v)
        try:
            yield
        finally:
            for n, v in old.items():
                setattr(cudnn, n, v)
    return flags


def apply() -> None:
    import mindtorch.torch.backends.cudnn as cudnn
    import mindtorch.torch.backends.cuda as cuda
    import mindtorch.torch.backends.mkldnn as mkldnn
    for name, value in _CUDNN_DEFAULTS.items():
        if not hasattr(cudnn, name):
            setattr(cudnn, name, value)
    if not hasattr(cudnn, "flags"):
        cudnn.flags = _flags(cudnn)
    if not hasattr(cuda, "matmul"):
        cuda.matmul = types.SimpleNamespace(**_MATMUL_DEFAULTS)
    if not hasattr(mkldnn, "enabled"):
        mkldnn.enabled = True


PATCH = Patch("backends", "torch.backends.cudnn.benchmark/deterministic/enabled/allow_tf32/flags and "
              "cuda.matmul.allow_tf32 exist with PyTorch's defaults (recorded; MindSpore picks kernels)",
              "post-import", apply)
