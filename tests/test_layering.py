"""The floors of the tree (issue 16, issue 32 §3), checked on the source (AST; nothing is imported).

Three floors, each importing only from its own floor and those below it (:data:`FLOORS`):

1. ``adapter/``: the runtime (the backend fence, patching, tape, events, userframe, compiled_step, distributed, ...):
   what a patch may import;
2. ``patches/``: the patch layer (its registry, ``patches/__init__.py``, imports each patch module by name);
3. ``app/``: the application (``launcher.py``: ``run.py``'s command line; ``bootstrap.py`` / ``mp_main.py``: the
   set-up of a process that runs a user's script) and its tools (``app/tools/``: report, conformance, parity,
   convert/export, corpus).

``run.py``, ``bench/`` and ``scripts/`` stand above them all. What a lower floor needs from a higher one is handed
down (``adapter/hooks.py``: :data:`~adapter.hooks.HANDLERS`, ``VERBOSE_ENV``), never imported.

An edge is an ``import`` / ``from ... import`` at any depth (in-function imports count), an
``importlib.import_module(...)`` / ``__import__(...)`` whose argument is a string, or an f-string whose leading
constant part is a package prefix (``f"app.tools.{name}"``: an edge to every module under ``app.tools``;
``{__name__}`` is the module's own name), and any string constant that is exactly a module's dotted name (a module
named for ``python -m``, multiprocessing's ``init_main_from_name``, a later import).

Rules:

1. No import cycle in the tree (:data:`PACKAGES` and the top-level scripts), counting every kind of edge. A cycle is
   printed module by module with the line of each edge.
2. No edge runs from a lower floor to a higher one.
3. ``app/launcher.py`` is the command line: no module of :data:`PACKAGES` imports it (``run.py`` and the benchmarks
   do).

In-function imports are allowed where they defer a heavy import (MindSpore, MindTorch) or one only a subcommand
needs; each says so in a comment. :data:`CYCLE_ALLOWLIST` would list an edge that is left out of rule 1 for such a
reason; it is empty, and an entry needs a reason.
"""
from __future__ import annotations

import ast
import os
from typing import Dict, List, Optional, Set, Tuple

from support import ROOT

PACKAGES = ("adapter", "patches", "app")
FLOORS = {"adapter": 1, "patches": 2, "app": 3}  # top-level package -> floor; what is not here stands above
TOP_SCRIPTS = ("run.py",)
SCRIPT_FOLDERS = ("bench", "scripts")  # their files import the packages; nothing of the packages imports them
CYCLE_ALLOWLIST: Dict[Tuple[str, str], str] = {}  # (importer, imported) -> why this edge is not a cycle's fault

Edge = Tuple[str, str, int, str]  # importer, reached module, line, kind (import, importlib, named)


def _modules() -> Dict[str, str]:
    """{dotted module name: file path} of every ``.py`` under :data:`PACKAGES`, the top-level scripts (``run``) and
    the files of :data:`SCRIPT_FOLDERS` (``bench.x``; they are no package: names for the report only)."""
    mods = {}
    for package in PACKAGES + SCRIPT_FOLDERS:
        for folder, dirs, files in os.walk(os.path.join(ROOT, package)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    dotted = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                    mods[dotted[:-len(".__init__")] if dotted.endswith(".__init__") else dotted] = path
    for script in TOP_SCRIPTS:
        mods[script[:-3]] = os.path.join(ROOT, script)
    return mods


def _string_targets(node: ast.AST, module: str, loops: Dict[str, List[str]]) -> List[Tuple[str, bool]]:
    """[(the dotted name a string or f-string node spells, whether it is only a prefix)]: several where an f-string's
    value is the target of a loop over a module-level list of strings (``f"{__name__}.{name}" for name in
    _MODULES``), one prefix where a value is unknown, none for other nodes."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [(node.value, False)]
    if not isinstance(node, ast.JoinedStr):
        return []
    texts = [""]
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            texts = [t + part.value for t in texts]
        elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name) and part.value.id == "__name__":
            texts = [t + module for t in texts]
        elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name) and part.value.id in loops:
            texts = [t + value for t in texts for value in loops[part.value.id]]
        else:
            return [(t, True) for t in texts]
    return [(t, False) for t in texts]


def _loops(tree: ast.Module) -> Dict[str, List[str]]:
    """{loop target: the strings it runs over} for loops and comprehensions over a module-level list or tuple of
    string constants."""
    consts = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple)) \
                and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.value.elts):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    consts[target.id] = [e.value for e in node.value.elts]
    loops = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name) \
                and isinstance(node.iter, ast.Name) and node.iter.id in consts:
            loops[node.target.id] = consts[node.iter.id]
    return loops


def _imports(module: str, path: str, mods: Dict[str, str]) -> List[Edge]:
    """(module, reached module, line, kind) for each edge of ``module`` to a module of the tree; kind ``import``
    (``from a import b`` counts ``a`` and, when it is a module, ``a.b``), ``importlib`` (``import_module`` /
    ``__import__`` with a string or f-string) or ``named`` (a string constant that is a module's dotted name)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    loops = _loops(tree)
    edges = []
    for node in ast.walk(tree):
        names: List[str] = []
        kind = "import"
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Call) and node.args and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))):
            kind = "importlib"
            for text, prefix in _string_targets(node.args[0], module, loops):
                names += [m for m in mods if m.startswith(text) and text.endswith(".")] if prefix else [text]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value:
            kind = "named"  # a module named by a string (python -m, multiprocessing's main module, ...)
            names = [node.value]
        edges += [(module, name, node.lineno, kind) for name in dict.fromkeys(names)
                  if name in mods and name != module]
    return edges


def _graph() -> Tuple[Dict[str, str], List[Edge]]:
    mods = _modules()
    return mods, [edge for module, path in sorted(mods.items()) for edge in _imports(module, path, mods)]


def floor(module: str) -> Optional[int]:
    """The floor of ``module`` (:data:`FLOORS`), or None for what stands above them (run.py, bench/, scripts/)."""
    return FLOORS.get(module.split(".")[0])


def _cycles(nodes: Set[str], edges: List[Edge]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    succ: Dict[str, Set[str]] = {n: set() for n in nodes}
    for a, b, *_ in edges:
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
    inside = [(a, b, line) for a, b, line, *_ in edges if a in members and b in members]
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


def _in_process(edge: Edge) -> bool:
    """Whether ``edge`` counts for a cycle: an import or an importlib call (a module merely named by a string runs
    in another process: ``python -m``, a multiprocessing child), and not a submodule's import of its own package
    (``from . import Patch``: Python imports a package before its submodules anyway; the registry that loads the
    submodules by name, ``patches/__init__.py``, is that package)."""
    a, b, _, kind = edge
    return kind != "named" and not a.startswith(b + ".")


def test_no_import_cycle_in_the_tree():
    mods, edges = _graph()
    counted = [e for e in edges if (e[0], e[1]) not in CYCLE_ALLOWLIST and _in_process(e)]
    cycles = _cycles(set(mods), counted)
    assert not cycles, "import cycles (in-function and importlib edges count):\n  " + "\n  ".join(
        _describe(c, counted, mods) for c in cycles)


def test_cycle_allowlist_entries_are_still_imports_and_say_why():
    _, edges = _graph()
    present = {(a, b) for a, b, *_ in edges}
    for edge, why in CYCLE_ALLOWLIST.items():
        assert edge in present, f"CYCLE_ALLOWLIST: {edge} is no longer an import; remove the entry"
        assert why.strip(), f"CYCLE_ALLOWLIST: {edge} needs a reason"


def test_no_edge_runs_up_a_floor():
    """adapter/ imports neither patches/ nor app/; patches/ imports no app/ module; nothing of the three reaches
    run.py, bench/ or scripts/."""
    mods, edges = _graph()
    wrong = [f"{os.path.relpath(mods[a], ROOT)}:{line} reaches {b} ({kind})" for a, b, line, kind in edges
             if floor(a) is not None and (floor(b) is None or floor(b) > floor(a))]
    assert not wrong, ("an edge runs from a lower floor up (adapter/ 1 < patches/ 2 < app/ 3 < run.py, bench/, "
                       "scripts/); hand the value down instead (adapter/hooks.py HANDLERS):\n  " + "\n  ".join(wrong))


def test_no_package_module_imports_the_launcher():
    mods, edges = _graph()
    wrong = [f"{os.path.relpath(mods[a], ROOT)}:{line}" for a, b, line, _ in edges
             if floor(a) is not None and b == "app.launcher"]
    assert not wrong, "app/launcher.py is the command line only; imported at: " + ", ".join(wrong)


def test_the_checks_see_a_cycle_and_name_its_lines():
    """The checker itself: a made-up cycle is found and printed with the import lines."""
    mods = {"adapter.a": os.path.join(ROOT, "adapter", "a.py"), "adapter.b": os.path.join(ROOT, "adapter", "b.py"),
            "adapter.c": os.path.join(ROOT, "adapter", "c.py")}
    edges = [("adapter.a", "adapter.b", 3, "import"), ("adapter.b", "adapter.a", 7, "importlib"),
             ("adapter.b", "adapter.c", 9, "import")]
    cycles = _cycles(set(mods), edges)
    assert cycles == [["adapter.a", "adapter.b"]]
    text = _describe(cycles[0], edges, mods)
    assert text.startswith("adapter.a -> adapter.b (adapter/a.py:3) -> adapter.a (adapter/b.py:7)"), text


def test_the_checks_see_string_edges(tmp_path):
    """The checker itself: importlib calls with a string or an f-string prefix, and a module named by a string,
    are edges."""
    source = ("import importlib\n"
              "NAMES = ['corpus', 'export']\n"
              "def f(name):\n"
              "    importlib.import_module(f'app.tools.{name}')\n"
              "    [importlib.import_module(f'app.tools.{n}') for n in NAMES]\n"
              "    return {'init_main_from_name': 'app.mp_main'}\n")
    path = tmp_path / "x.py"
    path.write_text(source)
    mods = {"patches.x": str(path), "app.tools.corpus": "", "app.tools.export": "", "app.tools.convert": "",
            "app.mp_main": ""}
    edges = sorted(_imports("patches.x", str(path), mods), key=lambda e: (e[2], e[1]))
    assert edges == [("patches.x", "app.tools.convert", 4, "importlib"),
                     ("patches.x", "app.tools.corpus", 4, "importlib"),
                     ("patches.x", "app.tools.export", 4, "importlib"),
                     ("patches.x", "app.tools.corpus", 5, "importlib"),
                     ("patches.x", "app.tools.export", 5, "importlib"),
                     ("patches.x", "app.mp_main", 6, "named")], edges
