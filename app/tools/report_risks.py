"""``run.py --report``'s "known risks": constructs that made real PyTorch scripts fail or go wrong here.

Each kind was seen in an unchanged third-party script (pytorch/examples @77f55b9, issue 13; not in this repository:
``tests/fixtures/migration_report/`` holds scripts of ours with each idiom): a write through ``param.data`` that was
lost (regression), a ``loss.item()`` read after a compiled step and ``optimizer.step()`` that printed garbage (vae), two
models whose parameter names clash and a ``fake`` tensor reused by a later step (dcgan), forked DataLoader workers,
FakeData/ToPILImage, ``Dropout2d`` on a 2-D input (mnist_rnn), ``range`` indices and ``layer.forward(x)`` called
directly (mnist_forward_forward), L-BFGS and float64 (time_sequence_prediction), ``np.array(copy=None)``
(siamese_network). The scan finds them in the AST (:func:`scan`, nothing runs) and names each at the user's
``file:line``.

Whether a kind is *handled* is decided when the report is built, from the live, patched process (:func:`status`):

* ``patch:<name>``: the patch is registered in ``patches/`` and not disabled (``ADAPTER_DISABLE_PATCHES``);
* ``live:<torch name>``: the object that name resolves to in patched MindTorch was defined or replaced by code in
  ``patches/`` (:func:`provider`: the file of its function's code object), so an existing patch that does not yet
  cover the case (``patches/dataloader.py`` before it handled worker processes) is not taken for a fix;
* ``adapter:<module>[.<function>]``: an ``adapter/`` component that is always active (the compiled step, unique
  parameter names, recomputation of earlier steps' tensors), present when the module has that function.

A kind is then reported as "handled by patches/x.py: what it does" (the user knows it was a risk), or "NOT handled
(...)" with what goes wrong, or, for kinds without a fix, "no fix" with what to do. Kinds without a fix are also
named at run time: :func:`app.tools.migration_report.failure_hint` prints the finding at the line a run failed at,
and ``adapter/provenance.py`` warns with the line when a recomputed model has dropout.
"""
from __future__ import annotations

import ast
import dataclasses
import os
from typing import Dict, Iterable, List, Optional, Set, Tuple

from adapter import hooks
from adapter.step_rewrite import _writes
from adapter.torch_names import MINDTORCH_ROOTS, kind_of_class, missing_prefix, qualify, receiver_kind

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclasses.dataclass(frozen=True)
class Risk:
    """One kind of finding.

    Attributes:
        key: identifier (tests, :data:`RISKS`). title: what the construct is, a few words.
        handlers: what handles it (module docstring: ``patch:``, ``live:``, ``adapter:``); empty: no fix exists.
        handled: what happens when every handler is active. unhandled: what happens otherwise (or, without
            handlers, why there is no fix and what to do).
        label: the status word for a kind without handlers (``no fix``; ``as PyTorch 2.6+`` where PyTorch itself
            behaves so).
    """
    key: str
    title: str
    handlers: Tuple[str, ...]
    handled: str
    unhandled: str
    label: str = "no fix"


_R = [
    Risk("data_write", "in-place write to a parameter (through .data/.detach(), or p -= ... on a parameter)",
         ("patch:parameter_methods", "patch:inplace"),
         "the write reaches the parameter (MindTorch 0.4.0 lost it silently: the model did not train)",
         "MindTorch 0.4.0 loses the write silently: the parameter keeps its value"),
    Risk("stale_output", "a value the compiled step hands back, used after a later graph or optimizer.step()",
         ("adapter:graph_semantics.separate_shared_outputs",),
         "the step's outputs stay valid after later graphs and updates (before the fix they read freed memory: "
         "vae printed loss 0.0025 for 431)",
         "a value read after a later graph may read freed memory (vae printed loss 0.0025 for 431)"),
    Risk("several_models", "several models/optimizers in one process",
         ("adapter:param_names.unique", "adapter:step_binding._binding_key", "patch:module_attributes"),
         "parameters of different models with the same name (both own `main.0.weight`, `weight`...) get unique "
         "MindSpore names in gradients and graphs; state_dict keys and named_parameters() do not change. A step "
         "run with one model after another (k-fold, sweeps, a layer-wise `self.opt`) gets a reference step and "
         "graph per model; an optimizer kept as a module attribute is a plain attribute, as in PyTorch",
         "MindSpore refuses a parameter name twice in one gradient ('main.0.weight already exists'); a step run "
         "with a second model or optimizer reuses the first one's graph"),
    Risk("recomputed", "a model's output made before this step and differentiated through in it",
         ("adapter:provenance.substitute",),
         "recomputed inside the step, so the model that made it gets its gradients; that model's BatchNorm "
         "statistics are restored after the recomputation",
         "the model that made it gets no gradient through it, silently (dcgan's G never trained)"),
    Risk("recomputed_dropout", "a model's output made before this step and differentiated through in it, by a "
         "model with dropout", (),
         "",
         "recomputed inside the step (adapter/provenance.py), and the recomputation draws a NEW dropout mask "
         "(PyTorch reuses the first forward's): gradients differ; a warning names the line at run time. To match "
         "PyTorch, compute the output again in the step itself, or take the loss in the same step"),
    Risk("direct_forward", "module.forward(x) called directly, in a compiled step",
         ("adapter:step_graph.module_forward",),
         "counts as a call of the module: its parameters get gradients",
         "the eager call records no module call: 'no forward pass was recorded'"),
    Risk("direct_forward_outside", "module.forward(x) called directly, outside a compiled step", (),
         "",
         "runs, but the eager bridge opens its recording at module calls (model(x)): a backward() through "
         "only such calls, outside a compiled step, raises 'no forward pass was recorded'; write model(x)"),
    Risk("dataloader_workers", "DataLoader worker processes (num_workers > 0, multiprocessing_context)",
         ("live:torch.utils.data.dataloader._MultiProcessingDataLoaderIter.__init__",),
         "worker processes (fork and spawn) yield the batches num_workers=0 yields",
         "MindTorch's forked workers fail on tensors the parent made ('The pointer[mem_manager_] is null') and "
         "draw the shuffle order from other numbers; use num_workers=0"),
    Risk("fake_data", "torchvision FakeData",
         ("live:torchvision.datasets.FakeData.__getitem__",),
         "images and targets as torchvision's",
         "MindTorch's FakeData makes (C, H, W)-sized images the wrong way round: its transforms fail with "
         "'pic should not have > 4 channels'"),
    Risk("to_pil_image", "ToPILImage / to_pil_image",
         ("live:torchvision.transforms.functional.to_pil_image",),
         "CHW tensors converted as torchvision converts them",
         "MindTorch's to_pil_image takes a CHW tensor for HWC: 'pic should not have > 4 channels'"),
    Risk("compose_after_totensor", "a user transform after ToTensor() in Compose",
         ("live:torchvision.transforms.Compose.__call__",),
         "each transform gets the previous one's output, as in torchvision",
         "MindTorch's Compose swaps ToTensor for a numpy HWC version and makes the tensor at the end: this "
         "transform receives a numpy HWC array"),
    Risk("channel_dropout", "Dropout1d/2d/3d (channel dropout)",
         ("patch:dropout",),
         "PyTorch 2.13's mask shape for every input rank (2-D input: element-wise)",
         "MindTorch's Dropout2d needs a 4-D input (2-D raises) and drops whole samples of a 3-D input (silent)"),
    Risk("sequence_index", "indexing with range/list",
         ("patch:indexing",),
         "PyTorch's indexing rules (index tensors, result shapes)",
         "MindSpore rejects range in a tuple index and gives other shapes for some list indices"),
    Risk("float64", "float64 (double) tensors or models",
         ("patch:float64_precision",),
         "Python-float operands, mse/l1 losses and dot stay float64; inside a compiled step the operators "
         "(x * 0.1) still take a float32 scalar, and other losses (nll_loss, kl_div...) compute in float32",
         "MindSpore rounds Python-float operands to float32 and computes mse/l1 losses and dot in float32 "
         "(relative errors ~1e-8)"),
    Risk("closure_step", "optimizer.step(closure) (L-BFGS and other closure optimizers)",
         ("adapter:compiled_step",),
         "the closure's backward() is compiled as a step site; the optimizer's own update runs eagerly (it calls "
         "the closure several times per step)", "every closure call runs on the eager bridge"),
    Risk("closure_step_eager", "optimizer.step(closure), closure without a compiled step", (),
         "",
         "every closure call runs on the eager bridge (slower than a compiled step: forward and backward in the "
         "closure's own block make it one)"),
    Risk("torch_load", "torch.load without weights_only=", (), "",
         "weights_only=True by default: a file holding other objects than tensors, containers and dtypes (numpy "
         "arrays...) is refused, as by PyTorch >= 2.6 (scripts written for older PyTorch fail there too); for a "
         "trusted file pass weights_only=False or set TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1", label="as PyTorch 2.6+"),
    Risk("spawn", "torch.multiprocessing.spawn",
         ("patch:spawn",),
         "each child starts as run.py starts the script (MindSpore, patches, compiled steps); start-up takes "
         "seconds per child",
         "MindTorch's spawn children start without the import hook and patches"),
    Risk("numpy_copy_none", "np.array/np.asarray(..., copy=None)", (),
         "",
         "copy=None needs numpy >= 2; this environment has numpy {numpy} (MindSpore 2.5 requires < 2): 'ValueError: "
         "NoneType copy mode not allowed', as under PyTorch with numpy 1.x. No fix here; np.asarray(x) means "
         "the same in both numpy versions"),
]
RISKS: Dict[str, Risk] = {r.key: r for r in _R}

_INPLACE_EXCLUDED = {"requires_grad_", "share_memory_", "retain_grad_"}
_PARAM_LAYERS = {"Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
                 "ConvTranspose2d", "ConvTranspose3d", "LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell",
                 "Embedding", "EmbeddingBag", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm",
                 "Transformer", "TransformerEncoder", "TransformerDecoder", "MultiheadAttention", "Sequential",
                 "ModuleList", "ModuleDict"}
_CHANNEL_DROPOUT = {"torch.nn.Dropout1d", "torch.nn.Dropout2d", "torch.nn.Dropout3d", "torch.nn.functional.dropout1d",
                    "torch.nn.functional.dropout2d", "torch.nn.functional.dropout3d"}
_FLOAT64 = {"torch.float64", "torch.double"}
_MODEL_WRAPPERS = {"to", "cuda", "cpu", "double", "float", "half", "train", "eval", "requires_grad_"}


# --------------------------------------------------------------------------------------------------------------
# Status: which patch or component handles a kind, found in the live process


_provider_cache: Dict[str, Optional[str]] = {}


def _patch_of_file(path: str) -> str:
    """``patches/x.py`` for a file under ``patches/``; a private helper module (``patches/_lbfgs_pytorch.py``) or a
    file of a private helper package (``patches/_distributions/discrete.py``) is named by the registered
    patch whose source mentions it (``patches/lbfgs.py``, ``patches/distributions.py``), when one does."""
    rel = os.path.relpath(path, _ROOT)
    parts = rel.split(os.sep)
    base = os.path.splitext(parts[1])[0] if len(parts) > 1 else ""  # the module or package right under patches/
    if rel.startswith("patches" + os.sep) and base.startswith("_"):
        import patches
        for p in patches.registry():
            try:
                with open(os.path.join(_ROOT, "patches", p.name + ".py")) as f:
                    if base in f.read():
                        return f"patches/{p.name}.py"
            except OSError:
                continue
    return rel.replace(os.sep, "/")


def _resolve(qualname: str):
    """The live object ``qualname`` names in patched MindTorch (``torch`` -> ``mindtorch.torch``), or None."""
    import importlib
    try:
        if missing_prefix(qualname) is not None:
            return None
    except Exception:
        return None
    parts = qualname.split(".")
    obj = importlib.import_module(MINDTORCH_ROOTS[parts[0]])
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(".".join([MINDTORCH_ROOTS[parts[0]]] + parts[1:i + 1]))
    return obj


def _code_files(obj) -> List[str]:
    """The files of the code objects behind ``obj``: a function's, a property's getter/setter, a static or class
    method's, or (for a class) those of the functions and properties defined in its own ``__dict__``."""
    def of(value) -> List[str]:
        if isinstance(value, property):
            return [f for fn in (value.fget, value.fset) if fn is not None for f in of(fn)]
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        value = getattr(value, "__func__", value)  # bound methods
        code = getattr(value, "__code__", None)
        return [code.co_filename] if code is not None else []
    if isinstance(obj, type):
        return [f for v in vars(obj).values() for f in of(v)]
    return of(obj)


def provider(qualname: str, defined: bool = False) -> Optional[str]:
    """``patches/x.py`` when the live object ``qualname`` names (``torchvision.datasets.FakeData``,
    ``torch.accelerator.is_available``) was defined or replaced by a patch, else None (MindTorch's own, or
    missing). For a class: any function defined in its own namespace, or with ``defined=True`` only the class
    itself (``torch.optim.LBFGS``, not ``torch.optim.Adam`` whose ``state_dict`` a patch replaced). Cached per
    process until :func:`clear_cache`. A callable marked ``_adapter_passthrough`` (it behaves as MindTorch's unless
    an argument such as ``generator=`` is given) is not credited to its patch."""
    key = f"{qualname}|{defined}"
    if key in _provider_cache:
        return _provider_cache[key]
    found = None
    obj = _resolve(qualname)
    while obj is not None and hooks.get(obj, "error_boundary", False):  # patches/torch_errors.py: its error classes
        obj = getattr(obj, "__wrapped__", None)
    patches_dir = os.path.join(_ROOT, "patches") + os.sep
    if obj is not None and defined:
        import sys
        module = sys.modules.get(getattr(obj, "__module__", None) or "")
        path = os.path.abspath(getattr(module, "__file__", None) or "")
        found = _patch_of_file(path) if path.startswith(patches_dir) else None
    elif obj is not None and hooks.get(obj, "passthrough", False):
        found = None  # a wrapper that changes nothing for the arguments a scan sees (patches/generator.py)
    elif obj is not None:
        for path in _code_files(obj):
            if os.path.abspath(path).startswith(patches_dir):
                found = _patch_of_file(os.path.abspath(path))
                break
    _provider_cache[key] = found
    return found


def clear_cache() -> None:
    _provider_cache.clear()


def status(risk: Risk, enabled_patches: Set[str]) -> str:
    """The note shown for every finding of ``risk``: ``<title>: handled by <files>: <what it does>``, or
    ``NOT handled (no <what>): <what goes wrong>``, or ``no fix: <why, what to do>`` (handlers empty)."""
    if not risk.handlers:
        return f"{risk.title}: {risk.label}: {_fill(risk.unhandled)}"
    files, missing = [], []
    for handler in risk.handlers:
        kind, _, what = handler.partition(":")
        if kind == "patch":
            (files if what in enabled_patches else missing).append(f"patches/{what}.py")
        elif kind == "live":
            where = provider(what)
            if where:
                files.append(where)
            else:
                missing.append(f"patch: MindTorch's own {'.'.join(what.split('.')[-2:])} runs")
        elif kind == "adapter":
            module, _, attr = what.partition(".")
            try:
                import importlib
                present = not attr or hasattr(importlib.import_module(f"adapter.{module}"), attr)
            except ImportError:
                present = False
            (files if present else missing).append(f"adapter/{module}.py" + ("" if present or not attr else
                                                                             f" {attr}"))
    if missing:
        return f"{risk.title}: NOT handled (no {', '.join(missing)}): {_fill(risk.unhandled)}"
    return f"{risk.title}: handled by {', '.join(dict.fromkeys(files))}: {risk.handled}"


def _fill(text: str) -> str:
    if "{numpy}" in text:
        import numpy
        text = text.replace("{numpy}", numpy.__version__)
    return text


# --------------------------------------------------------------------------------------------------------------
# Project-wide facts: which user classes are nn.Modules, which of them hold dropout


def module_classes(files: Iterable[Tuple[ast.Module, Dict[str, str]]]) -> Tuple[Set[str], Set[str]]:
    """(names of user classes that are ``nn.Module`` subclasses, those of them that use dropout), over every
    scanned file. ``files``: (tree, torch import aliases). A class is a Module when a base is a ``torch.nn`` name
    (``nn.Module``, ``nn.Linear``) or another such user class; it uses dropout when its body names a torch dropout
    (``nn.Dropout``, ``F.dropout2d``...) or instantiates a user class that does."""
    bases: Dict[str, List[str]] = {}
    torch_base: Set[str] = set()
    dropout: Set[str] = set()
    calls: Dict[str, Set[str]] = {}
    for tree, aliases in files:
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for b in node.bases:
                qual = qualify(b, aliases)
                if qual and qual.startswith("torch.nn."):
                    torch_base.add(node.name)
                    if "dropout" in qual.lower():
                        dropout.add(node.name)
                elif isinstance(b, ast.Name):
                    bases.setdefault(node.name, []).append(b.id)
            for sub in ast.walk(node):
                if isinstance(sub, ast.Attribute):
                    qual = qualify(sub, aliases)
                    if qual and qual.startswith("torch.nn") and "dropout" in qual.split(".")[-1].lower():
                        dropout.add(node.name)
                elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                    calls.setdefault(node.name, set()).add(sub.func.id)
    modules = set(torch_base)
    changed = True
    while changed:
        changed = False
        for name, names in bases.items():
            if name not in modules and any(b in modules for b in names):
                modules.add(name)
                changed = True
        for name, called in calls.items():
            if name not in dropout and called & dropout:
                dropout.add(name)
                changed = True
        for name, names in bases.items():
            if name not in dropout and any(b in dropout for b in names):
                dropout.add(name)
                changed = True
    return modules, dropout & modules


# --------------------------------------------------------------------------------------------------------------
# The scan of one file


class RiskScan:
    """Finds the known risks in one parsed file. ``hits``: (risk key, line, what) after :meth:`run`.

    Args:
        tree: the file's AST. aliases: its torch/torchvision import aliases (``adapter.torch_names.aliases``).
        sites: its step sites (``adapter.step_rewrite.rewrite``; their line numbers are the file's).
        tensor_methods: names of PyTorch/MindTorch Tensor attributes (to tell in-place tensor methods).
        module_classes, dropout_classes: from :func:`module_classes`.
    """

    def __init__(self, tree: ast.Module, aliases: Dict[str, str], sites: list, tensor_methods: Set[str],
                 module_classes: Set[str], dropout_classes: Set[str]):
        self.tree, self.aliases, self.sites = tree, aliases, sites
        self.tensor_methods = tensor_methods
        self.module_classes, self.dropout_classes = module_classes, dropout_classes
        self.hits: List[Tuple[str, int, str]] = []
        self.parents: Dict[int, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
        self.numpy_names = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.Import)
                            for a in n.names if a.name == "numpy"}

    def run(self) -> List[Tuple[str, int, str]]:
        self.models = self._models()
        self.assigned_calls: Dict[str, str] = {}  # name -> torch/torchvision callable it was assigned a call of
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                qual = self._qual(node.value.func)
                if qual:
                    for t in node.targets:
                        if isinstance(t, ast.Name):
                            self.assigned_calls[t.id] = qual
        self._data_writes()
        self._stale_outputs()
        self._several_models()
        self._recomputed()
        self._walk_simple()
        return self.hits

    def _hit(self, key: str, line: int, what: str) -> None:
        self.hits.append((key, line, what))

    # helpers ---------------------------------------------------------------------------------------------------
    def _qual(self, node: ast.AST) -> Optional[str]:
        return qualify(node, self.aliases)

    def _inplace(self, method: str) -> bool:
        return method.endswith("_") and not method.startswith("_") and method in self.tensor_methods \
            and method not in _INPLACE_EXCLUDED

    def _in_class(self, node: ast.AST) -> Optional[ast.ClassDef]:
        parent = self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, ast.ClassDef):
                return parent
            parent = self.parents.get(id(parent))
        return None

    def _in_loop(self, node: ast.AST) -> bool:
        parent = self.parents.get(id(node))
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            if isinstance(parent, (ast.For, ast.While)):
                return True
            parent = self.parents.get(id(parent))
        return False

    @staticmethod
    def _short(node: ast.AST, limit: int = 40) -> str:
        text = ast.unparse(node)
        return text if len(text) <= limit else text[:limit - 3] + "..."

    def _block_of(self, line: int) -> Tuple[Optional[List[ast.stmt]], int]:
        """(the statement list holding the statement at ``line``, its index), or (None, -1)."""
        for node in ast.walk(self.tree):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(node, field, None)
                if isinstance(block, list):
                    for i, stmt in enumerate(block):
                        if isinstance(stmt, ast.stmt) and stmt.lineno == line:
                            return block, i
        return None, -1

    # in-place writes to parameters ------------------------------------------------------------------------------
    def _data_writes(self) -> None:
        param_vars: List[Tuple[str, ast.For]] = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.For):
                it = ast.unparse(node.iter)
                if "parameters()" in it or "params" in it:
                    target = node.target
                    if isinstance(target, ast.Tuple) and target.elts:
                        target = target.elts[-1]
                    if isinstance(target, ast.Name):
                        param_vars.append((target.id, node))
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and self._inplace(node.func.attr):
                recv = node.func.value
                through = (isinstance(recv, ast.Attribute) and recv.attr == "data") or \
                          (isinstance(recv, ast.Call) and isinstance(recv.func, ast.Attribute)
                           and recv.func.attr == "detach")
                if through or self._param_var(recv, node, param_vars):
                    self._hit("data_write", node.lineno, f"{self._short(recv)}.{node.func.attr}()")
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    base = t.value if isinstance(t, ast.Subscript) else t
                    op = "=" if isinstance(node, ast.Assign) else \
                        {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.Div: "/="}.get(type(node.op), "op=")
                    if isinstance(base, ast.Attribute) and base.attr == "data" \
                            and not (isinstance(base.value, ast.Name) and base.value.id == "self"):
                        # (`self.data = ...` is a dataset's or a class's own attribute, not a tensor's .data)
                        self._hit("data_write", node.lineno, f"{self._short(t)} {op} ...")
                    elif isinstance(node, ast.AugAssign) and self._param_var(t, node, param_vars):
                        self._hit("data_write", node.lineno, f"{self._short(t)} {op} ...")

    def _param_var(self, recv: ast.AST, node: ast.AST, param_vars) -> bool:
        """``recv`` is the loop variable of an enclosing ``for p in <...>.parameters()`` (or ``group['params']``)."""
        if not isinstance(recv, ast.Name):
            return False
        for name, loop in param_vars:
            if name == recv.id and loop.lineno <= node.lineno <= (loop.end_lineno or loop.lineno):
                return True
        return False

    # models and optimizers ------------------------------------------------------------------------------------
    def _model_call(self, value: ast.AST) -> Optional[str]:
        """The model class a value constructs (``Generator(ngpu).to(device)`` -> ``Generator``), or None."""
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr in _MODEL_WRAPPERS and isinstance(value.func.value, ast.Call):
            value = value.func.value
        if not isinstance(value, ast.Call):
            return None
        if isinstance(value.func, ast.Name) and value.func.id in self.module_classes \
                and value.func.id not in self.aliases:
            return value.func.id
        qual = self._qual(value.func)
        if qual and (qual.startswith("torchvision.models.") or
                     (qual.startswith("torch.nn.") and qual.split(".")[-1] in _PARAM_LAYERS)):
            return qual
        return None

    def _models(self) -> Dict[str, Tuple[int, str]]:
        """target text -> (first line, class) of model constructions outside class bodies."""
        models: Dict[str, Tuple[int, str]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and not self._in_class(node):
                cls = self._model_call(node.value)
                if cls:
                    models.setdefault(ast.unparse(node.targets[0]), (node.lineno, cls))
        return models

    def _optimizers(self) -> List[Tuple[str, int, str, str]]:
        """(target, line, class, where) of optimizer constructions; where: '' or 'one per <Class> instance' /
        'one per loop iteration'."""
        found, seen = [], set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call):
                qual = self._qual(node.value.func)
                if not (qual and kind_of_class(qual) == "optimizer"):
                    continue
                target = ast.unparse(node.targets[0])
                cls = self._in_class(node)
                where = f"one per {cls.name} instance" if cls else ("one per loop iteration"
                                                                   if self._in_loop(node) else "")
                if (target, where) not in seen:
                    seen.add((target, where))
                    found.append((target, node.lineno, qual, where))
        return found

    def _several_models(self) -> None:
        optimizers = self._optimizers()
        if len(self.models) < 2 and len(optimizers) < 2 and not any(o[3] for o in optimizers):
            return
        for target, (line, cls) in self.models.items():
            self._hit("several_models", line, f"{target} = {cls.split('.')[-1]}(...)")
        for target, line, qual, where in optimizers:
            self._hit("several_models", line, f"{target} = {qual}(...)" + (f" ({where})" if where else ""))

    # values handed back by a compiled step ---------------------------------------------------------------------
    def _boundary(self, stmt: ast.stmt, site_lines: Set[int]) -> Optional[str]:
        """What in ``stmt`` runs a graph or an update: ``optimizer.step()`` (line N) or another step site."""
        if stmt.lineno in site_lines:
            return f"the step of line {stmt.lineno}"
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step" \
                    and receiver_kind(node.func.value, {}) != "scheduler":
                return f"{self._short(node.func.value, 24)}.step() (line {node.lineno})"
            if isinstance(node, ast.stmt) and node is not stmt and node.lineno in site_lines:
                return f"the step of line {node.lineno}"
        return None

    def _stale_outputs(self) -> None:
        site_lines = {s.lineno for s in self.sites}
        reported: Set[Tuple[int, str]] = set()  # (line, name): named once, for the first site that made it
        for site in self.sites:
            block, index = self._block_of(site.lineno)
            if block is None:
                continue
            alive = set(site.outputs)
            after: Optional[str] = None
            for stmt in block[index + 1:]:
                if not alive:
                    break
                if after is None:
                    after = self._boundary(stmt, site_lines)
                if after is not None:
                    reads = sorted(((n.lineno, n.id) for n in ast.walk(stmt)
                                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in alive))
                    for line, name in reads:
                        if name in alive:
                            alive.discard(name)
                            if (line, name) not in reported:
                                reported.add((line, name))
                                self._hit("stale_output", line, f"{name} (from the compiled step of line "
                                                                f"{site.lineno}, read after {after})")
                alive -= _writes(stmt) if not isinstance(stmt, (ast.For, ast.While, ast.If, ast.With)) else \
                    {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    # tensors made by a model before the step that differentiates through them ----------------------------------
    def _recomputed(self) -> None:
        for site in self.sites:
            region_lines = [s.lineno for s in site.region]
            if not region_lines:
                continue
            first = min(region_lines)
            region_end = max((s.end_lineno or s.lineno) for s in site.region)
            block, index = self._block_of(first)
            if block is None:
                continue
            for name in site.free_names:
                made = self._reaching_model_call(name, block, index)
                if made is None:
                    continue
                model, line = made
                use = next((n.lineno for s in site.region for n in ast.walk(s)
                            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                            and not self._detached(n)), None)
                if use is None or use > region_end:
                    continue
                cls = self.models.get(model, (0, ""))[1]
                key = "recomputed_dropout" if cls in self.dropout_classes else "recomputed"
                self._hit(key, use, f"{name} (made by {model} at line {line}; the step of line {site.lineno})")

    def _detached(self, name_node: ast.Name) -> bool:
        parent = self.parents.get(id(name_node))
        if isinstance(parent, ast.Attribute) and parent.attr in ("detach", "data"):
            return True
        return False

    def _reaching_model_call(self, name: str, block: List[ast.stmt], index: int) -> Optional[Tuple[str, int]]:
        """(model, line) when the last assignment of ``name`` before ``block[index]`` (in this block, else in the
        enclosing ones) is ``name = <model>(...)`` with a model this file constructs, outside ``no_grad``."""
        while block is not None:
            for stmt in reversed(block[:index]):
                if isinstance(stmt, ast.Assign) and name in _writes(stmt):
                    value = stmt.value
                    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                            and value.func.id in self.models and len(stmt.targets) == 1 \
                            and isinstance(stmt.targets[0], ast.Name):
                        return value.func.id, stmt.lineno
                    return None
                if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                       for n in ast.walk(stmt)):
                    return None  # assigned in a nested block, a with no_grad(), a loop target...
            owner = self.parents.get(id(block[0])) if block else None
            if owner is None or isinstance(owner, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return None
            block, index = self._block_of(owner.lineno)
        return None

    # one-node patterns --------------------------------------------------------------------------------------------
    def _walk_simple(self) -> None:
        site_spans = []
        for s in self.sites:
            lines = [st.lineno for st in s.region] + [st.end_lineno or st.lineno for st in s.region]
            if lines:
                site_spans.append((min(lines), max(lines)))
        closures = {}
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                closures[node.name] = node
        inner = {id(n.value) for n in ast.walk(self.tree) if isinstance(n, ast.Attribute)}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute) and id(node) not in inner:
                qual = self._qual(node)
                if qual in _CHANNEL_DROPOUT:
                    self._hit("channel_dropout", node.lineno, qual)
                elif qual == "torchvision.datasets.FakeData":
                    self._hit("fake_data", node.lineno, qual)
                elif qual in ("torchvision.transforms.ToPILImage", "torchvision.transforms.functional.to_pil_image"):
                    self._hit("to_pil_image", node.lineno, qual)
                elif qual in ("torch.multiprocessing.spawn",):
                    self._hit("spawn", node.lineno, qual)
                elif qual in _FLOAT64 and not isinstance(self.parents.get(id(node)), ast.Compare):
                    self._hit("float64", node.lineno, qual)
            elif isinstance(node, ast.Name) and node.id in self.aliases and isinstance(node.ctx, ast.Load) \
                    and self.aliases[node.id] in _CHANNEL_DROPOUT | {"torchvision.datasets.FakeData"}:
                qual = self.aliases[node.id]
                self._hit("channel_dropout" if qual in _CHANNEL_DROPOUT else "fake_data", node.lineno, qual)
            if isinstance(node, ast.Call):
                self._call(node, site_spans, closures)
            elif isinstance(node, ast.Subscript):
                self._subscript(node)
            elif isinstance(node, ast.Dict):
                for k, v in zip(node.keys, node.values):
                    if isinstance(k, ast.Constant) and k.value == "num_workers" and not _is_zero(v):
                        self._hit("dataloader_workers", k.lineno, f"'num_workers': {self._short(v, 24)}")

    def _call(self, node: ast.Call, site_spans, closures) -> None:
        func = node.func
        qual = self._qual(func)
        for kw in node.keywords:
            if kw.arg == "num_workers" and not _is_zero(kw.value):
                self._hit("dataloader_workers", kw.value.lineno, f"num_workers={self._short(kw.value, 24)}")
            elif kw.arg == "multiprocessing_context":
                self._hit("dataloader_workers", kw.value.lineno,
                          f"multiprocessing_context={self._short(kw.value, 24)}")
        if qual == "torch.load" and not any(kw.arg == "weights_only" for kw in node.keywords):
            self._hit("torch_load", node.lineno, f"torch.load({self._short(node.args[0], 24) if node.args else ''})")
        if qual == "torchvision.transforms.Compose" and node.args and isinstance(node.args[0], (ast.List, ast.Tuple)):
            seen_to_tensor = False
            for item in node.args[0].elts:
                iq = self._qual(item.func) if isinstance(item, ast.Call) else self._qual(item)
                if iq is None and isinstance(item, ast.Name):  # normalize = transforms.Normalize(...) earlier
                    iq = self.assigned_calls.get(item.id)
                if iq in ("torchvision.transforms.ToTensor", "torchvision.transforms.PILToTensor"):
                    seen_to_tensor = True
                elif seen_to_tensor and (iq is None or iq == "torchvision.transforms.Lambda"):
                    self._hit("compose_after_totensor", item.lineno, self._short(item, 30))
        if qual is None and isinstance(func, ast.Attribute):
            method = func.attr
            if method == "forward" and not (isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name)
                                            and func.value.func.id == "super"):
                inside = any(a <= node.lineno <= b for a, b in site_spans)
                self._hit("direct_forward" if inside else "direct_forward_outside", node.lineno,
                          f"{self._short(func.value, 24)}.forward()")
            elif method == "double" and not node.args and not node.keywords:
                self._hit("float64", node.lineno, f"{self._short(func.value, 24)}.double()")
            elif method == "step" and node.args and not node.keywords:
                if receiver_kind(func.value, {}) == "optimizer" or isinstance(node.args[0], ast.Name) \
                        and node.args[0].id in closures:
                    closure = closures.get(node.args[0].id) if isinstance(node.args[0], ast.Name) else None
                    lines = [s.lineno for s in self.sites if closure is not None
                             and closure.lineno <= s.lineno <= (closure.end_lineno or closure.lineno)]
                    what = f"{self._short(func.value, 24)}.step({self._short(node.args[0], 16)})"
                    if lines:
                        self._hit("closure_step", node.lineno, f"{what}: backward() at line {lines[0]}")
                    else:
                        self._hit("closure_step_eager", node.lineno, what)
            elif method in ("array", "asarray") and isinstance(func.value, ast.Name) \
                    and func.value.id in self.numpy_names:
                if any(kw.arg == "copy" and isinstance(kw.value, ast.Constant) and kw.value.value is None
                       for kw in node.keywords) and _numpy_major() < 2:
                    self._hit("numpy_copy_none", node.lineno, f"{func.value.id}.{method}(..., copy=None)")

    def _subscript(self, node: ast.Subscript) -> None:
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            if isinstance(part, ast.List) or (isinstance(part, ast.Call) and isinstance(part.func, ast.Name)
                                              and part.func.id == "range"):
                self._hit("sequence_index", node.lineno, self._short(node, 40))
                return


def _is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in (0, None, False)


def _numpy_major() -> int:
    import numpy
    try:
        return int(numpy.__version__.split(".")[0])
    except ValueError:
        return 0
