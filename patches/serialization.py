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
  default to ``weights_only=True`` as PyTorch >= 2.6 (``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` and
  ``TORCH_FORCE_WEIGHTS_ONLY_LOAD=1`` work as there): only tensors, containers, dtypes and PyTorch's allowlist
  (:data:`adapter.torchfile.WEIGHTS_ONLY_GLOBALS`) plus :func:`add_safe_globals` can be unpickled; anything else
  raises ``pickle.UnpicklingError`` naming the global, the file and the user's ``file:line``, and saying how to
  load a trusted file. ``map_location`` (str, device, dict, callable) is accepted and ignored: tensors load onto
  the MindSpore device in use. ``mmap`` is accepted (the file is read, not mapped).
* ``torch.serialization.add_safe_globals``, ``get_safe_globals``, ``clear_safe_globals``, ``safe_globals``
  (context manager), as in PyTorch.

Known differences: tensors that share one storage (views, tied weights) are saved as separate storages (MindSpore
tensors do not share memory); ``_use_new_zipfile_serialization=False`` still writes the zip format (PyTorch loads
both); a custom ``pickle_module`` (dill) falls back to MindTorch's own save format.
"""
from __future__ import annotations

import contextlib
import os
import pickle
from typing import Any, Iterable, List, Optional

from . import Patch

_user_safe: dict = {}  # "module.name" -> object


def _global_name(obj) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', getattr(obj, '__name__', '?'))}"


def add_safe_globals(safe_globals: Iterable[Any]) -> None:
    """Allow these classes/functions in ``torch.load(weights_only=True)``; an entry may be ``(obj, "module.name")``."""
    for entry in safe_globals:
        if isinstance(entry, tuple):
            obj, name = entry
        else:
            obj, name = entry, _global_name(entry)
        _user_safe[name] = obj


def get_safe_globals() -> List[Any]:
    """The objects added with :func:`add_safe_globals`."""
    return list(_user_safe.values())


def clear_safe_globals() -> None:
    """Forget every :func:`add_safe_globals` entry."""
    _user_safe.clear()


@contextlib.contextmanager
def safe_globals(globals_list: Iterable[Any]):
    """``with torch.serialization.safe_globals([MyClass]): torch.load(...)``: allowlist for the block only."""
    saved = dict(_user_safe)
    add_safe_globals(globals_list)
    try:
        yield
    finally:
        _user_safe.clear()
        _user_safe.update(saved)


class WeightsOnlyRefused(pickle.UnpicklingError):
    """``torch.load(weights_only=True)`` met a global outside the allowlist (a ``pickle.UnpicklingError``, as in
    PyTorch). ``.global_name`` is the ``module.name`` it refused."""

    def __init__(self, message: str, global_name: str):
        super().__init__(message)
        self.global_name = global_name


def _restricted_pickle_module():
    """A stand-in for the ``pickle`` module whose ``Unpickler``/``load`` resolve only allowlisted globals."""
    import types
    from adapter.torchfile import WEIGHTS_ONLY_GLOBALS, py2_name

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            module, name = py2_name(module, name)
            full = f"{module}.{name}"
            if full in _user_safe:
                return _user_safe[full]
            if full in WEIGHTS_ONLY_GLOBALS:
                return super().find_class(module, name)
            raise WeightsOnlyRefused(full, full)

    def load(file, **kwargs):
        return Unpickler(file, **kwargs).load()

    return types.SimpleNamespace(__name__="pickle", Unpickler=Unpickler, load=load, loads=None,
                                 UnpicklingError=pickle.UnpicklingError)


def _refusal_message(global_name: str, source: str, where: Optional[str]) -> str:
    short = global_name.rsplit(".", 1)[-1]
    return (f"{where + ': ' if where else ''}torch.load refused {source}: it holds `{global_name}`, which is not a "
            "tensor, a container, a dtype or on the weights_only allowlist. torch.load uses weights_only=True when "
            "the script does not say (as PyTorch >= 2.6), because unpickling other objects can run arbitrary code. "
            "If you trust the file, load it with torch.load(..., weights_only=False), or allow that class with "
            f"torch.serialization.add_safe_globals([{short}]) (or the safe_globals([...]) context manager).")


def _describe(f) -> str:
    if isinstance(f, (str, os.PathLike)):
        return f"'{os.fspath(f)}'"
    name = getattr(f, "name", None)
    return f"'{name}'" if isinstance(name, str) else "the file object"


def _tensor_hook():
    import mindspore as ms
    import numpy as np
    from mindspore.common._stub_tensor import StubTensor
    from mindtorch.torch.nn import Parameter
    from adapter.torchfile import TensorData, tensor_data_from_numpy

    def hook(obj) -> Optional[TensorData]:
        """MindTorch tensors, parameters and MindSpore tensors -> TensorData (dtype from the numpy array)."""
        if not isinstance(obj, (ms.Tensor, StubTensor)):
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
    import mindspore as ms
    from adapter.torchfile import DTYPES, Global
    dtype_type = type(ms.float32).__mro__[-3]  # mindspore._c_expression.typing.Type
    names = set(DTYPES) | {"uint16", "uint32", "uint64"}

    def hook(obj) -> Optional[Global]:
        """MindTorch/MindSpore dtypes -> ``torch.<name>`` (``mindtorch.float32``, ``Float32`` -> ``torch.float32``)."""
        if isinstance(obj, dtype_type):
            name = str(obj).split(".")[-1].lower().rstrip("_")
            if name in names:
                return Global("torch", name)
        return None

    return hook


def _reduce_hook():
    from mindtorch.torch._C.Size import Size
    from mindtorch.torch.types import device
    from adapter.torchfile import Global

    def hook(obj) -> Optional[tuple]:
        if type(obj) is Size:
            return (Global("torch", "Size"), (tuple(int(d) for d in obj),))
        if type(obj) is device:
            return (Global("torch", "device"), (str(obj),))
        return None

    return hook


def make_save(original_save):
    from adapter import torchfile

    from patches.optimizer import LearningRate

    def replace(obj):  # param_groups[i]['lr'] reads as a float subclass here; PyTorch has a float
        return float(obj) if type(obj) is LearningRate else obj

    hooks = dict(tensor_hook=_tensor_hook(), global_hook=_global_hook(), reduce_hook=_reduce_hook(),
                 replace_hook=replace)

    def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
             _disable_byteorder_record=False):
        """Save ``obj`` in PyTorch's zip format (see module docstring); atomic when ``f`` is a path.

        Raises:
            AttributeError: ``f`` is neither a path nor a writable file object (as PyTorch).
            pickle.PicklingError / TypeError / AttributeError: ``obj`` holds something that cannot be pickled (a
                lambda, a local class); a file at ``f`` is left as it was.
        """
        if pickle_module is not None and pickle_module is not pickle:
            return original_save(obj, f, pickle_module, pickle_protocol)
        if isinstance(f, (str, os.PathLike)):
            with torchfile.atomic_write(f) as fh:
                torchfile.write(obj, fh, protocol=pickle_protocol, **hooks)
            return None
        if not callable(getattr(f, "write", None)):
            raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
        torchfile.write(obj, f, protocol=pickle_protocol, **hooks)
        if callable(getattr(f, "flush", None)):
            f.flush()
        return None

    save._adapter_patched = True
    return save


def _read(f, pickle_module, pickle_load_args):
    """MindTorch's ``serialization.load`` body, with its import-hook switch undone on an exception too."""
    from mindtorch.module_hooker import torch_disable, torch_pop
    import mindtorch.torch.serialization as S
    pickle_load_args.setdefault("encoding", "utf-8")
    with S._open_file_like(f, "rb") as opened_file:
        if S._is_zipfile(opened_file):
            with S._open_zipfile_reader(opened_file) as opened_zipfile:
                if S._is_torchscript_zip(opened_zipfile):
                    raise ValueError("torch.load: this is a TorchScript archive (torch.jit.save); MindTorch cannot "
                                     "load TorchScript: save the state_dict instead")
                torch_disable()
                try:
                    return S._load(opened_zipfile, pickle_module, overall_storage=None, **pickle_load_args)
                finally:
                    torch_pop()
        torch_disable()
        try:
            return S._legacy_load(opened_file, pickle_module, **pickle_load_args)
        finally:
            torch_pop()


def _default_weights_only(pickle_module) -> bool:
    if os.environ.get("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0") not in ("0", ""):
        return True
    if os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0") not in ("0", ""):
        return False
    return pickle_module is None


def make_load():
    from adapter.userframe import user_location

    def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
        """``torch.load`` with PyTorch >= 2.6's defaults (see module docstring).

        Returns:
            the unpickled object; tensors are MindTorch tensors on the MindSpore device in use.
        Raises:
            pickle.UnpicklingError (:class:`WeightsOnlyRefused`): ``weights_only`` and the file holds another global.
            RuntimeError: ``weights_only=True`` together with an explicit ``pickle_module`` (as PyTorch).
            FileNotFoundError, zipfile.BadZipFile, ...: from reading the file.
        """
        if weights_only is None:
            weights_only = _default_weights_only(pickle_module)
        if weights_only:
            if pickle_module is not None:
                raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
            module = _restricted_pickle_module()
        else:
            module = pickle_module if pickle_module is not None else pickle
        try:
            return _read(f, module, pickle_load_args)
        except WeightsOnlyRefused as exc:
            raise WeightsOnlyRefused(_refusal_message(exc.global_name, _describe(f), user_location(2)),
                                     exc.global_name) from None

    load._adapter_patched = True
    return load


def apply() -> None:
    import mindtorch.torch as torch
    import mindtorch.torch.serialization as serialization

    if getattr(serialization.save, "_adapter_patched", False):
        return
    save = make_save(serialization.save)
    load = make_load()
    for module in (torch, serialization):
        module.save = save
        module.load = load
    serialization.add_safe_globals = add_safe_globals
    serialization.get_safe_globals = get_safe_globals
    serialization.clear_safe_globals = clear_safe_globals
    serialization.safe_globals = safe_globals


PATCH = Patch("serialization", "torch.save writes PyTorch's format atomically; torch.load defaults to "
                               "weights_only=True (PyTorch >= 2.6) with a clear refusal", "post-import", apply)
