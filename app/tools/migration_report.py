"""``run.py --report``: what a PyTorch script needs from this adapter, found by reading its code (AST, nothing runs).

The automated form of a migration's "API / feature analysis" checklist. :func:`build_report` parses the script and
the modules it imports from its own folder (``import x``, ``from x import y``, ``from .x import y`` in packages
there; recursively, each file once) and lists, each with ``file:line``:

* **missing APIs**: ``torch.*`` / ``torchvision.*`` names the code uses that MindTorch does not provide. Import
  aliases are resolved (``import torch.nn.functional as F``: ``F.gelu`` is ``torch.nn.functional.gelu``) and each
  qualified name is looked up in MindTorch by import + getattr (``torch`` -> ``mindtorch.torch``). Tensor methods
  cannot be resolved statically: ``x.m`` is reported only when ``m`` is a public ``torch.Tensor`` attribute of
  PyTorch 2.13 (``adapter/torch_tensor_attrs.txt``), MindTorch's ``Tensor`` lacks it, and ``m`` is not an
  attribute of common Python/numpy types or of the user's own code (``self.m = ...``, ``def m``).
* **calls the adapter handles**: ``loss.backward()``, ``optimizer.step()``/``zero_grad()``, ``clip_grad_norm_``,
  lr schedulers, ``.cuda()``/``.to(...)``, ``torch.save``/``load``, AMP (``GradScaler``/``autocast``), DDP..., with
  the patch that handles each: the registered patch whose declared ``replaces`` covers the concept's torch names
  (:func:`handling_patch`, when the report is built, so a concept that no patch declares is said to be so, and the
  table cannot go stale) and, for ``backward()``, whether ``adapter/step_rewrite.py`` makes it a compiled step
  site.
* **graph mode**: inside ``forward`` methods and inside the step regions found by ``adapter/step_rewrite.py``:
  ``.numpy()``/``.tolist()``/``.asnumpy()``, in-place tensor methods (``x.add_(...)``), ``.item()``, ``if``/``while``
  on a tensor expression, ``print``. Each says what happens on this MindSpore build (checked with
  ``run.py --explain`` on small models, 2026-11-21): the first two make the step (or the ``no_grad`` forward) fall
  back to PyNative; the others compile. In step regions also what the compiled step rules out before compiling
  (``adapter/compiled_step.py``): a host random draw (``np.random.*``, ``random.*``, ``torch.randn(...,
  generator=g)``), a ``torch.distributions`` call, a ``with`` block that is neither autocast nor a no-op. A finding
  that predicts a fallback carries the fallback's kind (``Finding.kind``, an ``adapter/diagnostics.py`` id:
  ``host-sync``, ``inplace-tensor-method``, ``host-random-draw``, ``torch-distributions``,
  ``unsupported-context-manager``), the same kind the runtime records and ``--explain-json`` reports when it happens
  (``tests/test_diagnostics.py``), and its note starts with that kind's title and ends with ``[fallback kind: id]``.

MindTorch must already be importable as it is under ``run.py`` (``app.bootstrap.setup_mindspore`` first): the
existence checks import MindTorch's modules, never the user's.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import os
import re
from typing import Dict, Iterable, List, Optional, Set, Tuple

import patches  # the registry: which patches are in effect
from adapter import diagnostics, step_rewrite, torch_names
from app.tools import report_risks
from app.tools.conformance import known
from app.tools.conformance.signature import signature
from adapter.graph_semantics import _HOST_NOT_DRAWS  # the host-draw guard's own list (stdlib-only import)
from adapter.torch_names import (MINDTORCH_ROOTS as _MINDTORCH_ROOTS, aliases as _aliases, chain as _chain,
                                 kind_of_class as _kind_of_class, missing_prefix, qualify as _qualify,
                                 receiver_kind as _receiver_kind)
from adapter.userframe import display_path

_RUNTIME = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "adapter")


@dataclasses.dataclass(frozen=True)
class Finding:
    """One line of the report.

    Attributes:
        path: absolute path of the file. line: 1-based line number.
        name: what was found (``torch.compile``, ``loss.backward()``, ``.item()``...).
        note: what it means under this adapter.
        kind: for a graph-mode finding that predicts a fallback to PyNative, its ``adapter.diagnostics`` kind id;
            else None.
    """
    path: str
    line: int
    name: str
    note: str
    kind: Optional[str] = None

    def format(self) -> str:
        """``path:line  name  note``, the path shown as ``adapter.userframe.display_path`` shows it."""
        return f"{display_path(self.path)}:{self.line}  {self.name}  {self.note}"


@dataclasses.dataclass
class Report:
    """The result of :func:`build_report`.

    Attributes:
        script: absolute path of the script.
        files: the files scanned (absolute), the script first.
        missing_apis: torch/torchvision names (and Tensor methods) MindTorch does not provide.
        handled_calls: calls a patch or an adapter component handles (or, for AMP/DDP..., that no patch handles).
        graph_mode: constructs in ``forward`` methods and step regions that matter to graph-mode compilation.
        risks: constructs that made real scripts fail or go wrong here (``app/tools/report_risks.py``), each with
            whether and by what it is handled; ``risk_keys`` holds each one's kind (``report_risks.RISKS``).
        unparsed: files that could not be read or parsed (note: the error).
        known_differences: calls of APIs that differ from PyTorch here (the conformance harness's known-differences
            table, ``app/tools/conformance/known.py``), each with the reason.
    """
    script: str
    files: List[str]
    missing_apis: List[Finding] = dataclasses.field(default_factory=list)
    handled_calls: List[Finding] = dataclasses.field(default_factory=list)
    graph_mode: List[Finding] = dataclasses.field(default_factory=list)
    risks: List[Finding] = dataclasses.field(default_factory=list)
    risk_keys: List[str] = dataclasses.field(default_factory=list)
    unparsed: List[Finding] = dataclasses.field(default_factory=list)
    known_differences: List[Finding] = dataclasses.field(default_factory=list)


# --------------------------------------------------------------------------------------------------------------
# Which files: the script and the modules it imports from its own folder


def _module_files(base: str, dotted: str) -> List[str]:
    """Files that ``import <dotted>`` executes when ``base`` is the import root: each package's ``__init__.py``
    on the way and the module itself. Empty when the first component is not under ``base``."""
    files, folder = [], base
    for part in dotted.split("."):
        package = os.path.join(folder, part, "__init__.py")
        module = os.path.join(folder, part + ".py")
        if os.path.isfile(package):
            files.append(package)
            folder = os.path.join(folder, part)
        elif os.path.isfile(module):
            files.append(module)
            break
        elif os.path.isdir(os.path.join(folder, part)):  # namespace package
            folder = os.path.join(folder, part)
        else:
            break
    return files


def _imported_files(tree: ast.AST, path: str, root: str) -> List[str]:
    """Files under ``root`` that the imports in ``tree`` (the file at ``path``) execute."""
    found: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found += _module_files(root, alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = root
            if node.level:  # relative: from the importing file's package, which must lie in the folder
                base = os.path.dirname(path)
                for _ in range(node.level - 1):
                    base = os.path.dirname(base)
                if not (base + os.sep).startswith(root + os.sep):
                    continue
            if node.module:
                mod_files = _module_files(base, node.module)
                found += mod_files
                if not mod_files:
                    continue
                package = os.path.join(base, *node.module.split("."))
            else:
                package = base
            for alias in node.names:  # `from pkg import submodule`
                found += _module_files(package, alias.name) if os.path.isdir(package) else []
    return found


# --------------------------------------------------------------------------------------------------------------
# MindTorch and PyTorch attribute names (import aliases, attribute chains, existence in MindTorch:
# adapter/torch_names.py)


def _mindtorch_version() -> str:
    try:
        import mindtorch
        return f"MindTorch {mindtorch.__version__}"
    except Exception:
        return "MindTorch"


def _torch_tensor_attrs() -> Set[str]:
    with open(os.path.join(_RUNTIME, "torch_tensor_attrs.txt")) as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


def _common_attrs() -> Set[str]:
    """Attributes of everyday non-tensor objects: a call ``d.values()`` says nothing about tensors."""
    names: Set[str] = set()
    for t in (dict, list, str, set, tuple, bytes, int, float, object):
        names.update(dir(t))
    try:
        import numpy
        names.update(dir(numpy.ndarray))
    except ImportError:
        pass
    # generic words some Tensor methods share with queues, files, loggers, modules...
    names.update({"name", "mode", "layout", "values", "indices", "index", "put", "solve", "record_stream"})
    return names


# --------------------------------------------------------------------------------------------------------------
# Calls the adapter handles: concept -> the torch names that make it, and what runs when no registered patch declares
# one of them in its ``replaces`` (patches/__init__.py ``Patch``): the patch named in a note is found from the
# declarations (:func:`handling_patch`), so a patch added, renamed or removed changes the report without a change here.

_CONCEPTS = {
    "backward": (("torch.Tensor.backward",), "MindTorch's own Tensor.backward runs (it does not fill p.grad)"),
    "optimizer": (("torch.optim.SGD.step", "torch.optim.Adam.step"), "MindTorch's own optimizer runs unpatched"),
    "lr_scheduler": (("torch.optim.lr_scheduler.StepLR", "torch.optim.lr_scheduler.LRScheduler"),
                     "MindTorch's own lr scheduler runs unpatched"),
    "clip_grad": (("torch.nn.utils.clip_grad_norm_",), "MindTorch's own clip_grad_norm_ runs unpatched"),
    "device": (("torch.cuda.is_available", "torch.Tensor.device"), "MindTorch's own device handling runs unpatched"),
    "max_pool": (("torch.nn.functional.max_pool2d",), "MindTorch's own max_pool2d runs unpatched"),
    "vision_data": (("torchvision.transforms.functional.to_tensor", "torchvision.datasets.MNIST.__getitem__"),
                    "MindTorch's own transforms/datasets run unpatched"),
    "module_call": (("torch.nn.Module.__call__",), "MindTorch's own Module.__call__ runs unpatched"),
    "amp": (("torch.amp.GradScaler", "torch.cuda.amp.GradScaler", "torch.autocast", "torch.amp.autocast",
             "torch.cuda.amp.autocast"), "MindTorch's own GradScaler/autocast run unpatched"),
    "distributed": (("torch.distributed", "torch.nn.parallel.DistributedDataParallel"),
                    "MindTorch's own torch.distributed/DDP/DistributedSampler run unpatched"),
    "ddp": (("torch.nn.parallel.DistributedDataParallel",), "MindTorch's own DistributedDataParallel runs unpatched"),
    "distributed_sampler": (("torch.utils.data.distributed.DistributedSampler", "torch.utils.data.DistributedSampler"),
                            "MindTorch's own DistributedSampler runs unpatched"),
    "spawn": (("torch.multiprocessing.spawn",), "MindTorch's torch.multiprocessing.spawn runs unpatched"),
    "serialization": (("torch.save", "torch.load"), "MindTorch's own torch.save/torch.load run unpatched"),
}

_AMP = {"torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.GradScaler", "torch.cuda.amp.autocast",
        "torch.amp.autocast", "torch.autocast", "torch.cpu.amp.autocast"}
_DISTRIBUTED = {"torch.nn.parallel.DistributedDataParallel": "ddp",
                "torch.utils.data.distributed.DistributedSampler": "distributed_sampler",
                "torch.utils.data.DistributedSampler": "distributed_sampler",
                "torch.multiprocessing.spawn": "spawn"}
_DEVICE = {"torch.device", "torch.cuda.is_available", "torch.cuda.device_count", "torch.cuda.set_device",
           "torch.cuda.synchronize"}
_MAX_POOL = {"torch.nn.MaxPool2d", "torch.nn.functional.max_pool2d"}
_VISION_DATA = {"torchvision.transforms.ToTensor", "torchvision.transforms.Normalize",
                "torchvision.transforms.functional.to_tensor", "torchvision.transforms.functional.normalize",
                "torchvision.datasets.MNIST", "torchvision.datasets.FashionMNIST", "torchvision.datasets.KMNIST",
                "torchvision.datasets.EMNIST", "torchvision.datasets.QMNIST"}
_CLIP = {"clip_grad_norm_", "clip_grad_value_", "clip_grad_norm"}
_DTYPES = {"float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8", "int16", "int32",
           "int64", "long", "uint8", "bool", "complex64", "complex128"}


_canonical_cache: Dict[str, Optional[Tuple[int, str]]] = {}


def _resolve_owner(path: str):
    """``"torch.Tensor.backward"`` -> ``(mindtorch.torch.Tensor, "backward")``: attributes from the root module
    (``torch``/``torchvision`` are MindTorch's), importing a submodule only where no attribute has the name (no
    import attempt of ``mindtorch.torch.Tensor``, which MindTorch's import hook reports on stdout); the paths of
    ``Patch.replaces``. Raises ImportError/AttributeError."""
    parts = path.split(".")
    names = _MINDTORCH_ROOTS.get(parts[0], parts[0]).split(".") + parts[1:]
    root = 2 if names[0] == "mindtorch" else 1
    owner = importlib.import_module(".".join(names[:root]))
    for i in range(root, len(names) - 1):
        try:
            owner = getattr(owner, names[i])
        except AttributeError:
            owner = importlib.import_module(".".join(names[:i + 1]))
    return owner, names[-1]


def _canonical(path: str) -> Optional[Tuple[int, str]]:
    """``(id(owner), name)`` of the live attribute a dotted path names, the owner being the class of the path's MRO
    that defines it (``torch.optim.SGD.step`` and ``mindtorch.torch.optim.optimizer._Optimizer.step`` are one); None
    when it does not resolve. Cached per process."""
    if path not in _canonical_cache:
        try:
            owner, name = _resolve_owner(path)
        except Exception:  # a name this MindTorch lacks, or a module that fails to import: no match
            _canonical_cache[path] = None
            return None
        if isinstance(owner, type):
            owner = next((c for c in owner.__mro__ if name in vars(c)), owner)
        _canonical_cache[path] = (id(owner), name)
    return _canonical_cache[path]


def _covers(target: str, name: str) -> bool:
    """Whether a patch that declares ``target`` (``Patch.replaces``) replaces ``name`` or a part of it: the same
    name, a module or class holding it (``torch.amp.*``, ``torch.cuda.amp.GradScaler`` for its ``scale``), a
    member of it (``torch.nn.parallel.DistributedDataParallel.forward`` for the class), or the same live attribute
    under another path (:func:`_canonical`)."""
    if target.endswith(".*"):
        return name.startswith(target[:-1]) or name == target[:-2]
    if target == name or name.startswith(target + ".") or target.startswith(name + "."):
        return True
    canonical = _canonical(name)
    return canonical is not None and canonical == _canonical(target)


def handling_patch(concept: str, patches_by_name: Dict[str, object]):
    """The first patch of ``patches_by_name`` (registry order) whose declared ``replaces`` covers one of the
    concept's torch names (:data:`_CONCEPTS`), or None."""
    names, _ = _CONCEPTS[concept]
    for patch in patches_by_name.values():
        if any(_covers(target, name) for target in getattr(patch, "replaces", ()) for name in names):
            return patch
    # Transitional (issue 16): a patch not yet converted to patch_attr declares nothing; until every patch does
    # (tests/test_patch_contract.py _NOT_YET_CONVERTED), one named like the concept is taken to handle it.
    patch = patches_by_name.get(concept)
    if patch is not None and not getattr(patch, "replaces", ()) and not getattr(patch, "effects", ()):
        return patch
    return None


def _concept_note(concept: str, patches_by_name: Dict[str, object]) -> str:
    names, absent = _CONCEPTS[concept]
    patch = handling_patch(concept, patches_by_name)
    if patch is not None:
        return f"patch `{patch.name}`: {patch.summary}"
    return f"{absent} (no patch in patches/ replaces {names[0]}; see run.py --list-patches)"


# --------------------------------------------------------------------------------------------------------------
# Graph mode

# Measured with run.py --explain (2026-11-21, this MindSpore build, jit_syntax_level STRICT): see module docstring.
# The notes of findings that predict a fallback start with its kind's title (adapter/diagnostics.py) and end with
# the kind's id, as --explain names it.
_FALLBACK = {"forward": "the training steps and no_grad forwards that run this forward() fall back to PyNative "
                        "(eager), not compiled",
             "step": "this step falls back to PyNative (eager), not compiled"}
_KIND_VALUE = "host-sync"
_KIND_INPLACE = "inplace-tensor-method"
_KIND_RANDOM = "host-random-draw"
_KIND_DISTRIBUTIONS = "torch-distributions"
_KIND_CONTEXT = "unsupported-context-manager"


def _kind_note(kind: str, why: str) -> str:
    """A predicted fallback's note: the kind's title, ``{fallback}`` (filled per scope), why, and the kind's id."""
    return f"{diagnostics.get(kind).title}: {{fallback}} ({why}) [fallback kind: {kind}]"


_NOTE_VALUE = _kind_note(_KIND_VALUE, "graph mode STRICT rejects it")
_NOTE_INPLACE = _kind_note(_KIND_INPLACE, "graph mode rejects in-place Tensor methods; the out-of-place form, "
                                          "e.g. x = x.add(y), compiles")
_NOTE_RANDOM = _kind_note(_KIND_RANDOM, "a graph would draw it once, at compile time")
_NOTE_DISTRIBUTIONS = _kind_note(_KIND_DISTRIBUTIONS, "graph mode cannot construct it")
_NOTE_CONTEXT = _kind_note(_KIND_CONTEXT, "only autocast and no-op contexts compile")
#: contexts a step region may open (adapter/step_graph.py, StepBuilder.regions): autocast, and no-ops
_STEP_CONTEXTS = {"torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast",
                  "contextlib.nullcontext", "contextlib.suppress"}
#: torch functions that draw on the host with generator= (adapter/graph_semantics.py, _GRAPH_RANDOM)
_GENERATOR_DRAWS = {"rand", "randn", "rand_like", "randn_like", "randperm"}
_NOTE_ITEM = "compiles: graph mode reads the scalar inside the graph, every step (not a blocker here)"
_NOTE_BRANCH = "compiles: graph control flow, the condition is evaluated every step (not a blocker here)"
_NOTE_PRINT = "compiles: MindSpore's Print op prints every step from the graph, in its own format, not PyTorch's"
_VALUE_METHODS = {"numpy", "tolist", "asnumpy"}
_TENSOR_CONDITION = {"sum", "max", "min", "any", "all", "mean", "item", "norm", "std", "var", "prod", "argmax",
                     "argmin", "allclose", "equal", "isnan", "isinf", "isfinite", "abs"}


def _host_random_aliases(tree: ast.AST) -> Dict[str, str]:
    """Local name -> ``numpy``, ``numpy.random``, ``random`` or one of their functions (``from random import
    uniform``: ``random.uniform``), from the file's imports (scopes merged); also ``contextlib`` and its names."""
    names: Dict[str, str] = {}
    roots = ("numpy", "random", "contextlib")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in roots:
                    names[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                        alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in roots:
            for alias in node.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _forward_bodies(tree: ast.AST) -> List[ast.FunctionDef]:
    return [item for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for item in node.body
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "forward"]


class _FileScan:
    """Everything :func:`build_report` finds in one parsed file."""

    def __init__(self, path: str, tree: ast.Module, source: str, ctx: "_Context"):
        self.path, self.tree, self.source, self.ctx = path, tree, source, ctx
        self.aliases, self.other_imports = _aliases(tree)
        self.host_aliases = _host_random_aliases(tree)
        self.missing: List[Finding] = []
        self.handled: List[Finding] = []
        self.graph: List[Finding] = []
        self._sites = self._step_sites()

    def _step_sites(self):
        try:
            _, sites = step_rewrite.rewrite(self.source, self.path)
        except Exception:  # the report must not fail where the rewrite cannot: no sites then
            return []
        return sites

    # missing APIs --------------------------------------------------------------------------------------------
    def scan_missing(self) -> None:
        version = self.ctx.version
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in _MINDTORCH_ROOTS:
                        self._check(alias.name, node.lineno, version)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                    and node.module.split(".")[0] in _MINDTORCH_ROOTS:
                if self._check(node.module, node.lineno, version):
                    continue
                for alias in node.names:
                    if alias.name != "*":
                        self._check(f"{node.module}.{alias.name}", node.lineno, version)
        inner = {id(n.value) for n in ast.walk(self.tree) if isinstance(n, ast.Attribute)}
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Attribute) or id(node) in inner:
                continue
            qual = _qualify(node, self.aliases)
            if qual is not None:
                if isinstance(node.ctx, ast.Store):  # setting an attribute: only the object set on must exist
                    qual = qual.rsplit(".", 1)[0]
                if not isinstance(node.ctx, ast.Del):
                    self._check(qual, node.lineno, version)
            elif self._tensor_method_missing(node):
                recv = ast.unparse(node.value)
                recv = recv if len(recv) <= 24 else recv[:21] + "..."
                self.missing.append(Finding(
                    self.path, node.lineno, f"Tensor.{node.attr}",
                    f"a PyTorch Tensor method {version}'s Tensor does not have (if `{recv}` is a tensor)"))

    def _check(self, qual: str, line: int, version: str) -> bool:
        missing = missing_prefix(qual)
        if missing is None:
            return False
        note = f"not provided by {version}" if missing == qual else f"not provided by {version} (no {missing})"
        self.missing.append(Finding(self.path, line, qual, note))
        return True

    def _tensor_method_missing(self, node: ast.Attribute) -> bool:
        name = node.attr
        if name not in self.ctx.torch_tensor_attrs or name in self.ctx.mindtorch_tensor_attrs \
                or name in self.ctx.common_attrs or name in self.ctx.user_attrs:
            return False
        base = _chain(node.value)
        return not (base and (base[0] in self.other_imports or base[0] in self.aliases))

    # calls the adapter handles --------------------------------------------------------------------------------
    def scan_handled(self) -> None:
        kinds = self._assigned_kinds()
        for site in self._sites:
            if site.optimizer_line is not None:
                for node in ast.walk(self.tree):
                    if isinstance(node, ast.Call) and getattr(node, "lineno", None) == site.optimizer_line \
                            and isinstance(node.func, ast.Attribute) and node.func.attr == "step":
                        kinds.setdefault(ast.unparse(node.func.value), "optimizer")
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                self._handled_call(node, kinds)
            elif isinstance(node, ast.Attribute) and node.attr == "param_groups":
                self._add_handled(node, _short(node), "optimizer", "")

    def _assigned_kinds(self) -> Dict[str, str]:
        kinds: Dict[str, str] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                qual = _qualify(node.value.func, self.aliases)
                kind = _kind_of_class(qual) if qual else None
                if kind:
                    for target in node.targets:
                        if isinstance(target, (ast.Name, ast.Attribute)):
                            kinds[ast.unparse(target)] = kind
        return kinds

    def _add_handled(self, node: ast.AST, name: str, concept: str, extra: str) -> None:
        note = _concept_note(concept, self.ctx.patches)
        self.handled.append(Finding(self.path, node.lineno, name, note + (f"; {extra}" if extra else "")))

    def _handled_call(self, call: ast.Call, kinds: Dict[str, str]) -> None:
        func = call.func
        qual = _qualify(func, self.aliases)
        if qual is not None and missing_prefix(qual) is not None:
            pass  # listed under missing APIs: nothing handles it
        elif qual is not None:
            last = qual.split(".")[-1]
            short = qual
            if qual in _AMP:
                self._add_handled(call, short, "amp", "")
            elif qual in _DISTRIBUTED or qual.startswith("torch.distributed."):
                self._add_handled(call, short, _DISTRIBUTED.get(qual, "distributed"), "")
            elif qual in ("torch.save", "torch.load"):
                self._add_handled(call, short, "serialization", "")
            elif qual in _DEVICE:
                self._add_handled(call, short, "device", "")
            elif qual in _MAX_POOL:
                self._add_handled(call, short, "max_pool", "")
            elif qual in _VISION_DATA:
                self._add_handled(call, short, "vision_data", "")
            elif last in _CLIP:
                self._add_handled(call, short, "clip_grad", self._clip_extra(call.lineno))
            elif qual in ("torch.no_grad", "torch.inference_mode"):
                self._add_handled(call, short, "module_call", "the outermost module call under it runs compiled "
                                                             "(adapter/compiled_forward.py)")
            else:
                kind = _kind_of_class(qual)
                if kind == "scheduler":
                    self._add_handled(call, short, "lr_scheduler", "")
                elif kind == "optimizer":  # a class a patch defines (LBFGS) is named by that patch
                    if not self._add_patched(call, qual, defined=True):
                        self._add_handled(call, short, "optimizer", "")
                else:
                    self._add_patched(call, qual)
        elif isinstance(func, ast.Attribute):
            method, recv = func.attr, func.value
            text = f"{_short(recv)}.{method}()"
            if method == "backward":
                self._add_handled(call, text, "backward", self._backward_extra(call))
            elif method in _CLIP:
                self._add_handled(call, text, "clip_grad", self._clip_extra(call.lineno))
            elif method in ("step", "zero_grad", "get_last_lr", "scale", "update", "unscale_"):
                kind = _receiver_kind(recv, kinds)
                if kind == "scaler":
                    self._add_handled(call, text, "amp", "")
                elif kind == "scheduler" and method in ("step", "get_last_lr"):
                    self._add_handled(call, text, "lr_scheduler", "")
                elif kind == "optimizer" and method == "step":
                    self._add_handled(call, text, "optimizer", self._step_extra(call.lineno))
                elif kind == "optimizer" and method == "zero_grad":
                    note = "MindTorch's own zero_grad" + (" (clears the p.grad that patch `backward` fills)"
                                                          if "backward" in self.ctx.patches else "")
                    hoisted = self._zero_grad_extra(call.lineno)
                    self.handled.append(Finding(self.path, call.lineno, text,
                                                note + (f"; {hoisted}" if hoisted else "")))
            elif method == "cuda" or method == "to" and self._device_to(call):
                self._add_handled(call, text, "device", "")
        elif isinstance(func, ast.Name) and func.id in _CLIP:
            self._add_handled(call, f"{func.id}()", "clip_grad", self._clip_extra(call.lineno))
        for kw in call.keywords:
            if kw.arg == "pin_memory":
                self.handled.append(Finding(self.path, kw.value.lineno, f"pin_memory={_short(kw.value)}",
                                            _concept_note("device", self.ctx.patches)))

    def _add_patched(self, call: ast.Call, qual: str, defined: bool = False) -> bool:
        """A torch/torchvision callable that a patch defined or replaced (``report_risks.provider``: found in the
        live modules, so a patch added later is named without a change here). True when one did."""
        where = report_risks.provider(qual, defined)
        if where is None:
            return False
        name = os.path.splitext(os.path.basename(where))[0]
        patch = self.ctx.patches.get(name)
        note = f"handled by {where}" + (f": {patch.summary}" if patch is not None else "")
        self.handled.append(Finding(self.path, call.lineno, qual, note))
        return True

    def _device_to(self, call: ast.Call) -> bool:
        """``x.to(...)`` moving to a device (not only a dtype: ``x.to(torch.float32)``)."""
        if not call.args and not call.keywords:
            return False
        for arg in call.args:
            qual = _qualify(arg, self.aliases)
            if not (qual and qual.split(".")[-1] in _DTYPES and qual.count(".") == 1):
                return True
        return any(kw.arg in ("device", "non_blocking") for kw in call.keywords)

    def _site_at(self, lineno: int):
        return next((s for s in self._sites if s.lineno == lineno), None)

    def _backward_extra(self, call: ast.Call) -> str:
        site = self._site_at(call.lineno)
        if site is None:
            return ("not a step site (no forward statements before it in its block, or arguments): "
                    "runs on the eager bridge (adapter/tape.py), not compiled")
        lines = [s.lineno for s in site.region] + [s.end_lineno or s.lineno for s in site.region]
        span = f"line {min(lines)}" if min(lines) == max(lines) else f"lines {min(lines)}-{max(lines)}"
        extra = f"step site: forward {span} + backward compiled as one graph"
        if site.optimizer_line is not None:
            extra += f", fused with optimizer.step() at line {site.optimizer_line}"
            if site.clip_line is not None:
                extra += f" and the clip at line {site.clip_line}"
        return extra + " (adapter/compiled_step.py; falls back to PyNative if it does not compile)"

    def _step_extra(self, lineno: int) -> str:
        site = next((s for s in self._sites if s.optimizer_line == lineno), None)
        return f"fused into the compiled step of line {site.lineno}" if site else "runs eagerly after backward()"

    def _clip_extra(self, lineno: int) -> str:
        site = next((s for s in self._sites if s.clip_line == lineno), None)
        return f"fused into the compiled step of line {site.lineno}" if site else ""

    def _zero_grad_extra(self, lineno: int) -> str:
        for site in self._sites:
            first = min([s.lineno for s in site.region], default=site.lineno)
            if first <= lineno < site.lineno:
                return f"hoisted before the compiled step of line {site.lineno} (adapter/step_rewrite.py)"
        return ""

    # graph mode -----------------------------------------------------------------------------------------------
    def scan_known(self, uses: Dict[str, str]) -> List[Finding]:
        """Calls whose (API, signature) is in ``uses`` ({signature: note},
        :func:`app.tools.conformance.known.report_signatures`): torch functions and constructors by their qualified
        name, Tensor methods by name (``x.median()``: if ``x`` is a tensor), each with the arguments the listed case
        passes (positional count and keyword names, ``app/tools/conformance/signature.py``)."""
        out = []
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Call):
                continue
            npos, kws = len(node.args), [k.arg or "**" for k in node.keywords]
            qual = _qualify(node.func, self.aliases)
            if qual is not None and signature(qual, npos, kws) in uses:
                out.append(Finding(self.path, node.lineno, qual, uses[signature(qual, npos, kws)]))
            elif qual is None and isinstance(node.func, ast.Attribute):
                sig = signature(f"torch.Tensor.{node.func.attr}", npos, kws)
                if sig in uses:
                    recv = ast.unparse(node.func.value)
                    recv = recv if len(recv) <= 24 else recv[:21] + "..."
                    out.append(Finding(self.path, node.lineno, f"{recv}.{node.func.attr}()",
                                       f"(if `{recv}` is a tensor) {uses[sig]}"))
        return out

    def scan_graph(self) -> None:
        regions: List[Tuple[str, str, List[ast.stmt]]] = [("forward", "forward()", fn.body)
                                                          for fn in _forward_bodies(self.tree)]
        regions += [("step", f"the step of line {s.lineno}", s.region) for s in self._sites]
        seen: Set[Tuple[int, str]] = set()
        for kind, where, body in regions:
            for stmt in body:
                for node in ast.walk(stmt):
                    found = list(self._graph_findings(node, _FALLBACK[kind]))
                    if kind == "step":
                        found += self._step_findings(node, _FALLBACK[kind])
                    for name, note, fallback_kind in found:
                        key = (node.lineno, name)
                        if key not in seen:
                            seen.add(key)
                            self.graph.append(Finding(self.path, node.lineno, name, f"in {where}: {note}",
                                                      fallback_kind))

    def _graph_findings(self, node: ast.AST, fallback: str) -> Iterable[Tuple[str, str, Optional[str]]]:
        """``(name, note, fallback kind or None)`` of what ``node`` is, for graph mode."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and _qualify(node.func, self.aliases) is None:
            method = node.func.attr
            if method in _VALUE_METHODS:
                yield f".{method}()", _NOTE_VALUE.format(fallback=fallback), _KIND_VALUE
            elif method == "item" and not node.args:
                yield ".item()", _NOTE_ITEM, None
            elif method.endswith("_") and not method.startswith("_") and method in self.ctx.tensor_methods:
                yield f".{method}()", _NOTE_INPLACE.format(fallback=fallback), _KIND_INPLACE
        elif isinstance(node, (ast.If, ast.While)) and self._tensor_condition(node.test):
            keyword = "if" if isinstance(node, ast.If) else "while"
            test = ast.unparse(node.test)
            yield f"{keyword} {test if len(test) <= 40 else test[:37] + '...'}", _NOTE_BRANCH, None
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print" \
                and any(not isinstance(a, ast.Constant) for a in node.args):
            yield "print()", _NOTE_PRINT, None

    def _step_findings(self, node: ast.AST, fallback: str) -> List[Tuple[str, str, Optional[str]]]:
        """What in a step region's statements (not in the functions they call) the compiled step rules out before
        compiling (``adapter/compiled_step.py``): a host random draw, a ``torch.distributions`` call, a ``with``
        block that is neither autocast nor a no-op (only a context named through torch or contextlib: a local name,
        such as ``amp_autocast = torch.cuda.amp.autocast if amp else suppress``, is one at run time). ``(name, note,
        fallback kind)`` each."""
        found: List[Tuple[str, str, Optional[str]]] = []
        if isinstance(node, ast.Call):
            qual = _qualify(node.func, self.aliases)
            parts = _chain(node.func)
            host = ".".join([self.host_aliases[parts[0]]] + parts[1:]) if parts and parts[0] in self.host_aliases \
                else None
            if host and (host.startswith("numpy.random.") or host.startswith("random.")) \
                    and host.count(".") == (2 if host.startswith("numpy.") else 1) \
                    and host.rpartition(".")[2] not in _HOST_NOT_DRAWS and not host.rpartition(".")[2].startswith("_") \
                    and not host.rpartition(".")[2][:1].isupper():
                found.append((f"{_short(node.func)}()", _NOTE_RANDOM.format(fallback=fallback), _KIND_RANDOM))
            elif qual and qual.startswith("torch.") and qual.rpartition(".")[2] in _GENERATOR_DRAWS \
                    and any(k.arg == "generator" for k in node.keywords):
                found.append((f"{qual}(generator=...)", _NOTE_RANDOM.format(fallback=fallback), _KIND_RANDOM))
            elif qual and qual.startswith("torch.distributions."):
                found.append((f"{qual}()", _NOTE_DISTRIBUTIONS.format(fallback=fallback), _KIND_DISTRIBUTIONS))
        elif isinstance(node, ast.With):
            for item in node.items:
                expr = item.context_expr.func if isinstance(item.context_expr, ast.Call) else item.context_expr
                parts = _chain(expr)
                name = _qualify(expr, self.aliases) or (
                    ".".join([self.host_aliases[parts[0]]] + parts[1:]) if parts and parts[0] in self.host_aliases
                    else None)
                if name is not None and name not in _STEP_CONTEXTS:  # a local name (amp_autocast) may be either
                    found.append((f"with {_short(item.context_expr)}", _NOTE_CONTEXT.format(fallback=fallback),
                                  _KIND_CONTEXT))
        return found

    def _tensor_condition(self, test: ast.expr) -> bool:
        """A condition that computes on tensors (``out.sum() > 0``, ``torch.isnan(x).any()``); one that reads the
        value through numpy is left to the ``.numpy()`` finding."""
        calls = [n for n in ast.walk(test) if isinstance(n, ast.Call)]
        if any(isinstance(c.func, ast.Attribute) and c.func.attr in _VALUE_METHODS for c in calls):
            return False
        for c in calls:
            qual = _qualify(c.func, self.aliases)
            if qual is not None:
                if qual.startswith("torch.") and qual.split(".")[-1] in _TENSOR_CONDITION:
                    return True
            elif isinstance(c.func, ast.Attribute) and c.func.attr in _TENSOR_CONDITION:
                return True
        return False


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    if len(text) <= 30:
        return text
    return text[:27] + "..." if _chain(node) is not None else "(...)"


_EVERY_CALLABLE = frozenset({"torch_errors"})


class _Context:
    """What every file's scan shares: patches, MindTorch's Tensor attributes, the user's own attribute names."""

    def __init__(self, trees: List[ast.AST]):
        # ADAPTER_DISABLE_PATCHES ones are not in effect; a patch that wraps every public callable only to raise
        # PyTorch's error classes (patches/torch_errors.py) handles no concept or call the report names
        self.patches = {p.name: p for p in patches.enabled() if p.name not in _EVERY_CALLABLE}
        self.module_classes, self.dropout_classes = report_risks.module_classes(
            (tree, _aliases(tree)[0]) for tree in trees)
        self.version = _mindtorch_version()
        import mindtorch.torch as mt
        self.mindtorch_tensor_attrs = set(dir(mt.Tensor))
        self.torch_tensor_attrs = _torch_tensor_attrs()
        self.tensor_methods = self.torch_tensor_attrs | self.mindtorch_tensor_attrs
        self.common_attrs = _common_attrs()
        self.user_attrs: Set[str] = set()
        for tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                    self.user_attrs.add(node.attr)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self.user_attrs.add(node.name)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr == "add_argument":  # argparse: args.<dest>
                    for value in node.args + [kw.value for kw in node.keywords if kw.arg == "dest"]:
                        if isinstance(value, ast.Constant) and isinstance(value.value, str):
                            self.user_attrs.add(value.value.lstrip("-").replace("-", "_"))


# --------------------------------------------------------------------------------------------------------------
# Public API


def build_report(script_path: str) -> Report:
    """Scan ``script_path`` and the modules it imports from its folder (AST only; the user's code never runs).

    Returns:
        a :class:`Report`; findings sorted by file (script first, then in import order) and line. Files that do not
        parse are listed in ``Report.unparsed`` and skipped.

    Raises:
        OSError: ``script_path`` cannot be read.
        ImportError: MindTorch (or ``patches``) cannot be imported: call ``app.bootstrap.setup_mindspore`` first.
    """
    script = os.path.abspath(script_path)
    root = os.path.dirname(script)
    with open(script, "rb"):
        pass  # OSError for a missing or unreadable script, before anything else
    order: List[str] = []
    parsed: Dict[str, Tuple[ast.Module, str]] = {}
    unparsed: List[Finding] = []
    queue = [script]
    while queue:
        path = os.path.abspath(queue.pop(0))
        if path in order:
            continue
        order.append(path)
        try:
            with open(path, "rb") as f:
                source = f.read().decode("utf-8")
            tree = ast.parse(source, path)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None) or 1
            unparsed.append(Finding(path, line, os.path.basename(path), f"not scanned: {type(exc).__name__}: {exc}"))
            continue
        parsed[path] = (tree, source)
        queue += [p for p in _imported_files(tree, path, root) if os.path.abspath(p) not in order]
    torch_names.clear_cache()  # the live modules decide: a patch disabled or added since the last report counts
    report_risks.clear_cache()
    ctx = _Context([tree for tree, _ in parsed.values()])
    report = Report(script, order, unparsed=unparsed)
    known_uses = known.report_signatures()
    notes: Dict[str, str] = {}
    risks: List[Tuple[str, Finding]] = []
    for path in order:
        if path not in parsed:
            continue
        tree, source = parsed[path]
        scan = _FileScan(path, tree, source, ctx)
        scan.scan_missing()
        scan.scan_handled()
        scan.scan_graph()
        report.missing_apis += _sorted_unique(scan.missing)
        report.handled_calls += _sorted_unique(scan.handled)
        report.graph_mode += _sorted_unique(scan.graph)
        report.known_differences += _sorted_unique(scan.scan_known(known_uses))
        hits = report_risks.RiskScan(tree, scan.aliases, scan._sites, ctx.tensor_methods, ctx.module_classes,
                                     ctx.dropout_classes).run()
        seen: Set[Tuple[str, int, str]] = set()
        for key, line, what in sorted(hits, key=lambda h: (h[1], h[0], h[2])):
            if (key, line, what) in seen:
                continue
            seen.add((key, line, what))
            if key not in notes:
                notes[key] = report_risks.status(report_risks.RISKS[key], set(ctx.patches))
            risks.append((key, Finding(path, line, what, notes[key])))
    # not handled first, then no fix, then handled; within each, by kind, then file and line as found (stable)
    order_of = {key: i for i, key in enumerate(report_risks.RISKS)}
    rank = {"NOT handled": 0, "no fix": 1}
    risks.sort(key=lambda r: (min((v for k, v in rank.items() if f": {k}" in notes[r[0]]), default=2),
                              order_of[r[0]]))
    report.risk_keys = [key for key, _ in risks]
    report.risks = [f for _, f in risks]
    return report


def _sorted_unique(findings: List[Finding]) -> List[Finding]:
    seen, out = set(), []
    for f in sorted(findings, key=lambda f: (f.line, f.name)):
        if (f.line, f.name) not in seen:
            seen.add((f.line, f.name))
            out.append(f)
    return out


MISSING_TITLE = "torch APIs that {version} does not provide"
HANDLED_TITLE = "calls the adapter handles (patch or component)"
GRAPH_TITLE = "graph mode: forward() methods and compiled step regions"
RISKS_TITLE = "known risks: constructs that broke real PyTorch scripts here, and what handles them"
KNOWN_TITLE = "known differences from PyTorch (run.py conformance; table: docs/conformance.md)"


def _section(title: str, findings: List[Finding], count: bool = True) -> str:
    """``title (N):``, then the findings grouped by note, in the order of each note's first finding: the note once
    (two-space indent), then one ``path:line  name`` line per finding (four spaces)."""
    lines = [f"{title} ({len(findings)}):" if count else f"{title}:"]
    groups: Dict[str, List[Finding]] = {}
    for f in findings:
        groups.setdefault(f.note, []).append(f)
    for note, group in groups.items():
        lines.append(f"  {note}")
        lines += [f"    {display_path(f.path)}:{f.line}  {f.name}" for f in group]
    if not findings:
        lines.append("  none found")
    return "\n".join(lines) + "\n"


def format_missing(report: Report) -> str:
    """The "missing APIs" section of :func:`format_report` alone (title line, then one finding per line)."""
    return _section(MISSING_TITLE.format(version=_mindtorch_version()), report.missing_apis)


def format_report(report: Report) -> str:
    """The report as text: a header naming the files scanned, then one section per kind of finding, each line
    ``path:line  name  note``."""
    names = [display_path(p) for p in report.files]
    head = f"run.py --report: {names[0]}" + (f" (+ {', '.join(names[1:])})" if names[1:] else "")
    head += ": static scan (AST), nothing was run\n"
    parts = [head, format_missing(report), _section(KNOWN_TITLE, report.known_differences),
             _section(RISKS_TITLE, report.risks),
             _section(HANDLED_TITLE, report.handled_calls), _section(GRAPH_TITLE, report.graph_mode)]
    if report.unparsed:
        parts.append(_section("files not scanned", report.unparsed))
    return "\n".join(parts)


_TORCH_WORD = re.compile(r"(?<![\w.])(mindtorch\.)?torch(vision)?\b|'Tensor' object has no attribute")


def missing_api_hint(exc: BaseException, script_path: str) -> Optional[str]:
    """For a failed run: the report's "missing APIs" section when ``exc`` looks like a missing torch API.

    ``exc`` qualifies when it is an AttributeError, ImportError (ModuleNotFoundError included) or
    NotImplementedError whose message names torch/torchvision/MindTorch or a ``'Tensor' object`` attribute (e.g.
    "module 'mindtorch.torch' has no attribute 'compile'", MindTorch's "KeyError('torch.func')" import errors).

    Returns:
        the section text (see :func:`format_missing`), or None when ``exc`` does not qualify, when the scan finds
        no missing API, or when the scan itself fails (a hint must never hide the user's error).
    """
    if not isinstance(exc, (AttributeError, ImportError, NotImplementedError)):
        return None
    if not _TORCH_WORD.search(str(exc)) and not _TORCH_WORD.search(getattr(exc, "name", None) or ""):
        return None
    try:
        report = build_report(script_path)
    except Exception:
        return None
    if not report.missing_apis:
        return None
    return format_missing(report)


def failure_hint(exc: BaseException, script_path: str) -> Optional[str]:
    """For a failed run: the report's known-risk findings at the lines of the user's code that the traceback of
    ``exc`` passes through (``np.array(..., copy=None)`` at siamese_network/main.py:108: why there is no fix).

    Frames in the compiled step's generated files count as the user's file (same line numbers,
    ``adapter.compiled_step.GENERATED_TO_USER``).

    Returns:
        a section as :func:`format_report` prints it (title ``run.py: known risks at the lines of this
        traceback``), or None when none of the traceback's lines has a finding, or when the scan fails (a hint must
        never hide the user's error).
    """
    import traceback
    try:
        from adapter.compiled_step import GENERATED_TO_USER
    except Exception:  # the hint never fails
        GENERATED_TO_USER = {}
    lines: Set[Tuple[str, int]] = set()
    seen_excs: Set[int] = set()
    todo: List[BaseException] = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen_excs:
            continue
        seen_excs.add(id(current))
        for frame in traceback.extract_tb(current.__traceback__):
            filename = GENERATED_TO_USER.get(frame.filename, frame.filename)
            lines.add((os.path.abspath(filename), frame.lineno))
        todo += [current.__cause__, current.__context__]
    try:
        report = build_report(script_path)
    except Exception:
        return None
    found = [f for f in report.risks if (f.path, f.line) in lines]
    if not found:
        return None
    return _section("run.py: known risks at the lines of this traceback (run.py --report lists all)", found,
                    count=False)
