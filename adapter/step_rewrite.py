"""Load-time rewrite of a user's training step into a call that ``adapter/compiled_step.py`` can compile.

What is rewritten
-----------------
In any statement list (a loop body, a function body...), a statement ``<loss>.backward()`` with simple statements
before it in the same list is a *step site*. The statements that compute ``<loss>`` (its backward slice, found
with def-use chains over the simple statements — assignments and expression statements — just before the
backward, back to the previous step: an earlier site, ``backward()`` or ``step()`` call) form the forward region.
``if`` blocks of assignments and logging calls may sit anywhere in that window (``if t % 100 == 99: print(t,
loss.item())`` before ``optimizer.zero_grad()``, PyTorch's polynomial tutorials); they are never part of a region.
The other statements between the region's first and last keep seeing what they saw in the script
(``_Rewriter._place_others``): assignments that do not touch the region's names run after it, in-place tensor calls
such as dcgan's ``label.fill_(0)`` run before it, and anything else (``optimizer.step()``...) makes the region start
after that statement. What the site call changes stays unseen by a statement it moves
(:func:`_hoistable_grad_read`, :func:`_state_later_calls_may_change`): a statement that reads ``.grad`` (PyTorch's
neural_networks_tutorial prints ``net.conv1.bias.grad`` after ``net.zero_grad()``, before ``backward()``) is
hoisted with the ``zero_grad()`` calls, in its order, or, when it cannot run before the region (it reads the
loss), there is no site; one that reads an object a later region call may change (``net[1].running_mean`` between
two forwards) guards the site: ``if __adapter_in_order__(K, lambda: (<objects>,)): <the script's statements> else:
<the rewrite>`` (``compiled_step.in_order``: a buffer or a module with buffers runs them as written). Weights read
by moved statements keep the step from being fused (``compiled_step.SiteRuntime._after_reads_weights``). The site
becomes::

    <stmts before the region, unchanged>
    <zero_grad() calls and in-place tensor calls found inside the region, hoisted: in their order>
    (out1, out2, ...) = __adapter_step__(K, {'x': x, 'model': model, ...}[, optimizer])  # region + backward()
    <region statements not needed for the loss, in their order: they run after, on the same values>
    <up to 3 statements between backward() and step() that read only the loss (`total += loss.item()`), when fused>
    [norm =] __adapter_clip_grad_norm__(K, lambda: <the user's clip call>)   # when a clip_grad_norm_ comes between
    __adapter_optimizer_step__(K, optimizer)      # only when `optimizer.step()` follows backward() (or the clip)

Host statements of the region (``lam = np.random.beta(a, a)``: a draw on the host in an assignment of its own, and
what is computed from such values with numpy/math) are split out (``adapter/host_values.py``, a graph break): they
run right before the site call, in their order, and the graph takes their values as inputs.

``out1, out2...`` are the names the region assigns (they stay visible to the code after, e.g. ``outputs`` for
accuracy). ``{'x': x, ...}`` are the free names the region reads. Nothing else in the file changes, so line numbers
of everything else stay the user's. Sites whose region is empty (backward inside an ``if``, a loss computed in
another function) are left alone: the eager bridge (``adapter/tape.py``) serves them.

Branches
--------
An ``if`` that assigns a name the loss needs is never part of a region. When it is a *branch if* (its test reads only
names, attributes and constants, ``if args.model == 'Transformer':``; its branches hold only window statements;
``_is_branch_if``), the ``if`` stays in the script, its test evaluated there as written, and each branch gets its own
site, made from that branch's statements and those around the ``if`` (``_Rewriter._make_site_branching``)::

    if args.model == 'Transformer':                    if args.model == 'Transformer':
        output = model(data)                               (output, loss) = __adapter_step__(0, {...})
    else:                                      ->      else:
        hidden = repackage_hidden(hidden)                  (hidden, output, loss) = __adapter_step__(1, {...})
        output, hidden = model(data, hidden)
    loss = criterion(output, targets)
    loss.backward()

pytorch/examples word_language_model/main.py:186 ran eagerly for good before ("loss-built-before-step": its model call
in the ``else`` opened the recording before the step). ``elif`` chains are nested branch ifs. When the test reads a
name a statement before the ``if`` assigns (CutMix: ``r = np.random.rand(1)`` then ``if beta > 0 and r <
cutmix_prob:``), the branches' regions start after the last such statement (``_Rewriter.window_floor``), so that it
still runs before the test; what the loss needs ahead of it (``input = input.cuda()``) runs before the site call, as
ahead of any barrier, with the branch sites' ``__adapter_record_from__`` statements before the ``if``
(``_Rewriter._lift_record_from``). Not specialized (the
``if`` stays outside the region, as before): more than ``_MAX_BRANCH_SITES`` sites, branches that disagree on fusing
the optimizer step, or a statement the region would move after the test that assigns or mutates a name the test reads.

Mixed precision (``patches/amp.py``): a ``with <ctx>:`` block of simple statements (``with autocast():``,
``with amp_autocast():`` where that may be ``contextlib.suppress``) is one region statement; at run time its context
must be an autocast or a no-op context, else the site runs eagerly. ``<scaler>.scale(<loss>).backward()`` is a site
whose loss is ``<loss>`` and whose scaler is passed as ``scaler=<scaler>``; after it, ``<scaler>.step(optimizer)``
(directly, or after ``<scaler>.unscale_(optimizer)`` and/or one ``clip_grad_norm_``) is fused like ``step()``::

    __adapter_unscale__(K, lambda: <scaler>.unscale_(optimizer))     # a no-op when the graph unscaled
    __adapter_optimizer_step__(K, optimizer, <scaler>)

Backward through a call
-----------------------
timm's train.py runs ``loss, result = _forward()`` (a closure of the loop body) and ``_backward(loss)`` (another,
which calls timm's ``NativeScaler.__call__``, which runs ``self._scaler.scale(loss).backward(create_graph=...)``).
Two mechanisms make that a site, neither specific to timm:

* a call of a local closure whose values a later statement of the block hands to ``backward()`` or to such a call is
  replaced by the closure's body (``_Inliner``: parameters and locals renamed, ``return`` an assignment);
* a call statement that may run ``backward()`` of its first positional name argument (``_Rewriter._through_call``:
  a function of the script whose body calls ``.backward(`` or hands a parameter on to such a call, a method named
  ``backward`` such as ``accelerator.backward(loss)``, or any other object or function: ``loss_scaler(loss,
  optimizer)``; not builtins, logging calls, tensor methods, functions of a module the script imports; not inside
  a ``forward`` method, not when a later statement of the block calls ``.backward(`` or uses the argument as a
  tensor (``_value_reads_only``), not when the region calls nothing that may be a module) ends a site as
  ``backward()`` does. The call stays in the script, after the site call and the
  region's other statements, unfused::

      (loss, result) = __adapter_step__(K, {...})
      with __adapter_backward_through__(K, loss):
          _backward(loss)

  At run time (``adapter/backward_through.py``, ``compiled_step.SiteRuntime.through_*``) the first call and the
  reference step run the region eagerly and let the call's backward() run on the eager bridge, watched; the site
  compiles when that was exactly one backward(), of the loss or of a GradScaler's ``scale(loss)``, and a compiled call's gradients then go into
  ``.grad`` when the call's backward() is of that tensor (none: no gradients, as in PyTorch; another: an error
  naming both lines). A call that ran no backward() makes the site a region that only runs (not listed by
  ``--explain``); several, or one of another tensor, run it eagerly (``backward-call-unrecognised``).

``<loss>.backward(create_graph=<expr>)`` is a site too when ``<expr>`` reads no name the window assigns and makes no
call: the site call evaluates it, and a true value raises as ``Tensor.backward`` does.

The region's own code is kept as AST and turned into a ``forward_fn`` at run time by ``compiled_step.py``, when the
free names' values (tensors vs. modules) are known.
"""
from __future__ import annotations

import ast
import builtins
import copy
import dataclasses
import functools
import os
from typing import List, Optional, Set, Tuple

from adapter import host_values

STEP_FN = "__adapter_step__"
_BUILTINS = frozenset(dir(builtins))  # `print`, `len`...: never a weight (StepSite.after_reads)
OPT_STEP_FN = "__adapter_optimizer_step__"
CLIP_FN = "__adapter_clip_grad_norm__"
UNSCALE_FN = "__adapter_unscale__"
UNRECORDED_FN = "__adapter_unrecorded__"
IN_ORDER_FN = "__adapter_in_order__"
HOST_CALLS_FN = "__adapter_host_calls__"
RECORD_FROM_FN = "__adapter_record_from__"
THROUGH_FN = "__adapter_backward_through__"
_IN_ORDER = "in order"  # _place_others: the window's statements must run as the script has them (no site)


@dataclasses.dataclass
class StepSite:
    """One rewritten ``backward()`` site (plain data; the runtime state lives in ``compiled_step.py``).

    Attributes:
        key: the site's number, unique in the process (files rewritten later continue the count).
        filename: the user's file. lineno: line of the ``backward()`` call.
        region: the forward region's statements (AST, user line numbers).
        loss: the expression ``backward()`` is called on (AST).
        free_names: names the region reads before assigning them (values passed in at run time).
        outputs: names the region assigns, returned to the user's scope in this order.
        optimizer_line: line of the ``optimizer.step()`` that immediately follows, or None.
        clip_line: line of a ``clip_grad_norm_(...)`` between ``backward()`` and that ``step()``, or None.
        scaler: the ``GradScaler`` expression of ``<scaler>.scale(<loss>).backward()`` (AST), or None.
        after_reads: when fused, the names that the region's statements run after the site call read and that
            neither they nor the region assign (builtins left out); the site call passes their values as
            ``after=lambda: (...)``, and a step where one holds a weight is not fused (they must see the weights
            from before ``step()``, as in the script).
        watched: the objects (source text) that region statements moved after the site call read and a later
            region call may change (``net[1].running_mean`` before ``o2 = net(x2)``); the site call is then inside
            ``if __adapter_in_order__(K, lambda: (...), lambda: (...)): <the script's statements> else: <the
            rewrite>``.
        host_values / host_lines: the free names host statements assign, and their lines (adapter/host_values.py).
        host_stmts: those host statements (AST), in their order.
        through: the site's backward() runs inside a call of the script's (``_backward(loss)``, ``loss_scaler(loss,
            optimizer, ...)``: module docstring, "Backward through a call"), not in the site's own block; the call
            stays in the script, after the site call, inside ``with __adapter_backward_through__(K, <loss>):``.
        value_only: (``through``) the region's names, by their def-use chains in the scope, are only read for their
            value or handed to calls (``_mark_unrecorded``): when the call runs no backward(), the region's module
            calls open no recording (``tape.unrecorded``), as such a statement outside a site would.
        create_graph: the ``create_graph=`` expression of ``<loss>.backward(create_graph=<expr>)`` (AST), or None:
            evaluated by the site call; a true value raises as the eager bridge does.
        counters: the free names the region only computes with (``host_values.counters``: a step counter, an epoch):
            an int among them that changes is a float32 graph input, not a constant.
        grad_watched: the names that moved statements hand to a call of unknown effect (``n = norm_of(model)``,
            ``log.grads(model)``: it may read ``.grad``, which the site's backward() changes); the same guard runs
            the script's statements when one holds a parameter (a module, an optimizer, a parameter).
    """
    key: int
    filename: str
    lineno: int
    region: List[ast.stmt]
    loss: ast.expr
    free_names: List[str]
    outputs: List[str]
    optimizer_line: Optional[int] = None
    clip_line: Optional[int] = None
    scaler: Optional[ast.expr] = None
    after_reads: List[str] = dataclasses.field(default_factory=list)
    watched: List[str] = dataclasses.field(default_factory=list)
    grad_watched: List[str] = dataclasses.field(default_factory=list)
    host_values: List[str] = dataclasses.field(default_factory=list)
    host_lines: List[int] = dataclasses.field(default_factory=list)
    counters: List[str] = dataclasses.field(default_factory=list)
    host_stmts: List[ast.stmt] = dataclasses.field(default_factory=list)
    through: bool = False
    create_graph: Optional[ast.expr] = None
    value_only: bool = False


def _backward_call(stmt: ast.stmt) -> Optional[ast.Call]:
    """``<loss>.backward(...)`` as a statement: the Call (a site only without arguments, or with ``create_graph=``
    alone: :meth:`_Rewriter._make_one_site`); else None."""
    return _method_call(stmt, "backward")


def _clip_call(stmt: ast.stmt) -> Optional[ast.Call]:
    """``[x =] <...>.clip_grad_norm_(params, max_norm[, norm_type])`` with positional arguments only."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    if isinstance(stmt, ast.Assign) and not (len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    if not isinstance(value, ast.Call) or value.keywords or not 2 <= len(value.args) <= 3:
        return None
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return value if name == "clip_grad_norm_" else None


def _names(node: ast.AST, ctx) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}


def _reads(stmt: ast.stmt) -> Set[str]:
    if isinstance(stmt, ast.With):
        reads = set().union(*(_names(item.context_expr, ast.Load) for item in stmt.items))
        assigned: Set[str] = set()
        for inner in stmt.body:  # names read before the block assigns them
            reads |= _reads(inner) - assigned
            assigned |= _writes(inner)
        return reads
    reads = _names(stmt, ast.Load)
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        reads.add(stmt.target.id)
    # x.attr = v / x[i] = v read x (and mutate it): treat the base name as read
    for target in getattr(stmt, "targets", []) + ([stmt.target] if hasattr(stmt, "target") else []):
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            reads |= _names(target, ast.Load)
    return reads


def _writes(stmt: ast.stmt) -> Set[str]:
    return _names(stmt, ast.Store)


def _mutated(stmt: ast.stmt) -> Set[str]:
    """Base names an assignment mutates in place: ``x.a = v``, ``x[i] = v``, ``x.a += v``."""
    targets = getattr(stmt, "targets", []) + ([stmt.target] if hasattr(stmt, "target") else [])
    return set().union(*(_names(t, ast.Load) for t in targets if isinstance(t, (ast.Attribute, ast.Subscript)))) \
        if targets else set()


def _mutates(stmt: ast.stmt) -> Set[str]:
    """Names ``stmt`` writes into without rebinding them: the receiver of an in-place method call statement
    (``x.clamp_(0)``) and the bases of ``x[i] = v`` / ``x.a = v`` (:func:`_mutated`), also inside an ``if`` block."""
    if isinstance(stmt, ast.If):
        return set().union(set(), *(_mutates(s) for s in stmt.body + stmt.orelse))
    names = set(_mutated(stmt))
    if _is_inplace_method_call(stmt):
        names.add(stmt.value.func.value.id)
    return names


def _is_inplace_method_call(stmt: ast.stmt) -> bool:
    """``x.method_(...)`` as a statement: PyTorch's in-place tensor methods end in one underscore."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    func = stmt.value.func
    return isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_") \
        and isinstance(func.value, ast.Name)


_STEP_FUNCTIONS = {STEP_FN, OPT_STEP_FN, CLIP_FN, UNSCALE_FN, THROUGH_FN}


def _is_step_boundary(stmt: ast.stmt) -> bool:
    """A statement that ends the previous step: an already rewritten site, or a ``.backward()`` / ``.step()`` call."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in _STEP_FUNCTIONS:
                return True
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("backward", "step"):
                return True
    return False


_VALUE_READS = frozenset({"item", "detach", "tolist", "cpu", "numpy", "data"})


def _value_reads_only(name: str, later: List[ast.stmt]) -> bool:
    """Whether ``later`` statements (the rest of the block) read ``name`` only for its value: ``name.item()``,
    ``name.detach()``, ``float(name)``, ``print(name)``... (a loss a call has run backward() of), or rebind it first."""
    for stmt in later:
        allowed = set()
        for node in ast.walk(stmt):
            if isinstance(node, ast.Attribute) and node.attr in _VALUE_READS and isinstance(node.value, ast.Name):
                allowed.add(id(node.value))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("float", "print", "str", "repr", "format"):
                allowed |= {id(a) for a in node.args if isinstance(a, ast.Name)}
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) \
                    and id(node) not in allowed:
                return False
        if name in _writes(stmt):
            return True
    return True


def _has_backward_call(stmt: ast.stmt) -> bool:
    """``stmt`` calls ``.backward(...)`` or is an already rewritten site."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in (STEP_FN, THROUGH_FN):
                return True
            if isinstance(node.func, ast.Attribute) and node.func.attr == "backward":
                return True
    return False


def _method_call(stmt: ast.stmt, method: str) -> Optional[ast.Call]:
    """``stmt`` is ``<expr>.method(...)`` as an expression statement: return the Call."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and func.attr == method:
            return stmt.value
    return None


_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)

# Calls made for their side effect that cannot change a gradient or a weight: logging and bookkeeping. A statement
# between the loss and backward() runs after the site (after backward(), and after the update when fused), so any
# other bare call there must stay before backward(): yunjey/pytorch-tutorial's GAN calls `reset_grad()` (its own
# zero_grad of both optimizers) between `d_loss = ...` and `d_loss.backward()`; run after backward(), it zeroed the
# gradients the eager step was about to apply (the update was lost, silently).
_LOGGING_FUNCTIONS = {"print"}
_LOGGING_METHODS = {"append", "extend", "info", "debug", "warning", "log", "write", "flush", "add_scalar",
                    "add_scalars", "add_histogram", "set_postfix", "set_postfix_str", "set_description", "update"}


def _runs_after_backward_safely(stmt: ast.stmt) -> bool:
    """Whether ``stmt``, found between the region's last statement and ``backward()``, may run after the site call:
    assignments, logging calls (``print``, ``losses.append``, ``logger.info``, ``meter.update``, ...), in-place tensor
    methods on names the loss does not use, and ``if`` blocks of those. Any other bare call may touch gradients or
    weights (``reset_grad()``) and must run where the script has it."""
    if isinstance(stmt, ast.If):
        return all(_runs_after_backward_safely(s) for s in stmt.body + stmt.orelse)
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Pass)):
        return True
    if isinstance(stmt, ast.Expr):
        if not isinstance(stmt.value, ast.Call):
            return True
        func = stmt.value.func
        if isinstance(func, ast.Name):
            return func.id in _LOGGING_FUNCTIONS
        if isinstance(func, ast.Attribute):
            return func.attr in _LOGGING_METHODS or _is_inplace_method_call(stmt)
    return False


# --- what a statement moved across the site call could observe ---------------------------------------------------
# The site call runs the region, backward() (every `.grad`) and, fused, the optimizer's update; a statement of the
# window that the rewrite moves after it (``_Rewriter._place_others``'s ``after``) runs after all of that, and the
# zero_grad() calls of the window run before it. A statement that reads `.grad` (PyTorch's
# neural_networks_tutorial: `net.zero_grad(); print(net.conv1.bias.grad)` between the loss and backward(), None in
# PyTorch) would see the new gradients: it is hoisted with the zero_grad() calls when it can run before the
# region's statements that precede it (:func:`_hoistable_grad_read`), else it is a barrier. Weights read by moved
# statements are the runtime's (``compiled_step.SiteRuntime._after_reads_weights``: such a step is not fused).
_GRAD_READ_FUNCTIONS = frozenset({"print", "float", "int", "bool", "str", "repr", "len", "abs", "isinstance", "type",
                                  "id", "format", "round", "sum", "min", "max", "list", "tuple"})
_NOT_PURE_TENSOR_METHODS = frozenset({"backward", "register_hook", "retain_grad", "requires_grad_", "grad"})


def _reads_grad(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` reads a ``.grad`` attribute (``net.bias.grad``, ``p.grad.norm()``) or calls ``zero_grad``."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Attribute) and node.attr in ("grad", "zero_grad") and isinstance(node.ctx, ast.Load):
            return True
    return False


def _known_calls_only(stmt: ast.stmt) -> bool:
    """Every call in ``stmt`` is a value builtin (``print``, ``float``...), a logging method (``append``...) or a
    PyTorch tensor method that is neither in place nor an autograd hook (``clone``, ``norm``, ``item``...): none of
    them changes what another statement of the window reads (an argument's own methods aside, which the name checks
    of :func:`_hoistable_grad_read` cover)."""
    return all(_is_known_call(node) for node in ast.walk(stmt) if isinstance(node, ast.Call))


def _is_known_call(node: ast.Call) -> bool:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id in _GRAD_READ_FUNCTIONS
    if isinstance(func, ast.Attribute):
        if func.attr in _LOGGING_METHODS:
            return True
        return func.attr in _tensor_attributes() and func.attr not in _NOT_PURE_TENSOR_METHODS \
            and not (func.attr.endswith("_") and not func.attr.startswith("_"))
    return False


def _attribute_chains(stmt: ast.stmt):
    """``(root name, [attr, attr...])`` of each outermost attribute chain ``stmt`` reads (``net.bias.grad`` ->
    ``("net", ["bias", "grad"])``; subscripts are stepped through: ``net[1].running_mean`` ->
    ``("net", ["running_mean"])``), and ``(name, [])`` for a name read bare."""
    inner = set()
    out = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            attrs, value = [], node
            while isinstance(value, (ast.Attribute, ast.Subscript)):
                inner.add(id(value))
                if isinstance(value, ast.Attribute):
                    attrs.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name):
                inner.add(id(value))
                out.append((value.id, attrs[::-1]))
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in inner:
            out.append((node.id, []))
    return out


def _hoistable_grad_read(stmt: ast.stmt, earlier: List[ast.stmt], after: List[ast.stmt]) -> bool:
    """Whether ``stmt`` (it reads ``.grad``) may run before the site call, ahead of ``earlier`` (the region's
    statements before it) and ``after`` (the window's statements before it that run after the site call): a simple
    statement or logging ``if`` whose calls are known (:func:`_known_calls_only`), that reads no name they assign,
    assigns or mutates no name they use, and reads the names they also read only through a ``.grad`` chain
    (``net.bias.grad``: a forward changes no gradient; ``net.bn.running_mean`` it does change)."""
    if not (isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)) or _is_logging_if(stmt)) \
            or not _known_calls_only(stmt) or _has_nested_scope_or_yield(stmt):
        return False
    others = earlier + after
    other_reads = set().union(set(), *(_reads(s) for s in others))
    other_writes = set().union(set(), *(_writes(s) | _mutated(s) for s in others))
    if _reads(stmt) & other_writes or (_writes(stmt) | _mutated(stmt)) & (other_reads | other_writes):
        return False
    for name, attrs in _attribute_chains(stmt):
        if name in other_reads and name not in _BUILTINS and "grad" not in attrs:
            return False
    return True


def _state_later_calls_may_change(stmt: ast.stmt, later: List[ast.stmt]) -> List[ast.expr]:
    """What ``stmt`` (not needed for the loss, between two region statements) reads that a later region statement's
    call may change: the objects whose state it reads (``net[1].running_mean``, ``net.bn``: an attribute chain that
    is not a tensor's, rooted at a name a later region statement calls, ``net`` in ``o2 = net(x2)``) and the objects
    called later that it hands to a call it makes (``v = net(xv)``, ``log(net)``). Moved after the site call, it
    would see them after that later call (a forward updates BatchNorm statistics): the site call is then guarded by
    ``__adapter_in_order__`` on these values (``compiled_step.in_order``). Returns the expressions (AST), [] when
    none."""
    callees = set()
    for s in later:
        for node in ast.walk(s):
            if isinstance(node, ast.Call):
                root = _chain_root(node.func)
                if root is not None and root not in _BUILTINS:
                    callees.add(root)
    if not callees:
        return []
    out = []
    for name, attrs in _attribute_chains(stmt):
        if name in callees and any(a not in _tensor_attributes() for a in attrs):
            out.append(_state_expr(stmt, name))
    if not _known_calls_only(stmt):
        for name in sorted(_names(stmt, ast.Load) & callees):
            out.append(ast.Name(name, ast.Load()))
    return _unique(out)


def _handed_to_unknown_calls(stmt: ast.stmt, earlier: List[ast.stmt]) -> List[ast.expr]:
    """The names ``stmt`` hands to a call :func:`_known_calls_only` does not know (as an argument, or as the object
    whose method it calls), less the names the region's statements before it assign (its own tensors) and builtins:
    a user function given ``model`` may read its ``.grad`` (``grad_norm(model)``); ``accuracy(output, target)``
    hands tensors only, which ``compiled_step.in_order`` lets move."""
    if _known_calls_only(stmt):
        return []
    own = set().union(set(), *(_writes(s) for s in earlier))
    names = set()
    for node in ast.walk(stmt):
        if not isinstance(node, ast.Call) or _is_known_call(node):
            continue
        for arg in list(node.args) + [k.value for k in node.keywords]:
            called = {id(c.func) for c in ast.walk(arg) if isinstance(c, ast.Call)}
            # `crit(model(xv), t)` hands model's output, not model (a name only called there is not handed)
            names |= {n.id for n in ast.walk(arg) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                      and id(n) not in called}
        if isinstance(node.func, ast.Attribute):
            root = _chain_root_any(node.func)
            if root is not None and root not in _USUAL_MODULES:  # `torch.optim.SGD(...)`: a library function
                names.add(root)
    return [ast.Name(n, ast.Load()) for n in sorted(names - own - _BUILTINS)]


_USUAL_MODULES = frozenset({"torch", "nn", "F", "np", "numpy", "math", "torchvision", "optim"})


def _unique(exprs: List[ast.expr]) -> List[ast.expr]:
    seen, out = set(), []
    for expr in exprs:
        if ast.dump(expr) not in seen:
            seen.add(ast.dump(expr))
            out.append(expr)
    return out


def _state_expr(stmt: ast.stmt, name: str) -> ast.expr:
    """The longest attribute/subscript chain rooted at ``name`` in ``stmt`` whose attributes are not a tensor's,
    cut before the first tensor attribute (``net[1].running_mean.clone()`` -> ``net[1].running_mean``)."""
    best = ast.Name(name, ast.Load())
    best_len = 0
    for node in ast.walk(stmt):
        if not isinstance(node, (ast.Attribute, ast.Subscript)) or _chain_root_any(node) != name:
            continue
        parts, value = [], node
        while isinstance(value, (ast.Attribute, ast.Subscript)):
            parts.append(value)
            value = value.value
        parts.reverse()  # outermost last
        keep = None
        for part in parts:
            if isinstance(part, ast.Attribute) and part.attr in _tensor_attributes():
                break
            keep = part
        if keep is not None and len(ast.unparse(keep)) > best_len and not _has_call(keep):
            best, best_len = keep, len(ast.unparse(keep))
    return best


def _chain_root_any(expr) -> Optional[str]:
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _has_call(expr) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(expr))


_MAX_LEAD = 3  # statements between backward() and optimizer.step() that may run after a fused update
# what a statement between backward() and optimizer.step() may call and still run after a fused update unchanged
_LOSS_READ_BUILTINS = {"float", "abs", "print", "str"}  # none raises on a NaN or inf loss (int, round do)
_LOSS_READ_NODES = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Call, ast.Attribute, ast.JoinedStr,
                    ast.FormattedValue, ast.operator, ast.unaryop, ast.expr_context)


def _reads_only_the_loss(stmt: ast.stmt, loss: ast.expr, protected: Set[str]) -> bool:
    """Whether ``stmt``, between ``backward()`` and ``optimizer.step()``, reads nothing the update can change, so that
    it may run after a fused update: ``total += loss.item()``, ``value = float(loss)``, ``print(loss.item())``.

    Allowed: an assignment to one plain name (``=`` or an augmented one) or a ``print(...)`` call, whose expression
    reads only the loss name (``loss`` in ``loss.backward()``) through ``.item()`` / ``float`` / ``abs`` / ``str``,
    constants, arithmetic and f-strings, and the assigned name itself; the assigned name is not one of ``protected``
    (the region's names) nor the loss. The loss is the graph's output, computed before the update; nothing else is
    read, so no parameter, gradient or optimizer state is observed; and none of these raises on a NaN or inf loss
    (``int``/``round`` would: the script would stop before its update, the fused step after it)."""
    if not isinstance(loss, ast.Name):
        return False
    if isinstance(stmt, ast.AugAssign):
        target, value = stmt.target, stmt.value
    elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name) \
            and stmt.value.func.id == "print" and not stmt.value.keywords:
        target, value = None, stmt.value
    else:
        return False
    if target is not None and (not isinstance(target, ast.Name) or target.id == loss.id or target.id in protected):
        return False
    allowed = {loss.id} | ({target.id} if target is not None else set())
    for node in ast.walk(value):
        if not isinstance(node, _LOSS_READ_NODES):
            return False
        if isinstance(node, ast.Call):
            func = node.func
            if node.keywords or not (
                    (isinstance(func, ast.Name) and func.id in _LOSS_READ_BUILTINS)
                    or (isinstance(func, ast.Attribute) and func.attr == "item" and not node.args
                        and isinstance(func.value, ast.Name) and func.value.id == loss.id)):
                return False
        elif isinstance(node, ast.Attribute):
            if not (node.attr == "item" and isinstance(node.value, ast.Name) and node.value.id == loss.id):
                return False
        elif isinstance(node, ast.Name) and node.id not in allowed and not (
                node.id in _LOSS_READ_BUILTINS and isinstance(node.ctx, ast.Load)):
            return False
    if isinstance(stmt, ast.AugAssign) and target.id not in allowed:
        return False
    return True


def _is_logging_if(stmt: ast.stmt) -> bool:
    """An ``if`` block of statements that may run after ``backward()`` (:func:`_runs_after_backward_safely`), with no
    ``backward()`` / ``step()`` call, lambda or comprehension: it may join a step's window."""
    return isinstance(stmt, ast.If) and _runs_after_backward_safely(stmt) and not _is_step_boundary(stmt) \
        and not _has_nested_scope_or_yield(stmt)


def _has_nested_scope_or_yield(stmt: ast.stmt) -> bool:
    return any(isinstance(n, (ast.Lambda, ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr, ast.Starred,
                              ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) for n in ast.walk(stmt))


_MAX_BRANCH_SITES = 4  # sites one backward() may become through branch ifs (each a graph, compiled when it runs)
# a branch if's test: names, attribute reads, constants, comparisons, and/or/not (no call: evaluated as written)
_TEST_NODES = (ast.Name, ast.Attribute, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.cmpop, ast.boolop,
               ast.unaryop, ast.expr_context)


def _is_branch_if(stmt: ast.stmt) -> bool:
    """An ``if``/``elif``/``else`` whose test reads only names, attributes and constants (``if args.model ==
    'Transformer':``) and whose branches hold only statements a step's window may hold (simple statements, autocast
    blocks, logging ifs, ``pass``) or further branch ifs, with no ``backward()``/``step()``: the rewrite can give each
    branch its own site (``_Rewriter._make_site_branching``)."""
    if not isinstance(stmt, ast.If) or _is_step_boundary(stmt) \
            or not all(isinstance(n, _TEST_NODES) for n in ast.walk(stmt.test)):
        return False
    return all(isinstance(s, ast.Pass) or _is_window_stmt(s) or _is_logging_if(s) or _is_branch_if(s)
               for s in stmt.body + stmt.orelse)


def _is_context_block(stmt: ast.stmt) -> bool:
    """``with <call or name>[, ...]:`` (no ``as``) around simple statements: a candidate autocast region."""
    return isinstance(stmt, ast.With) and all(item.optional_vars is None and isinstance(
        item.context_expr, (ast.Call, ast.Name, ast.Attribute)) for item in stmt.items) \
        and all(isinstance(s, _SIMPLE) and not _has_nested_scope_or_yield(s) for s in stmt.body)


def _is_window_stmt(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.With):
        return _is_context_block(stmt)
    return isinstance(stmt, _SIMPLE) and not _has_nested_scope_or_yield(stmt)


def _scaler_scale(loss: ast.expr):
    """``<scaler>.scale(<loss>)`` -> (scaler, loss); anything else -> (None, loss)."""
    if isinstance(loss, ast.Call) and isinstance(loss.func, ast.Attribute) and loss.func.attr == "scale" \
            and len(loss.args) == 1 and not loss.keywords and isinstance(loss.func.value, (ast.Name, ast.Attribute)):
        return loss.func.value, loss.args[0]
    return None, loss


def _thunk(expr: ast.expr) -> ast.Lambda:
    """``lambda: <expr>``: a user call the runtime makes only when the step was not fused."""
    return ast.Lambda(ast.arguments([], [], None, [], [], None, []), expr)


def _same(a: Optional[ast.AST], b: Optional[ast.AST]) -> bool:
    return a is not None and b is not None and ast.dump(a) == ast.dump(b)


class _Rewriter(ast.NodeTransformer):
    def __init__(self, filename: str, first_key: int):
        self.filename = filename
        self.first_key = first_key
        self.sites: List[StepSite] = []
        self.functions: Optional[host_values.DrawingFunctions] = None  # the script's drawing helpers (rewrite())
        self.script_defs: dict = {}  # name -> the script's FunctionDefs of that name (rewrite(): _through_call)
        self.modules: Set[str] = set()  # names the script imports as modules (rewrite(): _script_modules)
        self.in_forward = False  # inside a `def forward` (a module's): no site ends at a call there
        self.window_floor = 0  # _make_site_branching: a site's region starts at this index of `before` or later

    def visit_FunctionDef(self, node):
        outer, self.in_forward = self.in_forward, node.name == "forward" or self.in_forward
        try:
            return self.generic_visit(node)
        finally:
            self.in_forward = outer

    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and all(isinstance(s, ast.stmt) for s in stmts):
                setattr(node, field, self._rewrite_block(stmts))
        return node

    def _rewrite_block(self, stmts: List[ast.stmt]) -> List[ast.stmt]:
        out: List[ast.stmt] = []
        i = 0
        while i < len(stmts):
            call = _backward_call(stmts[i])
            if call is None and not any(_has_backward_call(s) for s in stmts[i + 1:]) and not self.in_forward:
                # `_backward(loss)`, `loss_scaler(loss, optimizer)`: a call that may run backward() of its argument
                # (module docstring, "Backward through a call"); a later backward() of the block is preferred
                call = self._through_call(stmts[i])
                if call is not None and not _value_reads_only(call.func.value.id, stmts[i + 1:]):
                    call = None  # `self.leaky(g)` then `x = x + g`: g is a tensor used on, not a loss consumed
            if call is None or call.args:
                out.append(stmts[i])
                i += 1
                continue
            through = _method_call(stmts[i], "backward") is None
            new = self._make_site_branching(out, stmts[i], call, [] if through else stmts[i + 1:i + 4 + _MAX_LEAD])
            if new is None:
                out.append(stmts[i])
                i += 1
                continue
            out, consumed = new
            i += 1 + consumed
        return out

    def _make_site_branching(self, before: List[ast.stmt], backward: ast.stmt, call: ast.Call,
                             following: List[ast.stmt], budget: List[int] = None):
        """:meth:`_make_site`, with a *branch if* that computes a name the loss needs specialized (module docstring,
        "Branches"): the ``if`` is kept in the script, its test evaluated there as written, and each of its branches
        gets its own site, made from the statements before the ``if``, that branch, and the statements after it. When
        the branches do not agree (one fuses the optimizer step and another does not), or there would be more than
        ``_MAX_BRANCH_SITES`` sites, nothing is specialized: the ``if`` stays outside the region, as before."""
        budget = [_MAX_BRANCH_SITES] if budget is None else budget
        j = self._branch_if(before, _scaler_scale(call.func.value)[1])
        if j is None:
            return self._make_site(before, backward, call, following)
        first_site = len(self.sites)
        if_stmt = before[j]
        test_reads = _names(if_stmt.test, ast.Load)
        # `r = np.random.rand(1)` (what the test reads) must run before the test: the branches' regions start after
        # the last statement before the `if` that assigns or mutates a name the test reads (a statement the loss
        # needs ahead of it, `x = x.float()`, runs before the site call as when a barrier cuts a window: _record_from)
        outer_floor = self.window_floor
        floor = max([outer_floor] + [i + 1 for i in range(j) if (_writes(before[i]) | _mutated(before[i])) & test_reads])
        branches = [[s for s in if_stmt.body if not isinstance(s, ast.Pass)],
                    [s for s in if_stmt.orelse if not isinstance(s, ast.Pass)]]
        leaves, lifted = [], []
        for branch in branches:
            budget[0] -= 1
            if budget[0] < 0:
                break
            spec = before[:j] + copy.deepcopy(branch) + copy.deepcopy(before[j + 1:])
            self.window_floor = floor
            try:
                made = self._make_site_branching(spec, copy.deepcopy(backward), call, following, budget)
            finally:
                self.window_floor = outer_floor
            if made is not None:
                made = self._lift_record_from(made, floor, lifted)
            leaves.append((spec, made))
        consumed = {made[1] if made is not None else 0 for _, made in leaves}
        starts = [self._common_prefix(before[:j], made[0]) for _, made in leaves if made is not None]
        p = min(starts, default=j)
        moved_writes = set().union(set(), *(_writes(s) | _mutated(s) for s in before[p:j]))
        if budget[0] < 0 or len(consumed) != 1 or not any(made for _, made in leaves) or test_reads & moved_writes:
            del self.sites[first_site:]  # not specialized: the `if` stays outside the region
            return self._make_site(before, backward, call, following)
        bodies = []
        for spec, made in leaves:
            stmts = made[0][p:] if made is not None else spec[p:] + [backward]
            bodies.append(copy.deepcopy(stmts))
        new_if = ast.copy_location(ast.If(if_stmt.test, bodies[0], bodies[1]), if_stmt)
        prefix = list(before[:p])
        for at, stmt in sorted(lifted, key=lambda pair: pair[0], reverse=True):  # each branch site's, in its place
            prefix.insert(at, stmt)
        return prefix + [new_if], consumed.pop()

    @staticmethod
    def _lift_record_from(made, floor: int, lifted: list):
        """A branch site's ``__adapter_record_from__(K, ...)`` statements (:meth:`_record_from`) placed among the
        statements before ``floor`` (they run before the branch if's test): taken out of the site's statements and
        appended to ``lifted`` as ``(index, statement)``, to run before the ``if``, in that place, for both branches'
        sites (the first that finds a tensor that requires grad opens the recording, and the site that runs then
        runs eagerly)."""
        stmts = []
        for at, stmt in enumerate(made[0]):
            if at < floor and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                    and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == RECORD_FROM_FN:
                lifted.append((len(stmts), stmt))  # several: an elif's nested branch if lifted its own already
            else:
                stmts.append(stmt)
        return stmts, made[1]

    def _site_backward(self, stmt: ast.stmt) -> Optional[ast.Call]:
        """The ``<loss>.backward(...)`` call of a site's backward statement: its own, or, for a call that may run
        backward() of its argument (:meth:`_through_call`), ``<argument>.backward()`` made up."""
        return _method_call(stmt, "backward") or self._through_call(stmt)

    def _through_call(self, stmt: ast.stmt) -> Optional[ast.Call]:
        """``<loss>.backward()`` (made up) when ``stmt`` is a call statement that may run ``backward()`` of its first
        positional argument that is a plain name (module docstring, "Backward through a call"): a function of the
        script whose body calls ``.backward(`` somewhere (``def _backward(_loss): ... _loss.backward()``), a method
        named ``backward`` (``accelerator.backward(loss)``), or another object or function, which only the running
        program can tell (``loss_scaler(loss, optimizer)``, timm's ``NativeScaler``). Not: builtins, logging calls
        (``print``, ``losses.append``, ``meter.update``...), tensor methods, module functions (``torch.*``), a
        function of the script without ``.backward(``. Else None."""
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            return None
        node = stmt.value
        if not self._may_run_backward(node, 3):
            return None
        loss = next((a for a in node.args if isinstance(a, ast.Name)), None)
        if loss is None:
            return None
        return ast.Call(ast.Attribute(ast.Name(loss.id, ast.Load()), "backward", ast.Load()), [], [])

    def _may_run_backward(self, node: ast.Call, depth: int) -> bool:
        """Whether the call ``node`` may run backward() of an argument (:meth:`_through_call`): a function of the
        script may when its body calls ``.backward(`` or hands one of its parameters to a call that may (``def
        _backward(_loss): loss_scaler(_loss, optimizer)``), ``depth`` functions down."""
        func = node.func
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return False
        if isinstance(func, ast.Name):
            if func.id in _BUILTINS or func.id in _LOGGING_FUNCTIONS or func.id in _STEP_FUNCTIONS \
                    or func.id in _USUAL_MODULES or func.id in self.modules:
                return False
            defs = self.script_defs.get(func.id)
            return not defs or all(self._def_may_run_backward(d, depth) for d in defs)
        if isinstance(func, ast.Attribute):
            if func.attr != "backward" and (func.attr in _LOGGING_METHODS or func.attr in _tensor_attributes()
                                            or func.attr in _NOT_A_FORWARD or func.attr.startswith("_")):
                return False
            root = _chain_root_any(func)
            return root is not None and root not in _USUAL_MODULES and root not in _BUILTINS \
                and root not in self.modules  # `sys.exit(code)`, `dist.all_reduce(t)`: a module's function
        return False

    def _def_may_run_backward(self, fn: ast.AST, depth: int) -> bool:
        if any(isinstance(n, ast.Attribute) and n.attr == "backward" for n in ast.walk(fn)):
            return True
        if depth <= 0 or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        return any(isinstance(n, ast.Call) and any(isinstance(a, ast.Name) and a.id in params for a in n.args)
                   and self._may_run_backward(n, depth - 1) for n in ast.walk(fn))

    @staticmethod
    def _common_prefix(a: List[ast.stmt], b: List[ast.stmt]) -> int:
        """How many leading statements of ``b`` are those of ``a`` (the same objects)."""
        n = 0
        while n < len(a) and n < len(b) and a[n] is b[n]:
            n += 1
        return n

    @classmethod
    def _branch_if(cls, before: List[ast.stmt], loss: ast.expr) -> Optional[int]:
        """The index in ``before`` of the last ``if`` of the step's window that assigns a name the loss needs, when it
        is a branch if (:func:`_is_branch_if`); else None."""
        start = len(before)
        while start > 0 and not _is_step_boundary(before[start - 1]) and (
                _is_window_stmt(before[start - 1]) or _is_logging_if(before[start - 1])
                or _is_branch_if(before[start - 1])):
            start -= 1
        needed = _names(loss, ast.Load)
        for j in range(len(before) - 1, start - 1, -1):
            stmt = before[j]
            if isinstance(stmt, ast.If):
                if _writes(stmt) & needed:
                    return j if _is_branch_if(stmt) else None
                continue
            if _method_call(stmt, "zero_grad") is None and _writes(stmt) & needed:
                needed = (needed - _writes(stmt)) | _reads(stmt)
        return None

    def _make_site(self, before: List[ast.stmt], backward: ast.stmt, call: ast.Call, following: List[ast.stmt]):
        """:meth:`_make_one_site`, with calls that may draw (of methods and objects: ``inputs, targets =
        mixup_fn(inputs, targets)``, ``host_values.run_time_call``; of the script's drawing functions) split out of
        the region only when the running program says so: ``if __adapter_host_calls__(K, lambda: ((callee,
        (args...)), ...)): <the site with them run on the host before it> else: <site K + 1, with every such call in
        its region>`` (``host_values.host_calls``)."""
        first_site = len(self.sites)
        self.functions.at_run_time = True
        try:
            made = self._make_one_site(before, backward, call, following)
        finally:
            self.functions.at_run_time = False
        split = made is not None and host_values.run_time_calls(self.sites[-1].host_stmts, self.functions)
        if not split:
            return made
        key = self.sites[-1].key
        twin_before, twin_backward = copy.deepcopy(before), copy.deepcopy(backward)
        self.functions.split_calls = False
        try:
            twin = self._make_one_site(twin_before, twin_backward, self._site_backward(twin_backward),
                                       copy.deepcopy(following))
        finally:
            self.functions.split_calls = True
        p = min(self._common_prefix(before, made[0]), self._common_prefix(twin_before, twin[0]) if twin else 0)
        if twin is None or twin[1] != made[1]:
            del self.sites[first_site:]  # the two rewrites do not line up: the calls stay in the region
            self.functions.split_calls = False
            try:
                return self._make_one_site(before, backward, call, following)
            finally:
                self.functions.split_calls = True
        test = ast.Call(ast.Name(HOST_CALLS_FN, ast.Load()), [ast.Constant(key), split], [])
        guarded = ast.copy_location(ast.If(test, made[0][p:], twin[0][p:]), backward)
        return before[:p] + [guarded], made[1]

    def _make_one_site(self, before: List[ast.stmt], backward: ast.stmt, call: ast.Call,
                       following: List[ast.stmt]):
        """Rewrite one site. ``following``: the (up to) three statements after backward(). Returns (the statements
        replacing ``before`` + backward, how many of ``following`` were consumed), or None when there is no site."""
        scaler, loss = _scaler_scale(call.func.value)
        through = _method_call(backward, "backward") is None  # the backward() runs inside a call of the script's
        create_graph = None
        for keyword in call.keywords:
            if keyword.arg == "create_graph":
                create_graph = keyword.value
            else:  # `retain_graph=` (a second backward() follows), `inputs=`, `gradient=`: the eager bridge's
                return None
        following_all = list(following)
        # The window: simple statements (and autocast-like with-blocks of them) just before backward(), in this block,
        # back to the previous step (an earlier site, backward() or step() call).
        # `if` blocks of assignments and logging (`if t % 100 == 99: print(t, loss.item())`, the logging of PyTorch's
        # own tutorials, before or after their `optimizer.zero_grad()`) join the window too: after the region's last
        # statement they run after the region, as a trailing simple statement does (_place_others); one between two
        # region statements is a barrier (the region starts after it), and one that assigns a name the loss needs
        # is never part of the region: the window starts after it (_cut_after_ifs)
        start = len(before)
        while start > 0 and not _is_step_boundary(before[start - 1]) and (
                _is_window_stmt(before[start - 1]) or _is_logging_if(before[start - 1])):
            start -= 1
        start += self._cut_after_ifs(before[start:], loss)
        window = before[start:]
        # A zero_grad() before the forward marks where the step starts (data fetching above it stays eager).
        zero_grads = [j for j, stmt in enumerate(window) if _method_call(stmt, "zero_grad") is not None]
        if zero_grads and any(self._slice(window[zero_grads[-1] + 1:], loss)):
            start += zero_grads[-1] + 1
            window = before[start:]
        window_start = start  # the statements the region may not start at (below) run before its recording opens
        if start < self.window_floor:  # a branch if's test reads what before[:floor] assigns (_make_site_branching)
            start = self.window_floor
            window = before[start:]
        while True:
            in_slice = self._slice(window, loss)
            if not any(in_slice):
                return None
            first = in_slice.index(True)
            placed = self._place_others(window, in_slice, first, _names(loss, ast.Load))
            if placed[0] is None:
                break
            if placed[0] is _IN_ORDER:
                return None
            # a statement that can run neither before nor after the region: the region starts after it
            start += placed[0] + 1
            window = before[start:]
        _, hoisted, after, (watched, grad_watched) = placed
        region = [s for s, keep in zip(window, in_slice) if keep]
        if through and not any(_may_call_a_module(node, self.modules) for stmt in region for node in ast.walk(stmt)
                               if isinstance(node, ast.Call)):
            return None  # `ROOT = os.path.dirname(...)` handed to `sys.path.insert(0, ROOT)`: no forward, no step
        # graph breaks: host computations of the region (`lam = np.random.beta(a, a)`) run on the host before the
        # site call, in the script's order; the graph takes their values as inputs (adapter/host_values.py)
        host_stmts, region = host_values.split_region(region, window, after, self.functions)
        # Free names: read before written inside the region (plus the loss expression's).
        free, assigned = [], []
        for stmt in region:
            for name in sorted(_reads(stmt)):
                if name not in assigned and name not in free:
                    free.append(name)
            for name in sorted(_writes(stmt)):
                if name not in assigned:
                    assigned.append(name)
        for name in sorted(_names(loss, ast.Load)):
            if name not in assigned and name not in free:
                free.append(name)
        # optimizer.step() right after backward(), or after one clip_grad_norm_(...): fused into the graph.
        # With a scaler: [scaler.unscale_(opt)] [clip_grad_norm_(...)] scaler.step(opt).
        # Up to _MAX_LEAD statements that read only the loss (`train_loss += loss.item()`) may come first: they run
        # after the site call (and so after a fused update), before the optimizer-step stand-in (_reads_only_the_loss)
        protected = set(free) | set(assigned)
        lead = 0
        while scaler is None and lead < _MAX_LEAD and lead < len(following) - 1 \
                and _reads_only_the_loss(following[lead], loss, protected):
            lead += 1
        leading, following = following[:lead], following[lead:]
        j = 0
        unscale = None
        if scaler is not None and following:
            call_ = _method_call(following[0], "unscale_")
            if call_ is not None and _same(call_.func.value, scaler) and len(call_.args) == 1 and not call_.keywords:
                unscale, j = following[0], 1
        clip = _clip_call(following[j]) if len(following) > j else None
        k = j + (1 if clip is not None else 0)
        step_stmt = following[k] if len(following) > k else None
        step_call = _method_call(step_stmt, "step") if step_stmt is not None else None
        optimizer = None
        if step_call is not None and not step_call.keywords:
            if scaler is not None and _same(step_call.func.value, scaler) and len(step_call.args) == 1:
                optimizer = step_call.args[0]  # scaler.step(optimizer)
            elif not step_call.args and scaler is None:
                optimizer = step_call.func.value  # optimizer.step() (after scaler.scale(...).backward(): not fused,
                # the grads stay scaled as the script asked)
        if unscale is not None and not (optimizer is not None and _same(unscale.value.args[0], optimizer)):
            optimizer = None  # unscale_ of another optimizer than the one stepped: not fused
        if optimizer is not None and _names(optimizer, ast.Load) & set().union(set(), *(_writes(s) for s in after)):
            # the optimizer is made between the region's statements (`model = Net(); opt = SGD(model.parameters());
            # model(x).sum().backward(); opt.step()`): that assignment runs after the site call, which cannot
            # receive it: not fused (`opt.step()` stays the script's own call)
            optimizer = None
        if optimizer is not None and leading:
            lead_writes = set().union(*(_writes(stmt) for stmt in leading))
            read_at_site = _names(optimizer, ast.Load) | (_names(clip, ast.Load) if clip is not None else set()) \
                | (_names(unscale, ast.Load) if unscale is not None else set())
            if lead_writes & read_at_site:
                # the optimizer expression or the clip's arguments (evaluated in the site call, before the leading
                # statements run there) read a name a leading statement assigns: not fused
                optimizer = None
        fuse = optimizer is not None
        if not fuse:
            clip, unscale, k = None, None, 0
            leading = []
        flag_reads = set().union(set(), *(_names(k.value, ast.Load) for k in call.keywords))
        window_writes = set().union(set(), *(_writes(stmt) | _mutated(stmt) for stmt in window[first:]))
        if flag_reads & window_writes or any(_has_call(k.value) for k in call.keywords):
            return None  # `backward(create_graph=flag)` with `flag` computed in the region, or by a call: no site
        site = StepSite(self.first_key + len(self.sites), self.filename, backward.lineno, region, loss, free, assigned,
                        step_stmt.lineno if fuse else None,
                        following[j].lineno if clip is not None else None, scaler)
        site.through = through
        site.create_graph = create_graph
        site.host_values, site.host_lines = host_values.graph_inputs(host_stmts, free)
        site.host_stmts = host_stmts
        site.counters = host_values.counters(region, loss, free)
        if fuse:
            # the region's other statements run after the site call, which updates the weights when fused; PyTorch
            # ran them before step(): `q = w * 1.0` or `h = model(x)` there must read the old weights. The names they
            # read that neither the region nor they assign are handed to the site call (a thunk): when one holds a
            # parameter the optimizer updates, the step is not fused (compiled_step.SiteRuntime._after_reads_weights)
            after_writes = set().union(set(), *(_writes(stmt) for stmt in after))
            site.after_reads = sorted(set().union(set(), *(_names(stmt, ast.Load) for stmt in after))
                                      - set(assigned) - after_writes - _BUILTINS)
        self.sites.append(site)
        new_stmts = before[:start] + window[:first] + hoisted + host_stmts + \
            [self._site_call(site, backward, optimizer, clip)]
        new_stmts += after
        if through:  # the script's call, after the region's other statements, as in the script: its backward() of
            # the loss is served with the site's gradients (compiled_step.backward_through)
            item = ast.withitem(ast.Call(ast.Name(THROUGH_FN, ast.Load()), [ast.Constant(site.key), loss], []), None)
            new_stmts.append(ast.copy_location(ast.With([item], [backward]), backward))
        new_stmts += leading  # backward()'s statements before optimizer.step() (fused only): they read the loss only
        if unscale is not None:  # the user's unscale_ still runs when the step was not fused: a thunk
            stmt = ast.Expr(ast.Call(ast.Name(UNSCALE_FN, ast.Load()), [ast.Constant(site.key), _thunk(unscale.value)],
                                     []))
            new_stmts.append(ast.copy_location(stmt, unscale))
        if clip is not None:  # the user's call still runs when the step was not fused: a thunk
            call = ast.Call(ast.Name(CLIP_FN, ast.Load()), [ast.Constant(site.key), _thunk(clip)], [])
            clip_stmt = following[j]
            stmt = ast.Assign([clip_stmt.targets[0]], call) if isinstance(clip_stmt, ast.Assign) else ast.Expr(call)
            new_stmts.append(ast.copy_location(stmt, clip_stmt))
        if fuse:
            args = [ast.Constant(site.key), optimizer] + ([scaler] if step_call.args else [])
            opt_call = ast.Expr(ast.Call(ast.Name(OPT_STEP_FN, ast.Load()), args, []))
            new_stmts.append(ast.copy_location(opt_call, step_stmt))
        consumed = (len(leading) + k + 1) if fuse else 0
        if watched or grad_watched:
            # statements moved after the site call read state a later region call may change (a BatchNorm buffer):
            # at run time, when one of these values is such state, the script's own statements run, in its order,
            # on the eager bridge (compiled_step.in_order); else the rewritten ones
            site.watched = [ast.unparse(e) for e in watched]
            site.grad_watched = [ast.unparse(e) for e in grad_watched]
            test = ast.Call(ast.Name(IN_ORDER_FN, ast.Load()),
                            [ast.Constant(site.key), _thunk(ast.Tuple(list(watched), ast.Load())),
                             _thunk(ast.Tuple(list(grad_watched), ast.Load()))], [])
            as_written = copy.deepcopy(window[first:] + [backward] + following_all[:consumed])
            guarded = ast.copy_location(ast.If(test, as_written, new_stmts[len(before[:start]) + first:]), backward)
            new_stmts = before[:start] + window[:first] + [guarded]
        record_from = self._record_from(site, before[window_start:], start - window_start, loss)
        if record_from is not None:
            at, stmt = record_from
            new_stmts.insert(window_start + at, stmt)
        return new_stmts, consumed

    @classmethod
    def _record_from(cls, site: StepSite, window: List[ast.stmt], cut: int, loss: ast.expr):
        """The statement that opens the recording before the statements the loss needs that run ahead of the region.

        The region starts after a statement it cannot hold (``show(y)``, ``y[:, 0] = v``, an ``if`` assigning a name
        the loss needs, a ``zero_grad()``): the window's statements before that point (``window[:cut]``) run before
        the site call, which opens the eager bridge's recording at the region's first statement. What they compute
        from a Parameter or a tensor with ``requires_grad=True`` without a module call (``y = x * w``: a module call
        opens the recording itself, ``adapter/tape.py``) had no recording, and its gradient was lost without a word:
        ``w.grad`` stayed None (PyTorch: ``[40, 120]``), and a compiled site then trained nothing. So before the first
        of them that the loss needs runs ``__adapter_record_from__(K, ((line, lambda: w), (line, lambda:
        net.fc.weight), ...))`` (:func:`adapter.compiled_step.record_from`): the names and attribute chains those
        statements read, not assigned by an earlier one of them, with the line of the statement; when one holds a tensor that requires grad, the recording opens there and
        the site runs eagerly (kind ``loss-built-before-step``), with the gradients PyTorch gives. Returns ``(index in
        window, statement)`` or None (none of ``window[:cut]`` is needed)."""
        if cut <= 0:
            return None
        needed = cls._slice(window, loss)[:cut]
        if not any(needed):
            return None
        first = needed.index(True)
        exprs, seen, assigned = [], set(), set()
        for stmt, keep in zip(window[first:cut], needed[first:]):
            if not keep:
                continue
            for root, attrs in _attribute_chains(stmt):
                if root in assigned or root in _BUILTINS:
                    continue
                expr: ast.expr = ast.Name(root, ast.Load())
                for k in range(len(attrs) + 1):  # each prefix: `net.weight` of `net.weight.t()`
                    if k:
                        expr = ast.Attribute(expr, attrs[k - 1], ast.Load())
                    if (root, tuple(attrs[:k])) not in seen:
                        seen.add((root, tuple(attrs[:k])))
                        exprs.append(ast.Tuple([ast.Constant(stmt.lineno), _thunk(copy.deepcopy(expr))], ast.Load()))
            assigned |= _writes(stmt)
        if not exprs:
            return None
        call = ast.Call(ast.Name(RECORD_FROM_FN, ast.Load()), [ast.Constant(site.key), ast.Tuple(exprs, ast.Load())],
                        [])
        return first, ast.copy_location(ast.Expr(call), window[first])

    @classmethod
    def _cut_after_ifs(cls, window: List[ast.stmt], loss: ast.expr) -> int:
        """How many leading statements of ``window`` to drop so that no ``if`` block assigns a name the loss needs
        (an ``if`` is never part of a region): the index after the last such ``if``, else 0."""
        cut = 0
        while True:
            needed = _names(loss, ast.Load)
            last = None
            for j in range(len(window) - 1, cut - 1, -1):
                stmt = window[j]
                if isinstance(stmt, ast.If):
                    if _writes(stmt) & needed:
                        last = j
                        break
                    continue
                if _method_call(stmt, "zero_grad") is None and _writes(stmt) & needed:
                    needed = (needed - _writes(stmt)) | _reads(stmt)
            if last is None:
                return cut
            cut = last + 1

    @staticmethod
    def _slice(window: List[ast.stmt], loss: ast.expr) -> List[bool]:
        """Which statements of ``window`` the loss depends on: a backward slice over def-use chains, where a statement
        that assigns a needed name satisfies it (an earlier assignment of the same name is not needed for it).
        zero_grad calls are hoisted, never part of it."""
        needed = _names(loss, ast.Load)
        in_slice = [False] * len(window)
        for j in range(len(window) - 1, -1, -1):
            stmt = window[j]
            if _method_call(stmt, "zero_grad") is not None:
                continue
            if _writes(stmt) & needed:
                in_slice[j] = True
                needed = (needed - _writes(stmt)) | _reads(stmt)
        return in_slice

    @staticmethod
    def _place_others(window: List[ast.stmt], in_slice: List[bool], first: int, loss_reads: Set[str] = frozenset()):
        """Where the statements of ``window[first:]`` that the loss does not need go, so that each still sees the
        values it saw in the script: ``(barrier, hoisted, after)``.

        * ``after`` (run after the region, in order): statements after the region's last one, and assignments that
          neither read a name a later region statement assigns (``D_x = output.mean().item()`` before ``output = netD(fake)``) nor assign or mutate
          (``x.a = ...``, ``x[i] = ...``) a name a later region statement uses;
        * ``hoisted`` (run before the region, in order): ``zero_grad()`` calls (they touch only ``.grad``), and
          in-place tensor methods ``x.fill_(v)`` (PyTorch's trailing-underscore convention) whose names no earlier
          region statement and no preceding ``after`` statement uses (dcgan's ``label.fill_(fake_label)`` between
          ``fake = netG(noise)`` and ``output = netD(fake.detach())``);
        * anything else (another call such as ``optimizer.step()``, which can change what the region reads through
          objects it shares) is a barrier: ``barrier`` is its index, and the region must start after it.
        """
        hoisted, after, watched, grad_watched = [], [], [], []
        after_names: Set[str] = set()
        for j in range(first, len(window)):
            stmt = window[j]
            if in_slice[j]:
                continue
            if _method_call(stmt, "zero_grad") is not None:
                hoisted.append(stmt)
                continue
            earlier = [window[k] for k in range(first, j) if in_slice[k]]
            later = [window[k] for k in range(j + 1, len(window)) if in_slice[k]]
            if _reads_grad(stmt):
                # it observes `.grad`, which the site's backward() changes and a later zero_grad() (hoisted) clears:
                # it must run before the site call, in its order among the hoisted statements; else the statements
                # run as the script has them (no site: a barrier would leave the region's earlier statements to
                # run outside it, where their gradient may be lost)
                if _hoistable_grad_read(stmt, earlier, after):
                    hoisted.append(stmt)
                    continue
                return _IN_ORDER, None, None, None
            if not later:  # after the region's last statement: it already ran after the region
                if _mutates(stmt) & loss_reads:
                    # `h.clamp_(min=0)` or `h[0] = 0` before `(h * c).sum().backward()`: the loss expression (computed
                    # in the site call) must see the write; run after the site, its gradient and value missed it
                    # (silently). A barrier: the region starts after it
                    return j, None, None, None
                if not _runs_after_backward_safely(stmt):
                    return j, None, None, None  # e.g. reset_grad(): must run before backward(): no site after it
                after.append(stmt)
                after_names |= _names(stmt, ast.Load) | _writes(stmt)
                grad_watched += _handed_to_unknown_calls(stmt, earlier)
                continue
            later_reads = set().union(*(_reads(s) for s in later)) if later else set()
            later_writes = set().union(*(_writes(s) for s in later)) if later else set()
            if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)) \
                    and not (_reads(stmt) & later_writes) and not (_writes(stmt) & (later_reads | later_writes)) \
                    and not (_mutated(stmt) & (later_reads | later_writes)):
                # `m = net.bn.running_mean.clone()` before the region's second `net(x2)`: the site is guarded
                watched += _state_later_calls_may_change(stmt, later)
                grad_watched += _handed_to_unknown_calls(stmt, earlier)
                after.append(stmt)
                after_names |= _names(stmt, ast.Load) | _writes(stmt)
                continue
            names = _names(stmt, ast.Load) | _writes(stmt)
            earlier_names = set().union(*(_reads(s) | _writes(s) for s in earlier)) if earlier else set()
            if _is_inplace_method_call(stmt) and not (names & (earlier_names | after_names)):
                hoisted.append(stmt)
                continue
            return j, None, None, None
        return None, hoisted, after, (watched, _unique(grad_watched))

    @staticmethod
    def _site_call(site: StepSite, backward: ast.stmt, optimizer: Optional[ast.expr],
                   clip: Optional[ast.Call]) -> ast.stmt:
        env = ast.Dict([ast.Constant(n) for n in site.free_names], [ast.Name(n, ast.Load()) for n in site.free_names])
        args = [ast.Constant(site.key), env] + ([optimizer] if optimizer is not None else [])
        if clip is not None:  # clip_args: a thunk giving (parameters, max_norm[, norm_type]) when the graph is built
            args.append(_thunk(ast.Tuple(list(clip.args), ast.Load())))
        keywords = [ast.keyword("scaler", site.scaler)] if site.scaler is not None else []
        if site.create_graph is not None:  # `backward(create_graph=flag)`: evaluated here (a true value raises)
            keywords.append(ast.keyword("create_graph", site.create_graph))
        if site.after_reads:  # after=lambda: (names the statements run after the site call read): StepSite.after_reads
            keywords.append(ast.keyword("after", _thunk(ast.Tuple([ast.Name(n, ast.Load()) for n in site.after_reads],
                                                                   ast.Load()))))
        call = ast.Call(ast.Name(STEP_FN, ast.Load()), args, keywords)
        if site.outputs:
            target = ast.Tuple([ast.Name(n, ast.Store()) for n in site.outputs], ast.Store())
            stmt = ast.Assign([target], call)
        else:
            stmt = ast.Expr(call)
        return ast.copy_location(stmt, backward)


# --- module calls whose outputs never reach a gradient: run without opening a recording ------------------------------
# A statement outside every region that calls a model in grad mode (`metric = model(xv).mean()` after
# `optimizer.step()`, or moved after the site call by the rewrite) opened the eager bridge's recording
# (adapter/tape.py), which then stayed open into the next step: the site found it open and ran eagerly for good
# (--explain: "loss built from module calls made before the step"). When the def-use chains of the statement's names,
# over the whole scope, end only in value reads (`.item()`, `float()`, `print`, f-strings, `if` tests...), nothing it
# computes can reach a backward(): it runs inside `with __adapter_unrecorded__():` (tape.unrecorded), which keeps a
# module call from opening a recording. Its values are the same; only the unused autograd history is not kept.

_VALUE_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad"})
_VALUE_METHODS = frozenset({"item", "tolist", "detach", "argmax", "argmin", "size", "dim", "numel", "nelement",
                            "numpy", "data_ptr", "isnan", "isinf", "isfinite"})
_VALUE_FUNCTIONS = frozenset({"float", "int", "bool", "len", "str", "repr", "print", "format", "round", "isinstance",
                              "type", "id"})
_PASS_THROUGH = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp, ast.Subscript, ast.Tuple, ast.List,
                 ast.Slice, ast.keyword)
# nn.Module / optimizer / scheduler methods that run no forward
_NOT_A_FORWARD = frozenset({"parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children",
                            "modules", "named_modules", "state_dict", "load_state_dict", "train", "eval", "zero_grad",
                            "step", "get_last_lr", "add_param_group", "requires_grad_"})
_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
                  ast.DictComp, ast.GeneratorExp)


def _target_names(targets) -> Optional[Set[str]]:
    """The names of assignment targets that are all plain names (or tuples/lists of them), else None."""
    out: Set[str] = set()
    for target in targets:
        if isinstance(target, ast.Name):
            out.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
            out |= {e.id for e in target.elts}
        else:
            return None
    return out


def _chain_root(expr) -> Optional[str]:
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _use(node: ast.Name, parents: dict, modules: Set[str]):
    """How a read of a traced name is used: ``"value"`` (only its value is read), ``"fatal"`` (it may reach a
    gradient: a call argument of an object's method (``hist.append(x)``), a return, an attribute store, a step...),
    or the set of names an assignment binds from it (traced further)."""
    while True:
        parent = parents.get(node)
        if isinstance(parent, ast.Attribute):
            if parent.attr in _VALUE_ATTRS:
                return "value"
            call = parents.get(parent)
            if isinstance(call, ast.Call) and call.func is parent:
                if parent.attr in _VALUE_METHODS:
                    return "value"
                if parent.attr == "backward" or parent.attr.startswith("register") or parent.attr == "retain_grad":
                    return "fatal"
                node = call  # a method of the traced value: its result is traced
                continue
            node = parent
            continue
        if isinstance(parent, ast.Call):
            if node is not parent.func:  # an argument
                func = parent.func
                if isinstance(func, ast.Name):
                    if func.id in _VALUE_FUNCTIONS:
                        return "value"
                    if func.id == THROUGH_FN:  # `with __adapter_backward_through__(K, loss):`: the call inside
                        return "value"  # is traced as any call (SiteRuntime.through_done: no backward() ran)
                    if func.id in _STEP_FUNCTIONS or func.id == UNRECORDED_FN:
                        return "fatal"
                elif _chain_root(func) not in modules:  # `hist.append(x)`: may keep it where a loss finds it
                    return "fatal"
            node = parent
            continue
        if isinstance(parent, _PASS_THROUGH):
            node = parent
            continue
        if isinstance(parent, (ast.FormattedValue, ast.JoinedStr)):
            return "value"
        if isinstance(parent, (ast.If, ast.While)) and node is parent.test:
            return "value"
        if isinstance(parent, ast.Expr):
            return "value"
        if isinstance(parent, ast.Assign) and node is parent.value:
            names = _target_names(parent.targets)
            return "fatal" if names is None else names
        if isinstance(parent, (ast.AugAssign, ast.AnnAssign)) and node is parent.value \
                and isinstance(parent.target, ast.Name):
            return {parent.target.id}
        return "fatal"


def _may_call_a_module(call: ast.Call, modules: Set[str]) -> bool:
    """``model(x)``, ``self.encoder(x)``: a call of a name or attribute that is neither a builtin, nor a function of
    one of ``modules`` (``torch.zeros``), nor a ``torch.Tensor`` method (``out.mean()``, ``loss.item()``)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id not in _BUILTINS and func.id not in modules
    if isinstance(func, ast.Attribute):
        return func.attr not in _tensor_attributes() and func.attr not in _NOT_A_FORWARD \
            and _chain_root(func) not in modules
    return True


def _reaches_no_gradient(names: Set[str], reads: dict, parents: dict, modules: Set[str]) -> bool:
    """Whether every read, anywhere in the scope, of ``names`` and of the names assigned from them uses a value
    only (:func:`_use`); a name never read counts as reaching one (a model may keep its output: unknown)."""
    traced, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in traced:
            continue
        traced.add(name)
        uses = reads.get(name, [])
        if not uses:
            return False
        for node in uses:
            if node is None:  # read in a nested function, lambda or comprehension
                return False
            kind = _use(node, parents, modules)
            if kind == "fatal":
                return False
            if kind != "value":
                todo.extend(kind)
    return True


class _Unrecorded(ast.NodeTransformer):
    """Wraps the statements of a scope with a step site whose outputs reach no gradient (see the comment above)."""

    def __init__(self, modules: Set[str], through: dict = None):
        self.modules = modules
        self.through = through or {}  # key -> StepSite of the sites whose backward() runs in a call

    def scope(self, body: List[ast.stmt], scope_node: ast.AST) -> None:
        own: List[ast.stmt] = []  # the scope's statements, compound ones' bodies included, nested scopes excluded
        parents: dict = {}
        reads: dict = {}
        has_site = False

        def walk(node, nested):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
                inner = nested or isinstance(child, _NESTED_SCOPES)
                if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
                    reads.setdefault(child.id, []).append(None if nested else child)
                if isinstance(child, ast.stmt) and not inner:
                    own.append(child)
                walk(child, inner)

        for stmt in body:
            parents[stmt] = scope_node
            if not isinstance(stmt, _NESTED_SCOPES):
                own.append(stmt)
            walk(stmt, isinstance(stmt, _NESTED_SCOPES))
        for stmt in own:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == STEP_FN:
                    has_site = True
        if not has_site:
            return
        declared = {name for stmt in own if isinstance(stmt, (ast.Global, ast.Nonlocal)) for name in stmt.names}
        for stmt in own:  # StepSite.value_only
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) \
                    and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == STEP_FN \
                    and isinstance(stmt.value.args[0], ast.Constant) and stmt.value.args[0].value in self.through:
                names = _target_names(stmt.targets)
                if names and not names & declared and _reaches_no_gradient(names, reads, parents, self.modules):
                    self.through[stmt.value.args[0].value].value_only = True
        wrap = set()
        for stmt in own:
            if not isinstance(stmt, ast.Assign) or _has_nested_scope_or_yield(stmt):
                continue
            names = _target_names(stmt.targets)
            calls = [n for n in ast.walk(stmt.value) if isinstance(n, ast.Call)]
            if not any(self._may_call_a_module(c) for c in calls):
                continue
            if not names or names & declared or not calls or any(isinstance(c.func, ast.Name) and c.func.id in _STEP_FUNCTIONS
                                             for c in calls):
                continue
            if _reaches_no_gradient(names, reads, parents, self.modules):
                wrap.add(id(stmt))
        if wrap:
            self._wrap(scope_node, wrap)

    def _may_call_a_module(self, call: ast.Call) -> bool:
        return _may_call_a_module(call, self.modules)

    def _wrap(self, node, wrap: set) -> None:
        for field in ("body", "orelse", "finalbody", "handlers"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            for i, stmt in enumerate(stmts):
                if id(stmt) in wrap:
                    item = ast.withitem(ast.Call(ast.Name(UNRECORDED_FN, ast.Load()), [], []), None)
                    stmts[i] = ast.copy_location(ast.With([item], [stmt]), stmt)
                elif not isinstance(stmt, _NESTED_SCOPES):
                    self._wrap(stmt, wrap)


@functools.lru_cache(maxsize=1)
def _tensor_attributes() -> frozenset:
    """PyTorch 2.13's public ``torch.Tensor`` attributes (``adapter/torch_tensor_attrs.txt``)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_tensor_attrs.txt")) as f:
        return frozenset(line.strip() for line in f if line.strip() and not line.startswith("#"))


def _script_modules(tree: ast.Module) -> Set[str]:
    """The names the script binds to modules: ``import x`` / ``import x.y`` / ``import x as z``, names imported from
    torch, torchvision, numpy or math, and the usual ``torch``, ``nn``, ``F``, ``np``, ``math``, imported or not."""
    # module names: `torch.cat(x)`, `F.mse_loss(x, y)` take x as an argument and keep nothing; a name imported from
    # elsewhere may be any object (`from utils import history`: `history.append(x)`)
    modules = {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree)
               if isinstance(node, ast.Import) for alias in node.names}
    modules |= {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and (node.module or "").split(".")[0] in ("torch", "torchvision", "numpy", "math")
                for alias in node.names}
    return modules | {"torch", "nn", "F", "np", "math"}


def _mark_unrecorded(tree: ast.Module, sites: List[StepSite] = ()) -> None:
    """Apply :class:`_Unrecorded` to the module's scope and to every function's."""
    marker = _Unrecorded(_script_modules(tree), {site.key: site for site in sites if site.through})
    scopes = [(tree.body, tree)] + [(n.body, n) for n in ast.walk(tree)
                                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for body, node in scopes:
        marker.scope(body, node)


# --- local closures inlined at their call site -------------------------------------------------------------------
# timm's train.py computes its loss in a closure of the loop body and hands it to another (`def _forward(): with
# amp_autocast(): result = task(input, target); _loss = result['loss'] ... return _loss, result`, then `loss, result
# = _forward(); _backward(loss)`): the forward is one call statement, so no region could be found. A call of a local
# closure whose result a later statement of the same block hands to backward() (or to a call that may run it:
# _Rewriter._through_call) is replaced by the closure's body, its parameters and locals renamed
# (`_loss` -> `_loss___forward`), its `return <value>` an assignment of the call's targets. The closure reads the
# enclosing function's names when it is called, as the inlined statements do. Only closures whose body a region may
# hold (simple statements, autocast-like blocks, branch ifs; a single `return` at the end; positional parameters,
# no decorator, no nested scope, no global/nonlocal), bound once in their function, defined in the call's block or
# an enclosing one before it.

def _inlinable(fn: ast.AST) -> bool:
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list:
        return False
    a = fn.args
    if a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or a.defaults:
        return False
    body = _without_docstring(fn.body)
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        return False
    for stmt in body[:-1]:
        if not (_is_window_stmt(stmt) or _is_branch_if(stmt) or _is_logging_if(stmt)):
            return False
    return not any(isinstance(n, (ast.Return, ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await)
                                  + _NESTED_SCOPES) for stmt in body[:-1] for n in ast.walk(stmt)) \
        and not _has_nested_scope_or_yield(body[-1])


def _without_docstring(body: List[ast.stmt]) -> List[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


class _Inliner:
    """Inline one function's local closures at their call sites (see the comment above)."""

    def __init__(self, scope: ast.AST):
        self.scope = scope
        own = []

        def walk(node):
            for child in ast.iter_child_nodes(node):
                own.append(child)
                if not isinstance(child, _NESTED_SCOPES):
                    walk(child)

        walk(scope)
        declared = {n for node in own if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names}
        bound = [n.id for n in own if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))]
        bound += [n.name for n in own if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        bound += [(a.asname or a.name).split(".")[0] for n in own if isinstance(n, (ast.Import, ast.ImportFrom))
                  for a in n.names]
        bound += [n.name for n in own if isinstance(n, ast.ExceptHandler) and n.name]
        self.closures = {n.name: n for n in own if isinstance(n, ast.FunctionDef) and bound.count(n.name) == 1
                         and n.name not in declared and _inlinable(n)}

    def run(self) -> None:
        if self.closures:
            self.scope.body = self._block(self.scope.body, {})

    def _block(self, stmts: List[ast.stmt], visible: dict) -> List[ast.stmt]:
        out, visible = [], dict(visible)
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, ast.FunctionDef) and self.closures.get(stmt.name) is stmt:
                visible[stmt.name] = stmt
                out.append(stmt)
                continue
            inlined = self._inline(stmt, visible, stmts[i + 1:])
            if inlined is not None:
                out.extend(inlined)
                continue
            if not isinstance(stmt, _NESTED_SCOPES):
                for field in ("body", "orelse", "finalbody"):
                    sub = getattr(stmt, field, None)
                    if isinstance(sub, list) and sub and all(isinstance(x, ast.stmt) for x in sub):
                        setattr(stmt, field, self._block(sub, visible))
                for handler in getattr(stmt, "handlers", None) or []:
                    handler.body = self._block(handler.body, visible)
            out.append(stmt)
        return out

    @staticmethod
    def _feeds_backward(stmt: ast.stmt, names: Set[str]) -> bool:
        """``stmt`` is ``<expr reading names>.backward(...)``, or a call statement with one of ``names`` as a
        positional argument (which may run its backward(): _Rewriter._through_call decides)."""
        call = _method_call(stmt, "backward")
        if call is not None:
            return bool(_names(call.func.value, ast.Load) & names)
        return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
            and any(isinstance(a, ast.Name) and a.id in names for a in stmt.value.args)

    def _inline(self, stmt: ast.stmt, visible: dict, rest: List[ast.stmt]) -> Optional[List[ast.stmt]]:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call)):
            return None
        call = stmt.value
        fn = visible.get(call.func.id) if isinstance(call.func, ast.Name) else None
        targets = _target_names(stmt.targets)
        if fn is None or not targets or call.keywords or len(call.args) != len(fn.args.args) \
                or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        derived = set(targets)  # the call's values, and what later statements compute from them
        for r in rest:
            if self._feeds_backward(r, derived):
                break
            if _reads(r) & derived:
                derived |= _writes(r)
        else:
            return None
        body = [copy.deepcopy(s) for s in _without_docstring(fn.body)]
        params = [a.arg for a in fn.args.args]
        local = set(params) | set().union(set(), *(_writes(s) for s in body))
        suffix = "__" + fn.name

        for node in ast.walk(ast.Module(body, [])):
            if isinstance(node, ast.Name) and node.id in local:
                node.id += suffix
        out = [ast.copy_location(ast.Assign([ast.Name(p + suffix, ast.Store())], copy.deepcopy(a)), stmt)
               for p, a in zip(params, call.args)]
        out += body[:-1]
        out.append(ast.copy_location(ast.Assign(copy.deepcopy(stmt.targets), body[-1].value), stmt))
        return out


def _inline_closures(tree: ast.Module) -> None:
    for scope in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        _Inliner(scope).run()


def rewrite(source: str, filename: str, first_key: int = 0) -> Tuple[ast.Module, List[StepSite]]:
    """Parse ``source`` and rewrite its step sites, numbered from ``first_key``. Returns (new AST, sites found).

    Raises:
        SyntaxError: ``source`` does not parse (as Python itself would, with the user's file and line).
    """
    tree = ast.parse(source, filename)
    _inline_closures(tree)
    rewriter = _Rewriter(filename, first_key)
    rewriter.functions = host_values.DrawingFunctions(tree, filename)
    rewriter.modules = _script_modules(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            rewriter.script_defs.setdefault(node.name, []).append(node)
    tree = rewriter.visit(tree)
    _mark_unrecorded(tree, rewriter.sites)
    ast.fix_missing_locations(tree)
    return tree, rewriter.sites
