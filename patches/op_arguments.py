"""Arguments of ``torch`` functions as PyTorch 2.13 takes and checks them.

Replaces:

* ``torch.mm`` / ``Tensor.mm``: raise PyTorch's ``RuntimeError`` unless both operands are 2-D (MindSpore's MatMul
  took a 1-D ``self`` and returned a result); ``torch.bmm`` / ``Tensor.bmm``: 3-D only (MindSpore broadcast 2-D);
* ``torch.norm`` / ``Tensor.norm`` with a number ``p`` and ``dim=None``: the vector norm of all elements, as
  PyTorch's ``torch.norm`` (MindTorch took a 2-D input's matrix norm: ``p=inf`` gave the maximum row sum, 6.0 for
  ``[[1, -5], [2, 3]]`` where PyTorch's is 5.0; ``p=1`` raised NotImplementedError); ``dim`` given as a list
  (``torch.norm(x, "fro", [0, 1])``, op_db's ``norm.fro``/``norm.nuc``) as the tuple MindTorch takes (it raised
  ``TypeError: For norm, the dim should be int or tuple of int``);
* ``torch.linalg.vector_norm`` over several dimensions (``dim=(0, 2)``, ``dim=(-2, -1)``, ``dim=()``), and
  ``torch.norm`` / ``Tensor.norm`` with a number ``p`` and such a ``dim``: the vector norm of the elements in those
  dimensions, as PyTorch (``linalg.vector_norm``'s formula ``(sum |x|^ord)^(1/ord)``, max/min ``|x|`` for +-inf, the
  count of nonzeros for 0). MindTorch passed them to ``mindspore.ops.norm``, which takes two dimensions as a
  *matrix* norm: ``vector_norm(x, 2, (0, 2))`` was the spectral norm, ``ord=1`` the largest column sum, ``ord=inf``
  the largest row sum (silently: 14.29 where PyTorch's is 14.42 on the test's tensor), 3 or more dimensions and
  ``ord`` 0 or 3.5 raised. Here the dimensions are moved last (``permute``), flattened into one and reduced by the
  replaced function along it; ``keepdim`` restores size-1 dimensions; PyTorch's errors for a repeated or
  out-of-range dimension; compiled too (the plan is a ``constexpr``);
* ``torch.std`` / ``torch.var`` / ``Tensor.std`` / ``Tensor.var``: ``correction=`` (PyTorch >= 2.0; TypeError here)
  as ``unbiased=(correction == 1)``; other corrections raise NotImplementedError naming the call;
* ``torch.squeeze`` / ``Tensor.squeeze`` with a tuple of dims (PyTorch >= 2.0): each size-1 dim removed, compiled too
  (a plain function, no ``__wrapped__``: MindSpore's graph parser compiles ``inspect.unwrap(fn)``);
* ``torch.arange``: PyTorch's errors for ``step == 0`` and a step whose sign disagrees with ``end - start`` (in a
  compiled graph MindSpore's ``Range`` shape inference aborted the whole process: "terminate called after throwing
  an instance of 'pybind11::value_error'");
* ``torch.device``: PyTorch's ``RuntimeError`` for an unknown device type (MindTorch accepted any string).

Replaces: ``torch.X``, ``torch.functional.X`` and ``torch.Tensor.X`` for X in ``mm``, ``bmm``, ``squeeze``, ``std``,
``var``, ``norm``; ``torch.linalg.vector_norm``; ``torch.arange``; ``torch.device.__init__``.
"""
import functools

from . import Patch, get_replaced, patch_attr
from ._wrap_once import wrap_attr

torch = None  # mindtorch.torch, set by apply() (an import inside a function does not compile in graph mode)

# PyTorch 2.13's c10::DeviceType names (c10/core/DeviceType.cpp), as its error message lists them
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


def _mm(original, name, ndim):
    @functools.wraps(original)
    def wrapper(input, mat2, *args, **kwargs):
        if input.dim() != ndim:
            raise RuntimeError(f"self must be a matrix" if ndim == 2 else "batch1 must be a 3D tensor")
        if mat2.dim() != ndim:
            raise RuntimeError(f"mat2 must be a matrix" if ndim == 2 else "batch2 must be a 3D tensor")
        return original(input, mat2, *args, **kwargs)
    return wrapper


def _norm(original):
    @functools.wraps(original)
    def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
        if isinstance(dim, list):  # PyTorch takes a list of dims; MindTorch's TypeError: "int or tuple of int"
            dim = tuple(dim)
        if dim is None and isinstance(p, (int, float)) and not isinstance(p, bool) and input.dim() > 1:
            flat = input.reshape(-1)
            if p == float("inf"):
                result = flat.abs().amax()  # PyTorch's gradient: shared evenly among the maxima
            elif p == float("-inf"):
                result = flat.abs().amin()
            else:
                result = torch.linalg.vector_norm(flat, p)
            if keepdim:
                result = result.reshape((1,) * input.dim())
            if dtype is not None:
                result = result.to(dtype)
            return result if out is None else out.copy_(result)
        if _is_number(p) and isinstance(dim, tuple) and len(dim) != 1:
            result = torch.linalg.vector_norm(input, p, dim, keepdim, dtype=dtype)  # PyTorch's torch.norm does so
            return result if out is None else out.copy_(result)
        if out is not None:
            return original(input, p, dim, keepdim, out=out, dtype=dtype)
        return original(input, p, dim, keepdim, dtype=dtype)
    return norm


def _is_number(p):
    return isinstance(p, (int, float)) and not isinstance(p, bool)


def _vector_norm_plan_python(shape, dims):
    """``(perm, flat_shape, kept_shape)`` for a vector norm of a ``shape`` tensor over ``dims`` (a tuple, ``()``
    for every dimension): ``permute(perm)`` moves ``dims`` last in their given order, ``reshape(flat_shape)`` flattens
    them into the last dimension, ``kept_shape`` is the ``keepdim=True`` result's shape (a ``constexpr``,
    :data:`_vector_norm_plan`).

    Raises:
        IndexError: a dimension out of range (PyTorch's message).
        RuntimeError: a dimension given twice (PyTorch's message).
    """
    n = len(shape)
    if not dims:
        dims = tuple(range(n))
    bound = max(n, 1)
    seen = []
    for d in dims:
        if d < -bound or d >= bound:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got "
                             f"{d})")
        d = d % bound
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.append(d)
    if n == 0:
        return (), (1,), ()
    rest = tuple(i for i in range(n) if i not in seen)
    size = 1
    for d in seen:
        size *= shape[d]
    return (rest + tuple(seen), tuple(shape[i] for i in rest) + (size,),
            tuple(1 if i in seen else shape[i] for i in range(n)))


_vector_norm_plan = None  # constexpr(_vector_norm_plan_python), bound by apply()


def _vector_norm(original):
    # not functools.wraps: a compiled graph parses inspect.unwrap(fn), which would be MindTorch's vector_norm
    def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002 (PyTorch's names)
        if isinstance(dim, list):
            dim = tuple(dim)
        if isinstance(dim, tuple) and len(dim) != 1:
            perm, flat_shape, kept_shape = _vector_norm_plan(_shape(x), dim)
            result = original(x.permute(perm).reshape(flat_shape), ord, -1, False, dtype=dtype)
            if keepdim:
                result = result.reshape(kept_shape)
            return result if out is None else out.copy_(result)
        if out is None:
            return original(x, ord, dim, keepdim, dtype=dtype)
        return original(x, ord, dim, keepdim, dtype=dtype, out=out)
    vector_norm.__name__ = vector_norm.__qualname__ = "vector_norm"
    vector_norm.__doc__ = """``torch.linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None)``:
    over several dimensions the vector norm of their elements (``patches/op_arguments.py``); a result of ``x``'s shape
    without ``dim`` (size 1 with ``keepdim``)."""
    return vector_norm


def _std_var(original, name):
    @functools.wraps(original)
    def wrapper(input, dim=None, *args, correction=None, **kwargs):
        if correction is not None:
            if args or "unbiased" in kwargs:
                raise TypeError(f"{name}() received both unbiased and correction")
            if correction not in (0, 1):
                raise NotImplementedError(f"torch.{name}(correction={correction}): only 0 and 1 are supported here")
            kwargs["unbiased"] = correction == 1
        return original(input, dim, *args, **kwargs)
    return wrapper


def _squeezed_shape(shape, dims):
    """``shape`` without the dimensions of ``dims`` whose size is 1; PyTorch's IndexError for one out of range (a
    ``constexpr`` in compiled graphs, :data:`_squeezed`)."""
    n = max(len(shape), 1)
    for d in dims:
        if d < -n or d >= n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    drop = [d % n for d in dims]
    return tuple(s for i, s in enumerate(shape) if not (i in drop and s == 1))


_squeezed = _shape = None  # constexpr(_squeezed_shape) and mindspore.ops.shape, bound by apply()


def _squeeze(original):
    # not functools.wraps: MindSpore's graph parser compiles inspect.unwrap(fn), i.e. MindTorch's squeeze, whose
    # shape[dim] lookup failed on a tuple in compiled code ("tuple indices must be integers or slices, not tuple";
    # op_db's squeeze.multiple, issue 35); the shape is computed by a constexpr there
    def squeeze(input, dim=None):
        if isinstance(dim, (tuple, list)):
            return input.reshape(_squeezed(_shape(input), tuple(dim)))
        if dim is None:
            return original(input)
        return original(input, dim)
    squeeze.__name__ = squeeze.__qualname__ = "squeeze"
    squeeze.__doc__ = original.__doc__
    return squeeze


def _arange(original):
    @functools.wraps(original)
    def arange(*args, **kwargs):
        numbers = [a for a in args if isinstance(a, (int, float)) and not isinstance(a, bool)]
        if len(numbers) == len(args) and len(args) >= 2:
            start, end = args[0], args[1]
            step = args[2] if len(args) > 2 else kwargs.get("step", 1)
            if isinstance(step, (int, float)):
                if step == 0:
                    raise RuntimeError("step must be nonzero")
                if (end - start) * step < 0:
                    raise RuntimeError("upper bound and lower bound inconsistent with step sign")
        return original(*args, **kwargs)
    return arange


_tensor_norm = None  # _norm(the Tensor.norm this patch replaced), set by apply()
_device_init = None  # the torch.device.__init__ this patch replaced, set by apply()


def tensor_norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    """``Tensor.norm``: ``torch.norm``'s rules (:func:`_norm`)."""
    return _tensor_norm(self, p, dim, keepdim, dtype=dtype)


def device_init(self, type=None, index=None):
    """``torch.device(type, index)``; raises PyTorch's ``RuntimeError`` for a device type outside
    :data:`DEVICE_TYPES`."""
    if isinstance(type, str):
        kind = type.split(":")[0]
        if kind not in DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device "
                               f"string: {type}")
    _device_init(self, type, index)


def apply() -> None:
    global torch, _tensor_norm, _device_init, _squeezed, _shape, _vector_norm_plan
    import mindspore
    import mindtorch.torch
    from mindspore.ops.primitive import constexpr
    torch = mindtorch.torch
    _squeezed, _shape = constexpr(_squeezed_shape), mindspore.ops.shape
    _vector_norm_plan = constexpr(_vector_norm_plan_python)
    import mindtorch.torch.functional as functional
    from mindtorch.torch.tensor import Tensor
    from mindtorch.torch.types import device
    for owner in (torch, functional, Tensor):  # std/var/mm/bmm: stacked on empty_reductions/result_dtypes
        wrap_attr(owner, "mm", NAME, lambda original: _mm(original, "mm", 2))
        wrap_attr(owner, "bmm", NAME, lambda original: _mm(original, "bmm", 3))
        wrap_attr(owner, "squeeze", NAME, _squeeze)
        wrap_attr(owner, "std", NAME, lambda original: _std_var(original, "std"))
        wrap_attr(owner, "var", NAME, lambda original: _std_var(original, "var"))
    patch_attr(functional, "norm", wrap_attr(torch, "norm", NAME, _norm))
    _tensor_norm = _norm(get_replaced(Tensor, "norm", NAME))
    patch_attr(Tensor, "norm", tensor_norm)
    wrap_attr(torch, "arange", NAME, _arange)
    import mindtorch.torch.linalg as linalg
    wrap_attr(linalg, "vector_norm", NAME, _vector_norm)
    _device_init = get_replaced(device, "__init__", NAME)
    patch_attr(device, "__init__", device_init)


NAME = "op_arguments"
PATCH = Patch(NAME, "PyTorch's argument checks and forms: mm/bmm ranks, torch.norm(p=number) as a vector "
                    "norm, linalg.vector_norm over several dims (a matrix norm before), std/var correction=, squeeze(tuple), arange step errors (a zero step aborted "
                    "a compiled graph), unknown torch.device types", "post-import", apply,
              replaces=tuple(f"{owner}.{name}" for owner in ("torch", "torch.functional", "torch.Tensor")
                             for name in ("mm", "bmm", "squeeze", "std", "var", "norm"))
              + ("torch.linalg.vector_norm", "torch.arange", "torch.device.__init__"),
              after=("range_dtype", "empty_reductions", "result_dtypes"))
