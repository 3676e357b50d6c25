"""Mixed precision as PyTorch scripts write it: ``autocast`` regions and ``GradScaler``, unchanged.

MindTorch 0.4.0's ``autocast`` only warns ("use mindspore.amp.auto_mixed_precision() instead"; as a decorator it
returns None) and its ``GradScaler`` needs the gradients passed in by hand and breaks after one iteration
(``docs/facts.md``, "Mixed precision on CPU"). Here:

``autocast`` (``torch.autocast(device_type, dtype)``, ``torch.amp.autocast``, ``torch.cuda.amp.autocast``,
``torch.cpu.amp.autocast``; context manager and decorator; nestable, ``enabled=False`` inside switches it off)
    A region runs under a MindSpore AMP strategy: the mechanism of ``mindspore.amp.auto_mixed_precision(fn,
    level)`` for functions, pushed for the region (``push_amp_strategy``/``pop_amp_strategy``) instead of converting
    the user's model once for good, so calls outside the region stay float32 as in PyTorch. The outputs of each
    outermost module called in the region are cast back to float32 (as MindSpore's ``_OutputTo32`` does for O2/O3),
    and softmax/log-softmax/NLL run in float32 (PyTorch's autocast "float32 ops" list), so ``loss_fn(output,
    target)`` and metrics see float32. In a compiled step the region's statements become one function carrying the
    strategy as its ``amp_strategy`` attribute, which MindSpore's graph compiler honours (``adapter/compiled_step.py``).

    The level (:func:`set_level`, ``run.py --amp-level``): ``"auto"`` is MindSpore's op-list level (white list:
    Conv/MatMul/BatchMatMul/Dense/... in low precision; black list: BatchNorm/LayerNorm/exp/log/pow/losses in
    float32; other ops follow their inputs), the closest match to PyTorch's autocast; ``"O2"``/``"O3"`` are
    MindSpore's recommended levels for GPU and Ascend (``docs/facts.md``, seed 002); ``"O0"`` runs the region
    in float32. ``"device"`` (default) picks O3 on Ascend, O2 on GPU and O0 on CPU: on CPU MindSpore's float16
    convolutions are emulated and measured slower than float32 (``bench/run_bench.py --amp``), and bfloat16 Conv2D/
    MatMul kernels do not exist. This MindSpore build compiles only ``"auto"`` as a function-scoped strategy in graph
    mode (O2/O3 recurse without end in the compiler), so compiled steps run O2/O3 regions at ``"auto"``.

``GradScaler`` (``torch.amp.GradScaler(device)``, ``torch.cuda.amp.GradScaler``, ``torch.cpu.amp.GradScaler``)
    PyTorch's dynamic loss scaling, same rules and messages (``torch/amp/grad_scaler.py``, 2.x): ``scale(loss)``
    multiplies by the scale (init 2**16); ``unscale_(optimizer)`` multiplies ``.grad`` by 1/scale and records whether
    any gradient is inf/NaN (``mindspore.amp.all_finite``); ``step(optimizer)`` unscales if needed and skips the
    update when one was non-finite; ``update()`` multiplies the scale by ``backoff_factor`` (0.5) after an overflow
    and by ``growth_factor`` (2.0) after ``growth_interval`` (2000) overflow-free steps in a row; ``get_scale()``,
    ``state_dict()``/``load_state_dict()``. The scale lives in a MindSpore ``Parameter``: a compiled step reads it
    as a graph input, unscales, checks and skips the update inside the graph (``adapter/compiled_step.py``).

Replaces: ``torch.autocast``, ``torch.amp.autocast`` / ``GradScaler`` / ``is_autocast_available``,
``torch.GradScaler``, ``torch.cuda.amp.autocast`` / ``GradScaler``, ``torch.cpu.amp.autocast`` / ``GradScaler`` (and
their ``autocast_mode`` / ``grad_scaler`` modules'), ``torch.is_autocast_enabled``.
"""
from __future__ import annotations

import functools
import itertools
import sys
from typing import List

from . import Patch, get_original, patch_attr

from adapter import backward_through  # GradScaler.scale tells a compiled step what it scaled (backward_through.py)
# the level, the open regions and the strategy live in adapter/amp_state.py, which the runtime reads too
from adapter.amp_state import (LEVELS, AutocastRegion, LossScaler, _notes_printed, active,  # noqa: F401
                               effective_level, enter_region, exit_region, is_autocast_enabled, set_level,
                               strategy_args)
from adapter.amp_state import note as _note


def cast_outputs_to_float32(value):
    """``value`` with every float16/bfloat16 tensor in it (tuples, lists, dicts) cast to float32."""
    import mindspore as ms
    from mindtorch.torch.tensor import Tensor
    if isinstance(value, (tuple, list)):
        items = [cast_outputs_to_float32(v) for v in value]
        return type(value)(items) if not hasattr(value, "_fields") else type(value)(*items)
    if isinstance(value, dict):
        return type(value)((k, cast_outputs_to_float32(v)) for k, v in value.items())
    if isinstance(value, Tensor) and value.dtype in (ms.float16, ms.bfloat16):
        return value.float()
    return value


class autocast(AutocastRegion):
    """PyTorch's ``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``.

    Args:
        device_type: ``"cuda"``, ``"cpu"``, ``"npu"``, ... (accepted; the device is MindSpore's, ``run.py --device``).
        dtype: ``torch.float16`` or ``torch.bfloat16``; default float16 (bfloat16 for ``"cpu"``, as PyTorch).
        enabled: False makes the region (and nested ones that do not re-enable it) run in float32.
        cache_enabled: accepted, no effect (MindSpore caches casts itself).
    Raises:
        ValueError: another dtype.
    """

    def __init__(self, device_type: str = "cuda", dtype=None, enabled: bool = True, cache_enabled=None):
        import mindspore as ms
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device_type = device_type
        self.fast_dtype = dtype if dtype is not None else (ms.bfloat16 if device_type == "cpu" else ms.float16)
        self._enabled = bool(enabled)
        self._pushed: List[bool] = []

    def __enter__(self):
        from adapter import backend
        AmpLevel, push_amp_strategy = backend.internal("AmpLevel"), backend.internal("push_amp_strategy")
        args = strategy_args(self.fast_dtype) if self._enabled else None
        if self._enabled and args is None:
            _note("O0", "autocast: the region runs in float32 on this device (float16 is slower than float32 on "
                        "MindSpore's CPU kernels: bench/run_bench.py --amp); run.py --amp-level auto runs it in "
                        "float16")
        if args is None:
            import mindspore as ms
            push_amp_strategy(AmpLevel.AmpO0, ms.float16, [], [])
        else:
            push_amp_strategy(*args)
        enter_region(self._enabled, args is not None)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        from adapter import backend
        pop_amp_strategy = backend.internal("pop_amp_strategy")
        exit_region()
        pop_amp_strategy()
        return False

    def __call__(self, func):
        """As a decorator: ``func`` runs inside this region on every call."""
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self._enabled):  # a fresh context per call
                return func(*args, **kwargs)
        return decorate_autocast

    def region(self):
        """``(enabled, dtype)`` of this context when entered: what a compiled step compiles the region with."""
        return (self._enabled and effective_level() != "O0"), self.fast_dtype


class _CudaAutocast(autocast):
    """``torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True)``."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        super().__init__("cuda", dtype, enabled, cache_enabled)


class _CpuAutocast(autocast):
    """``torch.cpu.amp.autocast(enabled=True, dtype=torch.bfloat16, cache_enabled=True)``."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        super().__init__("cpu", dtype, enabled, cache_enabled)


# --- GradScaler -------------------------------------------------------------------------------------------------
_READY, _UNSCALED, _STEPPED = 0, 1, 2
_scaler_ids = itertools.count()


class GradScaler(LossScaler):
    """PyTorch's ``torch.amp.GradScaler(device="cuda", init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)``; rules from ``torch/amp/grad_scaler.py`` (PyTorch 2.x).

    The scale is a float32 scalar ``mindspore.Parameter`` (a compiled step takes it as a graph input, so updating it
    never recompiles); the growth tracker is a Python int. Per optimizer, the stage (ready / unscaled / stepped) and
    ``found_inf`` (bool) of the current iteration are kept until ``update()``.
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        import mindspore as ms
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._growth_tracker = 0
        self._scale = ms.Parameter(ms.Tensor(self._init_scale, ms.float32), name=f"grad_scaler_{next(_scaler_ids)}",
                                   requires_grad=False)
        self._per_optimizer_states: dict = {}

    # -- scaling ------------------------------------------------------------------------------------------------
    def scale(self, outputs):
        """``outputs * scale`` (a tensor, or an iterable of tensors, scaled each). Returns ``outputs`` unchanged
        when disabled."""
        if not self._enabled:
            return outputs
        from mindtorch.torch.tensor import Tensor, cast_to_adapter_tensor
        if isinstance(outputs, Tensor):
            scaled = outputs * cast_to_adapter_tensor(self._scale.value()).astype(outputs.dtype)
            backward_through.note_scaled(self, outputs, scaled)  # a compiled step's loss (adapter/backward_through.py)
            return scaled
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer) -> dict:
        return self._per_optimizer_states.setdefault(id(optimizer), {"stage": _READY, "found_inf": False})

    def unscale_(self, optimizer) -> None:
        """Divide the ``.grad`` of ``optimizer``'s parameters by the scale, in place; record inf/NaN.

        Raises:
            RuntimeError: called twice for one optimizer before ``update()``, or after ``step()``; or a gradient is
                float16 (PyTorch: "Attempting to unscale FP16 gradients.").
        """
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        state["found_inf"] = self._unscale_grads(optimizer)
        state["stage"] = _UNSCALED

    def _unscale_grads(self, optimizer) -> bool:
        import mindspore as ms
        params = [p for p in _params(optimizer) if p.grad is not None]
        for p in params:
            if p.grad.dtype == ms.float16:
                raise ValueError("Attempting to unscale FP16 gradients.")
        if not params:
            return False
        # PyTorch: inv_scale = scale.double().reciprocal().float(); grads *= inv_scale even when one is non-finite
        inv_scale = float(ms.Tensor(1.0 / float(self._scale.asnumpy()), ms.float32).asnumpy())
        finite = bool(ms.amp.all_finite([p.grad for p in params]).asnumpy())
        for p in params:
            p.grad = p.grad * inv_scale
        return not finite

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` unless a gradient was inf/NaN (then the update is skipped and None returned).

        Raises:
            RuntimeError: a ``closure`` is given, or ``step()`` was already called since the last ``update()``.
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return retval

    def record_fused_step(self, optimizer, found_inf: bool) -> None:
        """What ``unscale_`` + ``step`` leave behind, for a compiled step that did both inside its graph."""
        state = self._state(optimizer)
        if state["stage"] != _READY:
            raise RuntimeError("step() has already been called since the last update().")
        state["found_inf"] = bool(found_inf)
        state["stage"] = _STEPPED

    def update(self, new_scale=None) -> None:
        """Back off or grow the scale (module docstring), or set it to ``new_scale`` (float or 1-element tensor).

        Raises:
            AssertionError: no ``unscale_``/``step`` recorded an inf check since the last update (as PyTorch).
        """
        if not self._enabled:
            return
        import mindspore as ms
        if new_scale is not None:
            value = float(new_scale) if isinstance(new_scale, (int, float)) else float(new_scale.item())
        else:
            states = [s for s in self._per_optimizer_states.values() if s["stage"] != _READY]
            assert states, "No inf checks were recorded prior to update."
            value = float(self._scale.asnumpy())
            if any(s["found_inf"] for s in states):
                value *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    value *= self._growth_factor
                    self._growth_tracker = 0
        ms.ops.assign(self._scale, ms.Tensor(value, ms.float32))  # in place: compiled graphs hold this Parameter
        self._per_optimizer_states = {}

    # -- accessors, as PyTorch ----------------------------------------------------------------------------------
    def get_scale(self) -> float:
        return float(self._scale.asnumpy()) if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """``{"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}``; {} if disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore :meth:`state_dict`'s values. Raises RuntimeError when disabled or ``state_dict`` is empty."""
        import mindspore as ms
        if not self._enabled:
            raise RuntimeError("Attempting to load_state_dict on a disabled instance of GradScaler.")
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        ms.ops.assign(self._scale, ms.Tensor(float(state_dict["scale"]), ms.float32))
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])


def _params(optimizer):
    """The parameters of ``optimizer``, in order (MindSpore keeps them in ``optimizer.parameters``)."""
    params = getattr(optimizer, "parameters", None)
    if params is not None and not callable(params):
        return list(params)
    return [p for group in optimizer.param_groups for p in group["params"]]


class _CudaGradScaler(GradScaler):
    """``torch.cuda.amp.GradScaler(init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
    enabled=True)``."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class _CpuGradScaler(GradScaler):
    """``torch.cpu.amp.GradScaler(...)``, same arguments as :class:`_CudaGradScaler`."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


_AUTOCAST_DEVICES = {"cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                     "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone"}


def is_autocast_available(device_type: str) -> bool:
    """``torch.amp.is_autocast_available(device_type)`` as PyTorch 2.13 (observed in ``.venv-ref``): True for every
    device type but ``meta``; RuntimeError for a string that is no device type. (Any region runs here.)"""
    if device_type.split(":")[0] not in _AUTOCAST_DEVICES:
        raise RuntimeError(f"Expected one of {', '.join(sorted(_AUTOCAST_DEVICES))} device type at start of device "
                           f"string: {device_type}")
    return device_type.split(":")[0] != "meta"


def apply() -> None:
    import mindtorch.torch as torch
    import mindtorch.torch.amp as amp
    import mindtorch.torch.cuda.amp as cuda_amp
    import mindtorch.torch.cpu.amp as cpu_amp
    import mindtorch.torch.amp.autocast_mode as autocast_mode

    patch_attr(torch, "autocast", autocast)
    patch_attr(amp, "autocast", autocast)
    patch_attr(autocast_mode, "autocast", autocast)
    patch_attr(amp, "GradScaler", GradScaler)
    patch_attr(amp, "is_autocast_available", is_autocast_available)
    if get_original(torch, "GradScaler", None) is None:
        patch_attr(torch, "GradScaler", GradScaler)
    patch_attr(cuda_amp, "autocast", _CudaAutocast)
    patch_attr(cuda_amp, "GradScaler", _CudaGradScaler)
    patch_attr(cpu_amp, "autocast", _CpuAutocast)
    patch_attr(cpu_amp, "GradScaler", _CpuGradScaler)
    patch_attr(torch, "is_autocast_enabled", is_autocast_enabled)
    for name in ("mindtorch.torch.cuda.amp.autocast_mode", "mindtorch.torch.cpu.amp.autocast_mode"):
        module = sys.modules.get(name)
        if module is not None:
            patch_attr(module, "autocast", _CudaAutocast if ".cuda." in name else _CpuAutocast)
    module = sys.modules.get("mindtorch.torch.cuda.amp.grad_scaler")
    if module is not None:
        patch_attr(module, "GradScaler", _CudaGradScaler)


PATCH = Patch("amp", "autocast regions (per-region MindSpore AMP strategy) and GradScaler with PyTorch's rules",
              "post-import", apply,
              replaces=("torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast",
                        "torch.amp.GradScaler", "torch.amp.is_autocast_available", "torch.GradScaler",
                        "torch.cuda.amp.autocast", "torch.cuda.amp.GradScaler", "torch.cpu.amp.autocast",
                        "torch.cpu.amp.GradScaler", "torch.is_autocast_enabled",
                        "torch.cuda.amp.autocast_mode.autocast", "torch.cpu.amp.autocast_mode.autocast",
                        "torch.cuda.amp.grad_scaler.GradScaler"))
