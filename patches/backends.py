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

The torch-level switches of the same kind, as PyTorch 2.13 (``torch/__init__.py``, observed in ``.venv-ref``):

* ``torch.use_deterministic_algorithms(mode, *, warn_only=False)`` / ``are_deterministic_algorithms_enabled()`` /
  ``is_deterministic_algorithms_warn_only_enabled()`` / ``set_deterministic_debug_mode("default"|"warn"|"error"|0|1|2)``
  / ``get_deterministic_debug_mode()``: MindTorch raised RuntimeError on CPU and GPU. The flag is recorded; on Ascend
  it also sets MindSpore's ``deterministic`` context ("ON"/"OFF"); on CPU MindSpore's kernels are deterministic
  already. ``mode`` must be a bool (TypeError otherwise, as PyTorch);
* ``torch.set_float32_matmul_precision("highest"|"high"|"medium")`` / ``get_float32_matmul_precision()``: recorded,
  and ``backends.cuda.matmul.allow_tf32`` follows it (True unless "highest"), as PyTorch; another value warns that
  the call has no effect. MindSpore's float32 matmul precision is its own (no TF32 on CPU);
* ``torch.get_num_threads()`` (missing in MindTorch): the value given to ``torch.set_num_threads``, else the CPUs
  this process may run on (PyTorch's default intra-op count on this machine).

Replaces (adds where MindTorch 0.4.0 has none): ``torch.backends.cudnn.{enabled, benchmark, deterministic,
allow_tf32, benchmark_limit, flags}``, ``torch.backends.cuda.matmul``, ``torch.backends.mkldnn.enabled``; replaces
``torch.{use_deterministic_algorithms, are_deterministic_algorithms_enabled,
is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode, get_deterministic_debug_mode,
set_float32_matmul_precision, get_float32_matmul_precision, get_num_threads, set_num_threads}``.
"""
from __future__ import annotations

import contextlib
import os
import types
import warnings

from . import Patch, get_original, is_patched, patch_attr

_CUDNN_DEFAULTS = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True,
                   "benchmark_limit": None}
_MATMUL_DEFAULTS = {"allow_tf32": False, "allow_fp16_reduced_precision_reduction": True,
                    "allow_bf16_reduced_precision_reduction": True}


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """``torch.backends.cudnn.flags``: set the flags inside the ``with`` block, restore them after."""
    import mindtorch.torch.backends.cudnn as cudnn
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


_STATE = {"deterministic": False, "warn_only": False, "matmul_precision": "highest", "num_threads": None}


def use_deterministic_algorithms(mode, *, warn_only=False) -> None:
    """PyTorch's ``torch.use_deterministic_algorithms`` (module docstring).

    Raises:
        TypeError: ``mode`` is not a bool.
    """
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    _STATE["deterministic"], _STATE["warn_only"] = mode, bool(warn_only) and mode
    import mindspore as ms
    if ms.get_context("device_target") == "Ascend":
        ms.set_context(deterministic="ON" if mode else "OFF")


def are_deterministic_algorithms_enabled() -> bool:
    return _STATE["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _STATE["warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    """``"default"``/0: off; ``"warn"``/1: on, warn only; ``"error"``/2: on.

    Raises:
        RuntimeError: another value (PyTorch's message).
    """
    modes = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _STATE["deterministic"]:
        return 0
    return 1 if _STATE["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    import mindtorch.torch.backends.cuda as cuda
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _STATE["matmul_precision"] = precision
    cuda.matmul.allow_tf32 = precision != "highest"


def get_float32_matmul_precision() -> str:
    return _STATE["matmul_precision"]


def get_num_threads() -> int:
    if _STATE["num_threads"] is not None:
        return _STATE["num_threads"]
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def set_num_threads(nthreads):
    """MindTorch's ``torch.set_num_threads``, the value recorded for :func:`get_num_threads`."""
    import mindtorch.torch as torch
    _STATE["num_threads"] = int(nthreads)
    return get_original(torch, "set_num_threads")(nthreads)


_TORCH_FUNCTIONS = (use_deterministic_algorithms, are_deterministic_algorithms_enabled,
                    is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode,
                    get_deterministic_debug_mode, set_float32_matmul_precision, get_float32_matmul_precision,
                    get_num_threads, set_num_threads)


def _add(owner, name: str, value) -> None:
    """``owner.name = value`` where MindTorch has no such attribute (once: a second apply keeps what the script
    set since)."""
    if not is_patched(owner, name) and not hasattr(owner, name):
        patch_attr(owner, name, value)


def apply() -> None:
    import mindtorch.torch as torch
    import mindtorch.torch.backends.cudnn as cudnn
    import mindtorch.torch.backends.cuda as cuda
    import mindtorch.torch.backends.mkldnn as mkldnn
    for name, value in _CUDNN_DEFAULTS.items():
        _add(cudnn, name, value)
    _add(cudnn, "flags", flags)
    _add(cuda, "matmul", types.SimpleNamespace(**_MATMUL_DEFAULTS))
    _add(mkldnn, "enabled", True)
    set_num_threads.__wrapped__ = get_original(torch, "set_num_threads")
    for fn in _TORCH_FUNCTIONS:
        patch_attr(torch, fn.__name__, fn)


PATCH = Patch("backends", "torch.backends.cudnn.benchmark/deterministic/enabled/allow_tf32/flags and "
              "cuda.matmul.allow_tf32 exist with PyTorch's defaults (recorded; MindSpore picks kernels); "
              "use_deterministic_algorithms, set_float32_matmul_precision, get_num_threads as PyTorch's",
              "post-import", apply,
              replaces=tuple(f"torch.backends.cudnn.{n}" for n in list(_CUDNN_DEFAULTS) + ["flags"])
              + ("torch.backends.cuda.matmul", "torch.backends.mkldnn.enabled")
              + tuple(f"torch.{fn.__name__}" for fn in _TORCH_FUNCTIONS))
