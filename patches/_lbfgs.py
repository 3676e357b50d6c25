"""``torch.optim.LBFGS`` over MindTorch tensors: limited-memory BFGS with an optional strong-Wolfe line search,
with PyTorch 2.13's behaviour (arguments, defaults, stopping rules, closure-call counts, ``state`` keys); installed
by patches/lbfgs.py.

Sources of the method: J. Nocedal, S. Wright, *Numerical Optimization*, 2nd ed. (2006): the two-loop recursion
(Algorithm 7.4) with the initial inverse Hessian ``gamma * I``, ``gamma = s'y / y'y`` (eq. 7.20); the strong Wolfe
conditions (eq. 3.7, ``c1 = 1e-4``, ``c2 = 0.9``); the bracketing line search with a zoom phase (Algorithms 3.5 and
3.6) whose trial steps minimise the cubic interpolating two points' values and slopes (eq. 3.59). PyTorch's
documented choices on top (``torch.optim.LBFGS`` docs, minFunc's conventions): the first step of the first iteration
is ``min(1, 1 / |g|_1) * lr``; a pair ``(s, y)`` enters the history only when ``y's > 1e-10``; extrapolation is
clipped to ``[t + 0.01 (t - t_prev), 10 t]``; a zoom step closer than 10% of the bracket to an end is moved to 10%
when the previous step also was; the line search may use at most ``max_eval`` minus the closure calls already made.

The flat vectors (gradient, direction, history) are 1-D tensors of the parameters' dtype, in ``parameters()`` order;
scalars such as ``g'd`` stay 0-d tensors as PyTorch's do, so float32 problems round as PyTorch's.
"""
from __future__ import annotations

import mindtorch.torch as torch
from mindtorch.torch import Tensor
from mindtorch.torch.optim.optimizer import Optimizer

from adapter import events  # step_begin / step_end for observers (run.py --compare)

__all__ = ["LBFGS"]

_C1, _C2 = 1e-4, 0.9          # sufficient decrease / curvature constants (Nocedal & Wright eq. 3.7)
_CURVATURE_MIN = 1e-10        # y's below this: the pair is not kept (PyTorch's threshold)


def _cubic_step(a, fa, ga, b, fb, gb, lo=None, hi=None):
    """The minimiser of the cubic through ``(a, fa)`` and ``(b, fb)`` with slopes ``ga``, ``gb`` (Nocedal & Wright
    eq. 3.59), clipped to ``[lo, hi]`` (default: between ``a`` and ``b``); the middle of that interval when the
    cubic has no minimiser (negative discriminant)."""
    if lo is None:
        lo, hi = min(a, b), max(a, b)
    d1 = ga + gb - 3 * (fa - fb) / (a - b)
    disc = d1 ** 2 - ga * gb
    if not disc >= 0:  # also NaN
        return (lo + hi) / 2.0
    d2 = disc.sqrt()
    if a <= b:
        at = b - (b - a) * ((gb + d2 - d1) / (gb - ga + 2 * d2))
    else:
        at = a - (a - b) * ((ga + d2 - d1) / (ga - gb + 2 * d2))
    return min(max(at, lo), hi)


class _Probe:
    """One point of the line search: step ``t``, loss ``f``, flat gradient ``g``, slope ``gtd = g'd``."""
    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def _strong_wolfe(evaluate, t, d, f0, g0, gtd0, budget, tolerance_change=1e-9):
    """Line search along ``d`` from the point with loss ``f0``, gradient ``g0``, slope ``gtd0 < 0``, first trial
    step ``t``; ``evaluate(t) -> (loss, flat gradient)`` calls the closure, at most ``budget`` times.

    Returns ``(loss, flat gradient, step, evaluations)`` at the accepted (or best bracketed) step."""
    d_scale = d.abs().max()

    def probe(step):
        f, g = evaluate(step)
        return _Probe(step, f, g, g.dot(d))

    def armijo_fails(p, reference_f):
        return p.f > (f0 + _C1 * p.t * gtd0) or p.f >= reference_f

    def curvature_holds(p):
        return abs(p.gtd) <= -_C2 * gtd0

    previous = _Probe(0, f0, g0.clone(), gtd0)
    current = probe(t)
    evaluations, rounds = 1, 0
    bracket = None
    # Phase 1 (Algorithm 3.5): grow the step until an interval holds an acceptable one, or the step is acceptable.
    while rounds < budget:
        if current.f > (f0 + _C1 * current.t * gtd0) or (rounds > 1 and current.f >= previous.f):
            bracket = [previous, _Probe(current.t, current.f, current.g.clone(), current.gtd)]
            break
        if curvature_holds(current):
            return current.f, current.g, current.t, evaluations
        if current.gtd >= 0:
            bracket = [previous, _Probe(current.t, current.f, current.g.clone(), current.gtd)]
            break
        lo = current.t + 0.01 * (current.t - previous.t)
        hi = current.t * 10
        step = _cubic_step(previous.t, previous.f, previous.gtd, current.t, current.f, current.gtd, lo, hi)
        previous = _Probe(current.t, current.f, current.g.clone(), current.gtd)
        current = probe(step)
        evaluations += 1
        rounds += 1
    if bracket is None:  # out of evaluations while growing: the last point and the start
        bracket = [_Probe(0, f0, g0.clone(), None), _Probe(current.t, current.f, current.g, None)]

    # Phase 2 (Algorithm 3.6): shrink the bracket; `best` indexes its end with the lower loss.
    best = 0 if bracket[0].f <= bracket[1].f else 1
    narrowed_slowly = False
    while rounds < budget:
        ends = (bracket[0].t, bracket[1].t)
        if abs(ends[1] - ends[0]) * d_scale < tolerance_change:
            break
        step = _cubic_step(ends[0], bracket[0].f, bracket[0].gtd, ends[1], bracket[1].f, bracket[1].gtd)
        low, high = min(ends), max(ends)
        margin = 0.1 * (high - low)
        if min(high - step, step - low) < margin:
            if narrowed_slowly or step >= high or step <= low:
                step = high - margin if abs(step - high) < abs(step - low) else low + margin
                narrowed_slowly = False
            else:
                narrowed_slowly = True
        else:
            narrowed_slowly = False
        trial = probe(step)
        evaluations += 1
        rounds += 1
        kept = _Probe(trial.t, trial.f, trial.g.clone(), trial.gtd)
        worst = 1 - best
        if armijo_fails(trial, bracket[best].f):
            bracket[worst] = kept
            best = 0 if bracket[0].f <= bracket[1].f else 1
            continue
        if curvature_holds(trial):
            bracket[best] = kept
            break
        if trial.gtd * (bracket[worst].t - bracket[best].t) >= 0:
            bracket[worst] = bracket[best]
        bracket[best] = kept
    chosen = bracket[best]
    return chosen.f, chosen.g, chosen.t, evaluations


def _as_scalar(value):
    """A 1-element tensor lr as a 0-d one (PyTorch accepts a tensor lr); anything else unchanged."""
    if isinstance(value, Tensor) and value.dim() != 0:
        return value.squeeze()
    return value


class LBFGS(Optimizer):
    """L-BFGS (``torch.optim.LBFGS``): one parameter group; ``step(closure)`` runs up to ``max_iter`` iterations.

    Args (PyTorch's, same defaults): ``params``; ``lr`` (1; float or 1-element tensor; ``ValueError`` if
    negative or a tensor of more elements); ``max_iter`` (20); ``max_eval`` (``max_iter * 5 // 4``);
    ``tolerance_grad`` (1e-7, on ``max |g|``); ``tolerance_change`` (1e-9, on loss and step changes);
    ``history_size`` (100 pairs); ``line_search_fn`` (``None``: fixed step ``lr``; ``"strong_wolfe"``; anything
    else raises ``RuntimeError`` at ``step``). Several parameter groups raise ``ValueError``.

    ``state[first parameter]`` holds PyTorch's keys: ``func_evals``, ``n_iter``, ``d``, ``t``, ``old_dirs`` (the
    ``y`` vectors), ``old_stps`` (the ``s`` vectors), ``ro`` (``1 / y's``), ``al``, ``H_diag``,
    ``prev_flat_grad``, ``prev_loss``. Memory: ``history_size * 2 + 3`` flat vectors of all parameters.
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_iter * 5 // 4 if max_eval is None else max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._param_list = self.param_groups[0]["params"]
        self._numel_cache = None

    # -- flat views of all parameters ---------------------------------------------------------------------------
    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() * (2 if torch.is_complex(p) else 1) for p in self._param_list)
        return self._numel_cache

    def _flat_grad(self):
        """All gradients as one 1-D tensor (zeros for a parameter without one; complex as (real, imag) pairs)."""
        parts = []
        for p in self._param_list:
            g = p.grad
            if g is None:
                part = p.new(p.numel()).zero_()
            else:
                part = (g.to_dense() if g.is_sparse else g).view(-1)
            parts.append(torch.view_as_real(part).view(-1) if torch.is_complex(part) else part)
        return torch.cat(parts, 0)

    def _move(self, step, direction):
        """``params += step * direction`` in place (``direction`` flat, in ``parameters()`` order)."""
        start = 0
        for p in self._param_list:
            target = torch.view_as_real(p) if torch.is_complex(p) else p
            n = target.numel()
            target.add_(direction[start:start + n].view_as(target), alpha=step)
            start += n
        if start != self._numel():
            raise AssertionError(f"Expected offset {start} to equal {self._numel()}")

    def _evaluate_along(self, closure, origin, direction, step):
        """Loss and flat gradient at ``origin + step * direction``; the parameters are put back to ``origin``."""
        self._move(step, direction)
        loss = float(closure())
        grad = self._flat_grad()
        for p, saved in zip(self._param_list, origin):
            p.copy_(saved)
        return loss, grad

    # -- the two-loop recursion ----------------------------------------------------------------------------------
    @staticmethod
    def _direction(grad, ys, ss, rhos, gamma, alphas):
        """``-H g`` with the inverse Hessian approximation of the history (Nocedal & Wright Algorithm 7.4);
        ``alphas`` (length ``history_size``) receives the first loop's coefficients."""
        q = grad.neg()
        for i in reversed(range(len(ys))):
            alphas[i] = ss[i].dot(q) * rhos[i]
            q.add_(ys[i], alpha=-alphas[i])
        r = torch.mul(q, gamma)
        for i in range(len(ys)):
            beta = ys[i].dot(r) * rhos[i]
            r.add_(ss[i], alpha=alphas[i] - beta)
        return r

    @torch.no_grad()
    def step(self, closure):
        """One optimisation step: ``closure()`` re-evaluates the model (calls ``backward()``) and returns the loss;
        returns the loss of the first evaluation. Closure calls: at most ``max_eval`` (plus one with a fixed step)."""
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(self.param_groups)}")
        closure = torch.enable_grad()(closure)
        group = self.param_groups[0]
        lr = _as_scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        search, memory = group["line_search_fn"], group["history_size"]
        state = self.state[self._param_list[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        first_loss = closure()
        loss = float(first_loss)
        used = 1
        state["func_evals"] += 1
        grad = self._flat_grad()
        events.emit("step_begin", self)  # .grad holds the first evaluation's gradients
        if grad.abs().max() <= tol_grad:
            events.emit("step_end", self)
            return first_loss

        d, t = state.get("d"), state.get("t")
        ys, ss, rhos = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        gamma = state.get("H_diag")
        last_grad, last_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        for iteration in range(1, max_iter + 1):
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = grad.neg()
                ys, ss, rhos, gamma = [], [], [], 1
            else:
                y = grad.sub(last_grad)
                s = d.mul(t)
                curvature = y.dot(s)
                if curvature > _CURVATURE_MIN:
                    if len(ys) == memory:
                        del ys[0], ss[0], rhos[0]
                    ys.append(y)
                    ss.append(s)
                    rhos.append(1.0 / curvature)
                    gamma = curvature / y.dot(y)
                if "al" not in state:
                    state["al"] = [None] * memory
                d = self._direction(grad, ys, ss, rhos, gamma, state["al"])

            if last_grad is None:
                last_grad = grad.clone()
            else:
                last_grad.copy_(grad)
            last_loss = loss
            t = (min(1.0, 1.0 / grad.abs().sum()) * lr) if state["n_iter"] == 1 else lr
            slope = grad.dot(d)
            if slope > -tol_change:
                break  # not a descent direction (any more)

            spent = 0
            if search is None:
                self._move(t, d)
                if iteration != max_iter:  # the last iteration's loss is not needed
                    with torch.enable_grad():
                        loss = float(closure())
                    grad = self._flat_grad()
                    spent = 1
            elif search == "strong_wolfe":
                origin = [p.clone() for p in self._param_list]
                loss, grad, t, spent = _strong_wolfe(
                    lambda step: self._evaluate_along(closure, origin, d, step), t, d, loss, grad, slope,
                    max_eval - used)  # PyTorch's search keeps its own tolerance_change (1e-9), not the group's
                self._move(t, d)
            else:
                raise RuntimeError("only 'strong_wolfe' is supported")
            used += spent
            state["func_evals"] += spent

            if (iteration == max_iter or used >= max_eval or grad.abs().max() <= tol_grad
                    or d.mul(t).abs().max() <= tol_change or abs(loss - last_loss) < tol_change):
                break

        state.update(d=d, t=t, old_dirs=ys, old_stps=ss, ro=rhos, H_diag=gamma, prev_flat_grad=last_grad,
                     prev_loss=last_loss)
        events.emit("step_end", self)
        return first_loss
