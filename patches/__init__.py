"""The patch layer: one module per patched torch concept, each registered in :data:`PATCHES`.

A patch is applied in one of three phases:

* ``"pre-mindspore"``: before MindSpore is imported (what MindSpore's extension modules look up once, at import);
* ``"pre-import"``: before MindTorch is imported (import-time fixes, via ``patches/_import_hooks.py``);
* ``"post-import"``: after ``import torch`` resolves to MindTorch, on MindTorch's classes and functions.

``python run.py --list-patches`` prints this list. Patches never edit site-packages: they replace attributes at
start-up, in this process only. :func:`install` is idempotent.
"""
from __future__ import annotations

import dataclasses
import importlib
import os
from typing import Callable, List, Set, Tuple

from adapter.patching import get_original, get_replaced, is_patched, patch_attr, restore  # noqa: F401  (patch API)
from adapter import patching as _patch_attr


@dataclasses.dataclass(frozen=True)
class Patch:
    """One patched concept.

    Attributes:
        name: short identifier, the module name under ``patches/``.
        summary: one line, what the patch makes work (shown by ``--list-patches``).
        phase: ``"pre-mindspore"``, ``"pre-import"`` or ``"post-import"`` (see module docstring).
        apply: callable with no arguments that installs the patch; it replaces attributes only through
            :func:`patch_attr` (``adapter/patching.py``), and is safe to call twice.
        replaces: the dotted names the patch replaces, as a PyTorch user writes them (``"torch.Tensor.backward"``;
            ``torch`` = MindTorch's; a trailing ``.*`` = names computed at start-up on that owner). Each must
            exist, and ``apply`` must patch exactly these (tests/test_patch_contract.py).
        effects: what the patch does besides replacing attributes (an import hook, a context setting), one short
            phrase each, for ``--list-patches``.
        optional: the names of ``replaces`` that ``apply`` leaves alone where its feature detection finds the fix
            not needed on the installed MindSpore/MindTorch (e.g. MindSpore 2.10.0 for a 2.5-dev fix); each must
            still exist (tests/test_patch_contract.py).
    """
    name: str
    summary: str
    phase: str
    apply: Callable[[], None]
    replaces: Tuple[str, ...] = ()
    effects: Tuple[str, ...] = ()
    optional: Tuple[str, ...] = ()


# The registry, in application order within each phase.
_MODULES = [
    "compat_register_utils",
    "numpy_buffer_dtype",
    "jit_third_party",
    "parser_debug_log",
    "range_dtype",
    "module_call",
    "module_attributes",
    "backward",
    "optimizer",
    "lr_scheduler",
    "clip_grad",
    "device",
    "cuda_memory",
    "accelerator",
    "onnx",
    "quantizable_linear",
    "backends",
    "torch_compile",
    "vision_data",
    "vision_transforms",
    "fake_data",
    "transforms_v2",
    "max_pool",
    "dropout",
    "rnn_dropout",
    "embedding",
    "softmax_0d",
    "normalization",
    "float64_precision",
    "pow_square",
    "bce",
    "adam",
    "sgd",
    "adam_slots",
    "rprop",
    "optimizer_graph",
    "dataloader",
    "data_tensors",
    "mp_start",
    "random_sampler",
    "random_draws",
    "generator",
    "anomaly",
    "amp",
    "serialization",
    "sort",
    "median",
    "index_dtype",
    "return_types",
    "empty_reductions",
    "result_dtypes",
    "op_arguments",
    "graph_return_fields",
    "parameter_methods",
    "parameter_state",
    "tensor_transpose",
    "einsum",
    "tensor_repr",
    "inplace",
    "parameter_data",
    "parameter_storage",
    "inplace_autograd",
    "inplace_keeps_grad",
    "indexing",
    "memory_format",
    "state_dict",
    "foreach",
    "optim_state",
    "optim_state_map",
    "adam_steps",
    "lbfgs",
    "leaf_grad",
    "grad_assign",
    "distributed",
    "ddp",
    "data_parallel",
    "distributed_sampler",
    "spmm",
    "fx_wrap",
    "torchscript",
    "nn_fusion",
    "spawn",
    "distributions",
    "tensor_data",
    "printing",
    "module_repr",
    "internal_cells",
    "log_noise",
]


def registry() -> List[Patch]:
    """All patches, in order. Raises ImportError if a listed module lacks a ``PATCH``."""
    return [importlib.import_module(f"{__name__}.{name}").PATCH for name in _MODULES]


_installed = {"pre-mindspore": False, "pre-import": False, "post-import": False}


def disabled_names() -> Set[str]:
    """The patch names listed in the environment variable ``ADAPTER_DISABLE_PATCHES`` (comma-separated), which
    :func:`install` skips. Not checked against the registry here (``install`` raises for unknown names)."""
    return {n.strip() for n in os.environ.get("ADAPTER_DISABLE_PATCHES", "").split(",") if n.strip()}


def enabled() -> List[Patch]:
    """The registered patches that :func:`install` applies in this process: :func:`registry` less the disabled."""
    off = disabled_names()
    return [p for p in registry() if p.name not in off]


def install(phase: str) -> None:
    """Apply every patch of ``phase`` (``"pre-mindspore"``, ``"pre-import"`` or ``"post-import"``) once.

    Patches named in the environment variable ``ADAPTER_DISABLE_PATCHES`` (comma-separated) are skipped: a way to
    measure one patch's effect or to bisect a problem. Raises ValueError for an unknown phase or patch name.
    """
    if phase not in _installed:
        raise ValueError(f"unknown patch phase {phase!r}")
    if _installed[phase]:
        return
    patches = registry()
    disabled = disabled_names()
    unknown = disabled - {p.name for p in patches}
    if unknown:
        raise ValueError(f"ADAPTER_DISABLE_PATCHES names unknown patches: {sorted(unknown)}; "
                         "see 'run.py --list-patches'")
    for patch in patches:
        if patch.phase == phase and patch.name not in disabled:
            with _patch_attr.applying(patch.name):
                patch.apply()
    _installed[phase] = True
