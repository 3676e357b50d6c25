"""``torch.rand`` / ``randn`` / ``rand_like`` / ``randn_like`` / ``randint`` without a MindSpore cast per call: the
same numbers, 1.7 ms -> ~20 us a call (``randint``: 1.4 -> 1.1 ms).

MindTorch 0.4.0 draws ``torch.rand(*size)`` / ``torch.randn(*size)`` (and ``rand_like`` / ``randn_like``, in the input's
shape and dtype) on the host from numpy's global RNG, in float64, and converts with
``from_numpy(np.random.rand(*size)).to(dtype)`` (``mindtorch/torch/functional.py``): a MindSpore
``Cast`` kernel launch per call, measured at 1.5-1.9 ms for a 20-element tensor on this 2-core CPU (``x + 1`` on the
same tensor: ~0.1 ms). A script that builds its data set from small draws pays it per sample: ddp-tutorial-series'
``MyTrainDataset(2048)`` (4096 ``torch.rand`` calls) took 5.8-7.5 s in every ``mp.spawn`` / ``--nproc-per-node``
child, longer than the rest of the child's start-up (``bench/bench_spawn_ready.py``; PyTorch: 0.02-0.04 s).

Here, for a float32 or float64 result, the float64 draw is rounded with numpy's ``astype`` (IEEE round to nearest
even, as MindSpore's CPU ``Cast`` from float64; the tests check bit equality with MindTorch's path) and wrapped
without a kernel. The numpy draws, hence the values and the global RNG stream, are MindTorch's. Other dtypes (float16,
bfloat16: a double rounding could differ), 0-d results and ``out=`` go to MindTorch's function unchanged.
``requires_grad`` is MindTorch's handling. ``patches/generator.py`` wraps these for ``generator=``.

``torch.randint`` (nanoGPT's ``get_batch``, every step): MindTorch draws with MindSpore's ``randint``, whose
``UniformInt`` kernel gives int32 and a ``Cast`` kernel then the int64 PyTorch's default asks for: 0.4-0.55 ms of the
call's 1.4 ms for 8 values on this CPU (``bench/eager_ops.py``). Here, on the CPU device, for the default dtype
(``None`` or int64) without ``out=``, ``requires_grad`` or ``generator=``, MindTorch's function draws in int32 (the
same kernel, seeds and values: only the cast differs) and numpy widens the values to int64 (exact). Other calls, and
compiled graphs, take MindTorch's function unchanged.

Replaces: ``torch.rand``, ``torch.randn``, ``torch.rand_like``, ``torch.randn_like``, ``torch.randint`` (and
``mindtorch.torch.functional``'s).
"""
from __future__ import annotations

import functools

from . import Patch, get_original, patch_attr


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
def _fast(original, draw_name):
    """``original`` (MindTorch's rand/randn) with float32/float64 results from ``np.random.<draw_name>(*size)``
    (looked up at each call, as MindTorch does) cast by numpy."""
    import numpy as np
    import mindtorch.torch as torch
    from mindtorch.torch.functional import from_numpy
    from adapter import backend
    _out_inplace_assign_with_adapter_tensor = backend.internal("out_inplace_assign_with_adapter_tensor")
    _dtype_or_default = backend.internal("dtype_or_default")
    np_types = {torch.float32: np.float32, torch.float64: np.float64}

    def fn(*positional_size, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
           **kwargs):
        np_type = np_types.get(_dtype_or_default(dtype))
        shape = size
        if shape is None and positional_size:
            first = positional_size[0]
            shape = first if isinstance(first, (tuple, list)) else positional_size
        if np_type is None or out is not None or kwargs or shape is None or not len(shape) \
                or not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
            call_kwargs = dict(kwargs, out=out, dtype=dtype, layout=layout, device=device,
                               requires_grad=requires_grad)
            if size is not None:
                call_kwargs["size"] = size
            return original(*positional_size, **call_kwargs)
        output = from_numpy(getattr(np.random, draw_name)(*shape).astype(np_type, copy=False))
        return _out_inplace_assign_with_adapter_tensor(None, output, original.__name__, requires_grad)

    fn.__name__ = fn.__qualname__ = original.__name__
    fn.__doc__ = original.__doc__
    fn.__wrapped__ = original
    return fn


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
def _fast_like(original, draw_name):
    """``original`` (MindTorch's rand_like/randn_like: a draw of ``input``'s shape, in ``dtype`` or ``input``'s dtype)
    with float32/float64 results cast by numpy, as :func:`_fast`."""
    import numpy as np
    import mindtorch.torch as torch
    from mindtorch.torch.functional import from_numpy
    from mindtorch.torch.tensor import cast_to_ms_tensor
    np_types = {torch.float32: np.float32, torch.float64: np.float64}

    def fn(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None, **kwargs):
        input_ms = cast_to_ms_tensor(input)
        np_type = np_types.get(dtype if dtype else input_ms.dtype)
        shape = tuple(input_ms.shape)
        if np_type is None or kwargs:
            return original(input, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad,
                            memory_format=memory_format, **kwargs)
        # np.asarray: a 0-d input's draw is a Python float, which MindTorch's from_numpy rejected (TypeError:
        # Expected a NumPy array; MindTorch's own rand_like too: torch.rand_like(torch.tensor(1.0)))
        output = from_numpy(np.asarray(getattr(np.random, draw_name)(*shape)).astype(np_type, copy=False))
        output.requires_grad = requires_grad
        return output

    fn.__name__ = fn.__qualname__ = original.__name__
    fn.__doc__ = original.__doc__
    fn.__wrapped__ = original
    return fn


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
def _fast_randint(original, on_cpu):
    """``original`` (MindTorch's randint) with an int64 result (the default dtype) widened from the int32 draw on
    the host where ``on_cpu`` (the CPU device; module docstring)."""
    import numpy as np
    import mindspore
    import mindtorch.torch as torch
    from mindtorch.torch.tensor import cast_to_adapter_tensor, cast_to_ms_tensor
    from mindtorch.utils import graph_mode_condition

    def fn(*args, dtype=None, out=None, requires_grad=False, **kwargs):
        if on_cpu and out is None and requires_grad is False and kwargs.get("generator") is None \
                and (dtype is None or dtype == torch.int64) and not graph_mode_condition():
            drawn = cast_to_ms_tensor(original(*args, dtype=torch.int32, **kwargs))
            return cast_to_adapter_tensor(mindspore.Tensor(drawn.asnumpy().astype(np.int64)))
        return original(*args, dtype=dtype, out=out, requires_grad=requires_grad, **kwargs)

    fn.__name__ = fn.__qualname__ = original.__name__
    fn.__doc__ = original.__doc__
    fn.__wrapped__ = original
    return fn


def apply() -> None:
    import mindspore
    import mindtorch.torch as torch
    import mindtorch.torch.functional as functional
    for name in ("rand", "randn"):
        fast = _fast(get_original(functional, name), name)
        patch_attr(functional, name, fast)
        patch_attr(torch, name, fast)
    for name, draw in (("rand_like", "rand"), ("randn_like", "randn")):
        fast = _fast_like(get_original(functional, name), draw)
        patch_attr(functional, name, fast)
        patch_attr(torch, name, fast)
    fast = _fast_randint(get_original(functional, "randint"), mindspore.get_context("device_target") == "CPU")
    patch_attr(functional, "randint", fast)
    patch_attr(torch, "randint", fast)


PATCH = Patch("random_draws", "torch.rand/randn(_like) return MindTorch's numpy draws cast on the host "
                              "(float32/float64), torch.randint's int64 its int32 draw widened on the host: the same "
                              "values without a MindSpore Cast launch per call (1.7 ms -> ~20 us; randint: 1.4 -> 1.1)",
              "post-import", apply,
              replaces=("torch.rand", "torch.randn", "torch.rand_like", "torch.randn_like", "torch.randint",
                        "torch.functional.rand", "torch.functional.randn", "torch.functional.rand_like",
                        "torch.functional.randn_like", "torch.functional.randint"))
