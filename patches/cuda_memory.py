"""``torch.cuda`` memory statistics: ``memory_allocated``, ``max_memory_allocated``, ``reset_peak_memory_stats``...

Training scripts log memory per epoch (``torch.cuda.max_memory_allocated() / 2**20``), usually behind ``if
torch.cuda.is_available()``. On GPU/Ascend that test is True here (``patches/device.py``), and MindTorch 0.4.0 has
none of these functions, so the script failed with AttributeError on the very devices this adapter is for. They
map onto MindSpore's own allocator statistics (``mindspore.runtime``, 2.5: ``memory_allocated``,
``max_memory_allocated``, ``memory_reserved``, ``max_memory_reserved``, ``reset_peak_memory_stats``,
``reset_max_memory_allocated``, ``reset_max_memory_reserved``, ``memory_summary``), in bytes as PyTorch's.

On a CPU target they return 0 / ``{}`` / do nothing, as PyTorch's CPU-only build does (observed in ``.venv-ref``:
``torch.cuda.max_memory_allocated()`` is 0), without MindSpore's "Backend CPU is not initialized" log line.
``device=`` is accepted and ignored: each process owns one device here.

``memory_stats()`` gives PyTorch's keys for the four counters (``allocated_bytes.all.current``/``.peak``,
``reserved_bytes.all.current``/``.peak``); the rest of PyTorch's caching-allocator statistics have no MindSpore
counterpart and are absent.

Replaces (adds: MindTorch 0.4.0 has none of them): ``torch.cuda.memory_allocated``, ``max_memory_allocated``,
``memory_reserved``, ``max_memory_reserved``, ``reset_peak_memory_stats``, ``reset_max_memory_allocated``,
``reset_max_memory_reserved``, ``memory_stats``, ``memory_summary``.
"""
from . import Patch, is_patched, patch_attr


def _on_device() -> bool:
    import mindspore as ms
    return ms.get_context("device_target") in ("GPU", "Ascend")


def _runtime(name: str, default):
    def fn(device=None):
        if not _on_device():
            return default
        import mindspore as ms
        return getattr(ms.runtime, name)()
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.cuda.{name}(device=None)``: ``mindspore.runtime.{name}()`` on GPU/Ascend, " \
                 f"{default!r} on CPU (module docstring)."
    return fn


memory_allocated = _runtime("memory_allocated", 0)
max_memory_allocated = _runtime("max_memory_allocated", 0)
memory_reserved = _runtime("memory_reserved", 0)
max_memory_reserved = _runtime("max_memory_reserved", 0)
reset_peak_memory_stats = _runtime("reset_peak_memory_stats", None)
reset_max_memory_allocated = _runtime("reset_max_memory_allocated", None)
reset_max_memory_reserved = _runtime("reset_max_memory_reserved", None)


def memory_stats(device=None) -> dict:
    """PyTorch's keys for the allocated/reserved bytes (current and peak); ``{}`` on CPU."""
    if not _on_device():
        return {}
    return {"allocated_bytes.all.current": memory_allocated(), "allocated_bytes.all.peak": max_memory_allocated(),
            "reserved_bytes.all.current": memory_reserved(), "reserved_bytes.all.peak": max_memory_reserved()}


def memory_summary(device=None, abbreviated=False) -> str:
    """MindSpore's summary table on GPU/Ascend; on CPU a one-line note (PyTorch's CPU build prints an empty table)."""
    if not _on_device():
        return "No memory statistics on CPU (MindSpore's allocator reports GPU/Ascend memory only)."
    import mindspore as ms
    return ms.runtime.memory_summary()


_FUNCTIONS = (memory_allocated, max_memory_allocated, memory_reserved, max_memory_reserved, reset_peak_memory_stats,
              reset_max_memory_allocated, reset_max_memory_reserved, memory_stats, memory_summary)


def apply() -> None:
    import mindtorch.torch.cuda as cuda
    for fn in _FUNCTIONS:
        if is_patched(cuda, fn.__name__) or not hasattr(cuda, fn.__name__):  # MindTorch 0.4.0 has none of them
            patch_attr(cuda, fn.__name__, fn)


PATCH = Patch("cuda_memory", "torch.cuda.memory_allocated/max_memory_allocated/reset_peak_memory_stats/... from "
                             "MindSpore's allocator on GPU/Ascend, 0 on CPU as PyTorch's CPU build",
              "post-import", apply, replaces=tuple(f"torch.cuda.{fn.__name__}" for fn in _FUNCTIONS))
