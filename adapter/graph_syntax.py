"""Python that people write, read the way MindSpore's graph parser can compile it (issue 31 §1).

While a compiled step or forward is compiled, MindSpore's graph parser (``Parser.parse``) reads each function of user
code from its source. This module hands it, for user code only (the files :func:`adapter.graph_methods._is_user_code`
accepts), a rewritten copy of the syntax tree it parsed; the tree MindSpore caches is not modified, and files on
disk never are. Three rewrites:

Lambdas. For a lambda MindSpore parses the source lines ``inspect`` gives for it (the whole statement the lambda
starts in) and takes the statement's value as the lambda: ``self.act = lambda x: ...`` compiles, but
``LambdaLayer(lambda x: F.pad(...))`` does not, on one line or over several ("Parse Lambda Function Fail. Node type
must be Lambda, but got Call ... make sure it is defined on a separate line"; the CIFAR ResNet's option-A shortcut).
The parse then returns a tree whose one statement is that lambda: the ``Lambda`` node that starts on the code
object's first line and takes its parameters (several on that line: the one whose names match the code object's).
Its closure and globals are the lambda's own, as MindSpore resolves them from the function object. A lambda that
starts a continuation line (``LambdaLayer(\n    lambda x: F.pad(...))``) came with the enclosing call's closing
bracket, which did not parse at all ("SyntaxError: unmatched ')'"): its lines are cut at the lambda's end
(:func:`_lambda_source`). Default values (``lambda x, p=planes: ...``) are read where the lambda was made, a name the
parser cannot resolve from the lambda: numbers, strings and tuples of them become constants (:func:`_constant_defaults`).

Container attributes. ``nn.ModuleDict`` / ``nn.ParameterDict`` reach the graph as dictionaries (MindTorch marks them
``__cell_as_dict__``), so an attribute read of one of their keys (``self.transformer.drop(x)``: "In JIT strict mode,
cannot get attributes drop or the Dictionary[...] object has no attribute 'drop'"; PyTorch's ``Module.__getattr__``
finds submodules by name) did not compile. A read ``<chain>.<name>`` whose object is an attribute chain of the
function's first parameter (``self.transformer``, ``self.a.b``) becomes ``__adapter_syntax__.attr__<name>(<chain>)``::

    def attr__drop(obj):
        if isinstance(obj, dict):     # decided when the graph compiles: a ModuleDict / ParameterDict
            return obj["drop"]
        return obj.drop               # anything else: as written

In a lambda, a closure name holding a module is such a root too (``m = self.mlp; self.mlpf = lambda x:
m.c_proj(m.act(m.c_fc(x)))``, minGPT's block: ``m.c_proj`` becomes ``attr__c_proj(m)``). Names that are attributes of
MindTorch's ``Tensor``, ``Module`` or container classes or of ``dict`` (``.items()``), and dunder names, are left as
written.

ParameterDict reads. MindTorch's ``nn.ParameterDict`` is a module, not a dictionary, in a graph; on MindSpore 2.10 its
item reads (``self.pd["v"]``, ``self.pd[name]``) and ``.items()`` loops compiled to constants: the losses of a step
trained by SGD drifted from PyTorch's (third loss 0.66397 against 0.66414, tests/test_param_dict.py). A read
``<chain>["<key>"]`` (``<chain>`` a chain of the first parameter or a local name) becomes
``__adapter_syntax__.item__<key>(<chain>)`` and ``<chain>[<key>]`` (a name, an f-string or a binary operation:
``self.pd[name]``, ``self.pd[f"w{i}"]``) becomes ``__adapter_syntax__.item__(<chain>, <key>)``: a ParameterDict's
entry read as the attribute it is (MindTorch's ``ParameterDict.__getitem__`` is ``getattr``), anything else as
written. MindSpore parsing one of ParameterDict's own
methods (``items``, ``values``, ``keys``, ``get``, ``__iter__``, ``__contains__``, ...) raises
:class:`ParameterDictRead` instead: the step runs eagerly, its reason naming the likeliest user line.

In-place results. MindTorch's ``inplace=True`` activations cannot write into their input in a graph: while compiling
they return their result without the write (``adapter/graph_semantics.py``), so ``y = F.relu(x, inplace=True);
return x + y`` gave ``x + relu(x)`` where PyTorch gives ``2 * relu(x)``: a silently wrong result. In a function body,
a statement that calls ``f(x, ..., inplace=True)``, ``nn.ReLU(inplace=True)(x)`` (a module class constructed with
``inplace=True`` and called at once) or a functional in-place form (``F.relu_(x)``, ``torch.relu_(x)``) on a plain name
``x`` is preceded by ``x = <the call>``, and the call is replaced by ``x``: later reads of ``x`` see the result, as
they see PyTorch's write. Calls inside conditional expressions, ``and`` / ``or``, lambdas and comprehensions are left
alone (they may not run), and so is a statement where a part computed before the call reads the name
(:func:`_used_before`: ``return self.d2(a), F.dropout2d(a, inplace=True)``; hoisting gave ``self.d2`` the written
``a``, a wrong value that tests/test_dropout.py caught on 2.10).

A module held as an attribute (``self.relu = nn.ReLU(inplace=True)`` in ``__init__``) is not known when the tree is
rewritten (one tree serves every instance), so a call ``self.<m>(x)`` on a plain name ``x`` that the function reads
again (``y = self.relu(h); return h + y``: PyTorch's ``h`` is ``relu(h)`` there), or alone as a statement
(``self.relu(x)``), is followed by ``x = __adapter_syntax__.inplace_pick__(self.<m>, <its result>, x)``
(:func:`pick_helper`): the result when the module is one of MindTorch's classes built with ``inplace`` and its flag is
set, else ``x``, decided while compiling (the module is a constant of the graph; the compiled graph is the same as
without the helper for any other module). Without it, ``y = self.relu(h); x + h + y`` compiled to ``x + h +
relu(h)``, silently (tests/test_graph_syntax.py).

Aliases. A write into ``x`` that another name or container also holds (``shortcut = h; h = self.relu(h)``,
``feats.append(x)`` in a loop, :class:`_Aliases`): PyTorch's alias sees the write; a graph rebinds ``x`` only. The
compile is refused instead (:class:`InplaceAlias` for a call known to write; ``inplace_refuse__`` while compiling for
a held module that turns out to write in place), naming the line and the alias: the step runs eagerly, with
PyTorch's values (before, the pre-activation block of tests/fixtures/inplace_alias.py trained silently wrong: second
loss 1.340 for PyTorch's 3.277).

In-place methods on fresh tensors. A statement ``t.scatter_(1, idx, value=0.9)`` (or ``add_``, ``mul_``,
``clamp_``, ``masked_fill_``, ... :data:`_REBOUND_METHODS`) whose ``t`` the function binds only to new tensors
(``t = torch.full_like(x, v)``, ``t = x.clone()``, :data:`_FRESH_FACTORIES`; not a parameter, never bound to
anything else: :func:`_fresh_locals`) becomes ``t = t.scatter(1, idx, value=0.9)``: no other tensor shares ``t``'s
memory, so PyTorch's only effect is the write into ``t``, and later reads see the rebound value. Graph mode refused
the write into a plain tensor, so a loss with label smoothing built this way (davda54/sam's
``smooth_crossentropy``) ran every step eagerly; now it compiles with the same losses (tests/test_vision_idioms.py).
A name stored elsewhere before the write (``b = t``, :class:`_Aliases`) is left as written (eager, as before).

A held ``nn.Sequential`` whose first layer (through nested Sequentials) is in place (``self.conv1 =
nn.Sequential(nn.ReLU(inplace=True), conv, bn)``; ``residual = self.conv1(x); shortcut = self.shortcut(x)``):
PyTorch's ``x`` holds that layer's output after the call. The pick helper recomputes that layer on ``x`` (it is
deterministic: the same values), the refusal helper refuses when ``x`` has an alias, and a random first layer (Dropout
or RReLU in training) is refused (:func:`_input_write`, decided while compiling). Before, the compiled step read the
unwritten ``x``: second loss 1.19018 for PyTorch's 1.18594 (tests/fixtures/inplace_sequential.py). A held module of
the user's whose ``forward`` writes its argument in place before rebinding it (``x += self.pos``, ``x.relu_()``,
``self.act(x)`` with an in-place act) is a write across the call that the graph cannot make: refused, eager. Not
covered: plain functions that write their arguments, and ``self.<m>`` calls with other arguments.

Graph forms. Two more rewrites give Python the graph cannot compile a form it can: a callable a patch registered
(:func:`register_callable_form`: ``torch.autograd.Variable``, read in user code, reads its graph form, so
``map(Variable, (x, y))`` compiles), and builtin ``min(a, b)`` / ``max(a, b)`` where one argument is a tensor in the
graph (``beta = min(1.0, epoch / 10)`` with ``epoch`` a graph input, ``adapter/host_values.py``'s counters), which
MindSpore compiles for constants only ("the inputs should be constant"): ``select(b < a, b, a)``, Python's rule.

New nodes carry the source position of what they replace (``first_token`` / ``last_token``, what MindSpore's
``Parser.get_location`` reads), so compile errors still name the user's ``file:line``. Installed by
:func:`adapter.graph_semantics.graph_semantics` through :func:`swaps`, on every MindSpore version, below
``adapter/graph_methods.py``'s rewrite where that one is needed (MindSpore >= 2.7): it sees the tree made here.
"""
from __future__ import annotations

import ast
import builtins
import collections
import copy
import functools
import keyword
import linecache
import os
import sys
import types
from typing import Dict, Optional, Tuple

from adapter import patching

NAMESPACE = "__adapter_syntax__"  # the global the rewritten reads call (injected as MindSpore injects its own)
_ROOT = os.path.dirname(os.path.abspath(__file__))
_MODULE_NAME = "adapter_generated.syntax"
_module: Optional[types.ModuleType] = None
_rewritten: Dict[Tuple[int, object], Tuple[object, object]] = {}  # (id(tree), code) -> (tree, rewritten or tree)
_skip_names: Optional[frozenset] = None

DECLARED = (
    patching.Declared(
        "graph_syntax", "user code as MindSpore's graph parser can compile it: a lambda inside a statement "
        "(LambdaLayer(lambda x: ...), over several lines) parsed as that lambda, ModuleDict/ParameterDict attribute "
        "reads as item reads, ParameterDict item reads as attribute reads (its .items() etc. raise: eager), "
        "inplace=True calls' input rebound to their result (also self.<m>(x) of a held in-place module, and "
        "t.scatter_(...)-style in-place methods on a tensor the function made: t = t.scatter(...)), "
        "registered callables' graph forms (torch.autograd.Variable), builtin min/max of a tensor",
        "while a compiled step or forward is compiled (graph_semantics())",
        replaces=("mindspore._extends.parse.parser.Parser.parse",)),
)

# functional in-place forms whose first argument is written (torch.nn.functional / torch)
_INPLACE_FUNCTIONS = frozenset({"relu_", "relu6_", "elu_", "selu_", "celu_", "leaky_relu_", "hardtanh_", "rrelu_",
                                "threshold_", "hardsigmoid_", "hardswish_", "silu_", "mish_", "sigmoid_", "tanh_"})

# in-place Tensor methods whose out-of-place form is the same name without the underscore, same arguments
_REBOUND_METHODS = frozenset({"scatter_", "scatter_add_", "masked_fill_", "index_fill_", "index_add_", "clamp_",
                              "clamp_min_", "clamp_max_", "add_", "sub_", "mul_", "div_", "neg_", "abs_", "exp_",
                              "log_", "sqrt_", "pow_", "sigmoid_", "tanh_", "relu_", "lerp_", "addcmul_", "addcdiv_"})
# calls that return a new tensor no other name holds: `torch.full_like(x, v)`, `x.clone()`, `x.new_zeros(n)`
_FRESH_FACTORIES = frozenset({"full_like", "zeros_like", "ones_like", "empty_like", "rand_like", "randn_like", "zeros",
                              "ones", "full", "empty", "tensor", "clone", "new_zeros", "new_ones", "new_full",
                              "new_empty", "new_tensor"})

_ATTR_HELPER = '''\
def {fn}(_adapter_obj):
    if isinstance(_adapter_obj, dict):
        return _adapter_obj["{name}"]
    return _adapter_obj.{name}
'''

_ITEM_HELPER = '''\
def {fn}(_adapter_obj):
    if isinstance(_adapter_obj, _AdapterParameterDict):
        return _adapter_obj.{name}
    return _adapter_obj["{name}"]
'''

_ITEM_BY_NAME_HELPER = '''\
def item__(_adapter_obj, _adapter_key):
    if isinstance(_adapter_obj, _AdapterParameterDict):
        return getattr(_adapter_obj, _adapter_key)
    return _adapter_obj[_adapter_key]
'''


_PICK_HELPER = '''\
def inplace_pick__(_adapter_module, _adapter_out, _adapter_in):
    if isinstance(_adapter_module, _AdapterInplaceModules):
        if getattr(_adapter_module, "inplace", False):
            return _adapter_out
        return _adapter_in
    if not isinstance(_adapter_module, _AdapterModule):
        return _adapter_in
    _adapter_write = _adapter_module._adapter_input_write
    if _adapter_write == "random":
        raise RuntimeError("this call of an nn.Sequential is an in-place operation on its input: its first layer "
                           "(Dropout or RReLU, inplace=True, training) writes a random result into it, which the "
                           "caller reads again; graph mode cannot repeat that write")
    if _adapter_write == "forward":
        raise RuntimeError("this module call is an in-place operation on its input: the module's forward writes into "
                           "its argument, which the caller reads again; graph mode cannot write through the call")
    if _adapter_write is not None:
        return _adapter_write(_adapter_in)
    return _adapter_in
'''


_REFUSE_HELPER = '''\
def inplace_refuse__(_adapter_module, _adapter_out, _adapter_in, _adapter_message):
    if isinstance(_adapter_module, _AdapterInplaceModules):
        if getattr(_adapter_module, "inplace", False):
            raise RuntimeError(_adapter_message)
        return _adapter_in
    if not isinstance(_adapter_module, _AdapterModule):
        return _adapter_in
    if _adapter_module._adapter_input_write is not None:
        raise RuntimeError(_adapter_message)
    return _adapter_in
'''

# in-place modules whose write is random in training mode: recomputing it would draw another mask (the pick refuses)
_RANDOM_INPLACE = frozenset({"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
                             "RReLU"})
_IDENTITY_IN_EVAL = _RANDOM_INPLACE - {"RReLU"}  # F.dropout(training=False) returns its input: no write
_MAX_WRITE_DEPTH = 4  # nested modules followed by _input_write


def _input_write(module, depth: int = 0):
    """What a call ``module(x)`` writes into ``x``, read in Python while compiling (a
    :class:`adapter.graph_lean.PythonAttribute` on ``nn.Module``; the pick and refusal helpers above read it):

    * an ``nn.Sequential``: PyTorch's first layer runs on the input itself, so when it is (through nested
      Sequentials) an in-place module with ``inplace=True`` (``nn.Sequential(nn.ReLU(inplace=True), conv, bn)``,
      Xception's middle-flow blocks) the caller's input holds that layer's output afterwards: that layer is returned
      (the pick helper recomputes it on the input: it is deterministic, the same values), or ``"random"`` when the
      write is random (a Dropout / RReLU in training mode: another draw would differ; the compile stops there and the
      step runs eagerly); a first layer of the user's is checked as below;
    * a module of the user's (its class not MindTorch's): ``"forward"`` when its ``forward`` writes its first
      argument in place before rebinding it (:func:`_forward_writes_input`: ``x.relu_()``, ``x += b``, ``x[i] =
      v``, ``F.relu(x, inplace=True)``, ``self.act(x)`` with an in-place module or such a module of the user's): a
      write across the call the graph cannot make (the step runs eagerly);
    * None otherwise (MindTorch's in-place classes are decided by the helpers themselves)."""
    from mindtorch.torch.nn import Sequential
    classes = _helpers()._AdapterInplaceModules
    while isinstance(module, Sequential):
        if len(module) == 0:
            return None
        module = module[0]
        if isinstance(module, classes):
            if not getattr(module, "inplace", False):
                return None
            name = type(module).__name__
            if name in _IDENTITY_IN_EVAL and not module.training:
                return None
            return "random" if name in _RANDOM_INPLACE else module
    if isinstance(module, classes) or type(module).__module__.startswith("mindtorch."):
        return None
    return "forward" if depth < _MAX_WRITE_DEPTH and _forward_writes_input(module, depth) else None


@functools.lru_cache(maxsize=None)
def _forward_tree(forward) -> Optional[ast.FunctionDef]:
    """The syntax tree of a module class's ``forward`` (parsed once per function: every instance of a block class is
    asked at each compile), or None when its source cannot be read."""
    import inspect
    import textwrap
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(forward)))
    except (OSError, TypeError, SyntaxError):
        return None
    first = tree.body[0] if tree.body else None
    return first if isinstance(first, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _flag(test: ast.expr, module, self_name: str) -> Optional[bool]:
    """The truth of an ``if`` test made of the instance's own attributes (``self.inplace``, ``not self.inplace``,
    ``self.a and self.b``), read from ``module`` as it is now; None when the test reads anything else."""
    if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) and test.value.id == self_name:
        value = getattr(module, test.attr, None)
        return bool(value) if isinstance(value, (bool, int, float, str, type(None))) else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _flag(test.operand, module, self_name)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [_flag(v, module, self_name) for v in test.values]
        if isinstance(test.op, ast.And):
            return False if False in values else (None if None in values else True)
        return True if True in values else (None if None in values else False)
    return None


def _live_nodes(fn: ast.AST, module, self_name: str):
    """The nodes of ``fn`` (as ``ast.walk`` yields them, in no set order) less the branches an ``if`` statement or a
    conditional expression never takes for this instance: a test of its plain attributes (:func:`_flag`), as timm's
    ``x.sigmoid_() if self.inplace else x.sigmoid()`` with ``inplace=False``, is decided by their values at this
    compile, which is when MindSpore's parser reads them too (as constants of the graph)."""
    todo = [fn]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.If, ast.IfExp)):
            taken = _flag(node.test, module, self_name)
            if taken is not None:
                todo.append(node.test)
                branch = node.body if taken else node.orelse
                todo.extend(branch if isinstance(branch, list) else [branch])
                continue
        todo.extend(ast.iter_child_nodes(node))


def _forward_writes_input(module, depth: int) -> bool:
    """Whether ``type(module).forward`` writes its first argument in place before it rebinds the name (module
    docstring of :func:`_input_write`); False when its source cannot be read."""
    forward = getattr(type(module), "forward", None)
    fn = _forward_tree(forward)
    if fn is None or len(fn.args.args) < 2:
        return False
    classes = _helpers()._AdapterInplaceModules
    name = fn.args.args[1].arg
    rebound = min((n.lineno for n in _live_nodes(fn, module, fn.args.args[0].arg)
                   if isinstance(n, (ast.Assign, ast.AnnAssign, ast.For))
                   and any(isinstance(t, ast.Name) and t.id == name
                           for t in ast.walk(n.target if not isinstance(n, ast.Assign) else ast.Tuple(n.targets)))),
                  default=float("inf"))
    for node in _live_nodes(fn, module, fn.args.args[0].arg):
        line = getattr(node, "lineno", None)
        if line is None or line > rebound:
            continue
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return True  # `x += b`: in place on a tensor
        if isinstance(node, (ast.Assign, ast.AugAssign)) and any(
                isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])):
            return True  # `x[i] = v`
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        on_name = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name
        if on_name and func.attr.endswith("_") and not func.attr.startswith("_"):
            return True  # `x.relu_()`, `x.mul_(2)`
        first = node.args[0] if node.args else None
        if not (isinstance(first, ast.Name) and first.id == name):
            continue
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called in _INPLACE_FUNCTIONS or _written_name(node, forward) == name:
            return True  # `F.relu_(x)`, `F.relu(x, inplace=True)`, `nn.ReLU(inplace=True)(x)`
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == fn.args.args[0].arg:
            held = getattr(module, func.attr, None)  # `self.act(x)`: the held module, as the instance has it
            if isinstance(held, classes):
                if getattr(held, "inplace", False):
                    return True
            elif held is not None and _input_write(held, depth + 1) is not None:
                return True
    return False


def _inplace_module_classes() -> tuple:
    """MindTorch's ``nn`` module classes built with an ``inplace`` argument (ReLU, LeakyReLU, Hardswish, Dropout, ...):
    those whose in-place write graph mode drops (``adapter/graph_semantics.py``)."""
    import inspect

    import mindtorch.torch.nn as nn
    found = []
    for value in vars(nn).values():
        if isinstance(value, type) and issubclass(value, nn.Module):
            try:
                if "inplace" in inspect.signature(value.__init__).parameters:
                    found.append(value)
            except (TypeError, ValueError):
                continue
    return tuple(found)


def pick_helper() -> str:
    """The name of the helper that gives, for ``self.<m>(x)``, the value ``x`` holds after the call: the call's
    result when ``self.<m>`` is one of MindTorch's modules built with ``inplace=True`` (:func:`_inplace_module_classes`),
    its first layer's result on ``x`` when it is an ``nn.Sequential`` starting with one (:func:`_input_write`; it
    raises for a write it cannot make: a random first layer, a module of the user's whose forward writes its input),
    else ``x``; decided while compiling (the module is a constant of the graph), so one rewritten tree serves every
    instance."""
    module = _helpers()
    if not hasattr(module, "_AdapterInplaceModules"):
        module._AdapterInplaceModules = _inplace_module_classes()
        from mindtorch.torch.nn import Module

        from adapter.graph_lean import PythonAttribute
        with patching.applying("graph_syntax"):
            patching.patch_attr(Module, "_adapter_input_write", PythonAttribute(_input_write))
    return _defined("inplace_pick__", _PICK_HELPER)


def refuse_helper() -> str:
    """The name of :func:`pick_helper`'s variant for an input with an alias (:class:`_Aliases`): while compiling, it
    raises its message when the module writes in place (the graph cannot write through the alias), else gives the
    input unchanged."""
    pick_helper()  # _AdapterInplaceModules
    return _defined("inplace_refuse__", _REFUSE_HELPER)


def _helpers() -> types.ModuleType:
    """The module holding the generated helpers (in ``sys.modules``: MindSpore's parser resolves a function's globals
    through ``sys.modules[fn.__module__]``)."""
    global _module
    if _module is None:
        module = types.ModuleType(_MODULE_NAME)
        from mindtorch.torch.nn import Module, ParameterDict
        module._AdapterParameterDict = ParameterDict
        module._AdapterModule = Module  # the pick/refuse helpers: a function attribute (self.mlpf = lambda x: ...)
        sys.modules[_MODULE_NAME] = module
        _module = module
    return _module


def item_helper() -> str:
    """The name of the helper for a read of ``<chain>[<name>]`` (a variable key; module docstring), defined on first
    use as :func:`attribute_helper`'s."""
    return _defined("item__", _ITEM_BY_NAME_HELPER)


def attribute_helper(name: str, item: bool = False) -> str:
    """The name of the helper for a read of ``<chain>.<name>`` (``<chain>["<name>"]`` with ``item``; module
    docstring), defined on first use; its source is registered in ``linecache`` so that MindSpore's parser
    (``inspect``) finds it."""
    fn = f"item__{name}" if item else f"attr__{name}"
    return _defined(fn, (_ITEM_HELPER if item else _ATTR_HELPER).format(fn=fn, name=name))


def _defined(fn: str, source: str) -> str:
    """``fn``, the name of a generated helper whose definition is ``source``, defined in :func:`_helpers`' module on
    first use; its source is registered in ``linecache`` under a name that is not a file, so that MindSpore's parser
    (``inspect``) finds it."""
    module = _helpers()
    if fn not in module.__dict__:
        filename = os.path.join(_ROOT, f"_syntax_{fn}.py")
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), module.__dict__)
    return fn


def _skipped() -> frozenset:
    """Attribute names left as written: those of MindTorch's ``Tensor``, ``Module`` and container classes and of
    ``dict`` (a tensor property, a module method, ``.items()``: never a dictionary key read as an attribute in PyTorch
    either, since ``Module.__getattr__`` runs only for names the class lacks)."""
    global _skip_names
    if _skip_names is None:
        import mindspore
        from mindtorch.torch import Tensor
        from mindtorch.torch.nn import Module, ModuleDict, ModuleList, ParameterDict, Sequential
        names = set()
        for cls in (Tensor, Module, ModuleDict, ParameterDict, ModuleList, Sequential, mindspore.Tensor, dict):
            names.update(dir(cls))
        _skip_names = frozenset(names)
    return _skip_names


def _positioned(new: ast.AST, old: ast.AST) -> ast.AST:
    """``new`` with ``old``'s line/column and asttokens positions on every node that lacks them."""
    for node in ast.walk(new):
        if not hasattr(node, "first_token") and hasattr(old, "first_token"):
            node.first_token, node.last_token = old.first_token, old.last_token
        if not hasattr(node, "lineno") or node is new:
            ast.copy_location(node, old)
    return new


def _helper_ref(fn: str) -> ast.Attribute:
    """``__adapter_syntax__.<fn>``: a read of the generated helper ``fn``."""
    return ast.Attribute(value=ast.Name(id=NAMESPACE, ctx=ast.Load()), attr=fn, ctx=ast.Load())


def _helper_call(fn: str, arg: ast.expr, where: ast.AST) -> ast.Call:
    return _positioned(ast.Call(func=_helper_ref(fn), args=[arg], keywords=[]), where)


def _chain_of(node: ast.expr, root: str) -> bool:
    """``node`` is ``root.a`` / ``root.a.b`` ...: attribute reads only, from the name ``root``."""
    if not isinstance(node, ast.Attribute):
        return False
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == root


class _ContainerAttributes(ast.NodeTransformer):
    """``<root chain>.<name>`` reads -> ``__adapter_syntax__.attr__<name>(<root chain>)`` (module docstring)."""

    def __init__(self, root: Optional[str], free: Tuple[str, ...] = ()):
        self.root, self.free, self.count = root, free, 0

    def _container_chain(self, node: ast.expr) -> bool:
        """A chain of the first parameter (``self.mlp``), or a closure name holding a module or a chain of one
        (``m`` in ``lambda x: m.c_proj(x)`` after ``m = self.mlp``)."""
        if _chain_of(node, self.root):
            return True
        return any((isinstance(node, ast.Name) and node.id == name) or _chain_of(node, name) for name in self.free)

    def visit_Attribute(self, node: ast.Attribute):
        wanted = (isinstance(node.ctx, ast.Load) and self._container_chain(node.value)
                  and not node.attr.startswith("__") and node.attr not in _skipped()
                  and node.attr.isidentifier() and not keyword.iskeyword(node.attr))
        self.generic_visit(node)
        if not wanted:
            return node
        self.count += 1
        return _helper_call(attribute_helper(node.attr), node.value, node)

    def visit_Subscript(self, node: ast.Subscript):
        key = node.slice
        # a chain of the first parameter, or any local name (``pd = self.pd; pd["v"]``)
        base = _chain_of(node.value, self.root) or isinstance(node.value, ast.Name)
        wanted = (isinstance(node.ctx, ast.Load) and base
                  and isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier()
                  and not keyword.iskeyword(key.value) and not key.value.startswith("__"))
        by_name = (isinstance(node.ctx, ast.Load) and base and isinstance(key, (ast.Name, ast.JoinedStr, ast.BinOp)))
        self.generic_visit(node)
        if by_name:
            self.count += 1
            call = _helper_call(item_helper(), node.value, node)
            call.args.append(node.slice)
            return call
        if not wanted:
            return node
        self.count += 1
        return _helper_call(attribute_helper(key.value, item=True), node.value, node)


_callable_forms: Dict[int, Tuple[object, str, str]] = {}  # id(obj) -> (obj, helper name, helper source)


def register_callable_form(obj, name: str, source: str) -> None:
    """While compiling user code, a read of a name or attribute chain that resolves to ``obj`` (called, ``obj(x)``,
    or passed on, ``map(obj, xs)``) reads the generated helper ``name`` (defined by ``source``, a ``def name(...)``
    in graph syntax) instead: the graph form of a Python callable MindSpore's parser cannot compile, such as a class
    whose ``__new__`` returns a tensor (``patches/variable.py``: ``torch.autograd.Variable``). Registering ``obj``
    again replaces its form."""
    _callable_forms[id(obj)] = (obj, name, source)


class _CallableForms(ast.NodeTransformer):
    """Reads of registered callables (:func:`register_callable_form`) -> ``__adapter_syntax__.<helper>``."""

    def __init__(self, fn):
        self.fn, self.count = fn, 0

    def _form(self, node):
        if not isinstance(node.ctx, ast.Load):
            return None
        value = _resolve(node, self.fn)
        form = _callable_forms.get(id(value)) if value is not _UNKNOWN else None
        return form if form is not None and form[0] is value else None

    def visit_Name(self, node: ast.Name):
        return self._replaced(node) or node

    def visit_Attribute(self, node: ast.Attribute):
        return self._replaced(node) or self.generic_visit(node)

    def _replaced(self, node):
        form = self._form(node)
        if form is None:
            return None
        self.count += 1
        helper = _defined(form[1], form[2])
        return _positioned(_helper_ref(helper), node)


# Python's min/max of two values where one is a tensor in a graph (a warm-up factor `min(1.0, epoch / 10)` whose
# counter is a graph input, adapter/host_values.counters): MindSpore's graph compiles builtin min/max of constants
# only ("the inputs should be constant"). Python's rule, kept: min(a, b) is b if b < a else a; max(a, b) is b if
# b > a else a (the first argument on ties and NaNs)
_MIN_MAX_HELPER = '''\
from mindspore import Tensor as _AdapterMsTensor
from mindspore import ops as _AdapterOps


def {fn}(_adapter_a, _adapter_b):
    if isinstance(_adapter_a, _AdapterMsTensor) or isinstance(_adapter_b, _AdapterMsTensor):
        return _AdapterOps.select(_adapter_b {op} _adapter_a, _adapter_b, _adapter_a)
    return {name}(_adapter_a, _adapter_b)
'''


class _MinMax(ast.NodeTransformer):
    """``min(a, b)`` / ``max(a, b)`` of the builtins -> ``__adapter_syntax__.min__(a, b)`` (``_MIN_MAX_HELPER``)."""

    def __init__(self, fn):
        self.fn, self.count = fn, 0

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        if not (isinstance(node.func, ast.Name) and node.func.id in ("min", "max") and len(node.args) == 2
                and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)
                and _resolve(node.func, self.fn) is getattr(builtins, node.func.id)):
            return node
        self.count += 1
        name = node.func.id
        fn = _defined(f"{name}__", _MIN_MAX_HELPER.format(fn=f"{name}__", name=name, op="<" if name == "min" else ">"))
        return _positioned(ast.Call(func=_positioned(_helper_ref(fn), node.func), args=node.args, keywords=[]), node)


class _MapLambda(ast.NodeTransformer):
    """``map(lambda t: <body>, <iterable>)`` -> ``[<body> for t in <iterable>]``: MindSpore's graph ``map`` takes no
    closure with free variables ("The Map operator don't support Closure with free variable yet": ``q, k, v =
    map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=self.heads), qkv)`` in an attention block). The list holds
    what the iterator yields, in order; unpacking, iterating and ``list()`` / ``tuple()`` of it read the same values."""

    def __init__(self, fn):
        self.fn, self.count = fn, 0

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        if not (isinstance(node.func, ast.Name) and node.func.id == "map" and len(node.args) == 2 and not node.keywords
                and isinstance(node.args[0], ast.Lambda) and _resolve(node.func, self.fn) is builtins.map):
            return node
        lam = node.args[0]
        params = lam.args
        if len(params.args) != 1 or params.vararg or params.kwarg or params.kwonlyargs or params.defaults \
                or params.posonlyargs:
            return node
        self.count += 1
        target = ast.Name(id=params.args[0].arg, ctx=ast.Store())
        comp = ast.comprehension(target=target, iter=node.args[1], ifs=[], is_async=0)
        return _positioned(ast.ListComp(elt=lam.body, generators=[comp]), node)


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


_UNKNOWN = object()


def _resolve(node: ast.expr, fn):
    """The value of a name or attribute chain (``F.relu``, ``nn.ReLU``) in ``fn``'s closure, globals or builtins;
    ``_UNKNOWN`` where it is not one or cannot be read without running code."""
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, fn)
        if base is _UNKNOWN or not isinstance(base, (types.ModuleType, type)):
            return _UNKNOWN
        return getattr(base, node.attr, _UNKNOWN)
    if not isinstance(node, ast.Name):
        return _UNKNOWN
    code = fn.__code__
    if node.id in code.co_freevars and fn.__closure__:
        try:
            return fn.__closure__[code.co_freevars.index(node.id)].cell_contents
        except ValueError:  # empty cell
            return _UNKNOWN
    if node.id in fn.__globals__:
        return fn.__globals__[node.id]
    return getattr(builtins, node.id, _UNKNOWN)


def _module_class(value) -> bool:
    from mindtorch.torch.nn import Module
    return isinstance(value, type) and issubclass(value, Module)


def _written_name(call: ast.Call, fn) -> Optional[str]:
    """The plain name an in-place call writes into (module docstring), or None: ``f(x, inplace=True)`` with ``f`` a
    function (not a class: ``nn.Dropout(p, inplace=True)`` builds a module), ``M(inplace=True)(x)`` with ``M`` a
    module class, ``F.relu_(x)``."""
    if not call.args or not isinstance(call.args[0], ast.Name):
        return None
    func = call.func
    if any(k.arg == "inplace" and _is_true(k.value) for k in call.keywords):
        value = _resolve(func, fn)
        if value is not _UNKNOWN and callable(value) and not isinstance(value, type):
            return call.args[0].id
        return None
    if isinstance(func, ast.Call):
        if len(call.args) == 1 and not call.keywords and \
                any(k.arg == "inplace" and _is_true(k.value) for k in func.keywords) and \
                _module_class(_resolve(func.func, fn)):
            return call.args[0].id
        return None
    if isinstance(func, ast.Attribute) and func.attr in _INPLACE_FUNCTIONS:
        value = _resolve(func, fn)
        if value is not _UNKNOWN and callable(value) and not isinstance(value, type):
            return call.args[0].id
    return None


def _module_attribute(func: ast.expr, root: Optional[str]) -> bool:
    """``func`` reads a module held by the function's first parameter: ``self.relu``, or ``self.block.act`` as
    :class:`_ContainerAttributes` rewrote it (``__adapter_syntax__.attr__act(self.block)``)."""
    if root is None:
        return False
    if _chain_of(func, root):
        return True
    return isinstance(func, ast.Call) and len(func.args) == 1 and isinstance(func.func, ast.Attribute) \
        and isinstance(func.func.value, ast.Name) and func.func.value.id == NAMESPACE \
        and func.func.attr.startswith("attr__") and (_chain_of(func.args[0], root) or
                                                     (isinstance(func.args[0], ast.Name) and func.args[0].id == root))


def _held_module_input(call: ast.Call, root: Optional[str], observed) -> Optional[str]:
    """The plain name ``x`` of a call ``self.<m>(x)`` (:func:`_module_attribute`, one positional argument) whose
    ``x`` is read again in the function (``observed(x)``): if ``self.<m>`` is an in-place module, PyTorch's later
    reads of ``x`` see its write (module docstring); else None."""
    if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.Name):
        return None
    if not _module_attribute(call.func, root) or not observed(call.args[0].id):
        return None
    return call.args[0].id


def _pick(name: str, module: ast.expr, out: ast.expr, where: ast.AST, refusal: Optional[str] = None) -> ast.Assign:
    """``name = __adapter_syntax__.inplace_pick__(module, out, name)`` (:func:`pick_helper`); with ``refusal`` (the
    input has an alias, :class:`_Aliases`), ``inplace_refuse__(module, out, name, refusal)``, which raises that
    message while compiling when the module writes in place."""
    helper, extra = (pick_helper(), []) if refusal is None else (refuse_helper(), [ast.Constant(refusal)])
    call = ast.Call(func=_helper_ref(helper), args=[copy.deepcopy(module), out, ast.Name(id=name, ctx=ast.Load())] + extra,
                    keywords=[])
    return _positioned(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=call), where)


class InplaceAlias(RuntimeError):
    """An in-place write (``F.relu(x, inplace=True)``, a held ``nn.ReLU(inplace=True)``) into a tensor that another
    name or container also holds (``identity = x``, ``feats.append(x)``): graph mode rebinds only ``x``, so the alias
    would keep the old values where PyTorch's sees the write. Raised while compiling; the step or forward runs
    eagerly (kind ``inplace-tensor-method``: the message says "is an in-place operation")."""
    fallback_kind = "inplace-tensor-method"


_ALIAS_METHODS = frozenset({"append", "extend", "insert", "add", "update", "setdefault"})


class _Aliases:
    """Where a function stores a name's value under another name or in a container, before an in-place write into
    it: ``a = x`` (any target), ``a, b = x, y`` or ``feats = [x]`` (a display assigned), ``feats.append(x)`` (and
    ``extend`` / ``insert`` / ``add`` / ``update`` / ``setdefault``). A store counts when the name is not bound
    anew between it and the write: earlier in the source with no assignment to the name on the lines between
    (``identity = x; x = self.conv(x); x = self.relu(x)`` has one: the write is into the conv's result), or later in
    a loop that holds both, with no assignment after it in the loop nor before the write (the next iteration writes
    into the stored tensor). By lines, so branches count as if both ran: a false alarm runs the step eagerly, which
    is right, only slower."""

    def __init__(self, function: ast.AST, filename: str, line_offset: int):
        self.filename, self.line_offset = filename, line_offset
        self.stores: Dict[str, list] = collections.defaultdict(list)  # name -> [(line, holder)]
        self.bound: Dict[str, list] = collections.defaultdict(list)  # name -> lines assigning it anew
        self.loops = [n for n in ast.walk(function) if isinstance(n, (ast.For, ast.While, ast.AsyncFor))]
        augmented = {id(n.target) for n in ast.walk(function) if isinstance(n, ast.AugAssign)}  # x += y: same tensor
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in augmented:
                self.bound[node.id].append(node.lineno)
        for node in ast.walk(function):
            if isinstance(node, ast.Assign):
                holder = ast.unparse(node.targets[0])
                for name in self._displayed(node.value):
                    if not (isinstance(node.targets[0], ast.Name) and node.targets[0].id == name):
                        self.stores[name].append((node.lineno, holder))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in _ALIAS_METHODS:
                for arg in node.args:
                    for name in self._displayed(arg):
                        self.stores[name].append((node.lineno, ast.unparse(node.func.value)))

    @staticmethod
    def _displayed(value: ast.expr) -> list:
        if isinstance(value, ast.Name):
            return [value.id]
        if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
            return [n for e in value.elts for n in _Aliases._displayed(e)]
        if isinstance(value, ast.Dict):
            return [n for e in value.values if e is not None for n in _Aliases._displayed(e)]
        return []

    def where(self, node: ast.AST) -> str:
        """The user's ``file:line`` of ``node``."""
        from adapter.userframe import display_path
        return f"{display_path(self.filename)}:{self.line_offset + node.lineno - 1}"

    def refusal(self, name: str, call: ast.Call) -> Optional[str]:
        """The message for an in-place write into ``name`` at ``call`` when ``name`` has an alias by then, else
        None."""
        write = call.lineno
        bound = self.bound.get(name, ())
        loops = [loop for loop in self.loops if call in set(ast.walk(loop))]
        found = []
        for line, holder in self.stores.get(name, ()):
            if line < write and not any(line < b < write for b in bound):
                found.append((line, holder))
            elif line > write and any(loop.lineno <= line <= loop.end_lineno and not any(
                    line < b <= loop.end_lineno or loop.lineno <= b < write for b in bound) for loop in loops):
                found.append((line, holder))
        if not found:
            return None
        line, holder = found[0]
        return (f"`{ast.unparse(call)}` is an in-place operation on `{name}`, which `{holder}` also holds "
                f"(line {self.line_offset + line - 1}): graph mode cannot write through that alias (PyTorch's "
                f"`{holder}` would see the write); the step runs eagerly. To compile it, write `{name} = "
                f"{ast.unparse(call.func)}(...)` without inplace, or keep a copy (`{holder} = {name}.clone()`)")


class _InplaceCalls(ast.NodeTransformer):
    """Within one statement: each in-place call on a plain name, replaced by that name, and each call of a held
    module on a plain name that is read again (:func:`_held_module_input`), replaced by a temporary; the calls, in
    evaluation order, in :attr:`hoisted` as ``(name, call, temporary or None)``."""

    def __init__(self, fn, root=None, observed=lambda name: False, aliases: Optional[_Aliases] = None):
        self.fn, self.root, self.observed, self.aliases, self.hoisted = fn, root, observed, aliases, []

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        name = _written_name(node, self.fn)
        if name is not None:
            refusal = self.aliases.refusal(name, node) if self.aliases is not None else None
            if refusal is not None:
                raise InplaceAlias(f"{self.aliases.where(node)}: {refusal}")
            self.hoisted.append((name, node, None))
            return _positioned(ast.Name(id=name, ctx=ast.Load()), node)
        name = _held_module_input(node, self.root, self.observed)
        if name is None:
            return node
        temporary = f"__adapter_inplace_{node.lineno}_{node.col_offset}"
        self.hoisted.append((name, node, temporary))
        return _positioned(ast.Name(id=temporary, ctx=ast.Load()), node)

    def _opaque(self, node):  # may not run, or runs in its own scope: left as written
        return node

    visit_IfExp = visit_BoolOp = visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = \
        visit_GeneratorExp = _opaque


_SIMPLE_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)


def _used_before(value: ast.AST, fn, root=None, observed=lambda name: False) -> bool:
    """Whether hoisting the in-place calls of the expression ``value`` would change what an earlier part of it
    computes: a read of the written name, before the call in source order and outside it, inside a sub-expression
    that completes before the call runs (``return self.d2(a), F.dropout2d(a, inplace=True)``: PyTorch's ``self.d2(a)``
    sees ``a`` before the write). A bare operand of an expression that contains the call (``x + F.relu(x,
    inplace=True)``) is a reference to the tensor the call writes: PyTorch's ``+`` sees the written values, as the
    hoisted form does."""
    parents = {}
    for node in ast.walk(value):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    calls = [n for n in ast.walk(value) if isinstance(n, ast.Call)]
    hoisted = {call for call in calls
               if _written_name(call, fn) is not None or _held_module_input(call, root, observed) is not None}
    # a read inside another hoisted call is hoisted with it, in evaluation order (`return self.a(x), self.b(x)`)
    in_hoisted = {node for call in hoisted for node in ast.walk(call)}
    for call in calls:
        name = _written_name(call, fn) or _held_module_input(call, root, observed)
        if name is None:
            continue
        inside = set(ast.walk(call))
        ancestors, node = set(), call
        while node in parents:
            node = parents[node]
            ancestors.add(node)
        for read in ast.walk(value):
            if isinstance(read, ast.Name) and read.id == name and read not in inside and read not in in_hoisted and \
                    (read.lineno, read.col_offset) < (call.lineno, call.col_offset) and parents.get(read) not in ancestors:
                return True
    return False


def _fresh_locals(function: ast.AST) -> frozenset:
    """The names that ``function`` binds only to new tensors no other name holds: every binding of the name is
    ``name = <factory>(...)`` (:data:`_FRESH_FACTORIES`: ``torch.full_like(x, v)``, ``x.clone()``, ...) or an
    augmented assignment, and it is none of the function's parameters (a caller's tensor), nor global/nonlocal."""
    a = function.args
    excluded = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [v for v in (a.vararg, a.kwarg) if v]}
    fresh, other = set(), set(excluded)
    augmented = {id(n.target) for n in ast.walk(function) if isinstance(n, ast.AugAssign)}
    factory_targets = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            other.update(node.names)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
                and node.value.func.attr in _FRESH_FACTORIES:
            fresh.add(node.targets[0].id)
            factory_targets.add(id(node.targets[0]))
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and id(node) not in factory_targets and id(node) not in augmented:
            other.add(node.id)
    return frozenset(fresh - other)


def _method_write(stmt: ast.stmt, fresh: frozenset) -> Optional[ast.Assign]:
    """``x = x.m(args)`` for a statement ``x.m_(args)`` (:data:`_REBOUND_METHODS`) whose ``x`` is one of ``fresh``
    (:func:`_fresh_locals`), else None. PyTorch's only effect of such a statement is the write into ``x``; graph mode
    cannot write into a plain tensor (``inplace-tensor-method``) but rebinds ``x`` to the same values."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) \
            or call.func.attr not in _REBOUND_METHODS or not isinstance(call.func.value, ast.Name) \
            or call.func.value.id not in fresh:
        return None
    name = call.func.value.id
    value = ast.Call(func=ast.Attribute(value=ast.Name(id=name, ctx=ast.Load()), attr=call.func.attr[:-1],
                                        ctx=ast.Load()), args=call.args, keywords=call.keywords)
    return _positioned(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=_positioned(value, call)), stmt)


def _rebind_inplace(body: list, fn, root=None, observed=lambda name: False, aliases: Optional[_Aliases] = None,
                    fresh: frozenset = frozenset()) -> int:
    """Rewrite the statements of ``body`` (and of the blocks nested in it, not of nested functions) in place; the
    number of calls rebound. ``root``: the function's first parameter (``self``); ``observed(x)``: whether ``x`` is
    read more than once in the function (a held module's call on it then goes through :func:`pick_helper`);
    ``fresh``: names whose in-place method statements are rebound (:func:`_method_write`)."""
    count, out = 0, []
    for stmt in body:
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list) and not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                count += _rebind_inplace(block, fn, root, observed, aliases, fresh)
        rebound = _method_write(stmt, fresh)
        if rebound is not None and _refusal(aliases, rebound.targets[0].id, stmt.value) is None:
            out.append(rebound)  # `t.scatter_(1, idx, v)` -> `t = t.scatter(1, idx, v)`
            count += 1
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
                _held_module_input(stmt.value, root, lambda name: True) is not None:
            # `self.relu(x)` alone: PyTorch's only effect is the write into x
            name = stmt.value.args[0].id
            out.append(_pick(name, stmt.value.func, stmt.value, stmt, _refusal(aliases, name, stmt.value)))
            count += 1
            continue
        value = getattr(stmt, "value", None)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and \
                isinstance(value, ast.Call) and _written_name(value, fn) is None and \
                _held_module_input(value, root, lambda name: True) is not None:
            # `y = self.relu(x)`: then `x = pick(self.relu, y, x)` when x is read again (y is x in PyTorch if the
            # module writes in place), or a refusal when an alias of x would miss the write
            name, target = value.args[0].id, stmt.targets[0].id
            refusal = _refusal(aliases, name, value)
            out.append(stmt)
            if (target != name and observed(name)) or refusal is not None:
                out.append(_pick(name, value.func, ast.Name(id=target, ctx=ast.Load()), stmt, refusal))
                count += 1
            continue
        if isinstance(stmt, _SIMPLE_STATEMENTS) and value is not None and not _used_before(value, fn, root, observed):
            calls = _InplaceCalls(fn, root, observed, aliases)
            stmt.value = calls.visit(value)
            for name, call, temporary in calls.hoisted:
                out.extend(_hoisted(name, call, temporary, aliases))
                count += 1
            if calls.hoisted and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Name):
                continue  # `F.relu_(x)` alone: the assignment is the statement
        out.append(stmt)
    body[:] = out
    return count


def _hoisted(name: str, call: ast.Call, temporary: Optional[str], aliases: Optional[_Aliases] = None) -> list:
    """The statements a hoisted call becomes: ``x = <call>`` (an in-place call), or ``<temporary> = <call>`` and
    ``x = pick(<module>, <temporary>, x)`` (a held module's call, :func:`_pick`)."""
    if temporary is None:
        return [_positioned(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=call), call)]
    first = _positioned(ast.Assign(targets=[ast.Name(id=temporary, ctx=ast.Store())], value=call), call)
    return [first, _pick(name, call.func, ast.Name(id=temporary, ctx=ast.Load()), call,
                         _refusal(aliases, name, call))]


def _refusal(aliases: Optional[_Aliases], name: str, call: ast.Call) -> Optional[str]:
    return aliases.refusal(name, call) if aliases is not None else None


def _lambda_node(tree: ast.AST, fn, line_offset: int) -> Optional[ast.Lambda]:
    """The ``Lambda`` node of ``tree`` (parsed from ``fn``'s source lines, which start at ``line_offset``) that
    ``fn`` was made from: it starts on the code object's first line and has its parameter names; when several do,
    the one whose body names match the code's."""
    code = fn.__code__
    line = code.co_firstlineno - line_offset + 1
    nparams = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4) + bool(code.co_flags & 8)
    params = set(code.co_varnames[:nparams])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda) and node.lineno == line:
            a = node.args
            names = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [v for v in (a.vararg, a.kwarg) if v]}
            if names == params:
                found.append(node)
    if len(found) > 1:
        used = set(code.co_names) | set(code.co_freevars) | set(code.co_varnames)

        def names_of(node):
            return {n.id for n in ast.walk(node.body) if isinstance(n, ast.Name)} | \
                {n.attr for n in ast.walk(node.body) if isinstance(n, ast.Attribute)}
        found = [n for n in found if names_of(n) <= used]
    return found[0] if len(found) == 1 else None


def _constant_defaults(lam: ast.Lambda, fn):
    """``(defaults, kw_defaults)`` nodes for ``lam``'s default values as constants, from ``fn.__defaults__`` /
    ``__kwdefaults__`` (``lambda x, p=planes: x * p``: ``planes`` was read where the lambda was made, a name MindSpore's
    parser cannot resolve from the lambda: "The name 'planes' is not defined"); None when it has none or one is not a
    number, string, bool, None or a tuple of them (left as written)."""
    if not lam.args.defaults and not any(lam.args.kw_defaults):
        return None

    def constant(value):
        if value is None or isinstance(value, (bool, int, float, str)):
            return True
        return isinstance(value, tuple) and all(constant(v) for v in value)

    values = list(fn.__defaults__ or ())
    kw = fn.__kwdefaults__ or {}
    if len(values) != len(lam.args.defaults) or not all(constant(v) for v in values + list(kw.values())):
        return None
    defaults = [_positioned(ast.Constant(value=v), node) for v, node in zip(values, lam.args.defaults)]
    kw_defaults = [None if node is None else _positioned(ast.Constant(value=kw[arg.arg]), node)
                   for arg, node in zip(lam.args.kwonlyargs, lam.args.kw_defaults)]
    return defaults, kw_defaults


def _module_cells(fn) -> Tuple[str, ...]:
    """The closure names of ``fn`` that hold a module (``m`` of ``m = self.mlp; self.mlpf = lambda x:
    m.c_proj(m.act(m.c_fc(x)))``, minGPT's MLP over an ``nn.ModuleDict``)."""
    from mindtorch.torch.nn import Module
    names = getattr(getattr(fn, "__code__", None), "co_freevars", ())
    cells = getattr(fn, "__closure__", None) or ()
    found = []
    for name, cell in zip(names, cells):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, Module):
            found.append(name)
    return tuple(found)


def _first_parameter(tree: ast.AST) -> Optional[str]:
    body = getattr(tree, "body", None)
    if body and isinstance(body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = body[0].args.posonlyargs + body[0].args.args
        return args[0].arg if args else None
    return None


def rewrite(tree: ast.Module, fn, line_offset: int) -> Tuple[ast.Module, int]:
    """``(new tree, number of rewrites)`` for the tree MindSpore parsed from ``fn``'s source (module docstring);
    ``tree`` itself is not modified."""
    count = 0
    if getattr(fn, "__name__", None) == "<lambda>":
        statement = tree.body[0] if tree.body else None
        value = getattr(statement, "value", None)
        lam = _lambda_node(tree, fn, line_offset)
        if lam is None:
            return tree, 0
        defaults = _constant_defaults(lam, fn)
        free = _module_cells(fn)
        same = lam is value
        if same and defaults is None and not free:
            return tree, 0
        lam = copy.deepcopy(lam)
        if defaults is not None:
            lam.args.defaults, lam.args.kw_defaults = defaults
        attributes = _ContainerAttributes(None, free)
        lam = attributes.visit(lam)
        if same and defaults is None and not attributes.count:
            return tree, 0
        new = ast.Module(body=[_positioned(ast.Expr(value=lam), statement)], type_ignores=[])
        return new, 1 + attributes.count
    root = _first_parameter(tree)
    new = copy.deepcopy(tree)
    for rewriter in ((_CallableForms,) if _callable_forms else ()) + (_MinMax, _MapLambda):
        forms = rewriter(fn)
        forms.visit(new.body[0])
        count += forms.count
    if root is not None:
        attributes = _ContainerAttributes(root)
        attributes.visit(new.body[0])
        count += attributes.count
    for node in new.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            reads = collections.Counter(n.id for n in ast.walk(node) if isinstance(n, ast.Name)
                                        and isinstance(n.ctx, ast.Load))
            aliases = _Aliases(node, fn.__code__.co_filename, line_offset)
            count += _rebind_inplace(node.body, fn, root, lambda name: reads[name] > 1, aliases, _fresh_locals(node))
    return (new, count) if count else (tree, 0)


PARAMETER_DICT_MESSAGE = (
    "graph mode cannot read an nn.ParameterDict through .items()/.values()/.keys()/.get(), iteration or `in` "
    "(MindSpore 2.10 compiled them to stale constants, with no gradient); to compile this step read its entries as "
    "self.<dict>.<key> or self.<dict>[key]")
_parameter_dict_functions: Optional[frozenset] = None


class ParameterDictRead(TypeError):
    """Raised while compiling, when MindSpore's parser is asked to parse one of MindTorch's ``nn.ParameterDict``
    methods (``__getitem__``, ``items``, ``values``, ``get``, ``__iter__``, ...): on MindSpore 2.10 such a graph
    compiled but read the parameters as constants (a ParameterDict with two parameters trained by SGD: third loss
    0.66397 compiled, 0.66414 from PyTorch 2.13 and from the eager step; tests/test_param_dict.py), on 2.5-dev it
    did not compile ("local_dict_cnode is null"). The step runs eagerly instead (kind ``unsupported-python-syntax``);
    the message starts with the likeliest user ``file:line`` of the read (:func:`parameter_dict_location`)."""
    fallback_kind = "unsupported-python-syntax"


def _parameter_dict_function(fn) -> bool:
    """``fn`` is one of the functions defined in MindTorch's ``nn.ParameterDict`` class body."""
    global _parameter_dict_functions
    if _parameter_dict_functions is None:
        from mindtorch.torch.nn import ParameterDict
        found = set()
        for value in ParameterDict.__dict__.values():
            value = getattr(value, "__func__", value)
            if isinstance(value, types.FunctionType):
                found.add(value)
        _parameter_dict_functions = frozenset(found)
    return fn in _parameter_dict_functions


_parsed_user: "collections.deque" = collections.deque(maxlen=64)  # (filename, line_offset, tree), newest last


def _reads(tree: ast.AST, method: str):
    """The nodes of ``tree`` that may call ParameterDict's ``method``: ``d[k]`` for ``__getitem__``, ``k in d`` for
    ``__contains__``, ``for ... in d`` for ``__iter__``, ``d.<method>(...)`` otherwise."""
    for node in ast.walk(tree):
        if method == "__getitem__":
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                yield node
        elif method == "__contains__":
            if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
                yield node
        elif method == "__iter__":
            if isinstance(node, (ast.For, ast.comprehension)):
                yield node.iter
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method:
            yield node


def parameter_dict_location(method: str) -> Optional[str]:
    """The user's ``file:line`` of the likeliest read calling ParameterDict's ``method``: the first such read
    (:func:`_reads`) in the user function parsed last that has one, else the last user function's first line;
    None when no user function was parsed."""
    from adapter.userframe import display_path
    for filename, offset, tree in reversed(_parsed_user):
        for node in sorted(_reads(tree, method), key=lambda n: (n.lineno, n.col_offset)):
            return f"{display_path(filename)}:{node.lineno + offset - 1}"
    if _parsed_user:
        filename, offset, tree = _parsed_user[-1]
        return f"{display_path(filename)}:{offset}"
    return None


def _lambda_end(src: str) -> int:
    """The length of the lambda expression that starts ``src`` (the dedented source lines ``inspect`` gives for it,
    which run on to the end of the enclosing statement: ``lambda x: F.pad(x, (1, 1)))`` in a call written over two
    lines): up to the first closing bracket without its opening one, comma outside brackets, or end of the logical
    line."""
    import io
    import tokenize
    depth = 0
    offsets = [0]
    for line in src.splitlines(True):
        offsets.append(offsets[-1] + len(line))
    try:
        for token in tokenize.generate_tokens(io.StringIO(src).readline):
            at = offsets[token.start[0] - 1] + token.start[1]
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth -= 1
                if depth < 0:
                    return at
            elif depth == 0 and (token.type == tokenize.NEWLINE or (token.type == tokenize.OP and token.string == ",")):
                return at
    except tokenize.TokenError:
        pass
    return len(src)


def _lambda_source(parser, fn):
    """``(tokens, tree)`` as MindSpore's ``Parser.parse`` returns them, for a lambda whose source lines do not parse
    alone (it starts a continuation line, so they end with the enclosing call's closing bracket: MindSpore raised
    ``SyntaxError: unmatched ')'`` and the step ran eagerly): the lines cut at the lambda's end (:func:`_lambda_end`),
    with the parser's ``lines`` / ``line_offset`` / ``col_offset`` set as its own parse sets them, so that locations
    still name the user's lines."""
    import inspect
    import textwrap

    import asttokens
    lines, line_offset = inspect.getsourcelines(fn)
    original = "".join(lines)
    src = textwrap.dedent(original)
    parser.lines, parser.line_offset = lines, line_offset
    parser.col_offset = len(original.split("\n", maxsplit=1)[0]) - len(src.split("\n")[0])
    tokens = asttokens.ASTTokens(src[:_lambda_end(src)].rstrip() + "\n", parse=True)
    return tokens, tokens.tree


def _parse_wrapper(original):
    from adapter.graph_methods import _is_user_code

    def parse(self):
        fn = getattr(self, "fn", None)
        if fn is not None and _parameter_dict_function(fn):
            at = parameter_dict_location(fn.__name__)
            raise ParameterDictRead(f"{at}: {PARAMETER_DICT_MESSAGE}" if at else PARAMETER_DICT_MESSAGE)
        try:
            tokens, tree = original(self)
        except SyntaxError:
            if getattr(fn, "__name__", None) != "<lambda>":
                raise
            tokens, tree = _lambda_source(self, fn)  # a lambda on a continuation line: `    lambda x: f(x))`
        code = getattr(fn, "__code__", None)
        if tree is None or code is None or not _is_user_code(self.filename):
            return tokens, tree
        _parsed_user.append((self.filename, self.line_offset, tree))
        key = (id(tree), code)
        entry = _rewritten.get(key)
        if entry is None or entry[0] is not tree:
            new, count = rewrite(tree, fn, self.line_offset)
            entry = _rewritten[key] = (tree, new if count else tree)
        if entry[1] is not tree:
            self.global_namespace.dicts[0][NAMESPACE] = _helpers()
        return tokens, entry[1]
    parse.__wrapped__ = original
    return parse


def swaps(method_swaps: list) -> list:
    """:func:`adapter.graph_methods.swaps`'s list with this module's ``Parser.parse`` wrapper below graph_methods'
    (which then rewrites the tree made here), or added where graph_methods has none (2.5-dev)."""
    from adapter import backend, graph_methods
    parser_class = backend.internal("parser").Parser
    syntax_parse = _parse_wrapper(parser_class.__dict__["parse"])
    out = [item for item in method_swaps if not (item[0] is parser_class and item[1] == "parse")]
    parse = graph_methods.parse_wrapper(syntax_parse) if len(out) < len(method_swaps) else syntax_parse
    return [(parser_class, "parse", parse)] + out
