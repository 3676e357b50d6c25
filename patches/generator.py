"""``torch.Generator``: PyTorch's CPU generator, bit for bit, for the draws training scripts take from one.

MindTorch 0.4.0's ``torch.Generator()`` raises ``NotImplementedError`` at construction, so the common
``random_split(ds, [n1, n2], generator=torch.Generator().manual_seed(42))`` and ``DataLoader(..., generator=g)`` fail
at the user's line, and ``torch.rand(..., generator=g)`` is a ``TypeError``. This module gives a ``Generator`` that
draws PyTorch's own numbers, so a seeded split or shuffle selects the same samples as under PyTorch:

* the engine is PyTorch's ``at::mt19937`` (``CPUGeneratorImpl``): a 32-bit MT19937 seeded with ``seed & 0xffffffff``,
  the same stream as ``numpy.random.RandomState(seed & 0xffffffff)``; ``random()`` is one 32-bit draw and
  ``random64()`` two, the first one the high half (``make64BitsFrom32Bits``). Default seed 67280421310721
  (``c10::detail::default_rng_seed_val``);
* ``get_state()`` is PyTorch's 5056-byte ``CPUGeneratorImplState`` (legacy ``THGeneratorState`` pod: seed, ``left``,
  ``seeded``, ``next``, 624 state words as uint64, the cached double normal, then the cached float normal), so a state
  saved by PyTorch can be loaded here and the other way round;
* the draws (ATen ``native/cpu/DistributionTemplates.h``, ``core/DistributionsHelper.h``,
  ``core/TransformationHelper.h``, ``native/TensorFactories.cpp``), each checked against torch 2.13
  (``tests/test_generator.py``):

  - ``randperm(n)``: Fisher-Yates ``swap(r[i], r[i + random() % (n - i)])`` for ``n < 2**32 / 20``;
  - ``rand``/``uniform_``: ``(random() & (2**24 - 1)) * 2**-24`` for float32, ``(random64() & (2**53 - 1)) * 2**-53``
    for float64, scaled to ``[from, to)``;
  - ``randint(low, high)``: ``random() % range + low`` (``random64()`` when ``range >= 2**32``);
  - ``random_()`` on int64: ``random64() % 2**63``;
  - ``randn``/``normal_``: with 16 or more elements (contiguous), uniforms for all elements, then Box-Muller in blocks
    of 16 (``normal_fill_16``: ``u1 = 1 - data[j]``, ``u2 = data[j + 8]``), the last 16 redrawn when ``n % 16 != 0``;
    with fewer, one ``normal_distribution<double>`` per element (``u1, u2`` from ``random64()``, radius
    ``sqrt(-2 log1p(-u2))``, angle ``2 pi u1``, the sine half cached in the generator for the next draw).

Where a generator is used: ``torch.randperm/rand/randn/randint/normal`` (scalar mean and std) and
``Tensor.uniform_/normal_/random_`` with ``generator=``; ``random_split``; ``RandomSampler(generator=)`` (and
``DataLoader(shuffle=True, generator=)``, which passes it on) draws as PyTorch's sampler; a ``DataLoader`` iterator
takes its worker base seed from ``loader.generator`` first, as PyTorch's ``_BaseDataLoaderIter``. Float math runs in
numpy (float32 Box-Muller here vs PyTorch's AVX2 ``log256_ps``/``sincos256_ps``: the normals agree to ~1e-7 relative,
not always bit for bit). Any other MindTorch function given ``generator=`` (bernoulli, multinomial, dropout ...)
draws from the global RNG instead: it warns once at the user's line.

Replaces: ``torch.Generator`` (and ``torch._C``'s); ``torch.randperm/rand/randn/randint/normal`` (and
``mindtorch.torch.functional``'s; ``rand``/``randn`` wrap ``patches/random_draws.py``'s), ``torch.bernoulli/
multinomial/poisson``; ``Tensor.uniform_/normal_/random_/bernoulli/bernoulli_/cauchy_/exponential_/geometric_/
log_normal_``; ``torch.utils.data.random_split``; ``RandomSampler.__init__``, ``SubsetRandomSampler.__init__/
__iter__``, ``_BaseDataLoaderIter.__init__``.
"""
from __future__ import annotations

import functools
import os
import struct
import warnings

import numpy as np

from adapter import hooks

from . import Patch, get_original, get_replaced, is_patched, patch_attr

DEFAULT_SEED = 67280421310721  # c10/core/GeneratorImpl.h default_rng_seed_val
_STATE_BYTES = 5056            # sizeof(at::CPUGeneratorImplState)
_N = 624                       # MT19937 state words


class Generator:
    """PyTorch's ``torch.Generator(device='cpu')`` (see the module docstring for what it draws exactly).

    Raises:
        RuntimeError: ``set_state`` with a tensor that is not a 5056-byte uint8 state.
    """

    def __init__(self, device="cpu"):
        self._device = device
        self.manual_seed(DEFAULT_SEED)

    @property
    def device(self):
        """``torch.device`` of the ``device`` argument (built on access: the draws need only numpy)."""
        import mindtorch.torch as torch
        return torch.device(self._device) if isinstance(self._device, str) else self._device

    # --- seeding and state -------------------------------------------------------------------------------------------
    def manual_seed(self, seed) -> "Generator":
        """Seeds the engine with ``seed`` (an int; PyTorch keeps 64 bits as the initial seed, MT19937 uses the low 32)
        and clears the cached normals. Returns ``self``, as PyTorch."""
        seed = int(seed)
        if seed < 0:  # PyTorch reinterprets a negative int64 seed as uint64
            seed &= 0xFFFFFFFFFFFFFFFF
        self._seed = seed
        self._rs = np.random.RandomState(seed & 0xFFFFFFFF)
        self._next_double_normal = None
        self._next_float_normal = None
        return self

    def seed(self) -> int:
        """A non-deterministic seed (from the OS), set and returned, as PyTorch's ``Generator.seed()``."""
        seed = int.from_bytes(os.urandom(8), "little") & 0x7FFFFFFFFFFFFFFF
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        """PyTorch's ``CPUGeneratorImplState`` as a uint8 tensor of 5056 bytes."""
        import mindtorch.torch as torch
        _, key, pos, _, _ = self._rs.get_state()
        left, nxt = (1, 0) if pos >= _N else (_N + 1 - pos, pos)
        normal = self._next_double_normal
        buf = struct.pack("<QiiQ", self._seed, left, 1, nxt) + np.asarray(key, dtype=np.uint64).tobytes()
        buf += struct.pack("<dddi4x", 0.0, normal if normal is not None else 0.0, 0.0, int(normal is not None))
        fnormal = self._next_float_normal
        buf += struct.pack("<f?3x", fnormal if fnormal is not None else 0.0, fnormal is not None)
        assert len(buf) == _STATE_BYTES
        return torch.tensor(np.frombuffer(buf, dtype=np.uint8).copy(), dtype=torch.uint8)

    def set_state(self, new_state) -> "Generator":
        data = np.asarray(new_state.numpy() if hasattr(new_state, "numpy") else new_state)
        if data.dtype != np.uint8 or data.size != _STATE_BYTES:
            raise RuntimeError(f"Generator.set_state: expected a torch.ByteTensor of {_STATE_BYTES} bytes (from "
                               f"get_state()), got {data.dtype} of {data.size} elements")
        buf = data.tobytes()
        seed, left, _, _ = struct.unpack_from("<QiiQ", buf, 0)
        key = np.frombuffer(buf, dtype=np.uint64, count=_N, offset=24).astype(np.uint32)
        _, normal_y, _, normal_valid = struct.unpack_from("<dddi", buf, 24 + 8 * _N)
        fnormal, fvalid = struct.unpack_from("<f?", buf, 24 + 8 * _N + 32)
        self._seed = seed
        self._rs = np.random.RandomState()
        self._rs.set_state(("MT19937", key, _N + 1 - left if left > 1 else _N, 0, 0.0))
        self._next_double_normal = normal_y if normal_valid else None
        self._next_float_normal = fnormal if fvalid else None
        return self

    # --- raw draws ---------------------------------------------------------------------------------------------------
    def random(self, n: int) -> np.ndarray:
        """``n`` 32-bit engine outputs (uint64 array). numpy's ``randint`` over the full uint32 range takes exactly one
        engine output per value."""
        return self._rs.randint(0, 1 << 32, size=n, dtype=np.uint32).astype(np.uint64)

    def random64(self, n: int) -> np.ndarray:
        """``n`` values of ``random64()``: two engine outputs each, the first the high half (uint64 array)."""
        r = self.random(2 * n)
        return (r[0::2] << np.uint64(32)) | r[1::2]

    # --- distributions -----------------------------------------------------------------------------------------------
    def uniform(self, n: int, dtype: str, low=0.0, high=1.0) -> np.ndarray:
        """``uniform_real_distribution``: ``n`` values in ``[low, high)`` of numpy ``dtype`` (float32 from 24 random
        bits, float64 from 53)."""
        if np.dtype(dtype) == np.float64:
            x = (self.random64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
            return x * (high - low) + low
        x = (self.random(n) & np.uint64((1 << 24) - 1)).astype(np.float32) * np.float32(2.0 ** -24)
        return (x * np.float32(high - low) + np.float32(low)).astype(np.float32)

    def normal(self, n: int, dtype: str, mean=0.0, std=1.0) -> np.ndarray:
        """``normal_kernel``: ``n`` normals of numpy ``dtype`` (see the module docstring for the two paths)."""
        dt = np.dtype(dtype)
        if n >= 16:
            data = self.uniform(n, dt)
            _normal_fill_16_blocks(data, 0, n - n % 16, mean, std)
            if n % 16:
                data[n - 16:] = self.uniform(16, dt)
                _normal_fill_16_blocks(data, n - 16, n, mean, std)
            return data
        out = np.empty(n, dtype=dt)
        for i in range(n):
            if self._next_double_normal is not None:
                value, self._next_double_normal = self._next_double_normal, None
            else:
                u1, u2 = self.uniform(2, np.float64)
                r = np.sqrt(-2.0 * np.log1p(-u2))
                theta = 2.0 * np.pi * u1
                self._next_double_normal = float(r * np.sin(theta))
                value = float(r * np.cos(theta))
            out[i] = value * std + mean
        return out

    def randint(self, n: int, low: int, high: int) -> np.ndarray:
        """``uniform_int_from_to_distribution``: ``n`` int64 values in ``[low, high)``."""
        span = high - low
        if span <= 0:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        raw = self.random64(n) if span >= 1 << 32 else self.random(n)
        return ((raw % np.uint64(span)).astype(np.int64) + np.int64(low)).astype(np.int64)

    def randperm(self, n: int) -> np.ndarray:
        """``randperm_cpu``: a permutation of ``range(n)`` (int64 array).

        Raises:
            NotImplementedError: ``n >= 2**32 / 20`` (PyTorch's 64-bit path, not reproduced here).
        """
        if n >= (1 << 32) // 20:
            raise NotImplementedError(f"randperm({n}, generator=...): PyTorch's 64-bit path (n >= 2**32 / 20) is "
                                      "not reproduced")
        perm = np.arange(n, dtype=np.int64)
        if n <= 1:
            return perm
        offsets = (self.random(n - 1) % (n - np.arange(n - 1, dtype=np.uint64))).astype(np.int64).tolist()
        p = perm.tolist()
        for i, z in enumerate(offsets):
            j = i + z
            p[i], p[j] = p[j], p[i]
        return np.asarray(p, dtype=np.int64)

    def __repr__(self):
        return "<torch._C.Generator object>"


def _normal_fill_16_blocks(data: np.ndarray, start: int, stop: int, mean, std) -> None:
    """``normal_fill_16`` on ``data[start:stop]`` (a multiple of 16) in place, in ``data``'s float type."""
    dt = data.dtype.type
    blocks = data[start:stop].reshape(-1, 16)
    u1 = dt(1) - blocks[:, :8]
    u2 = blocks[:, 8:]
    radius = np.sqrt(dt(-2) * np.log(u1))
    theta = dt(2.0 * np.pi) * u2
    blocks[:, :8] = radius * np.cos(theta) * dt(std) + dt(mean)
    blocks[:, 8:] = radius * np.sin(theta) * dt(std) + dt(mean)
    data[start:stop] = blocks.reshape(-1)


# --- wiring into torch ------------------------------------------------------------------------------------------------
def _ours(generator) -> bool:
    return isinstance(generator, Generator)


def _size(positional, size):
    """``torch.rand(2, 3)`` / ``torch.rand((2, 3))`` / ``torch.rand(size=(2, 3))`` -> ``(2, 3)``."""
    if size is None:
        size = positional[0] if len(positional) == 1 and isinstance(positional[0], (tuple, list)) else positional
    return tuple(int(s) for s in size)


def _np_float(dtype):
    import mindtorch.torch as torch
    dtype = torch.get_default_dtype() if dtype is None else dtype
    if dtype not in (torch.float32, torch.float64):
        raise NotImplementedError(f"generator=: only float32 and float64 draws are reproduced here, not {dtype}")
    return dtype, (np.float64 if dtype == torch.float64 else np.float32)


def _tensor(values: np.ndarray, shape, dtype, requires_grad=False):
    import mindtorch.torch as torch
    out = torch.tensor(np.ascontiguousarray(values).reshape(shape), dtype=dtype)
    return out.requires_grad_(True) if requires_grad else out


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
def _with_generator(original, ours):
    """``original`` with ``generator=`` of this module's class going to ``ours(*args, generator=..., **kwargs)``."""
    def wrapper(*args, generator=None, **kwargs):
        if _ours(generator):
            return ours(*args, generator=generator, **kwargs)
        if generator is not None:
            kwargs["generator"] = generator
        return original(*args, **kwargs)
    wrapper.__name__ = wrapper.__qualname__ = original.__name__
    wrapper.__doc__ = original.__doc__
    wrapper.__wrapped__ = original
    wrapper._adapter_generator = True
    setattr(wrapper, hooks.attr("passthrough"), True)  # MindTorch's own call without generator= (run.py --report credits no patch)
    return wrapper


def _randperm(n, *, generator, dtype=None, requires_grad=False, out=None, layout=None, device=None, pin_memory=False):
    import mindtorch.torch as torch
    dtype = torch.int64 if dtype is None else dtype
    return _tensor(generator.randperm(int(n)), (int(n),), dtype, requires_grad)


def _rand(*size, generator, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          **kwargs):
    shape = _size(size, kwargs.get("size"))
    dtype, np_dtype = _np_float(dtype)
    return _tensor(generator.uniform(int(np.prod(shape, dtype=np.int64)), np_dtype), shape, dtype, requires_grad)


def _randn(*size, generator, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
           **kwargs):
    shape = _size(size, kwargs.get("size"))
    dtype, np_dtype = _np_float(dtype)
    return _tensor(generator.normal(int(np.prod(shape, dtype=np.int64)), np_dtype), shape, dtype, requires_grad)


def _randint(*args, generator, out=None, dtype=None, layout=None, device=None, requires_grad=False, **kwargs):
    """``randint(high, size)`` / ``randint(low, high, size)`` (positional or keyword, PyTorch's overloads)."""
    import mindtorch.torch as torch
    names = ("low", "high", "size") if len(args) == 3 or "low" in kwargs else ("high", "size")
    bound = dict(zip(names, args))
    bound.update(kwargs)
    low, high, shape = int(bound.get("low", 0)), int(bound["high"]), tuple(int(s) for s in bound["size"])
    dtype = torch.int64 if dtype is None else dtype
    values = generator.randint(int(np.prod(shape, dtype=np.int64)), low, high)
    return _tensor(values, shape, dtype, requires_grad)


def _normal(mean, std=1.0, size=None, *, generator, out=None, **kwargs):
    """``torch.normal(mean: float, std: float, size, generator=)``; tensor means/stds are not reproduced."""
    import mindtorch.torch as torch
    if size is None or isinstance(mean, torch.Tensor) or isinstance(std, torch.Tensor):
        raise NotImplementedError("torch.normal(generator=...): only float mean and std with size= are reproduced")
    shape = tuple(int(s) for s in size)
    dtype, np_dtype = _np_float(kwargs.get("dtype"))
    values = generator.normal(int(np.prod(shape, dtype=np.int64)), np_dtype, float(mean), float(std))
    return _tensor(values, shape, dtype, kwargs.get("requires_grad", False))


def _fill(tensor, values: np.ndarray, name: str):
    """Writes ``values`` into ``tensor`` in place (MindTorch's in-place assignment)."""
    from adapter import backend
    _tensor_inplace_assign = backend.internal("tensor_inplace_assign")
    return _tensor_inplace_assign(tensor, _tensor(values, tuple(tensor.shape), tensor.dtype), name, name[:-1])


def _np_dtype_of(tensor):
    import mindtorch.torch as torch
    return np.float64 if tensor.dtype == torch.float64 else np.float32


def _uniform_(self, from_=0.0, to=1.0, *, generator):
    return _fill(self, generator.uniform(self.numel(), _np_dtype_of(self), float(from_), float(to)), "uniform_")


def _normal_(self, mean=0.0, std=1.0, *, generator):
    return _fill(self, generator.normal(self.numel(), _np_dtype_of(self), float(mean), float(std)), "normal_")


def _random_(self, from_=0, to=None, *, generator):
    import mindtorch.torch as torch
    if to is None and from_ == 0 and self.dtype == torch.int64:
        values = (generator.random64(self.numel()) % np.uint64(1 << 63)).astype(np.int64)
    elif to is not None:
        values = generator.randint(self.numel(), int(from_), int(to))
    else:
        raise NotImplementedError(f"Tensor.random_(generator=...) on {self.dtype} without 'to' is not reproduced")
    return _fill(self, values, "random_")


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
def _method(original, ours, *positional_names):
    """A Tensor method that accepts ``generator=`` (and PyTorch's ``from`` keyword for ``uniform_``/``random_``)."""
    def method(self, *args, generator=None, **kwargs):
        if "from" in kwargs:
            kwargs["from_"] = kwargs.pop("from")
        if _ours(generator):
            return ours(self, *args, generator=generator, **kwargs)
        if "from_" in kwargs:
            args = (kwargs.pop("from_"),) + args
        if generator is not None:
            kwargs["generator"] = generator
        return original(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = original.__name__
    method.__wrapped__ = original
    method._adapter_generator = True
    return method


@functools.lru_cache(maxsize=None)  # one wrapper per original: applied again, the patch installs the same one
def _ignored(original, what: str):
    """``original`` that warns at the user's line when given ``generator=`` (MindTorch draws from the global RNG)."""
    def wrapper(*args, generator=None, **kwargs):
        if generator is not None:
            from adapter.userframe import warn_user
            warn_user(f"{what}(generator=...): the generator is not used here; the values come from the global "
                      "RNG (MindSpore's), so they differ from PyTorch's for this seed")
        return original(*args, **kwargs)
    wrapper.__name__ = wrapper.__qualname__ = original.__name__
    wrapper.__wrapped__ = original
    wrapper._adapter_generator = True
    setattr(wrapper, hooks.attr("passthrough"), True)
    return wrapper


def random_split(dataset, lengths, generator=None):
    """PyTorch's ``torch.utils.data.random_split`` with ``generator=`` drawing PyTorch's permutation (fractions are
    turned into lengths as PyTorch does: floor, then one more round-robin until the sum is ``len(dataset)``).

    Raises:
        ValueError: a fraction outside [0, 1], or lengths that do not sum to ``len(dataset)``.
    """
    import itertools
    import math
    from mindtorch.torch.utils.data.dataset import Subset
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(int(math.floor(len(dataset) * frac)))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = generator.randperm(int(sum(lengths))).tolist()
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]


def sampler_indices(generator: Generator, n: int, num_samples: int, replacement: bool):
    """``RandomSampler.__iter__`` of PyTorch 2.13 with ``generator=``: permutations of ``range(n)`` (the last one cut
    to ``num_samples % n``), or uniform ints in ``[0, n)`` drawn 32 at a time."""
    if replacement:
        for _ in range(num_samples // 32):
            yield from generator.randint(32, 0, n).tolist()
        yield from generator.randint(num_samples % 32, 0, n).tolist()
        return
    for _ in range(num_samples // n):
        yield from generator.randperm(n).tolist()
    yield from generator.randperm(n).tolist()[:num_samples % n]


# MindTorch's methods that the wrappers below call; set by apply() (get_original)
_random_sampler_init = _subset_sampler_init = _subset_sampler_iter = _loader_iter_init = _original_split = None


def random_sampler_init(self, *args, generator=None, **kwargs):
    """``RandomSampler.__init__`` that keeps ``generator`` (MindTorch warned "Don't support generator now." and kept
    it unused); one of this module's generators is not passed to MindTorch's."""
    _random_sampler_init(self, *args, generator=None if _ours(generator) else generator, **kwargs)
    self.generator = generator


def subset_sampler_init(self, *args, generator=None, **kwargs):
    """``SubsetRandomSampler.__init__``, as :func:`random_sampler_init`."""
    _subset_sampler_init(self, *args, generator=None if _ours(generator) else generator, **kwargs)
    self.generator = generator


def subset_random_iter(self):
    """``SubsetRandomSampler.__iter__``: PyTorch's ``randperm`` of the indices with one of this module's
    generators, MindTorch's otherwise."""
    if _ours(self.generator):
        return (self.indices[i] for i in self.generator.randperm(len(self.indices)).tolist())
    return _subset_sampler_iter(self)


def loader_iter_init(self, loader, *args, **kwargs):
    """``_BaseDataLoaderIter.__init__``: the worker base seed from ``loader.generator`` (PyTorch's
    ``torch.empty((), dtype=torch.int64).random_(generator=loader.generator)``), without MindTorch's numpy draw."""
    g = getattr(loader, "generator", None)
    if not _ours(g):
        return _loader_iter_init(self, loader, *args, **kwargs)
    state = np.random.get_state()
    _loader_iter_init(self, loader, *args, **kwargs)
    np.random.set_state(state)  # MindTorch's base-seed draw from numpy's global RNG, undone
    self._base_seed = int(g.random64(1)[0] % np.uint64(1 << 63))


def split(dataset_, lengths, generator=None):
    if _ours(generator):
        return random_split(dataset_, lengths, generator)
    return _original_split(dataset_, lengths, generator)


split.__doc__ = random_split.__doc__

# torch functions that take generator= (functional's too, where MindTorch has them)
_DRAWS = (("randperm", _randperm), ("rand", _rand), ("randn", _randn), ("randint", _randint), ("normal", _normal))


# Tensor methods whose generator= is ignored (warned); only those MindTorch's Tensor defines itself
_IGNORED_METHODS = ("bernoulli", "bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_")


def apply() -> None:
    global _random_sampler_init, _subset_sampler_init, _subset_sampler_iter, _loader_iter_init, _original_split
    import mindtorch.torch as torch
    from adapter import backend
    C = backend.internal("C")
    import mindtorch.torch.functional as functional
    from mindtorch.torch.tensor import Tensor
    from mindtorch.torch.utils import data
    from mindtorch.torch.utils.data import dataloader, dataset, sampler
    name_ = PATCH.name
    patch_attr(torch, "Generator", Generator)
    patch_attr(C, "Generator", Generator)
    for name, ours in _DRAWS:
        # stacked on patches/random_draws.py's torch.rand / randn (get_replaced: the value this patch wraps)
        wrapped = _with_generator(get_replaced(torch, name, name_), ours)
        patch_attr(torch, name, wrapped)
        if getattr(functional, name, None) is not None:  # MindTorch's functional may lack one
            patch_attr(functional, name, wrapped)
    for name in ("bernoulli", "multinomial", "poisson"):
        if hasattr(torch, name):
            wrapped = _ignored(get_replaced(torch, name, name_), f"torch.{name}")
            patch_attr(torch, name, wrapped)
            patch_attr(functional, name, wrapped)
    for name, ours in (("uniform_", _uniform_), ("normal_", _normal_), ("random_", _random_)):
        patch_attr(Tensor, name, _method(get_original(Tensor, name), ours))
    for name in _IGNORED_METHODS:
        if name in vars(Tensor) or is_patched(Tensor, name):  # MindTorch's Tensor's own, not MindSpore's
            patch_attr(Tensor, name, _ignored(get_original(Tensor, name), f"Tensor.{name}"))

    _original_split = get_original(dataset, "random_split")
    patch_attr(dataset, "random_split", split)
    patch_attr(data, "random_split", split)
    _random_sampler_init = get_original(sampler.RandomSampler, "__init__")
    _subset_sampler_init = get_original(sampler.SubsetRandomSampler, "__init__")
    _subset_sampler_iter = get_original(sampler.SubsetRandomSampler, "__iter__")
    patch_attr(sampler.RandomSampler, "__init__", random_sampler_init)
    patch_attr(sampler.SubsetRandomSampler, "__init__", subset_sampler_init)
    patch_attr(sampler.SubsetRandomSampler, "__iter__", subset_random_iter)
    _loader_iter_init = get_original(backend.internal("BaseDataLoaderIter"), "__init__")
    patch_attr(backend.internal("BaseDataLoaderIter"), "__init__", loader_iter_init)


PATCH = Patch("generator", "torch.Generator is PyTorch's CPU MT19937 (MindTorch raised NotImplementedError): seeded "
                           "randperm/rand/randn/randint, random_split, RandomSampler/DataLoader(generator=) draw "
                           "PyTorch's own numbers; get_state() in PyTorch's format", "post-import", apply,
              replaces=("torch.Generator", "torch._C.Generator", "torch.randperm", "torch.rand", "torch.randn",
                        "torch.randint", "torch.normal", "torch.functional.randperm", "torch.functional.rand",
                        "torch.functional.randn", "torch.functional.randint", "torch.functional.normal",
                        "torch.bernoulli", "torch.multinomial",
                        "torch.poisson", "torch.functional.bernoulli", "torch.functional.multinomial",
                        "torch.functional.poisson", "torch.Tensor.uniform_", "torch.Tensor.normal_",
                        "torch.Tensor.random_", "torch.Tensor.bernoulli", "torch.Tensor.bernoulli_",
                        "torch.Tensor.cauchy_", "torch.Tensor.exponential_", "torch.Tensor.geometric_",
                        "torch.Tensor.log_normal_", "torch.utils.data.dataset.random_split",
                        "torch.utils.data.random_split", "torch.utils.data.RandomSampler.__init__",
                        "torch.utils.data.SubsetRandomSampler.__init__",
                        "torch.utils.data.SubsetRandomSampler.__iter__",
                        "torch.utils.data.dataloader._BaseDataLoaderIter.__init__"),
              after=("random_draws",))
