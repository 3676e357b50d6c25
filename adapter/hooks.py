"""The declared cross-layer hooks: attributes one part of the adapter sets on a library object for another to read.

A patch often leaves a mark that another patch or the runtime reads later: ``patches/vision_data.py`` gives
``torchvision.datasets.MNIST`` a function that collates a whole batch, which ``patches/data_tensors.py``'s fetch
calls; ``patches/sgd.py`` marks ``torch.optim.SGD`` as keeping a float64 lr, which ``patches/optimizer.py`` reads.
Each such attribute used to be a bare ``_adapter_<name>`` string written in both places (74 names in 51 files,
issue 32 §4). Here each is declared once (:data:`HOOKS`: who sets it, on what, who reads it, what it holds), and code
names it through :func:`attr` / :func:`get`, which raise for an undeclared name, so a typo or a hook nobody declared
fails at once instead of reading as "not set".

The attribute on the object is still ``_adapter_<name>`` (:data:`PREFIX`), so a patch sets it with
``adapter.patching.patch_attr(owner, hooks.attr(name), value)`` (recorded, listed by ``--list-patches``) and a test
may ``monkeypatch`` it by that name. Names not yet moved here are listed in docs/architecture.md ("Cross-layer
hooks"); they keep working as before.

**Handed down** (:data:`HANDLERS`, issue 32 §3): what the application (``app/``, the top floor) gives the floors
below it, which may not import it: ``app/`` calls :func:`provide` and the runtime or a patch reads the value with
:func:`provided`, each name declared once, like the attribute hooks. :data:`VERBOSE_ENV` is the one setting the
application passes down through the environment (its children inherit it).

This module is a leaf of ``adapter/`` (standard library only): ``patches/`` and the runtime both use it.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict

PREFIX = "_adapter_"


@dataclasses.dataclass(frozen=True)
class Hook:
    """One declared hook attribute.

    Attributes:
        name: the name after :data:`PREFIX` (the attribute is ``PREFIX + name``).
        on: the object that carries it, as a PyTorch user names it (``"torchvision.datasets.MNIST"``, or a kind:
            ``"an optimizer class"``).
        holds: the value's type and meaning.
        set_by: the module(s) that set it.
        read_by: the module(s) that read it.
        graph_read: the module(s) whose graph-compiled code (a ``construct``/``forward`` MindSpore parses) reads it
            as ``self._adapter_<name>``: MindSpore's parser resolves a plain attribute, not a call of :func:`get`, so
            there the raw attribute stays (tests/test_hooks.py allows it in exactly these files). ``""``: none.
    """
    name: str
    on: str
    holds: str
    set_by: str
    read_by: str
    graph_read: str = ""


HOOKS: Dict[str, Hook] = {h.name: h for h in (
    Hook("collated_batch", "a dataset class (torchvision.datasets.MNIST and its family)",
         "function (dataset, indices: list of int) -> a collated numpy batch, or None to fetch per sample",
         "patches/vision_data.py", "patches/data_tensors.py (_MapDatasetFetcher.fetch)"),
    Hook("float64_lr", "an optimizer class (torch.optim.SGD, torch.optim.Adam)",
         "True: the class keeps each group's lr as a float64 Parameter, as PyTorch computes with a Python float",
         "patches/sgd.py, patches/adam.py", "patches/optimizer.py (add_param_group)"),
    Hook("step_count_unread", "an optimizer class (torch.optim.Rprop)",
         "True: the class's update does not read the global step count, so none is kept for it",
         "patches/rprop.py", "patches/optimizer.py (_global_step)"),
    # optimizer update hooks (patches/optimizer.py's step() and load_state_dict, and the fused compiled step)
    Hook("before_update", "an optimizer class (torch.optim.SGD, Adam, AdamW)",
         "function (self, indices: list of int or None = None) -> None: makes the state slots the coming update "
         "needs (momentum buffers switched on, amsgrad maxima); with indices, only for those parameters",
         "patches/sgd.py, patches/adam_slots.py",
         "patches/optimizer.py (step), patches/optim_state.py (load_state_dict), "
         "adapter/step_graph.py (StepBuilder.build: the fused step)"),
    Hook("after_update", "torch.optim.Optimizer (MindTorch's _Optimizer, so every optimizer)",
         "function (self) -> None: the bookkeeping after an update (the late first update warning)",
         "patches/optimizer.py", "adapter/compiled_step.py (after a fused update)"),
    Hook("new_slots", "an optimizer class (torch.optim.SGD, Adam, AdamW)",
         "function (self, attr: str, params: list, group: dict) -> list of Parameter or None: the class's own "
         "state slots for parameters added by add_param_group (None: the shared zeros)",
         "patches/sgd.py, patches/adam_slots.py", "patches/optimizer.py (_extend_slots)"),
    Hook("needs_slots", "an optimizer class (torch.optim.SGD, Adam, AdamW)",
         "function (self, saved_group: dict, saved_state: dict) -> bool: whether a loaded parameter needs full-size "
         "slots (then before_update runs with those indices)",
         "patches/sgd.py, patches/adam_slots.py", "patches/optim_state.py (load_state_dict)"),
    Hook("own_slots", "an optimizer class (torch.optim.Adam, AdamW)",
         "tuple of str: the attributes holding per-parameter state the class extends itself (its steps_grow hook), "
         "left alone by the shared extension",
         "patches/adam_steps.py", "patches/optimizer.py (_extend_slots)"),
    Hook("steps_diverge", "an optimizer class (torch.optim.Adam, AdamW)",
         "function (self) -> None: switch to per-parameter step counts before an update that skips some "
         "parameters and updates others",
         "patches/adam_steps.py", "patches/optimizer.py (_global_step, step)"),
    Hook("steps_grow", "an optimizer class (torch.optim.Adam, AdamW)",
         "function (self, n_old: int) -> None: per-parameter counts for parameters added by add_param_group",
         "patches/adam_steps.py", "patches/optimizer.py (_extend_slots)"),
    Hook("load_steps", "an optimizer class (torch.optim.Adam, AdamW)",
         "function (self, steps: list of float or None) -> None: take a loaded state's per-parameter step counts "
         "(switching to per-parameter mode when they differ)",
         "patches/adam_steps.py", "patches/optim_state.py (load_state_dict)"),
    Hook("step_counts", "an optimizer class (torch.optim.Adam, AdamW)",
         "function (self) -> list of int or None: each parameter's own step count (None in global-count mode)",
         "patches/adam_steps.py", "patches/optim_state.py (state_dict)"),
    Hook("counted", "an Adam / AdamW class (False) and a switched instance (True)",
         "bool: the optimizer keeps per-parameter step counts (a graph constant of its update)",
         "patches/adam.py, patches/adam_steps.py", "patches/adam_steps.py",
         graph_read="patches/adam.py, patches/adam_steps.py"),
    Hook("steps", "an Adam / AdamW instance in per-parameter mode",
         "mindspore.ParameterTuple of int32 0-d Parameters: each parameter's own step count",
         "patches/adam_steps.py", "patches/adam_steps.py, patches/optimizer.py (through own_slots)",
         graph_read="patches/adam.py, patches/adam_steps.py"),
    Hook("graph_variant", "an optimizer instance",
         "str: a fused compiled step's graph for this optimizer must compile again when it changes "
         "('per-parameter steps')",
         "patches/adam_steps.py", "adapter/step_graph.py (StepBuilder.build)"),
    Hook("compiled", "a compiled step's or forward's MindSpore Cell",
         "True: compiled once already (its graph is built; the next call runs it without the compile care)",
         "adapter/graph_compile.py (compile_and_trim)", "adapter/compiled_step.py (SiteRuntime._compiled)"),
    Hook("free_params", "an optimizer instance",
         "list of Parameter: its parameters no module owns (differentiated too)",
         "adapter/tape.py (register_optimizer)", "adapter/tape.py, patches/optimizer.py (add_param_group)"),
    # patches/normalization.py's BatchNorm forwards
    Hook("bn_primitive", "MindTorch's _BatchNorm class",
         "PythonAttribute holding MindSpore's BatchNorm primitive (training form) the lean forwards call",
         "patches/normalization.py", "adapter/graph_semantics.py (whether the patch ran)",
         graph_read="patches/normalization.py"),
    # patches/ddp.py's DistributedDataParallel, read by adapter/grad_sync.py
    Hook("world", "a patches/ddp.py DistributedDataParallel instance",
         "int: the process group's size", "patches/ddp.py", "patches/ddp.py, adapter/grad_sync.py"),
    Hook("param_ids", "a patches/ddp.py DistributedDataParallel instance",
         "frozenset of int: ids of the parameters it averages", "patches/ddp.py", "adapter/grad_sync.py"),
    Hook("pre_forward", "patches/ddp.py's DistributedDataParallel class",
         "function (self, grad_enabled: bool) -> None: PyTorch's pre-forward buffer sync",
         "patches/ddp.py", "patches/ddp.py (__call__), adapter/grad_sync.py (prepare_step)"),
    # run.py --report
    Hook("passthrough", "a replacement function",
         "True: the function behaves as MindTorch's own unless an argument we handle is given (--report credits "
         "no patch for such a call)",
         "patches/generator.py, patches/leaf_grad.py", "app/tools/report_risks.py"),
    Hook("error_boundary", "a patches/torch_errors.py wrapper",
         "True: it only re-raises the wrapped function's errors as PyTorch's classes (--report credits the function it "
         "wraps, __wrapped__)", "patches/torch_errors.py", "app/tools/report_risks.py"),
)}

#: ``_adapter_<name>`` attributes each set and read inside one module (not hooks between parts): name -> the module.
#: tests/test_hooks.py fails on any ``_adapter_`` attribute that is neither a declared hook nor listed here; move one to
#: :data:`HOOKS` when a second module starts to read it.
PRIVATE: Dict[str, str] = {
    "anomaly": "patches/anomaly.py", "arrays": "patches/data_tensors.py", "avg_pool": "adapter/graph_lean.py",
    "max_pool": "adapter/graph_lean.py", "base_str": "patches/printing.py", "batch_norm": "adapter/graph_semantics.py",
    "conv2d": "adapter/graph_semantics.py", "children": "adapter/graph_semantics.py",
    "compile_hook": "adapter/graph_semantics.py", "bn_fast": "patches/normalization.py",
    "bn_plain": "patches/normalization.py", "broadcast": "patches/ddp.py", "group": "patches/ddp.py",
    "rank": "patches/ddp.py", "params": "patches/ddp.py", "cache_sig": "adapter/compile_cache.py",
    "counted_update": "patches/adam_steps.py",
    "covered": "patches/optimizer.py", "gapped": "patches/optimizer.py", "pending": "patches/optimizer.py",
    "deepcopy_top": "patches/state_dict.py", "generator": "patches/generator.py",
    "initialized": "adapter/backend_compat.py", "requires_grad": "adapter/backend_compat.py",
    "rebound": "adapter/backend_compat.py", "memo": "patches/numpy_buffer_dtype.py",
    "numpy": "patches/vision_data.py", "original": "patches/median.py", "previous": "patches/device.py",
    "return_fields": "patches/graph_return_fields.py", "return_type": "patches/return_types.py",
    "source": "patches/inplace.py", "view_base": "patches/inplace_autograd.py", "input_write": "adapter/graph_syntax.py",
}


@dataclasses.dataclass(frozen=True)
class Handler:
    """One value the application hands down (:func:`provide`, :func:`provided`).

    Attributes:
        name: its name.
        holds: the value's type and meaning.
        provided_by: the ``app/`` module that provides it.
        used_by: the module(s) below ``app/`` that read it, and what they do without it.
    """
    name: str
    holds: str
    provided_by: str
    used_by: str


HANDLERS: Dict[str, Handler] = {h.name: h for h in (
    Handler("failure_hints", "function (exc: BaseException, script path: str) -> str: what to print after the user's "
            "traceback (a torch API MindTorch lacks, the known risks at the traceback's lines), '' for nothing",
            "app/launcher.py (app/tools/migration_report.py's missing_api_hint and failure_hint)",
            "adapter/script_run.py (run_script, on the script's failure; nothing printed without it)"),
    Handler("spawn_child_main", "str: the dotted module a Python multiprocessing *spawn* child runs as its main module "
            "(it sets the process up as run.py did, then runs the parent's script as __mp_main__)",
            "app/bootstrap.py (app.mp_main)",
            "patches/mp_start.py (get_preparation_data; without it the child re-imports the script bare, as Python "
            "does)"),
)}
_PROVIDED: Dict[str, Any] = {}

#: "1": run.py --verbose: MindSpore's and MindTorch's own log lines are shown (set by app/bootstrap.py, read by
#: patches/log_noise.py; children inherit it)
VERBOSE_ENV = "ADAPTER_VERBOSE"


def _handler(name: str) -> Handler:
    if name not in HANDLERS:
        raise KeyError(f"handler {name!r} is not declared in adapter/hooks.py HANDLERS; declare it there (who provides "
                       "it, what it holds, who reads it)")
    return HANDLERS[name]


def provide(name: str, value: Any) -> None:
    """Hand ``value`` down as the declared handler ``name`` (the application, ``app/``, calls this). Raises KeyError
    naming adapter/hooks.py when ``name`` is not declared in :data:`HANDLERS`."""
    _handler(name)
    _PROVIDED[name] = value


def provided(name: str, default: Any = None) -> Any:
    """The value the application provided as handler ``name``, or ``default`` when it provided none (a test or a
    tool that runs the runtime without ``app/``). Raises KeyError for an undeclared ``name``."""
    _handler(name)
    return _PROVIDED.get(name, default)


def attr(name: str) -> str:
    """The attribute name of the declared hook ``name``: ``"collated_batch"`` -> ``"_adapter_collated_batch"``.

    Raises KeyError naming adapter/hooks.py when ``name`` is not declared in :data:`HOOKS`."""
    if name not in HOOKS:
        raise KeyError(f"hook {name!r} is not declared in adapter/hooks.py HOOKS; declare it there (who sets it, "
                       "on what, who reads it)")
    return PREFIX + name


def get(owner: Any, name: str, default: Any = None) -> Any:
    """``getattr(owner, attr(name), default)``: the declared hook's value on ``owner`` (a class or an instance;
    class hooks are read through ``type(obj)`` by the caller). Raises KeyError for an undeclared ``name``."""
    return getattr(owner, attr(name), default)
