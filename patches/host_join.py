"""``torch.stack`` / ``torch.cat`` of host tensors outside a gradient recording: joined by numpy, MindTorch's values.

A training script's data code joins small tensors eagerly, every step, outside the forward: nanoGPT's ``get_batch``
(``torch.stack([data[i:i + block] for i in ix])``, twice a step), a sampling loop's ``torch.cat((idx, idx_next),
dim=1)``. MindTorch 0.4.0 runs each through MindSpore's ``Stack`` / ``Concat`` kernel (``mindtorch/torch/
functional.py``: inputs converted one by one, their dtypes compared, one kernel launch): measured 300-700 us a call
for 8 int64 rows of 64 on this 2-core CPU (``bench/eager_ops.py``; PyTorch: 2-3 us), two thirds of it
Python-side conversions and checks.

Here, on the CPU device, when every input is a MindTorch ``Tensor`` (not a ``Parameter``) of one dtype that numpy
holds exactly (bool, int8/16/32/64, uint8, float16/32/64), none requires grad or was rebound by an in-place write
(``adapter/backend_compat.py`` section 13), no gradient recording is open (``backend.grad_flag()``: nothing would
have been recorded; the eager bridge's recording, ``mindspore.value_and_grad``'s), ``out`` is not given and the
shapes are ones the kernel accepts (``stack``: all equal, ``dim`` in ``[-(ndim + 1), ndim]``; ``cat``: equal ndim
>= 1, equal sizes except along ``dim``, ``dim`` in ``[-ndim, ndim)``), the result is ``numpy.stack`` /
``numpy.concatenate`` of the inputs' host arrays (``Tensor.asnumpy()``: a view's own elements) wrapped as a new
tensor: the same elements (a join copies, it computes nothing), dtype and shape as MindSpore's kernel gives, a new
tensor that shares memory with no input (PyTorch's and MindTorch's join copy too), ``requires_grad`` False as
MindTorch's. Anything else (mixed dtypes, which MindTorch promotes; bfloat16/complex; a recording open; another
device; ``out=``; a shape or ``dim`` the kernel would refuse, so that its error is raised) takes MindTorch's
function unchanged. Inside compiled graphs MindTorch's function runs (the graph compiler parses it).

Replaces: ``torch.stack``, ``torch.cat`` (and ``mindtorch.torch.functional``'s).
"""
from __future__ import annotations

from . import Patch, get_original, patch_attr

# bound by apply()
_original_stack = _original_cat = None
_on_cpu = False
_Tensor = _ms_tensor = _adapter_tensor = _grad_flag = graph_mode_condition = _np = None
_dtype_of = None  # the dtype getter of MindTorch's Tensor's base class (MindTorch's Tensor.dtype converts first)
_NUMPY_EXACT: frozenset = frozenset()
_resolved = None  # adapter/backend_compat.resolved: the tensor an in-place write rebound this one to (section 13)


def _host_arrays(tensors):
    """The inputs' host arrays when the fast path applies to them (module docstring), else None."""
    if not _on_cpu or type(tensors) not in (list, tuple) or not tensors or _grad_flag():
        return None
    dtype = None
    arrays = []
    for t in tensors:
        if type(t) is not _Tensor or t.requires_grad or _resolved(t) is not t:
            return None
        if dtype is None:
            dtype = _dtype_of(t)
            if dtype not in _NUMPY_EXACT:
                return None
        elif _dtype_of(t) != dtype:
            return None
        arrays.append(t.asnumpy())
    return arrays


def _wrap(array):
    return _adapter_tensor(_ms_tensor(array))


def stack(tensors, dim=0, *, out=None, axis=0):
    """``torch.stack``: numpy's on the host where the module docstring's conditions hold, else MindTorch's."""
    if graph_mode_condition():  # parsed by the graph compiler: MindTorch's function, first
        return _original_stack(tensors, dim, out=out, axis=axis)
    if out is None and type(dim) is int and type(axis) is int:
        arrays = _host_arrays(tensors)
        if arrays is not None:
            shape = arrays[0].shape
            axis_ = axis if dim == 0 else dim  # MindTorch's rule: dim=0 means axis
            if all(a.shape == shape for a in arrays) and -(len(shape) + 1) <= axis_ <= len(shape):
                return _wrap(_np.stack(arrays, axis_))
    return _original_stack(tensors, dim, out=out, axis=axis)


def cat(tensors, dim=0, *, out=None, axis=0):
    """``torch.cat``: numpy's on the host where the module docstring's conditions hold, else MindTorch's."""
    if graph_mode_condition():  # parsed by the graph compiler: MindTorch's function, first
        return _original_cat(tensors, dim, out=out, axis=axis)
    if out is None and type(dim) is int and type(axis) is int:
        arrays = _host_arrays(tensors)
        if arrays is not None:
            ndim = arrays[0].ndim
            axis_ = axis if dim == 0 else dim
            if ndim >= 1 and -ndim <= axis_ < ndim:
                keep = [i for i in range(ndim) if i != axis_ % ndim]
                first = arrays[0].shape
                if all(a.ndim == ndim and all(a.shape[i] == first[i] for i in keep) for a in arrays):
                    return _wrap(_np.concatenate(arrays, axis_))
    return _original_cat(tensors, dim, out=out, axis=axis)


def apply() -> None:
    global _on_cpu, _Tensor, _ms_tensor, _adapter_tensor, _grad_flag, graph_mode_condition, _np, _NUMPY_EXACT
    global _dtype_of, _original_stack, _original_cat, _resolved
    import numpy
    import mindspore
    import mindtorch.torch as torch
    import mindtorch.torch.functional as functional
    from mindtorch.torch.tensor import Tensor, cast_to_adapter_tensor
    from mindtorch.utils import graph_mode_condition
    from adapter import backend
    from adapter.backend_compat import resolved as _resolved
    _np, _Tensor, _ms_tensor, _adapter_tensor, _grad_flag = numpy, Tensor, mindspore.Tensor, cast_to_adapter_tensor, \
        backend.grad_flag
    _on_cpu = mindspore.get_context("device_target") == "CPU"
    # MindSpore's dtype property of the class MindTorch's Tensor derives from (2.10: the StubTensor shim over
    # TensorPy; 2.5: StubTensor): 0.2-1.3 us where MindTorch's Tensor.dtype (a conversion first) takes 4-12 us
    base_dtype = getattr(Tensor.__bases__[0], "dtype", None)
    _dtype_of = base_dtype.fget if isinstance(base_dtype, property) else (lambda t: t.dtype)
    _NUMPY_EXACT = frozenset((mindspore.bool_, mindspore.int8, mindspore.int16, mindspore.int32, mindspore.int64,
                              mindspore.uint8, mindspore.float16, mindspore.float32, mindspore.float64))
    _original_stack, _original_cat = get_original(functional, "stack"), get_original(functional, "cat")
    for name, ours in (("stack", stack), ("cat", cat)):
        patch_attr(functional, name, ours)
        patch_attr(torch, name, ours)


PATCH = Patch("host_join", "torch.stack/cat of CPU tensors outside a gradient recording joined by numpy on the host: "
                           "MindTorch's values without its conversions and a kernel launch (get_batch's stacks)",
              "post-import", apply,
              replaces=("torch.stack", "torch.cat", "torch.functional.stack", "torch.functional.cat"))
