"""``tensor.numpy()`` / ``.asnumpy()`` without re-parsing the buffer's format string in Python on every call.

MindSpore's ``Tensor.asnumpy`` hands its buffer to numpy through pybind11, which builds the array's dtype from the
PEP 3118 format string (``"<f"``, ``"<q"``...) by calling numpy's pure-Python parser
``numpy.core._internal._dtype_from_pep3118`` (pybind11 ``numpy.h``, ``dtype(const std::string &format)``) on
every call. Measured on this CPU: ``x.numpy()`` of a 20-element float32 tensor 15 us, of which ~10 us is that
parser; MindTorch's DataLoader collates a batch of tensor samples by calling ``.numpy()`` on each sample
(``mindtorch/torch/utils/data/_utils/collate.py``), so the ddp tutorial's 32-sample batches of two tensors paid
~0.6 ms per step in it (PyTorch's whole step: 0.2 ms).

Here the parser is memoized per format string, for results without fields or sub-arrays (a plain dtype: numpy's
own builtin dtypes are immutable singletons; a structured dtype's field names can be reassigned, so those are
parsed anew every time). Same dtype objects' values, same arrays; numpy's own uses of the parser
(``np.array(memoryview)``) get the same memo.

pybind11 looks the parser up once, at its first use, which is during ``import mindspore``: hence the
``"pre-mindspore"`` phase (``app/launcher.py`` ``setup_mindspore`` installs it before importing MindSpore; a
process that imported MindSpore first keeps the unmemoized parser, with the same results).

Replaces: ``numpy.core._internal._dtype_from_pep3118`` (numpy 1.x; ``numpy._core._internal`` in numpy 2).
"""
from __future__ import annotations

import functools
import importlib

from . import Patch, get_original, patch_attr

_installed = None  # the memoized parser apply() installs: built once, so a second apply installs the same one


def _module_name() -> str:
    """``numpy.core._internal`` (numpy 1.x) or ``numpy._core._internal`` (numpy 2): see :func:`_internal_module`."""
    import numpy
    return "numpy.core._internal" if int(numpy.__version__.split(".")[0]) < 2 else "numpy._core._internal"


def _internal_module():
    """numpy's module whose ``_dtype_from_pep3118`` pybind11 calls: ``numpy.core._internal`` in numpy 1.x (1.26
    also has a ``numpy._core`` that forwards to it: patching there would change nothing), ``numpy._core._internal``
    from numpy 2."""
    try:
        module = importlib.import_module(_module_name())
    except ImportError:
        return None
    return module if hasattr(module, "_dtype_from_pep3118") else None


def memoized(parse):
    """``parse(spec) -> numpy.dtype`` with plain results (no fields, no sub-array) kept per ``spec``."""
    memo: dict = {}

    @functools.wraps(parse)
    def _dtype_from_pep3118(spec):
        dtype = memo.get(spec)
        if dtype is None:
            dtype = parse(spec)
            if dtype.fields is None and dtype.subdtype is None and len(memo) < 256:
                memo[spec] = dtype
        return dtype

    _dtype_from_pep3118._adapter_memo = memo
    return _dtype_from_pep3118


def apply() -> None:
    global _installed
    module = _internal_module()
    if module is None:
        return
    if _installed is None:
        _installed = memoized(get_original(module, "_dtype_from_pep3118"))
    patch_attr(module, "_dtype_from_pep3118", _installed)


PATCH = Patch("numpy_buffer_dtype", "tensor.numpy() without numpy re-parsing the buffer format in Python each call "
                                    "(memoized; ~10 of 15 us per call, per sample in DataLoader collation)",
              "pre-mindspore", apply, replaces=(f"{_module_name()}._dtype_from_pep3118",))
