"""The ``weights_only=True`` unpickler of ``torch.load`` (patches/serialization.py), with PyTorch 2.13's allow-list
semantics and refusal texts (``torch/_weights_only_unpickler.py``'s behaviour, documented in ``torch.load`` and
``torch.serialization.add_safe_globals``), over MindTorch objects.

What it runs: an interpreter of the pickle opcodes PyTorch's restricted unpickler takes (protocol 2's, listed in
:data:`_OPCODES`; any other opcode, e.g. protocol 4's ``FRAME``, is refused with ``Unsupported operand N``). Every
``GLOBAL`` must resolve through, in order:

1. not a module of :data:`_BLOCKED_MODULES` (``sys``, ``os``, ``posix``, ``nt``);
2. PyTorch's default allowlist (:data:`adapter.torchfile.WEIGHTS_ONLY_GLOBALS`, recorded from PyTorch 2.13, plus
   the container and builtin names below), resolved to MindTorch's objects; a name MindTorch lacks raises
   ``RuntimeError`` when a file uses it;
3. the user's allowlist (:func:`_add_safe_globals`, :class:`_safe_globals`): objects (keyed
   ``module.qualname``) or ``(object, "dotted.name")`` pairs;
4. MindSpore/MindTorch internals a whole saved MindTorch module holds (:func:`_framework_internal`);

else ``UnpicklingError`` with PyTorch's text, which names the ``add_safe_globals`` / ``safe_globals`` fix. Calls
(``REDUCE``) and object creation (``NEWOBJ``) are only allowed on such objects; ``BUILD`` only on tensors,
parameters, ``OrderedDict`` and allowed types; ``APPEND(S)`` only on lists, ``SETITEM(S)`` only on dict /
``OrderedDict`` / ``Counter``; persistent ids only for storages (``("storage", ...)`` tuples or ints).
"""
from __future__ import annotations

import collections
import functools
import pickle
import struct
import sys
from _codecs import encode
from _compat_pickle import IMPORT_MAPPING, NAME_MAPPING

import mindtorch.torch as torch
import mindtorch.torch.serialization  # noqa: F401
import mindtorch.torch.storage  # noqa: F401

from adapter.backend import internal
from adapter.patching import installed_name
from adapter.userframe import warn_user

UnpicklingError = pickle.UnpicklingError
_BLOCKED_MODULES = frozenset({"sys", "os", "posix", "nt"})
_NEEDS_IMPORT = {  # PyTorch's globals whose loading needs a subsystem imported first -> its refusal text
    **dict.fromkeys(("torch.nested._internal.nested_tensor.NestedTensor",
                     "torch.nested._internal.nested_tensor._rebuild_njt", "torch._dynamo.decorators._DimRange"),
                    "``torch.nested`` and ``torch._dynamo`` must be imported to load nested jagged tensors (NJTs)"),
    **dict.fromkeys(("torch.distributed.device_mesh.DeviceMesh",
                     "torch.distributed.tensor._dtensor_spec.DTensorSpec",
                     "torch.distributed.tensor._dtensor_spec.TensorMeta", "torch.distributed.tensor.DTensor",
                     "torch.distributed.tensor.placement_types.Partial",
                     "torch.distributed.tensor.placement_types.Replicate",
                     "torch.distributed.tensor.placement_types.Shard"),
                    "``torch.distributed.tensor`` must be imported to load DTensors"),
}
_DICT_TYPES = (dict, collections.OrderedDict, collections.Counter)

# -- the user's allowlist (torch.serialization.add_safe_globals & co) ------------------------------------------------
_user_safe: set = set()


def _add_safe_globals(safe_globals) -> None:
    """``torch.serialization.add_safe_globals(list)``: objects, or ``(object, "module.name")`` pairs."""
    global _user_safe
    _user_safe = _user_safe | set(safe_globals)


def _get_safe_globals() -> list:
    """``torch.serialization.get_safe_globals()``: what :func:`_add_safe_globals` added, as a list."""
    return list(_user_safe)


def _clear_safe_globals() -> None:
    """``torch.serialization.clear_safe_globals()``."""
    global _user_safe
    _user_safe = set()


def _remove_safe_globals(safe_globals) -> None:
    global _user_safe
    _user_safe = _user_safe - set(safe_globals)


class _safe_globals:
    """``torch.serialization.safe_globals(list)``: the entries are allowed inside the ``with`` block only."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        _add_safe_globals(self.safe_globals)

    def __exit__(self, *exc_info):
        _remove_safe_globals(self.safe_globals)


def _get_user_allowed_globals() -> dict:
    """``"module.name" -> object`` of the user's allowlist. Raises ``ValueError`` / ``TypeError`` (PyTorch's
    texts) for a tuple entry that is not ``(object, str)``."""
    named = {}
    for entry in _user_safe:
        if not isinstance(entry, tuple):
            named[f"{entry.__module__}.{entry.__qualname__}"] = entry
            installed = installed_name(entry)  # a patch's function (F.relu): saved under its installed name
            if installed is not None:
                named[".".join(installed)] = entry
            continue
        if len(entry) != 2:
            raise ValueError("Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                             f"length: {len(entry)}")
        if type(entry[1]) is not str:
            raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                            f"{type(entry[1])}")
        named[entry[1]] = entry[0]
    return named


# -- PyTorch's default allowlist, resolved in MindTorch --------------------------------------------------------------
class _Missing:
    """An allowed PyTorch global that MindTorch 0.4.0 does not have (a dtype, a layout, a rebuild function); using
    it raises :func:`_missing_error`."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<{self.name}: not in MindTorch>"


def _missing_error(full_path):
    return RuntimeError(
        f"torch.load: the file uses `{full_path}`, which PyTorch's weights_only loader allows but MindTorch 0.4.0 "
        "does not provide: a tensor or value of that kind cannot be loaded here")


def _lookup(root, dotted):
    """``root.a.b`` for ``dotted = "a.b"``, or None."""
    for part in dotted.split("."):
        root = getattr(root, part, None)
        if root is None:
            return None
    return root


def _get_layout(name):
    """``torch.serialization._get_layout``: MindTorch's own ``torch.<layout>`` (it has no layout objects)."""
    obj = _lookup(torch, name.rsplit(".", 1)[-1])
    if obj is None:
        raise _missing_error(name)
    return obj


@functools.lru_cache(maxsize=1)
def _get_allowed_globals() -> dict:
    """``"module.name" -> object`` of PyTorch's default allowlist (``_Missing`` where MindTorch lacks it)."""
    from adapter.torchfile import WEIGHTS_ONLY_GLOBALS

    internal("torch.utils_module")  # imported: the allowlist names functions of torch._utils
    fixed = [("collections.OrderedDict", collections.OrderedDict), ("collections.Counter", collections.Counter),
             ("torch.nn.parameter.Parameter", torch.nn.Parameter), ("torch.Size", torch.Size),
             ("torch.Tensor", torch.Tensor), ("torch.device", torch.device),
             ("torch.serialization._get_layout", _get_layout),
             ("torch.storage.TypedStorage", internal("serialization.TypedStorage")),
             ("torch.storage.UntypedStorage", internal("serialization.UntypedStorage")),
             ("torch._tensor._rebuild_from_type_v2", internal("tensor.rebuild_from_type_v2")),
             ("_codecs.encode", encode), ("builtins.bytearray", bytearray), ("builtins.set", set),
             ("builtins.complex", complex)]
    allowed = dict(fixed)
    for full_path in sorted(WEIGHTS_ONLY_GLOBALS):
        if full_path in allowed:
            continue
        name = full_path[len("torch."):]
        if name.endswith("Storage"):
            try:
                allowed[full_path] = torch.serialization.StorageType(name.rsplit(".", 1)[-1])
            except KeyError:  # quantized storages
                allowed[full_path] = _Missing(full_path)
        else:
            found = _lookup(torch, name)
            allowed[full_path] = _Missing(full_path) if found is None else found
    return allowed


_SIGNATURE_NAMES = frozenset({"Signature", "Parameter", "_ParameterKind", "_empty"})


def _framework_internal(module: str, name: str):
    """The object of ``module.name`` when it is a MindSpore/MindTorch internal that a whole saved MindTorch module
    holds (``torch.save(model)``), else None. PyTorch's file of the same module names only the module classes (which
    the user allowlists, ``safe_globals([nn.LSTM, ...])``) and tensors; MindTorch's modules are MindSpore ``Cell``s
    and also hold MindSpore objects no user can name (every module: ``cast``, a ``Cast`` operator, and ``sig``, an
    ``inspect.Signature``; ``nn.LSTM``: its recurrent cells and their operators, a recurrence function): without
    them PyTorch's documented whole-model idiom failed here on ``Unsupported global: GLOBAL
    mindspore.ops.operations.manually_defined.ops_def.Cast``. Admitted, and nothing else:

    * ``adapter.torchfile.rebuild_primitive`` (an operator rebuilt by its own constructor);
    * classes defined in an already imported ``mindspore.*`` module that subclass ``mindspore.ops.Primitive`` or
      ``mindspore.nn.Cell`` (operators and MindSpore cells: constructing one runs no user-chosen code);
    * ``inspect.Signature`` / ``Parameter`` / ``_ParameterKind`` / ``_empty`` (a cell's ``sig``);
    * plain functions defined in an already imported ``mindtorch.torch.nn.modules.*`` module (a module's tensor
      computation, referenced, not called, by the unpickler).

    Nothing is imported: a module not yet in ``sys.modules`` gives None (refused, PyTorch's message)."""
    import inspect
    import types

    if module == "adapter.torchfile" and name == "rebuild_primitive":
        from adapter.torchfile import rebuild_primitive
        return rebuild_primitive
    if module == "inspect":
        return getattr(inspect, name) if name in _SIGNATURE_NAMES else None
    if "." in name:
        return None
    if module.startswith("mindspore."):
        obj = getattr(sys.modules.get(module), name, None)
        from mindspore.nn import Cell
        from mindspore.ops import Primitive
        if isinstance(obj, type) and obj.__module__ == module and issubclass(obj, (Primitive, Cell)):
            return obj
        return None
    if module.startswith("mindtorch.torch.nn.modules."):
        obj = getattr(sys.modules.get(module), name, None)
        if type(obj) is types.FunctionType and obj.__module__ == module:
            return obj
    return None


# -- reading opcode arguments --------------------------------------------------------------------------------------
def _arg_u1(stream):
    return stream.read(1)[0]


def _arg_u2(stream):
    return struct.unpack("<H", stream.read(2))[0]


def _arg_i4(stream):
    return struct.unpack("<i", stream.read(4))[0]


def _arg_u4(stream):
    return struct.unpack("<I", stream.read(4))[0]


def _arg_f8(stream):
    return struct.unpack(">d", stream.read(8))[0]


def _arg_counted_u4(stream):
    """Bytes whose length is a 4-byte count (``BINUNICODE``)."""
    size = _arg_u4(stream)
    if size > sys.maxsize:
        raise UnpicklingError("String is too long")
    return stream.read(size)


def _arg_counted_u1(stream):
    """Bytes whose length is a 1-byte count (``SHORT_BINSTRING``, ``LONG1``)."""
    return stream.read(_arg_u1(stream))


def _arg_global(stream):
    """``GLOBAL``'s two text lines, ``(module, name)``, with Python 2 names mapped as pickle does."""
    module = stream.readline()[:-1].decode("utf-8")
    name = stream.readline()[:-1].decode("utf-8")
    if (module, name) in NAME_MAPPING:
        return NAME_MAPPING[(module, name)]
    return IMPORT_MAPPING.get(module, module), name


def _op(code: bytes) -> int:
    return code[0]


# opcode -> (argument reader or None, Unpickler method name): every opcode this unpickler takes
_OPCODES = {
    _op(pickle.PROTO): (_arg_u1, "_proto"), _op(pickle.STOP): (None, None),
    _op(pickle.GLOBAL): (_arg_global, "_global"), _op(pickle.REDUCE): (None, "_reduce"),
    _op(pickle.NEWOBJ): (None, "_newobj"), _op(pickle.BUILD): (None, "_build"),
    _op(pickle.BINPERSID): (None, "_persistent"),
    _op(pickle.MARK): (None, "_mark"), _op(pickle.TUPLE): (None, "_tuple_from_mark"),
    _op(pickle.TUPLE1): (None, "_tuple1"), _op(pickle.TUPLE2): (None, "_tuple2"), _op(pickle.TUPLE3): (None, "_tuple3"),
    _op(pickle.EMPTY_TUPLE): (None, "_empty_tuple"), _op(pickle.EMPTY_LIST): (None, "_empty_list"),
    _op(pickle.EMPTY_DICT): (None, "_empty_dict"), _op(pickle.EMPTY_SET): (None, "_empty_set"),
    _op(pickle.APPEND): (None, "_append"), _op(pickle.APPENDS): (None, "_appends"),
    _op(pickle.SETITEM): (None, "_setitem"), _op(pickle.SETITEMS): (None, "_setitems"),
    _op(pickle.NONE): (None, "_none"), _op(pickle.NEWTRUE): (None, "_true"), _op(pickle.NEWFALSE): (None, "_false"),
    _op(pickle.BININT): (_arg_i4, "_push"), _op(pickle.BININT1): (_arg_u1, "_push"),
    _op(pickle.BININT2): (_arg_u2, "_push"), _op(pickle.BINFLOAT): (_arg_f8, "_push"),
    _op(pickle.LONG1): (_arg_counted_u1, "_long"), _op(pickle.BINUNICODE): (_arg_counted_u4, "_unicode"),
    _op(pickle.SHORT_BINSTRING): (_arg_counted_u1, "_bytes"),
    _op(pickle.BINGET): (_arg_u1, "_get"), _op(pickle.LONG_BINGET): (_arg_u4, "_get"),
    _op(pickle.BINPUT): (_arg_u1, "_put"), _op(pickle.LONG_BINPUT): (_arg_u4, "_put"),
}
_STOP = _op(pickle.STOP)
_GLOBAL = _op(pickle.GLOBAL)


def _next_opcode(stream):
    """The next opcode byte, with its argument read: ``(opcode, argument)``. Raises ``EOFError`` at the end of the
    data, ``UnpicklingError`` for an opcode outside :data:`_OPCODES`."""
    code = stream.read(1)
    if not code:
        raise EOFError
    if not isinstance(code, (bytes, bytearray)):
        raise AssertionError(f"Expected bytes, got {type(code).__name__}")
    entry = _OPCODES.get(code[0])
    if entry is None:
        raise UnpicklingError(f"Unsupported operand {code[0]}")
    reader = entry[0]
    return code[0], (reader(stream) if reader is not None else None)


def get_globals_in_pkl(file) -> set:
    """The ``module.name`` of every ``GLOBAL`` in the pickle ``file`` (read up to ``STOP``), nothing run."""
    found = set()
    while True:
        opcode, arg = _next_opcode(file)
        if opcode == _STOP:
            return found
        if opcode == _GLOBAL:
            found.add(f"{arg[0]}.{arg[1]}")


def _refusal_name(full_path: str) -> str:
    """How PyTorch names a refused global in its message: builtins without their module (``eval``)."""
    return full_path[len("builtins."):] if full_path.startswith("builtins.") else full_path


class Unpickler:
    """``Unpickler(file, encoding="bytes").load()``: the object pickled in ``file`` (opened binary), under the
    rules of the module docstring. ``persistent_load(pid)`` is set by the caller (torch.load's storages)."""

    def __init__(self, file, *, encoding: str = "bytes"):
        self.encoding = encoding
        self.read = file.read
        self.readline = file.readline
        self.memo: dict = {}
        self.proto = -1
        self._internals: set = set()  # the framework internals this file named (_framework_internal)

    def persistent_load(self, pid):
        raise UnpicklingError("unsupported persistent id encountered")

    def load(self):
        self._stack: list = []
        self._marks: list = []
        while True:
            opcode, arg = _next_opcode(self)
            if opcode == _STOP:
                return self._stack.pop()
            getattr(self, _OPCODES[opcode][1])(arg)

    # -- what may be called / built ---------------------------------------------------------------------------------
    def _trusted(self, obj) -> bool:
        return (obj in _get_allowed_globals().values() or obj in _get_user_allowed_globals().values()
                or obj in self._internals)

    def _global(self, arg):
        module, name = arg
        full_path = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise UnpicklingError(f"Trying to load unsupported GLOBAL {full_path} whose module {module} is blocked.")
        allowed = _get_allowed_globals()
        if full_path in allowed:
            if type(allowed[full_path]) is _Missing:
                raise _missing_error(full_path)
            self._stack.append(allowed[full_path])
            return
        user = _get_user_allowed_globals()
        if full_path in user:
            self._stack.append(user[full_path])
            return
        internal = _framework_internal(module, name)
        if internal is not None:
            self._internals.add(internal)
            self._stack.append(internal)
            return
        if full_path in _NEEDS_IMPORT:
            raise UnpicklingError(_NEEDS_IMPORT[full_path])
        shown = _refusal_name(full_path)
        raise UnpicklingError(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{shown}])` or the `torch.serialization.safe_globals([{shown}])`"
            " context manager to allowlist this global if you trust this class/function.")

    def _reduce(self, _):
        args = self._stack.pop()
        func = self._stack[-1]
        if not self._trusted(func):
            owner = f" which belongs to {func.__self__}" if hasattr(func, "__self__") else ""
            raise UnpicklingError(f"Trying to call reduce for unrecognized function {func}{owner}")
        self._stack[-1] = func(*args)

    def _newobj(self, _):
        args = self._stack.pop()
        cls = self._stack.pop()
        if cls is torch.nn.Parameter:
            self._stack.append(torch.nn.Parameter(*args))
        elif self._trusted(cls):
            self._stack.append(cls.__new__(cls, *args))
        else:
            raise UnpicklingError("Can only create new object for nn.Parameter or classes allowlisted via "
                                  f"`add_safe_globals` but got {cls}")

    def _build(self, _):
        state = self._stack.pop()
        obj = self._stack[-1]
        kind = type(obj)
        if kind is torch.Tensor:
            obj.set_(*state)
        elif kind is torch.nn.Parameter:
            obj.__setstate__(state)
        elif kind is collections.OrderedDict:
            obj.__dict__.update(state)
        elif self._trusted(kind):
            if hasattr(obj, "__setstate__"):
                obj.__setstate__(state)
                return
            # pickle's default: a dict of attributes, or (dict, slots dict)
            slots = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slots = state
            if state:
                obj.__dict__.update(state)
            for key, value in (slots or {}).items():
                setattr(obj, key, value)
        else:
            raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                                  f"`add_safe_globals`, but got {kind}")

    def _persistent(self, _):
        pid = self._stack.pop()
        if type(pid) not in (tuple, int):
            raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and pid and internal("serialization.maybe_decode_ascii")(pid[0]) != "storage":
            raise UnpicklingError(f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
        self._stack.append(self.persistent_load(pid))

    # -- containers -------------------------------------------------------------------------------------------------
    def _mark(self, _):
        self._marks.append(len(self._stack))

    def _since_mark(self):
        start = self._marks.pop()
        items = self._stack[start:]
        del self._stack[start:]
        return items

    def _tuple_from_mark(self, _):
        self._stack.append(tuple(self._since_mark()))

    def _tuple_of_last(self, n):
        items = tuple(self._stack[-k] for k in range(n, 0, -1))  # IndexError on a short stack, as pickle's
        del self._stack[-n:]
        self._stack.append(items)

    def _tuple1(self, _):
        self._tuple_of_last(1)

    def _tuple2(self, _):
        self._tuple_of_last(2)

    def _tuple3(self, _):
        self._tuple_of_last(3)

    def _empty_tuple(self, _):
        self._stack.append(())

    def _empty_list(self, _):
        self._stack.append([])

    def _empty_dict(self, _):
        self._stack.append({})

    def _empty_set(self, _):
        self._stack.append(set())

    def _list_target(self, verb):
        target = self._stack[-1]
        if type(target) is not list:
            raise UnpicklingError(f"Can only {verb} lists, but got {type(target)}")
        return target

    def _append(self, _):
        item = self._stack.pop()
        self._list_target("append to").append(item)

    def _appends(self, _):
        items = self._since_mark()
        self._list_target("extend").extend(items)

    def _dict_target(self, opcode_name):
        target = self._stack[-1]
        if type(target) not in _DICT_TYPES:
            raise UnpicklingError(f"Can only {opcode_name} for dict, collections.OrderedDict, collections.Counter, "
                                  f"but got {type(target)}")
        return target

    def _setitem(self, _):
        value = self._stack.pop()
        key = self._stack.pop()
        self._dict_target("SETITEM")[key] = value

    def _setitems(self, _):
        items = self._since_mark()
        target = self._dict_target("SETITEMS")
        for k in range(0, len(items), 2):
            target[items[k]] = items[k + 1]

    # -- scalars and the memo ---------------------------------------------------------------------------------------
    def _push(self, value):
        self._stack.append(value)

    def _none(self, _):
        self._stack.append(None)

    def _true(self, _):
        self._stack.append(True)

    def _false(self, _):
        self._stack.append(False)

    def _long(self, data):
        self._stack.append(pickle.decode_long(data))

    def _unicode(self, data):
        self._stack.append(str(data, "utf-8", "surrogatepass"))

    def _bytes(self, data):
        self._stack.append(data if self.encoding == "bytes" else data.decode(self.encoding, "strict"))

    def _get(self, index):
        self._stack.append(self.memo[index])

    def _put(self, index):
        self.memo[index] = self._stack[-1]

    def _proto(self, version):
        self.proto = version
        if version != 2:
            warn_user(f"Detected pickle protocol {version} in the checkpoint, which was not the default pickle "
                      "protocol used by `torch.load` (2). The weights_only Unpickler might not support all "
                      "instructions implemented by this protocol, please file an issue for adding support if you "
                      "encounter this.")


def load(file, *, encoding: str = "ASCII"):
    """``pickle.load`` of the restricted unpickler (the ``pickle_module`` interface torch.load uses)."""
    return Unpickler(file, encoding=encoding).load()
