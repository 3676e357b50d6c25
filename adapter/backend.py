"""The one module that touches MindSpore's and MindTorch's private names (issue 16: a fenced backend).

Everything else in ``adapter/``, ``patches/``, ``run.py`` and ``bench/`` reaches a private MindSpore or MindTorch
name (a leading underscore under ``mindspore.*`` / ``mindtorch.*`` / MindTorch's ``torch.*``: ``_c_expression``,
``_pynative_executor``, ``mindspore._extends``, ``_get_cache_prim``, ``mindspore.common._stub_tensor``, a Cell's
``_params``, ...) through a helper here; ``tests/test_backend.py`` scans the tree and fails, with file:line, on a
private name used anywhere else. So when MindSpore or MindTorch changes, what breaks is listed in this file.

Two kinds of helpers:

* named functions for the MindSpore internals whose *behaviour* we depend on (the PyNative executor that
  ``adapter/tape.py`` records and differentiates with, the primitive cache, the mixed-precision strategy stack, the
  graph executor that ``adapter/compile_cache.py`` wraps, fork handling, ...). Where MindSpore versions differ, they
  detect the feature (``inspect.signature``, ``hasattr``), not the version string;
* :data:`INTERNALS`, a table of the private classes, functions and modules reached as plain objects (MindTorch's
  ``_BatchNorm`` base class, its DataLoader iterators, ``torch.serialization._load``, ...): a stable key, where the
  object lives, and why we need it. :func:`internal` returns the object, :func:`internal_slot` the (owner, name)
  pair a patch assigns to; ``tests/test_backend.py`` checks that every entry resolves on the installed versions.

Every helper was checked on mindspore-dev 2.5.0.dev20250119 and mindtorch 0.4.0, and on mindspore 2.10.0 with the
same MindTorch (:data:`TESTED`; what 2.10 removed from under MindTorch is put back by ``adapter/backend_compat.py``,
the other module of this fence). Importing this
module checks the installed versions against :data:`TESTED` (:func:`check_versions`, reading the versions from the
installed files without importing MindTorch): an untested version stops the run with one line
(:class:`UntestedVersionError`, a ``SystemExit``) unless ``ADAPTER_ALLOW_UNTESTED_MINDSPORE=1`` /
``ADAPTER_ALLOW_UNTESTED_MINDTORCH=1`` is set, which turns it into a one-line warning on stderr. A package that is
not installed at all is not checked (the real-PyTorch reference environment, ``.venv-ref``, imports
``app/tools/parity/recorder.py`` and through it this module).

Nothing here imports MindSpore or MindTorch at module level: helpers import on first use, so this module is
imported before MindSpore by ``patches/`` (``run.py``'s "pre-mindspore" phase) at no cost.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from typing import Dict, Mapping, Optional, Tuple

# -- versions --------------------------------------------------------------------------------------------------------
TESTED: Dict[str, Tuple[str, ...]] = {
    "mindspore": ("2.5.0.dev20250119", "2.10.0"),  # 2.10.0 through adapter/backend_compat.py (issue 17)
    "mindtorch": ("0.4.0",),
}
ALLOW_UNTESTED_ENV = {
    "mindspore": "ADAPTER_ALLOW_UNTESTED_MINDSPORE",
    "mindtorch": "ADAPTER_ALLOW_UNTESTED_MINDTORCH",
}
# where each package keeps its version, read as text so that checking does not import the package
_VERSION_FILES = {"mindspore": "version.py", "mindtorch": "package_info.py"}


class UntestedVersionError(SystemExit):
    """An installed MindSpore or MindTorch version that this adapter was not tested on (a ``SystemExit``: the run
    stops with this one line, no traceback). Raised by :func:`check_versions`."""


def _version_from_file(package: str) -> Optional[str]:
    """``package``'s ``__version__`` read from its installed version file without importing the package (MindTorch's
    ``__init__`` imports all of MindTorch); None when the package is not installed or the file has no version."""
    module = sys.modules.get(package)
    if module is not None and isinstance(getattr(module, "__version__", None), str):
        return module.__version__
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], _VERSION_FILES[package])
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except OSError:
        return None
    if package == "mindspore":  # __version__ = '2.5.0.dev20250119'
        found = re.search(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", source, re.M)
        return found.group(1) if found else None
    namespace: dict = {}  # mindtorch/package_info.py: MAJOR/MINOR/PATCH/PRE_RELEASE -> __version__, no imports
    try:
        exec(compile(source, path, "exec"), namespace)  # noqa: S102 (the installed package's own file)
    except Exception:  # noqa: BLE001 (an unreadable version file: reported as unknown)
        return None
    version = namespace.get("__version__")
    return version if isinstance(version, str) else None


def installed_versions() -> Dict[str, Optional[str]]:
    """``{"mindspore": version or None, "mindtorch": version or None}`` (None: not installed)."""
    return {package: _version_from_file(package) for package in TESTED}


_warned: set = set()


def check_versions(versions: Optional[Mapping[str, Optional[str]]] = None,
                   environ: Optional[Mapping[str, str]] = None) -> list:
    """Check ``versions`` (default: :func:`installed_versions`) against :data:`TESTED`.

    Returns the one-line warnings printed (to stderr, once per package and process) for untested versions allowed
    by ``ADAPTER_ALLOW_UNTESTED_<PACKAGE>=1`` in ``environ`` (default ``os.environ``). A package given as None (not
    installed) is not checked.

    Raises:
        UntestedVersionError: an untested version without its override; the message is one line naming the
            version, the tested ones and the variable.
    """
    versions = installed_versions() if versions is None else versions
    environ = os.environ if environ is None else environ
    warnings = []
    for package, tested in TESTED.items():
        version = versions.get(package)
        if version is None or version in tested:
            continue
        variable = ALLOW_UNTESTED_ENV[package]
        line = (f"{package} {version} is not a version this adapter was tested on (tested: {', '.join(tested)}); "
                f"set {variable}=1 to run anyway")
        if environ.get(variable) != "1":
            raise UntestedVersionError(f"run.py: {line}")
        warning = f"run.py: warning: {package} {version} is untested ({variable}=1; tested: {', '.join(tested)})"
        warnings.append(warning)
        if (package, version) not in _warned:
            _warned.add((package, version))
            print(warning, file=sys.stderr)
    return warnings


# -- the private-object table ----------------------------------------------------------------------------------------
# key -> (module, attribute path in it or "" for the module itself, why we need it). Checked on TESTED's versions.
INTERNALS: Dict[str, Tuple[str, str, str]] = {
    # MindSpore
    "StubTensor": ("mindspore.common._stub_tensor", "StubTensor",
                   "the class of PyNative op outputs (and of MindTorch tensors' stub): a tensor type besides Tensor"),
    "stub_method": ("mindspore.common._stub_tensor", "_stub_method",
                    "wraps a Tensor method for StubTensor (patches/dataloader.py re-wraps asnumpy after a fork)"),
    "Parser": ("mindspore._extends.parse.parser", "Parser",
               "the graph compiler's Python front end (patches/graph_return_fields.py rewrites its AST)"),
    "parse": ("mindspore._extends.parse", "", "the graph compiler's Python front-end package (resolve_symbol, ...)"),
    "checkparam": ("mindspore._checkparam", "",
                   "MindSpore's argument validator (patches/sgd.py repeats SGD.__init__'s checks with it)"),
    "parse.Namespace": ("mindspore._extends.parse.namespace", "Namespace",
                        "the parser's namespace of a function's globals"),
    "parser": ("mindspore._extends.parse.parser", "", "its parser module (third_party_checker, resolve_symbol)"),
    "fork_utils": ("mindspore._c_expression", "fork_utils",
                   "MindSpore's own before/after-fork hooks (patches/dataloader.py's fork context)"),
    "inner_ops": ("mindspore.ops.operations._inner_ops", "",
                  "convert_to_ms_tensor / convert_to_adapter_tensor, the primitives MindTorch's casts apply"),
    "primexpr": ("mindspore.ops.primitive", "_primexpr",
                 "a Python function evaluated at compile time in graphs (as MindTorch's own numel)"),
    "AmpLevel": ("mindspore._c_expression.amp", "AmpLevel", "mixed-precision levels of the strategy stack"),
    "push_amp_strategy": ("mindspore._c_expression.amp", "push_amp_strategy",
                          "opens an autocast region in PyNative (patches/amp.py)"),
    "pop_amp_strategy": ("mindspore._c_expression.amp", "pop_amp_strategy", "closes it"),
    "create_amp_strategy": ("mindspore._c_expression.amp", "create_amp_strategy",
                            "an autocast region of a compiled step (adapter/compiled_step.py)"),
    "DtypeType": ("mindspore._c_expression.typing", "Type",
                  "the base class of MindSpore's dtype objects (mindspore.float32's class is a subclass)"),
    "ms_optimizer.preprocess_param_group": (
        "mindspore.experimental.optim.optimizer", "Optimizer._preprocess_param_group",
        "MindSpore's check of an optimizer's param group (patches/leaf_grad.py rejects plain tensors there)"),
    "ms_process.child_at_fork": ("mindspore.multiprocessing", "Process._child_at_fork_func",
                                 "what MindSpore's Process runs in a forked child (patches/dataloader.py)"),
    "CellGraphExecutor": ("mindspore.common.api", "_CellGraphExecutor", "the graph executor class (bench/ timing)"),
    "rprop_opt": ("mindspore.experimental.optim.rprop", "_rprop_opt",
                  "Rprop's per-parameter update, a MultitypeFuncGraph its implementation maps (patches/rprop.py)"),
    "compile_config": ("mindspore._extends.parse.compile_config", "",
                       "COMPILE_PROFILE, the compile profiler switch (bench/compile_phases.py)"),
    # MindTorch (most mirror PyTorch's own private names)
    "Optimizer": ("mindtorch.torch.optim.optimizer", "_Optimizer", "the base class of MindTorch's optimizers"),
    "DropoutNd": ("mindtorch.torch.nn.modules.dropout", "_DropoutNd", "the base class of the Dropout modules"),
    "torch.DropoutNd": ("torch.nn.modules.dropout", "_DropoutNd",
                        "the same, through whatever ``torch`` is (real PyTorch in the parity reference run)"),
    "NormBase": ("mindtorch.torch.nn.modules.batchnorm", "_NormBase", "base of BatchNorm and InstanceNorm"),
    "BatchNorm": ("mindtorch.torch.nn.modules.batchnorm", "_BatchNorm", "base of BatchNorm{1,2,3}d"),
    "BatchNorm1d.check_input_dim": ("mindtorch.torch.nn.modules.batchnorm", "BatchNorm1d._check_input_dim",
                                    "BatchNorm1d's rank check (2-D or 3-D input)"),
    "BatchNorm2d.check_input_dim": ("mindtorch.torch.nn.modules.batchnorm", "BatchNorm2d._check_input_dim",
                                    "BatchNorm2d's rank check (4-D input)"),
    "LazyNormBase": ("mindtorch.torch.nn.modules.batchnorm", "_LazyNormBase", "base of the LazyBatchNorm modules"),
    "InstanceNorm": ("mindtorch.torch.nn.modules.instancenorm", "_InstanceNorm", "base of InstanceNorm{1,2,3}d"),
    "RNNBase.run_recurrent": ("mindtorch.torch.nn.modules.rnn", "RNNBase._run_recurrent",
                              "RNN/GRU's layer loop with the inter-layer dropout (patches/rnn_dropout.py)"),
    "LSTM.run_recurrent": ("mindtorch.torch.nn.modules.rnn", "LSTM._run_recurrent",
                           "LSTM's layer loop with the inter-layer dropout (patches/rnn_dropout.py)"),
    "pair": ("mindtorch.torch.nn.modules.utils", "_pair", "torch.nn.modules.utils._pair (int -> (int, int))"),
    "Size": ("mindtorch.torch._C.Size", "Size", "torch.Size's class"),
    "memory_format": ("mindtorch.torch._C", "memory_format", "torch.memory_format's class"),
    "C": ("mindtorch.torch._C", "", "torch._C (Generator, ...)"),
    "tensor_inplace_assign": ("mindtorch.torch.tensor", "_tensor_inplace_assign",
                              "MindTorch's in-place write of a result into a tensor"),
    "common_inner": ("mindtorch.torch.common._inner", "", "MindTorch's out=/in-place helpers module"),
    "out_inplace_assign": ("mindtorch.torch.common._inner", "_out_inplace_assign", "the out= write"),
    "inplace_assign_pynative": ("mindtorch.torch.common._inner", "_inplace_assign_pynative",
                                "F.<activation>(inplace=True)'s write into the input"),
    "out_inplace_assign_with_adapter_tensor": ("mindtorch.torch.common._inner",
                                               "_out_inplace_assign_with_adapter_tensor", "the out= write"),
    "dtype_or_default": ("mindtorch.torch._default_dtype", "_dtype_or_default", "dtype=None -> the default dtype"),
    "dtype_names": ("mindtorch.torch.common.dtype", "_msdtype2typeDict", "MindSpore dtype -> torch dtype name"),
    "get_pg_name": ("mindtorch.torch.distributed.distributed_c10d", "_get_pg_name", "a process group's name"),
    "c10d_world": ("mindtorch.torch.distributed.distributed_c10d", "_world", "the default-group state"),
    "ReduceOp": ("mindtorch.torch.distributed._distributed_c10d", "ReduceOp", "torch.distributed.ReduceOp"),
    "get_reduce_string": ("mindtorch.torch.nn.functional", "_get_reduce_string",
                          "size_average/reduce -> reduction"),
    "get_embedding_padding_idx": ("mindtorch.torch.nn.functional", "_get_embedding_padding_idx",
                                  "F.embedding's padding_idx normalization"),
    "LRScheduler_Common": ("mindtorch.torch.optim.lr_scheduler", "_LRScheduler_Common",
                           "a base of MindTorch's lr schedulers"),
    "module_extra_state_suffix": ("mindtorch.torch.nn.modules.module", "_EXTRA_STATE_KEY_SUFFIX",
                                  "the state_dict key suffix of get_extra_state"),
    "IncompatibleKeys": ("mindtorch.torch.nn.modules.module", "_IncompatibleKeys",
                         "load_state_dict's return type"),
    "global_forward_hooks": ("mindtorch.torch.nn.modules.module", "_global_forward_hooks",
                             "register_module_forward_hook's registry"),
    "global_forward_pre_hooks": ("mindtorch.torch.nn.modules.module", "_global_forward_pre_hooks",
                                 "register_module_forward_pre_hook's registry"),
    "data.collate": ("mindtorch.torch.utils.data._utils.collate", "", "default_collate's module"),
    "data.fetch": ("mindtorch.torch.utils.data._utils.fetch", "", "the dataset fetchers' module"),
    "data.worker": ("mindtorch.torch.utils.data._utils.worker", "", "the DataLoader worker module"),
    "MapDatasetFetcher": ("mindtorch.torch.utils.data._utils.fetch", "_MapDatasetFetcher",
                          "fetches a batch from a map-style dataset"),
    "worker_loop": ("mindtorch.torch.utils.data._utils.worker", "_worker_loop", "a DataLoader worker's main loop"),
    "BaseDataLoaderIter": ("mindtorch.torch.utils.data.dataloader", "_BaseDataLoaderIter",
                           "the DataLoader iterators' base"),
    "SingleProcessDataLoaderIter": ("mindtorch.torch.utils.data.dataloader", "_SingleProcessDataLoaderIter",
                                    "num_workers=0's iterator"),
    "MultiProcessingDataLoaderIter": ("mindtorch.torch.utils.data.dataloader", "_MultiProcessingDataLoaderIter",
                                      "num_workers>0's iterator"),
    "DatasetKind": ("mindtorch.torch.utils.data.dataloader", "_DatasetKind", "map-style / iterable fetcher factory"),
    "SharedQueue": ("mindtorch.torch.utils.data.dataloader", "_SharedQueue",
                    "MindTorch's shared-memory result queue of the workers"),
    "serialization.open_file_like": ("mindtorch.torch.serialization", "_open_file_like", "torch.load's file open"),
    "serialization.is_zipfile": ("mindtorch.torch.serialization", "_is_zipfile", "zip checkpoint test"),
    "serialization.open_zipfile_reader": ("mindtorch.torch.serialization", "_open_zipfile_reader",
                                          "zip checkpoint reader"),
    "serialization.is_torchscript_zip": ("mindtorch.torch.serialization", "_is_torchscript_zip",
                                         "TorchScript archive test"),
    "serialization.load": ("mindtorch.torch.serialization", "_load", "zip checkpoint unpickling"),
    "serialization.legacy_load": ("mindtorch.torch.serialization", "_legacy_load", "pre-1.6 checkpoint unpickling"),
    "serialization.TypedStorage": ("mindtorch.torch.serialization", "_TypedStorage",
                                   "torch.storage.TypedStorage of the weights_only allowlist"),
    "serialization.UntypedStorage": ("mindtorch.torch.serialization", "_UntypedStorage",
                                     "torch.storage.UntypedStorage of the weights_only allowlist"),
    "serialization.maybe_decode_ascii": ("mindtorch.torch.serialization", "_maybe_decode_ascii",
                                         "a persistent id's type name (bytes or str) as str"),
    "tensor.rebuild_from_type_v2": ("mindtorch.torch._tensor", "_rebuild_from_type_v2",
                                    "torch._tensor._rebuild_from_type_v2 of the weights_only allowlist"),
    "torch.utils_module": ("mindtorch.torch._utils", "",
                           "torch._utils (its _rebuild_* functions are on the weights_only allowlist)"),
    "torch.dynamo": ("mindtorch.torch", "_dynamo", "torch._dynamo (patches/torch_compile.py provides one)"),
    "adamw.run_adamw_opt": ("mindspore.experimental.optim.adamw", "_run_adamw_opt",
                            "AdamW's per-parameter update (patches/adam_steps.py calls it with each parameter's count)"),
}

PROVIDED = frozenset({"torch.dynamo"})  # slots that our patches fill, absent from MindTorch itself


def _resolve(key: str):
    """(owner, last name) of :data:`INTERNALS` ``key``; raises KeyError for an unknown key, ImportError /
    AttributeError when the installed MindSpore/MindTorch lacks it."""
    module_name, path, _ = INTERNALS[key]
    owner = importlib.import_module(module_name)
    if not path:
        return None, owner
    *parents, name = path.split(".")
    for part in parents:
        owner = getattr(owner, part)
    return owner, name


def internal(key: str):
    """The private object :data:`INTERNALS` names ``key`` (a class, function, module or value), looked up now.

    Raises:
        KeyError: ``key`` is not in :data:`INTERNALS`.
        ImportError, AttributeError: the installed MindSpore/MindTorch has no such object.
    """
    owner, name = _resolve(key)
    return name if owner is None else getattr(owner, name)


def internal_slot(key: str) -> Tuple[object, str]:
    """``(owner, attribute name)`` of :data:`INTERNALS` ``key``, for a patch that replaces the object
    (``setattr(*internal_slot(key), new)`` / ``patch_attr(*internal_slot(key), new)``). Raises as :func:`internal`."""
    owner, name = _resolve(key)
    if owner is None:
        raise KeyError(f"{key!r} names a module, not an attribute")
    return owner, name


# -- tensors ---------------------------------------------------------------------------------------------------------
_tensor_types: Optional[tuple] = None


def tensor_types() -> tuple:
    """``(mindspore.Tensor, StubTensor)``: the classes of MindSpore tensors. A PyNative op's output is a
    ``StubTensor`` (``mindspore/common/_stub_tensor.py``, not a ``Tensor`` subclass in 2.5) until it is synced, and
    MindTorch's tensors wrap one; ``isinstance(x, mindspore.Tensor)`` alone misses them."""
    global _tensor_types
    if _tensor_types is None:
        import mindspore
        _tensor_types = (mindspore.Tensor, internal("StubTensor"))
    return _tensor_types


def is_tensor(value) -> bool:
    """Whether ``value`` is a MindSpore tensor of any class in :func:`tensor_types` (Parameters included)."""
    return isinstance(value, tensor_types())


def is_stub_tensor(value) -> bool:
    """Whether ``value`` is a ``StubTensor`` (an op output not yet synced to a ``Tensor``)."""
    return isinstance(value, tensor_types()[1])


def requires_grad_flag(tensor) -> bool:
    """MindTorch's ``_requires_grad`` flag of ``tensor`` as stored (False when absent), without the
    ``requires_grad`` property's work (MindTorch: ``mindtorch/torch/tensor.py``)."""
    return bool(getattr(tensor, "_requires_grad", False))


def data_ptr(tensor) -> int:
    """The address of ``tensor``'s device buffer (MindSpore's ``Tensor._data_ptr``): equal for two tensors that
    share one buffer."""
    return tensor._data_ptr()


# -- cells and optimizers --------------------------------------------------------------------------------------------
def cell_params(cell) -> dict:
    """A MindSpore Cell's own (not its children's) parameter dict, ``Cell._params`` (MindTorch's ``Module`` keeps its
    parameters there): name -> Parameter or None. The dict itself, not a copy."""
    return cell._params


def cell_children(cell) -> dict:
    """A MindSpore Cell's child-cell dict, ``Cell._cells`` (what ``named_modules`` walks): name -> Cell or None."""
    return cell._cells


def cell_has_hooks(cell) -> bool:
    """Whether a MindSpore Cell has forward or forward-pre hooks of its own (``Cell._forward_hook`` /
    ``_forward_pre_hook``, where MindTorch's ``register_forward_hook`` puts them)."""
    return bool(getattr(cell, "_forward_hook", None) or getattr(cell, "_forward_pre_hook", None))


def has_cell_dicts(obj) -> bool:
    """Whether ``obj`` has a Cell's ``_params`` and ``_cells`` dicts (:func:`cell_params`, :func:`cell_children`)."""
    return hasattr(obj, "_params") and hasattr(obj, "_cells")


def optimizer_state_map(optimizer) -> dict:
    """A MindTorch optimizer's ``_state_map`` (MindSpore attribute name -> PyTorch state name)."""
    return optimizer._state_map


def add_optimizer_state_slot(optimizer, attr: str, pt_name: str) -> None:
    """Add ``attr`` (a MindSpore state attribute of ``optimizer``) -> ``pt_name`` (PyTorch's state key) to a
    MindTorch optimizer's ``_state_map``, the slots its ``state_dict()`` saves and its ``load_state_dict()``
    restores (``mindtorch/torch/optim/optimizer.py`` ``_ms_state_dict`` / ``_ms_load_state_dict``). An entry
    already there is kept."""
    optimizer._state_map.setdefault(attr, pt_name)


def optimizer_params_list(optimizer) -> dict:
    """A MindSpore optimizer Cell's ParameterTuple attributes: attribute name -> its ParameterTuple / list (a new
    dict). MindSpore 2.5's ``Cell.__setattr__`` keeps them in ``_params_list``; 2.10's in the instance ``__dict__``
    (its ``_params_list`` stays empty): both are read."""
    from mindspore import ParameterTuple
    found = dict(getattr(optimizer, "_params_list", None) or {})
    for name, value in vars(optimizer).items():
        if name not in found and isinstance(value, ParameterTuple):
            found[name] = value
    return found


# -- primitives ------------------------------------------------------------------------------------------------------
_get_cache_prim = None


def cached_primitive(primitive_class, *args, **kwargs):
    """``primitive_class(*args, **kwargs)``, built once per arguments and reused (MindSpore's
    ``mindspore.ops._primitive_cache._get_cache_prim``, as MindSpore's and MindTorch's functional ops do): a
    primitive made inside a graph is then a constant, not a new object per call."""
    return (_get_cache_prim or primitive_cache())(primitive_class)(*args, **kwargs)


def primitive_cache():
    """MindSpore's ``_get_cache_prim`` function itself, for graph code (a function the compiled step may parse):
    there ``primitive_cache()(cls)(*args)`` must be MindSpore's own function, which builds the primitive in the
    graph (``mindspore/ops/_primitive_cache.py``: ``_new_prim_for_graph``), not :func:`cached_primitive`, which the
    graph compiler cannot parse. Bind it in Python (at patch time) and call the bound object in graph code."""
    global _get_cache_prim
    if _get_cache_prim is None:
        from mindspore.ops._primitive_cache import _get_cache_prim as get_cache_prim
        _get_cache_prim = get_cache_prim
    return _get_cache_prim


# -- the PyNative executor (adapter/tape.py, compiled_step, patches/ddp, anomaly, module_call, inplace_autograd) -----
_executor = None


def pynative_executor():
    """MindSpore's PyNative executor (``mindspore.common.api._pynative_executor``), which records eager ops for
    ``mindspore.grad`` and holds the grad mode (``torch.no_grad()`` under MindTorch)."""
    global _executor
    if _executor is None:
        from mindspore.common.api import _pynative_executor
        _executor = _pynative_executor
    return _executor


def grad_enabled() -> bool:
    """Whether gradients are recorded now (False inside ``torch.no_grad()``): the executor's ``enable_grad()``."""
    return (_executor or pynative_executor()).enable_grad()


def set_grad_enabled(enabled: bool) -> None:
    """Set the executor's grad mode (what ``torch.set_grad_enabled`` sets under MindTorch)."""
    (_executor or pynative_executor()).set_enable_grad(enabled)


def grad_flag() -> bool:
    """Whether a gradient recording is open (ours, ``adapter/tape.py``, or MindSpore's own ``value_and_grad``)."""
    return (_executor or pynative_executor()).grad_flag()


def set_grad_flag(flag: bool) -> None:
    """Open (True) / close (False) the executor's recording flag."""
    (_executor or pynative_executor()).set_grad_flag(flag)


def new_graph(marker, *inputs) -> None:
    """Start recording eager ops as the graph of ``marker`` (a plain function) with ``inputs`` as its inputs."""
    (_executor or pynative_executor()).new_graph(marker, *inputs)


def end_graph(marker, output, *inputs) -> None:
    """End ``marker``'s recording with ``output`` as its result."""
    (_executor or pynative_executor()).end_graph(marker, output, *inputs)


_grad_takes_has_aux: Optional[bool] = None


def run_grad(marker, grad_operation, weights, grad_position, *inputs):
    """Differentiate ``marker``'s recorded graph with ``grad_operation`` (a ``GradOperation``) w.r.t. ``weights``
    (a ParameterTuple) and the inputs at ``grad_position`` (None: by the operation), given ``inputs``; returns what
    the operation returns. ``_PyNativeExecutor.grad(obj, grad, weights, grad_position, *args)`` in 2.5; later
    MindSpore added a ``has_aux`` parameter before ``*args`` (MindSpore 2.10): detected from the signature, passed
    as False."""
    global _grad_takes_has_aux
    executor = _executor or pynative_executor()
    if _grad_takes_has_aux is None:
        import inspect
        try:
            _grad_takes_has_aux = "has_aux" in inspect.signature(type(executor).grad).parameters
        except (TypeError, ValueError):
            _grad_takes_has_aux = False
    if _grad_takes_has_aux:
        return executor.grad(marker, grad_operation, weights, grad_position, False, *inputs)
    return executor.grad(marker, grad_operation, weights, grad_position, *inputs)


def clear_pynative_resources() -> None:
    """Free the PyNative executor's caches of eager-op kernels and graphs (``clear_res``; MindSpore itself calls it
    after a failed ``jit`` compile), keeping the grad mode as it was."""
    executor = _executor or pynative_executor()
    enabled = executor.enable_grad()
    executor.clear_res()
    if executor.enable_grad() != enabled:  # grad mode is the user's (torch.no_grad()): kept as it was
        executor.set_enable_grad(enabled)


def set_async_for_graph(flag: bool) -> None:
    """``PyNativeExecutor::SetAsyncForGraph`` (effective only in GRAPH_MODE): False makes PyNative's frontend queue
    wait for work instead of spinning (``app/launcher.py`` ``quiet_pipeline``)."""
    (_executor or pynative_executor()).set_async_for_graph(flag)


# -- the graph executor and context (adapter/compile_cache.py, adapter/graph_semantics.py) -------------------------
def graph_executor():
    """The C++ graph executor that compiles and runs Cells and jit functions
    (``mindspore.common.api._cell_graph_executor._graph_executor``)."""
    from mindspore.common import api
    return api._cell_graph_executor._graph_executor


def graph_executor_classes() -> list:
    """The C++ executor classes whose ``compile`` method is MindSpore's graph compile entry point: ``GraphExecutor_``
    (``mindspore/common/api.py`` ``_CellGraphExecutor.compile`` and, on 2.5, ``_MindsporeFunctionExecutor.compile``
    call ``self._graph_executor.compile(obj, args, kwargs, phase, ...)`` only when the phase, keyed by the input
    signature, has no graph yet) and, where it exists (2.10: ``mindspore/graph/api.py`` jit functions),
    ``JitExecutor_``. ``adapter/graph_semantics.py`` hooks their ``compile`` (a class attribute of a pybind11 class,
    settable from Python: measured on 2.5-dev and 2.10)."""
    from mindspore import _c_expression
    return [cls for cls in (getattr(_c_expression, "GraphExecutor_", None), getattr(_c_expression, "JitExecutor_", None))
            if cls is not None and "compile" in cls.__dict__]


def set_graph_executor(executor) -> None:
    """Replace :func:`graph_executor` (``adapter/compile_cache.py`` puts its gate in front of it)."""
    from mindspore.common import api
    from adapter import patching
    patching.patch_attr(api._cell_graph_executor, "_graph_executor", executor)


def context_setters():
    """``(context object, {key: setter(ctx, value)})``: the setters ``mindspore.set_context`` calls per key
    (``mindspore/context.py``: ``ctx.setters[key](ctx, value)``); ``(None, {})`` where this MindSpore has none."""
    from mindspore import context
    ctx = context._context() if hasattr(context, "_context") else None
    return ctx, (getattr(ctx, "setters", None) or {})


# -- checks -----------------------------------------------------------------------------------------------------------
def missing_internals() -> list:
    """The :data:`INTERNALS` keys that do not resolve on the installed MindSpore/MindTorch, with why (for the
    version check of the next MindSpore; ``tests/test_backend.py``)."""
    missing = []
    for key in INTERNALS:
        try:
            if key in PROVIDED:
                internal_slot(key)  # we set it: its owner must exist
            else:
                internal(key)
        except (ImportError, AttributeError) as exc:
            missing.append(f"{key}: {type(exc).__name__}: {exc}")
    return missing


check_versions()
