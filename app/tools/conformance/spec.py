"""The conformance cases' vocabulary, shared by the recorder (real PyTorch, ``.venv-ref``) and the replayer (here):
what a case is, how its inputs are drawn, and how a result is written down so that both sides can be compared.

A case is one call of one torch API with concrete inputs: ``Case("a.std(1, unbiased=False)", a=T(3, 4))``.

* ``expr`` is a Python expression evaluated with ``torch``, ``nn`` (``torch.nn``), ``F`` (``torch.nn.functional``),
  ``optim``, ``np`` and the inputs in scope; ``setup`` (optional) are statements run eagerly before it, in the same
  scope (``m = nn.Conv2d(3, 4, 3); init(m)``). The API and signature of the case are those of ``expr``'s outermost
  call (:func:`api_of`), in :mod:`app.tools.conformance.signature`'s form, unless ``api=`` names them.
* Inputs (:class:`T`) are drawn with numpy's legacy ``RandomState`` seeded from the case's id, so both sides get the
  same bits whatever numpy version they run (numpy guarantees RandomState's stream across versions).
* ``grad=True``: floating inputs are leaves that require grad; the gradient of ``sum_i (out_i * W_i).sum()`` over the
  floating tensors ``out_i`` of the result, with fixed random weights ``W_i`` (:func:`loss_weights`), is compared for
  every floating input and every parameter of a module the setup built (``init``ed modules).
* ``graph=True``: the replayer also runs ``expr`` inside a ``forward`` compiled in GRAPH_MODE, as ``run.py``
  compiles a training step.

A result is written down as a tree (:func:`encode`): tensors as ``{"t": "tensor", "dtype", "shape", "key"}`` with the
values in an array store; tuples, lists and named tuples (``torch.return_types.max``: ``fields``) as their items;
Python numbers, ``torch.Size``, dtypes and strings as values; an exception as ``{"t": "error", "type", "msg"}``.
"""
from __future__ import annotations

import ast
import hashlib
import os
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np

from app.tools.conformance.signature import parse, signature

# The known differences' vocabulary (each case module's ``KNOWN`` list; ``known.py`` gathers them): here, beside the
# cases', so that a case module and ``known.py`` do not import each other.
SINCE = "mindtorch 0.4.0, mindspore-dev 2.5.0.dev20250119"


@dataclasses.dataclass(frozen=True)
class Known:
    """Case ``id`` fails in ``modes`` for ``reason``; ``api`` as the case names it (checked against the case).
    ``rounding``: a float32 rounding difference at the tolerance's edge (another summation order in MindSpore's
    kernel, or a deep network's accumulated float32 error the size of PyTorch's own): the verdict can differ between
    runs and machines, so the entry is not required to fail (``known.stale_entries`` skips it)."""
    id: str
    api: str
    modes: Tuple[str, ...]
    reason: str
    since: str = SINCE
    rounding: bool = False
    stacks: Tuple[str, ...] = ()


FLOATING = ("float16", "bfloat16", "float32", "float64")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # the repository
GOLDEN_DIR = os.path.join(ROOT, "tests", "fixtures", "conformance")  # the recorded results, <group>.json/.npz


@dataclass(frozen=True)
class T:
    """A tensor input: ``shape``, ``dtype`` (numpy's name), how its values are drawn (``kind``: ``randn`` standard
    normal, ``rand`` uniform [0, 1), ``pos`` uniform [0.5, 2), ``int`` integers in [low, high), ``bool``, ``arange``
    0..n-1 in ``shape``, ``perm`` a permutation of 0..n-1 in ``shape``), ``param`` an ``nn.Parameter``, ``grad``
    whether it requires grad (default: floating and not ``grad=False`` on the case)."""
    shape: Tuple[int, ...] = ()
    dtype: str = "float32"
    kind: str = "randn"
    low: int = 0
    high: int = 10
    param: bool = False
    grad: Optional[bool] = None

    def __init__(self, *shape, dtype="float32", kind=None, low=0, high=10, param=False, grad=None):
        if kind is None:
            kind = "randn" if dtype in FLOATING else ("bool" if dtype == "bool" else "int")
        object.__setattr__(self, "shape", tuple(shape))
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "param", param)
        object.__setattr__(self, "grad", grad)

    def draw(self, seed: int) -> np.ndarray:
        """The input's values (numpy, ``dtype``; bfloat16 drawn as float32 and cast by the framework)."""
        rs = np.random.RandomState(seed % (2 ** 32))
        n = int(np.prod(self.shape)) if self.shape else 1
        if self.kind == "randn":
            v = rs.standard_normal(self.shape)
        elif self.kind == "rand":
            v = rs.random_sample(self.shape)
        elif self.kind == "pos":
            v = rs.uniform(0.5, 2.0, self.shape)
        elif self.kind == "int":
            v = rs.randint(self.low, self.high, self.shape)
        elif self.kind == "bool":
            v = rs.random_sample(self.shape) < 0.5
        elif self.kind == "arange":
            v = np.arange(n).reshape(self.shape)
        elif self.kind == "perm":
            v = rs.permutation(n).reshape(self.shape)
        else:
            raise ValueError(f"unknown input kind {self.kind!r}")
        return np.asarray(v).astype("float32" if self.dtype == "bfloat16" else self.dtype)

    def floating(self) -> bool:
        return self.dtype in FLOATING

    def __repr__(self):
        extra = "".join(f", {k}={getattr(self, k)!r}" for k, d in
                        (("dtype", "float32"), ("low", 0), ("high", 10), ("param", False), ("grad", None))
                        if getattr(self, k) != d)
        return f"T({', '.join(map(str, self.shape))}{extra}, kind={self.kind!r})"


@dataclass
class Case:
    """One call (module docstring). ``id`` is stable across runs: a hash of ``expr``, ``setup`` and the inputs.
    ``sig`` names the (API, signature) where ``expr`` is not itself the call (a helper the setup defined);
    ``values=False`` compares type, dtype and shape only (random draws); ``covers`` are the signatures the case
    exercises: ``sig`` and every torch operation in ``setup`` and ``expr`` (:func:`used_signatures`)."""
    expr: str
    inputs: Dict[str, T] = field(default_factory=dict)
    setup: str = ""
    grad: bool = True
    graph: bool = True
    values: bool = True
    sig: Optional[str] = None
    note: str = ""
    api: str = ""
    id: str = ""
    covers: Tuple[str, ...] = ()
    group: str = ""

    def __post_init__(self):
        key = f"{self.setup}\n{self.expr}\n{sorted((k, repr(v)) for k, v in self.inputs.items())}"
        self.id = hashlib.sha1(key.encode()).hexdigest()[:12]
        if self.sig is None:
            self.api, self.sig = api_of(self.expr, set(self.inputs), self.setup)
        else:
            self.api = parse(self.sig)[0]
        self.covers = tuple(sorted({self.sig, *used_signatures(self.expr, self.setup, self.inputs)}))

    def seed(self, name: str) -> int:
        return int(hashlib.sha1(f"{self.id}:{name}".encode()).hexdigest()[:8], 16)

    def arrays(self) -> Dict[str, np.ndarray]:
        return {name: spec.draw(self.seed(name)) for name, spec in self.inputs.items()}

    def grad_inputs(self) -> List[str]:
        """The inputs the gradient is taken for, in ``inputs`` order (``grad`` on the input, else floating)."""
        if not self.grad:
            return []
        return [n for n, s in self.inputs.items() if (s.grad if s.grad is not None else s.floating())]


def C(expr: str, setup: str = "", **kw) -> Case:
    """``Case(expr, inputs, setup, ...)``: the keyword arguments that are :class:`T` are the inputs, the others
    Case's options (``grad``, ``graph``, ``api``, ``sig``, ``note``)."""
    inputs = {k: v for k, v in kw.items() if isinstance(v, T)}
    opts = {k: v for k, v in kw.items() if not isinstance(v, T)}
    return Case(expr, inputs, setup, **opts)


_NAMESPACES = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional", "optim": "torch.optim"}
_OPERATORS = {ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__", ast.Div: "__truediv__",
              ast.FloorDiv: "__floordiv__", ast.Mod: "__mod__", ast.Pow: "__pow__", ast.MatMult: "__matmul__",
              ast.BitAnd: "__and__", ast.BitOr: "__or__", ast.BitXor: "__xor__", ast.LShift: "__lshift__",
              ast.RShift: "__rshift__"}
_COMPARE = {ast.Eq: "__eq__", ast.NotEq: "__ne__", ast.Lt: "__lt__", ast.LtE: "__le__", ast.Gt: "__gt__",
            ast.GtE: "__ge__"}
_UNARY = {ast.USub: "__neg__", ast.Invert: "__invert__", ast.UAdd: "__pos__"}


def _dotted(node) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


_BUILTINS = {"bool": ("__bool__", 0), "len": ("__len__", 0), "format": ("__format__", 1), "float": ("__float__", 0),
             "int": ("__int__", 0), "iter": ("__iter__", 0)}


def _built(setup: str) -> Dict[str, str]:
    """{name: qualified class} of the objects the setup builds: ``m = init(nn.Conv2d(...))``, ``opt = optim.SGD(...)``
    (assignments anywhere in the setup)."""
    built = {}
    for stmt in ast.walk(ast.parse(setup)) if setup else ():
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            value = stmt.value
            if _dotted(value.func) == "init" and value.args and isinstance(value.args[0], ast.Call):
                value = value.args[0]  # m = init(nn.Conv2d(...))
            name = _dotted(value.func)
            for target in stmt.targets:
                if isinstance(target, ast.Name) and name and name.split(".")[0] in (*_NAMESPACES, "torchvision"):
                    built[target.id] = _qualified(name)
    return built


def _node_signature(node, tensor_names, built) -> Optional[Tuple[str, str]]:
    """(API, signature) of one AST node when it is a torch operation (see :func:`api_of`), else None."""
    if isinstance(node, ast.Call):
        func = node.func
        npos = len(node.args)
        kws = [k.arg or "**" for k in node.keywords]
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in tensor_names:
            api = f"torch.Tensor.{func.attr}"
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in built:
            api = f"{built[func.value.id]}.{func.attr}"
        elif isinstance(func, ast.Name) and func.id in built:
            api = f"{built[func.id]}.__call__"
        elif isinstance(func, ast.Name) and func.id in _BUILTINS and node.args \
                and isinstance(node.args[0], ast.Name) and node.args[0].id in tensor_names:
            api, npos, kws = f"torch.Tensor.{_BUILTINS[func.id][0]}", _BUILTINS[func.id][1], []
        else:
            name = _dotted(func)
            if not name or name.split(".")[0] not in (*_NAMESPACES, "torchvision"):
                return None
            api = _qualified(name)
        return api, signature(api, npos, kws)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in tensor_names \
            and isinstance(node.ctx, ast.Load):
        api = f"torch.Tensor.{node.attr}.__get__"  # a property read: a.T, a.shape, p.grad
        return api, signature(api, 0)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left_tensor = isinstance(node.left, ast.Name) and node.left.id in tensor_names
        op = _OPERATORS[type(node.op)]
        api = f"torch.Tensor.{op if left_tensor else '__r' + op[2:]}"
        return api, signature(api, 1)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        api = f"torch.Tensor.{_COMPARE[type(node.ops[0])]}"
        return api, signature(api, 1)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        api = f"torch.Tensor.{_UNARY[type(node.op)]}"
        return api, signature(api, 0)
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        return "torch.Tensor.__getitem__", signature("torch.Tensor.__getitem__", 1)
    return None


def api_of(expr: str, tensor_names, setup: str = "") -> Tuple[str, str]:
    """The (API, signature) of ``expr``'s outermost operation: a call of a torch function (``torch.add(a, b)``,
    ``F.relu(x)``), a method of an input (``a.std(1)``: ``torch.Tensor.std``), a property read of an input (``a.T``:
    ``torch.Tensor.T.__get__``), an operator on inputs (``a + b``: ``torch.Tensor.__add__``; ``a[0]``:
    ``torch.Tensor.__getitem__``; ``bool(a)``: ``torch.Tensor.__bool__``), or a call of an object the setup built
    (``m(x)``: ``torch.nn.Conv2d.__call__`` for ``m = nn.Conv2d(...)``). Raises ValueError for anything else."""
    node = ast.parse(expr, mode="eval").body
    while isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Call, ast.Subscript)):
        node = node.value  # ``a.max(1).indices``: the call
    found = _node_signature(node, set(tensor_names), _built(setup))
    if found is None:
        raise ValueError(f"cannot tell the API of {expr!r}: give sig=")
    return found


def used_signatures(expr: str, setup: str, tensor_names) -> List[str]:
    """Every torch operation in ``setup`` and ``expr`` (:func:`_node_signature`), outermost first: what a case
    exercises besides its own API (``nn.Conv2d(1, 32, 3, 1)`` in the setup: ``torch.nn.Conv2d(4)``; ``opt.step()``
    in a helper the setup defines: ``torch.optim.SGD.step(0)``)."""
    built, names = _built(setup), set(tensor_names)
    out = []
    for tree in [ast.parse(expr, mode="eval")] + ([ast.parse(setup)] if setup else []):
        for node in ast.walk(tree):
            found = _node_signature(node, names, built)
            if found:
                out.append(found[1])
    return out


def _qualified(name: str) -> str:
    head, _, rest = name.partition(".")
    if head in _NAMESPACES:
        return _NAMESPACES[head] + ("." + rest if rest else "")
    return name


def loss_weights(shape, seed: int) -> np.ndarray:
    """``W`` for one floating output of ``shape``: uniform [0.5, 1.5) float64, so no gradient cancels by symmetry."""
    return np.random.RandomState(seed % (2 ** 32)).uniform(0.5, 1.5, tuple(shape))


def dtype_name(dtype) -> str:
    """``torch.float32`` (PyTorch) and ``Float32`` (MindSpore/MindTorch) both as ``float32``."""
    return str(dtype).replace("torch.", "").lower()


def encode(value, torch, store: Dict[str, np.ndarray], key: str, to_numpy) -> Any:
    """``value`` (a call's result) as a JSON tree; tensor values go into ``store`` under ``key``-derived names.
    ``to_numpy(tensor)`` gives a tensor's values (float32 for bfloat16)."""
    if isinstance(value, torch.Tensor):
        arr = to_numpy(value)
        store[key] = arr
        out = {"t": "tensor", "dtype": dtype_name(value.dtype), "shape": list(value.shape), "key": key}
        if isinstance(value, torch.nn.Parameter):
            out["param"] = True
        return out
    if isinstance(value, torch.Size):
        return {"t": "Size", "v": [int(v) for v in value]}
    fields = getattr(type(value), "_fields", None) or getattr(type(value), "__match_args__", None)
    if isinstance(value, tuple) and type(value) is not tuple and fields:
        return {"t": "namedtuple", "name": type(value).__name__, "fields": list(fields),
                "items": [encode(v, torch, store, f"{key}.{i}", to_numpy) for i, v in enumerate(value)]}
    if isinstance(value, (tuple, list)):
        return {"t": type(value).__name__ if type(value) in (tuple, list) else "tuple",
                "items": [encode(v, torch, store, f"{key}.{i}", to_numpy) for i, v in enumerate(value)]}
    if isinstance(value, bool):
        return {"t": "bool", "v": value}
    if isinstance(value, int):
        return {"t": "int", "v": value}
    if isinstance(value, float):
        return {"t": "float", "v": value}
    if value is None:
        return {"t": "None"}
    if isinstance(value, str):
        return {"t": "str", "v": value}
    if isinstance(value, torch.dtype):
        return {"t": "dtype", "v": dtype_name(value)}
    if isinstance(value, np.ndarray):
        store[key] = value
        return {"t": "ndarray", "dtype": str(value.dtype), "shape": list(value.shape), "key": key}
    return {"t": "object", "type": type(value).__name__}


def inputs_written(case: "Case", ns: dict, arrays: Dict[str, np.ndarray], torch, store: Dict[str, np.ndarray],
                   to_numpy) -> Dict[str, Any]:
    """{input name: its encoded value} for each tensor input whose values the call changed (bit comparison with the
    drawn ``arrays``): what an in-place call wrote, or what a call that should not write did write (MindSpore's CPU
    ``Median`` sorted its input's memory)."""
    out = {}
    for name in case.inputs:
        value = ns.get(name)
        if not isinstance(value, torch.Tensor):
            continue
        now = to_numpy(value)
        if now.shape != arrays[name].shape or not np.array_equal(now, arrays[name], equal_nan=now.dtype.kind == "f"):
            out[name] = encode(value, torch, store, f"{case.id}/in.{name}", to_numpy)
    return out


def error(exc: BaseException) -> dict:
    msg = str(exc).strip().splitlines()
    classes = [c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins" and c not in (object,
                                                                                                 BaseException)]
    return {"t": "error", "type": type(exc).__name__, "msg": (msg[0] if msg else "")[:200], "classes": classes}


def float_leaves(tree, path=()) -> List[Tuple[tuple, dict]]:
    """(path, node) of every floating tensor in an encoded result, depth first: what the loss weights."""
    if tree.get("t") == "tensor":
        return [(path, tree)] if tree["dtype"] in FLOATING else []
    out = []
    for i, item in enumerate(tree.get("items", ())):
        out.extend(float_leaves(item, path + (i,)))
    return out


def leaf(value, path):
    for i in path:
        value = value[i]
    return value


def replace_block(text: str, start: str, end: str, lines: Iterable[str], page: str) -> str:
    """``text`` with ``lines`` between its ``start`` and ``end`` markers (a generated block of a docs page; also
    ``cli.write_docs``' and ``opinfo_replay.write_docs``'). Raises ValueError naming ``page`` when the markers are missing."""
    import re
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise ValueError(f"{os.path.relpath(page, ROOT)} has no {start} ... {end} block")
    return pattern.sub(lambda _: "\n".join([start, *lines, end]), text)
