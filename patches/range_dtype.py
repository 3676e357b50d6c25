"""``torch.arange`` / ``mindspore.ops.arange``: the output dtype follows this call's inputs, not an earlier call's.

What it replaces: ``mindspore.ops.Range.__call__`` (the primitive behind ``ops.arange``, hence MindTorch's
``torch.arange``, and MindSpore's own slice indexing), class-wide, so every instance is covered; and MindTorch's
``torch.arange`` (``conflict_functional.arange``, also imported by ``nn/utils/rnn.py``) for float64 results.

Why: MindSpore 2.5's PyNative single-op kernel cache keys a ``Range`` call by its input *values* but not their
dtype (``start``, ``end``, ``step`` are value-depend inputs). Two calls with equal values and different dtypes share
the kernel compiled for the first one, and the second call's output gets the first call's dtype:

    torch.arange(3.)   # Range(0., 3., 1.) float32: kernel cached
    torch.arange(3)    # Range(0, 3, 1) int64: cache hit -> float32 tensor [0., 1., 2.]; PyTorch: int64 [0, 1, 2]

The same the other way round (``arange(3)`` then ``arange(3.)`` gives int64), with ``pynative_synchronize`` on or
off (off, ``.dtype`` first shows the inferred dtype and the data has the cached one). A float index tensor then
fails as an index far from its cause, or an integer tensor silently truncates what is multiplied into it. Seen
first as tests/test_indexing.py's arange check failing after the indexing cases (one of them computes
``torch.arange(3.)``). Measured on CPU, mindspore-dev 2.5.0.dev20250119: int64 / float32 / float64 / int32 Range
calls with values (0, 3, 1) all returned the dtype of whichever ran first.

How: ``Range``'s fourth input ``maxlen`` (a scalar; default 1000000) is part of the cache key with its value. Each
call passes ``maxlen + k`` with ``k`` (1..12) distinct per input dtype, so calls of different dtypes never share a
kernel. ``maxlen`` only bounds the output length of a dynamic-shape Range (the CPU kernel does not enforce it:
``ops.arange(2000000)`` works), so raising it by at most 12 changes no result. Graph mode is unaffected (there the
primitive is compiled into the graph; ``__call__`` does not run).

MindSpore >= 2.10 (measured 2.10.0, CPU): ``Range`` of int32 inputs returns int64 whatever ran before (2.5:
int32); the result is cast back to the inputs' dtype (a no-op cast is not run where the dtypes agree, as on 2.5).

Float64: MindSpore's CPU Range kernel computes float64 inputs in float32 and returns float32, and ``ops.arange``
turns Python floats into float32 tensors; MindTorch then casts to the requested float64. So
``torch.arange(0, 1, 0.1, dtype=torch.float64)`` (or with ``set_default_dtype(torch.float64)``) was off by 3.6e-8
where PyTorch is exact to the last bit. A float64 Range call, and a ``torch.arange`` whose result is float64
(``dtype=torch.float64``, or no dtype, a float argument and float64 as the default dtype: PyTorch's rule), are
computed on the host in float64 instead: ``n = ceil((end - start) / step)``
values ``start + step * i`` (PyTorch's size rule, ``torch.arange`` docs; its CPU kernel's value formula, equal to
PyTorch's result bit for bit for (0, 1, 0.1), within 1e-14 elsewhere, where its vectorized kernel rounds
differently). Invalid arguments (``step == 0``, ``end`` on the wrong side) still go to the kernel, which raises
MindSpore's error.

Replaces: ``mindspore.ops.Range.__call__``, ``torch.arange``, ``mindtorch.torch.conflict_functional.arange``,
``torch.nn.utils.rnn.arange``.
"""
import functools

from . import Patch, get_original, patch_attr

# Distinct offsets per input dtype (by name, so that this module imports nothing from MindSpore at import time).
_DTYPE_TAGS = {name: i + 1 for i, name in enumerate(
    ("Int64", "Int32", "Float32", "Float64", "Float16", "BFloat16", "Int16", "Int8", "UInt8", "UInt16", "UInt32",
     "UInt64"))}


def _float64_range(start, end, step):
    """float64 ``arange`` on the host (module docstring); None when the arguments are invalid (the kernel raises)."""
    import math
    import numpy as np
    from mindspore import Tensor, float64
    s, e, d = (float(v) for v in (start, end, step))
    if d == 0 or not math.isfinite(s) or not math.isfinite(e) or (e - s) / d <= 0:
        return None
    n = math.ceil((e - s) / d)
    return Tensor(s + d * np.arange(n, dtype=np.float64), float64)


def _range_call(self, start, end, step):
    """``Range()(start, end, step)`` with ``maxlen`` tagged by ``start``'s dtype (see the module docstring)."""
    from mindspore.ops.primitive import Primitive
    maxlen = self.maxlen
    dtype = getattr(start, "dtype", None)
    if dtype is not None:
        name = str(dtype)
        if name == "Float64":
            out = _float64_range(start, end, step)
            if out is not None:
                return out
        maxlen = maxlen + _DTYPE_TAGS.get(name, 0)
    out = Primitive.__call__(self, start, end, step, maxlen)
    if dtype is not None and out.dtype != dtype:
        # MindSpore >= 2.10 (measured 2.10.0, CPU): int32 inputs give an int64 result, in a fresh process too
        # (2.5: int32). MindTorch and MindSpore's own indexing expect the inputs' dtype, as 2.5 gave.
        from mindspore import ops
        out = ops.cast(out, dtype)
    return out


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """``torch.arange``: a float64 result computed on the host (module docstring), else MindTorch's
    ``conflict_functional.arange``."""
    import mindtorch.torch as torch
    from adapter import backend
    _out_inplace_assign = backend.internal("out_inplace_assign")
    args = (start, end, step)
    want = dtype
    if want is None and any(isinstance(v, float) or (isinstance(v, torch.Tensor) and v.is_floating_point())
                            for v in args):
        want = torch.get_default_dtype()
    if want == torch.float64 and out is None:
        result = _float64_range(*((0, start, step) if end is None else args))
        if result is not None:
            return _out_inplace_assign(None, result, "arange", requires_grad)
    return _original_arange(start, end, step, out=out, dtype=dtype, layout=layout, device=device,
                            requires_grad=requires_grad)


_original_arange = None  # MindTorch's conflict_functional.arange, bound by apply()


def apply() -> None:
    global _original_arange
    from mindspore.ops.auto_generate.gen_ops_prim import Range
    patch_attr(Range, "__call__", _range_call)
    import mindtorch.torch as torch
    import mindtorch.torch.conflict_functional as cf
    import mindtorch.torch.nn.utils.rnn as rnn
    _original_arange = get_original(cf, "arange")
    functools.update_wrapper(arange, _original_arange)
    for owner in (cf, torch, rnn):
        patch_attr(owner, "arange", arange)


PATCH = Patch("range_dtype", "arange/Range: output dtype follows the call's inputs (MindSpore's kernel cache "
              "reused an earlier call's dtype for equal values); float64 computed in float64", "post-import", apply,
              replaces=("mindspore.ops.Range.__call__", "torch.arange", "mindtorch.torch.conflict_functional.arange",
                        "torch.nn.utils.rnn.arange"))
