"""``nn.Module.state_dict()`` / ``load_state_dict()`` as PyTorch: values write through, shapes are checked.

Three differences from PyTorch in MindTorch 0.4.0, fixed here:

* ``state_dict()`` values are copies (``detach()`` makes a new tensor), where PyTorch's share storage with the
  parameters and buffers. The EMA pattern of timm's ``ModelEmaV2``/``V3`` (seed 003) relies on that sharing::

      with torch.no_grad():
          for ema_v, model_v in zip(ema.state_dict().values(), model.state_dict().values()):
              ema_v.copy_(decay * ema_v + (1. - decay) * model_v)      # or mul_/add_/lerp_, _foreach_lerp_

  and under MindTorch silently left the EMA weights at their initial copy. Values are now ``param.detach()``, which
  ``patches/inplace.py`` makes an alias of the parameter/buffer: every in-place op on one (``copy_``, ``mul_``,
  ``add_``, ``lerp_``, ``zero_``, ...) is also written into it with ``mindspore.ops.assign``, in place, so compiled
  graphs that hold the parameter see it. Reading a value gives the parameter's value when ``state_dict()`` was
  called (PyTorch's value also follows later updates of the parameter: keep ``copy.deepcopy(model.state_dict())``
  for a snapshot, as in PyTorch).
* ``load_state_dict`` broadcasts a tensor of another shape into the parameter (PyTorch's size check is
  commented out in MindTorch), so a checkpoint of another architecture could load silently. Size mismatches now
  raise PyTorch's ``RuntimeError: Error(s) in loading state_dict for Net: size mismatch for fc.weight: copying a
  param with shape torch.Size([10, 512]) from checkpoint, the shape in current model is torch.Size([4, 512]).``
* ``load_state_dict(strict=False)`` returned empty ``missing_keys``; it now returns PyTorch's
  ``_IncompatibleKeys(missing_keys, unexpected_keys)``.
* ``load_state_dict`` made each parameter adopt the loaded tensor's buffer (MindSpore's ``assign_value``), so the
  optimizer's in-place updates then changed the loaded dict too (``best = copy.deepcopy(model.state_dict())``,
  ``model.load_state_dict(best)``, train on: ``best`` followed the training). The values are copied first, as
  PyTorch copies them into the parameters' own storage (see ``patches/inplace.py``, ``copy_``).

``copy.deepcopy(model)`` (how EMA copies are made) gave BatchNorm's running statistics and ``num_batches_tracked``
in the copy MindSpore ``Parameter``s all named ``Parameter``; the copy's no_grad forward then failed to compile
("its name 'Parameter' already exists") and ran eagerly. After a deepcopy, every parameter and buffer of the copy is
now named by its ``state_dict`` key (as in the original), and the copy's modules are registered with the eager
bridge like constructed ones.

A failed strict load whose keys differ only by a ``module.`` prefix (a checkpoint saved from
``nn.DataParallel`` / ``DistributedDataParallel``, or a wrapped model loading a plain one) keeps PyTorch's message
and adds the fix: ``torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, 'module.')``, which this
patch also provides (MindTorch lacks it), with the user's ``file:line``.

Replaces: ``torch.nn.Module.__deepcopy__`` (MindTorch has none), ``torch.nn.Module._save_to_state_dict``,
``torch.nn.Module.load_state_dict``; adds ``torch.nn.modules.utils.consume_prefix_in_state_dict_if_present``.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping

from adapter import backend

from . import Patch, get_replaced, is_patched, patch_attr

_PREFIX = "module."


def consume_prefix_in_state_dict_if_present(state_dict, prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` (and its ``_metadata``) in place, as PyTorch's
    ``torch.nn.modules.utils.consume_prefix_in_state_dict_if_present``. Keys without the prefix are kept."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            if len(key) == 0:
                continue
            if key == prefix.replace(".", "") or key.startswith(prefix):
                metadata[key[len(prefix):]] = metadata.pop(key)


def _prefix_hint(own_keys, loaded_keys) -> str:
    own, loaded = set(own_keys), set(loaded_keys)
    if own == loaded or not own or not loaded:
        return ""
    if all(k.startswith(_PREFIX) for k in loaded) and {k[len(_PREFIX):] for k in loaded} == own:
        return ("the checkpoint's keys start with 'module.' (saved from nn.DataParallel / DistributedDataParallel): "
                "strip it before loading, e.g. torch.nn.modules.utils.consume_prefix_in_state_dict_if_present("
                "state_dict, 'module.') or {k.removeprefix('module.'): v for k, v in state_dict.items()}")
    if all(k.startswith(_PREFIX) for k in own) and {k[len(_PREFIX):] for k in own} == loaded:
        return ("the model's keys start with 'module.' (it is wrapped in DataParallel / DistributedDataParallel) "
                "and the checkpoint's do not: load into the wrapped model, model.module.load_state_dict(...)")
    return ""


_DEEPCOPY_TOP = "_adapter_deepcopy_top"  # a str key: the memo's own keys are ints (ids)


def _name_parameters(module) -> None:
    """Name every MindSpore Parameter of ``module`` (parameters and buffers) by its qualified key."""
    import mindspore as ms
    named = list(module.named_parameters()) + list(module.named_buffers())
    for key, tensor in named:
        if isinstance(tensor, ms.Parameter) and tensor.name != key:
            tensor.name = key


def _shape(t):
    return tuple(int(d) for d in t.shape)


# set by apply(): MindTorch's module module, the Module class, and what this patch replaced
module_mod = Module = _original_load = None
user_location = None


def _save_to_state_dict(self, destination, prefix, keep_vars):
    """MindTorch's ``Module._save_to_state_dict`` with ``detach()``ed values (aliases of the parameters)."""
    for name, param in self._parameters.items():
        if param is not None:
            destination[prefix + name] = param if keep_vars else param.detach()
    for name, buf in self._buffers.items():
        if buf is not None and name not in self._non_persistent_buffers_set:
            destination[prefix + name] = buf if keep_vars else buf.detach()
    extra_state_key = prefix + backend.internal("module_extra_state_suffix")
    if getattr(self.__class__, "get_extra_state", Module.get_extra_state) is not Module.get_extra_state:
        destination[extra_state_key] = self.get_extra_state()


def _copied(state_dict):
    """``state_dict`` (same type, ``_metadata`` kept) with each tensor value cloned: MindTorch's
    ``_load_from_state_dict`` gives each parameter the loaded tensor's own buffer (``assign_value``)."""
    import mindspore as ms
    from mindtorch.torch.tensor import Tensor
    try:
        out = type(state_dict)()
    except TypeError:
        out = {}
    for key, value in state_dict.items():
        if isinstance(value, Tensor):
            value = value.clone()
        elif isinstance(value, ms.Tensor):
            value = value.copy()
        out[key] = value
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        try:
            out._metadata = metadata
        except AttributeError:  # a plain dict: MindTorch reads _metadata with getattr(..., None)
            pass
    return out


def load_state_dict(self, state_dict, strict=True, assign=False):
    """PyTorch's ``load_state_dict``: values copied into the parameters/buffers in place.

    Returns:
        ``_IncompatibleKeys(missing_keys, unexpected_keys)``.
    Raises:
        TypeError: ``state_dict`` is not a mapping.
        RuntimeError: a size mismatch (always), or missing/unexpected keys with ``strict=True``; the message is
            PyTorch's, plus the fix when only a ``module.`` prefix differs.
    """
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    own = Module.state_dict(self, keep_vars=True)
    name = self.__class__.__name__
    mismatches = []
    for key, value in state_dict.items():
        target = own.get(key)
        if target is None or not hasattr(value, "shape") or not hasattr(target, "shape"):
            continue
        got, want = _shape(value), _shape(target)
        if got != want and not (want == () and got == (1,)):
            mismatches.append(f"size mismatch for {key}: copying a param with shape torch.Size({list(got)}) "
                              f"from checkpoint, the shape in current model is torch.Size({list(want)}).")
    if mismatches:
        raise RuntimeError(f"Error(s) in loading state_dict for {name}:\n\t" + "\n\t".join(mismatches))
    try:
        _original_load(self, _copied(state_dict), strict)
    except RuntimeError as exc:
        extra_suffix = backend.internal("module_extra_state_suffix")
        hint = _prefix_hint(own.keys(), [k for k in state_dict.keys() if not k.endswith(extra_suffix)])
        if hint:
            where = user_location(2)
            raise RuntimeError(f"{exc}\nrun.py: {where + ': ' if where else ''}{hint}") from None
        raise
    missing = [k for k in own.keys() if k not in state_dict]
    unexpected = [k for k in state_dict.keys() if k not in own]
    return backend.internal("IncompatibleKeys")(missing, unexpected)


def __deepcopy__(self, memo):
    """``copy.deepcopy``'s default reconstruction, then unique parameter names (module docstring)."""
    import copy
    from adapter import tape
    top = _DEEPCOPY_TOP not in memo
    if top:
        memo[_DEEPCOPY_TOP] = True
    try:
        new = copy._reconstruct(self, memo, *self.__reduce_ex__(4))
    finally:
        if top:
            memo.pop(_DEEPCOPY_TOP, None)
    if top:
        _name_parameters(new)
        for sub in new.modules():
            tape.track_module(sub)
    return new


def apply() -> None:
    global module_mod, Module, _original_load, user_location
    import mindtorch.torch.nn.modules.utils as mt_utils
    from mindtorch.torch.nn.modules import module as module_mod
    from adapter.userframe import user_location

    Module = module_mod.Module
    _original_load = get_replaced(Module, "load_state_dict", NAME)
    functools.update_wrapper(load_state_dict, _original_load)  # as functools.wraps did: name, doc, __wrapped__
    if "__deepcopy__" not in Module.__dict__ or is_patched(Module, "__deepcopy__"):
        patch_attr(Module, "__deepcopy__", __deepcopy__)
    patch_attr(Module, "_save_to_state_dict", _save_to_state_dict)
    patch_attr(Module, "load_state_dict", load_state_dict)
    patch_attr(mt_utils, "consume_prefix_in_state_dict_if_present", consume_prefix_in_state_dict_if_present)


NAME = "state_dict"
PATCH = Patch(NAME, "state_dict() values write through to the parameters (EMA); load_state_dict checks "
                    "sizes, returns missing/unexpected keys, hints at a 'module.' prefix", "post-import", apply,
              replaces=("torch.nn.Module.__deepcopy__", "torch.nn.Module._save_to_state_dict",
                        "torch.nn.Module.load_state_dict",
                        "torch.nn.modules.utils.consume_prefix_in_state_dict_if_present"))
