"""The import layering of ``adapter/`` (issue 16), checked on the source (AST; nothing is imported).

Rules:

1. No import cycle among ``adapter/`` modules, counting imports inside functions: an in-function import no longer
   hides a cycle. A cycle is printed module by module with the line of each import.
2. ``adapter/`` imports nothing from ``patches/`` but the registry (:data:`REGISTRY`: ``import patches`` for
   ``install()``, ``registry()``, ``enabled()``; ``patches.listing``, the registry's generated ``--list-patches``),
   and that only in :data:`REGISTRY_USERS`. State the runtime shares with a patch
   lives in an ``adapter/`` module of its concept, which the patch imports (``adapter/amp_state.py`` for
   ``patches/amp.py``, ``adapter/bootstrap.py``'s ``VERBOSE_ENV`` for ``patches/log_noise.py``).
   ``patches -> adapter`` imports are allowed.
3. ``adapter/launcher.py`` is the command line: no ``adapter/`` module imports it (``run.py`` does; a patch may
   replace its ``run_script``).

In-function imports of ``adapter/`` modules are allowed where they defer a heavy import (MindSpore, MindTorch) or
one only a subcommand needs; each says so in a comment. :data:`CYCLE_ALLOWLIST` would list an import edge that is
left out of rule 1 for such a reason; it is empty, and an entry needs a reason.
"""
from __future__ import annotations

import ast
import os
from typing import Dict, List, Set, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("adapter", "patches")
REGISTRY = {"patches", "patches.listing"}
REGISTRY_USERS = {"adapter.bootstrap", "adapter.launcher", "adapter.migration_report", "adapter.report_risks"}
CYCLE_ALLOWLIST: Dict[Tuple[str, str], str] = {}  # (importer, imported) -> why this edge is not a cycle's fault

Edge = Tuple[str, str, int]  # importer, imported, line


def _modules() -> Dict[str, str]:
    """{dotted module name: file path} of every ``.py`` under adapter/ and patches/."""
    mods = {}
    for package in PACKAGES:
        for folder, _, files in os.walk(os.path.join(ROOT, package)):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    dotted = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                    mods[dotted[:-len(".__init__")] if dotted.endswith(".__init__") else dotted] = path
    return mods


def _imports(module: str, path: str, mods: Dict[str, str]) -> List[Edge]:
    """(module, imported module, line) for each import of a module under adapter/ or patches/, at any depth;
    ``from a import b`` counts ``a`` and, when it is a module, ``a.b``."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    edges = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        edges += [(module, name, node.lineno) for name in dict.fromkeys(names) if name in mods and name != module]
    return edges


def _graph() -> Tuple[Dict[str, str], List[Edge]]:
    mods = _modules()
    return mods, [edge for module, path in sorted(mods.items()) for edge in _imports(module, path, mods)]


def _cycles(nodes: Set[str], edges: List[Edge]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    succ: Dict[str, Set[str]] = {n: set() for n in nodes}
    for a, b, _ in edges:
        if a in nodes and b in nodes:
            succ[a].add(b)
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def _describe(component: List[str], edges: List[Edge], mods: Dict[str, str]) -> str:
    """One cycle of ``component`` as ``a -> b (a.py:12) -> ... -> a``, and every import inside the component."""
    members = set(component)
    inside = [(a, b, line) for a, b, line in edges if a in members and b in members]
    succ: Dict[str, List[Tuple[str, int]]] = {}
    for a, b, line in inside:
        succ.setdefault(a, []).append((b, line))
    start = component[0]  # a shortest path back to start, breadth first
    previous = {start: None}
    queue = [start]
    path = None
    while queue and path is None:
        v = queue.pop(0)
        for w, line in succ.get(v, ()):
            if w == start:
                path = [(v, w, line)]
                while previous[v] is not None:
                    u, at = previous[v]
                    path.insert(0, (u, v, at))
                    v = u
                break
            if w not in previous:
                previous[w] = (v, line)
                queue.append(w)
    where = lambda a, line: f"{os.path.relpath(mods[a], ROOT)}:{line}"  # noqa: E731
    text = " -> ".join([start] + [f"{b} ({where(a, line)})" for a, b, line in path or []])
    return text + "\n    imports inside it: " + "; ".join(f"{a} -> {b} ({where(a, line)})" for a, b, line in inside)


def test_no_import_cycle_in_adapter():
    mods, edges = _graph()
    adapter = {m for m in mods if m == "adapter" or m.startswith("adapter.")}
    counted = [e for e in edges if (e[0], e[1]) not in CYCLE_ALLOWLIST]
    cycles = _cycles(adapter, counted)
    assert not cycles, "import cycles in adapter/ (in-function imports count):\n  " + "\n  ".join(
        _describe(c, counted, mods) for c in cycles)


def test_cycle_allowlist_entries_are_still_imports_and_say_why():
    _, edges = _graph()
    present = {(a, b) for a, b, _ in edges}
    for edge, why in CYCLE_ALLOWLIST.items():
        assert edge in present, f"CYCLE_ALLOWLIST: {edge} is no longer an import; remove the entry"
        assert why.strip(), f"CYCLE_ALLOWLIST: {edge} needs a reason"


def test_adapter_imports_only_the_patch_registry():
    mods, edges = _graph()
    wrong = [f"{os.path.relpath(mods[a], ROOT)}:{line} imports {b}" for a, b, line in edges
             if a.startswith("adapter") and b.startswith("patches") and (b not in REGISTRY or a not in REGISTRY_USERS)]
    assert not wrong, ("adapter/ may import only the registry (" + ", ".join(sorted(REGISTRY)) + ", in " + ", ".join(
        sorted(REGISTRY_USERS)) + "); move shared state into an adapter/ module the patch imports:\n  "
        + "\n  ".join(wrong))


def test_no_adapter_module_imports_the_launcher():
    mods, edges = _graph()
    wrong = [f"{os.path.relpath(mods[a], ROOT)}:{line}" for a, b, line in edges
             if a.startswith("adapter") and b == "adapter.launcher"]
    assert not wrong, "adapter/launcher.py is the command line only; imported at: " + ", ".join(wrong)


def test_the_checks_see_a_cycle_and_name_its_lines():
    """The checker itself: a made-up cycle is found and printed with the import lines."""
    mods = {"adapter.a": os.path.join(ROOT, "adapter", "a.py"), "adapter.b": os.path.join(ROOT, "adapter", "b.py"),
            "adapter.c": os.path.join(ROOT, "adapter", "c.py")}
    edges = [("adapter.a", "adapter.b", 3), ("adapter.b", "adapter.a", 7), ("adapter.b", "adapter.c", 9)]
    cycles = _cycles(set(mods), edges)
    assert cycles == [["adapter.a", "adapter.b"]]
    text = _describe(cycles[0], edges, mods)
    assert text.startswith("adapter.a -> adapter.b (adapter/a.py:3) -> adapter.a (adapter/b.py:7)"), text
