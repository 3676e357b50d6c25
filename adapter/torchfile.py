"""PyTorch's checkpoint file format, read and written without PyTorch (numpy only).

``torch.save`` (PyTorch >= 1.6) writes a zip archive (stored, not compressed)::

    archive/data.pkl              the pickled object; every tensor is
                                  torch._utils._rebuild_tensor_v2(<storage>, offset, size, stride, requires_grad,
                                  OrderedDict()), its storage a persistent id ('storage', torch.FloatStorage, key,
                                  'cpu', numel)
    archive/byteorder             b'little'
    archive/data/<key>            the raw little-endian bytes of storage <key> (64-byte aligned)
    archive/version               b'3'

This module writes that layout (:func:`write`, used by the ``serialization`` patch for ``torch.save`` and by
``run.py convert``) so that real PyTorch loads the file with ``torch.load(path, weights_only=True)``, and reads it
into numpy arrays (:func:`read`, used by ``run.py convert``). :func:`atomic_write` is the write-to-temp, fsync,
rename that makes a kill mid-save leave either the old file or the new one, never a truncated one.

:data:`WEIGHTS_ONLY_GLOBALS` is PyTorch's ``weights_only=True`` allowlist (``torch/_weights_only_unpickler.py``,
``_get_allowed_globals``, torch 2.13): the only globals a weights-only load may resolve.
"""
from __future__ import annotations

import collections
import contextlib
import io
import os
import pickle
import secrets
import struct
import zipfile
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

import numpy as np

# torch dtype name -> (numpy dtype for the raw bytes, legacy storage class name in torch)
DTYPES: Dict[str, Tuple[str, str]] = {
    "float32": ("<f4", "FloatStorage"), "float64": ("<f8", "DoubleStorage"), "float16": ("<f2", "HalfStorage"),
    "bfloat16": ("<u2", "BFloat16Storage"), "int64": ("<i8", "LongStorage"), "int32": ("<i4", "IntStorage"),
    "int16": ("<i2", "ShortStorage"), "int8": ("i1", "CharStorage"), "uint8": ("u1", "ByteStorage"),
    "bool": ("?", "BoolStorage"), "complex64": ("<c8", "ComplexFloatStorage"),
    "complex128": ("<c16", "ComplexDoubleStorage"),
}
_STORAGE_TO_DTYPE = {storage: name for name, (_, storage) in DTYPES.items()}
_NUMPY_TO_DTYPE = {"float32": "float32", "float64": "float64", "float16": "float16", "int64": "int64",
                   "int32": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool",
                   "complex64": "complex64", "complex128": "complex128", "bfloat16": "bfloat16"}


# PyTorch 2.13's weights_only allowlist, recorded with its Python: sorted(torch._weights_only_unpickler.
# _get_allowed_globals()) (144 names; patches/_restricted_unpickler.py resolves them in MindTorch)
WEIGHTS_ONLY_GLOBALS = frozenset([
    '_codecs.encode', 'builtins.bytearray', 'builtins.complex', 'builtins.set', 'collections.Counter',
    'collections.OrderedDict', 'torch.BFloat16Storage', 'torch.BFloat16Tensor', 'torch.BoolStorage',
    'torch.BoolTensor', 'torch.ByteStorage', 'torch.ByteTensor', 'torch.CharStorage', 'torch.CharTensor',
    'torch.ComplexDoubleStorage', 'torch.ComplexFloatStorage', 'torch.DoubleStorage', 'torch.DoubleTensor',
    'torch.FloatStorage', 'torch.FloatTensor', 'torch.HalfStorage', 'torch.HalfTensor', 'torch.IntStorage',
    'torch.IntTensor', 'torch.LongStorage', 'torch.LongTensor', 'torch.QInt32Storage', 'torch.QInt8Storage',
    'torch.QUInt2x4Storage', 'torch.QUInt4x2Storage', 'torch.QUInt8Storage', 'torch.ShortStorage',
    'torch.ShortTensor', 'torch.Size', 'torch.Tensor', 'torch._tensor._rebuild_from_type_v2',
    'torch._utils._rebuild_device_tensor_from_cpu_tensor', 'torch._utils._rebuild_device_tensor_from_numpy',
    'torch._utils._rebuild_meta_tensor_no_storage', 'torch._utils._rebuild_nested_tensor',
    'torch._utils._rebuild_parameter', 'torch._utils._rebuild_parameter_with_state',
    'torch._utils._rebuild_qtensor', 'torch._utils._rebuild_sparse_tensor', 'torch._utils._rebuild_tensor',
    'torch._utils._rebuild_tensor_v2', 'torch._utils._rebuild_tensor_v3',
    'torch._utils._rebuild_wrapper_subclass', 'torch.bfloat16', 'torch.bits16', 'torch.bits1x8',
    'torch.bits2x4', 'torch.bits4x2', 'torch.bits8', 'torch.bool', 'torch.complex128', 'torch.complex32',
    'torch.complex64', 'torch.cuda.BFloat16Storage', 'torch.cuda.BFloat16Tensor', 'torch.cuda.BoolStorage',
    'torch.cuda.BoolTensor', 'torch.cuda.ByteStorage', 'torch.cuda.ByteTensor', 'torch.cuda.CharStorage',
    'torch.cuda.CharTensor', 'torch.cuda.ComplexDoubleStorage', 'torch.cuda.ComplexFloatStorage',
    'torch.cuda.DoubleStorage', 'torch.cuda.DoubleTensor', 'torch.cuda.FloatStorage', 'torch.cuda.FloatTensor',
    'torch.cuda.HalfStorage', 'torch.cuda.HalfTensor', 'torch.cuda.IntStorage', 'torch.cuda.IntTensor',
    'torch.cuda.LongStorage', 'torch.cuda.LongTensor', 'torch.cuda.ShortStorage', 'torch.cuda.ShortTensor',
    'torch.cuda.sparse.BFloat16Tensor', 'torch.cuda.sparse.ByteTensor', 'torch.cuda.sparse.CharTensor',
    'torch.cuda.sparse.DoubleTensor', 'torch.cuda.sparse.FloatTensor', 'torch.cuda.sparse.HalfTensor',
    'torch.cuda.sparse.IntTensor', 'torch.cuda.sparse.LongTensor', 'torch.cuda.sparse.ShortTensor',
    'torch.device', 'torch.float16', 'torch.float32', 'torch.float4_e2m1fn_x2', 'torch.float64',
    'torch.float8_e4m3fn', 'torch.float8_e4m3fnuz', 'torch.float8_e5m2', 'torch.float8_e5m2fnuz',
    'torch.float8_e8m0fnu', 'torch.int1', 'torch.int16', 'torch.int2', 'torch.int3', 'torch.int32',
    'torch.int4', 'torch.int5', 'torch.int6', 'torch.int64', 'torch.int7', 'torch.int8',
    'torch.nn.parameter.Parameter', 'torch.per_channel_affine', 'torch.per_channel_affine_float_qparams',
    'torch.per_channel_symmetric', 'torch.per_tensor_affine', 'torch.per_tensor_symmetric', 'torch.qint32',
    'torch.qint8', 'torch.quint2x4', 'torch.quint4x2', 'torch.quint8', 'torch.serialization._get_layout',
    'torch.sparse.BFloat16Tensor', 'torch.sparse.ByteTensor', 'torch.sparse.CharTensor',
    'torch.sparse.DoubleTensor', 'torch.sparse.FloatTensor', 'torch.sparse.HalfTensor',
    'torch.sparse.IntTensor', 'torch.sparse.LongTensor', 'torch.sparse.ShortTensor',
    'torch.storage.TypedStorage', 'torch.storage.UntypedStorage', 'torch.uint1', 'torch.uint16', 'torch.uint2',
    'torch.uint3', 'torch.uint32', 'torch.uint4', 'torch.uint5', 'torch.uint6', 'torch.uint64', 'torch.uint7',
    'torch.uint8'
])

ALIGNMENT = 64
_GRAD_DTYPES = {"float32", "float64", "float16", "bfloat16", "complex64", "complex128"}


class Global:
    """A global (``module.name``) written into the pickle by name, without importing it (e.g. ``torch.float32``)."""
    __slots__ = ("module", "name")
    _cache: Dict[Tuple[str, str], "Global"] = {}

    def __new__(cls, module: str, name: str) -> "Global":
        key = (module, name)
        obj = cls._cache.get(key)
        if obj is None:
            obj = super().__new__(cls)
            obj.module, obj.name = module, name
            cls._cache[key] = obj
        return obj

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"

    def __call__(self, *args, **kwargs):  # pickle's save_reduce wants a callable; this one is only ever written
        raise TypeError(f"{self!r} is a placeholder written into a checkpoint, not callable here")


def rebuild_primitive(cls, init_attrs: dict):
    """A MindSpore operator object (``mindspore.ops.Primitive``) held by a saved module (every MindTorch module holds
    ``cast``; ``nn.LSTM`` its recurrent cells' operators), rebuilt from its class and its constructor's arguments
    (``Primitive.init_attrs``: what MindSpore's own ``Primitive.__deepcopy__`` calls ``type(self)(**init_attrs)``
    with). Plain pickling restored only the Python ``__dict__`` of such an object, not its C++ part: the loaded
    module raised "Unable to cast from non-held to held instance" at its first call. Written into checkpoints as
    ``adapter.torchfile.rebuild_primitive`` by ``patches/serialization.py``."""
    return cls(**init_attrs)


class TensorData(NamedTuple):
    """A tensor as the writer sees it.

    Attributes:
        array: C-contiguous numpy array with the tensor's shape; for ``bfloat16``, the raw bits as ``uint16``.
        dtype: torch dtype name (a key of :data:`DTYPES`).
        requires_grad: written into the file as PyTorch does.
        parameter: written as ``torch.nn.Parameter`` (``torch._utils._rebuild_parameter``).
    """
    array: np.ndarray
    dtype: str
    requires_grad: bool = False
    parameter: bool = False


def tensor_data_from_numpy(array: np.ndarray) -> TensorData:
    """A numpy array as a torch tensor of the same dtype (bfloat16 via ``ml_dtypes`` when present).

    Raises:
        TypeError: the dtype has no torch equivalent (object, strings, unsigned > 8 bit).
    """
    name = str(array.dtype)
    if name not in _NUMPY_TO_DTYPE:
        raise TypeError(f"cannot write a numpy array of dtype {array.dtype} as a torch tensor")
    array = _c_order(array)
    if name == "bfloat16":
        return TensorData(array.view(np.uint16), "bfloat16")
    return TensorData(array.astype(array.dtype.newbyteorder("<"), copy=False), _NUMPY_TO_DTYPE[name])


def _c_order(array: np.ndarray) -> np.ndarray:
    """``array`` C-contiguous, shape kept (``np.ascontiguousarray`` turns 0-d into 1-d)."""
    return array if array.flags.c_contiguous else array.copy(order="C")


class _Storage:
    __slots__ = ("key", "data")

    def __init__(self, key: str, data: TensorData):
        self.key, self.data = key, data


def _contiguous_stride(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    stride, acc = [], 1
    for dim in reversed(shape):
        stride.append(acc)
        acc *= max(dim, 1)
    return tuple(reversed(stride))


def _stock_dispatch() -> dict:
    """The pure-Python pickler's own type -> save method table, without what other libraries added to it.

    ``import dill`` (MindTorch's DataLoader imports it) writes dill's savers into ``pickle._Pickler.dispatch`` (the
    class-level table our pickler inherits; ``dill.extend``): a plain ``complex``, ``slice``, ``range`` or
    ``frozenset`` value, or any ``__main__`` class, was then written as ``dill._dill._load_type(...)`` /
    ``_create_type(...)``, which PyTorch cannot load at all (``No module named 'dill'``, even with
    ``weights_only=False``) and which its ``weights_only`` loader refuses. PyTorch's ``torch.save`` uses the C
    pickler, which dill leaves alone; this table is what that pickler does: pickle's own savers only. dill also
    replaced entries (``dict``, ``function``, ``type``), so the table comes from a fresh execution of the ``pickle``
    module's source (once per process), not from the shared class.
    """
    global _STOCK_DISPATCH
    if _STOCK_DISPATCH is None:
        import importlib.util
        spec = importlib.util.find_spec("pickle")
        fresh = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fresh)
        _STOCK_DISPATCH = dict(fresh._Pickler.dispatch)
    return _STOCK_DISPATCH


_STOCK_DISPATCH: Optional[dict] = None


class _Pickler(pickle._Pickler):  # the Python pickler: it lets us write globals by name (see save)
    def __init__(self, file, protocol: int, tensor_hook: Callable[[Any], Optional[TensorData]],
                 global_hook: Callable[[Any], Optional[Global]], reduce_hook: Callable[[Any], Optional[tuple]],
                 replace_hook: Callable[[Any], Any]):
        super().__init__(file, protocol)
        self.dispatch = _stock_dispatch()
        self.tensor_hook, self.global_hook, self.reduce_hook = tensor_hook, global_hook, reduce_hook
        self.replace_hook = replace_hook
        self.storages: List[_Storage] = []

    def persistent_id(self, obj):
        if type(obj) is _Storage:
            dtype = obj.data.dtype
            return ("storage", Global("torch", DTYPES[dtype][1]), obj.key, "cpu", int(obj.data.array.size))
        return None

    def save(self, obj, save_persistent_id=True):
        glob = obj if type(obj) is Global else None
        if glob is None and type(obj) not in (str, int, float, bool, tuple, list, dict, type(None), bytes):
            obj = self.replace_hook(obj)
            glob = self.global_hook(obj)
        if glob is not None:
            self.framer.commit_frame()
            memo = self.memo.get(id(glob))
            if memo is not None:
                self.write(self.get(memo[0]))
                return
            self.write(pickle.GLOBAL + f"{glob.module}\n{glob.name}\n".encode("utf-8"))
            self.memoize(glob)
            return
        super().save(obj, save_persistent_id)

    def reducer_override(self, obj):
        if type(obj) is TensorData:
            data = obj
        elif type(obj) in (str, int, float, bool, tuple, list, dict, type(None), bytes, _Storage):
            return NotImplemented
        else:
            data = self.tensor_hook(obj)
            if data is None:
                rv = self.reduce_hook(obj)
                return NotImplemented if rv is None else rv
        if not data.array.flags.c_contiguous:
            data = data._replace(array=_c_order(data.array))
        storage = _Storage(str(len(self.storages)), data)
        self.storages.append(storage)
        if data.requires_grad and data.dtype not in _GRAD_DTYPES:  # torch refuses requires_grad on integer tensors
            data = data._replace(requires_grad=False)
        shape = tuple(int(d) for d in data.array.shape)
        tensor = (Global("torch._utils", "_rebuild_tensor_v2"),
                  (storage, 0, shape, _contiguous_stride(shape), bool(data.requires_grad and not data.parameter),
                   collections.OrderedDict()))
        if not data.parameter:
            return tensor
        return (Global("torch._utils", "_rebuild_parameter"),
                (data._replace(parameter=False, requires_grad=False), bool(data.requires_grad),
                 collections.OrderedDict()))


def _aligned_zipinfo(zf: zipfile.ZipFile, name: str, size: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = size
    start = zf.start_dir + 30 + len(name.encode("utf-8")) + 4  # local header + name + extra field header
    pad = (-start) % ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad  # the padding record PyTorch's writer uses
    return info


def _write_record(zf: zipfile.ZipFile, name: str, data) -> None:
    if isinstance(data, np.ndarray):
        data = _c_order(data).reshape(-1).view(np.uint8)
    view = memoryview(data)
    info = _aligned_zipinfo(zf, name, view.nbytes)
    with zf.open(info, "w", force_zip64=view.nbytes > 0x7FFFFFFF) as out:
        out.write(view)


def write(obj: Any, fileobj, *, tensor_hook: Callable[[Any], Optional[TensorData]] = lambda o: None,
          global_hook: Callable[[Any], Optional[Global]] = lambda o: None,
          reduce_hook: Callable[[Any], Optional[tuple]] = lambda o: None,
          replace_hook: Callable[[Any], Any] = lambda o: o, protocol: int = 2) -> None:
    """Write ``obj`` to the binary file object ``fileobj`` in PyTorch's zip format.

    Args:
        obj: any picklable object; objects for which ``tensor_hook`` returns a :class:`TensorData` (and
            :class:`TensorData` values themselves) are written as torch tensors.
        fileobj: writable binary file object (seekable for 64-byte alignment of the tensor data).
        tensor_hook: ``obj -> TensorData | None``.
        global_hook: ``obj -> Global | None``: objects written as a global by name (e.g. dtypes -> ``torch.float32``).
        reduce_hook: ``obj -> (callable_or_Global, args) | None``: how to pickle other objects (``torch.Size``).
        replace_hook: ``obj -> obj``: an object to write instead (e.g. a float subclass as a plain float).
        protocol: pickle protocol (PyTorch's default is 2).
    Raises:
        pickle.PicklingError, TypeError: an object in ``obj`` cannot be pickled.
    """
    buf = io.BytesIO()
    pickler = _Pickler(buf, protocol, tensor_hook, global_hook, reduce_hook, replace_hook)
    pickler.dump(obj)
    with zipfile.ZipFile(fileobj, "w", zipfile.ZIP_STORED) as zf:
        _write_record(zf, "archive/data.pkl", buf.getvalue())
        _write_record(zf, "archive/.format_version", b"1")
        _write_record(zf, "archive/.storage_alignment", str(ALIGNMENT).encode())
        _write_record(zf, "archive/byteorder", b"little")
        for storage in pickler.storages:
            _write_record(zf, f"archive/data/{storage.key}", storage.data.array)
        _write_record(zf, "archive/version", b"3")
        _write_record(zf, "archive/.data/serialization_id", str(secrets.randbits(63)).zfill(20).encode())


@contextlib.contextmanager
def atomic_write(path) -> Iterator[io.BufferedWriter]:
    """Open a temporary file next to ``path`` for writing; on success fsync it and rename it over ``path``.

    A process killed while writing leaves ``path`` as it was (the old checkpoint, or absent) and a
    ``.NAME.PID.XXXXXXXX.tmp`` file next to it; it never leaves a truncated ``path``. A symlink ``path`` is
    written through (its target is replaced), as ``open(path, 'wb')`` would. On an exception the temporary file
    is removed and the exception propagates.
    """
    path = os.fspath(path)
    if os.path.islink(path):
        path = os.path.realpath(path)
    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for open(path, 'wb')
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


# ---------------------------------------------------------------------------------------------------------------
# Reading into numpy (run.py convert)

class _StorageType:
    def __init__(self, dtype: str):
        self.dtype = dtype


def _numpy_dtype(name: str):
    if name == "bfloat16":
        try:
            import ml_dtypes
            return np.dtype(ml_dtypes.bfloat16)
        except ImportError:  # pragma: no cover - ml_dtypes comes with MindSpore
            return np.dtype("<u2")
    return np.dtype(DTYPES[name][0])


def _rebuild_tensor_v2(storage, offset, size, stride, requires_grad=False, hooks=None, metadata=None):
    item = storage.dtype.itemsize
    arr = np.lib.stride_tricks.as_strided(storage[offset:], shape=tuple(size),
                                          strides=tuple(s * item for s in stride))
    return np.array(arr)  # own, contiguous copy


def _rebuild_tensor(storage, offset, size, stride):
    return _rebuild_tensor_v2(storage, offset, size, stride)


def _rebuild_parameter(data, requires_grad, hooks, state=None):
    return data


def _rebuild_from_type_v2(func, new_type, args, state):
    return func(*args)


_NUMPY_GLOBALS: Dict[str, Any] = {
    "collections.OrderedDict": collections.OrderedDict, "collections.Counter": collections.Counter,
    "builtins.set": set, "builtins.bytearray": bytearray, "builtins.complex": complex,
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2, "torch._utils._rebuild_tensor": _rebuild_tensor,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter,
    "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    "torch.Size": tuple, "torch.device": str,
}


def _codecs_encode(text, encoding="latin1"):
    return text.encode(encoding)


_NUMPY_GLOBALS["_codecs.encode"] = _codecs_encode


def py2_name(module: str, name: str) -> Tuple[str, str]:
    """Protocol-2 pickles name builtins as Python 2 did (``__builtin__.set``); the Python 3 name, as unpickling does."""
    import _compat_pickle
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


class _NumpyUnpickler(pickle.Unpickler):
    def __init__(self, file, zf: zipfile.ZipFile, prefix: str, source: str):
        super().__init__(file, encoding="utf-8")
        self.zf, self.prefix, self.source = zf, prefix, source
        self.storages: Dict[str, np.ndarray] = {}

    def find_class(self, module, name):
        module, name = py2_name(module, name)
        full = f"{module}.{name}"
        if full in _NUMPY_GLOBALS:
            return _NUMPY_GLOBALS[full]
        if module == "torch" and name in _STORAGE_TO_DTYPE:
            return _StorageType(_STORAGE_TO_DTYPE[name])
        if module == "torch" and name in DTYPES:
            return name
        raise pickle.UnpicklingError(
            f"{self.source}: holds `{full}`, which is not a tensor, a container or a dtype: only weights "
            "(PyTorch's weights_only=True allowlist) are read here")

    def persistent_load(self, pid):
        kind, storage_type, key, _location, _numel = pid
        if kind != "storage":
            raise pickle.UnpicklingError(f"{self.source}: unknown persistent id {kind!r}")
        if key not in self.storages:
            raw = self.zf.read(f"{self.prefix}/data/{key}")
            self.storages[key] = np.frombuffer(raw, dtype=_numpy_dtype(storage_type.dtype))
        return self.storages[key]


def read(path) -> Any:
    """Read a PyTorch zip checkpoint into Python containers of numpy arrays (tensors -> ``np.ndarray``).

    Only weights are read: the globals of PyTorch's ``weights_only`` allowlist; dtypes come back as their names.
    Raises:
        ValueError: ``path`` is not a zip checkpoint (PyTorch < 1.6 legacy format, or not a checkpoint).
        pickle.UnpicklingError: the file pickles other objects (classes, functions).
    """
    source = os.fspath(path)
    if not zipfile.is_zipfile(source):
        raise ValueError(f"{source}: not a PyTorch zip checkpoint (torch.save of PyTorch >= 1.6); re-save it with "
                         "torch.save in a recent PyTorch")
    with zipfile.ZipFile(source) as zf:
        names = zf.namelist()
        pkl = next((n for n in names if n.endswith("/data.pkl") and n.count("/") == 1), None)
        if pkl is None:
            raise ValueError(f"{source}: zip archive without <dir>/data.pkl: not a torch.save checkpoint")
        prefix = pkl.split("/")[0]
        with zf.open(pkl) as fh:
            return _NumpyUnpickler(io.BytesIO(fh.read()), zf, prefix, source).load()


def globals_in(path) -> List[str]:
    """The ``module.name`` globals that ``path``'s ``data.pkl`` refers to, in order of first use (tests, audits)."""
    import pickletools
    with zipfile.ZipFile(os.fspath(path)) as zf:
        pkl = next(n for n in zf.namelist() if n.endswith("/data.pkl"))
        data = zf.read(pkl)
    found: List[str] = []
    for op, arg, _pos in pickletools.genops(data):
        if op.name == "GLOBAL":
            name = ".".join(py2_name(*arg.split(" ", 1)))
            if name not in found:
                found.append(name)
        elif op.name == "STACK_GLOBAL":  # protocol >= 4: module and name come from the stack (not written by us)
            found.append("<STACK_GLOBAL>")
    return found
