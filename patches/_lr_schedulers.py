"""``torch.optim.lr_scheduler`` with PyTorch 2.13's behaviour, over MindTorch optimizers; installed by
patches/lr_scheduler.py.

What is PyTorch's and must stay so (the behaviour, documented in ``torch.optim.lr_scheduler``'s reference, checked
against PyTorch 2.13 by tests/test_lr_scheduler.py):

* the values: every scheduler computes in Python floats with PyTorch's formulas, in PyTorch's operation order, so
  the lrs are PyTorch's to the last bit. Most schedulers have a *chainable* form (the next lr from the group's
  current lr, so that schedulers compose) and a *closed* form (from ``base_lrs`` and the epoch, used when ``step``
  is given an ``epoch``);
* the state: ``state_dict()`` is the scheduler's ``__dict__`` without the optimizer (callables as ``None`` or
  their ``__dict__``), so every attribute name below is part of the checkpoint format, loadable by real PyTorch;
* the warnings: ``step()`` before ``optimizer.step()`` (once, at the first step), ``optimizer.step`` replaced
  after the scheduler was made, ``step(epoch)``'s deprecation, ``get_lr()`` called outside ``step()``.

How it is organised here: :class:`LRScheduler` does the bookkeeping (initial lrs, step counting, writing the
groups); the schedulers whose chainable form multiplies the current lr (StepLR, MultiStepLR, ConstantLR, LinearLR,
ExponentialLR, PolynomialLR, MultiplicativeLR) only say by how much (``_chain_factor``: a number, one per group, or
``None`` to keep the lr); the others compute their lrs themselves. An lr is a Python float, or a tensor that is
written in place (``fill_``), as PyTorch allows.

Sources of the formulas: PyTorch's documentation of each class; SGDR (Loshchilov & Hutter 2017, eq. 5) for the
cosine annealing and its warm restarts; Smith 2017 ("Cyclical Learning Rates", triangular / triangular2 /
exp_range) for CyclicLR; Smith & Topin 2018 ("Super-Convergence") for OneCycleLR.
"""
from __future__ import annotations

import functools
import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter

from mindtorch.torch import Tensor
from mindtorch.torch.optim.optimizer import Optimizer

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
           "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
           "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR", "LRScheduler"]

inf = math.inf
_DOCS = "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. Please use "
    "`scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from None, the closed "
    "form is used instead of the new chainable form, where available. Please open an issue if you are unable to "
    "replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose.")
_STEP_BEFORE_OPTIMIZER = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call "
    "them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result in "
    f"PyTorch skipping the first value of the learning rate schedule. See more details at {_DOCS}")
_STEP_REPLACED = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler initialization. Please, make "
    "sure to call `optimizer.step()` before `lr_scheduler.step()`. See more details at " + _DOCS)


# -- reading and writing the optimizer's groups ----------------------------------------------------------------------
def _plain(value):
    """A float subclass (patches/optimizer.py's ``LearningRate``) as a plain ``float``; anything else unchanged."""
    return float(value) if isinstance(value, float) and type(value) is not float else value


def _read(optimizer, key):
    """``group[key]`` of every group: floats plain, tensors cloned (a snapshot, as ``get_last_lr`` returns)."""
    return [g[key].clone() if isinstance(g[key], Tensor) else _plain(g[key]) for g in optimizer.param_groups]


def _write(group, key, value):
    """Set ``group[key]``: a tensor entry is filled in place (with ``value``'s scalar), else replaced."""
    if isinstance(group[key], Tensor):
        if isinstance(value, Tensor) and value.dim() != 0:
            value = value.squeeze()
        group[key].fill_(value)
    else:
        group[key] = value


def _write_all(optimizer, key, values):
    groups = optimizer.param_groups
    if len(values) != len(groups):
        raise ValueError(f"expected {len(groups)} values for {key!r}, one per param group, got {len(values)}")
    for group, value in zip(groups, values):
        _write(group, key, value)


def _per_group(name, optimizer, value):
    """``value`` for each group: a list/tuple must have one entry per group (``ValueError``); a scalar is repeated.
    Tensors are cloned."""
    count = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != count:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has {len(value)} "
                             f"values, param_groups has {count}.")
        values = list(value)
    else:
        values = [value] * count
    return [v.clone() if isinstance(v, Tensor) else v for v in values]


def _set_momentum(optimizer, group, value):
    """The momentum a cycling scheduler sets: ``betas[0]`` for Adam-like optimizers, else ``momentum``."""
    if "betas" in optimizer.defaults:
        group["betas"] = (value,) + tuple(group["betas"][1:])
    else:
        group["momentum"] = value


def _start_momentum_cycle(scheduler, optimizer, base_momentum, max_momentum, last_epoch, max_first=False):
    """CyclicLR / OneCycleLR with ``cycle_momentum``: check the optimizer has one, and on a fresh start put the
    max momentum in each group, with ``max_momentum`` / ``base_momentum`` entries. Returns the per-group lists
    (``max_first``: the max list is checked first, as OneCycleLR does)."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    scheduler.use_beta1 = "betas" in optimizer.defaults
    if max_first:
        tops = _per_group("max_momentum", optimizer, max_momentum)
    bases = _per_group("base_momentum", optimizer, base_momentum)
    if not max_first:
        tops = _per_group("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for top, base, group in zip(tops, bases, optimizer.param_groups):
            _set_momentum(optimizer, group, top)
            group["max_momentum"] = top
            group["base_momentum"] = base
    return bases, tops


def _callables_state(functions):
    """How PyTorch saves lr lambdas / scale functions: ``None`` for a plain function, else its ``__dict__``."""
    return [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy() for fn in functions]


def _lambdas(optimizer, lr_lambda):
    """One callable per group (a single one is shared); ``ValueError`` for a list of another length."""
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != len(optimizer.param_groups):
            raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
        return list(lr_lambda)
    return [lr_lambda] * len(optimizer.param_groups)


def _mark_optimizer_steps(optimizer):
    """Wrap ``optimizer.step`` (once) so that it records ``optimizer._opt_called = True``: the first scheduler step
    warns when the optimizer has not stepped yet. The wrapper holds the optimizer weakly."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    method = optimizer.step.__func__
    owner = weakref.ref(optimizer)

    @functools.wraps(method)
    def step(*args, **kwargs):
        opt = owner()
        opt._opt_called = True
        return method.__get__(opt, type(opt))(*args, **kwargs)

    step._wrapped_by_lr_sched = True
    optimizer.step = step


def _warn_get_lr_called_within_step(scheduler):
    """``get_lr()`` read from outside ``step()``: PyTorch's hint to use ``get_last_lr()``."""
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                      UserWarning, stacklevel=2)


# -- the base class --------------------------------------------------------------------------------------------------
class LRScheduler:
    """Base of the epoch-driven schedulers (``torch.optim.lr_scheduler.LRScheduler``).

    ``LRScheduler(optimizer, last_epoch=-1)``: on a fresh start (``last_epoch=-1``) each group gets
    ``initial_lr`` (its current lr) unless it has one; resuming (``last_epoch >= 0``) needs ``initial_lr`` in every
    group (``KeyError`` otherwise). ``base_lrs`` are the ``initial_lr``\\ s. The constructor takes the first step
    (epoch 0). Subclasses give ``get_lr()`` (the lrs of ``self.last_epoch``) and may give ``_get_closed_form_lr()``.

    Raises ``TypeError`` when ``optimizer`` is not a ``torch.optim.Optimizer``.
    """
    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                start = _plain(group["lr"])
                group.setdefault("initial_lr", start.clone() if isinstance(start, Tensor) else start)
            elif "initial_lr" not in group:
                raise KeyError(
                    f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler with "
                    "last_epoch >= 0.\nThis typically happens when:\n1. You're trying to resume training from a "
                    "checkpoint but haven't properly loaded the optimizer state\n2. You're using last_epoch >= 0 "
                    "for a fresh training run (not recommended)")
        self.base_lrs = _read(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _mark_optimizer_steps(optimizer)
        self._initial_step()

    def _initial_step(self):
        """The step the constructor takes (``_step_count`` 0 -> 1), in initial mode."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self):
        """Everything but the optimizer: ``dict`` of plain Python values (and tensors for tensor lrs)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore from :meth:`state_dict`."""
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The lr of each group after the last step, ``list[float]`` (or tensors for tensor lrs)."""
        return self._last_lr

    def get_lr(self):
        """The lrs of ``self.last_epoch`` (each subclass's chainable form)."""
        raise NotImplementedError

    def step(self, epoch=None):
        """Advance one epoch (or, deprecated, jump to ``epoch``: the closed form where there is one) and write the
        new lrs into the optimizer's groups."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(_STEP_REPLACED, UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(_STEP_BEFORE_OPTIMIZER, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                lrs = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                lrs = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        _write_all(self.optimizer, "lr", list(lrs))
        self._last_lr = _read(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """The pre-2.0 name of :class:`LRScheduler` (custom schedulers still subclass it)."""


class _ChainedFactor(LRScheduler):
    """A scheduler whose chainable form is ``lr <- lr * factor``: subclasses give ``_chain_factor()``, the factor
    of ``self.last_epoch`` (a number, a list with one per group, or ``None``: the lrs stay)."""

    def _chain_factor(self):
        raise NotImplementedError

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        factor = self._chain_factor()
        if factor is None:
            return _read(self.optimizer, "lr")
        groups = self.optimizer.param_groups
        factors = factor if isinstance(factor, list) else [factor] * len(groups)
        return [_plain(g["lr"]) * f for g, f in zip(groups, factors)]


class _LambdaState:
    """``state_dict`` / ``load_state_dict`` for schedulers holding ``lr_lambdas``: functions are not saved (``None``),
    callable objects by their ``__dict__``."""

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = _callables_state(self.lr_lambdas)
        return state

    def load_state_dict(self, state_dict):
        saved = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = saved  # the caller's dict is left as it was
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)


# -- schedulers with a multiplicative chainable form -----------------------------------------------------------------
class StepLR(_ChainedFactor):
    """``lr = base_lr * gamma ** (epoch // step_size)``: decays by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _chain_factor(self):
        e = self.last_epoch
        return self.gamma if e != 0 and e % self.step_size == 0 else None

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(_ChainedFactor):
    """``lr = base_lr * gamma ** (milestones reached)``; a milestone listed twice counts twice."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _chain_factor(self):
        if self.last_epoch not in self.milestones:
            return None
        return self.gamma ** self.milestones[self.last_epoch]

    def _get_closed_form_lr(self):
        reached = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** reached for base in self.base_lrs]


class ConstantLR(_ChainedFactor):
    """``lr = base_lr * factor`` until epoch ``total_iters``, then ``base_lr``. ``ValueError`` unless
    ``0 <= factor <= 1``."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def _chain_factor(self):
        if self.last_epoch == 0:
            return self.factor
        return 1.0 / self.factor if self.last_epoch == self.total_iters else None

    def _get_closed_form_lr(self):
        done = self.last_epoch >= self.total_iters
        return [base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(_ChainedFactor):
    """The factor of ``base_lr`` goes linearly from ``start_factor`` to ``end_factor`` over ``total_iters`` epochs.
    ``ValueError`` unless ``0 < start_factor <= 1`` and ``0 <= end_factor <= 1``."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def _chain_factor(self):
        e = self.last_epoch
        if e == 0:
            return self.start_factor
        if self._is_initial or e > self.total_iters:
            return None
        rise = self.end_factor - self.start_factor
        # factor(e) / factor(e - 1) with factor(e) = start + rise * e / total
        return 1.0 + rise / (self.total_iters * self.start_factor + (e - 1) * rise)

    def _get_closed_form_lr(self):
        rise = self.end_factor - self.start_factor
        return [base * (self.start_factor + rise * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


class ExponentialLR(_ChainedFactor):
    """``lr = base_lr * gamma ** epoch``."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _chain_factor(self):
        return None if self._is_initial else self.gamma

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class PolynomialLR(_ChainedFactor):
    """``lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power``."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def _chain_factor(self):
        e, n = self.last_epoch, self.total_iters
        if self._is_initial or e > n:
            return None
        return ((1.0 - e / n) / (1.0 - (e - 1) / n)) ** self.power

    def _get_closed_form_lr(self):
        n = self.total_iters
        return [base * (1.0 - min(n, self.last_epoch) / n) ** self.power for base in self.base_lrs]


class MultiplicativeLR(_LambdaState, _ChainedFactor):
    """``lr <- lr * lr_lambda(epoch)`` each epoch (one callable, or one per group). ``TypeError`` for a
    non-callable, ``ValueError`` for a list of the wrong length."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def _chain_factor(self):
        return None if self._is_initial else [fn(self.last_epoch) for fn in self.lr_lambdas]


# -- schedulers computing their lrs themselves ------------------------------------------------------------------------
class LambdaLR(_LambdaState, LRScheduler):
    """``lr = base_lr * lr_lambda(epoch)`` (one callable, or one per group; ``ValueError`` for a list of the wrong
    length)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class CosineAnnealingLR(LRScheduler):
    """``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2`` (SGDR eq. 5 without restarts),
    followed by its recurrence (PyTorch's chainable form, which also continues past ``T_max``)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        e, period, low = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return _read(self.optimizer, "lr")
        if self._step_count == 1 and e > 0:  # the first step of a resumed schedule: closed form
            return [low + (base - low) * (1 + math.cos(e * math.pi / period)) / 2 for base in self.base_lrs]
        groups = self.optimizer.param_groups
        if (e - 1 - period) % (2 * period) == 0:  # leaving a minimum: the recurrence below would divide by 0
            return [g["lr"] + (base - low) * (1 - math.cos(math.pi / period)) / 2
                    for base, g in zip(self.base_lrs, groups)]
        ratio = (1 + math.cos(math.pi * e / period)) / (1 + math.cos(math.pi * (e - 1) / period))
        return [ratio * (g["lr"] - low) + low for g in groups]

    def _get_closed_form_lr(self):
        low = self.eta_min
        return [low + (base - low) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every ``T_i`` epochs, ``T_0`` first, each period ``T_mult`` times the last (SGDR
    eq. 5): ``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``. ``step(epoch)`` accepts
    fractional epochs (``epoch + i / iters``). ``ValueError`` for ``T_0 <= 0``, ``T_mult < 1`` (or not ints), a
    non-number ``eta_min``, a negative epoch."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        low = self.eta_min
        return [low + (base - low) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2 for base in self.base_lrs]

    def _locate(self, epoch):
        """``T_cur`` and ``T_i`` at ``epoch`` (possibly fractional): periods ``T_0 * T_mult ** k`` end at
        ``T_0 * (T_mult ** n - 1) / (T_mult - 1)``."""
        if epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        first, mult = self.T_0, self.T_mult
        if epoch < first:
            self.T_i = first
            self.T_cur = epoch
        elif mult == 1:
            self.T_cur = epoch % first
        else:
            n = int(math.log(epoch / first * (mult - 1) + 1, mult))
            self.T_cur = epoch - first * (mult ** n - 1) / (mult - 1)
            self.T_i = first * mult ** n

    def step(self, epoch=None):
        """Next epoch (``epoch=None``) or jump to ``epoch``; no step-order or deprecation warnings (PyTorch's)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            self._locate(epoch)
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            lrs = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        _write_all(self.optimizer, "lr", lrs)
        self._last_lr = _read(self.optimizer, "lr")


def _cyclic_constant(x):
    return 1.0


def _cyclic_halving(x):
    return 1 / (2.0 ** (x - 1))


def _cyclic_exponential(gamma, x):
    return gamma ** x


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith 2017): the lr goes from ``base_lr`` up to ``max_lr`` in ``step_size_up``
    iterations and back in ``step_size_down`` (default: the same), the amplitude scaled per cycle
    (``triangular``: 1; ``triangular2``: halved each cycle) or per iteration (``exp_range``: ``gamma ** it``), or by
    ``scale_fn``. With ``cycle_momentum`` the momentum (or Adam's beta1) moves the other way between
    ``max_momentum`` and ``base_momentum``; ``ValueError`` if the optimizer has neither, or for an unknown mode."""

    _SCALES = {"triangular": (_cyclic_constant, "cycle"), "triangular2": (_cyclic_halving, "cycle"),
               "exp_range": (None, "iterations")}

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            _write_all(optimizer, "lr", base_lrs)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in self._SCALES and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _start_momentum_cycle(self, optimizer, base_momentum,
                                                                            max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        """The built-in amplitude function of ``mode`` and its ``scale_mode`` (unless a ``scale_fn`` was given)."""
        if self._scale_fn_custom is not None or self.mode not in self._SCALES:
            return
        fn, self.scale_mode = self._SCALES[self.mode]
        self._scale_fn_ref = fn if fn is not None else functools.partial(_cyclic_exponential, self.gamma)

    def scale_fn(self, x):
        """The amplitude factor at cycle (or iteration) ``x``."""
        fn = self._scale_fn_custom if self._scale_fn_custom is not None else self._scale_fn_ref
        return fn(x)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        e = self.last_epoch
        cycle = math.floor(1 + e / self.total_size)
        x = 1.0 + e / self.total_size - cycle  # position in the cycle, [0, 1)
        rising = x <= self.step_ratio
        height = x / self.step_ratio if rising else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else e)
        lrs = [low + (high - low) * height * scale for low, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(self.optimizer, group, high - (high - low) * height * scale)
        return lrs

    def state_dict(self):
        """As the base's, without the bound amplitude function; a custom ``scale_fn`` as PyTorch saves it."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_scale_fn_ref")}
        state["_scale_fn_custom"] = _callables_state([self._scale_fn_custom])[0] \
            if self._scale_fn_custom is not None else None
        return state

    def load_state_dict(self, state_dict):
        saved = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if saved is not None:
            self._scale_fn_custom.__dict__.update(saved)
        self._init_scale_fn()


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin 2018): the lr rises from ``max_lr / div_factor`` to ``max_lr`` over
    ``pct_start`` of ``total_steps`` (or ``epochs * steps_per_epoch``), then anneals to ``initial_lr /
    final_div_factor`` (``three_phase``: back to the initial lr first), cosine or linear; with ``cycle_momentum``
    the momentum (Adam: beta1) moves the other way. Stepping past ``total_steps`` raises ``ValueError``, as do
    invalid arguments."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        self._schedule_phases = self._phases(pct_start, three_phase)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        tops = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(tops, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _start_momentum_cycle(self, optimizer, base_momentum, max_momentum, last_epoch, max_first=True)
        super().__init__(optimizer, last_epoch)

    def _phases(self, pct_start, three_phase):
        """The phases as PyTorch stores them (``_schedule_phases``, part of the state): the step each ends at and
        the group keys of its start and end lr / momentum."""
        rise_end = float(pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        rows = [(rise_end, "initial_lr", "max_lr", "max_momentum", "base_momentum")]
        if three_phase:
            rows += [(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                      "max_momentum"),
                     (last, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            rows.append((last, "max_lr", "min_lr", "base_momentum", "max_momentum"))
        keys = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
        return [dict(zip(keys, row)) for row in rows]

    @staticmethod
    def _annealing_cos(start, end, pct):
        """Cosine from ``start`` (pct 0) to ``end`` (pct 1)."""
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start, end, pct):
        """Straight line from ``start`` (pct 0) to ``end`` (pct 1)."""
        return (end - start) * pct + start

    def _anneal_func(self, start, end, pct):
        kind = getattr(self, "_anneal_func_type", None)
        if kind is None:  # a state from before PyTorch 2.2 held the function itself
            return self.anneal_func(start, end, pct)
        if kind == "cos":
            return self._annealing_cos(start, end, pct)
        if kind == "linear":
            return self._annealing_linear(start, end, pct)
        raise ValueError(f"Unknown _anneal_func_type: {kind}")

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is "
                             f"{self.total_steps}")
        phases = self._schedule_phases
        begin, index = 0.0, 0
        while step > phases[index]["end_step"] and index < len(phases) - 1:
            begin = phases[index]["end_step"]
            index += 1
        phase = phases[index]
        pct = (step - begin) / (phase["end_step"] - begin)
        lrs = []
        for group in self.optimizer.param_groups:
            lrs.append(self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct))
            if self.cycle_momentum:
                momentum = self._anneal_func(group[phase["start_momentum"]], group[phase["end_momentum"]], pct)
                _set_momentum(self.optimizer, group, momentum)
        return lrs


# -- schedulers driving other schedulers -----------------------------------------------------------------------------
def _check_children(parent, optimizer, schedulers):
    """SequentialLR / ChainedScheduler: at least one child, each with an ``optimizer`` (``TypeError``), none a
    ReduceLROnPlateau, all of ``optimizer`` (``ValueError``); PyTorch's messages."""
    name = type(parent).__name__
    if len(schedulers) < 1:
        what = "at least one scheduler to be chained" if isinstance(parent, ChainedScheduler) else \
            "at least one scheduler"
        raise ValueError(f"{name} expects {what}, but got no scheduler.")
    for i, child in enumerate(schedulers):
        if not hasattr(child, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(child, ReduceLROnPlateau):
            raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it requires additional "
                             "kwargs to be specified when calling `step`, but got one at index "
                             f"{i} in the given schedulers sequence.")
        if optimizer != child.optimizer:
            raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, but got scheduler "
                             f"{type(child).__name__} at index {i} has {child.optimizer}, which is different from "
                             f"{type(optimizer).__name__}.")


class _Composite(LRScheduler):
    """State of a scheduler of schedulers: its own attributes plus each child's ``state_dict`` (``_schedulers``)."""

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [child.state_dict() for child in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        children = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = children
        for child, state in zip(self._schedulers, children):
            child.load_state_dict(state)


class SequentialLR(_Composite):
    """``schedulers[i]`` drives the lr from epoch ``milestones[i - 1]`` on (each starting from its own epoch 0).
    ``ValueError`` unless ``len(milestones) == len(schedulers) - 1`` (and see :func:`_check_children`)."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        _check_children(self, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
                f"milestone points, but got number of schedulers {len(schedulers)} and the number of milestones to "
                f"be equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # the children already took their first step when made: undo it, and start over from the initial lrs
        for group in optimizer.param_groups:
            _write(group, "lr", group["initial_lr"])
        self.recursive_undo()
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched=None):
        """Take one epoch off every (nested) child's ``last_epoch``."""
        node = self if sched is None else sched
        if hasattr(node, "_schedulers"):
            for child in node._schedulers:
                self.recursive_undo(child)
        elif hasattr(node, "last_epoch"):
            node.last_epoch -= 1

    def step(self):
        """Next epoch: the scheduler of this epoch steps (a scheduler reaching its milestone restarts at 0)."""
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        current = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            current._update_lr(0)
        else:
            current.step()
        self._last_lr = current.get_last_lr()


class ChainedScheduler(_Composite):
    """Every scheduler steps each epoch, in order, each from the lr the previous one left (their effects
    compose)."""

    def __init__(self, schedulers, optimizer=None):
        optimizer = optimizer or (schedulers[0].optimizer if len(schedulers) else None)
        _check_children(self, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _read(self._schedulers[-1].optimizer, "lr")

    def step(self):
        for child in self._schedulers:
            child.step()
        self._last_lr = _read(self._schedulers[-1].optimizer, "lr")


# -- metric-driven ---------------------------------------------------------------------------------------------------
class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` (not below ``min_lr``; changes under ``eps`` are skipped) when the metric
    passed to ``step(metrics)`` has not improved for more than ``patience`` epochs, then wait ``cooldown`` epochs.
    Improvement: ``mode`` ``min``/``max``, ``threshold_mode`` ``rel`` (beyond ``best * (1 -/+ threshold)``) or
    ``abs`` (beyond ``best -/+ threshold``). ``ValueError`` for ``factor >= 1``, unknown modes, a ``min_lr`` list of
    the wrong length; ``RuntimeError`` when groups were added and ``min_lr`` was a list."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        count = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != count:
                raise ValueError(f"expected {count} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * count
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _read(optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def step(self, metrics, epoch=None):
        """One epoch with the metric ``metrics`` (a number or 1-element tensor)."""
        value = float(metrics)
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        improved = self._is_better(value, self.best)
        if improved:
            self.best = value
        self.num_bad_epochs = 0 if improved else self.num_bad_epochs + 1
        if self.in_cooldown:  # bad epochs during the cooldown do not count
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(self.last_epoch)
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = _read(self.optimizer, "lr")

    def _reduce_lr(self, epoch):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new param group "
                    "being added to the optimizer. Please modify the `min_lrs` field to match the length of the "
                    "`optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, floor in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, floor)
            if old - new > self.eps:
                _write(group, "lr", new)

    def _is_better(self, a, best):
        if self.mode == "min":
            return a < best * (1.0 - self.threshold) if self.threshold_mode == "rel" else a < best - self.threshold
        return a > best * (self.threshold + 1.0) if self.threshold_mode == "rel" else a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = inf if mode == "min" else -inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode)
