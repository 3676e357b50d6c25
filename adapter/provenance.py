"""Gradients through a tensor that a model made in an earlier ``backward()`` step (dcgan's ``fake``).

PyTorch keeps the autograd graph of every tensor until the tensor dies, so dcgan can make ``fake = netG(noise)``,
train D on ``fake.detach()`` (one ``backward()``), then train G on ``errG = criterion(netD(fake), label)``: the second
``backward()`` reaches netG's parameters through ``fake``. The eager bridge (``adapter/tape.py``) records one forward
per ``backward()``; ``fake`` was made under an earlier recording that is gone, so G received no gradient at all and
never trained, silently (a compiled site hands ``fake`` to its graph as a constant input, same result).

The mechanism here: *recompute the producing module call*. While a recording is open, the outputs of every outermost
module call are remembered with the call (:class:`Recipe`: module, arguments, the recording's generation).
When a later recording's module call receives such a tensor, the call that made it is run again inside the current
recording (:func:`substitute`), and the user's tensor object takes over the recomputed tensor's value and history
(``Tensor.assign_value``), so every later use in this step differentiates through the producing model. This is
exact where the producing call is deterministic: PyTorch itself raises when the model's weights were changed in
place between the two uses ("one of the variables needed for gradient computation has been modified by an inplace
operation"), so valid scripts recompute with the same weights. Side effects are undone: the BatchNorm running
statistics (every buffer) of the producing model are restored after the recomputation, so they move once per real
forward, as in PyTorch. Dropout in training mode cannot be replayed (MindSpore draws other masks): a one-line warning
names the script's line and the gradient then uses a fresh mask.

Compiled sites (``adapter/compiled_step.py``) take part through :func:`learn_site_outputs` / :func:`register_outputs`
(a compiled call's outputs get the recipes its eager reference step showed) and :func:`foreign_inputs` (a site whose
inputs hold such tensors recomputes them at the top of its graph, ``SiteRuntime._recomputations``, and restores the
producing models' buffers after the graph). Only the inputs that an eager step of the site recomputed (:class:`observe`
saw :func:`substitute` take them) are recomputed in its graph: truncated BPTT's ``hidden``, made by the model in the
previous step and detached in the region (``hidden = repackage_hidden(hidden)``) before any module call, reaches no
module call as it is and is an ordinary graph input. Recomputing it was wrong, silently: the previous step's forward ran
again with the weights its update had changed, and gave another ``hidden`` (losses off by up to 1.2e-3 relative from
the second step, tests/test_bptt.py). Limitation: a tensor *derived* from such an output outside a module
call (``netD(fake * 2)``, where ``fake * 2`` was computed before this step's first module call) has no recipe: its
gradient stops there, as a ``detach()`` would.
"""
from __future__ import annotations

import dataclasses
import sys
import weakref
from typing import Any, Dict, List, Optional, Tuple


@dataclasses.dataclass
class Recipe:
    """How a tensor was made: ``module(*args, **kwargs)``, output ``index`` (None: the output itself), in recording
    ``generation`` (``adapter/tape.py``)."""
    module: Any
    args: tuple
    kwargs: dict
    index: Optional[Tuple[int, ...]]
    generation: int


_recipes: Dict[int, Tuple["weakref.ref", Recipe]] = {}  # id(tensor) -> (weak ref to it, recipe)
_warned_dropout: set = set()
# id(user's tensor) -> (recording generation, weak ref to it, the recomputed tensor): MindSpore >= 2.10 (substitute)
_fresh: Dict[int, Tuple[int, "weakref.ref", Any]] = {}
_observers: List[set] = []  # open observe() blocks: each collects the ids of the tensors substitute() recomputed


class observe:
    """``with observe() as ids:``: ``ids`` collects the ``id`` of every user tensor :func:`substitute` recomputes in
    the block (a compiled site learns from an eager step which of its inputs reach a module call as they are:
    ``SiteRuntime._recomputations`` in ``adapter/compiled_step.py``)."""

    def __enter__(self) -> set:
        self.ids: set = set()
        _observers.append(self.ids)
        return self.ids

    def __exit__(self, *exc) -> None:
        _observers.remove(self.ids)


def flat_tensors(value) -> list:
    """The tensors of ``value`` (a tensor or nested tuples/lists)."""
    return [t for _, t in _flatten(value)]


def _is_tensor(value) -> bool:
    from mindtorch.torch.tensor import Tensor
    return isinstance(value, Tensor)


def _flatten(value, index=()):
    """(index path, tensor) for every tensor in ``value`` (a tensor or nested tuples/lists)."""
    if isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            yield from _flatten(v, index + (i,))
    elif _is_tensor(value):
        yield index, value


def _remember(tensor, recipe: Recipe) -> None:
    key = id(tensor)
    # the callback holds the dict itself: at interpreter exit the module's globals are None ("Exception ignored ...
    # 'NoneType' object has no attribute 'pop'" printed once per remembered tensor)
    _recipes[key] = (weakref.ref(tensor, lambda _ref, key=key, recipes=_recipes: recipes.pop(key, None)), recipe)


def recipe_of(tensor) -> Optional[Recipe]:
    entry = _recipes.get(id(tensor))
    if entry is None or entry[0]() is not tensor:
        return None
    return entry[1]


def record(module, args, kwargs, out, generation: int) -> None:
    """Remember how each tensor of ``out`` (an outermost module call's result, made while recording ``generation``)
    was made. Called by ``patches/module_call.py``."""
    for index, tensor in _flatten(out):
        _remember(tensor, Recipe(module, tuple(args), dict(kwargs), index or None, generation))


def _pick(out, index):
    for i in index or ():
        out = out[i]
    return out


def buffers(module) -> List:
    """Every buffer (non-grad tensor: BatchNorm statistics) of ``module`` and its submodules, once each."""
    import mindspore as ms
    from adapter import backend
    seen, out = set(), []
    for sub in module.modules():
        for value in list(backend.cell_params(sub).values()) + list(getattr(sub, "_buffers", {}).values()):
            if isinstance(value, ms.Tensor) and not getattr(value, "requires_grad", False) and id(value) not in seen:
                seen.add(id(value))
                out.append(value)
    return out


def warn_dropout(recipe: Recipe, where: str) -> None:
    """Once per model: a recomputation draws new dropout masks (MindSpore cannot replay them)."""
    from adapter import backend
    DropoutNd = backend.internal("DropoutNd")
    if not recipe.module.training or id(recipe.module) in _warned_dropout:
        return
    if any(isinstance(m, DropoutNd) and m.p > 0 for m in recipe.module.modules()):
        _warned_dropout.add(id(recipe.module))
        print(f"run.py: warning: {where}: gradients through an output of {type(recipe.module).__name__} made in an "
              "earlier step recompute it, and its dropout draws a new mask (PyTorch reuses the first one)",
              file=sys.stderr)


def _recompute(tensor, recipe: Recipe, where: str):
    """Run ``recipe``'s module call again under the open recording; ``tensor`` takes over the result."""
    import mindspore as ms
    warn_dropout(recipe, where)
    saved = [(b, ms.Tensor.copy(b)) for b in buffers(recipe.module)]
    try:
        out = recipe.module(*recipe.args, **recipe.kwargs)  # nested foreign inputs are substituted the same way
    finally:
        for buffer, value in saved:  # the real forward already moved the running statistics: once
            if isinstance(buffer, ms.Parameter):
                ms.ops.assign(buffer, value)
            else:
                buffer.assign_value(value)
    fresh = _pick(out, recipe.index)
    if _rebinds():
        tensor.assign_value(fresh)  # same values; the history (and id) of the recomputed tensor
        return tensor
    return fresh


def substitute(args: tuple, kwargs: dict, generation: int, where) -> Tuple[tuple, dict]:
    """Before an outermost module call in recording ``generation``: every tensor argument made by a module call of
    an earlier recording is recomputed in this one (module docstring). ``where()``: the user's file:line.

    Returns the call's ``(args, kwargs)``: the same objects where the user's tensor took over the recomputed one's
    history (MindSpore 2.5: a MindTorch tensor is a wrapper, ``assign_value`` re-points it). On MindSpore >= 2.10 a
    MindTorch tensor *is* its C++ tensor and cannot take another's history (``backend_compat.wrapper_rebinds()``;
    writing the values into it left the gradient through it zero: dcgan's G got no gradient, silently): there the
    call gets copies of ``args``/``kwargs`` with the recomputed tensor in the user's tensor's place, and later calls
    of the same recording reuse it (:data:`_fresh`). Uses of the user's tensor outside module calls do not
    differentiate into the producing model there (as a tensor derived outside a module call, module docstring)."""
    if not _recipes:
        return args, kwargs
    swaps = {}
    for _, tensor in list(_flatten(list(args) + list(kwargs.values()))):
        fresh = _fresh.get(id(tensor))
        if fresh is not None and fresh[0] == generation and fresh[1]() is tensor:
            swaps[id(tensor)] = fresh[2]
            continue
        recipe = recipe_of(tensor)
        if recipe is not None and recipe.generation != generation:
            for ids in _observers:
                ids.add(id(tensor))
            result = _recompute(tensor, recipe, where())
            _remember(tensor, dataclasses.replace(recipe, generation=generation))
            if result is not tensor:
                swaps[id(tensor)] = result
                key = id(tensor)  # the entry goes with the user's tensor (the callback holds the dict: _remember)
                _fresh[key] = (generation, weakref.ref(tensor, lambda _ref, key=key, fresh=_fresh: fresh.pop(key, None)),
                               result)
    if not swaps:
        return args, kwargs
    return _swapped(args, swaps), {k: _swapped(v, swaps) for k, v in kwargs.items()}


def _swapped(value, swaps: dict):
    """``value`` (a tensor, or nested tuples/lists) with each tensor whose id is in ``swaps`` replaced."""
    if isinstance(value, (tuple, list)):
        return type(value)(_swapped(v, swaps) for v in value)
    return swaps.get(id(value), value) if _is_tensor(value) else value


def _rebinds() -> bool:
    from adapter import backend_compat
    return backend_compat.wrapper_rebinds()


def foreign_inputs(env: dict) -> List[Tuple[str, Recipe]]:
    """(name, recipe) for each name of ``env`` (a compiled site's inputs) holding a tensor made by a module call of an
    earlier step: a compiled step cannot differentiate through it."""
    out = []
    for name, value in env.items():
        for _, tensor in _flatten(value):
            recipe = recipe_of(tensor)
            if recipe is not None:
                out.append((name, recipe))
                break
    return out


# -- compiled sites ------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class OutputTemplate:
    """A compiled site's output ``name`` is ``module(*args)``, each arg ``("name", n)`` (another output or input of
    the site) or ``("value", v)``; learned from the eager reference step."""
    name: str
    module: Any
    args: tuple
    kwargs: dict
    index: Optional[Tuple[int, ...]]


def learn_site_outputs(outputs: Dict[str, Any], env: Dict[str, Any]) -> List[OutputTemplate]:
    """From an eager reference step's ``outputs`` (name -> value) and inputs ``env``: the outputs that are module
    call results whose tensor arguments are all outputs or inputs of the site."""
    by_id = {id(v): n for n, v in list(env.items()) + list(outputs.items()) if _is_tensor(v)}
    templates = []
    for name, value in outputs.items():
        recipe = recipe_of(value) if _is_tensor(value) else None
        if recipe is None:
            continue

        def spec(v):
            if _is_tensor(v):
                return ("name", by_id[id(v)]) if id(v) in by_id else None
            return ("value", v)

        args = tuple(spec(a) for a in recipe.args)
        kwargs = {k: spec(v) for k, v in recipe.kwargs.items()}
        if None in args or None in kwargs.values():
            continue
        templates.append(OutputTemplate(name, recipe.module, args, kwargs, recipe.index))
    return templates


def register_outputs(templates: List[OutputTemplate], outputs: Dict[str, Any], env: Dict[str, Any],
                     generation: int) -> None:
    """Give a compiled call's outputs the recipes of ``templates`` (made in recording ``generation``)."""
    values = {**env, **outputs}

    def value(spec):
        return values[spec[1]] if spec[0] == "name" else spec[1]

    for t in templates:
        tensor = outputs.get(t.name)
        if tensor is not None and _is_tensor(tensor):
            _remember(tensor, Recipe(t.module, tuple(value(a) for a in t.args),
                                     {k: value(v) for k, v in t.kwargs.items()}, t.index, generation))
