"""What one side of ``run.py --compare`` records, the same way under real PyTorch and under MindTorch.

This module imports only ``numpy`` and ``torch`` (real PyTorch in the reference environment, MindTorch in ours), so
the same code observes both runs. Which hooks feed it differs per side: ``app/tools/parity/reference.py`` patches real
PyTorch; ``app/tools/parity/compare.py`` subscribes to ``adapter/events.py``.

Definitions (both sides):

* **the models**: every distinct module called outermost, with grad enabled, in training mode, that has parameters
  (a loss module has none), numbered in the order of their first such call (a GAN has two: ``netD`` then ``netG``);
  ``self.model`` is the first. At a model's first call the recorder sets its initial weights (below), sets ``p = 0``
  on every dropout module in it (dropout draws random masks that no two frameworks share), and hooks every
  submodule for its first forward's per-layer outputs. Keys of model ``i > 0`` carry the prefix ``"i:"``
  (``grad/1:main.0.weight``).
* **initial weights**, either (a) the reference's ``state_dict`` saved as ``init.pth`` and loaded on the replay
  side (model 0 only), or (b) with ``seeded_init=SEED``, drawn on both sides from numpy: each floating parameter
  is replaced by ``mean + std * N(0, 1)`` from ``numpy.random.default_rng([SEED, i, crc32(name)])``, where
  ``mean``/``std`` are that parameter's own at the reference side's first call (recorded in ``meta.json``, so the
  replay side draws the very same values). A parameter with std 0 gets its mean: constants (BatchNorm's 1/0) stay
  what they are, a one-element parameter (a ``Linear(51, 1)`` bias) gets PyTorch's value (left alone, it kept each
  framework's own random draw). No weight file is needed (golden records stay small).
* **shuffling**: with ``fixed_shuffle=SEED``, every ``RandomSampler`` (``DataLoader(shuffle=True)``) without
  replacement yields ``numpy.random.default_rng([SEED, i]).permutation(n)`` on both sides, ``i`` the number of the
  ``DataLoader`` iteration (epoch) it serves (as for the batches below), instead of drawing from the framework's
  generator (which no two frameworks share).
* **step k**: the k-th ``optimizer.step()``. Losses are recorded per ``backward()`` call (several per step with
  gradient accumulation). Gradients are taken at step 1, before the update. After step ``steps`` the final
  ``state_dict`` is taken and the script is stopped (:class:`ComparisonDone`, a ``SystemExit(0)``).
* **batches**: every ``DataLoader`` iteration is numbered in the order the script starts them; the reference side
  stores each batch it yields (``batches/iter{i}_{j}.npz``), the replay side yields those stored batches instead of
  loading its own (same data, same order, same augmentation), or, when a record has no batches (a committed golden
  record), loads its own and checks them against the reference's checksums.

Record layout (``out_dir``): ``meta.json`` (losses, checksums, fingerprints, versions), ``init.pth`` (reference
side), ``arrays.npz`` (full step-1 gradients, step-1 layer outputs, final state; may be absent in golden records),
``batches/`` (reference side, may be absent).
"""
from __future__ import annotations

import json
import os
import sys
import zlib
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

LAYER_CALLS_KEPT = 8  # outputs recorded per module in the first forward (keys name, name#1, ... name#7)
FINGERPRINT_K = 8  # random projections per tensor: rel. diff estimate error ~ 1/sqrt(2k) = 25 % (Johnson-Lindenstrauss)
_signs_cache: Dict[int, np.ndarray] = {}


class ComparisonDone(SystemExit):
    """Raised after the last compared step to stop the script; exit code 0 (``except Exception`` does not catch it)."""

    def __init__(self):
        super().__init__(0)


def _signs(n: int) -> np.ndarray:
    """(FINGERPRINT_K, n) Rademacher matrix, the same for every tensor of n elements on both sides (seeded by n)."""
    if n not in _signs_cache:
        rng = np.random.default_rng(n)
        _signs_cache[n] = rng.integers(0, 2, size=(FINGERPRINT_K, n), dtype=np.int8) * 2 - 1
    return _signs_cache[n]


def fingerprint(array: np.ndarray) -> Dict[str, Any]:
    """Summary of a tensor that two runs can be compared on without the tensor: shape, L2 norm, max |x|, and
    ``FINGERPRINT_K`` random ±1 projections (``||P a - P b|| / ||P b||`` estimates ``||a - b|| / ||b||``)."""
    flat = np.asarray(array, dtype=np.float64).reshape(-1)
    proj = (_signs(flat.size) @ flat) / np.sqrt(FINGERPRINT_K) if flat.size else np.zeros(FINGERPRINT_K)
    return {"shape": list(np.shape(array)), "norm": float(np.linalg.norm(flat)),
            "maxabs": float(np.abs(flat).max()) if flat.size else 0.0, "proj": [float(v) for v in proj]}


def to_numpy(tensor) -> np.ndarray:
    """A copy of a torch (or MindTorch, or MindSpore) tensor as a numpy array (a copy: in-place ops come later)."""
    if hasattr(tensor, "detach"):
        tensor = tensor.detach()
    if hasattr(tensor, "cpu"):
        tensor = tensor.cpu()
    if hasattr(tensor, "numpy"):
        try:
            return np.array(tensor.numpy(), copy=True)
        except TypeError:
            pass
    return np.array(tensor.asnumpy(), copy=True)


def _is_tensor(value) -> bool:
    import torch
    return isinstance(value, torch.Tensor) or type(value).__name__ in ("Tensor", "StubTensor")


def flatten(obj) -> Tuple[Any, List[np.ndarray]]:
    """(structure spec, arrays) of a batch: nested tuples/lists/dicts of tensors and plain values."""
    arrays: List[np.ndarray] = []

    def walk(o):
        if _is_tensor(o):
            arrays.append(to_numpy(o))
            return {"t": len(arrays) - 1}
        if isinstance(o, (list, tuple)):
            return {"l" if isinstance(o, list) else "u": [walk(v) for v in o]}
        if isinstance(o, dict):
            return {"d": [[k, walk(v)] for k, v in o.items()]}
        if isinstance(o, (int, float, str, bool)) or o is None:
            return {"v": o}
        raise TypeError(f"run.py --compare: cannot record a batch element of type {type(o).__name__}")

    return walk(obj), arrays


def unflatten(spec, arrays: List[np.ndarray]):
    """Inverse of :func:`flatten`, with tensors made by this side's ``torch.from_numpy``."""
    import torch
    if "t" in spec:
        return torch.from_numpy(np.ascontiguousarray(arrays[spec["t"]]))
    if "l" in spec:
        return [unflatten(s, arrays) for s in spec["l"]]
    if "u" in spec:
        return tuple(unflatten(s, arrays) for s in spec["u"])
    if "d" in spec:
        return {k: unflatten(s, arrays) for k, s in spec["d"]}
    return spec["v"]


def checksum(arrays: List[np.ndarray]) -> List[List[float]]:
    """Per tensor of a batch: [sum, sum of squares] in float64."""
    return [[float(np.sum(a, dtype=np.float64)), float(np.sum(np.square(a, dtype=np.float64)))] for a in arrays]


def seeded_values(seed: int, model_index: int, name: str, shape, mean: float, std: float, dtype) -> np.ndarray:
    """The initial values of parameter ``name`` of model ``model_index`` under ``seeded_init=seed``:
    ``mean + std * N(0, 1)`` of ``shape`` from ``numpy.random.default_rng([seed, model_index, crc32(name)])``, cast
    to ``dtype`` (a numpy dtype). The same on both sides for the same arguments."""
    rng = np.random.default_rng([int(seed), int(model_index), zlib.crc32(name.encode())])
    # np.asarray: for a 0-d parameter (``nn.Parameter(torch.randn(()))``) numpy arithmetic gives a scalar, not an array
    return np.asarray(mean + std * rng.standard_normal(tuple(shape))).astype(dtype)


def _model_key(index: int, name: str) -> str:
    return name if index == 0 else f"{index}:{name}"


class Recorder:
    """Records one run into ``out_dir``; with ``replay_dir``, replays the reference's initial weights and batches.

    Args:
        out_dir: folder to write (created).
        steps: number of optimizer steps to run before stopping the script (>= 1).
        replay_dir: a reference record to take ``init.pth`` and ``batches/`` from (replay side), or None.
        save_batches: store every batch (reference side).
        full_arrays: store full gradients, layer outputs and final weights in ``arrays.npz`` besides fingerprints.
        perturb: with ``replay_dir``, multiply every replayed initial weight by ``1 + perturb * N(0, 1)`` (seeded):
            the noise-floor run (how far the same framework drifts from a float32-rounding-sized change).
        seeded_init: draw the models' initial weights from numpy with this seed (module docstring) instead of
            saving/loading ``init.pth``. On the replay side the reference record's setting is used.
        fixed_shuffle: make shuffling ``DataLoader``s draw their order from numpy with this seed (module
            docstring; :func:`install_sampler_hook`). On the replay side the reference record's setting is used.
    Raises:
        ValueError: ``steps < 1``.
    """

    def __init__(self, out_dir: str, steps: int, replay_dir: Optional[str] = None, save_batches: bool = False,
                 full_arrays: bool = True, perturb: float = 0.0, seeded_init: Optional[int] = None,
                 fixed_shuffle: Optional[int] = None):
        if steps < 1:
            raise ValueError(f"steps must be >= 1, got {steps}")
        self.out_dir, self.steps, self.replay_dir = out_dir, steps, replay_dir
        self.save_batches, self.full_arrays, self.perturb = save_batches, full_arrays, perturb
        os.makedirs(out_dir, exist_ok=True)
        if save_batches:
            os.makedirs(os.path.join(out_dir, "batches"), exist_ok=True)
        self.model = None
        self.model_class = None
        self.models: List[Any] = []
        self.model_info: List[Dict[str, Any]] = []
        self._grads_taken: set = set()
        self.seeded_init = seeded_init
        self.init_stats: Dict[str, List[float]] = {}
        self.fixed_shuffle = fixed_shuffle
        self._shuffle_key = 0
        self.step = 0
        self.losses: List[float] = []
        self.loss_steps: List[int] = []  # the optimizer step each loss belongs to (1-based)
        self.batch_checksums: Dict[str, List[List[float]]] = {}
        self.replayed_batches = 0
        self.own_batches = 0
        self.iterations = 0
        self.dropout_disabled: List[str] = []
        self.init_loaded: Optional[str] = None
        self.layer_order: List[str] = []
        self.layer_classes: Dict[str, str] = {}  # module key -> its class name (ReLU-input sign flips: compare.py)
        self.fingerprints: Dict[str, Dict[str, Any]] = {}
        self.arrays: Dict[str, np.ndarray] = {}
        self._hooks: List[Any] = []
        self._layer_calls: Dict[str, int] = {}
        self.finished = False
        self.reference_meta = None
        if replay_dir:
            with open(os.path.join(replay_dir, "meta.json")) as f:
                self.reference_meta = json.load(f)
            seeded = self.reference_meta.get("seeded_init")
            self.seeded_init = seeded["seed"] if seeded else None
            self.fixed_shuffle = self.reference_meta.get("fixed_shuffle")

    # -- the model -------------------------------------------------------------------------------------------------
    def on_module_call(self, module) -> None:
        """An outermost module call is starting: the first call of each model sets it up (module docstring)."""
        import torch
        if not torch.is_grad_enabled() or not module.training or any(m is module for m in self.models):
            return
        if not any(True for _ in module.parameters()):
            return
        index = len(self.models)
        self.models.append(module)
        info = {"index": index, "class": type(module).__name__, "init": None}
        self.model_info.append(info)
        if index == 0:
            self.model = module
            self.model_class = type(module).__name__
        if self.seeded_init is not None:
            self._seed_init(module, index)
            info["init"] = "seeded"
        elif index == 0:
            if self.replay_dir:
                self._load_init(module)
                info["init"] = "init.pth" if self.init_loaded else None
            else:
                torch.save(module.state_dict(), os.path.join(self.out_dir, "init.pth"))
                info["init"] = "init.pth"
        self._disable_dropout(module, index)
        self._hook_layers(module, index)

    def _seed_init(self, module, index: int) -> None:
        """Replace the non-constant floating parameters of model ``index`` by :func:`seeded_values`."""
        import torch
        state = {}
        for name, param in module.named_parameters():
            key = _model_key(index, name)
            current = to_numpy(param)
            if not np.issubdtype(current.dtype, np.floating):
                continue
            if self.replay_dir:
                stats = self.reference_meta["seeded_init"]["stats"].get(key)
                if stats is None:
                    raise RuntimeError(f"run.py --compare: model {index} ({type(module).__name__}) has a parameter "
                                       f"{name!r} that PyTorch's model did not have")
            else:
                stats = [float(current.mean()), float(current.std())] if current.size else [0.0, 0.0]
                self.init_stats[key] = stats
            values = seeded_values(self.seeded_init, index, name, current.shape, stats[0], stats[1], current.dtype)
            if self.perturb:  # the noise-floor run
                rng = np.random.default_rng([0, index, zlib.crc32(name.encode())])
                values = np.asarray(values * (1 + self.perturb * rng.standard_normal(values.shape))).astype(values.dtype)
            state[name] = torch.from_numpy(values)
        if self.replay_dir:
            theirs = {k.split(":", 1)[1] if ":" in k else k for k in self.reference_meta["seeded_init"]["stats"]
                      if (int(k.split(":", 1)[0]) if ":" in k else 0) == index}
            ours = {name for name, _ in module.named_parameters()}
            if theirs != ours:
                raise RuntimeError(f"run.py --compare: model {index} ({type(module).__name__}): parameter names differ "
                                   f"from PyTorch's: only here {sorted(ours - theirs)[:5]}, only in PyTorch "
                                   f"{sorted(theirs - ours)[:5]}")
        missing, unexpected = module.load_state_dict(state, strict=False)
        if unexpected:
            raise RuntimeError(f"run.py --compare: could not set {list(unexpected)[:5]}")

    def _load_init(self, module) -> None:
        import torch
        path = os.path.join(self.replay_dir, "init.pth")
        if not os.path.exists(path):
            return  # a golden record of a script that initialises deterministically itself
        state = torch.load(path)
        if self.perturb:
            rng = np.random.default_rng(0)
            state = {k: torch.from_numpy(np.asarray(to_numpy(v) * (1 + self.perturb * rng.standard_normal(tuple(v.shape))))
                                         .astype(to_numpy(v).dtype)) if v.dtype == torch.float32 else v
                     for k, v in state.items()}
        missing, unexpected = module.load_state_dict(state, strict=False)
        if missing or unexpected:
            raise RuntimeError(f"run.py --compare: the model's keys differ from PyTorch's: missing {list(missing)[:5]}, "
                               f"unexpected {list(unexpected)[:5]}")
        self.init_loaded = path

    def _disable_dropout(self, module, index: int = 0) -> None:
        from adapter import backend
        DropoutNd = backend.internal("torch.DropoutNd")
        for name, sub in module.named_modules():
            if isinstance(sub, DropoutNd) and sub.p > 0:
                sub.p = 0.0
                self.dropout_disabled.append(_model_key(index, name))

    def _hook_layers(self, module, index: int = 0) -> None:
        for name, sub in module.named_modules():
            key = _model_key(index, name or "<model>")
            self.layer_classes[key] = type(sub).__name__
            self._hooks.append(sub.register_forward_hook(self._layer_hook(key)))

    def _layer_hook(self, name: str):
        def hook(mod, inputs, output):
            while isinstance(output, (tuple, list)) and output:
                output = output[0]
            if not _is_tensor(output):
                return
            calls = self._layer_calls.get(name, 0)
            self._layer_calls[name] = calls + 1
            if calls >= LAYER_CALLS_KEPT:
                return  # a module called in a loop (an LSTMCell over 999 time steps): the first calls suffice
            key = name if calls == 0 else f"{name}#{calls}"
            array = to_numpy(output)
            self.layer_order.append(key)
            self._keep(f"layer/{key}", array)
        return hook

    def _remove_layer_hooks(self) -> None:
        for handle in self._hooks:
            handle.remove()
        self._hooks = []

    def _keep(self, key: str, array: np.ndarray) -> None:
        self.fingerprints[key] = fingerprint(array)
        if self.full_arrays:
            self.arrays[key] = array

    # -- steps -----------------------------------------------------------------------------------------------------
    def on_backward(self, loss) -> None:
        """A loss is being differentiated (its value is read: this synchronises the device)."""
        self._remove_layer_hooks()  # the step-1 forward is over
        if self.step < self.steps:
            self.losses.append(float(to_numpy(loss).reshape(-1)[0]))
            self.loss_steps.append(self.step + 1)

    def on_step_begin(self, optimizer) -> None:
        """Before an update: the gradients of each model the optimizer updates, at that model's first update."""
        held = {id(p) for group in optimizer.param_groups for p in group["params"]}
        for index, model in enumerate(self.models):
            if index in self._grads_taken:
                continue
            params = list(model.named_parameters())
            if not any(id(p) in held for _, p in params):
                continue
            self._grads_taken.add(index)
            for name, param in params:
                if param.grad is not None:
                    self._keep(f"grad/{_model_key(index, name)}", to_numpy(param.grad))

    def on_step_end(self, optimizer) -> None:
        """After an update: at the last compared step, the final weights are recorded and the script stopped."""
        self.step += 1
        if self.step >= self.steps:
            self.finish()
            raise ComparisonDone()

    def finish(self) -> None:
        """Write ``meta.json`` (and ``arrays.npz``); idempotent."""
        if self.finished:
            return
        self.finished = True
        self._remove_layer_hooks()
        for index, model in enumerate(self.models):
            for name, value in model.state_dict().items():
                if _is_tensor(value):
                    self._keep(f"final/{_model_key(index, name)}", to_numpy(value))
        import torch
        meta = {
            "torch": str(getattr(torch, "__version__", "?")), "python": sys.version.split()[0],
            "command": [os.path.basename(sys.argv[0])] + sys.argv[1:], "steps_requested": self.steps,
            "steps_run": self.step, "model_class": self.model_class, "losses": self.losses,
            "loss_steps": self.loss_steps, "batch_checksums": self.batch_checksums,
            "replayed_batches": self.replayed_batches, "own_batches": self.own_batches,
            "dropout_disabled": self.dropout_disabled, "init_loaded": self.init_loaded, "perturb": self.perturb,
            "layer_order": self.layer_order, "layer_classes": self.layer_classes,
            "fingerprints": self.fingerprints, "models": self.model_info,
            "seeded_init": {"seed": self.seeded_init, "stats": self.init_stats} if self.seeded_init is not None
            else None,
            "fixed_shuffle": self.fixed_shuffle,
        }
        if self.replay_dir and self.seeded_init is not None:
            meta["seeded_init"]["stats"] = self.reference_meta["seeded_init"]["stats"]
        try:
            import mindspore
            meta["mindspore"] = mindspore.__version__
        except ImportError:
            pass
        with open(os.path.join(self.out_dir, "meta.json"), "w") as f:
            json.dump(meta, f)
        if self.full_arrays and self.arrays:
            np.savez(os.path.join(self.out_dir, "arrays.npz"), **self.arrays)

    # -- data --------------------------------------------------------------------------------------------------------
    def wrap_iterator(self, iterator):
        """Wrap the iterator of the script's next ``DataLoader`` iteration (record, replay or check its batches)."""
        index = self.iterations
        self.iterations += 1
        folder = os.path.join(self.replay_dir, "batches") if self.replay_dir else None
        j = 0
        while True:
            key = f"iter{index}_{j}"
            path = os.path.join(folder, key + ".npz") if folder else None
            if path and os.path.exists(path):
                with np.load(path) as data:
                    spec = json.loads(str(data["spec"]))
                    arrays = [data[f"a{i}"] for i in range(len(data.files) - 1)]
                self.replayed_batches += 1
                batch = unflatten(spec, arrays)
            else:
                if folder and os.path.exists(os.path.join(folder, f"iter{index}_0.npz")):
                    return  # the reference's batches of this iteration are over (its epoch ended or it stopped)
                try:
                    batch = next(iterator)
                except StopIteration:
                    return
                self.own_batches += 1
                spec, arrays = flatten(batch)
                if self.save_batches:
                    np.savez(os.path.join(self.out_dir, "batches", key + ".npz"), spec=json.dumps(spec),
                             **{f"a{i}": a for i, a in enumerate(arrays)})
            if self.step < self.steps:
                self.batch_checksums[key] = checksum(arrays)
            yield batch
            j += 1

    # -- shuffling ---------------------------------------------------------------------------------------------------
    def shuffled_order(self, sampler) -> Optional[List[int]]:
        """The order a ``RandomSampler`` yields under ``fixed_shuffle`` (module docstring), or None to let it draw
        its own (no fixed shuffle, sampling with replacement, or ``num_samples != len(data_source)``)."""
        if self.fixed_shuffle is None:
            return None
        n = len(sampler.data_source)
        if getattr(sampler, "replacement", False) or sampler.num_samples != n:
            return None
        rng = np.random.default_rng([int(self.fixed_shuffle), self._shuffle_key])
        return [int(i) for i in rng.permutation(n)]

    def begin_iteration(self) -> None:
        """A ``DataLoader`` iteration is starting (before its iterator is made): its samplers' orders are keyed by
        its number, the one :meth:`wrap_iterator` gives it. (Not by how often a sampler is iterated: PyTorch's and
        MindTorch's worker iterators call ``iter(sampler)`` a different number of times.)"""
        self._shuffle_key = self.iterations


def install_sampler_hook(recorder: Recorder) -> None:
    """Make this side's ``torch.utils.data.RandomSampler`` ask ``recorder.shuffled_order`` first (both sides)."""
    import functools
    import torch
    cls = torch.utils.data.RandomSampler
    original = cls.__iter__

    @functools.wraps(original)
    def __iter__(self):
        order = recorder.shuffled_order(self)
        return iter(order) if order is not None else original(self)

    cls.__iter__ = __iter__
