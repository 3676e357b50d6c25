"""MindSpore-version compatibility shims for MindTorch 0.4.0 (issue 17), part of the fenced backend.

MindTorch 0.4.0 was written against MindSpore 2.5 (``mindspore-dev 2.5.0.dev20250119``, our default stack). Later
MindSpore releases removed or renamed what it imports and relies on; measured on ``mindspore 2.10.0``:

==  ======================================================================  =========================================
#   what changed (MindSpore 2.10.0 against 2.5-dev)                         shim here
==  ======================================================================  =========================================
1   ``mindspore._c_expression.Tensor`` renamed ``TensorPy``                 alias ``Tensor`` -> ``TensorPy``
2   ``mindspore.common.api.set_adapter_config`` removed (MindTorch           a function that keeps the config
    registers its Tensor/Parameter types with it at import)                 (:data:`adapter_config`)
3   ``mindspore.parallel._ps_context._is_role_worker`` / ``_clone_hash_     ``_is_role_worker`` -> False (no
    table`` / ``_insert_accumu_init_info`` removed (parameter server)       parameter server); the two others raise
4   module ``...multitype_ops.logic_not_impl`` renamed ``logical_not_impl``  ``sys.modules`` alias
5   ``mindspore.common._stub_tensor.StubTensor`` is an empty class: PyNative :class:`StubTensor` below: MindTorch's
    ops return ``Tensor`` itself. MindTorch's ``Tensor`` subclasses         tensor becomes a ``Tensor`` subclass
    ``StubTensor`` and keeps its data in ``self.tensor``, which no op       whose C++ part shares the data it is
    reads: its tensors silently had no storage                              given
6   ``_inner_ops.ConvertToMsTensor`` / ``ConvertToAdapterTensor`` (and      re-created (:func:`convert_to_ms_tensor`,
    their instances ``convert_to_ms_tensor`` / ``..._adapter_tensor``)      :func:`convert_to_adapter_tensor`)
    removed; every MindTorch op converts through them
7   ``nn.Cell`` gained read-only properties (e.g. ``param_prefix``,        setters that store what MindTorch's
    ``bprop_debug``) that MindTorch's ``Module.__init__`` assigns            ``Module`` assigns
8   ``Tensor._grad_fn`` gone; ``_retain_grad`` is a method of ``TensorPy``  :class:`StubTensor` keeps both as data
9   the graph compiler has no evaluator for the two conversions             MultitypeFuncGraph conversions (below)
10  bundled oneDNN 3 runs CPU ``Conv2D`` 50-100x slower on AVX-512 CPUs    ``ONEDNN_MAX_CPU_ISA=AVX2``
                                                                            (:func:`set_environment`)
11  ``ops.cummin`` returns a tuple (2.5: a list, which MindTorch's           :func:`_cummin_list`: the same values
    ``torch.cummin`` / ``Tensor.cummin`` assign the int64 indices into:      in a list
    TypeError 'tuple' object does not support item assignment)
12  ``Tensor.bernoulli`` became PyTorch's ``bernoulli(*, generator)`` (the  :func:`_tensor_bernoulli`: positional
    tensor is the probability); 2.5's was ``bernoulli(p=0.5, seed=None)``   ``(p, seed)`` go to 2.5's
    (draws shaped like the tensor), which MindTorch's ``Tensor.bernoulli``  ``ops.function.math_func.bernoulli``
    calls positionally: TypeError                                           (still there), else 2.10's method
13  PyNative autograd of in-place ops right only for ``copy_`` into a      a written tensor is rebound for
    non-view (a view write: zero/wrong gradients; ``add_``: wrong)          MindTorch's conversions
                                                                            (:func:`rebind_storage`, :func:`rebind`);
                                                                            :func:`unreliable_inplace_nodes`
14  ``Tensor`` defines ``__iter__`` (2.5: none), so every tensor and        ``Iterable`` in MindTorch's
    ``Parameter`` is a ``collections.abc.Iterable``. MindTorch's            ``optim.optimizer`` module excludes
    optimizer ``state_dict()`` (Adagrad, Adadelta, Adamax, NAdam, RAdam,    tensors, as 2.5's did
    ASGD, Rprop, RMSprop; ``_ms_state_dict``) told a ``ParameterTuple``     (:func:`install_after_mindtorch`,
    from a ``Parameter`` by it: it recursed into the rows and raised        :class:`IterableNotTensor`)
    "iteration over a 0-d tensor"; its ``load_state_dict`` (``_load``)
    would ``set_data`` row views, not the parameter
==  ======================================================================  =========================================

Every shim is feature-detected (``hasattr`` / a failed import), never keyed on a version string, and is a no-op where
MindSpore still has the original (so on 2.5-dev :func:`install` changes nothing: :func:`applied` is empty there).
:func:`install` must run after ``import mindspore`` and before ``import mindtorch`` (``app/bootstrap.py``
``setup_mindspore``); :func:`install_after_mindtorch` (shim 14, which rebinds a name inside a MindTorch module) right
after ``import mindtorch``. Attributes are replaced through ``adapter.patching.patch_attr`` (recorded, reversible in
tests), never by editing site-packages.
"""
from __future__ import annotations

import importlib.util
import os
import re
import sys
import weakref
from typing import List

from adapter import patching

_applied: List[str] = []
adapter_config: dict = {}  # what MindTorch passed to set_adapter_config (shim 2), for whoever needs its types


# -- before import mindspore ---------------------------------------------------------------------------------------
ONEDNN_ISA_ENV = "ONEDNN_MAX_CPU_ISA"
ONEDNN_ISA_CAP = "AVX2"


def set_environment(environ=None, mindspore_dir=None) -> list:
    """Environment settings a MindSpore needs before it is imported (``app/bootstrap.py``, before
    ``import mindspore``); returns the names set. Never overrides a value the user set.

    10: MindSpore 2.10.0 bundles oneDNN 3 (``mindspore/lib/libdnnl.so.3``; 2.5-dev: ``libdnnl.so.2``). On a CPU with
    AVX-512, oneDNN 3.10 runs MindSpore's plain-layout (NCHW) ``Conv2D`` with its ``jit_uni_ncsp`` kernel: measured
    (``ONEDNN_VERBOSE=1``, 2 cores, 32x64x16x16 input, 64 3x3 filters) 0.87-2.2 s per convolution against 0.018 s for
    2.5-dev, a ResNet18 compiled step 11.8 s against 0.65 s. Capped at AVX2 (``ONEDNN_MAX_CPU_ISA=AVX2``), oneDNN
    picks ``gemm:jit``: 0.04 s. Feature-detected from the bundled library file, without importing MindSpore.

    ``environ`` defaults to ``os.environ``, ``mindspore_dir`` to the installed package's folder (for tests)."""
    environ = os.environ if environ is None else environ
    done = []
    if mindspore_dir is None:
        try:
            spec = importlib.util.find_spec("mindspore")
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            mindspore_dir = list(spec.submodule_search_locations)[0]
    if mindspore_dir is not None:
        lib = os.path.join(mindspore_dir, "lib", "libdnnl.so.3")
        if os.path.exists(lib) and ONEDNN_ISA_ENV not in environ:
            environ[ONEDNN_ISA_ENV] = ONEDNN_ISA_CAP
            done.append(ONEDNN_ISA_ENV)
    return done


def wrapper_rebinds() -> bool:
    """Whether a MindTorch tensor is a wrapper that can be pointed at another C++ tensor (``t.stub = None;
    t.tensor = other``), as on MindSpore 2.5 (``StubTensor`` a plain Python object). False where it is the C++
    tensor itself (shim 5: MindSpore >= 2.10); there an in-place write must go into its storage."""
    return "StubTensor" not in _applied


def applied() -> List[str]:
    """The shims :func:`install` applied in this process, one short name each (empty on MindSpore 2.5-dev)."""
    return list(_applied)


def _set(owner, name: str, value, shim: str) -> None:
    with patching.applying(None):
        patching.patch_attr(owner, name, value)
    if shim not in _applied:
        _applied.append(shim)


def install() -> None:
    """Apply the shims this MindSpore needs (module docstring); idempotent. Call after ``import mindspore``, before
    ``import mindtorch``."""
    import importlib
    import mindspore._c_expression as c_expression

    # 1: the C++ tensor class
    if not hasattr(c_expression, "Tensor") and hasattr(c_expression, "TensorPy"):
        _set(c_expression, "Tensor", c_expression.TensorPy, "c_expression.Tensor")

    # 2: set_adapter_config
    from mindspore.common import api
    if not hasattr(api, "set_adapter_config"):
        _set(api, "set_adapter_config", set_adapter_config, "set_adapter_config")

    # 3: parameter-server helpers MindTorch's Parameter imports
    from mindspore.parallel import _ps_context as ps_context
    for name, value in (("_is_role_worker", _is_role_worker), ("_clone_hash_table", _ps_unsupported),
                        ("_insert_accumu_init_info", _ps_unsupported)):
        if not hasattr(ps_context, name):
            _set(ps_context, name, value, f"_ps_context.{name}")

    # 4: logic_not_impl -> logical_not_impl
    old = "mindspore.ops.composite.multitype_ops.logic_not_impl"
    if old not in sys.modules:
        try:
            importlib.import_module(old)
        except ImportError:
            sys.modules[old] = importlib.import_module("mindspore.ops.composite.multitype_ops.logical_not_impl")
            _applied.append("logic_not_impl")

    # 5, 8: StubTensor
    from mindspore.common import _stub_tensor
    if not hasattr(_stub_tensor.StubTensor, "stub_sync"):
        _set(_stub_tensor, "StubTensor", _stub_tensor_class(), "StubTensor")
    if not hasattr(_stub_tensor, "_stub_method"):  # backend.INTERNALS "stub_method" (patches/dataloader.py)
        _set(_stub_tensor, "_stub_method", _stub_method, "_stub_method")
    import mindspore
    tensor_py = getattr(c_expression, "TensorPy", None)  # 2.5-dev: none (its Tensor keeps `_grad` in Python)
    if tensor_py is not None and type(vars(tensor_py).get("_grad")).__name__ == "getset_descriptor":
        # 2.10: `_grad` is a C++ slot that hands back a plain mindspore.Tensor: MindTorch's `p.grad` (which reads
        # `self._grad`) lost its type (p.grad.is_sparse raised). A Python slot keeps the object MindTorch stored.
        for cls in (_stub_tensor.StubTensor, mindspore.Parameter):
            if "_grad" not in vars(cls):
                _set(cls, "_grad", _python_member("_grad", None), f"{cls.__name__}._grad")
    if not hasattr(mindspore.Tensor, "requires_grad"):
        # 2.5's Tensor.requires_grad property stored into _requires_grad; 2.10's Tensor has none, so MindTorch's
        # `output.requires_grad = True` (torch.zeros(2, requires_grad=True)) made a plain attribute that its
        # conversion never read: the tensor came back with requires_grad False, no .grad after backward().
        _set(mindspore.Tensor, "requires_grad", property(_get_requires_grad, _set_requires_grad),
             "Tensor.requires_grad")
    init = vars(mindspore.Tensor).get("__init__")
    code = getattr(init, "__code__", None)
    init_sets_it = code is not None and "_grad_fn" in code.co_names
    if not init_sets_it and not hasattr(mindspore.Tensor, "_grad_fn"):
        # 2.5's Tensor.__init__ set self._grad_fn = None on every tensor; 2.10's Tensor has no Python __init__.
        # MindTorch reads it from every tensor it wraps (None: a leaf, MindTorch's own autograd is unused).
        _set(mindspore.Tensor, "_grad_fn", None, "Tensor._grad_fn")

    # 7: Cell's lazily created dicts became read-only properties
    from mindspore import nn
    for name, prop in list(vars(nn.Cell).items()):
        code = getattr(getattr(prop, "fget", None), "__code__", None)
        if isinstance(prop, property) and prop.fset is None and code is not None \
                and f"_lazy{name}" in code.co_consts + code.co_names:
            _set(nn.Cell, name, property(prop.fget, _lazy_setter(name), prop.fdel, prop.__doc__),
                 f"Cell.{name}")

    # 11: ops.cummin returns a tuple (feature-detected from its bytecode, without running a kernel at import)
    from mindspore import ops
    if _returns_tuple_literal(ops.cummin):
        _set(ops, "cummin", _cummin_list(ops.cummin), "ops.cummin")

    # 12: Tensor.bernoulli lost its positional (p, seed)
    import inspect
    try:
        bernoulli_params = inspect.signature(mindspore.Tensor.bernoulli).parameters
    except (TypeError, ValueError):
        bernoulli_params = {"p": None}
    if "p" not in bernoulli_params:
        _set(mindspore.Tensor, "bernoulli", _tensor_bernoulli(mindspore.Tensor.bernoulli), "Tensor.bernoulli")

    # 6, 9: the conversions
    from mindspore.ops.operations import _inner_ops
    if not hasattr(_inner_ops, "ConvertToMsTensor"):
        to_ms_class, to_adapter_class, to_ms, to_adapter = _conversion_classes()
        _set(_inner_ops, "ConvertToMsTensor", to_ms_class, "ConvertToMsTensor")
        _set(_inner_ops, "ConvertToAdapterTensor", to_adapter_class, "ConvertToAdapterTensor")
        _set(_inner_ops, "convert_to_ms_tensor", to_ms, "convert_to_ms_tensor")
        _set(_inner_ops, "convert_to_adapter_tensor", to_adapter, "convert_to_adapter_tensor")


def install_after_mindtorch() -> None:
    """Apply the shims that change MindTorch's own modules (module docstring, 14); idempotent. Call after
    ``import mindtorch`` (``app/bootstrap.py``), before a user's optimizer exists. No-op on 2.5-dev."""
    import collections.abc
    import mindspore
    # 14: tensors became Iterable
    if issubclass(mindspore.Tensor, collections.abc.Iterable):
        from mindtorch.torch.optim import optimizer as mt_optimizer
        if getattr(mt_optimizer, "Iterable", None) is collections.abc.Iterable:
            _set(mt_optimizer, "Iterable", IterableNotTensor, "mindtorch.optim.Iterable")


# -- 2 ---------------------------------------------------------------------------------------------------------------
def set_adapter_config(config: dict) -> None:
    """Stand-in for MindSpore 2.5's ``mindspore.common.api.set_adapter_config`` (removed in later releases), which
    told the C++ core MindTorch's ``Tensor``/``Parameter`` classes and graph-mode operator overloads. Keeps
    ``config`` in :data:`adapter_config`; the core no longer reads it."""
    adapter_config.update(config)


# -- 3 ---------------------------------------------------------------------------------------------------------------
def _is_role_worker() -> bool:
    """No parameter server (removed from MindSpore): never a PS worker."""
    return False


def _ps_unsupported(*args, **kwargs):
    raise NotImplementedError("parameter-server mode is not in this MindSpore (removed after 2.5)")


# -- 7 ---------------------------------------------------------------------------------------------------------------
def _lazy_setter(name: str):
    """A setter for the ``Cell`` property ``name``, which MindSpore 2.10 made read-only: its getter creates the
    value on first read into ``self._lazy<name>`` (``_non_persistent_buffers_set``, ``_state_dict_hooks``,
    ``_forward_hook``, ...). MindTorch's ``Module.__init__`` assigns these names and its ``__setattr__`` reads them
    back from ``self.__dict__[name]``: the value is stored in both places (one object: the dicts and sets are
    mutated, not replaced, afterwards), so MindSpore and MindTorch see the same one."""
    slot = f"_lazy{name}"

    def put(self, value):
        from mindspore import nn
        super(nn.Cell, self).__setattr__(slot, value)
        self.__dict__[name] = value
    return put


def _stub_method(method):
    """MindSpore 2.5's ``_stub_tensor._stub_method``: ``method`` run on the synced tensor (here the tensor itself)."""
    def fun(*args, **kwargs):
        return method(args[0].stub_sync(), *args[1:], **kwargs)
    return fun


# -- 11, 12 ----------------------------------------------------------------------------------------------------------
def _returns_tuple_literal(function) -> bool:
    """Whether ``function`` (pure Python) ends in ``return (a, b, ...)``: its last instructions build a tuple and
    return it (MindSpore 2.10's ``ops.cummin``; 2.5's built a list: ``BUILD_LIST``)."""
    import dis
    code = getattr(function, "__code__", None)
    if code is None:
        return False
    ops = [ins.opname for ins in dis.get_instructions(code)]
    return ops[-2:] == ["BUILD_TUPLE", "RETURN_VALUE"]


def _cummin_list(original):
    """11: MindSpore 2.5's ``ops.cummin(input, axis)``: ``[values, indices]``, a list (2.10 returns the same two
    tensors in a tuple; MindTorch's ``torch.cummin`` / ``Tensor.cummin`` do ``output[1] = output[1].astype(int64)``).
    PyNative only, measured: 2.10's graph compiler resolves ``ms.ops.cummin`` by name to MindSpore's own function
    (this attribute is not read): ``mindspore.jit`` of MindTorch's cummin code still raises the TypeError (measured),
    so a compiled step using ``torch.cummin`` fails to compile there and takes the compile-error fallback. ``list(ms.ops.cummin(...))`` in
    MindTorch's two functions would cover graphs too (``list(tuple)`` compiles on 2.10): not done here."""
    def cummin(input, axis):
        """``mindspore.ops.cummin`` as MindSpore 2.5 returned it: a list ``[values, indices]``
        (adapter/backend_compat.py shim 11)."""
        return list(original(input, axis))
    cummin.__wrapped__ = original
    return cummin


def _tensor_bernoulli(original):
    """12: ``mindspore.Tensor.bernoulli`` taking both signatures. With a positional argument or ``p=``/``seed=``
    (MindSpore 2.5's ``Tensor.bernoulli(p=0.5, seed=None)``: 0/1 draws shaped like the tensor, in its dtype, each 1
    with probability ``p``; what MindTorch's ``Tensor.bernoulli`` calls) it runs 2.5's
    ``mindspore.ops.function.math_func.bernoulli(self, p, seed)``; otherwise 2.10's method
    (``bernoulli(*, generator=None)``: the tensor is the probability). A bare ``x.bernoulli()`` is 2.10's: 2.10's
    own code calls it so."""
    from mindspore.ops.function.math_func import bernoulli as bernoulli_25

    def bernoulli(self, *args, generator=None, **kwargs):
        if args or kwargs:
            if generator is not None:
                raise TypeError("Tensor.bernoulli: generator= with MindSpore 2.5's (p, seed) arguments")
            return bernoulli_25(self, *args, **kwargs)
        return original(self, generator=generator)
    bernoulli.__doc__ = original.__doc__
    bernoulli.__wrapped__ = original
    return bernoulli


# -- 14 --------------------------------------------------------------------------------------------------------------
class _NotTensorMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        import collections.abc
        import mindspore
        return isinstance(obj, collections.abc.Iterable) and not isinstance(obj, mindspore.Tensor)

    def __subclasscheck__(cls, sub) -> bool:
        import collections.abc
        import mindspore
        return issubclass(sub, collections.abc.Iterable) and not issubclass(sub, mindspore.Tensor)


class IterableNotTensor(metaclass=_NotTensorMeta):
    """14: ``collections.abc.Iterable`` as MindSpore 2.5 answered it for tensors: ``isinstance(x,
    IterableNotTensor)`` is ``isinstance(x, collections.abc.Iterable)`` and False for any ``mindspore.Tensor``
    (``Parameter``, MindTorch's ``Tensor``), which MindSpore 2.10 made iterable (``Tensor.__iter__`` yields rows; a
    0-d tensor raises TypeError "iteration over a 0-d tensor"). Bound as ``Iterable`` in
    ``mindtorch.torch.optim.optimizer``, whose ``_ms_state_dict`` / ``_ms_load_state_dict`` / ``load_state_dict``
    read it to tell a ``ParameterTuple`` or a list of state tensors (recurse) from one tensor (a leaf). Bound there
    only: MindTorch's other ``isinstance(x, Iterable)`` sites (``nn/utils/rnn.py`` ``pad_sequence``,
    ``nn/functional.py`` ``adaptive_max_pool3d``, ``torch_version.py``, ``nn/modules/utils.py`` ``_ntuple``) copy
    PyTorch's code, whose tensors are Iterable: there 2.10's answer is PyTorch's, and 2.5's was the one that differed
    (tests/test_tensor_iterable_sites.py)."""


# -- 5, 8 ------------------------------------------------------------------------------------------------------------
_stub_class = None


def _get_requires_grad(self):
    return bool(self.__dict__.get("_adapter_requires_grad", self._requires_grad))


def _set_requires_grad(self, value):
    """Into ``_requires_grad`` (what MindTorch's conversion copies); where 2.10 refuses (False on an op output:
    "You can only set requires_grad false to a leaf tensor"), kept on the object as 2.5's plain attribute was."""
    try:
        self._requires_grad = value
        self.__dict__.pop("_adapter_requires_grad", None)
    except RuntimeError:
        self.__dict__["_adapter_requires_grad"] = bool(value)


def _python_member(name, default):
    """A data property keeping ``name`` in the instance ``__dict__`` (``default`` when unset)."""
    def get(self):
        return self.__dict__.get(name, default)

    def put(self, value):
        self.__dict__[name] = value
    return property(get, put)


def _stub_tensor_class():
    """MindSpore 2.5's ``StubTensor`` protocol on a ``Tensor`` subclass (built once, after ``import mindspore``)."""
    global _stub_class
    if _stub_class is not None:
        return _stub_class
    import mindspore
    from mindspore._c_expression import TensorPy

    class StubTensor(mindspore.Tensor):
        """What MindTorch's ``Tensor`` derives from on MindSpore >= 2.10 (``StubTensor`` there is empty).

        In MindSpore 2.5 a ``StubTensor`` was a plain Python object holding the real tensor in ``self.tensor`` (or
        a pending op result in ``self.stub``), and the C++ core unwrapped it. 2.10's core only knows ``TensorPy``:
        here the MindTorch tensor *is* a ``Tensor``, and assigning ``self.tensor = t`` (what MindTorch's
        ``Tensor.__init__`` does) makes it share ``t``'s data (``TensorPy.__init__(self, t)``; an in-place write
        through either is seen by both), once: a second assignment raises TypeError (it cannot re-point the C++
        tensor; :func:`wrapper_rebinds`). ``self.tensor`` is ``self``; ``stub`` is always None (2.10 returns synced
        tensors). ``_grad``, ``_grad_fn``, ``_requires_grad``, ``_retain_grad``: plain data, as in 2.5
        (MindTorch's autograd bookkeeping; shim 8)."""

        _grad_fn = _python_member("_grad_fn", None)

        @property
        def _retain_grad(self):
            return self.__dict__.get("_retain_grad", False)

        @_retain_grad.setter
        def _retain_grad(self, value):
            # MindTorch copies ``source._retain_grad`` from the tensor it wraps: on 2.10 a plain Tensor's is the
            # C++ method that *asks* for retention (a bound method: truthy), its state is ``_retains_grad``.
            if callable(value):
                value = bool(getattr(getattr(value, "__self__", None), "_retains_grad", False))
            self.__dict__["_retain_grad"] = value

        @classmethod
        def __subclasshook__(cls, sub):
            """A plain class's ``issubclass``, as 2.5's ``StubTensor`` (not an ``ABCMeta`` class) had: without this,
            ``ABCMeta`` asks the subclasses too, and MindTorch's ``Tensor.__subclasshook__`` counts every class
            with ``param_info`` (2.10: ``TensorPy`` itself) as its subclass, so every ``Tensor`` was a StubTensor."""
            if cls is StubTensor:
                return StubTensor in sub.__mro__
            return NotImplemented

        def __init__(self, stub=None, tensor=None):
            self.stub = stub
            if tensor is not None:
                self.tensor = tensor

        @property
        def tensor(self):
            return self

        @tensor.setter
        def tensor(self, value):
            if self.__dict__.get("_adapter_initialized"):
                # TensorPy.__init__ on an initialised tensor changes nothing: a silent lost write. A tensor cannot
                # take another's C++ tensor here (2.5's wrapper could): callers write in place instead
                # (patches/inplace_autograd.py, rebinds_storage()).
                raise TypeError("a MindTorch tensor cannot be re-pointed at another tensor on this MindSpore "
                                "(MindSpore >= 2.10: it is the C++ tensor itself); write into it in place")
            TensorPy.__init__(self, value)
            self.__dict__["_adapter_initialized"] = True

        @property
        def stub(self):
            return None

        @stub.setter
        def stub(self, value):
            if value is not None:
                raise TypeError("StubTensor(stub=...) is MindSpore 2.5's pending op output; this MindSpore has none")

        def stub_sync(self):
            """The synced tensor: ``self`` (never pending here)."""
            return self

    StubTensor.__module__ = "mindspore.common._stub_tensor"
    _stub_class = StubTensor
    return StubTensor


# -- 6, 9 ------------------------------------------------------------------------------------------------------------
_conversions = None


def _conversion_classes():
    """``(ConvertToMsTensor, ConvertToAdapterTensor)``, built once after ``import mindspore``.

    Each is a ``MultitypeFuncGraph`` (``mindspore.ops.composite``) with one overload, ``Tensor -> the same tensor``:
    that is what the graph compiler inlines (shim 9: 2.10's compiler has no evaluator for 2.5's two primitives; in
    a graph both tensor kinds are one type anyway). ``__call__``, which only PyNative runs, does the conversion.
    Classes, not functions, because MindTorch lists them in ``mindspore.train.amp._INNER_AMP_BLACK_LIST``."""
    global _conversions
    if _conversions is not None:
        return _conversions
    import mindspore
    from mindspore.ops.auto_generate import deepcopy
    from mindspore.ops.composite import MultitypeFuncGraph

    class ConvertToMsTensor(MultitypeFuncGraph):
        """MindSpore 2.5's ``_inner_ops.ConvertToMsTensor`` (removed later): a MindTorch tensor -> a MindSpore
        ``Tensor`` with the same data (MindTorch's methods no longer apply to it); a MindSpore ``Tensor`` as is; a
        ``Parameter`` -> a recorded copy (``deepcopy``, as 2.5 converted every non-stub tensor). Autograd flows
        through it: ``Tensor(x)`` is recorded by PyNative (measured: the gradient of ``(Tensor(3x))^2`` is 18 at
        x=1)."""

        def __call__(self, x):
            if type(x) is mindspore.Tensor:
                return x
            x = resolved(x)  # rebound by an in-place write (section 13)
            if type(x) is mindspore.Tensor:
                return x
            if isinstance(x, mindspore.Parameter):
                # 2.5 did the same for every non-stub tensor: a recorded copy. ``Tensor(param)`` is not connected
                # to the parameter in a gradient w.r.t. weights (measured: a free Parameter's grad was zero).
                return deepcopy(x)
            return mindspore.Tensor(x)

    class ConvertToAdapterTensor(MultitypeFuncGraph):
        """MindSpore 2.5's ``_inner_ops.ConvertToAdapterTensor`` (removed later): a MindSpore tensor -> MindTorch's
        ``Tensor`` sharing its data (``Tensor(x, cast_tensor=True)``)."""

        def __call__(self, x):
            tensor_class = adapter_config.get("Tensor") or sys.modules["mindtorch.torch.tensor"].Tensor
            value = resolved(x)
            if value is not x:
                # rebound by an in-place write (section 13): x's own history is stale, and MindTorch passes what
                # this returns straight to MindSpore's ops (Tensor.mean / Tensor.prod:
                # ``ms.ops.mean(cast_to_adapter_tensor(self), ...)``; GroupNorm; nn.Sequential's output): the
                # tensor holding the written values and their history, as MindTorch's own type (the __mro__ test:
                # MindTorch's Tensor.__subclasshook__ makes isinstance() true of every MindSpore tensor)
                return value if tensor_class in type(value).__mro__ else tensor_class(value, cast_tensor=True)
            return tensor_class(x, cast_tensor=True)

    def same(x):
        return x

    for cls in (ConvertToMsTensor, ConvertToAdapterTensor):
        cls.__module__ = "mindspore.ops.operations._inner_ops"
    to_ms, to_adapter = ConvertToMsTensor("convert_to_ms_tensor"), ConvertToAdapterTensor("convert_to_adapter_tensor")
    to_ms.register("Tensor")(same)
    to_adapter.register("Tensor")(same)
    _conversions = (ConvertToMsTensor, ConvertToAdapterTensor, to_ms, to_adapter)
    return _conversions


# -- 13: in-place writes under autograd (patches/inplace_autograd.py) ------------------------------------------------
# MindSpore 2.10's PyNative autograd of in-place ops, measured on the CPU (2026-11-26, y = x @ w.T then an in-place op
# on y, loss through y and/or x @ w.T, w's gradient against PyTorch 2.13's; 36 cases): right only for ``Tensor.copy_``
# into a tensor that is not a view. ``copy_`` into a view (every MindTorch ``nn.Linear`` output is one: its last op is
# a ``Reshape``, a view op on 2.10) records ``CopySlice`` on the viewed tensor and ``AsStrided`` on the view, whose
# backward gives zeros through the view and wrong values through its base (``y.reshape(4, 2).copy_(2 * y)``: 0 and 144
# where PyTorch gives 96 and 96); MindSpore's own ``add_``/``mul_``/``sub_`` are wrong even on a non-view
# (``y.add_(1.0)``: 24 where PyTorch gives 32). So the adapter writes with ``copy_`` only, and repairs a write that
# went through a view (:func:`recorded_write`, :func:`rebind`); what it cannot repair is found before differentiating
# (:func:`unreliable_inplace_nodes`). Both conversions resolve a rebinding, ``cast_to_adapter_tensor`` included:
# MindTorch's ``Tensor.mean`` / ``prod`` pass ``cast_to_adapter_tensor(self)`` straight to MindSpore's op, and
# returning the rebound tensor itself there gave the op its history before the write (timm's squeeze-excite after an
# in-place SiLU: efficientnet_b0's step-1 gradient norm 2646 where PyTorch gives 2367; tests/fixtures/
# inplace_then_reduce.py).
_REBOUND = "_adapter_rebound"  # instance-dict key of a MindTorch tensor: (token, the tensor conversions use instead)
_stale_nodes: list = []  # ((unique id, output index) of a rebound tensor's own backward node, (write's seq, node))
_rebound: list = []  # weak references to the tensors that hold a _REBOUND entry (cleared by clear_rebinds())
_NO_ENTRIES: dict = {}
_rebind_token = None  # callable -> the current recording's token (set by patches/inplace_autograd.py)
# backward-node names of the ops that may return a view of their input (2.10's view ops: Reshape, TransposeView,
# SliceExtView, SelectView, BroadcastTo, ExpandDims, Split..., AsStrided; generous: a non-view here only takes the
# recorded copy_ path, which is right or raises at backward)
_VIEW_NAME = re.compile(r"View|Reshape|Transpose|Slice|Select|Split|Squeeze|ExpandDims|Broadcast|Narrow|Diagonal|"
                        r"Unstack|Unbind|Chunk|AsStrided|Permute|Flatten|Expand|Real|Imag|Strided|Index|Unfold|"
                        r"Movedim|Swap|CopySlice")
_INPLACE_VIEW_NODES = ("CopySlice",)  # backward nodes of a write through a view (wrong on 2.10, above)


def recorded_write(target, value) -> bool:
    """Write ``value`` (a tensor of ``target``'s shape and dtype) into ``target`` with MindSpore's recorded
    ``Tensor.copy_``. Returns True when MindSpore recorded it as a write through a view (``target``'s backward node
    is then ``AsStrided``), whose gradient is wrong on 2.10 (section 13 above): the caller rebinds ``target``."""
    import mindspore
    mindspore.Tensor.copy_(target, value)
    node = getattr(target, "_grad_node", None)
    return node is not None and node.name() == "AsStrided"


def has_history(tensor) -> bool:
    """Whether ``tensor`` was made by a recorded op (it has a backward node)."""
    return getattr(tensor, "_grad_node", None) is not None


def rebind_storage(target, value, token) -> bool:
    """Make ``target`` (not a view) show ``value``'s values without writing into its storage, which a recorded
    backward may have saved (``leaky_relu(y)`` saves ``y``; a recorded ``copy_`` into ``y`` then made that backward
    raise "modified by an inplace operation"): ``target`` takes ``value``'s storage (``Tensor.set_``, not recorded,
    version unchanged) and :func:`rebind` gives conversions ``value``'s history. Returns False (nothing done) where
    ``set_`` refuses (``value`` not contiguous, ...), where ``target`` has no history, or where its last op may
    have made a view (:data:`_VIEW_NAME`; the tensor it views would not see the write): the caller then writes with
    :func:`recorded_write`."""
    node = getattr(target, "_grad_node", None)
    if node is None or _VIEW_NAME.search(node.name()) or not value.is_contiguous():
        return False
    from mindspore._c_expression import TensorPy
    try:
        TensorPy.set_(target, value)  # MindSpore's: MindTorch's Tensor.set_ is an assign_value
    except (RuntimeError, TypeError, ValueError):
        return False
    value_node = getattr(value, "_grad_node", None)
    if node is not None and value_node is not None:
        # the node object is kept: it keeps the C++ node alive, whose address is its _unique_id (no reuse)
        index = target._output_index
        _stale_nodes.append(((node._unique_id(), index() if callable(index) else index),
                             (value_node._sequence_nr(), node)))
    rebind(target, value, token)
    return True


def rebind(target, value, token) -> None:
    """From now on, while ``_rebind_token()`` returns ``token``, MindTorch's conversion of ``target`` to a MindSpore
    tensor (every MindTorch op's input: :func:`_conversion_classes`) gives ``value``, which holds the same values and
    the right autograd history: 2.5's wrapper rebinding (``t.tensor = value``) for the ops that read ``target``
    afterwards. ``target``'s own storage keeps the written values (reads outside MindTorch's ops see them)."""
    target.__dict__[_REBOUND] = (token, value)
    _rebound.append(weakref.ref(target))  # weak: under mindspore.grad nothing may clear it before the next recording


def resolved(tensor):
    """``tensor``, or the tensor :func:`rebind` put in its place in the current recording (followed: that one may
    have been written in place and rebound in turn, ``y = cast_to_adapter_tensor(x); y.add_(1)``)."""
    for _ in range(64):  # a chain of writes; a cycle cannot form (each rebind targets a new op's result)
        entry = getattr(tensor, "__dict__", _NO_ENTRIES).get(_REBOUND)
        if entry is None or _rebind_token is None or entry[0] != _rebind_token() or entry[1] is tensor:
            return tensor
        tensor = entry[1]
    return tensor


def clear_rebinds() -> None:
    """Drop every :func:`rebind` entry (a recording ended: its histories must not keep its graph alive)."""
    while _rebound:
        target = _rebound.pop()()
        if target is not None:
            target.__dict__.pop(_REBOUND, None)
    _stale_nodes.clear()


def unreliable_inplace_nodes(output) -> List[str]:
    """The names of the backward nodes reachable from ``output`` whose gradient MindSpore 2.10 gets wrong: a write
    through a view (``CopySlice``, reached when the tensor a view was taken from is used after the write) and
    MindSpore's own in-place kernels other than ``InplaceCopy`` (``InplaceAddExt``, ...). Empty where the graph has
    none, or ``output`` has no history. Walks the graph once (ResNet18: ~1 ms)."""
    node = getattr(output, "_grad_node", None)
    stale = dict(_stale_nodes)  # a node made after the write that reads the rebound tensor's own (old) history
    found, seen, stack = [], set(), [node]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        key = node._unique_id() if callable(getattr(node, "_unique_id", None)) else id(node)
        if key in seen:
            continue
        seen.add(key)
        name = node.name()
        if name in _INPLACE_VIEW_NODES or (name.startswith("Inplace") and name != "InplaceCopy"):
            found.append(name)
        for edge in node.next_functions:
            child, index = edge if isinstance(edge, tuple) else (edge, 0)
            key = (child._unique_id(), index) if stale and child is not None else None
            if key in stale and node._sequence_nr() > stale[key][0]:
                found.append(f"{name} reading a tensor written in place by its old history")
            stack.append(child)
    return found


def set_rebind_token(token) -> None:
    """``token``: a callable whose value identifies the current recording (``adapter.tape.generation``); a
    :func:`rebind` made under another value is ignored."""
    global _rebind_token
    _rebind_token = token


_hooked: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()  # id -> Parameter holding _took_part_hook
_fired: set = set()  # ids of the hooked Parameters whose gradient was computed since watch_parameters cleared it


def _took_part_hook(key: int):
    def hook(grad):  # one argument: MindSpore's check_hook_fn counts them
        _fired.add(key)

    return hook


def watch_parameters(output, params):
    """Start finding which of ``params`` (Parameters with ``requires_grad``, differentiated by the open recording)
    the recorded ``output`` depends on; returns a callable that, called once after the recording's gradient ran
    (``backend.run_grad``), gives them in ``params``'s order.

    MindSpore returns a zero gradient for a weight the graph does not use; PyTorch gives ``.grad`` only to leaves
    the output depends on (``tape.candidate_parameters``' free parameters: those of every live optimizer).

    * 2.10 (a tensor has ``_grad_node``; each Parameter has its own leaf node, ``Parameter#N``): the nodes reachable
      from ``output``'s node (the walk of :func:`unreliable_inplace_nodes`), taken now, before ``end_graph``;
    * 2.5 (no Python view of the graph): a backward hook (``Tensor.register_hook``, public) on each parameter, put on
      at its first watch and kept for its life (it only notes the parameter's id). Measured on 2.5-dev: the hook runs
      for a parameter the graph uses (a zero gradient through ``w * 0.0`` included) and not for one it does not use;
      on 2.10 it runs for both, hence the walk there. Registered and removed around each gradient instead, it made
      MindSpore build the step's backward again every time: 846 vs 49 ms a step (a Linear(784, 10) + two free
      parameters, batch 64, ``--mode pynative``, this machine); kept, 39 ms.
    """
    import mindspore
    params = list(params)
    if not params:
        return lambda: []
    if hasattr(params[0], "_grad_node"):
        reached, stack = set(), [getattr(output, "_grad_node", None)]
        while stack:
            node = stack.pop()
            if node is None:
                continue
            key = node._unique_id()
            if key in reached:
                continue
            reached.add(key)
            for edge in node.next_functions:
                stack.append(edge[0] if isinstance(edge, tuple) else edge)

        def took_part_graph():
            return [p for p in params if p._grad_node is not None and p._grad_node._unique_id() in reached]

        return took_part_graph
    for p in params:
        if _hooked.get(id(p)) is not p:
            mindspore.Tensor.register_hook(p, _took_part_hook(id(p)))
            _hooked[id(p)] = p
    _fired.clear()

    def took_part_hooks():
        fired = set(_fired)
        _fired.clear()
        return [p for p in params if id(p) in fired]

    return took_part_hooks
