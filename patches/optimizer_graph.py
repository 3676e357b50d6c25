"""``torch.optim`` optimizers compile fast in a graph: ``maximize`` negates the gradient tuple at once.

MindTorch 0.4.0's optimizers are MindSpore's ``mindspore.experimental.optim`` classes. Each one's update
(``implementation``, or AdamW's ``construct``) starts with::

    grads = tuple([grad if not maximize else F.neg(grad) for grad in gradients[start_id: end_id]])

(MindSpore 2.10: ``tuple(grad if not maximize else ops.neg(grad) for grad in ...)``, a generator: rewritten alike.)

Run in a graph (the compiled training step fuses ``optimizer.step()``, adapter/compiled_step.py), this list
comprehension becomes one conditional per parameter, and MindSpore's type inference and optimizer passes work
through each. Measured on CPU (batch 32, 3x32x32, Adam; MindSpore's compile profiler,
``mindspore._extends.parse.compile_config.COMPILE_PROFILE = "1"``, shows type inference growing most): the fused
step compiled in 11.9 s (ResNet18) and 35.6 s (ResNet50) with the expression, 6.8 s and 11.3 s with this patch
(docs/performance.md, "Compile-time history").

Second, the compile cache. The optimizers keep their learning rates as Parameters in a plain list (``self.lrs``), so
the Cell does not own them. A training step loaded from MindSpore's compile cache then ran without its parameter
updates: the weights stayed at their step-1 values (``docs/compile_cache_bug/repro.py``; with a constant lr, or with
the lrs registered, the cached run equals the compiling run). :func:`add_param_group` makes ``lrs`` a
``ParameterTuple`` attribute after every ``add_param_group``; indexing and iteration are unchanged.

This patch also rewrites the ``maximize`` expression, in the methods of every optimizer class of ``mindspore.experimental.optim`` (and
in the Adam update of ``patches/adam.py``), into ``_maximize(<not maximize>, F.neg, <gradients slice>)``: one
branch on the flag for the whole tuple, then ``hyper_map(F.neg, grads)`` or the gradients unchanged. The values are
identical (the same ``neg`` op on the same tensors). The rewrite works on the method's syntax tree (``ast``); a
method without the expression is left as it is, and a method that would not survive recompilation (it uses
``super()`` or closure variables) is skipped.

:func:`_read_once` (used by ``patches/sgd.py`` and ``patches/adam.py``) reads the lr once at the top of a jit'd update:
on MindSpore 2.10 a float64 lr read again after each parameter's ``assign`` reached the updates as float32 (CPU).

Replaces: ``implementation`` (``construct`` for AdamW) of the ``mindspore.experimental.optim`` classes that have the
expression (Adadelta, Adagrad, Adam, Adamax, AdamW, ASGD, RMSprop, Rprop, SGD: MindTorch's ``torch.optim`` classes
subclass them), ``mindspore.experimental.optim.Optimizer.add_param_group`` (wrapping ``patches/optimizer.py``'s).
"""
from __future__ import annotations

import ast
import functools
import inspect
import sys
import textwrap
from typing import Callable, Optional

from . import Patch, get_replaced, patch_attr

_HELPER = "__adapter_maximize__"
_hyper_map = None  # mindspore.ops.composite.HyperMap(), made by prepare() (this module imports without MindSpore)
_cast = None  # mindspore.ops.functional.cast, set by prepare()


def prepare() -> None:
    """Make :func:`_maximize` usable (also called by ``patches/adam.py``, whose update uses it)."""
    global _hyper_map
    if _hyper_map is None:
        from mindspore.ops import composite as C
        _hyper_map = C.HyperMap()
    global _cast
    if _cast is None:
        from mindspore.ops import functional as F
        _cast = F.cast


def _maximize(keep, negate, grads):
    """``grads`` when ``keep`` (a compile-time bool: ``not maximize``), else ``negate`` applied to each gradient.

    Args:
        keep: bool, ``not group['maximize']``.
        negate: the elementwise function of the original expression (``F.neg``).
        grads: tuple of gradient tensors (any shapes/dtypes).
    Returns:
        a tuple of the same length, shapes and dtypes.
    """
    if keep:
        return grads
    return _hyper_map(negate, grads)


def _read_once(lr):
    """``lr`` (a 0-d lr ``Parameter`` or tensor, any float dtype) read once, as a value: graph code, called at the top
    of the jit'd optimizer updates (``patches/sgd.py``, ``patches/adam.py``) before their per-parameter ``assign``s.

    Why: a ``Parameter`` used after a side effect is loaded again at each use (``Load(param, U)``), and MindSpore
    2.10's ``OrderEnforcer`` (``ccsrc/frontend/jit/ps/static_analysis/order_enforce.cc``, pass ``auto_monad_reorder``)
    puts a ``TensorMove`` behind each such ``Load``; 2.10's CPU ``TensorMove`` kernel has no float64, so kernel
    selection wraps it in ``Cast(F64->F32)`` / ``Cast(F32->F64)`` (``is_backend_cast``, seen in the saved
    ``graph_build`` IR): the float64 lr of ``patches/optimizer.py`` reached every float64 update as float32(lr), a
    silent relative error of 1.5e-8 for lr 0.1 (measured: ``lr - 0.1`` = 1.49e-9 in the graph). Read once through a
    ``Cast`` to its own dtype, the lr is one ``Load`` whose value every update uses: no ``TensorMove``, no cast
    (the ``Cast`` itself is removed as a no-op). MindSpore 2.5 inserts no ``TensorMove`` there: no change.
    Same dtype, shape and value as ``lr``.
    """
    return _cast(lr, lr.dtype)


class _RewriteMaximize(ast.NodeTransformer):
    """``tuple([g if T else f(g) for g in G])`` (MindSpore 2.5) or ``tuple(g if T else f(g) for g in G)`` (2.10, a
    generator) -> ``__adapter_maximize__(T, f, G)``."""

    def __init__(self):
        self.count = 0

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        if not (isinstance(node.func, ast.Name) and node.func.id == "tuple" and len(node.args) == 1
                and not node.keywords and isinstance(node.args[0], (ast.ListComp, ast.GeneratorExp))):
            return node
        comp = node.args[0]
        if len(comp.generators) != 1:
            return node
        gen = comp.generators[0]
        elt = comp.elt
        if gen.ifs or gen.is_async or not isinstance(gen.target, ast.Name) or not isinstance(elt, ast.IfExp):
            return node
        var = gen.target.id
        body, orelse = elt.body, elt.orelse
        if not (isinstance(body, ast.Name) and body.id == var and isinstance(orelse, ast.Call)
                and len(orelse.args) == 1 and not orelse.keywords
                and isinstance(orelse.args[0], ast.Name) and orelse.args[0].id == var):
            return node
        if any(isinstance(n, ast.Name) and n.id == var for n in ast.walk(elt.test)):
            return node  # the flag depends on the gradient: not this pattern
        self.count += 1
        return ast.copy_location(
            ast.Call(func=ast.Name(_HELPER, ast.Load()), args=[elt.test, orelse.func, gen.iter], keywords=[]), node)


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
def rewrite(fn: Callable) -> Optional[Callable]:
    """``fn`` (a method, possibly ``@jit``-decorated) recompiled with the expression rewritten, or None when it has
    no such expression or cannot be recompiled. The result keeps ``fn``'s file and line numbers and its ``@jit``."""
    import mindspore as ms
    plain = getattr(fn, "__wrapped__", fn)
    if plain.__closure__:
        return None
    try:
        source = textwrap.dedent(inspect.getsource(plain))
        filename = inspect.getsourcefile(plain)
        first_line = inspect.getsourcelines(plain)[1]
    except (OSError, TypeError):
        return None
    tree = ast.parse(source)
    func = tree.body[0]
    if not isinstance(func, ast.FunctionDef) or any(isinstance(n, ast.Name) and n.id == "super"
                                                   for n in ast.walk(func)):
        return None
    transformer = _RewriteMaximize()
    func = transformer.visit(func)
    if not transformer.count:
        return None
    func.decorator_list = []
    tree.body = [func]
    ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, first_line - 1)
    namespace = dict(plain.__globals__)
    namespace[_HELPER] = _maximize
    exec(compile(tree, filename, "exec"), namespace)  # noqa: S102 (MindSpore's own method, rewritten)
    new = namespace[func.name]
    new.__qualname__ = plain.__qualname__
    new.__doc__ = plain.__doc__
    return ms.jit(new) if plain is not fn else new


def _rewrite_class(cls) -> int:
    """Rewrite ``cls``'s own ``implementation`` / ``construct`` (through patch_attr); returns how many. A second
    call rewrites the same originals again (get_replaced), never a rewritten method."""
    count = 0
    for name in ("implementation", "construct"):
        if name not in cls.__dict__:
            continue
        fn = get_replaced(cls, name, PATCH.name)
        if fn is None or not callable(fn):
            continue
        new = rewrite(fn)
        if new is not None:
            patch_attr(cls, name, new)
            count += 1
    return count


_add_param_group = None  # the Optimizer.add_param_group this patch wraps (set by apply())


def add_param_group(self, param_group):
    """``Optimizer.add_param_group`` that leaves ``self.lrs`` a ``ParameterTuple`` (owned by the optimizer Cell)."""
    from mindspore import ParameterTuple
    if isinstance(self.lrs, ParameterTuple):
        self.lrs = list(self.lrs)  # the original appends
    try:
        return _add_param_group(self, param_group)
    finally:
        self.lrs = ParameterTuple(self.lrs)


def apply() -> None:
    global _add_param_group
    import mindspore.experimental.optim as msoptim
    import mindtorch.torch.optim  # noqa: F401 (its classes subclass these; the methods are looked up on them)

    prepare()
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith("mindspore.experimental.optim."):
            continue
        for obj in list(vars(module).values()):
            if isinstance(obj, type) and obj.__module__ == module_name and issubclass(obj, msoptim.Optimizer):
                _rewrite_class(obj)
    # stacked on patches/optimizer.py's add_param_group (get_replaced: the value this patch wraps)
    _add_param_group = get_replaced(msoptim.Optimizer, "add_param_group", PATCH.name)
    patch_attr(msoptim.Optimizer, "add_param_group", functools.update_wrapper(add_param_group, _add_param_group))


PATCH = Patch("optimizer_graph", "torch.optim.* updates compile fast in the compiled step (ResNet50 35.6 -> 11.3 s): "
                                 "`maximize` negates the gradient tuple at once, not one conditional per parameter; "
                                 "lr Parameters owned by the optimizer, so compile-cached steps keep their updates",
              "post-import", apply,
              replaces=("mindspore.experimental.optim.Optimizer.add_param_group",
                        "mindspore.experimental.optim.adadelta.Adadelta.implementation",
                        "mindspore.experimental.optim.adagrad.Adagrad.implementation",
                        "mindspore.experimental.optim.adam.Adam.implementation",
                        "mindspore.experimental.optim.adamax.Adamax.implementation",
                        "mindspore.experimental.optim.adamw.AdamW.construct",
                        "mindspore.experimental.optim.asgd.ASGD.implementation",
                        "mindspore.experimental.optim.rmsprop.RMSprop.implementation",
                        "mindspore.experimental.optim.rprop.Rprop.implementation",
                        "mindspore.experimental.optim.sgd.SGD.implementation"),
              after=("optimizer",))
