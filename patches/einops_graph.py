"""einops in a compiled step: ``rearrange`` / ``repeat`` / ``reduce`` and the ``Rearrange`` / ``Reduce`` layers of
``einops.layers.torch`` compile to MindSpore's reshape, transpose, reduction and broadcast ops.

Why. einops (``from einops import rearrange``, ``Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', ...)``) is in
most transformer code written since 2021 (ViTs, attention blocks). It works eagerly on MindTorch's tensors (its torch
backend calls ``reshape`` / ``permute`` / ``expand``), but in a compiled step MindSpore's graph parser reads einops'
own Python (caches, ``try``/``except EinopsError``) and stops: "Unsupported exception type: EinopsError", and the
whole step ran in PyNative.

What. The same plan einops makes for a call, made in Python while the graph compiles (a ``constexpr``: the pattern,
the axis lengths and the input's static shape are constants of the graph), from einops' own functions
(``einops.einops._prepare_transformation_recipe``, ``_reconstruct_from_shape_uncached``: einops 0.6-0.8; without them
nothing is registered and such steps run eagerly, as before), then applied as einops' ``_apply_recipe`` applies it:
reshape to the elementary axes, transpose, reduce (``sum`` / ``mean`` / ``max`` / ``min`` / ``prod`` as MindSpore's
``Reduce*`` primitives; any other reduction stops the compile and the step runs eagerly), add and broadcast the new
axes, reshape to the output. User code's reads of ``einops.rearrange``
/ ``repeat`` / ``reduce`` read these graph forms while compiling (``adapter/graph_syntax.register_callable_form``),
and the layers' ``forward`` is swapped for its graph form while compiling (``adapter/graph_semantics
.register_graph_forms``). Eager calls are einops' own, unchanged.

Replaces nothing outside a compile: while a graph compiles, ``einops.rearrange``, ``einops.repeat``,
``einops.reduce`` (as read by user code) and ``einops.layers.torch.Rearrange.forward`` / ``Reduce.forward``.
"""
from __future__ import annotations

from . import Patch

# mindspore.ops.constexpr(_plan_python), mindspore.ops and MindTorch's cast_to_adapter_tensor, set by apply() (graph
# code reads them: on 2.5-dev a graph's MindSpore tensor takes MindSpore's methods, `k.transpose(-1, -2)` among them)
_plan = ops = to_adapter = None


def _plan_python(pattern: str, operation: str, shape: tuple, axes: tuple):
    """einops' plan for ``operation`` (``"rearrange"``, ``"repeat"`` or a reduction) of ``pattern`` on an input of
    ``shape`` with axis lengths ``axes`` (``((name, length), ...)``): ``(init shape or None, permutation or None,
    reduced axes, ((position, length), ...) of added axes, final shape or None)``.

    Raises:
        einops.EinopsError: the pattern does not fit the shape (einops' own message)."""
    import einops.einops as e
    recipe = e._prepare_transformation_recipe(pattern, operation, axes_names=tuple(n for n, _ in axes),
                                              ndim=len(shape))
    init, perm, reduced, added, final, _ = e._reconstruct_from_shape_uncached(recipe, list(shape), tuple(axes))
    return (tuple(init) if init is not None else None, tuple(perm) if perm is not None else None, tuple(reduced),
            tuple(sorted(added.items())), tuple(final) if final is not None else None)


def apply_plan(x, pattern, operation, axes):
    """Graph code: ``x`` transformed by einops' plan (:func:`_plan_python`)."""
    init, perm, reduced, added, final = _plan(pattern, operation, x.shape, axes)
    if init is not None:
        x = ops.reshape(x, init)
    if perm is not None:
        x = ops.transpose(x, perm)
    if reduced:
        if operation == "sum":
            x = ops.ReduceSum()(x, reduced)
        elif operation == "mean":
            x = ops.ReduceMean()(x, reduced)
        elif operation == "max":
            x = ops.ReduceMax()(x, reduced)
        elif operation == "min":
            x = ops.ReduceMin()(x, reduced)
        elif operation == "prod":
            x = ops.ReduceProd()(x, reduced)
        else:  # "any", "all", a callable: not compiled (the step runs eagerly, einops' own code)
            raise RuntimeError("einops.reduce with this reduction is not compiled (sum, mean, max, min, prod are)")
    if added:
        for position, _ in added:
            x = ops.expand_dims(x, position)
        shape = list(x.shape)
        for position, length in added:
            shape[position] = length
        x = ops.broadcast_to(x, tuple(shape))
    if final is not None:
        x = ops.reshape(x, final)
    return to_adapter(x)


# the graph forms of the functions, generated into adapter/graph_syntax's helper module: (their parameters, the
# operation einops' plan is made for)
_FORM = '''\
from patches.einops_graph import apply_plan as _adapter_einops_apply


def einops_{name}__(tensor, pattern, {params}**axes_lengths):
    return _adapter_einops_apply(tensor, pattern, {operation}, tuple(axes_lengths.items()))
'''
_FORMS = {name: _FORM.format(name=name, params=params, operation=operation) for name, params, operation in (
    ("rearrange", "", '"rearrange"'), ("repeat", "", '"repeat"'), ("reduce", "reduction, ", "reduction"))}


def _rearrange_forward(self, input):  # noqa: A002 (einops' name); graph code
    return apply_plan(input, self.pattern, "rearrange", self._axes_lengths)


def _reduce_forward(self, input):  # noqa: A002; graph code
    return apply_plan(input, self.pattern, self.reduction, self._axes_lengths)


def _layer_forms():
    from einops.layers import torch as layers
    return [(layers.Rearrange, "forward", _rearrange_forward), (layers.Reduce, "forward", _reduce_forward)]


def apply() -> None:
    global _plan, ops, to_adapter
    try:
        import einops
        import einops.einops as e
    except ImportError:
        return  # einops not installed: nothing to compile
    if not all(hasattr(e, n) for n in ("_prepare_transformation_recipe", "_reconstruct_from_shape_uncached")):
        return  # another einops: its steps run eagerly, as before
    import mindspore

    from adapter import graph_semantics, graph_syntax
    from mindtorch.torch.tensor import cast_to_adapter_tensor
    ops, to_adapter = mindspore.ops, cast_to_adapter_tensor
    _plan = ops.constexpr(_plan_python)
    for name, source in _FORMS.items():
        graph_syntax.register_callable_form(getattr(einops, name), f"einops_{name}__", source)
    graph_semantics.register_graph_forms(_layer_forms)


NAME = "einops_graph"
PATCH = Patch(NAME, "einops rearrange/repeat/reduce and its Rearrange/Reduce layers compile (einops' plan made while "
                    "compiling, applied with reshape/transpose/reduce/broadcast); eager calls unchanged",
              "post-import", apply,
              effects=("registers graph forms, used only while a graph compiles, for einops.rearrange/repeat/reduce "
                       "(adapter/graph_syntax.register_callable_form) and einops.layers.torch.Rearrange/Reduce.forward "
                       "(adapter/graph_semantics.register_graph_forms); nothing without einops installed",))
