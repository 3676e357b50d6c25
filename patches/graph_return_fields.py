"""Compiled code reads the fields of PyTorch's named tuples: ``x.max(1).indices``, ``r.values``, ``h.eigenvalues``.

In PyNative, ``max``/``min``/``sort``/``topk``/``median``/... return ``torch.return_types`` named tuples
(MindTorch's own, and ``patches/return_types.py``'s). Inside a function MindSpore compiles in GRAPH_MODE, the same
call returns a plain tuple (MindSpore's STRICT graph syntax cannot build a namedtuple from tensors: "the inputs should
be constant"), and reading a field of it did not compile: ``AttributeError: In JIT strict mode, cannot get attributes
indices or the Tuple[Tensor[Float32],Tensor[Int64]] object``, so ``run.py`` ran that step or forward eagerly.

Here MindSpore's parser (``mindspore/_extends/parse/parser.py``, ``Parser.parse``, which hands the function's AST to
the graph compiler) gets each such attribute read rewritten to ``__adapter_return_field__(obj, "indices", table)``
(:func:`return_field`): on a tuple it is ``obj[table[len(obj)]]``, the field's position in the PyTorch 2.13
return type of that length (``patches/return_types.py``'s :data:`~patches.return_types.FIELDS`); on anything else it
is ``getattr(obj, name)``, what the read was. Both are resolved when the graph is compiled (``isinstance`` and
``len`` of a tuple are constants there), so the graph computes what it computed before plus the index.

Rewritten: reads (not assignments, not method calls ``obj.values()``) of a field name whose position is the same in
every return type of a given length (``values``, ``indices``, ``eigenvalues``, ``L``...); ``U`` of a 3-tuple
(``svd``: 0, ``linalg.lu``: 2) is left alone, so it still does not compile (a fallback, never a wrong field). The
receiver must be a computed value (a call, subscript) or a local variable of the function; ``self.x`` and
module-level names (``torch.max``, ``np.indices``) are not touched. The helper name is added to the parsed function's
module globals, as MindSpore itself adds ``__ms_tensor_func__`` there.

Replaces: ``mindspore._extends.parse.parser.Parser.parse`` (wrapped: same return value, AST rewritten once per cached
source).
"""
from __future__ import annotations

import ast

from . import Patch, get_replaced, patch_attr

HELPER = "__adapter_return_field__"
MAX_LEN = 5


def field_tables():
    """{field name: tuple t} with ``t[n]`` the field's index in every return type with ``n`` fields, -1 where no type
    of that length has it or two types disagree (``U`` of a 3-tuple)."""
    from .return_types import FIELDS
    seen = {}
    for fields in FIELDS.values():
        for i, name in enumerate(fields):
            seen.setdefault(name, {}).setdefault(len(fields), set()).add(i)
    out = {}
    for name, by_len in seen.items():
        table = tuple(next(iter(by_len[n])) if len(by_len.get(n, ())) == 1 else -1 for n in range(MAX_LEN))
        if any(i >= 0 for i in table):
            out[name] = table
    return out


def return_field(obj, name, table):
    """Graph-mode form of ``obj.<name>`` (module docstring): the tuple item PyTorch's named tuple calls ``name``, or
    the attribute."""
    if isinstance(obj, tuple):
        return obj[table[len(obj)]]
    return getattr(obj, name)


def _local_names(tree) -> set:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
    names.discard("self")
    return names


class _Rewrite(ast.NodeTransformer):
    def __init__(self, tables, local):
        self.tables, self.local = tables, local
        self.count = 0

    def visit_Call(self, node):
        if isinstance(node.func, ast.Attribute):  # obj.values(): a method call stays one
            node.func.value = self.visit(node.func.value)
        else:
            node.func = self.visit(node.func)
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or node.attr not in self.tables:
            return node
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id not in self.local:
            return node
        new = ast.Call(func=ast.Name(id=HELPER, ctx=ast.Load()),
                       args=[node.value, ast.Constant(value=node.attr),
                             ast.Tuple(elts=[ast.Constant(value=i) for i in self.tables[node.attr]], ctx=ast.Load())],
                       keywords=[])
        for sub in ast.walk(new):
            if sub is not node.value and not hasattr(sub, "first_token"):
                ast.copy_location(sub, node)
                for tok in ("first_token", "last_token"):
                    if hasattr(node, tok):
                        setattr(sub, tok, getattr(node, tok))
        self.count += 1
        return new


def rewrite(tree, tables=None) -> int:
    """Rewrite ``tree`` (a parsed function) in place; returns how many reads were rewritten."""
    tables = field_tables() if tables is None else tables
    if getattr(tree, "_adapter_return_fields", None) is not None:
        return tree._adapter_return_fields
    fixer = _Rewrite(tables, _local_names(tree))
    fixer.visit(tree)
    ast.fix_missing_locations(tree)
    tree._adapter_return_fields = fixer.count
    return fixer.count


_original_parse = None  # the Parser.parse this patch replaced, set by apply()
_tables = None  # field_tables(), set by apply()


def parse(self):
    """``Parser.parse`` with the named-tuple field reads of the parsed function rewritten (:func:`rewrite`)."""
    result = _original_parse(self)
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], ast.AST):
        if rewrite(result[1], _tables):
            self.global_namespace.dicts[0][HELPER] = return_field
    return result


def apply() -> None:
    global _original_parse, _tables
    from adapter import backend
    Parser = backend.internal("Parser")
    _original_parse = get_replaced(Parser, "parse", NAME)
    _tables = field_tables()
    parse.__wrapped__ = _original_parse
    patch_attr(Parser, "parse", parse)


NAME = "graph_return_fields"
PATCH = Patch(NAME, "compiled code reads named-tuple fields (x.max(1).indices, r.values) of the "
                    "plain tuples graph mode returns",
              "post-import", apply, replaces=("mindspore._extends.parse.parser.Parser.parse",))
