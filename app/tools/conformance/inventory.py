"""The API inventory of the conformance harness: every distinct ``(API, signature)`` pair (``signature.py``) that the
corpus uses, in ``tests/fixtures/conformance/inventory.json``.

The corpus: our ``pt_original/train_resnet.py`` + ``resnet.py``, the 13 pytorch/examples scripts of
``scripts/corpus_specs.py`` (``EXAMPLE_FILES``: their 19 files; third-party code, not in this repository since issue
32: a rebuild reads them from a checkout named by ``CORPUS_EXAMPLES``, and names them ``pytorch/examples/<file>``) and
torchvision's classification model definitions ResNet, VGG, MobileNetV2/V3, EfficientNet (torchvision 0.28:
``torchvision/models/{resnet,vgg,mobilenetv2,mobilenetv3,efficientnet,_utils}.py`` and what they call in ``torchvision/ops/{misc,stochastic_depth}.py``). Two sources feed one table:

* **ast**: calls whose target resolves to ``torch.*`` / ``torchvision.*`` by the import aliases of the file, as
  ``run.py --report`` resolves them (``adapter.torch_names.aliases`` / ``qualify``): constructors
  (``torch.nn.Conv2d``, ``torch.optim.SGD``, ``torch.utils.data.DataLoader``, transforms), ``F.*``, ``torch.*``.
  Every call site counts, executed or not. A ``*args`` argument is spelled ``*`` among the keywords (its length is
  unknown statically), like ``**`` for ``**kwargs``.
* **trace**: the scripts run briefly under real PyTorch (``.venv-ref``; a few batches, staged data of
  ``scripts/stage_corpus_data.py`` shrunk further) and the five models are built (``weights=None``) and run forward +
  backward in train and eval mode, with two tracers whose records count only when the CALLER frame is in a corpus
  file (calls torch makes internally do not count):
  - a ``torch.overrides.TorchFunctionMode``: every torch function, Tensor method, operator and Tensor property
    access (``torch.Tensor.grad.__get__``), named by ``torch.overrides.resolve_name``; positional/keyword counts from
    the dispatched ``args``/``kwargs`` (the receiver of a ``torch.Tensor.*`` method excluded); receiver kind
    (``Tensor`` / ``Parameter``); input dtypes;
  - ``sys.setprofile``: calls into torch / torchvision Python code: ``nn.Module`` methods, ``Module.__call__``,
    optimizers, schedulers, DataLoader, transforms, datasets, and constructors (``__init__`` on an instance of a
    public torch class is the constructor of that class: ``torch.nn.Conv2d``). Methods are named by their defining
    public class (``torch.nn.Module.train``, ``torch.optim.Optimizer.zero_grad``, ``torch.optim.SGD.step``,
    ``torch.optim.lr_scheduler.LRScheduler.step``). The counts come from the caller's ``ast.Call`` node, found by the
    frame's code position (``co_positions``, Python 3.11); protocol calls without a call node (``for x in loader``:
    ``torch.utils.data.DataLoader.__iter__``) count 0 positional arguments (1 for ``__getitem__``), Tensor dunders
    called by a protocol (``f"{loss:.4f}"``: ``torch.Tensor.__format__``) count the dispatch's arguments, and
    ``nn.Sequential(*layers)`` counts what ``layers`` held;
  - public generator methods (``Module.parameters``, ``Module.modules``) are wrapped while tracing: they are
    recorded where they are called, not where they are iterated.
  Where a run executed a ``f(*xs)`` line, its traced pairs replace the AST's ``(0;*)`` guess for that line.
  ``DataLoader(num_workers=N)`` iterates in the traced process (a worker's records would be lost); each run has one
  intra-op thread (``OMP_NUM_THREADS=1``: OpenMP's spinning threads on a shared 2-core machine made
  time_sequence_prediction's LSTMCell loop 60x slower). What each run did is in the JSON's ``runs``: PyTorch's own
  exit code and error (siamese_network fails at its ``main.py:108`` under PyTorch 2.13 too, before training), and
  how the distributed scripts ran (ddp-tutorial-series/multigpu_torchrun.py as one process with torchrun's
  environment; multigpu.py's ``mp.spawn(nprocs=torch.cuda.device_count())`` spawns nothing on a CPU machine;
  ddp/example.py exits for want of 2 GPUs, as under PyTorch): their unexecuted lines come from the AST only.
  Private names (a ``_x`` component) and dunders other than constructors, ``__call__``, ``__iter__``, ``__next__``,
  ``__len__``, ``__getitem__`` (any dunder of ``torch.Tensor``) are left out.

Each entry of the JSON: ``api``, ``signature``, ``count`` (trace calls + AST sites), ``examples`` (up to 3
``relative/file.py:line``; torchvision files relative to site-packages), ``receivers`` (``Tensor`` / ``Parameter``
for ``torch.Tensor.*``), ``dtypes`` (input tensor dtypes seen), ``source`` (``ast``, ``trace`` or ``both``).

Build it (a few minutes; real PyTorch + torchvision; a pytorch/examples checkout at commit 77f55b9)::

    CORPUS_EXAMPLES=DIR .venv-ref/bin/python -m app.tools.conformance.inventory [--only mnist vae ...] [--keep-runs]

The committed JSON is the frozen result: the tests and ``run.py conformance --coverage`` read it, never the scripts.

This module imports nothing of torch at import time: :func:`load`, :func:`coverage`, :func:`scan_source` work here.
"""
from __future__ import annotations

import argparse
import ast
import collections
import datetime
import json
import os
import subprocess
import sys
import time
from typing import Callable, Dict, Iterable, List, Optional, Set, Tuple

from app.tools.conformance.signature import parse, signature
from adapter.torch_names import aliases as _aliases, qualify as _qualify

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
OUT = os.path.join(ROOT, "tests", "fixtures", "conformance", "inventory.json")
# our scripts in the corpus (relative to the repository root)
OUR_FILES = ("pt_original/resnet.py", "pt_original/train_resnet.py")
# the pytorch/examples files the corpus scripts are made of (relative to a checkout at commit 77f55b9; the 13
# scripts of scripts/corpus_specs.py and the modules they import), named "pytorch/examples/<file>" in the JSON
EXAMPLES_LABEL = "pytorch/examples"
EXAMPLE_FILES = ("dcgan/main.py", "distributed/ddp-tutorial-series/datautils.py",
                 "distributed/ddp-tutorial-series/multigpu.py", "distributed/ddp-tutorial-series/multigpu_torchrun.py",
                 "distributed/ddp-tutorial-series/single_gpu.py", "distributed/ddp/example.py", "imagenet/main.py",
                 "mnist/main.py", "mnist_forward_forward/main.py", "mnist_rnn/main.py", "regression/main.py",
                 "siamese_network/main.py", "super_resolution/data.py", "super_resolution/dataset.py",
                 "super_resolution/main.py", "super_resolution/model.py",
                 "time_sequence_prediction/generate_sine_wave.py", "time_sequence_prediction/train.py", "vae/main.py")
EXAMPLES_ENV = "CORPUS_EXAMPLES"
# torchvision's classification model definitions (relative to site-packages), all callers count
TV_MODEL_FILES = ("torchvision/models/resnet.py", "torchvision/models/vgg.py", "torchvision/models/mobilenetv2.py",
                  "torchvision/models/mobilenetv3.py", "torchvision/models/efficientnet.py",
                  "torchvision/models/_utils.py")
TV_OPS_FILES = ("torchvision/ops/misc.py", "torchvision/ops/stochastic_depth.py")
TV_MODELS = ("resnet18", "vgg11_bn", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0")
MAX_EXAMPLES = 3
KEPT_DUNDERS = {"__init__", "__call__", "__iter__", "__next__", "__len__", "__getitem__"}
# the summary's namespaces, most specific prefix first
NAMESPACES = (("torch.Tensor", "torch.Tensor."), ("torch.nn.functional", "torch.nn.functional."),
              ("torch.nn", "torch.nn."), ("torch.optim", "torch.optim."), ("torch.utils.data", "torch.utils.data."),
              ("torchvision", "torchvision."), ("torch", "torch."))


# --------------------------------------------------------------------------------------------------------------
# Reading the result (no torch needed)


def load(path: str = OUT) -> List[dict]:
    """The inventory's entries (dicts with ``api``, ``signature``, ``count``, ``examples``, ``receivers``, ``dtypes``,
    ``source``), sorted by signature. Raises OSError when the file is missing, ValueError when it is not JSON."""
    with open(path) as f:
        return json.load(f)["entries"]


def coverage(case_signatures: Iterable[str], entries: Optional[List[dict]] = None) -> Tuple[float, List[dict]]:
    """How much of the inventory the harness's cases cover.

    Args:
        case_signatures: the ``signature.signature()`` strings the cases exercise (``torch.std(1;keepdim)``).
        entries: the inventory (default :func:`load`).
    Returns:
        (covered fraction of the distinct (API, signature) pairs, in [0, 1]; 1.0 for an empty inventory,
        the entries not covered, in inventory order).
    """
    entries = load() if entries is None else entries
    have = {alias for sig in case_signatures for alias in aliases(sig)}
    missing = [e for e in entries if e["signature"] not in have]
    return (1.0 - len(missing) / len(entries) if entries else 1.0), missing


# a case's operator (``a + b``: ``torch.Tensor.__add__``) is the method the trace names (``torch.Tensor.add``)
_OPERATOR_METHODS = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "matmul": "matmul", "pow": "pow",
                     "eq": "eq", "ne": "ne", "gt": "gt", "lt": "lt", "ge": "ge", "le": "le", "neg": "neg"}
_MODULE_METHODS = {"__call__", "__init__", "train", "eval", "parameters", "named_parameters", "state_dict",
                   "load_state_dict", "to", "zero_grad", "apply", "double", "float", "half", "modules", "children",
                   "named_modules", "buffers", "cuda", "cpu", "requires_grad_", "register_buffer"}
_OPTIMIZER_METHODS = {"zero_grad", "state_dict", "load_state_dict", "add_param_group"}


def aliases(sig: str) -> Set[str]:
    """``sig`` and the names the trace gives the same use: a Tensor operator as its method (``torch.Tensor.__add__(1)``
    also ``torch.Tensor.add(1)``, ``__rmul__`` ``mul``), a module's inherited method on its defining class
    (``torch.nn.Conv2d.__call__(1)`` also ``torch.nn.Module.__call__(1)``), an optimizer's and a scheduler's
    (``torch.optim.SGD.zero_grad(0)`` also ``torch.optim.Optimizer.zero_grad(0)``; ``StepLR.step``
    ``LRScheduler.step``)."""
    api, n, kws = parse(sig)
    out = {sig}
    head, _, method = api.rpartition(".")
    if head == "torch.Tensor" and method.startswith("__") and method.endswith("__"):
        name = method[2:-2]
        name = name[1:] if name.startswith("r") and name[1:] in _OPERATOR_METHODS else name
        if name in _OPERATOR_METHODS:
            out.add(signature(f"torch.Tensor.{_OPERATOR_METHODS[name]}", n, kws))
    elif (head.startswith("torch.nn.") or head.startswith("torchvision.models.")) and method in _MODULE_METHODS:
        out.add(signature(f"torch.nn.Module.{method}", n, kws))
    elif head.startswith("torch.optim.lr_scheduler.") and method == "step":
        out.add(signature("torch.optim.lr_scheduler.LRScheduler.step", n, kws))
    elif head.startswith("torch.optim.") and method in _OPTIMIZER_METHODS:
        out.add(signature(f"torch.optim.Optimizer.{method}", n, kws))
    return out


def namespace(api: str) -> str:
    """The summary namespace of ``api``: ``torch.Tensor``, ``torch.nn.functional``, ``torch.nn`` (modules,
    ``nn.init``, ``nn.utils``), ``torch.optim``, ``torch.utils.data``, ``torchvision`` or ``torch`` (the rest)."""
    for name, prefix in NAMESPACES:
        if api.startswith(prefix):
            return name
    return "other"


def summary(entries: List[dict]) -> str:
    """One line per namespace: distinct pairs, distinct APIs, and how many came from ast / trace / both."""
    rows: Dict[str, List] = {name: [0, set(), collections.Counter()] for name, _ in NAMESPACES}
    for e in entries:
        row = rows.setdefault(namespace(e["api"]), [0, set(), collections.Counter()])
        row[0] += 1
        row[1].add(e["api"])
        row[2][e["source"]] += 1
    lines = [f"{'namespace':<20} {'pairs':>6} {'APIs':>5}   ast  trace  both"]
    for name, (pairs, apis, src) in rows.items():
        lines.append(f"{name:<20} {pairs:>6} {len(apis):>5} {src['ast']:>5} {src['trace']:>6} {src['both']:>5}")
    total = collections.Counter(e["source"] for e in entries)
    lines.append(f"{'total':<20} {len(entries):>6} {len({e['api'] for e in entries}):>5} {total['ast']:>5} "
                 f"{total['trace']:>6} {total['both']:>5}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------------------
# The table both parts feed


class Table:
    """(api, signature) -> aggregated entry."""

    def __init__(self) -> None:
        self.rows: Dict[Tuple[str, str], dict] = {}

    def add(self, api: str, sig: str, site: Optional[str], source: str, count: int = 1,
            receiver: Optional[str] = None, dtypes: Iterable[str] = ()) -> dict:
        row = self.rows.get((api, sig))
        if row is None:
            row = self.rows[(api, sig)] = {"api": api, "signature": sig, "count": 0, "sites": set(),
                                           "receivers": set(), "dtypes": set(), "source": set()}
        row["count"] += count
        if site:
            row["sites"].add(site)
        if receiver:
            row["receivers"].add(receiver)
        row["dtypes"].update(dtypes)
        row["source"].add(source)
        return row

    def merge(self, entries: Iterable[dict]) -> None:
        """Add rows in :meth:`dump` form (``sites`` as a list, ``source`` as a list)."""
        for e in entries:
            row = self.add(e["api"], e["signature"], None, e["source"][0], count=e["count"])
            row["sites"].update(e["sites"])
            row["receivers"].update(e["receivers"])
            row["dtypes"].update(e["dtypes"])
            row["source"].update(e["source"])

    def dump(self) -> List[dict]:
        """Rows with sets as sorted lists (all sites kept: the intermediate form of one trace run)."""
        return [{k: sorted(v) if isinstance(v, set) else v for k, v in row.items()} for row in self.rows.values()]

    def entries(self) -> List[dict]:
        """The inventory's entries, sorted by signature: examples chosen from the sites (``pt_original`` files
        first, one per file before a second from the same file, then by path and line)."""
        out = []
        for row in sorted(self.rows.values(), key=lambda r: r["signature"]):
            out.append({"api": row["api"], "signature": row["signature"], "count": row["count"],
                        "examples": _examples(row["sites"]), "receivers": sorted(row["receivers"]),
                        "dtypes": sorted(row["dtypes"]),
                        "source": "both" if len(row["source"]) > 1 else next(iter(row["source"]))})
        return out


def _site_key(site: str) -> Tuple[int, str, int]:
    path, _, line = site.rpartition(":")
    return (0 if path.startswith(("pt_original/", EXAMPLES_LABEL + "/")) else 1, path, int(line))


def _examples(sites: Set[str]) -> List[str]:
    chosen: List[str] = []
    files: Set[str] = set()
    ordered = sorted(sites, key=_site_key)
    for site in ordered:  # one per file first
        path = site.rpartition(":")[0]
        if path not in files:
            files.add(path)
            chosen.append(site)
    for site in ordered:
        if site not in chosen:
            chosen.append(site)
    return sorted(chosen[:MAX_EXAMPLES], key=_site_key)


# --------------------------------------------------------------------------------------------------------------
# Part 1: the AST


def call_counts(node: ast.Call) -> Tuple[int, List[str]]:
    """(positional count, keyword names) of a call as written: ``*x`` adds the keyword ``*`` instead of a count,
    ``**x`` the keyword ``**``."""
    n = sum(1 for a in node.args if not isinstance(a, ast.Starred))
    kws = [kw.arg if kw.arg is not None else "**" for kw in node.keywords]
    if any(isinstance(a, ast.Starred) for a in node.args):
        kws.append("*")
    return n, kws


def scan_source(source: str, rel: str, canon: Optional[Callable[[str], Optional[str]]] = None
                ) -> List[Tuple[str, str, str]]:
    """The torch/torchvision calls in one file's source, by its import aliases (``run.py --report``'s resolution).

    Args:
        source: Python source. rel: the file's name in the sites (``pt_original/x.py``).
        canon: maps a qualified name to the public name (``torch.nn.modules.conv.Conv2d`` -> ``torch.nn.Conv2d``),
            or None to drop it (a private name); default: private names dropped, others kept as qualified.
    Returns:
        ``(api, signature, "rel:line")`` per call site, in source order. Raises SyntaxError for bad source.
    """
    tree = ast.parse(source, rel)
    aliases, _ = _aliases(tree)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        qual = _qualify(node.func, aliases)
        if qual is None or not (qual.startswith("torch.") or qual.startswith("torchvision.")):
            continue
        api = canon(qual) if canon else (None if _private(qual) else qual)
        if api is None:
            continue
        n, kws = call_counts(node)
        out.append((node.lineno, node.col_offset, api, signature(api, n, kws), f"{rel}:{node.lineno}"))
    out.sort(key=lambda r: r[:2])
    return [r[2:] for r in out]


def _private(api: str) -> bool:
    return any(part.startswith("_") and not (part.startswith("__") and part.endswith("__"))
               for part in api.split("."))


def examples_dir() -> str:
    """The pytorch/examples checkout named by ``CORPUS_EXAMPLES`` (absolute). Raises RuntimeError when it is unset
    or lacks a file of ``EXAMPLE_FILES``."""
    folder = os.environ.get(EXAMPLES_ENV)
    if not folder:
        raise RuntimeError(f"inventory: rebuilding needs the pytorch/examples scripts (not in this repository): set "
                           f"{EXAMPLES_ENV} to a checkout at commit 77f55b9")
    folder = os.path.abspath(folder)
    missing = [f for f in EXAMPLE_FILES if not os.path.isfile(os.path.join(folder, f))]
    if missing:
        raise RuntimeError(f"inventory: {EXAMPLES_ENV}={folder} lacks {missing[:3]}: not a pytorch/examples checkout "
                           "at commit 77f55b9?")
    return folder


def corpus_files() -> List[str]:
    """Our ``OUR_FILES`` and the checkout's ``EXAMPLE_FILES`` (absolute, sorted). Raises RuntimeError as
    :func:`examples_dir`."""
    examples = examples_dir()
    return sorted([os.path.join(ROOT, f) for f in OUR_FILES] + [os.path.join(examples, f) for f in EXAMPLE_FILES])


# --------------------------------------------------------------------------------------------------------------
# Part 2: the trace (real PyTorch; everything below imports torch lazily)


def site_packages() -> str:
    """The site-packages folder of the running interpreter's torchvision."""
    import torchvision
    return os.path.dirname(os.path.dirname(os.path.abspath(torchvision.__file__)))


def relative(path: str, sp: str) -> str:
    """How the JSON names ``path``: ``pytorch/examples/<file>`` in the checkout, relative to the repository root or
    to site-packages ``sp`` (torchvision's files), else as given."""
    path = os.path.realpath(path)
    examples = os.environ.get(EXAMPLES_ENV)
    if examples and path.startswith(os.path.realpath(examples) + os.sep):
        return f"{EXAMPLES_LABEL}/{os.path.relpath(path, os.path.realpath(examples))}"
    for base in (ROOT, sp):
        if path.startswith(os.path.realpath(base) + os.sep):
            return os.path.relpath(path, os.path.realpath(base))
    return path


def _cell(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


class PublicNames:
    """Public names of torch/torchvision objects: classes (``torch.nn.Conv2d``), Python functions and methods by
    their (unwrapped) code object (``torch.nn.Module.train``), builtins by identity; the first public module (in
    :data:`MODULES` order) that exports an object names it. Dispatchable functions use ``resolve_name``."""

    MODULES = ("torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.optim",
               "torch.optim.lr_scheduler", "torch.utils.data", "torch.utils.data.distributed", "torch.autograd",
               "torch.cuda", "torch.backends.cudnn", "torch.backends.mps", "torch.accelerator", "torch.distributed",
               "torch.multiprocessing", "torch.nn.parallel", "torch.amp", "torch.random", "torch.serialization",
               "torch.hub", "torch.jit", "torchvision", "torchvision.transforms", "torchvision.transforms.functional",
               "torchvision.datasets", "torchvision.models", "torchvision.ops", "torchvision.utils", "torchvision.io")

    def __init__(self) -> None:
        import importlib
        import inspect
        from torch.overrides import resolve_name
        self.resolve_name = resolve_name
        self.classes: Dict[type, str] = {}
        self.codes: Dict[object, str] = {}
        self.builtins: Dict[int, str] = {}
        self.closures: Dict[Tuple, str] = {}
        self.keep: List[object] = []  # keep the builtins alive (ids)
        for modname in self.MODULES:
            try:
                mod = importlib.import_module(modname)
            except Exception:
                continue
            for attr in sorted(dir(mod)):
                if attr.startswith("_"):
                    continue
                try:
                    obj = getattr(mod, attr)
                except Exception:
                    continue
                name = f"{modname}.{attr}"
                if inspect.isclass(obj):
                    if (getattr(obj, "__module__", "") or "").split(".")[0] in ("torch", "torchvision") \
                            and obj not in self.classes:
                        self.classes[obj] = name
                        self._members(obj, name)
                elif inspect.isfunction(obj):
                    self._code(obj, self._resolved(obj) or name)
                elif callable(obj) and type(obj).__name__ == "builtin_function_or_method":
                    if id(obj) not in self.builtins:
                        self.builtins[id(obj)] = self._resolved(obj) or name
                        self.keep.append(obj)

    def _resolved(self, obj) -> Optional[str]:
        try:
            return self.resolve_name(obj)
        except Exception:
            return None

    def _code(self, fn, name: str, owner: Optional[str] = None) -> None:
        """Name ``fn`` (and what it wraps). A closure's code is shared by every function its factory made
        (``boolean_dispatch``, decorators' wrappers): it is named by (code, ids of its cells' contents).
        ``owner``: a class name the function must be defined in (its ``__qualname__``), else it is inherited."""
        inner = fn
        while hasattr(inner, "__wrapped__"):
            inner = inner.__wrapped__
        if owner is not None and not (getattr(inner, "__qualname__", "") or "").startswith(owner + "."):
            return
        for f in {id(fn): fn, id(inner): inner}.values():
            code = getattr(f, "__code__", None)
            if code is None:
                continue
            if code.co_freevars:
                try:
                    key = (code, tuple(id(_cell(c)) for c in f.__closure__ or ()))
                except Exception:
                    continue
                self.closures.setdefault(key, name)
                self.keep.append(f)
            elif code not in self.codes:
                self.codes[code] = name

    def _members(self, cls: type, cname: str) -> None:
        for attr, value in vars(cls).items():
            if attr.startswith("_") and not (attr.startswith("__") and attr.endswith("__")):
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                for fn in (value.fget, value.fset):
                    if fn is not None:
                        self._code(fn, f"{cname}.{attr}", cls.__name__)
            elif callable(value) and hasattr(value, "__code__") or hasattr(value, "__wrapped__"):
                self._code(value, f"{cname}.{attr}", cls.__name__)

    def canon(self, qual: str) -> Optional[str]:
        """The public name of the object ``qual`` names (import + getattr), ``qual`` itself when it does not resolve
        or has no other name, None when private."""
        import importlib
        import inspect
        parts = qual.split(".")
        obj, i = None, len(parts)
        while i > 0:
            try:
                obj = importlib.import_module(".".join(parts[:i]))
                break
            except Exception:
                i -= 1
        try:
            for part in parts[i:]:
                obj = getattr(obj, part)
        except Exception:
            obj = None
        name = None
        if obj is not None:
            if inspect.isclass(obj):
                name = self.classes.get(obj)
            elif inspect.isfunction(obj):
                name = self._resolved(obj)
                if name is None:
                    inner = obj
                    while hasattr(inner, "__wrapped__"):
                        inner = inner.__wrapped__
                    name = self.codes.get(getattr(inner, "__code__", None))
            elif callable(obj):
                name = self._resolved(obj) or self.builtins.get(id(obj))
        name = name or qual
        return None if _private(name) else name


class Tracer:
    """The runtime tracer (see the module docstring): ``start()`` / ``stop()``, results in :attr:`table`."""

    def __init__(self, targets: Set[str], transparent: Set[str], sp: str) -> None:
        import torch
        from torch.overrides import TorchFunctionMode, get_ignored_functions, resolve_name
        self.torch = torch
        self.names = PublicNames()
        self.targets = {os.path.realpath(t) for t in targets} | set(targets)
        self.transparent = transparent
        self.sp = sp
        self.table = Table()
        self.pending: Dict[int, dict] = {}  # id(callee frame) -> its row (Python callees: the mode adds dtypes)
        self.c_pending: Optional[Tuple] = None
        self.ignored = {id(f) for f in get_ignored_functions() if callable(f)}
        prefixes = [os.path.dirname(torch.__file__) + os.sep]
        try:
            import torchvision
            prefixes.append(os.path.dirname(torchvision.__file__) + os.sep)
        except ImportError:
            pass
        self.prefixes = tuple(prefixes)
        self.overrides_file = sys.modules["torch.overrides"].__file__
        self.model_files = {os.path.join(sp, f) for f in TV_MODEL_FILES}
        self.ops_files = {os.path.join(sp, f) for f in TV_OPS_FILES}
        self.tv_files = self.model_files | self.ops_files
        self.trees: Dict[str, Dict[Tuple, ast.Call]] = {}
        self.node_cache: Dict[Tuple, Optional[ast.Call]] = {}
        self.rel_cache: Dict[str, str] = {}
        tracer = self

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                try:
                    tracer.on_torch_function(func, args, kwargs, sys._getframe(1))
                except Exception as exc:  # the tracer must never change the script's behaviour
                    tracer.errors.append(f"{type(exc).__name__}: {exc}")
                return func(*args, **kwargs)

        self.mode = Mode()
        self.resolve_name = resolve_name
        self.errors: List[str] = []

    # -- helpers ---------------------------------------------------------------------------------------------
    def rel(self, path: str) -> str:
        r = self.rel_cache.get(path)
        if r is None:
            r = self.rel_cache[path] = relative(path, self.sp)
        return r

    def caller(self, frame):
        while frame is not None and frame.f_code.co_filename in self.transparent:
            frame = frame.f_back
        return frame

    def call_node(self, frame) -> Optional[ast.Call]:
        """The ``ast.Call`` at the frame's current instruction, or None (a protocol call, no call there)."""
        code, lasti = frame.f_code, frame.f_lasti
        key = (code, lasti)
        if key in self.node_cache:
            return self.node_cache[key]
        node = None
        try:
            pos = list(code.co_positions())[lasti // 2]
            spans = self.trees.get(code.co_filename)
            if spans is None:
                with open(code.co_filename) as f:
                    tree = ast.parse(f.read())
                spans = self.trees[code.co_filename] = {
                    (n.lineno, n.end_lineno, n.col_offset, n.end_col_offset): n
                    for n in ast.walk(tree) if isinstance(n, ast.Call)}
            node = spans.get(tuple(pos))
        except Exception:
            node = None
        self.node_cache[key] = node
        return node

    def dtypes(self, values) -> Set[str]:
        out = set()
        T = self.torch.Tensor
        for v in values:
            if isinstance(v, T):
                out.add(str(v.dtype).replace("torch.", ""))
            elif isinstance(v, (list, tuple)):
                for w in v[:8]:
                    if isinstance(w, T):
                        out.add(str(w.dtype).replace("torch.", ""))
        return out

    def receiver(self, obj) -> Optional[str]:
        if isinstance(obj, self.torch.nn.Parameter):
            return "Parameter"
        if isinstance(obj, self.torch.Tensor):
            return "Tensor" if type(obj) is self.torch.Tensor else type(obj).__name__
        return None

    # -- TorchFunctionMode -----------------------------------------------------------------------------------
    def on_torch_function(self, func, args, kwargs, frame) -> None:
        while frame is not None and frame.f_code.co_filename == self.overrides_file:
            frame = frame.f_back
        if frame is None:
            return
        if self.c_pending is not None and self.c_pending[1] is frame:
            self.c_pending = None  # the mode records this builtin
        direct = self.caller(frame)
        if direct is not None and direct.f_code.co_filename in self.targets:
            self.record_dispatch(func, args, kwargs, direct)
            return
        row, up = None, frame
        for _ in range(3):  # the Python torch function the profiler saw being called, or wrappers between
            if up is None:
                break
            row = self.pending.get(id(up))
            if row is not None or not up.f_code.co_filename.startswith(self.prefixes):
                break
            up = up.f_back
        if row is None or self.resolve_name(func) != row["api"]:
            return  # torch's own call, or one inside a recorded function (Linear.__init__'s torch.empty)
        if "deferred" in row:  # a Tensor dunder (str.format -> __format__): the dispatch's arguments count
            self.record_dispatch(func, args, kwargs, None, site=row["deferred"])
            return
        if row["api"].startswith("torch.Tensor.") and args:  # add what the dispatch sees
            rk = self.receiver(args[0])
            if rk:
                row["receivers"].add(rk)
        row["dtypes"].update(self.dtypes(list(args) + list(kwargs.values())))

    def record_dispatch(self, func, args, kwargs, frame, site: Optional[str] = None) -> None:
        api = self.resolve_name(func) or f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', func)}"
        if _private(api) or not api.startswith(("torch.", "torchvision.")):
            return
        n = len(args)
        receiver = None
        if api.startswith("torch.Tensor.") and args:
            n -= 1
            receiver = self.receiver(args[0])
        self.table.add(api, signature(api, n, kwargs), site or self.site(frame), "trace", receiver=receiver,
                       dtypes=self.dtypes(list(args) + list(kwargs.values())))

    def site(self, frame) -> str:
        return f"{self.rel(frame.f_code.co_filename)}:{frame.f_lineno}"

    # -- sys.setprofile --------------------------------------------------------------------------------------
    def profile(self, frame, event, arg):
        if event == "call":
            caller = frame.f_back
            if caller is None:
                return
            if caller.f_code.co_filename in self.transparent:
                caller = self.caller(caller)
                if caller is None:
                    return
            if caller.f_code.co_filename not in self.targets \
                    or not frame.f_code.co_filename.startswith(self.prefixes):
                return
            if frame.f_code.co_flags & 0x2A0:
                return  # a generator resumed (its creation is recorded by the wrappers of start())
            if caller.f_code.co_filename in self.tv_files and (
                    frame.f_code.co_filename in self.model_files or caller.f_code.co_filename in self.ops_files
                    and frame.f_code.co_filename in self.tv_files):
                return  # torchvision's model/ops internals (BasicBlock, ConvNormActivation, ...)
            try:
                self.on_python_call(frame, caller)
            except Exception as exc:
                self.errors.append(f"{type(exc).__name__}: {exc}")
        elif event == "return":
            if self.pending:
                self.pending.pop(id(frame), None)
        elif event == "c_call":
            if id(arg) in self.ignored and id(arg) in self.names.builtins \
                    and frame.f_code.co_filename in self.targets:
                self.c_pending = (arg, frame, frame.f_lasti)
        elif event in ("c_return", "c_exception"):
            pending = self.c_pending
            if pending is not None and pending[0] is arg and pending[1] is frame:
                self.c_pending = None
                api = self.names.builtins[id(arg)]
                if not _private(api):
                    node = self.call_node(frame)
                    n, kws = call_counts(node) if node is not None else (0, [])
                    self.table.add(api, signature(api, n, kws), self.site(frame), "trace")

    def callee_name(self, frame) -> Optional[str]:
        code = frame.f_code
        name = self.names.codes.get(code)
        if name is None and code.co_freevars:  # a closure: by its cells' contents, else what it wraps
            local = frame.f_locals
            name = self.names.closures.get((code, tuple(id(local.get(v)) for v in code.co_freevars)))
            for var in code.co_freevars if name is None else ():
                fn = local.get(var)
                while fn is not None and hasattr(fn, "__wrapped__"):
                    fn = fn.__wrapped__
                name = self.names.codes.get(getattr(fn, "__code__", None))
                if name:
                    break
        if name is None:
            name = f"{frame.f_globals.get('__name__', '?')}.{code.co_qualname}"
        return name

    def on_python_call(self, frame, caller) -> None:
        name = self.callee_name(frame)
        code = frame.f_code
        last = name.rpartition(".")[2]
        self_obj = frame.f_locals.get(code.co_varnames[0]) if code.co_argcount else None
        is_method = "." in code.co_qualname and code.co_argcount > 0 and not isinstance(self_obj, type)
        api = name
        if last == "__init__":
            cls_name = self.names.classes.get(type(self_obj))
            super_call = caller.f_code.co_name == "__init__" and caller.f_code.co_argcount \
                and caller.f_locals.get(caller.f_code.co_varnames[0]) is self_obj
            if cls_name and not super_call:
                api = cls_name  # the constructor of a public class; super().__init__() stays Base.__init__
        dunder = last.startswith("__") and last.endswith("__")
        if dunder and last not in KEPT_DUNDERS and not api.startswith("torch.Tensor."):
            return
        if _private(api) or not api.startswith(("torch.", "torchvision.")):
            return
        if dunder and api.startswith("torch.Tensor."):  # called by a protocol: the dispatch counts the arguments
            self.pending[id(frame)] = {"api": api, "deferred": self.site(caller)}
            return
        node = None
        if not (dunder and last in ("__iter__", "__next__", "__len__", "__getitem__")):
            node = self.call_node(caller)
            if node is not None and not dunder and isinstance(node.func, ast.Attribute) \
                    and node.func.attr not in (last, code.co_name):
                node = None  # the call there is another one (a C function that calls this)
        if node is not None:
            n, kws = call_counts(node)
            if "*" in kws:  # count what the starred arguments held: the callee's *args
                kws.remove("*")
                if code.co_flags & 0x04:
                    varargs = frame.f_locals.get(code.co_varnames[code.co_argcount + code.co_kwonlyargcount], ())
                    n = max(n, code.co_argcount - (1 if is_method else 0)) + len(varargs)
                else:
                    n = code.co_argcount - (1 if is_method else 0) - len(kws)
        else:
            n, kws = (1 if last == "__getitem__" else 0), []
        values = [v for k, v in frame.f_locals.items() if k != code.co_varnames[0] or not is_method]
        receiver = self.receiver(self_obj) if api.startswith("torch.Tensor.") else None
        row = self.table.add(api, signature(api, n, kws), self.site(caller), "trace", receiver=receiver,
                             dtypes=self.dtypes(values))
        self.pending[id(frame)] = row

    def on_generator_call(self, api: str, frame) -> None:
        """A public generator method (``Module.parameters``) called: recorded when it is created (its body runs
        later, from wherever it is iterated)."""
        caller = self.caller(frame)
        if caller is None or caller.f_code.co_filename not in self.targets:
            return
        node = self.call_node(caller)
        if node is not None and isinstance(node.func, ast.Attribute) and node.func.attr != api.rpartition(".")[2]:
            node = None
        n, kws = call_counts(node) if node is not None else (0, [])
        self.table.add(api, signature(api, n, kws), self.site(caller), "trace")

    def _wrap_generators(self) -> None:
        import functools
        import inspect
        self.unwrap: List[Tuple[type, str, object]] = []
        for cls, cname in self.names.classes.items():
            for attr, fn in list(vars(cls).items()):
                if attr.startswith("_") or not inspect.isgeneratorfunction(fn) \
                        or not fn.__qualname__.startswith(cls.__name__ + "."):
                    continue
                self.unwrap.append((cls, attr, fn))
                setattr(cls, attr, functools.update_wrapper(self._generator_wrapper(fn, f"{cname}.{attr}"), fn))

    def _generator_wrapper(self, fn, api: str):
        def wrapper(*args, **kwargs):
            try:
                self.on_generator_call(api, sys._getframe(1))
            except Exception as exc:
                self.errors.append(f"{type(exc).__name__}: {exc}")
            return fn(*args, **kwargs)
        return wrapper

    def start(self) -> None:
        self._wrap_generators()
        self.mode.__enter__()
        sys.setprofile(self.profile)

    def stop(self) -> None:
        sys.setprofile(None)
        self.mode.__exit__(None, None, None)
        for cls, attr, fn in self.unwrap:
            setattr(cls, attr, fn)


# --------------------------------------------------------------------------------------------------------------
# The runs: which script, how (scripts/corpus_specs.py's specs, with fewer batches)

# staged data, smaller than the corpus goldens' (an epoch of mnist is 4 batches of 64)
STAGE_SIZES = {"train": 256, "test": 128, "imagenet_train": 1, "imagenet_val": 1, "bsds_train": 4, "bsds_test": 2,
               "bsds_size": 256}
DEFAULT_BASE = os.path.join(ROOT, "runs", "inventory")


def runs() -> Dict[str, dict]:
    """name -> {script, args, env, pre, cuda_as_cpu, torchrun_env, note}: every corpus script, its arguments the
    spec's (``scripts/corpus_specs.py``) where those are already short, shorter where not."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        import corpus_specs as cs
    finally:
        sys.path.pop(0)
    shorter = {  # name -> arguments replacing the spec's
        "mnist_forward_forward": ["--epochs", "2", "--train_size", "100", "--test_size", "100", "--log-interval", "1"],
        "super_resolution": ["--upscale_factor", "3", "--nEpochs", "1", "--batchSize", "4"],
        "dcgan": ["--dataset", "mnist", "--dataroot", "../data", "--niter", "1", "--ngf", "16", "--ndf", "16"],
    }
    out: Dict[str, dict] = {}
    for name, spec in cs.SPECS.items():
        if name == "time_sequence_prediction_refuses":
            continue  # the same script as time_sequence_prediction, stopped by torch.load's weights_only refusal
        run = {"script": cs.script_path(spec.script), "args": shorter.get(name, list(spec.args)),
               "env": dict(spec.env), "pre": [(cs.script_path(p), a) for p, a in spec.pre],
               "cuda_as_cpu": spec.cuda_as_cpu, "torchrun_env": False, "note": ""}
        if spec.seed_arg and spec.seeds:
            run["args"] += [spec.seed_arg, str(spec.seeds[0])]
        if spec.torchrun:
            run["torchrun_env"] = True
            run["note"] = ("one process with torchrun's environment (RANK=0, WORLD_SIZE=1) instead of "
                           f"{spec.torchrun} processes")
        if name == "ddp_multigpu_spawn":
            run["note"] = ("mp.spawn(nprocs=torch.cuda.device_count()) spawns no process on a CPU machine: what "
                           "runs is the script's __main__")
        out[name] = run
    out["train_resnet"] = {"script": "pt_original/train_resnet.py",
                           "args": ["--data-root", os.path.join(ROOT, "data"), "--max-steps", "3",
                                    "--max-test-batches", "1", "--batch-size", "8", "--test-batch-size", "16",
                                    "--log-interval", "1", "--save", "model.pt"],
                           "env": {}, "pre": [], "cuda_as_cpu": False, "torchrun_env": False, "note": ""}
    out["torchvision_models"] = {"script": None, "args": list(TV_MODELS), "env": {}, "pre": [], "cuda_as_cpu": False,
                                 "torchrun_env": False,
                                 "note": "built with weights=None; batch 2x3x64x64; forward+backward in train mode, "
                                         "then in eval mode, then an eval forward under no_grad"}
    return out


def _inline_dataloader_workers() -> None:
    """DataLoader(num_workers=N) iterates in this process: the tracer sees the user's Dataset code that workers
    would run (a worker's records would be lost)."""
    from adapter import backend

    class _InlineIter(backend.internal("SingleProcessDataLoaderIter")):
        def __init__(self, loader):
            backend.internal("BaseDataLoaderIter").__init__(self, loader)
            self._num_workers = 0
            self._dataset_fetcher = backend.internal("DatasetKind").create_fetcher(
                self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn, self._drop_last)

    setattr(*backend.internal_slot("MultiProcessingDataLoaderIter"), _InlineIter)


def _run_models(names: List[str]) -> None:
    import torch
    import torchvision
    torch.manual_seed(0)
    for name in names:
        model = getattr(torchvision.models, name)(weights=None, num_classes=10)
        x = torch.randn(2, 3, 64, 64)
        y = torch.tensor([1, 3])
        for mode in ("train", "eval"):
            getattr(model, mode)()
            model.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
        with torch.no_grad():
            model(x)


def trace_one(run: dict, out: str) -> int:
    """Run ``run`` (one value of :func:`runs`) in this process under the tracer (cwd: its run folder); write the
    rows, the script's exit code and its error (exceptions are caught and recorded) to ``out`` (JSON). Returns 0."""
    import runpy
    import traceback
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import run_under_torch
    sys.path.pop(0)
    from app.tools.parity.reference import declare_torchvision_ops
    declare_torchvision_ops()
    import torch  # noqa: F401
    import torchvision  # noqa: F401
    sp = site_packages()
    targets = set(corpus_files()) | {os.path.join(sp, f) for f in TV_MODEL_FILES + TV_OPS_FILES}
    tracer = Tracer(targets, {os.path.abspath(run_under_torch.__file__)}, sp)  # names torch's own methods
    if run["cuda_as_cpu"]:
        run_under_torch.cuda_as_cpu()
    _inline_dataloader_workers()
    code, error = 0, None
    if run["script"] is None:
        tracer.start()
        try:
            _run_models(run["args"])
        finally:
            tracer.stop()
    else:
        path = os.path.join(ROOT, run["script"])
        sys.argv = [path] + run["args"]
        sys.path.insert(0, os.path.dirname(path))
        tracer.start()
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:  # the script's own failure (siamese_network's numpy copy=None)
            code, error = 1, traceback.format_exception_only(type(exc), exc)[-1].strip()[:300]
        finally:
            tracer.stop()
    with open(out, "w") as f:
        json.dump({"rows": tracer.table.dump(), "exit": code, "error": error, "tracer_errors": tracer.errors[:20]}, f)
    return 0


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build(base: str, only: Optional[List[str]] = None, keep: bool = False, timeout: int = 300) -> dict:
    """The whole inventory: stage the data, trace every run (a subprocess each, this interpreter), scan the AST of
    every corpus file; returns the JSON document. Raises RuntimeError when a run's tracer could not write its rows,
    or without a pytorch/examples checkout (:func:`examples_dir`)."""
    examples_dir()
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import stage_corpus_data as staging
    sys.path.pop(0)
    from app.tools.parity.reference import declare_torchvision_ops
    declare_torchvision_ops()
    import torch
    import torchvision
    staging.stage(base, STAGE_SIZES)
    table = Table()
    run_info = []
    all_runs = runs()
    for name in only or list(all_runs):
        run = all_runs[name]
        folder = staging.make_run_dir(base, f"inv_{name}")
        os.makedirs(os.path.join(folder, "results"))
        # one intra-op thread: on a shared machine OpenMP's spinning threads made an LSTMCell loop 60x slower
        env = dict(os.environ, **run["env"], PYTHONPATH=ROOT, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        if run["torchrun_env"]:
            env.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", LOCAL_WORLD_SIZE="1", GROUP_RANK="0",
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))
        start = time.time()
        for i, (pre, pre_args) in enumerate(run["pre"]):  # traced too: they are corpus scripts
            table.merge(_trace_subprocess(f"{name}.pre{i}", dict(run, script=pre, args=pre_args, pre=[]), folder,
                                          env, timeout)["rows"])
        result = _trace_subprocess(name, run, folder, env, timeout)
        rows = result["rows"]
        table.merge(rows)
        run_info.append({"name": name, "script": run["script"] and relative(run["script"], ""),
                         "args": _shown_args(run["args"]),
                         "exit": result["exit"], "error": result["error"], "seconds": round(time.time() - start, 1),
                         "calls": sum(r["count"] for r in rows), "note": run["note"]})
        print(f"  {name}: exit {result['exit']}, {len(rows)} pairs, {run_info[-1]['seconds']} s"
              + (f" ({result['error']})" if result["error"] else "")
              + (f"; tracer errors: {result['tracer_errors'][:2]}" if result["tracer_errors"] else ""), flush=True)
        if not keep:
            import shutil
            shutil.rmtree(folder, ignore_errors=True)
    names = PublicNames()
    sp = site_packages()
    files = corpus_files() + [os.path.join(sp, f) for f in TV_MODEL_FILES + TV_OPS_FILES]
    for path in files:
        with open(path) as f:
            source = f.read()
        for api, sig, site in scan_source(source, relative(path, sp), names.canon):
            if "*" in parse(sig)[2]:  # f(*xs): the trace, where it ran the line, knows what xs held
                traced = [row for (a, _), row in table.rows.items() if a == api and site in row["sites"]]
                for row in traced:
                    row["source"].add("ast")
                if traced:
                    continue
            table.add(api, sig, site, "ast")
    entries = table.entries()
    return {"what": "distinct (API, signature) pairs used by pytorch/examples' corpus scripts, pt_original/ and "
                    "torchvision's ResNet/VGG/MobileNetV2/V3/EfficientNet definitions "
                    "(app/tools/conformance/inventory.py)",
            "torch": torch.__version__, "torchvision": torchvision.__version__,
            "python": sys.version.split()[0], "date": datetime.date.today().isoformat(),
            "command": "CORPUS_EXAMPLES=DIR .venv-ref/bin/python -m app.tools.conformance.inventory",
            "staging": STAGE_SIZES,
            "runs": run_info, "ast_files": [relative(p, sp) for p in files], "entries": entries}


def _shown_args(args: List[str]) -> List[str]:
    return [os.path.relpath(a, ROOT) if os.path.isabs(a) else a for a in args]


def _trace_subprocess(name: str, run: dict, folder: str, env: dict, timeout: int) -> dict:
    out = os.path.join(folder, f".{name}.rows.json")
    spec_file = os.path.join(folder, f".{name}.run.json")
    with open(spec_file, "w") as f:
        json.dump(run, f)
    cmd = [sys.executable, "-m", "app.tools.conformance.inventory", "--trace-one", spec_file, "--rows", out]
    proc = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"inventory: tracing {name} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    with open(out) as f:
        return json.load(f)


def write(doc: dict, path: str = OUT) -> None:
    """The JSON, compact: one entry per line."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    head = {k: v for k, v in doc.items() if k != "entries"}
    with open(path, "w") as f:
        f.write(json.dumps(head, separators=(",", ":"))[:-1] + ',"entries":[\n')
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in doc["entries"]))
        f.write("\n]}\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="+", help="trace these runs only (names of runs())")
    p.add_argument("--base", default=DEFAULT_BASE, help="staged data + run folders")
    p.add_argument("--out", default=OUT)
    p.add_argument("--keep-runs", action="store_true")
    p.add_argument("--trace-one", help=argparse.SUPPRESS)
    p.add_argument("--rows", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.trace_one:  # one run, in the subprocess build() starts: --trace-one RUN.json --rows OUT.json
        with open(args.trace_one) as f:
            return trace_one(json.load(f), args.rows)
    start = time.time()
    try:
        doc = build(args.base, args.only, args.keep_runs)
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 2
    write(doc, args.out)
    print(summary(doc["entries"]))
    print(f"wrote {os.path.relpath(args.out, ROOT)} ({os.path.getsize(args.out) // 1024} KB) in "
          f"{time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
