"""PyTorch's checks of bad inputs that MindSpore accepts, returning a value where PyTorch raises (a silent wrong result).

Each was found by PyTorch's own ``error_inputs`` (``run.py conformance --opinfo``, verdict ``no error``); each check
raises PyTorch's class with PyTorch's message, before MindTorch's function runs:

* ``torch.t`` / ``Tensor.t`` of a tensor with more than 2 dimensions (MindTorch transposed it);
  ``torch.trace`` / ``Tensor.trace`` of a tensor that is not a matrix (MindTorch summed a diagonal);
* ``F.embedding`` with a ``weight`` that is not 2-D; ``F.group_norm`` with fewer than 2 dimensions or channels not
  divisible by ``num_groups``; ``F.rms_norm`` with an empty ``normalized_shape`` or a ``weight`` of another shape;
  ``F.hardtanh`` with ``min_val > max_val``; ``F.triplet_margin_loss`` / ``F.triplet_margin_with_distance_loss`` with
  ``margin <= 0`` or an unknown ``reduction``; ``F.adaptive_max_pool1d`` with a negative output size;
* ``torch.roll`` / ``Tensor.roll`` with no shifts, or shifts and dims of different lengths (MindTorch rolled by the
  first shift); ``torch.linalg.cross`` of inputs with different ranks or a dimension other than 3;
  ``torch.isclose`` / ``Tensor.isclose`` with a negative ``rtol`` / ``atol``; ``torch.mean`` / ``Tensor.mean`` with
  an integer ``dtype=``; ``torch.multinomial`` / ``Tensor.multinomial`` of integer probabilities or into a non-int64
  ``out=``; ``torch.masked_scatter`` / ``Tensor.masked_scatter`` with a mask that is not bool;
* ``out=`` that PyTorch refuses: ``torch.gather`` into an ``out`` of another dtype; ``torch.masked_select`` /
  ``torch.kthvalue`` / ``torch.take`` writing into one of their own inputs.

PyNative only: MindSpore's graph parser compiles ``inspect.unwrap`` of these ``functools.wraps`` wrappers
(MindTorch's functions), so a compiled step does not check (listed in docs/opinfo.md).

Replaces: the names in :data:`CHECKS` on their owners (``torch``, ``torch.Tensor``, ``torch.nn.functional``,
``torch.linalg``). Must come after the patches that replaced them before (``after``), and before ``torch_errors``
(which wraps every public function).
"""
from __future__ import annotations

import functools
import importlib

from . import Patch
from ._wrap_once import wrap_attr

NAME = "input_checks"

#: PyTorch's ScalarType names (error messages: "Got: Long")
_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
                 "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
                 "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
#: C++ type names PyTorch's out= checks print ("Expected out tensor to have dtype float, but got double instead")
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool"}
_ALIAS = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
          "memory location. Please clone() the tensor before performing the operation.")


def _dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def _scalar(tensor) -> str:
    name = _dtype_name(tensor.dtype)
    return _SCALAR_NAMES.get(name, name)


def _floating(dtype) -> bool:
    return _dtype_name(dtype) in ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


def _t(input, *args, **kwargs):
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.dim()}D")


def _trace(input, *args, **kwargs):
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")


def _embedding(input, weight, *args, **kwargs):
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")


def _group_norm(input, num_groups, *args, **kwargs):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    if isinstance(num_groups, int) and num_groups > 0 and input.shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")


def _rms_norm(input, normalized_shape, weight=None, *args, **kwargs):
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if weight is not None and list(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {shape}")


def _hardtanh(input, min_val=-1.0, max_val=1.0, *args, **kwargs):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")


def _triplet(anchor, positive, negative, *args, margin=1.0, reduction="mean", **kwargs):
    if args:  # triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, size_average, reduce, reduction)
        margin = args[0]
        if len(args) >= 7:
            reduction = args[6]
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _adaptive_max_pool1d(input, output_size, *args, **kwargs):
    sizes = (output_size,) if isinstance(output_size, int) else tuple(output_size)
    negative = [s for s in sizes if isinstance(s, int) and s < 0]
    if negative:
        shape = list(input.shape[:-1]) + ([1] if input.dim() else []) + list(sizes)
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: {shape}")


def _roll(input, shifts=None, dims=None, *args, **kwargs):
    shift_list = [shifts] if isinstance(shifts, int) else list(shifts) if shifts is not None else []
    if not shift_list:
        raise RuntimeError("`shifts` required")
    if dims is not None:
        dim_list = [dims] if isinstance(dims, int) else list(dims)
        if len(shift_list) != len(dim_list):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shift_list)}, dims:{len(dim_list)}")
    elif len(shift_list) != 1:
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shift_list)}, dims:0")


def _cross(input, other, *args, dim=-1, **kwargs):
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if isinstance(dim, int) and -input.dim() <= dim < input.dim():
        a, b = input.shape[dim], other.shape[dim]
        if a != 3 or b != 3:
            raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a} and {b}")


def _isclose(input, other, rtol=1e-05, atol=1e-08, *args, **kwargs):
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")


def _mean(input, *args, dtype=None, **kwargs):
    if dtype is None and len(args) >= 3 and not isinstance(args[2], bool):  # Tensor.mean(dim, keepdim, dtype)
        dtype = args[2]
    if dtype is not None and not _floating(dtype):
        name = _dtype_name(dtype)
        raise RuntimeError(f"mean(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {_SCALAR_NAMES.get(name, name)}")


def _multinomial(input, *args, out=None, **kwargs):
    if not _floating(input.dtype):
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_scalar(input)}")
    if out is not None and _dtype_name(out.dtype) != "int64":
        raise RuntimeError(f"multinomial expects Long tensor out, got: {_scalar(out)}")


def _masked_scatter(input, mask, *args, **kwargs):
    if _dtype_name(mask.dtype) != "bool":
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {_scalar(mask)}")


def _gather(input, *args, out=None, **kwargs):
    if out is not None and out.dtype != input.dtype:
        want, got = _dtype_name(input.dtype), _dtype_name(out.dtype)
        raise RuntimeError(f"Expected out tensor to have dtype {_CPP_NAMES.get(want, want)}, but got "
                           f"{_CPP_NAMES.get(got, got)} instead")


def _no_alias(input, *args, out=None, **kwargs):
    if out is None:
        return
    outs = out if isinstance(out, (tuple, list)) else (out,)
    inputs = (input,) + args + tuple(kwargs.values())
    if any(o is i for o in outs for i in inputs):
        raise RuntimeError(_ALIAS)


#: (owner paths, name, check): the check takes the function's arguments and raises where PyTorch raises
CHECKS = (
    (("torch", "torch.Tensor"), "t", _t),
    (("torch", "torch.Tensor"), "trace", _trace),
    (("torch.nn.functional",), "embedding", _embedding),
    (("torch.nn.functional",), "group_norm", _group_norm),
    (("torch.nn.functional",), "rms_norm", _rms_norm),
    (("torch.nn.functional",), "hardtanh", _hardtanh),
    (("torch.nn.functional",), "triplet_margin_loss", _triplet),
    (("torch.nn.functional",), "triplet_margin_with_distance_loss", _triplet),
    (("torch.nn.functional",), "adaptive_max_pool1d", _adaptive_max_pool1d),
    (("torch", "torch.Tensor"), "roll", _roll),
    (("torch.linalg",), "cross", _cross),
    (("torch", "torch.Tensor"), "isclose", _isclose),
    (("torch", "torch.Tensor"), "mean", _mean),
    (("torch", "torch.Tensor"), "multinomial", _multinomial),
    (("torch", "torch.Tensor"), "masked_scatter", _masked_scatter),
    (("torch",), "gather", _gather),
    (("torch",), "masked_select", _no_alias),
    (("torch",), "kthvalue", _no_alias),
    (("torch",), "take", _no_alias),
)


def _checked(fn, check):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        check(*args, **kwargs)
        return fn(*args, **kwargs)
    return call


def _take_out(fn):
    """``torch.take`` with PyTorch's ``out=`` (MindTorch's takes none: a TypeError): the aliasing check, then the
    result copied into ``out``."""
    @functools.wraps(fn)
    def take(input, index, *, out=None):
        _no_alias(input, index, out=out)
        result = fn(input, index)
        return result if out is None else out.copy_(result)
    return take


def _owner(path: str):
    if path == "torch.Tensor":
        from mindtorch.torch.tensor import Tensor
        return Tensor
    return importlib.import_module("mindtorch." + path)


def apply() -> None:
    for owners, name, check in CHECKS:
        for path in owners:
            if name == "take":
                wrap_attr(_owner(path), name, NAME, _take_out)
            else:
                wrap_attr(_owner(path), name, NAME, lambda fn, check=check: _checked(fn, check))


PATCH = Patch(NAME, "PyTorch's checks of bad inputs MindSpore computed a value for (t/trace of >2-D, roll shifts, "
                    "group_norm/rms_norm/embedding shapes, isclose/hardtanh/triplet margins, mean/multinomial "
                    "dtypes, out= aliasing)", "post-import", apply,
              replaces=tuple(f"{path}.{name}" for owners, name, _ in CHECKS for path in owners),
              after=("embedding", "normalization", "reduction_input", "empty_reductions", "result_dtypes",
                     "generator", "roll_empty", "cross_broadcast"))
