"""``torch.arange`` / ``mindspore.ops.arange``: the output dtype follows this call's inputs, not an earlier call's.

What it replaces: ``mindspore.ops.Range.__call__`` (the primitive behind ``ops.arange``, hence MindTorch's
``torch.arange``, and MindSpore's own slice indexing), class-wide, so every instance is covered.

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
"""
from . import Patch

# Distinct offsets per input dtype (by name, so that this module imports nothing from MindSpore at import time).
_DTYPE_TAGS = {name: i + 1 for i, name in enumerate(
    ("Int64", "Int32", "Float32", "Float64", "Float16", "BFloat16", "Int16", "Int8", "UInt8", "UInt16", "UInt32",
     "UInt64"))}


def _range_call(self, start, end, step):
    """``Range()(start, end, step)`` with ``maxlen`` tagged by ``start``'s dtype (see the module docstring)."""
    from mindspore.ops.primitive import Primitive
    maxlen = self.maxlen
    dtype = getattr(start, "dtype", None)
    if dtype is not None:
        maxlen = maxlen + _DTYPE_TAGS.get(str(dtype), 0)
    return Primitive.__call__(self, start, end, step, maxlen)


def apply() -> None:
    from mindspore.ops.auto_generate.gen_ops_prim import Range
    if getattr(Range.__call__, "_adapter_patched", False):
        return
    _range_call._adapter_patched = True
    Range.__call__ = _range_call


PATCH = Patch("range_dtype", "arange/Range: output dtype follows the call's inputs (MindSpore's kernel cache "
              "reused an earlier call's dtype for equal values)", "pre-import", apply)
