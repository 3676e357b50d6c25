"""``torch.save`` / ``torch.load``: PyTorch's file format both ways, atomic saves, ``weights_only=True`` by default.

MindTorch 0.4.0 reads PyTorch's zip checkpoints, but

* its ``torch.save`` pickles MindTorch's own objects (``mindtorch.torch._utils._rebuild_mindtorch_tensor`` of a
  numpy array and a MindSpore dtype): real PyTorch cannot load what a script saved here
  (``RuntimeError: ... hasRecord("version")``);
* it writes straight into the target file: a process killed mid-save leaves a truncated checkpoint, and the
  resume that follows fails (``BadZipFile``) or, worse, the previous good checkpoint is gone;
* ``torch.load(..., weights_only=True)`` raises ``TypeError`` (the keyword reaches ``pickle.Unpickler``), and
  without it any pickle runs arbitrary code on load.

This patch (module concept: checkpoint files) makes

* ``torch.save(obj, f)`` write PyTorch's own zip layout (``adapter/torchfile.py``): tensors as
  ``torch._utils._rebuild_tensor_v2`` of typed storages, ``nn.Parameter`` as ``torch._utils._rebuild_parameter``,
  dtypes as ``torch.float32``..., ``torch.Size`` / ``torch.device`` as PyTorch's. Real PyTorch loads it with
  ``weights_only=True`` (or ``mmap=True``: storages are 64-byte aligned). ``f`` a path: written to a temporary file
  in the same folder, fsynced and renamed over ``f`` (atomic on POSIX), so ``f`` is always the old or the new
  checkpoint. ``f`` a file object: written to it directly, as PyTorch does.
* ``torch.load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args)``
  as PyTorch 2.13: ``weights_only`` defaults to True unless a ``pickle_module`` is given;
  ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` / ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` ("1", "y", "yes", "true") force it as
  there, with PyTorch's UserWarning (at the user's line) and its RuntimeError when both are set. A weights_only
  load runs a restricted unpickler with PyTorch's rules (``patches/_restricted_unpickler.py``, ours): its
  allowlist (:data:`adapter.torchfile.WEIGHTS_ONLY_GLOBALS`: tensors, containers, dtypes, ``torch.Size``...,
  resolved to MindTorch's objects) plus ``add_safe_globals``, its opcode set (pickle protocol 2: a file written
  with ``pickle_protocol=4`` is refused, with PyTorch's protocol warning), its rules for ``BUILD``/``NEWOBJ``.
  Python values (numbers, strings, bytes, lists, dicts, sets, complex), optimizer state dicts and model state
  dicts load; a numpy array, an ``argparse.Namespace`` or a user class is refused with ``pickle.UnpicklingError``
  carrying PyTorch's message (``Weights only load failed ... Unsupported global: GLOBAL numpy.core.multiarray.
  _reconstruct ...``) after the user's ``file:line`` and the file. ``map_location`` (str, device, dict,
  callable) is accepted and ignored: tensors load onto the MindSpore device in use. ``mmap`` is accepted (the file
  is read, not mapped).
* ``torch.serialization.add_safe_globals``, ``get_safe_globals``, ``clear_safe_globals``, ``safe_globals``
  (context manager), ``get_unsafe_globals_in_checkpoint``, as in PyTorch.
* a whole module (``torch.save(model)``): MindTorch's modules are MindSpore cells holding MindSpore objects that
  PyTorch's modules do not have (a ``Cast`` operator, an ``inspect.Signature``; an LSTM's recurrent cells). Their
  operators are written as ``adapter.torchfile.rebuild_primitive(cls, init_attrs)`` (plain pickling restored an
  operator without its C++ part: the loaded LSTM failed at its first call), and the weights_only loader admits
  these framework internals by itself (``_framework_internal`` in patches/_restricted_unpickler.py): the user
  allowlists the module classes only, as in PyTorch (``safe_globals([nn.LSTM, ...])``). The module classes are
  written under MindTorch's names (``mindtorch.torch.nn.modules.rnn.LSTM``): such a file loads here, not under real
  PyTorch.

Known differences: tensors that share one storage (views, tied weights) are saved as separate storages (MindSpore
tensors do not share memory); ``_use_new_zipfile_serialization=False`` still writes the zip format (PyTorch loads
both); a custom ``pickle_module`` (dill) falls back to MindTorch's own save format.

Replaces: ``torch.save``, ``torch.load`` (and ``torch.serialization``'s), ``torch.serialization.add_safe_globals`` /
``get_safe_globals`` / ``clear_safe_globals`` / ``safe_globals`` / ``get_unsafe_globals_in_checkpoint``.
"""
from __future__ import annotations

import os
import pickle
import re
from typing import Optional

from . import Patch, get_original, patch_attr

# PyTorch 2.13's texts around a weights_only refusal (torch/serialization.py: UNSAFE_MESSAGE, load's DOCS_MESSAGE,
# _get_wo_message's frames): scripts and tests compare them
UNSAFE_MESSAGE = ("In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from "
                  "`False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely "
                  "succeed, but it can result in arbitrary code execution. Do it only if you got the file from a "
                  "trusted source.")
DOCS_MESSAGE = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
                "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
_TWO_OPTIONS = ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. \n\t(1) {unsafe}\n\t(2) "
                "Alternatively, to load with `weights_only=True` please check the recommended steps in the "
                "following error message.\n\tWeightsUnpickler error: {message}")
_FILE_AN_ISSUE = ("Please file an issue with the following so that we can make `weights_only=True` compatible with "
                  "your use case: WeightsUnpickler error: ")


def _get_wo_message(message: str) -> str:
    """The text ``torch.load`` raises for the restricted unpickler's ``message``, framed as PyTorch 2.13 frames it:
    a refused global gets the two ways out (``weights_only=False``, or allowlisting); a subsystem to import gets
    the message and the unsafe-load note only; a blocked module gets the note; anything else also asks for an
    issue. All but the import case end with the documentation link."""
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return _TWO_OPTIONS.format(unsafe=UNSAFE_MESSAGE, message=message) + DOCS_MESSAGE
    if re.search(r"(\S+) must be (\S+) to load", message):
        return f"Weights only load failed. {message}\n {UNSAFE_MESSAGE}\n"
    blocked = re.search(r"whose module (\S+) is blocked", message) is not None
    return (f"Weights only load failed. {UNSAFE_MESSAGE}\n" + ("" if blocked else _FILE_AN_ISSUE) + "\n\n" + message
            + DOCS_MESSAGE)


def _describe(f) -> str:
    if isinstance(f, (str, os.PathLike)):
        return f"'{os.fspath(f)}'"
    name = getattr(f, "name", None)
    return f"'{name}'" if isinstance(name, str) else "the file object"


def _tensor_hook():
    import mindspore as ms
    import numpy as np
    from mindtorch.torch.nn import Parameter
    from adapter import backend
    from adapter.torchfile import TensorData, tensor_data_from_numpy

    def hook(obj) -> Optional[TensorData]:
        """MindTorch tensors, parameters and MindSpore tensors -> TensorData (dtype from the numpy array)."""
        if not backend.is_tensor(obj):
            return None
        if obj.dtype == ms.bfloat16:  # no bfloat16 in numpy here: the upper 16 bits of the float32 value
            bits = (obj.astype(ms.float32).asnumpy().view(np.uint32) >> 16).astype(np.uint16)
            data = TensorData(bits, "bfloat16")
        else:
            data = tensor_data_from_numpy(obj.asnumpy())
        return data._replace(requires_grad=bool(getattr(obj, "requires_grad", False)),
                             parameter=isinstance(obj, Parameter))

    return hook


def _global_hook():
    from adapter.torchfile import DTYPES, Global
    from adapter import backend
    from adapter.patching import installed_name
    dtype_type = backend.internal("DtypeType")  # the base class of MindSpore's dtypes
    names = set(DTYPES) | {"uint16", "uint32", "uint64"}

    def hook(obj) -> Optional[Global]:
        """MindTorch/MindSpore dtypes -> ``torch.<name>`` (``mindtorch.float32``, ``Float32`` -> ``torch.float32``);
        a function a patch installed (``F.relu`` kept as a module attribute) -> the name it was installed under
        (``mindtorch.torch.nn.functional.relu``: its own names do not lead back to it, ``installed_name``)."""
        if isinstance(obj, dtype_type):
            name = str(obj).split(".")[-1].lower().rstrip("_")
            if name in names:
                return Global("torch", name)
            return None
        installed = installed_name(obj)
        if installed is not None:
            return Global(*installed)
        return None

    return hook


def _reduce_hook():
    from mindspore.ops import Primitive
    from mindtorch.torch.types import device
    from adapter import backend
    from adapter.torchfile import Global
    Size = backend.internal("Size")

    def hook(obj) -> Optional[tuple]:
        if type(obj) is Size:
            return (Global("torch", "Size"), (tuple(int(d) for d in obj),))
        if type(obj) is device:
            return (Global("torch", "device"), (str(obj),))
        if isinstance(obj, Primitive):  # inside a whole saved module: rebuilt by its constructor on load
            return (Global("adapter.torchfile", "rebuild_primitive"), (type(obj), dict(obj.init_attrs)))
        return None

    return hook


_hooks: dict = {}  # torchfile.write's hooks (tensor, global, reduce, replace), made by apply()
_LearningRate = None  # patches.optimizer.LearningRate, set by apply() (the replace hook runs for every object)


def _replace_lr(obj):
    """``param_groups[i]['lr']`` reads as a float subclass here (``patches/optimizer.py``); PyTorch has a float."""
    return float(obj) if type(obj) is _LearningRate else obj


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` in PyTorch's zip format (see module docstring); atomic when ``f`` is a path.

    Raises:
        AttributeError: ``f`` is neither a path nor a writable file object (as PyTorch).
        RuntimeError: ``f`` is a path whose folder does not exist (PyTorch's ``Parent directory ... does not
            exist.``; the temporary file's FileNotFoundError before, naming ``.NAME.PID.XXXXXXXX.tmp``).
        pickle.PicklingError / TypeError / AttributeError: ``obj`` holds something that cannot be pickled (a
            lambda, a local class); a file at ``f`` is left as it was.
    """
    from adapter import torchfile
    if pickle_module is not None and pickle_module is not pickle:
        import mindtorch.torch.serialization as serialization
        return get_original(serialization, "save")(obj, f, pickle_module, pickle_protocol)
    if isinstance(f, (str, os.PathLike)):
        parent = os.path.dirname(os.fspath(f))
        if parent and not os.path.isdir(parent):  # PyTorch's file writer checks it (its class and message)
            raise RuntimeError(f"Parent directory {parent} does not exist.")
        with torchfile.atomic_write(f) as fh:
            torchfile.write(obj, fh, protocol=pickle_protocol, **_hooks)
        return None
    if not callable(getattr(f, "write", None)):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    torchfile.write(obj, f, protocol=pickle_protocol, **_hooks)
    if callable(getattr(f, "flush", None)):
        f.flush()
    return None


def _read(f, pickle_module, pickle_load_args, weights_only: bool):
    """MindTorch's ``serialization.load`` body, with its import-hook switch undone on an exception too."""
    from mindtorch.module_hooker import torch_disable, torch_pop
    from adapter.backend import internal
    with internal("serialization.open_file_like")(f, "rb") as opened_file:
        if internal("serialization.is_zipfile")(opened_file):
            with internal("serialization.open_zipfile_reader")(opened_file) as opened_zipfile:
                if internal("serialization.is_torchscript_zip")(opened_zipfile):
                    if weights_only:  # PyTorch's error
                        raise RuntimeError("Cannot use ``weights_only=True`` with TorchScript archives passed to "
                                           "``torch.load``. " + UNSAFE_MESSAGE)
                    raise ValueError("torch.load: this is a TorchScript archive (torch.jit.save); MindTorch cannot "
                                     "load TorchScript: save the state_dict instead")
                torch_disable()
                try:
                    return internal("serialization.load")(opened_zipfile, pickle_module, overall_storage=None,
                                                          **pickle_load_args)
                finally:
                    torch_pop()
        torch_disable()
        try:
            return internal("serialization.legacy_load")(opened_file, pickle_module, **pickle_load_args)
        finally:
            torch_pop()


_TRUE_VALUES = ("1", "y", "yes", "true")


def _weights_only(weights_only, pickle_module) -> bool:
    """PyTorch 2.13's choice (torch/serialization.py ``load``): the argument, else True unless a ``pickle_module``
    is given; ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` forces True, ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` forces False
    where the argument was not given (with PyTorch's UserWarning at the user's line); values "1", "y", "yes",
    "true" (any case) count as set.

    Raises:
        RuntimeError: both variables set (PyTorch's message).
    """
    from adapter.userframe import warn_user
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE_VALUES
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE_VALUES
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
                           "should be set, but both were set.")
    if force:
        return True
    if force_no and not_set:
        warn_user("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` argument "
                  "was not explicitly passed to `torch.load`, forcing weights_only=False.")
        return False
    return bool(weights_only)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """``torch.load`` with PyTorch 2.13's defaults, checks and messages (see module docstring).

    Returns:
        the unpickled object; tensors are MindTorch tensors on the MindSpore device in use.
    Raises:
        pickle.UnpicklingError: ``weights_only`` and the file holds a global outside PyTorch's allowlist (and
            :func:`add_safe_globals`), or an opcode PyTorch's weights_only unpickler does not take (pickle
            protocol > 2): PyTorch's message, after the user's ``file:line`` and the file.
        RuntimeError: ``weights_only=True`` together with an explicit ``pickle_module``; both
            ``TORCH_FORCE_*`` variables set; the file uses an allowed PyTorch type MindTorch lacks.
        FileNotFoundError, zipfile.BadZipFile, ...: from reading the file.
    """
    from adapter.userframe import user_location, warn_user
    from . import _restricted_unpickler as weights_only_unpickler
    weights_only = _weights_only(weights_only, pickle_module)
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
        if pickle_load_args:
            warn_user("pickle_load_args only works if `weights_only=False`.")
        module = weights_only_unpickler
    else:
        module = pickle_module if pickle_module is not None else pickle
    pickle_load_args.setdefault("encoding", "utf-8")
    if not weights_only:
        return _read(f, module, pickle_load_args, False)
    try:
        return _read(f, module, pickle_load_args, True)
    except pickle.UnpicklingError as exc:
        where = user_location(2)
        raise pickle.UnpicklingError(f"{where + ': ' if where else ''}torch.load({_describe(f)}): "
                                     + _get_wo_message(str(exc))) from None


def get_unsafe_globals_in_checkpoint(f) -> list:
    """PyTorch's ``torch.serialization.get_unsafe_globals_in_checkpoint``: the ``module.name`` globals in a
    ``torch.save`` zip checkpoint that a weights_only load would refuse (not allowlisted, not added with
    ``add_safe_globals``), found by reading the pickle's opcodes without running them.

    Raises:
        ValueError: not a zip checkpoint, or a TorchScript archive (PyTorch's messages).
    """
    import io
    from adapter.backend import internal
    from . import _restricted_unpickler as unpickler
    safe = set(unpickler._get_allowed_globals()) | set(unpickler._get_user_allowed_globals())
    with internal("serialization.open_file_like")(f, "rb") as opened_file:
        if not internal("serialization.is_zipfile")(opened_file):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        with internal("serialization.open_zipfile_reader")(opened_file) as zip_file:
            if internal("serialization.is_torchscript_zip")(zip_file):
                raise ValueError("Expected input to be a checkpoint returned by torch.save but got a torchscript "
                                 "checkpoint")
            data_file = io.BytesIO(zip_file.read_record("data.pkl"))
            return list(unpickler.get_globals_in_pkl(data_file).difference(safe))


def apply() -> None:
    global _LearningRate
    import mindtorch.torch as torch
    import mindtorch.torch.serialization as serialization
    from . import _restricted_unpickler as unpickler
    from .optimizer import LearningRate

    _LearningRate = LearningRate
    if not _hooks:
        _hooks.update(tensor_hook=_tensor_hook(), global_hook=_global_hook(), reduce_hook=_reduce_hook(),
                      replace_hook=_replace_lr)
    for module in (torch, serialization):
        patch_attr(module, "save", save)
        patch_attr(module, "load", load)
    # PyTorch's allowlist API (torch/serialization.py 2.13: thin wrappers of the unpickler's functions)
    patch_attr(serialization, "add_safe_globals", unpickler._add_safe_globals)
    patch_attr(serialization, "get_safe_globals", unpickler._get_safe_globals)
    patch_attr(serialization, "clear_safe_globals", unpickler._clear_safe_globals)
    patch_attr(serialization, "safe_globals", unpickler._safe_globals)
    patch_attr(serialization, "get_unsafe_globals_in_checkpoint", get_unsafe_globals_in_checkpoint)


PATCH = Patch("serialization", "torch.save writes PyTorch's format atomically; torch.load defaults to "
                               "weights_only=True (PyTorch >= 2.6) with a clear refusal", "post-import", apply,
              replaces=("torch.save", "torch.load", "torch.serialization.save", "torch.serialization.load",
                        "torch.serialization.add_safe_globals", "torch.serialization.get_safe_globals",
                        "torch.serialization.clear_safe_globals", "torch.serialization.safe_globals",
                        "torch.serialization.get_unsafe_globals_in_checkpoint"))
