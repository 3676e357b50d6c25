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
from typing import Callable, Iterable, List, Sequence, Set, Tuple

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
        after: the names of the patches this one must be applied after: every patch whose replacement it wraps
            (it calls :func:`get_replaced` on an attribute that patch replaced), and any other real ordering need.
            :func:`install` checks that the registry's order keeps them (:func:`order_problems`), and
            tests/test_patch_order.py that every stacked replacement in a process is declared here
            (:func:`undeclared_stacks`). Default ``()``.
    """
    name: str
    summary: str
    phase: str
    apply: Callable[[], None]
    replaces: Tuple[str, ...] = ()
    effects: Tuple[str, ...] = ()
    optional: Tuple[str, ...] = ()
    after: Tuple[str, ...] = ()


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
    "grad_unwind",
    "optimizer",
    "lr_scheduler",
    "clip_grad",
    "device",
    "cuda_memory",
    "accelerator",
    "onnx",
    "tensorboard",
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
    "inplace_methods",
    "attention_eager",
    "constant_pad",
    "normalization",
    "float64_precision",
    "pow_square",
    "sdpa_result",
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
    "unique",
    "median",
    "index_dtype",
    "return_types",
    "cummax_grad",
    "zero_dim_ops",
    "broadcast_operands",
    "take_along_dim",
    "select_dim",
    "roll_empty",
    "scatter_reduce",
    "scatter_forms",
    "size_arguments",
    "quantile",
    "reflected_operators",
    "fmin_grad",
    "empty_linalg",
    "conv_unbatched",
    "repeat_interleave",
    "meshgrid_single",
    "round_decimals",
    "bucketize",
    "avg_pool_divisor",
    "conv_transpose_padding",
    "batch_norm_momentum",
    "interpolate_modes",
    "empty_batch",
    "margin_losses",
    "prelu_rrelu",
    "small_matrices",
    "empty_svd",
    "broadcast_results",
    "linalg_grads",
    "autograd_function",
    "activation_grads",
    "floor_divide",
    "cross_broadcast",
    "interpolate_nearest",
    "interpolate_linear",
    "index_put",
    "kl_div",
    "combinatorics",
    "bilinear_empty",
    "diagonal_scatter",
    "real_views",
    "index_fill_nextafter",
    "reduction_input",
    "empty_reductions",
    "vecdot",
    "norm_subgradient",
    "hinge_embedding",
    "result_dtypes",
    "op_arguments",
    "reduction_overloads",
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
    "host_join",
    "memory_format",
    "tensor_to",
    "state_dict",
    "foreach",
    "optim_state",
    "optim_state_map",
    "adam_steps",
    "lbfgs",
    "leaf_grad",
    "integer_requires_grad",
    "grad_assign",
    "variable",
    "einops_graph",
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
    "kthvalue_mode",
    "input_checks",
    "torch_errors",
    "nan_propagation",
    "activation_kinks",
]


def registry() -> List[Patch]:
    """All patches, in order. Raises ImportError if a listed module lacks a ``PATCH``."""
    return [importlib.import_module(f"{__name__}.{name}").PATCH for name in _MODULES]


PHASES = ("pre-mindspore", "pre-import", "post-import")  # the order install() is called in (app/bootstrap.py)


def order_problems(patches_list: Sequence[Patch]) -> List[str]:
    """What the order of ``patches_list`` (registry order) breaks of the patches' ``after`` declarations: one line
    per problem, empty when every patch comes after each one it names.

    A patch is applied after another when that one's phase comes earlier in :data:`PHASES`, or when both share a
    phase and that one comes earlier in the list. Also reported: an ``after`` naming an unknown patch, or the patch
    itself, and an unknown phase."""
    rank = {phase: i for i, phase in enumerate(PHASES)}
    where = {p.name: (rank.get(p.phase, -1), i) for i, p in enumerate(patches_list)}
    problems = []
    for i, patch in enumerate(patches_list):
        if patch.phase not in rank:
            problems.append(f"patch {patch.name!r}: unknown phase {patch.phase!r}")
            continue
        for name in patch.after:
            if name == patch.name:
                problems.append(f"patch {patch.name!r} names itself in after=")
            elif name not in where:
                problems.append(f"patch {patch.name!r}: after= names {name!r}, which is not a registered patch")
            elif where[name] > (rank[patch.phase], i):
                problems.append(f"patch {patch.name!r} must come after {name!r} (after=), but the registry applies "
                                f"{name!r} later: move {name!r} above {patch.name!r} in patches/__init__.py _MODULES")
    return problems


def undeclared_stacks(records: Iterable[_patch_attr.Record], patches_list: Sequence[Patch]) -> List[str]:
    """The stacked replacements that the later patch does not declare: for each attribute that two or more patches
    replaced in this process (``Record.stacked``, in application order), each patch must name in ``after`` the one
    whose replacement it replaced. One line per pair, naming both patches and the attribute; empty when all are
    declared. Records made outside a patch (``patch`` None) are not checked."""
    after = {p.name: set(p.after) for p in patches_list}
    problems = []
    for record in records:
        chain = [record.patch] + list(record.stacked)
        for below, above in zip(chain, chain[1:]):
            if below is None or above is None or above not in after or below in after[above]:
                continue
            owner = getattr(record.owner, "__qualname__",
                            getattr(record.owner, "__name__", type(record.owner).__name__))
            line = (f"patch {above!r} replaces {owner}.{record.name}, which patch {below!r} replaced before it: "
                    f"add after=({below!r},) to {above!r}'s Patch")
            if line not in problems:
                problems.append(line)
    return problems


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
    measure one patch's effect or to bisect a problem. Raises ValueError for an unknown phase or patch name, and
    when the registry's order breaks a patch's ``after`` (:func:`order_problems`, naming both patches).
    """
    if phase not in _installed:
        raise ValueError(f"unknown patch phase {phase!r}")
    if _installed[phase]:
        return
    patches = registry()
    problems = order_problems(patches)
    if problems:
        raise ValueError("the patch registry's order breaks declared after= dependencies:\n  " + "\n  ".join(problems))
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
