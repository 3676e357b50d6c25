"""Tensor method calls in compiled user code resolve to MindTorch's methods where MindSpore's C++ core no longer knows
MindTorch's tensor type (MindSpore >= 2.7; issue 17).

Why. MindSpore 2.5 had ``mindspore.common.api.set_adapter_config``: MindTorch registered its ``Tensor`` class with it
at import, and the graph compiler then looked a method call on a MindTorch tensor up in MindTorch's class, so
``x.size(0)`` in a compiled ``forward`` meant ``torch.Tensor.size(x, 0)``. Later MindSpore releases removed it
(``adapter/backend_compat.py`` shim 2 keeps the call from failing, nothing more): inside a graph every tensor is
MindSpore's, and ``x.size(0)`` is MindSpore's ``Tensor.size`` (the element count, a property: "The object is not
callable"), ``x.transpose(0, 1)`` MindSpore's ``transpose`` (a full permutation: ``(0, 1)`` of a 2-D tensor is the
identity, a silently wrong result), ``repeat``, ``expand``, ``clone``, ``new_zeros``, ``zero_`` fail to compile.
And ``isinstance(x, torch.Tensor)`` was False for every tensor in a graph (MindSpore's ``ms_isinstance`` knows its
own ``Tensor`` and ``Parameter`` only): a silently wrong branch in user code, and in MindTorch's own graph code
(``Tensor.to(other)`` took its dtype branch with a tensor). Measured on mindspore 2.10.0 + mindtorch 0.4.0 with the
21 idioms of ``tests/test_graph_methods.py`` in a compiled forward: 13 failed without this module (two of them with
wrong values), none with it; 2.5-dev: none.

isinstance. While compiling, the parser package's ``ms_isinstance`` (what the graph compiler calls for
``isinstance(x, <class>)`` with a tensor ``x``) reads a subclass of MindSpore's ``Parameter`` (MindTorch's) as
``Parameter`` and any other subclass of MindSpore's ``Tensor`` (MindTorch's ``Tensor``) as ``Tensor``: in a 2.10
graph every tensor is both (``adapter/backend_compat.py`` shim 9: the two conversions are the identity there).

What. While MindSpore's graph parser reads a function of user code (any file that is not MindSpore's, MindTorch's,
the standard library's or this project's ``adapter/`` / ``patches/``: :func:`adapter.userframe._is_internal`; and an
installed package's module that imports torch, such as timm's: :func:`_installed_torch_code`), its
syntax tree (``Parser.parse``, ``mindspore/graph/_parse/parser.py``; ``mindspore/_extends/parse/parser.py`` before
2.9) is rewritten: every call ``obj.meth(args)`` whose ``meth`` is a method MindTorch's ``Tensor`` defines itself
(:func:`tensor_methods`) becomes ``__adapter_torch_methods__.meth_N(obj, args)``, a small generated function::

    def size_1(obj, a0):
        if isinstance(obj, Tensor):         # MindSpore's Tensor: decided when the graph is compiled
            return TorchTensor.size(obj, a0)  # MindTorch's method, compiled as MindTorch's code
        return obj.size(a0)                 # anything else (a Module, a list, a str): as written

``TorchTensor.size(x, 0)`` compiles to MindTorch's meaning on every MindSpore version (the explicit form already
worked on 2.10). Calls whose object is known not to be a tensor when the tree is rewritten are left as written:
literals, ``super()``, and names or attribute chains of the function's globals, closure or builtins whose value is
not a tensor (``torch.flatten(x)``, ``F.relu(x)``, ``np.log(...)``, ``model.to(...)`` where ``model`` is a global).
Calls with ``*args`` / ``**kwargs`` get a helper with the same unpacking. New nodes carry the call's source position
(``first_token`` / ``last_token``, what ``Parser.get_location`` reads), so compile errors still name the user's
``file:line``. The tree MindSpore caches (``Parser.ast_cache``) is not modified: the rewritten copy is cached here,
per original tree and function.

MindTorch's own delegations. MindTorch's ``functional.py`` (:data:`DELEGATING_FILES`) implements ``torch.std``,
``torch.norm``, ``torch.roll``, ``torch.diag``... as ``input.<method>(...)`` on its first parameter: MindTorch's
method on 2.5, MindSpore's (other signatures) in a 2.10 graph. There only calls on the first parameter, in functions
that never assign it, are rewritten (other calls there are on ``cast_to_ms_tensor`` results, meant as MindSpore's).
Measured (``run.py conformance --mode graph --only`` std/var/norm/logsumexp/roll/diag/dropout and their methods, 66
cases, 2.10): 37 pass / 28 fall back before, 47 / 16 after (torch.std, norm, roll, diag compile as on 2.5); 2.5-dev
58 / 5 both. Still falling back on 2.10 only: ``var`` (MindTorch's Tensor.var: AddN of mixed types), ``logsumexp``
(``.detach`` on a MindSpore tensor), ``F.dropout(p=1)`` (``zero_adapter``).

MindTorch's ``torch.X`` made from Tensor methods (``mindtorch/torch/_export_func_to_root.py``: ``torch.index_fill``,
``index_put``, ``masked_fill``, ``masked_scatter``, the in-place ``torch.X_``...) are ``getattr(tensor, name)(...)``,
MindSpore's method of that name in a 2.10 graph: their body is compiled as MindTorch's method through the varargs
helper (:func:`_exported_tree`). Measured (op_db, 2.10): ``index_fill`` did not compile ("the input
argument[index] must be a type of {Tensor[Int32]}") and passes; ``index_put`` compiles (with the gradient its
PyNative form has); ``masked_fill`` / ``masked_scatter`` pass as before.

Explicit operator-method calls on a tensor (``x.__rsub__(y)``, ``x.__matmul__(y)``, ``x.__neg__()``: MindSpore's
graph compiler resolves no dunder attribute of a tensor, "cannot get attributes __rsub__") compile as their operator
(``y - x``) on a tensor (:data:`OPERATOR_DUNDERS`; op_db's ``__radd__``, ``__rsub__``, ``__rmatmul__``...).

Properties. Reads of the properties MindTorch's ``Tensor`` defines (with our patches; :func:`tensor_properties`:
``device``, ``is_cuda``, ``is_cpu``, ``is_meta``, ``is_sparse``, ``is_quantized``, ``real``, ``T``, ``mT``,
``dtype``, ``data``...) are rewritten the same way: ``x.device`` becomes ``__adapter_torch_methods__.device__get(x)``::

    def device__get(obj):
        if isinstance(obj, Tensor):
            return TorchTensor.device.fget(obj)   # MindTorch's getter, parsed as graph code, as on 2.5
        return obj.device

On 2.5 the graph compiler read these through MindTorch's class; 2.10's knows its own tensor attributes only:
``x.device``, ``x.is_cuda``, ``x.is_cpu``, ``x.is_meta``, ``x.is_sparse``, ``x.is_quantized`` were "the
Tensor[Float32] object has no attribute" and ``x.real`` (MindSpore's method) a NameError, so a step reading them
(pytorch/examples dcgan's ``if input.is_cuda and self.ngpu > 1`` in ``forward``) ran in PyNative. The getters of
``patches/device.py`` return module constants (``device(type='cpu')``, False), which fold when compiling. Writes
(``x.requires_grad = True``), deletes and a property name called (``x.is_cuda()``) stay as written. Measured (a
compiled forward reading each, 30 reads, 2.10): 17 failed before, 7 after, the 7 that fail on 2.5-dev too:
``layout``, ``names``, ``is_nested``, ``output_nr`` (MindTorch has none), ``is_leaf``, ``requires_grad``,
``grad_fn`` (MindTorch's getters read ``_requires_grad`` / ``_grad_fn``, which a graph's tensors lack): those steps
still run in PyNative, with their one line.

Where. Only while :func:`adapter.graph_semantics.graph_semantics` is active (a compiled step, a compiled forward,
the conformance harness's graph mode), and only where :func:`needed`: MindSpore has no ``set_adapter_config`` of its
own (``adapter.backend_compat.applied()``). On 2.5-dev nothing is swapped and no tree is rewritten.

In-place methods (``x.add_(y)``) thus get MindTorch's meaning too: MindTorch raises in a graph ("is an in-place
operation ... not supported"), so the step runs eagerly, as on 2.5-dev (MindSpore 2.10's own ``Tensor.add_`` would
compile, with MindSpore's write-back semantics, which the conformance harness does not check in graph mode).

Measured (``run.py conformance --mode graph``, all 1543 cases, CPU, 2026-11-26): mindspore 2.10.0 987 pass / 64 fail /
149 fall back without this module, 1058 / 40 / 102 with it; 2.5-dev 1066 / 51 / 83, the same verdicts per case with
and without it.

The private names (``Parser``) come through ``adapter/backend.py`` (``INTERNALS["parser"]``); the parser package
whose ``ms_isinstance`` the compiler calls is ``Parser``'s module's package.
"""
from __future__ import annotations

import ast
import builtins
import copy
import linecache
import os
import sys
import types
from typing import Dict, FrozenSet, Optional, Tuple

from adapter import patching

NAMESPACE = "__adapter_torch_methods__"  # the global the rewritten calls read (injected as MindSpore injects its own)
_ROOT = os.path.dirname(os.path.abspath(__file__))
_MODULE_NAME = "adapter_generated.torch_methods"
_methods: Optional[FrozenSet[str]] = None
_properties: Optional[FrozenSet[str]] = None
_module: Optional[types.ModuleType] = None
_rewritten: Dict[Tuple[int, int], Tuple[object, object, object]] = {}  # (id(tree), id(fn)) -> (tree, fn, copy)

DECLARED = (
    patching.Declared(
        "graph_methods", "Tensor method calls and property reads (x.device, x.is_cuda) in compiled user code resolve "
        "to MindTorch's where MindSpore's C++ core does not know MindTorch's tensor type (MindSpore without set_adapter_config, >= 2.7); there "
        "isinstance(x, torch.Tensor) is True for a graph's tensors",
        "while a compiled step or forward is compiled (graph_semantics()), only where needed()",
        replaces=("mindspore._extends.parse.parser.Parser.parse", "mindspore._extends.parse.ms_isinstance")),
)


def needed() -> bool:
    """Whether this MindSpore's graph compiler lacks MindTorch's tensor type: MindSpore has no
    ``set_adapter_config`` of its own (``adapter/backend_compat.py`` supplied one). False on 2.5-dev."""
    from adapter import backend_compat
    return "set_adapter_config" in backend_compat.applied()


def _defined(cls: type, name: str):
    """``(owner, raw)``: the first class of ``cls.__mro__`` whose own ``__dict__`` holds ``name``, and that raw
    attribute (a ``property``, function, descriptor...), unlike ``getattr``; ``(None, None)`` where none does."""
    for owner in cls.__mro__:
        if name in vars(owner):
            return owner, vars(owner)[name]
    return None, None


def tensor_methods() -> FrozenSet[str]:
    """The method names rewritten: every public attribute of MindTorch's ``torch.Tensor`` (with our patches) that
    is a plain function or method descriptor there and is not MindSpore's ``Tensor`` attribute of the same name
    (so ``x.asnumpy()`` and other methods MindTorch inherits stay MindSpore's calls). Computed once."""
    global _methods
    if _methods is None:
        import mindspore
        from mindtorch.torch import Tensor as TorchTensor
        names = set()
        for name in dir(TorchTensor):
            if name.startswith("__"):
                continue
            _, raw = _defined(TorchTensor, name)
            if isinstance(raw, (property, type)) or not callable(getattr(TorchTensor, name, None)):
                continue
            if getattr(TorchTensor, name) is getattr(mindspore.Tensor, name, None):
                continue
            names.add(name)
        _methods = frozenset(names)
    return _methods


def tensor_properties() -> FrozenSet[str]:
    """The property names whose reads are rewritten: every public attribute that MindTorch's ``torch.Tensor`` (with
    our patches: ``patches/device.py``'s ``device``/``is_cuda``/``is_cpu``..., ``patches/tensor_transpose.py``'s
    ``T``/``mT``...) defines itself as a ``property``. On 2.5 the graph compiler read exactly these through
    MindTorch's class (its getter, parsed as graph code); 2.10's knows MindSpore's tensor attributes only
    (``x.device``: "the Tensor[Float32] object has no attribute: 'device'"; ``x.real``: MindSpore's method).
    Computed once."""
    global _properties
    if _properties is None:
        from mindtorch.torch import Tensor as TorchTensor
        names = set()
        for name in dir(TorchTensor):
            if name.startswith("_"):
                continue
            owner, raw = _defined(TorchTensor, name)
            if isinstance(raw, property) and not owner.__module__.startswith("mindspore."):
                names.add(name)
        _properties = frozenset(names)
    return _properties


_PROPERTY_HELPER = '''\
def {fn}(_adapter_obj):
    if isinstance(_adapter_obj, Tensor):
        return TorchTensor.{name}.fget(_adapter_obj)
    return _adapter_obj.{name}
'''


_HELPER = '''\
def {fn}(_adapter_obj{params}):
    if isinstance(_adapter_obj, Tensor):
        return TorchTensor.{name}(_adapter_obj{args})
    return _adapter_obj.{name}({args_only})
'''


def _helpers() -> types.ModuleType:
    """The module holding the generated helpers (a real module in ``sys.modules``: MindSpore's parser resolves a
    function's globals through ``sys.modules[fn.__module__]``)."""
    global _module
    if _module is None:
        import mindspore
        from mindtorch.torch import Tensor as TorchTensor
        module = types.ModuleType(_MODULE_NAME)
        module.__dict__.update(Tensor=mindspore.Tensor, TorchTensor=TorchTensor)
        sys.modules[_MODULE_NAME] = module
        _module = module
    return _module


def _define(fn: str, source: str) -> str:
    """Define helper ``fn`` from ``source`` in :func:`_helpers`'s module, once (source registered in ``linecache`` so
    that MindSpore's parser, which reads source with ``inspect``, finds it)."""
    module = _helpers()
    if fn not in module.__dict__:
        filename = os.path.join(_ROOT, f"_torch_method_{fn}.py")  # not a file: linecache has its source
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), module.__dict__)
    return fn


def property_helper(name: str) -> str:
    """The name of the helper for a read of ``obj.<name>`` (a :func:`tensor_properties` name): MindTorch's getter on
    a tensor, the object's own attribute otherwise."""
    fn = f"{name}__get"
    return _define(fn, _PROPERTY_HELPER.format(fn=fn, name=name))


def helper(name: str, nargs: int, keywords: Tuple[str, ...], varargs: bool) -> str:
    """The name of the helper for ``obj.<name>(<nargs positional>, <keywords>=...)`` (``varargs``: a call with
    ``*args`` / ``**kwargs``), generated on first use (source registered in ``linecache`` so that MindSpore's parser,
    which reads source with ``inspect``, finds it)."""
    if varargs:
        fn = f"{name}__v"
        params, args = ", *_adapter_args, **_adapter_kwargs", "*_adapter_args, **_adapter_kwargs"
    else:
        fn = f"{name}_{nargs}" + "".join(f"_{k}" for k in keywords)
        positional = [f"_adapter_arg{i}" for i in range(nargs)]  # no clash with the call's keyword names
        params = "".join(f", {p}" for p in positional + list(keywords))
        args = ", ".join(positional + [f"{k}={k}" for k in keywords])
    return _define(fn, _HELPER.format(fn=fn, name=name, params=params, args=f", {args}" if args else "",
                                      args_only=args))


# Explicit operator-method calls (``x.__radd__(y)``, ``x.__rsub__(2)``): MindSpore's graph compiler resolves no
# dunder attribute of a tensor ("cannot get attributes __radd__"), and MindTorch's own dunders delegate to MindSpore's
# (``tensor_ms.__rsub__(other)``), which it cannot resolve either. On a tensor the call means its operator, which
# the graph compiles like the user's own ``y - x``: method name -> (operator source, reflected).
_BINARY_DUNDERS = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**", "matmul": "@",
    "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>",
}
_COMPARISON_DUNDERS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_UNARY_DUNDERS = {"__neg__": "-{0}", "__pos__": "+{0}", "__invert__": "~{0}", "__abs__": "abs({0})"}
OPERATOR_DUNDERS: Dict[str, str] = {}  # "__rsub__" -> "{1} - {0}" ({0}: the tensor, {1}: the argument)
for _name, _op in {**_BINARY_DUNDERS, **_COMPARISON_DUNDERS}.items():
    OPERATOR_DUNDERS[f"__{_name}__"] = "{0} %s {1}" % _op
for _name, _op in _BINARY_DUNDERS.items():
    OPERATOR_DUNDERS[f"__r{_name}__"] = "{1} %s {0}" % _op
OPERATOR_DUNDERS.update(_UNARY_DUNDERS)

_DUNDER_HELPER = '''\
def {fn}(_adapter_obj{params}):
    if isinstance(_adapter_obj, Tensor):
        return {expr}
    return _adapter_obj.{name}({args})
'''


_HELPER_PARAMETERS = "_adapter_obj _adapter_arg0"  # the generated helpers' local names (no attributes)


def dunder_helper(name: str) -> str:
    """The name of the helper for an explicit ``obj.<name>(arg)`` (``name`` in :data:`OPERATOR_DUNDERS`): the
    operator on a tensor (``arg - obj`` for ``__rsub__``), the object's own method otherwise."""
    unary = name in _UNARY_DUNDERS
    fn = f"{name.strip('_')}__op"
    expr = OPERATOR_DUNDERS[name].format(*_HELPER_PARAMETERS.split())
    params = "" if unary else ", _adapter_arg0"
    return _define(fn, _DUNDER_HELPER.format(fn=fn, name=name, expr=expr, params=params, args=params[2:]))


def _static_value(node: ast.expr, fn) -> Tuple[bool, object]:
    """(True, value) when ``node`` (a name or attribute chain) names a global, closure variable or builtin of
    ``fn`` whose value can be read now; (False, None) for anything else (locals, calls, subscripts...)."""
    path = []
    while isinstance(node, ast.Attribute):
        path.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return False, None
    code = fn.__code__
    if node.id in code.co_varnames or node.id in code.co_cellvars:
        return False, None
    if node.id in code.co_freevars:
        cell = fn.__closure__[code.co_freevars.index(node.id)]
        try:
            value = cell.cell_contents
        except ValueError:
            return False, None
    elif node.id in fn.__globals__:
        value = fn.__globals__[node.id]
    elif hasattr(builtins, node.id):
        value = getattr(builtins, node.id)
    else:
        return False, None
    for attr in reversed(path):
        try:
            value = getattr(value, attr)
        except Exception:  # noqa: BLE001 (a property that raises: not known)
            return False, None
    return True, value


def _not_a_tensor(node: ast.expr, fn) -> bool:
    """``node`` is certainly not a tensor when the graph runs: a literal, ``super()``, or a global/closure/builtin
    name (chain) whose value now is not a tensor (``torch``, ``F``, ``np``, ``torch.nn.functional``, a module object
    a compiled step's ``forward_fn`` reads as a global)."""
    if isinstance(node, (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp,
                         ast.DictComp, ast.SetComp)):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super":
        return True
    known, value = _static_value(node, fn)
    if not known:
        return False
    import mindspore
    return not isinstance(value, mindspore.Tensor)


def _positioned(new: ast.AST, old: ast.AST) -> ast.AST:
    """``new`` with ``old``'s line/column and asttokens positions, on every node it adds."""
    for node in ast.walk(new):
        if not hasattr(node, "first_token") and hasattr(old, "first_token"):
            node.first_token, node.last_token = old.first_token, old.last_token
        ast.copy_location(node, old)
    return new


class _Rewriter(ast.NodeTransformer):
    def __init__(self, fn, methods: FrozenSet[str], properties: FrozenSet[str] = frozenset()):
        self.fn, self.methods, self.properties, self.count = fn, methods, properties, 0

    def visit_Attribute(self, node: ast.Attribute):
        """A read ``obj.<property>`` becomes ``__adapter_torch_methods__.<property>__get(obj)``; writes
        (``x.requires_grad = ...``), deletes and call targets (``obj.is_cuda()``) stay as written."""
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or node.attr not in self.properties \
                or _not_a_tensor(node.value, self.fn):
            return node
        target = ast.Attribute(value=ast.Name(id=NAMESPACE, ctx=ast.Load()), attr=property_helper(node.attr),
                               ctx=ast.Load())
        self.count += 1
        call = ast.Call(func=_positioned(target, node), args=[node.value], keywords=[])
        ast.copy_location(call, node)
        if hasattr(node, "first_token"):
            call.first_token, call.last_token = node.first_token, node.last_token
        return call

    def visit_Call(self, node: ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in self.properties:
            # obj.<property>(...): the callee stays an attribute (not a property read); its parts are visited
            func.value = self.visit(func.value)
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node
        self.generic_visit(node)
        func = node.func
        if not isinstance(func, ast.Attribute) or _not_a_tensor(func.value, self.fn):
            return node
        varargs = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        if func.attr in OPERATOR_DUNDERS:
            if varargs or node.keywords or len(node.args) != (0 if func.attr in _UNARY_DUNDERS else 1):
                return node
            name = dunder_helper(func.attr)
        elif func.attr in self.methods:
            name = helper(func.attr, len(node.args), tuple(k.arg for k in node.keywords), varargs)
        else:
            return node
        target = ast.Attribute(value=ast.Name(id=NAMESPACE, ctx=ast.Load()), attr=name, ctx=ast.Load())
        self.count += 1
        # keep the original argument nodes (their own positions); only the new callee nodes take the call's
        call = ast.Call(func=_positioned(target, node), args=[func.value, *node.args], keywords=node.keywords)
        call.lineno, call.col_offset = node.lineno, node.col_offset
        call.end_lineno, call.end_col_offset = node.end_lineno, node.end_col_offset
        if hasattr(node, "first_token"):
            call.first_token, call.last_token = node.first_token, node.last_token
        return call


class _FirstParameterRewriter(_Rewriter):
    """:class:`_Rewriter` restricted to calls on ``name`` (the function's first parameter, never assigned in it)."""

    def __init__(self, fn, methods: FrozenSet[str], name: str):
        super().__init__(fn, methods)
        self.name = name

    def visit_Call(self, node: ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == self.name:
            return super().visit_Call(node)
        self.generic_visit(node)
        return node


def _first_parameter(tree: ast.AST) -> Optional[str]:
    """The first parameter of the function ``tree`` defines, when the body never assigns it; else None."""
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not defs or not defs[0].args.args:
        return None
    name = defs[0].args.args[0].arg
    for node in ast.walk(defs[0]):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return None
    return name


def rewrite(tree: ast.AST, fn, first_parameter_only: bool = False) -> Tuple[ast.AST, int]:
    """(a rewritten copy of ``tree``, the number of calls rewritten) for function ``fn`` (module docstring);
    ``first_parameter_only``: only calls on the function's first parameter (MindTorch's own functions, see
    :data:`DELEGATING_FILES`)."""
    new = copy.deepcopy(tree)
    if first_parameter_only:
        name = _first_parameter(new)
        if name is None:
            return new, 0
        rewriter = _FirstParameterRewriter(fn, tensor_methods(), name)
    else:
        rewriter = _Rewriter(fn, tensor_methods(), tensor_properties())
    rewriter.visit(new)
    return new, rewriter.count


# MindTorch's files whose functions delegate to their first parameter's method (``torch.std(input, ...)`` is
# ``input.std(dim, unbiased, keepdim)``, likewise norm, roll, diag...): ``input`` is MindTorch's tensor there, so on
# 2.5 the call meant MindTorch's method; in a 2.10 graph it is MindSpore's (other signatures: "Failed calling std
# with std(None, bool, bool)", "unexpected keyword argument 'p'"). Calls on the first parameter (when the function
# never assigns it) are rewritten as in user code; other calls in these files (on ``cast_to_ms_tensor`` results,
# meant as MindSpore's methods) are left alone.
DELEGATING_FILES = (os.path.join("mindtorch", "torch", "functional.py"),)


# MindTorch's ``torch.X`` functions made from its Tensor methods (``mindtorch/torch/_export_func_to_root.py``:
# ``torch.index_fill(t, ...)`` is ``getattr(t, "index_fill")(...)``, the name in the closure): in a 2.10 graph that
# ``getattr`` finds MindSpore's method of the same name (other signatures and dtypes: op_db's ``index_fill`` "For
# primitive[IndexFill], the input argument[index] must be a type of {Tensor[Int32]}"). Their body is compiled as a
# call of MindTorch's method through the varargs helper, as ``t.index_fill(...)`` in user code is.
EXPORTED_FILE = os.path.join("mindtorch", "torch", "_export_func_to_root.py")
EXPORTED_FUNCTION = "wrap_tensor_func_to_torch"


def _exported_method(fn, filename: str) -> Optional[str]:
    """The Tensor method name that ``fn`` (one of MindTorch's exported ``torch.X`` wrappers) calls, where it is a
    :func:`tensor_methods` name; else None."""
    if not os.path.abspath(filename).endswith(EXPORTED_FILE) or fn.__code__.co_name != EXPORTED_FUNCTION:
        return None
    code = fn.__code__
    if "func_name" not in code.co_freevars or not fn.__closure__:
        return None
    try:
        name = fn.__closure__[code.co_freevars.index("func_name")].cell_contents
    except ValueError:
        return None
    return name if isinstance(name, str) and name in tensor_methods() else None


def _exported_tree(tree: ast.AST, name: str) -> Tuple[ast.AST, int]:
    """A copy of the wrapper's ``tree`` whose ``return getattr(tensor, func_name)(*args, **kwargs)`` calls the
    varargs helper of method ``name`` (MindTorch's method on a tensor)."""
    new = copy.deepcopy(tree)
    count = 0
    for node in ast.walk(new):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Call) \
                and isinstance(node.func.func, ast.Name) and node.func.func.id == "getattr" \
                and len(node.func.args) == 2:
            target = ast.Attribute(value=ast.Name(id=NAMESPACE, ctx=ast.Load()),
                                   attr=helper(name, 0, (), True), ctx=ast.Load())
            node.args = [node.func.args[0], *node.args]
            node.func = _positioned(target, node.func)
            count += 1
    return new, count


def _delegating_file(filename: str) -> bool:
    return os.path.abspath(filename).endswith(DELEGATING_FILES)


def _is_user_code(filename: str) -> bool:
    """Whether the graph parser's ``filename`` is user code to rewrite: the user's own files, and an installed
    package's module that imports torch (:func:`_installed_torch_code`: timm's models)."""
    from adapter.userframe import _is_internal
    path = os.path.abspath(filename)
    return not _is_internal(path) or _installed_torch_code(path)


_installed_checked: Dict[str, bool] = {}  # path -> _installed_torch_code's answer


def _installed_torch_code(path: str) -> bool:
    """Whether ``path`` (a file in ``site-packages``) is the file of an imported module that binds a MindTorch module
    at module level (``import torch``, ``from torch import nn``): PyTorch model code installed as a package (timm),
    which MindSpore compiles as user code since patches/jit_third_party.py. MindSpore, MindTorch and modules that do
    not import torch: False. Measured (timm 1.0.31, 2.10): without this, ``PatchEmbed.forward``'s
    ``x.flatten(2).transpose(1, 2)`` compiled as MindSpore's permute-style ``transpose`` ("the number of axes must be
    equal to the dimension"), and ``x.transpose(0, 1)`` of a 2-D tensor would have been the identity."""
    answer = _installed_checked.get(path)
    if answer is None:
        answer = False
        if "site-packages" in path:
            for module in list(sys.modules.values()):
                file = getattr(module, "__file__", None)
                if not file or os.path.abspath(file) != path:
                    continue
                if module.__name__.split(".")[0] not in ("mindspore", "mindtorch"):
                    answer = any(isinstance(v, types.ModuleType) and (v.__name__ + ".").startswith("mindtorch.")
                                 for v in list(vars(module).values()))
                break
        _installed_checked[path] = answer
    return answer


def _parse_wrapper(original):
    def parse(self):
        tokens, tree = original(self)
        fn = getattr(self, "fn", None)
        if tree is None or fn is None or not hasattr(fn, "__code__"):
            return tokens, tree
        exported = _exported_method(fn, self.filename)
        first_only = _delegating_file(self.filename)
        if exported is None and not first_only and not _is_user_code(self.filename):
            return tokens, tree
        # per tree and function: two functions with the same source (MindSpore caches one tree for both) may
        # read other globals
        key = (id(tree), id(fn))
        entry = _rewritten.get(key)
        if entry is None or entry[0] is not tree or entry[1] is not fn:
            new, count = _exported_tree(tree, exported) if exported else rewrite(tree, fn, first_only)
            entry = _rewritten[key] = (tree, fn, new if count else tree)
        if entry[2] is not tree:
            # where the rewritten calls find the helpers: the function's global namespace, as MindSpore's own
            # Parser.__init__ puts ``__ms_tensor_func__`` there
            self.global_namespace.dicts[0][NAMESPACE] = _helpers()
        return tokens, entry[2]
    parse.__wrapped__ = original
    return parse


parse_wrapper = _parse_wrapper  # adapter/graph_syntax.py puts its own rewrite below this one


def _isinstance_wrapper(original, tensor_type, parameter_type):
    """MindSpore's ``ms_isinstance(x, cmp_type)`` (``x``: a MindSpore type of the graph) with MindTorch's tensor and
    parameter classes read as MindSpore's (module docstring, "isinstance")."""
    def ms_isinstance(x, cmp_type):
        if isinstance(cmp_type, type) and cmp_type not in (tensor_type, parameter_type):
            if issubclass(cmp_type, parameter_type):
                cmp_type = parameter_type  # MindTorch's Parameter: a Ref in the graph
            elif issubclass(cmp_type, tensor_type):
                cmp_type = tensor_type  # MindTorch's Tensor: every tensor in the graph
        return original(x, cmp_type)
    ms_isinstance.__wrapped__ = original
    return ms_isinstance


def swaps() -> list:
    """``[(Parser, "parse", wrapper)]`` for :func:`adapter.graph_semantics.graph_semantics` where :func:`needed`;
    ``[]`` elsewhere."""
    if not needed():
        return []
    from adapter import backend
    import importlib

    import mindspore
    parser_class = backend.internal("parser").Parser
    out = [(parser_class, "parse", _parse_wrapper(parser_class.__dict__["parse"]))]
    # ms_isinstance: what the graph compiler calls for isinstance(x, <class>), looked up in the parser's package
    parser_module = sys.modules[parser_class.__module__]
    for module in (parser_module, importlib.import_module(parser_module.__package__)):
        original = getattr(module, "ms_isinstance", None)
        if original is not None:
            out.append((module, "ms_isinstance",
                        _isinstance_wrapper(original, mindspore.Tensor, mindspore.Parameter)))
    return out
