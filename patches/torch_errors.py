"""PyTorch's error classes (and, for the common cases, its wording) for errors MindSpore and MindTorch raise inside a
``torch`` call.

PyTorch raises ``RuntimeError`` for nearly every bad input its kernels see (shapes that do not match, a dtype a kernel
lacks, a negative size), ``IndexError`` for a dimension or index out of range, ``ValueError`` / ``TypeError`` for
bad Python arguments. MindSpore's checks raise ``ValueError`` or ``TypeError`` for the first two kinds (``nn.Linear``
fed the wrong width: ``ValueError: For 'MatMul' the input dimensions must be equal, but got 'x1_col': 6 and
'x2_row': 5.``, where PyTorch raises ``RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x6 and 5x3)``), and
``RuntimeError`` where PyTorch raises ``IndexError`` (``F.cross_entropy`` with a class index past the classes:
``For 'GatherD', the value of 'index' must be in [-3, 3)`` where PyTorch raises ``IndexError: Target 5 is out of
bounds.``). A script that catches PyTorch's class took another path here, or died.

At the public API boundary (every public function of ``torch``, ``torch.nn.functional``, ``torch.linalg``,
``torch.fft``, ``torch.special``, every public method and arithmetic operator of ``torch.Tensor``, and
``nn.Module.__call__``), an exception raised inside MindSpore's, MindTorch's or numpy's own code (the innermost frame
of its traceback lies in one of those packages: a user's callback, or a check of ours that already raises PyTorch's
class, is left as it is) is raised again as an exception whose class is PyTorch's class **and** the original class
(:func:`error_class`: ``class RuntimeError(builtins.RuntimeError, ValueError)``), so ``except RuntimeError`` (code
written for PyTorch) and ``except ValueError`` (code written for MindSpore) both catch it, and its name is PyTorch's.
Its message is PyTorch's for the common cases (:func:`translate`): dimension out of range (``IndexError: Dimension
out of range (expected to be in range of [-2, 1], but got 5)``), broadcasting (``The size of tensor a (5) must match
the size of tensor b (3) at non-singleton dimension 1``), matrix products of mismatched shapes (``linear``,
``matmul``, ``mm``, ``nn.Linear``), ``view``/``reshape`` sizes, class indices out of range in ``cross_entropy`` /
``nll_loss``; else MindSpore's message without its C++ call stack. The original exception is kept as
``.framework_error``. Pickled, the exception is PyTorch's plain class (a DataLoader worker's error crosses processes).

Compiled code: MindSpore's graph parser compiles ``inspect.unwrap`` of a function, so these ``functools.wraps``
wrappers are not in a graph; an error there arises when the graph compiles, and ``run.py`` runs that step eagerly,
where the wrappers translate it. Cost in PyNative: one Python call frame per wrapped call (a ``try`` costs nothing
when nothing is raised): ``bench/eager_ops.py --without torch_errors`` (docs/patches.md).

Replaces: ``torch.*``, ``torch.nn.functional.*``, ``torch.linalg.*``, ``torch.fft.*``, ``torch.special.*`` (their
public Python functions), ``torch.Tensor.*`` (public methods and arithmetic operators), ``torch.nn.Module.__call__``.
Applied after every patch that replaced one of these (:data:`PATCH`'s ``after`` is computed from the registry: this
patch wraps what they installed).
"""
from __future__ import annotations

import builtins
import functools
import importlib
import math
import os
import re
import types
from typing import Optional, Tuple

from adapter import hooks

from . import Patch
from ._wrap_once import wrap_attr

NAME = "torch_errors"

#: module paths (as a PyTorch user writes them) whose public Python functions are wrapped
FUNCTION_OWNERS = ("torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special")
#: Tensor's operators (besides its public methods); indexing is patches/indexing.py's
TENSOR_OPERATORS = tuple(f"__{op}__" for op in (
    "add", "radd", "iadd", "sub", "rsub", "isub", "mul", "rmul", "imul", "truediv", "rtruediv", "itruediv",
    "floordiv", "rfloordiv", "mod", "rmod", "pow", "rpow", "matmul", "rmatmul", "and", "or", "xor", "lshift",
    "rshift", "eq", "ne", "lt", "le", "gt", "ge"))
#: functions never wrapped: not ops (serialization, compilation, global settings), where MindTorch's own classes
#: of errors are what the caller's code was written against
SKIP = frozenset(("save", "load", "compile", "manual_seed", "seed", "initial_seed", "set_default_dtype",
                  "set_default_tensor_type", "set_printoptions", "set_grad_enabled", "typename", "is_tensor",
                  "is_storage", "get_default_dtype", "is_grad_enabled"))

_FRAMEWORK_DIRS: Tuple[str, ...] = ()  # directories of mindspore, mindtorch, numpy (set by apply())
_classes: dict = {}  # (PyTorch's class, original class) -> the class raised


# ----------------------------------------------------------------------------------------------- exception classes

def _reduce(self):
    return self._torch_class, self.args


def _init(self, *args):
    BaseException.__init__(self, *args)


def error_class(torch_class: type, original: type, also: Tuple[type, ...] = ()) -> type:
    """The class raised for an ``original`` exception that PyTorch raises as ``torch_class``: ``torch_class`` itself
    when ``original`` is one (and nothing else is asked), else a subclass of ``torch_class``, ``original`` and
    ``also`` named as ``torch_class`` (one class per combination)."""
    if issubclass(original, torch_class) and original.__module__ == "builtins" and not also:
        return original
    key = (torch_class, original, also)
    cls = _classes.get(key)
    if cls is None:
        bases = [torch_class]
        for base in (original,) + also:
            if not any(issubclass(b, base) for b in bases):
                bases.append(base)
        namespace = {"__module__": __name__, "__qualname__": torch_class.__name__, "_torch_class": torch_class,
                     "__reduce__": _reduce, "__init__": _init, "__str__": BaseException.__str__}
        try:
            cls = type(torch_class.__name__, tuple(bases), namespace)
        except TypeError:  # an original class whose layout cannot be combined: PyTorch's class alone
            cls = type(torch_class.__name__, (torch_class,), namespace)
        _classes[key] = cls
    return cls


# ----------------------------------------------------------------------------------------------------- wording

_CPP_STACK = re.compile(r"\n+-{10,}\n- C\+\+ Call Stack.*", re.S)
_DIM_RANGES = (
    # MindTorch / MindSpore: "Dimension out of range (expected to be in range of [-2, 2), but got 10000)",
    # "For 'diag_embed', 'dim1' must be in range of [-3, 2], but got 10000.", "The 'axis' must be in the range of
    # [-3, 3), but got 3.", "For primitive[SumExt], the axis value must be in [-2,2), but got 5.",
    # "For 'CumulativeLogsumexp, 'axis' must be in range [-2, 2), but got: 3"
    re.compile(r"(?:Dimension out of range \(expected to be|\b(?:axis|dim\w*)'?(?:\[\d+\])?'?(?: value)? must be)"
               r" in (?:the )?(?:range )?(?:of )?\[\s*(-?\d+)\s*,\s*(-?\d+)\s*([\)\]]),? but got:? '?(-?\d+)"),
)
_NUMPY_AXIS = re.compile(r"axis (-?\d+) is out of bounds for array of dimension (\d+)")
_BROADCAST = re.compile(r"need to broadcast\. The value of \w+\.shape\[(\d+)\] or \w+\.shape\[(\d+)\] must be 1 or -1 "
                        r"when they are not the same, but got \w+\.shape = \[([\d, ]*)\] and \w+\.shape = "
                        r"\[([\d, ]*)\]")


def _broadcast_message(a, b) -> str:
    """PyTorch's message for shapes ``a`` and ``b`` that do not broadcast: the last dimension (of the result) where
    their sizes differ and neither is 1, as PyTorch's ``infer_size`` finds it."""
    n = max(len(a), len(b))
    for dim in range(n - 1, -1, -1):
        i, j = dim - (n - len(a)), dim - (n - len(b))
        size_a, size_b = (a[i] if i >= 0 else 1), (b[j] if j >= 0 else 1)
        if size_a != size_b and size_a != 1 and size_b != 1:
            return (f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) at non-singleton "
                    f"dimension {dim}")
    return f"shapes {list(a)} and {list(b)} cannot be broadcast"
_VIEW = re.compile(r"proposed_shape '\[const vector\]\{([-\d, ]*)\}' is invalid for input of size (\d+)")
# mindspore-dev 2.5's Reshape says it this way: the input's shape (whose product is the size) and the asked one
_VIEW_25 = re.compile(r"The accumulate of x_shape must be equal to out_shape, but got x_shape: \[const vector\]"
                      r"\{([-\d, ]*)\}, and out_shape: \[const vector\]\{([-\d, ]*)\}")
_CLASS_INDEX = re.compile(r"For 'GatherD', the value of 'index' must be in \[-?\d+, \d+\), but got: (-?\d+)")
_EMBEDDING_INDEX = re.compile(r"For 'Gather', the 'input_indices' should be in the range \[0, \d+\), but got (-?\d+)")
_GATHER_INDEX = re.compile(r"For 'GatherD', the value of 'index' must be in \[-?\d+, \d+\), but got: (-?\d+)")
_CONV_CHANNELS = re.compile(r"For 'Conv[123]D', 'C_in' of input 'x' shape divide by parameter 'group' must be equal")
_MATMUL = re.compile(r"For 'MatMul(?:Ext)?'")


def _dim_range(text: str) -> Tuple[Optional[str], Optional[int]]:
    """(PyTorch's "Dimension out of range" message, the dimension) for MindSpore's wordings of one, or (None,
    None)."""
    for pattern in _DIM_RANGES:
        m = pattern.search(text)
        if m:
            low, high, bracket, got = int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4))
            if bracket == ")":
                high -= 1
            if high < low:  # a 0-d tensor: PyTorch's own checks say what it cannot do (narrow, unbind, ...)
                return None, None
            return f"Dimension out of range (expected to be in range of [{low}, {high}], but got {got})", got
    m = _NUMPY_AXIS.search(text)
    if m:
        n = max(int(m.group(2)), 1)
        return (f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {m.group(1)})",
                int(m.group(1)))
    return None, None


def _shape(value) -> Optional[Tuple[int, ...]]:
    shape = getattr(value, "shape", None)
    try:
        return tuple(int(s) for s in shape) if shape is not None else None
    except (TypeError, ValueError):
        return None


def _matmul_message(a, b) -> Optional[str]:
    """PyTorch's message for a matrix product of ``a`` (..., n) and ``b`` (n, m) whose inner sizes differ."""
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb or len(sb) != 2 or sa[-1] == sb[0]:
        return None
    rows = math.prod(sa[:-1]) if len(sa) > 1 else 1
    return f"mat1 and mat2 shapes cannot be multiplied ({rows}x{sa[-1]} and {sb[0]}x{sb[1]})"


_REDUCTIONS = ("none", "mean", "sum")
#: a TypeError about a Python argument's type (PyTorch's argument parser raises TypeError too), not a tensor's dtype
_PYTHON_ARGUMENT_TYPE = re.compile(r"<class '|should be (?:'?int'?|integer)|Failed calling \w+ with|unexpected "
                                   r"keyword|positional argument|iteration over a 0-d tensor|is not iterable|"
                                   r"not subscriptable|cannot be interpreted as an integer")
_RANK_RANGE = re.compile(r"(?:rank|dim) of x must be in \[(\d+),\s*\d+\]")
_UNSTACK_0D = re.compile(r"For 'Unstack', input's rank should be greater equal to 1, but got 0")
_PYTHON_INDEX = re.compile(r"^(?:tuple|list|pop) index out of range$")


def _explain(api: str, args: tuple, kwargs: dict, text: str) -> Optional[tuple]:
    """PyTorch's ``(class, message[, further classes])`` for an error of ``api`` called with ``args``, where it
    depends on the call; None where it does not."""
    leaf = api.rsplit(".", 1)[-1]
    if _MATMUL.search(text):
        if leaf == "linear" and len(args) >= 2:
            weight = _shape(args[1])
            if weight and len(weight) == 2:
                return builtins.RuntimeError, _matmul_message(args[0], _Transposed(weight))
        if leaf == "Linear" and args:  # nn.Module.__call__ of an nn.Linear: args = (module, input)
            weight = _shape(getattr(args[0], "weight", None))
            if weight and len(weight) == 2 and len(args) > 1:
                return builtins.RuntimeError, _matmul_message(args[1], _Transposed(weight))
        if leaf in ("mm", "matmul", "__matmul__") and len(args) >= 2:
            if len(_shape(args[0]) or ()) == 2:
                return builtins.RuntimeError, _matmul_message(args[0], args[1])
    if _CONV_CHANNELS.search(text):
        message = _conv_message(leaf, args, kwargs)
        if message:
            return builtins.RuntimeError, message
    m = _CLASS_INDEX.search(text)
    if m and leaf in ("cross_entropy", "nll_loss", "CrossEntropyLoss", "NLLLoss"):
        return builtins.IndexError, f"Target {m.group(1)} is out of bounds."
    m = _EMBEDDING_INDEX.search(text)
    if m and leaf in ("embedding", "Embedding"):
        return builtins.IndexError, "index out of range in self"
    m = _GATHER_INDEX.search(text)
    if m and leaf == "gather" and len(args) >= 2 and isinstance(args[1], int):
        shape = _shape(args[0]) or ()
        size = shape[args[1]] if -len(shape) <= args[1] < len(shape) else "?"
        return builtins.RuntimeError, f"index {m.group(1)} is out of bounds for dimension {args[1]} with size {size}"
    reduction = kwargs.get("reduction")
    if isinstance(reduction, str) and reduction not in _REDUCTIONS and "reduction" in text:
        return builtins.ValueError, f"{reduction} is not a valid value for reduction"  # torch.nn._reduction
    m = _RANK_RANGE.search(text)
    if m and leaf.startswith("adaptive_"):  # torch.nn.functional's own check, in Python
        return builtins.ValueError, f"Input dimension should be at least {m.group(1)}"
    if leaf == "cat" and args and isinstance(args[0], (tuple, list)) and not args[0]:
        return builtins.ValueError, "torch.cat(): expected a non-empty list of Tensors"
    if _UNSTACK_0D.search(text):
        dim = kwargs.get("dim", args[1] if len(args) > 1 and isinstance(args[1], int) else 0)
        return builtins.IndexError, f"Dimension specified as {dim} but tensor has no dimensions"
    if _PYTHON_INDEX.match(text):  # a shape indexed past its rank in MindTorch's Python: PyTorch checks the rank
        # first, raising IndexError ("Dimension specified as -1 but tensor has no dimensions") or RuntimeError
        # ("Expected at least 2 dimensions"): both classes
        return builtins.IndexError, f"{text} (in {leaf}(): the input has fewer dimensions than it needs)", \
            (builtins.RuntimeError,)
    return None


def _ints(values, out: set) -> set:
    """Every int among ``values`` (nested tuples/lists too): the dims a call was given."""
    for v in values:
        if isinstance(v, int) and not isinstance(v, bool):
            out.add(v)
        elif isinstance(v, (tuple, list)):
            _ints(v, out)
    return out


def _conv_message(leaf: str, args: tuple, kwargs: dict) -> Optional[str]:
    """PyTorch's message for a convolution whose input has another number of channels than its weight expects
    (``F.conv2d(input, weight, bias, stride, padding, dilation, groups)`` or an ``nn.Conv2d`` module's call)."""
    if leaf in ("Conv1d", "Conv2d", "Conv3d") and len(args) > 1:
        weight, groups, x = _shape(getattr(args[0], "weight", None)), getattr(args[0], "groups", 1), args[1]
    elif leaf in ("conv1d", "conv2d", "conv3d") and len(args) > 1:
        weight, x = _shape(args[1]), args[0]
        groups = kwargs.get("groups", args[6] if len(args) > 6 else 1)
    else:
        return None
    shape = _shape(x)
    if not weight or not shape or len(shape) < 2 or not isinstance(groups, int):
        return None
    return (f"Given groups={groups}, weight of size {list(weight)}, expected input{list(shape)} to have "
            f"{weight[1] * groups} channels, but got {shape[1]} channels instead")


class _Transposed:
    """A stand-in whose ``shape`` is a 2-D shape transposed (``weight.t()`` of ``linear``)."""

    def __init__(self, shape):
        self.shape = (shape[1], shape[0])


def translate(exc: BaseException, api: str, args: tuple = (), kwargs: Optional[dict] = None
              ) -> Optional[BaseException]:
    """The exception to raise instead of ``exc`` (raised inside MindSpore/MindTorch by the call ``api(*args,
    **kwargs)``), or None to raise ``exc`` as it is (module docstring)."""
    original = type(exc)
    text = str(exc)
    explained = _explain(api, args, kwargs or {}, text)
    also = ()
    if explained is not None and explained[1]:
        torch_class, message = explained[:2]
        also = tuple(explained[2:3][0]) if len(explained) > 2 else ()
    else:
        message, got = _dim_range(text)
        given = tuple(args) + tuple((kwargs or {}).values())
        if args and isinstance(getattr(args[0], "__dict__", None), dict) and hasattr(args[0], "_modules"):
            given += tuple(vars(args[0]).values())  # an nn.Module's call: its own dims (nn.Softmax(dim=5))
        if message is not None and got in _ints(given, set()):
            torch_class = builtins.IndexError
        else:  # a dimension the call did not name (fliplr of a 1-d tensor): a RuntimeError in PyTorch
            message = None
            m = _BROADCAST.search(text)
            if m:
                torch_class = builtins.RuntimeError
                message = _broadcast_message([int(s) for s in m.group(3).split(",") if s.strip()],
                                             [int(s) for s in m.group(4).split(",") if s.strip()])
            else:
                m, m25 = _VIEW.search(text), _VIEW_25.search(text)
                if m or m25:
                    torch_class = builtins.RuntimeError
                    asked, size = (m.group(1), m.group(2)) if m else \
                        (m25.group(2), math.prod(int(d) for d in m25.group(1).split(",") if d.strip()))
                    message = f"shape '[{asked.replace(' ', '').replace(',', ', ')}]' is invalid for input of size {size}"
                elif isinstance(exc, ValueError) and not isinstance(exc, builtins.IndexError) or \
                        isinstance(exc, TypeError) and not _PYTHON_ARGUMENT_TYPE.search(text):
                    torch_class = builtins.RuntimeError
                    message = _CPP_STACK.sub("", text).strip()
                else:
                    return None
    if isinstance(exc, torch_class) and message == text and not also:
        return None
    new = error_class(torch_class, original, also)(message)
    new.framework_error = exc
    return new


# ------------------------------------------------------------------------------------------------------ wrappers

def _from_framework(exc: BaseException) -> bool:
    """Whether ``exc`` was raised inside MindSpore, MindTorch or numpy (its innermost traceback frame)."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename.startswith(_FRAMEWORK_DIRS)


def _wrapper(fn, api: str):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (ValueError, TypeError, RuntimeError, IndexError) as exc:
            if not _from_framework(exc):
                raise
            new = translate(exc, api, args, kwargs)
            if new is None:
                raise
            raise new.with_traceback(exc.__traceback__) from None
    setattr(call, hooks.attr("error_boundary"), True)  # run.py --report credits fn, not this wrapper
    return call


def _module_call(fn):
    @functools.wraps(fn)
    def __call__(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except (ValueError, TypeError, RuntimeError, IndexError) as exc:
            if not _from_framework(exc):
                raise
            new = translate(exc, type(self).__name__, (self,) + args, kwargs)
            if new is None:
                raise
            raise new.with_traceback(exc.__traceback__) from None
    return __call__


def _owner(path: str):
    return importlib.import_module("mindtorch." + path)


def _function_names(owner) -> list:
    return [name for name, value in vars(owner).items()
            if isinstance(value, types.FunctionType) and not name.startswith("_") and name not in SKIP]


def apply() -> None:
    global _FRAMEWORK_DIRS
    import mindspore
    import mindtorch
    import numpy
    _FRAMEWORK_DIRS = tuple(os.path.dirname(m.__file__) + os.sep for m in (mindspore, mindtorch, numpy))
    for path in FUNCTION_OWNERS:
        owner = _owner(path)
        for name in _function_names(owner):
            wrap_attr(owner, name, NAME, lambda fn, api=f"{path}.{name}": _wrapper(fn, api))
    from mindtorch.torch.tensor import Tensor
    for name, value in list(vars(Tensor).items()):
        if isinstance(value, types.FunctionType) and (name in TENSOR_OPERATORS or not name.startswith("_")) \
                and name not in SKIP:
            wrap_attr(Tensor, name, NAME, lambda fn, api=f"torch.Tensor.{name}": _wrapper(fn, api))
    from mindtorch.torch.nn import Module
    wrap_attr(Module, "__call__", NAME, _module_call)


def _earlier_patches() -> Tuple[str, ...]:
    """The patches before this one in the registry that replace a name this one wraps (it wraps what they
    installed)."""
    import patches
    prefixes = tuple(f"{path}." for path in FUNCTION_OWNERS) + ("torch.Tensor.",)
    before = patches._MODULES[:patches._MODULES.index(NAME)] if NAME in patches._MODULES else []
    out = []
    for name in before:
        patch = importlib.import_module(f"patches.{name}").PATCH
        for target in patch.replaces:
            owner, _, attr = target.rpartition(".")
            if target == "torch.nn.Module.__call__" or (target.startswith(prefixes) and owner in
                                                         FUNCTION_OWNERS + ("torch.Tensor",)):
                out.append(name)
                break
    return tuple(out)


PATCH = Patch(NAME, "PyTorch's error classes at the torch API boundary: MindSpore's ValueError/TypeError as "
                    "RuntimeError (and the original class), dimension/class index out of range as IndexError, "
                    "PyTorch's wording for shapes, dims, broadcasting, matrix products", "post-import", apply,
              replaces=tuple(f"{path}.*" for path in FUNCTION_OWNERS) + ("torch.Tensor.*",
                                                                          "torch.nn.Module.__call__"),
              after=_earlier_patches())
