"""Matrix factorizations of inputs with no elements return PyTorch's empty results instead of killing the process.

MindSpore's CPU kernels divide by a zero size or trip an Eigen assertion on an empty matrix, and the process dies
with no Python error (found by PyTorch's OpInfo samples, ``run.py conformance --opinfo``, issue 35; measured on
mindspore 2.10 with MindTorch 0.4.0, each call alone in a child process): ``torch.cholesky``/``torch.linalg.cholesky``/
``torch.linalg.cholesky_ex``/``torch.linalg.eig``/``torch.linalg.eigvals`` of a (0, 0) matrix and ``torch.geqrf`` of a
(0, 0) or (5, 0) one die of SIGFPE (exit status -8); ``torch.linalg.pinv(A, hermitian=True)`` of a (0, 0) or a
(0, 5, 5) batch dies of SIGABRT (Eigen's ``Redux.h`` assertion). An empty batch or an empty last batch of a
data-dependent size reaches these.

PyTorch 2.13's results (observed in ``.venv-ref``; ATen returns empty tensors without calling LAPACK):

* ``cholesky``, ``linalg.cholesky`` (``A`` of shape ``(*, n, n)``): a tensor of ``A``'s shape and dtype;
  ``linalg.cholesky_ex``: ``(L, info)``, ``info`` int32 zeros of shape ``*``;
* ``geqrf`` (``(*, m, n)``): ``(a, tau)``, ``a`` of ``A``'s shape, ``tau`` of shape ``(*, min(m, n))``;
* ``linalg.eig``: ``(eigenvalues (*, n), eigenvectors (*, n, n))``, ``linalg.eigvals``: ``(*, n)``, both complex
  (complex64 for float32 input, complex128 for float64);
* ``linalg.pinv`` (``(*, m, n)``, any ``hermitian``, ``rtol``, ``atol``): ``(*, n, m)`` of ``A``'s dtype.

The named tuples are ``torch.return_types``' (``patches/return_types.py``). The results hold no element, so their
gradients with respect to ``A`` are the empty zeros PyTorch gives. Non-square input to the square-only functions, and
inputs with fewer than two dimensions, still go to MindTorch, which raises. Compiled: the wrappers do nothing in a
graph (MindSpore's parser compiles the unwrapped original, which died the same way), so :func:`graph_forms` gives
plain functions with a ``constexpr`` shape test that ``adapter/graph_semantics.py`` swaps in while a graph compiles
(``register_graph_forms``, as ``patches/empty_reductions.py``); their multi-output results are plain tuples, as every
result that leaves a graph.

Replaces: ``torch.cholesky``, ``torch.geqrf`` (and ``mindtorch.torch.functional``'s where they are the same object),
``torch.Tensor.cholesky``, ``torch.Tensor.geqrf``, ``torch.linalg.cholesky/cholesky_ex/eig/eigvals/pinv``. Applied
after ``return_types`` (which wraps ``geqrf``, ``linalg.eig``, ``linalg.cholesky_ex``).
"""
import functools

from . import Patch, get_replaced, patch_attr
from ._wrap_once import wrap_attr

NAME = "empty_linalg"
torch = None  # mindtorch.torch, set by apply()

_COMPLEX = {"float32": "complex64", "float64": "complex128", "float16": "complex64"}


def _dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "").lower()


def _empty_result(name: str, a, args, kwargs):
    """PyTorch's result of ``name`` for ``a`` with no elements, or None where MindTorch's own call should run
    (elements present, fewer than 2 dimensions, or a non-square matrix to a square-only function)."""
    if not isinstance(a, torch.Tensor) or a.dim() < 2 or a.numel() != 0:
        return None
    shape = tuple(a.shape)
    batch, m, n = shape[:-2], shape[-2], shape[-1]
    if name in ("cholesky", "cholesky_ex", "eig", "eigvals") and m != n:
        return None
    if name == "cholesky":
        return torch.zeros(shape, dtype=a.dtype)
    if name == "cholesky_ex":
        from .return_types import TYPES
        return TYPES["linalg_cholesky_ex"](torch.zeros(shape, dtype=a.dtype), torch.zeros(batch, dtype=torch.int32))
    if name == "geqrf":
        from .return_types import TYPES
        return TYPES["geqrf"](torch.zeros(shape, dtype=a.dtype), torch.zeros(batch + (min(m, n),), dtype=a.dtype))
    if name in ("eig", "eigvals"):
        complex_dtype = getattr(torch, _COMPLEX.get(_dtype_name(a.dtype), "complex64"))
        values = torch.zeros(batch + (n,), dtype=complex_dtype)
        if name == "eigvals":
            return values
        from .return_types import TYPES
        return TYPES["linalg_eig"](values, torch.zeros(shape, dtype=complex_dtype))
    if name == "pinv":
        return torch.zeros(batch + (n, m), dtype=a.dtype)
    raise KeyError(name)


def _wrapper(name: str, original):
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        a = args[0] if args else kwargs.get("input", kwargs.get("A"))
        if kwargs.get("out") is None:
            result = _empty_result(name, a, args, kwargs)
            if result is not None:
                return result
        return original(*args, **kwargs)
    return wrapper


def _plan_python(name: str, shape) -> object:
    """The result shapes of ``name`` for an input of ``shape`` with no elements (a ``constexpr`` in graphs), or None
    where MindTorch's own call runs (as :func:`_empty_result`)."""
    shape = tuple(shape)
    if len(shape) < 2 or 0 not in shape:
        return None
    batch, m, n = shape[:-2], shape[-2], shape[-1]
    if name in ("cholesky", "cholesky_ex", "eig", "eigvals") and m != n:
        return None
    return {"cholesky": (shape,), "cholesky_ex": (shape, batch), "geqrf": (shape, batch + (min(m, n),)),
            "eig": (batch + (n,), shape), "eigvals": (batch + (n,),), "pinv": (batch + (n, m),)}[name]


def _complex_python(dtype):
    return ms.complex128 if dtype == ms.float64 else ms.complex64


ms = None
cast_to_adapter_tensor = None
_plan = _complex = None  # constexpr forms of _plan_python / _complex_python, made by apply()


def _zeros(shape, dtype):
    return cast_to_adapter_tensor(ms.ops.zeros(shape, dtype))


def graph_forms():
    """``[(owner, name, graph form)]`` that ``adapter/graph_semantics.py`` swaps in while a graph compiles (the
    wrappers above do nothing there: MindSpore's parser compiles the unwrapped original, which dies the same way):
    MindTorch's signatures, a ``constexpr`` shape test, zeros of PyTorch's result shapes for an empty matrix (plain
    tuples, as every result in a graph), else the original. Empty where this patch is not applied."""
    import inspect

    from adapter import patching
    if torch is None or not patching.records(NAME):
        return []
    import mindtorch.torch.functional as functional
    import mindtorch.torch.linalg as linalg
    from mindtorch.torch.tensor import Tensor
    items = [(linalg, n, n) for n in _LINALG] + [(torch, n, "torch." + n) for n in _TORCH] \
        + [(functional, n, "torch." + n) for n in _TORCH if hasattr(functional, n)] \
        + [(Tensor, n, "Tensor." + n) for n in _TORCH]
    out = []
    for owner, attr, form in items:
        original = inspect.unwrap(getattr(owner, attr))
        key = (id(owner), attr, original)
        if key not in _graph_made:
            _graph_made[key] = _GRAPH_FORMS[form](original)
        out.append((owner, attr, _graph_made[key]))
    return out


_graph_made: dict = {}


def _g_linalg_cholesky(original):
    def cholesky(A, *, upper=False, out=None):  # noqa: N803 (MindTorch's names)
        plan = _plan("cholesky", ms.ops.shape(A))
        if plan is None or out is not None:
            return original(A, upper=upper, out=out)
        return _zeros(plan[0], ms.ops.dtype(A))
    return cholesky


def _g_linalg_cholesky_ex(original):
    def cholesky_ex(A, *, upper=False, check_errors=False, out=None):  # noqa: N803
        plan = _plan("cholesky_ex", ms.ops.shape(A))
        if plan is None or out is not None:
            return original(A, upper=upper, check_errors=check_errors, out=out)
        return _zeros(plan[0], ms.ops.dtype(A)), _zeros(plan[1], ms.int32)
    return cholesky_ex


def _g_linalg_eig(original):
    def eig(A, *, out=None):  # noqa: N803
        plan = _plan("eig", ms.ops.shape(A))
        if plan is None or out is not None:
            return original(A, out=out)
        dtype = _complex(ms.ops.dtype(A))
        return _zeros(plan[0], dtype), _zeros(plan[1], dtype)
    return eig


def _g_linalg_eigvals(original):
    def eigvals(A, *, out=None):  # noqa: N803
        plan = _plan("eigvals", ms.ops.shape(A))
        if plan is None or out is not None:
            return original(A, out=out)
        return _zeros(plan[0], _complex(ms.ops.dtype(A)))
    return eigvals


def _g_linalg_pinv(original):
    def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):  # noqa: N803
        plan = _plan("pinv", ms.ops.shape(A))
        if plan is None or out is not None:
            return original(A, atol=atol, rtol=rtol, hermitian=hermitian, out=out)
        return _zeros(plan[0], ms.ops.dtype(A))
    return pinv


def _g_torch_cholesky(original):
    def cholesky(input, upper=False, *, out=None):  # noqa: A002
        plan = _plan("cholesky", ms.ops.shape(input))
        if plan is None or out is not None:
            return original(input, upper, out=out)
        return _zeros(plan[0], ms.ops.dtype(input))
    return cholesky


def _g_torch_geqrf(original):
    def geqrf(input, *, out=None):  # noqa: A002
        plan = _plan("geqrf", ms.ops.shape(input))
        if plan is None or out is not None:
            return original(input, out=out)
        return _zeros(plan[0], ms.ops.dtype(input)), _zeros(plan[1], ms.ops.dtype(input))
    return geqrf


def _g_tensor_cholesky(original):
    def cholesky(self, upper=False):
        plan = _plan("cholesky", ms.ops.shape(self))
        if plan is None:
            return original(self, upper)
        return _zeros(plan[0], ms.ops.dtype(self))
    return cholesky


def _g_tensor_geqrf(original):
    def geqrf(self):
        plan = _plan("geqrf", ms.ops.shape(self))
        if plan is None:
            return original(self)
        return _zeros(plan[0], ms.ops.dtype(self)), _zeros(plan[1], ms.ops.dtype(self))
    return geqrf


_GRAPH_FORMS = {"cholesky": _g_linalg_cholesky, "cholesky_ex": _g_linalg_cholesky_ex, "eig": _g_linalg_eig,
                "eigvals": _g_linalg_eigvals, "pinv": _g_linalg_pinv, "torch.cholesky": _g_torch_cholesky,
                "torch.geqrf": _g_torch_geqrf, "Tensor.cholesky": _g_tensor_cholesky, "Tensor.geqrf": _g_tensor_geqrf}

_TORCH = ("cholesky", "geqrf")
_LINALG = ("cholesky", "cholesky_ex", "eig", "eigvals", "pinv")


def apply() -> None:
    global torch, ms, cast_to_adapter_tensor, _plan, _complex
    import mindspore
    import mindtorch.torch as torch
    from mindspore.ops.primitive import constexpr
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter
    from adapter import graph_semantics
    ms, cast_to_adapter_tensor = mindspore, to_adapter
    if _plan is None:
        _plan, _complex = constexpr(_plan_python), constexpr(_complex_python)
    import mindtorch.torch.functional as functional
    import mindtorch.torch.linalg as linalg
    from mindtorch.torch.tensor import Tensor
    for name in _TORCH:
        original = get_replaced(torch, name, NAME)
        shared = hasattr(functional, name) and get_replaced(functional, name, NAME) is original
        wrapped = wrap_attr(torch, name, NAME, functools.partial(_wrapper, name))
        if shared:
            patch_attr(functional, name, wrapped)
        wrap_attr(Tensor, name, NAME, functools.partial(_wrapper, name))
    for name in _LINALG:
        wrap_attr(linalg, name, NAME, functools.partial(_wrapper, name))
    graph_semantics.register_graph_forms(graph_forms)


PATCH = Patch(NAME, "cholesky/geqrf/linalg.cholesky/cholesky_ex/eig/eigvals/pinv of matrices with no elements "
                    "return PyTorch's empty results (MindSpore's CPU kernels killed the process: SIGFPE, SIGABRT)",
              "post-import", apply,
              replaces=tuple(f"torch.{n}" for n in _TORCH) + tuple(f"torch.functional.{n}" for n in _TORCH)
              + tuple(f"torch.Tensor.{n}" for n in _TORCH) + tuple(f"torch.linalg.{n}" for n in _LINALG),
              after=("return_types",))
