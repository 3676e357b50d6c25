"""Host values as graph inputs: graph breaks at host computations, not whole-step fallbacks (issue 31, item 2).

Why. A step region (``adapter/step_rewrite.py``) that draws on the host, ``lam = np.random.beta(alpha, alpha)`` in a
mixup loop, could not be compiled: MindSpore's graph compiler runs a numpy or Python ``random`` call once, at compile
time, and keeps its value as a constant of the graph, so ``adapter/graph_semantics.py`` stops the compile
(``HostRandomDraw``) and the whole step ran eagerly, at about 2x a compiled step's time. Likewise a Python number the
region reads that changes every step (a step counter, an lr computed by hand) was a constant of the graph: one graph
per value, then the eager bridge after 8 ("non-tensor-inputs-change").

What. As torch._dynamo splits a frame at a graph break, the rewrite splits the region:

* :func:`split_region` (load time) takes out of the region each *host statement*: an assignment to plain names whose
  value calls a host random function (``np.random.*``, ``numpy.random.*``, Python's ``random.*``, or a generator
  object's drawing method: ``rng.standard_normal(...)`` for a ``RandomState`` / ``Generator`` / ``random.Random``
  ``rng``, by method name, :data:`_OBJECT_DRAWS`), possibly made a tensor (``torch.from_numpy(...)``,
  ``torch.tensor(...)``, ``torch.as_tensor(...)``, then ``.float()`` / ``.double()`` / ``.to(...)``), or reads only
  values earlier host statements assigned (``w = np.sqrt(1. - lam)``), and otherwise calls only ``math.*``,
  ``numpy`` functions, value builtins (``float``, ``int``, ``abs``, ``min``, ``max``, ``round``) and ``astype`` /
  ``item`` / ``tolist`` / ``reshape`` / ``copy`` of such a call's result, and that reads
  no name an earlier (graph) statement of the region assigns or calls. Such statements run in the script,
  right before the site call, in their order: the host RNG streams advance once per step, in the script's order, as
  in PyTorch (numpy's and Python's streams are not touched by the graph: ``torch.randperm`` / ``torch.rand*`` are
  MindSpore random ops in a compiled step, ``adapter/graph_semantics.py``).
* :func:`graph_inputs` names the values they hand to the graph (the region's free names they assign); the compiled
  step passes each float as a 0-d float32 tensor input (:class:`Numbers`; PyTorch computes ``lam * x`` for a
  float32 ``x`` in float32 too, the Python number rounded to float32: ``TensorIterator``'s common dtype, a wrapped
  number does not promote), a float numpy array as a tensor. Any other Python float the region reads becomes such an
  input once it has changed between two compiled calls (an lr or a warm-up factor computed by hand). A graph that
  does not compile with them is built again with them as constants (:meth:`Numbers.demote`), as before. An int the
  region only computes with (:func:`counters`: a step counter, an epoch in ``min(1.0, epoch / 10)``) is such an
  input too, as a float32 tensor, once it changes; any other int stays a constant of the graph (one graph per value,
  then eager after 8: ``non-tensor-inputs-change``): passed as int64 tensors, compiled code divided them as integers
  (``(x2 - x1) * (y2 - y1) / 6`` gave 0 for 4 / 6 on 2.5-dev, silently: CutMix's area-adjusted lam was 1.0); integer
  arrays drawn on the host run the step eagerly.

Never a constant: a host value is a graph *input*, so each step's graph sees that step's draw
(``tests/test_host_values.py`` checks that ``lam`` differs at every step and the losses follow PyTorch's).

A tensor made so (a GAN's ``noise = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))``) is a graph input
as it is (``tests/test_host_values.py``: each step's noise is numpy's next draw; before, the first compiled step's
noise was a constant of the graph, silently).

A statement calling a function of the user's that draws (facebookresearch/mixup-cifar10's ``inputs, targets_a,
targets_b, lam = mixup_data(inputs, targets, alpha)``, CutMix's box from a ``utils.py`` next to the script) is a host
statement too when the function computes on data only (:class:`DrawingFunctions`): the call runs on the host each
step, its tensors and numbers enter the graph as inputs (``tests/test_host_values.py``: PyTorch's losses step by
step; before, the step ran eagerly).

A statement calling a method or a callable object (a trainer's ``inputs, ta, tb, lam = self.mixup_data(inputs,
targets, alpha)``, ``inputs, targets = mixup_fn(inputs, targets)`` for timm's ``Mixup`` or one of the user's), which
only the running program can resolve (:func:`run_time_call` takes it at load time), is split out when, at run time,
:func:`host_call` finds that the callee (a bound method's function, ``type(obj).__call__``: its source read with
inspect, and that of the methods and module functions it calls) draws, computes on data only, and reads no weight;
the rewrite guards the split site with that check and keeps a twin site with the call in its region
(``adapter/step_rewrite.py``; :func:`host_calls`). A call of a drawing function of the script's
(:class:`DrawingFunctions`) is guarded the same way: its source shows no model call, but not whether a global it
reads is a weight (``return x * (lam + W.mean())``; split by its source alone, that gradient was lost, silently). In-place changes to the batch (timm's ``x.mul_(lam).add_(...)``,
a pasted CutMix box) happen on the host, before the graph reads the batch, as in PyTorch's step.
(``tests/test_host_values.py``: PyTorch's losses step by step for a trainer's method, a callable object of a module
next to the script, and timm.data.Mixup; before, each step ran eagerly.)

Limits: a draw inside a function or method that also calls the model, a global object or a method we cannot tell from
a model call, or reads a weight (``self.model[0].weight``), is not split out; that step still runs eagerly,
with the reason naming the draw's line (``HostRandomDraw``; for a generator object's method, caught by the state check
around each compile, ``adapter/graph_semantics.py``). Tried and not usable on
these MindSpore builds: a third-party function returning a ``Parameter`` at compile time (2.10 folds it to a
constant; 2.5-dev fails in ``MakeParameters``), and a module-global ``Parameter`` read by a parsed function (a
constant on both). A host statement that mixes a draw with a tensor that requires grad (``noise =
np.random.rand() * w``) would lose that gradient outside the region: :func:`check` raises, naming the line.
"""
from __future__ import annotations

import ast
import builtins
import copy
import random as _random
from typing import Dict, List, Optional, Set, Tuple

_NUMPY = frozenset({"np", "numpy"})
_BUILTIN_NAMES = frozenset(dir(builtins))
_VALUE_BUILTINS = frozenset({"float", "int", "abs", "min", "max", "round", "len", "bool"})
# Python random's module functions that draw (random.__all__ less state handling and classes)
_PY_DRAWS = frozenset(n for n in _random.__all__ if n not in ("seed", "getstate", "setstate", "Random",
                                                              "SystemRandom") and not n[0].isupper())
_ALLOWED_NODES = (ast.Name, ast.Constant, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp,
                  ast.Tuple, ast.List, ast.Call, ast.keyword, ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
                  ast.expr_context)


def _chain(expr) -> Optional[List[str]]:
    """``np.random.beta`` -> ``["np", "random", "beta"]``; None when not a name/attribute chain."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    return [expr.id] + parts[::-1]


# the drawing methods of a generator object: numpy's RandomState / Generator and Python's random.Random. Names that
# are also common methods of other objects are left out (``f``, ``power``, ``bytes``, ``sample``: a distribution's
# ``sample()``; ``multinomial``: a tensor's): such a call stays in the graph, where a draw is caught at compile time
# (adapter/graph_semantics.py, "Generator objects")
_OBJECT_DRAWS = frozenset({
    "beta", "binomial", "chisquare", "choice", "dirichlet", "exponential", "gamma", "geometric", "gumbel",
    "hypergeometric", "integers", "laplace", "logistic", "lognormal", "logseries", "multivariate_normal",
    "negative_binomial", "normal", "pareto", "permutation", "poisson", "rand", "randint", "randn", "random",
    "random_sample", "rayleigh", "shuffle", "standard_cauchy", "standard_exponential", "standard_gamma",
    "standard_normal", "standard_t", "triangular", "uniform", "vonmises", "wald", "weibull", "zipf",
    "randrange", "choices", "gauss", "normalvariate", "lognormvariate", "expovariate", "vonmisesvariate",
    "gammavariate", "betavariate", "paretovariate", "weibullvariate", "getrandbits"})
# roots that name a module, not a generator object: `torch.randn(...)` is a graph op compiled (graph_semantics)
_MODULE_ROOTS = frozenset({"np", "numpy", "random", "torch", "th", "F", "nn", "math", "ms", "mindspore"})
# a host value made a tensor: `noise = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))`
_TENSOR_FROM_HOST = frozenset({"from_numpy", "tensor", "as_tensor"})
_TENSOR_METHODS = frozenset({"float", "double", "to"})


def is_host_draw(call: ast.Call) -> bool:
    """``np.random.X(...)``, ``numpy.random.X(...)`` or ``random.X(...)`` (a drawing function of Python's random), or
    a generator object's drawing method (``rng.standard_normal(...)``, ``self.rng.beta(...)``: ``_OBJECT_DRAWS`` on a
    name that is not a module's, ``_MODULE_ROOTS``)."""
    chain = _chain(call.func)
    if chain is None:
        return False
    if len(chain) == 3 and chain[0] in _NUMPY and chain[1] == "random":
        return chain[2] not in ("seed", "get_state", "set_state", "default_rng", "RandomState", "Generator")
    if len(chain) >= 2 and chain[0] not in _MODULE_ROOTS and chain[-1] in _OBJECT_DRAWS:
        return True
    return len(chain) == 2 and chain[0] == "random" and chain[1] in _PY_DRAWS


_ARRAY_METHODS = frozenset({"astype", "item", "tolist", "reshape", "copy"})


def _is_host_call(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _ARRAY_METHODS | _TENSOR_METHODS \
            and isinstance(func.value, ast.Call):
        return _is_host_call(func.value)  # np.random.rand(4).astype(np.float32), torch.from_numpy(...).float()
    chain = _chain(func)
    if chain is None:
        return False
    if is_host_draw(call):
        return True
    if chain[0] == "torch" and len(chain) == 2 and chain[1] in _TENSOR_FROM_HOST:
        return bool(call.args) and isinstance(call.args[0], ast.Call) and _is_host_call(call.args[0])
    if len(chain) == 1:
        return chain[0] in _VALUE_BUILTINS
    return len(chain) == 2 and (chain[0] == "math" or (chain[0] in _NUMPY and chain[1] != "random"))


# -- functions of the user's code that draw on the host -------------------------------------------------------------
# Methods a drawing helper may call on its arguments (tensors): a call of another method on an argument may be a model
# call (`model.encode(x)`), whose result needs a gradient the graph must compute, so such a helper is not split out
_ARG_METHODS = frozenset({
    "size", "dim", "numel", "clone", "detach", "cuda", "cpu", "to", "float", "double", "half", "long", "int", "bool",
    "type", "view", "reshape", "flatten", "contiguous", "permute", "transpose", "flip", "roll", "index_select",
    "gather", "expand", "expand_as", "repeat", "unsqueeze", "squeeze", "new_zeros", "new_ones", "new_full",
    "new_tensor", "fill_", "zero_", "copy_", "masked_fill", "masked_fill_", "mul", "add", "sub", "div", "item",
    "tolist", "numpy", "astype", "max", "min", "sum", "mean", "argmax", "eq", "ne", "lt", "gt", "le", "ge", "chunk", "split", "narrow", "scatter", "scatter_", "one_hot", "lerp", "copy"})
_MAX_DEPTH = 4  # helper calls followed from the step's statement (a helper calling a helper ...)


class DrawingFunctions:
    """Which functions a step's statement may call and be split out for (a graph break at a call, as torch._dynamo
    breaks at a call it cannot trace): module-level ``def``s of the script, and of modules the script imports from
    files next to it (``from mixlib import cutmix_batch``, ``import utils`` then ``utils.mixup_data(...)``: read as
    source, never imported here), that draw on the host (:func:`is_host_draw`), directly or through such a function
    they call (up to ``_MAX_DEPTH`` calls deep), and compute on their arguments only with data functions: calls of
    ``numpy`` / ``math`` / ``random`` / ``torch`` functions, value builtins, helpers of the same kind, and tensor methods
    (``_ARG_METHODS``) on their values. A function that calls one of its parameters or a global object (``model(x)``,
    ``criterion(out, y)``), or another method on a value, may compute what the gradient needs: it stays in the graph,
    and the compile catches its draw (``adapter/graph_semantics.py``: the step runs eagerly, naming the draw's line).

    facebookresearch/mixup-cifar10's ``mixup_data`` (``np.random.beta``, ``torch.randperm``, ``lam * x + (1 - lam) *
    x[index]``) and clovaai/CutMix's ``rand_bbox`` are of the kind."""

    def __init__(self, tree: ast.Module, filename: str):
        import os
        self._dir = os.path.dirname(os.path.abspath(filename))
        self._root = os.path.abspath(filename)
        self._spaces: Dict[str, dict] = {self._root: self._namespace(tree)}
        self._tree = tree
        self._memo: Dict[int, Tuple[bool, Optional[str]]] = {}
        # also split out calls of methods and objects that only the run time can tell (:func:`run_time_call`); the
        # step rewrite sets it while it builds the site that :func:`host_calls` guards
        self.at_run_time = False
        # calls of functions split out at all: the step rewrite clears it while it builds the twin site of a guarded
        # one, which keeps those calls in its region
        self.split_calls = True
        self._methods: Optional[Set[str]] = None

    def drawing_methods(self) -> Set[str]:
        """The names of the script's methods (functions in its classes) that draw in their own body."""
        if self._methods is None:
            self._methods = set()
            tree = self._tree
            for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
                for fn in cls.body:
                    if isinstance(fn, ast.FunctionDef) and any(
                            isinstance(n, ast.Call) and is_host_draw(n) for n in ast.walk(fn)):
                        self._methods.add(fn.name)
        return self._methods

    def _namespace(self, tree: ast.Module) -> dict:
        """The names a module binds at its top level (and in top-level ``if`` / ``try`` blocks): a ``def`` ->
        ``("def", node)``; a module of the user's, a file next to the script -> ``("mod", path)``; ``from m
        import f`` of such a module -> ``("from", path, "f")``; anything imported from elsewhere -> ``("lib",)``."""
        space: dict = {}
        stmts = list(tree.body)
        while stmts:
            stmt = stmts.pop(0)
            if isinstance(stmt, (ast.If, ast.Try)):  # `if __name__ == "__main__":`, try/except ImportError
                stmts[:0] = list(stmt.body) + [s for h in getattr(stmt, "handlers", ()) for s in h.body]
            elif isinstance(stmt, ast.FunctionDef):
                space[stmt.name] = ("def", stmt)
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    local = self._file(alias.name) if alias.asname or "." not in alias.name else None
                    space[alias.asname or alias.name.split(".")[0]] = ("mod", local) if local else ("lib",)
            elif isinstance(stmt, ast.ImportFrom):
                local = self._file(stmt.module) if stmt.module and not stmt.level else None
                for alias in stmt.names:
                    space[alias.asname or alias.name] = ("from", local, alias.name) if local else ("lib",)
        return space

    def _file(self, module: str) -> Optional[str]:
        """The source file of ``module`` when it is a file of the user's next to the script, else None."""
        import os
        base = os.path.join(self._dir, *module.split("."))
        for path in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(path):
                return os.path.abspath(path)
        return None

    def _space(self, path: str) -> dict:
        if path not in self._spaces:
            self._spaces[path] = {}
            try:
                with open(path, encoding="utf-8") as f:
                    self._spaces[path] = self._namespace(ast.parse(f.read(), path))
            except (OSError, SyntaxError, ValueError):
                pass  # unreadable: nothing of it is followed
        return self._spaces[path]

    def _resolve(self, func, path: str):
        """What a call's function expression names in module ``path``: ``("def", node, its path)``, ``("lib",)``
        for a library's function or a builtin, None for anything else (a parameter, a global object, a method)."""
        chain = _chain(func)
        if chain is None:
            return None
        entry = self._space(path).get(chain[0])
        if entry is None:
            return ("lib",) if len(chain) == 1 and chain[0] in _BUILTIN_NAMES else None
        where = path
        for attr in [None] + chain[1:]:
            while entry is not None and entry[0] == "from":
                where = entry[1]
                entry = self._space(where).get(entry[2])
            if entry is None or entry[0] == "lib":
                return entry
            if attr is None:
                continue
            if entry[0] != "mod":
                return None  # an attribute of a function
            where = entry[1]
            entry = self._space(where).get(attr)
        return ("def", entry[1], where) if entry[0] == "def" else None

    def draw(self, func) -> Optional[str]:
        """For a call's function expression in the script: its first host draw as ``"np.random.beta at
        mixlib.py:15"`` when it names a function of the kind above, else None."""
        entry = self._resolve(func, self._root)
        if entry is None or entry[0] != "def":
            return None
        ok, found = self._scan(entry[1], entry[2], 0)
        return found if ok else None

    def data_call(self, call: ast.Call) -> bool:
        """A call in the script that computes on data only: a library function or builtin (``torch.tensor([...])``,
        ``np.clip(...)``) or a tensor method of ``_ARG_METHODS`` on a value (``inputs.cuda()``)."""
        chain = _chain(call.func)
        if chain is None:
            return False
        entry = self._resolve(call.func, self._root)
        return (entry is not None and entry[0] == "lib") or (entry is None and len(chain) >= 2
                                                              and chain[-1] in _ARG_METHODS)

    def _scan(self, node: ast.FunctionDef, path: str, depth: int) -> Tuple[bool, Optional[str]]:
        """(whether ``node`` computes with data functions only, its first host draw or None)."""
        import os
        if id(node) in self._memo:
            return self._memo[id(node)]
        self._memo[id(node)] = (True, None)  # a recursive call: decided by the rest of the body
        ok, found = True, None
        for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
            chain = _chain(call.func)
            if is_host_draw(call):
                found = found or f"{'.'.join(chain)} at {os.path.basename(path)}:{call.lineno}"
                continue
            entry = self._resolve(call.func, path) if chain is not None else None
            if entry is not None and entry[0] == "lib":
                continue
            if entry is not None and entry[0] == "def" and depth < _MAX_DEPTH:
                inner_ok, inner = self._scan(entry[1], entry[2], depth + 1)
                ok, found = ok and inner_ok, found or inner
                continue
            if chain is not None and len(chain) >= 2 and chain[-1] in _ARG_METHODS:
                continue  # x.size(), y[index].cuda(): a method on a value
            ok = False  # a parameter or a global object called, another method: may be the model
            break
        self._memo[id(node)] = (ok, found)
        return ok, found


def _targets(stmt: ast.Assign) -> Optional[List[str]]:
    names = []
    for target in stmt.targets:
        elts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        for e in elts:
            if not isinstance(e, ast.Name):
                return None
            names.append(e.id)
    return names


# -- methods and callable objects that draw: decided at run time ----------------------------------------------------
def run_time_call(stmt: ast.stmt, functions: Optional[DrawingFunctions]) -> Optional[ast.expr]:
    """The callee of a statement ``<names> = <callee>(<args>)`` that only the running program can tell apart from a
    model call: a method (``self.mixup_data(inputs, targets, alpha)``) or an object (``mixup_fn(inputs, targets)``,
    timm's ``Mixup``), neither a function :class:`DrawingFunctions` resolves in the source nor a library's. Taken
    (a candidate for :func:`host_calls`, which decides at run time) when its arguments are names, attributes and
    constants, and it assigns a name it reads (the batch it transforms: ``x = self.cutmix(x)``) or is ``self.<m>``
    for a method ``m`` of the script that draws (:func:`is_host_draw`) in its own body. None otherwise."""
    if functions is None or not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Call):
        return None
    targets, call = _targets(stmt), stmt.value
    chain = _chain(call.func)
    if targets is None or chain is None or chain[0] in _MODULE_ROOTS or chain[0] in _BUILTIN_NAMES \
            or is_host_draw(call) or functions._resolve(call.func, functions._root) is not None:
        return None
    values = list(call.args) + [k.value for k in call.keywords]
    if not all(isinstance(v, ast.Constant) or (_chain(v) is not None) for v in values):
        return None
    if set(targets) & set().union(set(), *(_loads(v) for v in values)):
        return call.func
    if len(chain) == 2 and chain[0] == "self" and chain[1] in functions.drawing_methods():
        return call.func
    return None


def is_host_statement(stmt: ast.stmt, host_names: Set[str] = frozenset(),
                      functions: Optional[DrawingFunctions] = None) -> bool:
    """An assignment to plain names that computes with host functions only (module docstring) and draws on the host,
    or reads only ``host_names`` (values host statements before it assigned: ``w = np.sqrt(1 - lam)``), or whose
    value is a call of a drawing function of the user's (``functions``, :class:`DrawingFunctions`) with arguments of
    that kind (``x, ya, yb, lam = mixup_data(inputs, targets, args.alpha)``)."""
    if not isinstance(stmt, ast.Assign) or _targets(stmt) is None:
        return False
    if functions is not None and not functions.split_calls:
        functions = None
    if functions is not None and functions.at_run_time and run_time_call(stmt, functions) is not None:
        return True
    nodes = list(ast.walk(stmt.value))
    if not all(isinstance(n, _ALLOWED_NODES) for n in nodes):
        return False
    calls = [n for n in nodes if isinstance(n, ast.Call)]
    if functions is not None and isinstance(stmt.value, ast.Call) and functions.draw(stmt.value.func) \
            and all(functions.data_call(c) for c in calls if c is not stmt.value):
        return True
    if not all(_is_host_call(c) for c in calls):
        return False
    if any(is_host_draw(c) for c in calls):
        return True
    roots = {chain[0] for c in calls for chain in [_chain(c.func)] if chain}
    reads = _loads(stmt.value) - roots
    return bool(reads) and reads <= host_names


def _loads(node) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def split_region(region: List[ast.stmt], window: List[ast.stmt] = (), after: List[ast.stmt] = (),
                 functions: Optional[DrawingFunctions] = None) -> Tuple[List[ast.stmt], List[ast.stmt]]:
    """``(host statements, the rest)`` of a step's region, each in the region's order: the host statements
    (:func:`is_host_statement`) that read no name assigned, nor any object called, by an earlier statement that
    stays in the graph. When nothing would stay, nothing is split; nor when a statement of ``window`` (the step's
    statements in the script's order) that the rewrite runs after the site call (``after``) comes before a host
    statement and calls anything (it may draw: `a = np.random.rand()` not needed by the loss; the host streams
    must advance in the script's order)."""
    host, rest = [], []
    graph_names: Set[str] = set()  # assigned or called by the graph statements so far
    host_names: Set[str] = set()  # assigned by the host statements so far
    for stmt in region:
        if is_host_statement(stmt, host_names, functions) and not (_loads(stmt) & graph_names):
            host.append(stmt)
            host_names |= set(_targets(stmt))
            continue
        rest.append(stmt)
        graph_names |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
    if not rest or not host:
        return [], region
    last = max(i for i, stmt in enumerate(window) if any(stmt is h for h in host)) if window else -1
    moved = [stmt for stmt in window[:last + 1] if any(stmt is a for a in after)]
    if any(isinstance(n, ast.Call) for stmt in moved for n in ast.walk(stmt)):
        return [], region
    return host, rest


def graph_inputs(host: List[ast.stmt], free: List[str]) -> Tuple[List[str], List[int]]:
    """The region's free names that ``host`` statements assign (the values the graph takes as inputs), and the line
    of the last assignment of each."""
    lines: Dict[str, int] = {}
    for stmt in host:
        for name in _targets(stmt) or ():
            lines[name] = stmt.lineno
    names = [n for n in free if n in lines]
    return names, [lines[n] for n in names]


# -- counters: Python ints the region only computes with ----------------------------------------------------------
_ARITHMETIC_CALLS = frozenset({"min", "max", "abs", "float"})
_COUNTER_LIMIT = 2 ** 24  # ints up to this size are exact in float32 (24-bit significand, IEEE 754 binary32)


def _arithmetic_call(node) -> bool:
    chain = _chain(node.func) if isinstance(node, ast.Call) else None
    return bool(chain) and not node.keywords and (
        (len(chain) == 1 and chain[0] in _ARITHMETIC_CALLS) or (len(chain) == 2 and chain[0] == "math"))


_SCALAR_NODES = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp, ast.operator,
                 ast.unaryop, ast.cmpop, ast.boolop, ast.expr_context)


def _scalar_node(node) -> bool:
    if isinstance(node, ast.Attribute):  # `math.pi`, `math.cos`: math's only
        return isinstance(node.value, ast.Name) and node.value.id == "math"
    if isinstance(node, ast.Call):
        return _arithmetic_call(node)
    return isinstance(node, _SCALAR_NODES)


def _scalar_expression(node) -> bool:
    """An expression of names, constants, operators and arithmetic calls only (``min(1.0, epoch / 10)``)."""
    return all(_scalar_node(n) for n in ast.walk(node))


def counters(region: List[ast.stmt], loss: ast.expr, free: List[str]) -> List[str]:
    """The region's free names that it only computes with (a step counter, an epoch in a KL warm-up ``beta =
    min(1.0, epoch / 10)``): every read is an operand of arithmetic, a comparison, ``min`` / ``max`` / ``abs`` /
    ``float`` / ``math.*``, up to an expression that is a tensor computation or the value of an assignment; a name
    assigned such a scalar expression (``beta`` above) is checked the same way. Such an int, when it changes between
    steps, is passed to the graph as a 0-d float32 tensor (:class:`Numbers`): its arithmetic gives the same values
    (exact below :data:`_COUNTER_LIMIT`; ``epoch / 10`` is true division, as Python's). A read anywhere else (an
    index or slice, an argument of another call: ``range(n)``, ``x[:n]``, ``model(x, step)``, ``torch.full(s, n)``,
    a container, an attribute) keeps the name a constant of the graph (one graph per value), where a float tensor
    would change a shape, a dtype or control flow."""
    parents: Dict[int, ast.AST] = {}
    trees = list(region) + [loss]
    for tree in trees:
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
    reads: Dict[str, List[ast.Name]] = {}
    assigned: Set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                reads.setdefault(node.id, []).append(node)
        if isinstance(tree, ast.Assign):
            assigned.update(t.id for t in tree.targets if isinstance(t, ast.Name))

    def safe_read(node) -> Optional[str]:
        """None when the read is safe, or the name an assignment of a scalar expression of it gives (checked in
        turn), or "" when unsafe."""
        child = node
        parent = parents.get(id(child))
        while parent is not None:
            if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp)) \
                    and not (isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.MatMult)):
                if not _scalar_expression(parent):
                    return None  # reached a tensor computation (`beta * out.mean()`)
            elif isinstance(parent, ast.IfExp):
                if child is parent.test and not _scalar_expression(parent):
                    return None  # `h if epoch > 3 else g` of tensors: a choice in the graph
                # `(0.5 if epoch > 3 else 1.0)`: the condition a tensor, the same choice made in the graph
            elif isinstance(parent, ast.Call) and _arithmetic_call(parent) and child is not parent.func:
                pass
            elif isinstance(parent, ast.Assign) and child is parent.value:
                names = [t.id for t in parent.targets if isinstance(t, ast.Name)]
                return names[0] if len(names) == 1 == len(parent.targets) and _scalar_expression(child) else ""
            elif isinstance(parent, ast.Expr):
                return None
            else:
                return ""
            child, parent = parent, parents.get(id(parent))
        return None  # the loss expression itself

    def only_arithmetic(name: str, seen: Set[str]) -> bool:
        if name in seen:
            return True
        seen.add(name)
        for node in reads.get(name, ()):
            derived = safe_read(node)
            if derived == "" or (derived and not only_arithmetic(derived, seen)):
                return False
        return True

    return [n for n in free if n in reads and n not in assigned and only_arithmetic(n, set())]


# -- run time: the numbers a compiled step takes as tensor inputs -------------------------------------------------
def is_number(value) -> bool:
    """A Python or numpy real scalar, not a bool."""
    import numpy as np
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def is_numpy_bool(value) -> bool:
    import numpy as np
    return isinstance(value, np.bool_)


def as_tensor(value):
    """``value`` (:func:`is_float`) as a 0-d float32 MindTorch tensor."""
    import torch  # MindTorch (app/bootstrap.py)
    return torch.tensor(float(value), dtype=torch.float32)


def is_float(value) -> bool:
    """A Python float or a numpy floating scalar."""
    import numpy as np
    return isinstance(value, (float, np.floating))


def is_array(value) -> bool:
    """A numpy array of floats (``np.random.rand(3)``; integer arrays are not graph inputs: :meth:`Numbers.convert`)."""
    import numpy as np
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


class HostValueError(RuntimeError):
    """A host value the compiled step cannot take as an input: not a number or a numeric array (a list from
    ``random.sample``), or an array the graph could not compile with. Held as a constant keyed by the object's
    identity, a new object of each step could reuse a freed one's id and run an old step's graph on an old value,
    silently; the site runs eagerly instead."""

    fallback_kind = "non-tensor-inputs-change"


def check(site, env: dict, where: str) -> None:
    """A host value that is a tensor requiring grad (a host statement mixed a draw with a weight): its gradient
    would be lost, since the statement ran outside the step.

    Raises:
        RuntimeError: naming the statement's ``file:line``, with what to do."""
    for name, line in zip(site.host_values, site.host_lines):
        value = env.get(name)
        if getattr(value, "requires_grad", False):
            raise RuntimeError(
                f"{where.rsplit(':', 1)[0]}:{line}: `{name}` mixes a host random draw with a tensor that requires "
                "grad; run.py computes that statement on the host, before the step, where no gradient flows. Draw "
                "into its own variable first (`r = np.random.rand()`, then `noise = r * w`), or run with "
                "--mode pynative")


class Numbers:
    """Per step site: which Python numbers of its inputs the compiled step takes as 0-d tensor inputs.

    The float host values of the site (``StepSite.host_values``) from the start; another float once it changed
    between two compiled calls (an lr computed by hand); an int only when it is one of ``counters`` (:func:`counters`)
    and changed, as a float32 tensor. :meth:`demote` makes them constants again after a failed compile."""

    def __init__(self, host_values: List[str], counters: List[str] = ()):
        self.host_values = list(host_values)
        self.counters = frozenset(counters)  # ints passed as float32 once they change (:func:`counters`)
        self.changed: Set[str] = set()
        self.constant: Set[str] = set()  # demoted: a graph did not compile with them as inputs
        self._last: Dict[str, object] = {}
        self.in_use: List[str] = []  # the names the last call passed as tensors
        self.used: Set[str] = set()  # every name a call passed as a tensor

    def convert(self, env: dict) -> dict:
        """``env`` with the numbers to pass as tensors converted (:func:`as_tensor`), and the host values that are
        numeric arrays (as tensors of their dtype); notes which names those are.

        Raises:
            HostValueError: a host value that is neither (:class:`HostValueError`), or an array that did not compile
                as an input."""
        import torch
        self.in_use = []
        arrays = []
        for name in self.host_values:
            value = env.get(name)
            if is_array(value):
                if name in self.constant:
                    raise HostValueError(f"`{name}`, a numpy array drawn on the host, is used where the graph needs "
                                         "a constant")
                arrays.append(name)
            elif name in env and not is_number(value) and not isinstance(value, torch.Tensor):
                raise HostValueError(f"`{name}`, drawn on the host, is a {type(value).__name__}, which the graph "
                                     "cannot take as an input (only numbers and float numpy arrays)")
        for name, value in env.items():
            if is_number(value):
                if name in self._last and self._last[name] != value:
                    self.changed.add(name)
                self._last[name] = value
        # floats, and counters as float32: an int as an int64 tensor input got floor division in compiled code (`(x2 -
        # x1) * (y2 - y1) / 6` gave 0 for 4 / 6 on 2.5-dev, silently): other ints stay constants (a graph per value)
        dynamic = [n for n in env if n not in self.constant and (
            (is_float(env[n]) and (n in self.host_values or n in self.changed))
            or (n in self.counters and n in self.changed and abs(env[n]) < _COUNTER_LIMIT))]
        self.in_use = dynamic + arrays
        self.used.update(self.in_use)
        # tensors made on the host (`torch.from_numpy(rng.standard_normal(...))`): graph inputs as they are
        self.used.update(n for n in self.host_values if isinstance(env.get(n), torch.Tensor))
        if not self.in_use:
            return env
        out = dict(env)
        for name in dynamic:
            out[name] = as_tensor(env[name])
        for name in arrays:
            out[name] = torch.tensor(env[name])
        return out

    def demote(self) -> bool:
        """After a failed compile: the numbers the call passed as tensors become constants; whether there were any
        (then the step is built again)."""
        if not self.in_use:
            return False
        self.constant |= set(self.in_use)
        self.in_use = []
        return True

    def described(self, site, where_file: str) -> Optional[List[str]]:
        """For ``--explain``: ``"lam (train.py:43)"`` per host value, ``"warm"`` per other float passed as a
        tensor; None when none."""
        lines = dict(zip(site.host_values, site.host_lines))
        used = self.used - self.constant
        names = [n for n in self.host_values if n in used] + sorted(used - set(self.host_values))
        out = [f"{n} ({where_file}:{lines[n]})" if n in lines else n for n in names]
        return out or None


# -- run time: is a method or callable object a host call? ---------------------------------------------------------
# in-place tensor methods a drawing callee may apply to the batch (timm's Mixup: `x.mul_(lam).add_(x_flipped)`), on
# top of _ARG_METHODS; the batch is changed on the host, before the compiled step reads it, as PyTorch's step does
_INPLACE_DATA_METHODS = frozenset({"mul_", "add_", "sub_", "div_", "clamp_", "clamp", "flip", "index_copy_",
                                   "index_fill_", "masked_scatter_", "lerp_", "neg_", "abs_", "clone", "pow",
                                   "sqrt", "exp", "log", "abs", "neg", "round", "floor", "ceil", "numel", "shape",
                                   "append", "extend", "items", "keys", "values", "get", "format"})
# builtins a drawing callee may not call: they reach objects the scan cannot see (getattr(self, name)(x)) or
# have effects outside the data
_OPAQUE_BUILTINS = frozenset({"getattr", "setattr", "delattr", "eval", "exec", "compile", "__import__", "globals",
                              "locals", "vars", "open", "input", "breakpoint", "super", "callable", "map", "filter",
                              "sorted", "next", "iter"})
# the packages whose functions compute on data only (a callee's `torch.full(...)`, `np.clip(...)`)
# (and the adapter's own stand-ins for torch functions: patches/, adapter/)
_DATA_PACKAGES = frozenset({"numpy", "math", "random", "torch", "mindtorch", "mindspore", "builtins", "_operator",
                            "operator", "functools", "patches", "adapter"})
# (function, owner class) -> (data only, first draw, the owner's attributes it reads or None: `self` handed on)
_host_callables: Dict[object, tuple] = {}


def _reaches_weights(value, depth: int = 2) -> bool:
    """A Parameter, a module (``nn.Module`` / ``Cell``), a tensor that requires grad, reachable from ``value``:
    itself, the items of a list / tuple / dict, the attributes of a plain object, ``depth`` levels deep (a trainer's
    ``self.model``; a Mixup object's numbers). A callee that reaches one may compute what the gradient needs."""
    import types
    import mindspore as ms  # deferred: the rewrite imports this module before MindSpore loads
    if isinstance(value, (ms.Parameter, ms.nn.Cell)) or getattr(value, "requires_grad", False) is True:
        return True
    if hasattr(value, "parameters") and hasattr(value, "named_modules"):  # an nn.Module of any kind
        return True
    if depth == 0 or value is None or isinstance(value, (str, bytes, int, float, complex, bool, types.ModuleType,
                                                        type, types.FunctionType, types.BuiltinFunctionType,
                                                        ms.Tensor)):
        return False
    if isinstance(value, (list, tuple, set, frozenset)):
        return len(value) > 256 or any(_reaches_weights(v, depth - 1) for v in value)
    if isinstance(value, dict):
        return len(value) > 256 or any(_reaches_weights(v, depth - 1) for v in value.values())
    if isinstance(value, types.MethodType):
        return _reaches_weights(value.__self__, depth)
    try:
        attrs = vars(value)
    except TypeError:  # no __dict__: a numpy generator, a builtin object
        return False
    return len(attrs) > 256 or any(_reaches_weights(v, depth - 1) for v in list(attrs.values()))


def _function_of(callee):
    """``(function, owner)`` a call of ``callee`` runs: a bound method's function and its ``self``, a plain function
    and None, or ``type(obj).__call__`` and ``obj`` for an object whose class defines ``__call__`` in Python; None
    for anything else (a module, a class, a builtin, a C extension's object)."""
    import types
    if isinstance(callee, types.MethodType) and isinstance(callee.__func__, types.FunctionType):
        return callee.__func__, callee.__self__
    if isinstance(callee, types.FunctionType):
        return callee, None
    if isinstance(callee, type) or hasattr(callee, "parameters"):
        return None
    call = getattr(type(callee), "__call__", None)
    return (call, callee) if isinstance(call, types.FunctionType) else None


def _data_global(value) -> bool:
    """A global a drawing callee may call as a data function: a builtin function or type (not :data:`_OPAQUE_BUILTINS`)
    or a function of :data:`_DATA_PACKAGES` (``torch.full``, ``np.clip``, ``F.one_hot``)."""
    import types
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0] in _DATA_PACKAGES
    module = getattr(value, "__module__", None) or type(value).__module__ or ""  # a numpy ufunc: its type's
    if isinstance(value, type):
        return module == "builtins" and value.__name__ not in _OPAQUE_BUILTINS
    if module == "builtins" or isinstance(value, types.BuiltinFunctionType):
        return getattr(value, "__name__", "") not in _OPAQUE_BUILTINS and \
            (module or "builtins").split(".")[0] in _DATA_PACKAGES
    return module.split(".")[0] in _DATA_PACKAGES and not hasattr(value, "parameters")


def _scan_callable(func, owner_type, depth: int = 0) -> tuple:
    """(whether ``func`` computes on data only, its first host draw as ``"np.random.beta at mixup.py:157"``, the
    attributes of its ``self`` it and the methods it calls read, or None when it hands ``self`` on): its
    source (inspect) read as :class:`DrawingFunctions` reads a function of the script, its names resolved in its own
    globals at run time. Calls allowed: host draws (:func:`is_host_draw`); functions of :data:`_DATA_PACKAGES` and
    builtins (:func:`_data_global`); the functions of its module (module-level ``def``s, scanned in turn, up to
    ``_MAX_DEPTH`` deep); ``self.<m>(...)`` for a method of ``owner_type`` defined in Python (scanned in turn); a
    tensor method of ``_ARG_METHODS`` / :data:`_INPLACE_DATA_METHODS` on a value. Anything else (a parameter or an
    attribute called, ``self.model(x)``, a class) may be a model call: not data only; so does a global or a closure
    cell it reads that reaches a weight (:func:`_reaches_weights`, checked when first scanned). Cached per function
    and owner class."""
    import inspect
    import os
    import textwrap
    import types
    key = (func, owner_type)
    if key in _host_callables:
        return _host_callables[key]
    _host_callables[key] = (True, None, frozenset())  # a recursive call: decided by the rest of the body
    try:
        lines, first = inspect.getsourcelines(func)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        _host_callables[key] = (False, None, None)
        return _host_callables[key]
    node = tree.body[0]
    where = os.path.basename(inspect.getsourcefile(func) or "?")
    args = node.args
    params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    self_name = params[0] if owner_type is not None and params else None
    local = set(params) | {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    # the globals and closure cells it reads: none may reach a weight (`return x * MODEL.weight`)
    cells = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
    for name in {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - local:
        try:
            value = cells[name].cell_contents if name in cells else func.__globals__.get(name)
        except ValueError:  # an empty cell
            value = None
        if _reaches_weights(value):
            _host_callables[key] = (False, None, None)
            return _host_callables[key]
    ok, found = True, None
    # the owner's attributes the function reads (`self.alpha`); None when `self` itself is handed on or stored
    attrs: Optional[frozenset] = frozenset()
    if self_name is not None:
        parents = {id(c): n for n in ast.walk(node) for c in ast.iter_child_nodes(n)}
        for name in (n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == self_name):
            parent = parents.get(id(name))
            if isinstance(parent, ast.Attribute) and attrs is not None:
                attrs = attrs | {parent.attr}
            elif not isinstance(parent, ast.arguments):
                attrs = None
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        if isinstance(call.func, ast.Lambda):
            ok = False
            break
        chain = _chain(call.func)
        line = f"{where}:{first + call.lineno - 1}"
        method = call.func.attr if isinstance(call.func, ast.Attribute) else None
        if chain is not None and len(chain) == 2 and chain[0] == self_name:
            pass  # self.<m>(...): below
        elif chain is not None and is_host_draw(call):
            found = found or f"{'.'.join(chain)} at {line}"  # np.random.beta(...), self.rng.beta(...)
            continue
        elif chain is None or chain[0] in local:
            if method in _ARG_METHODS or method in _INPLACE_DATA_METHODS:
                continue  # x.flip(0).mul_(1 - lam), target.long().view(-1, 1): a method on a value
            ok = False  # a parameter or a local called (`fn(x)`), another method: may be the model
            break
        if chain[0] == self_name:
            attr = inspect.getattr_static(owner_type, chain[1], None) if len(chain) == 2 else None
            bound = owner_type
            if isinstance(attr, (staticmethod, classmethod)):
                attr, bound = attr.__func__, None  # no `self` in it (a classmethod's `cls` is looked at as a value)
            if not isinstance(attr, types.FunctionType) or depth >= _MAX_DEPTH:
                ok = False  # an attribute of the object called (`self.model(x)`, `self.fn(x)`): may be the model
                break
            inner_ok, inner, inner_attrs = _scan_callable(attr, bound, depth + 1)
            ok, found = ok and inner_ok, found or inner
            attrs = None if attrs is None or inner_attrs is None else attrs | inner_attrs
            if not ok:
                break
            continue
        value = func.__globals__.get(chain[0], getattr(builtins, chain[0], None))
        data_module = isinstance(value, types.ModuleType) and _data_global(value)
        for attr in chain[1:]:
            value = getattr(value, attr, None)
        if data_module:
            if value is None or (isinstance(value, type) and not _data_global(value)):
                ok = False  # `torch.nn.Linear(...)`: a class, maybe a module
                break
            continue  # `torch.full(...)`, `np.clip(...)`, `F.one_hot(...)`: a data package's function
        if isinstance(value, types.FunctionType) and not _data_global(value):
            if depth >= _MAX_DEPTH:
                ok = False
                break
            inner_ok, inner, _ = _scan_callable(value, None, depth + 1)  # a function of its module, or another
            ok, found = ok and inner_ok, found or inner
            if not ok:
                break
            continue
        if value is None or not _data_global(value):
            ok = False
            break
    _host_callables[key] = (ok, found, attrs)
    return _host_callables[key]


def host_call(callee, args=()) -> Optional[str]:
    """For a callee and the argument values of a statement :func:`run_time_call` took: its first host draw
    (``"np.random.beta at mixup.py:157"``) when a call of it draws on the host and computes on data only
    (:func:`_scan_callable`), and no argument, nor any attribute of its object (a bound method's ``self``, a callable
    object) that it reads, reaches a Parameter, a module or a tensor that requires grad (:func:`_reaches_weights`; a
    trainer's method may read ``self.alpha`` while ``self.model`` is there; the whole object is checked when it
    hands ``self`` on); else None (it stays in the graph)."""
    import inspect
    import types
    resolved = _function_of(callee)
    if resolved is None:
        return None
    func, owner = resolved
    if any(_reaches_weights(a, 1) for a in args):
        return None
    ok, found, attrs = _scan_callable(func, type(owner) if owner is not None else None)
    if not ok or found is None:
        return None
    if owner is not None:
        # what it reads of its object (a trainer's `self.alpha`, not its `self.model`): no weight among them; all of
        # the object when it hands `self` on
        methods = {a for a in attrs or () if isinstance(inspect.getattr_static(type(owner), a, None),
                                                              (types.FunctionType, staticmethod, classmethod))}
        read = [owner] if attrs is None else [getattr(owner, a, None) for a in sorted(attrs - methods)]
        if any(_reaches_weights(v) for v in read):
            return None
    return found


def host_calls(key: int, calls) -> bool:
    """Called by the rewritten script before a site that split out calls of methods or objects
    (``adapter/step_rewrite.py``): ``if __adapter_host_calls__(K, lambda: ((callee, (args...)), ...)): <those
    statements, then site K> else: <site K + 1, the calls in its region>``. True when every callee is a host call
    (:func:`host_call`); False when one is not, or the thunk fails (a name not bound yet)."""
    try:
        pairs = calls()
        return all(host_call(callee, args) is not None for callee, args in pairs)
    except Exception:  # noqa: BLE001 -- a name not bound yet, a property that raises: the site as written
        return False


def run_time_calls(host: List[ast.stmt], functions: Optional[DrawingFunctions]) -> Optional[ast.Lambda]:
    """The thunk :func:`host_calls` evaluates for the host statements among ``host`` that call a method or an object
    (:func:`run_time_call`) or a drawing function of the user's (:meth:`DrawingFunctions.draw`):
    ``lambda: ((callee, (arg, ...)), ...)`` (arguments that are names or attributes), or None when there are none."""
    items = []
    for stmt in host:
        callee = run_time_call(stmt, functions)
        if callee is None and functions is not None and isinstance(stmt, ast.Assign) \
                and isinstance(stmt.value, ast.Call) and functions.draw(stmt.value.func):
            # a drawing function of the script's (DrawingFunctions): its source says it calls no model, but not
            # whether a global it reads is a weight (`return x * W.mean()`: that gradient would be lost): the same
            # run-time check
            callee = stmt.value.func
        if callee is None:
            continue
        values = [v for v in list(stmt.value.args) + [k.value for k in stmt.value.keywords]
                  if not isinstance(v, ast.Constant)]
        items.append(ast.Tuple([copy.deepcopy(callee), ast.Tuple(copy.deepcopy(values), ast.Load())], ast.Load()))
    if not items:
        return None
    return ast.Lambda(ast.arguments([], [], None, [], [], None, []), ast.Tuple(items, ast.Load()))
