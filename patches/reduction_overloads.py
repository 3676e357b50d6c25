"""PyTorch's call forms of ``amax``/``amin``, ``std``/``var`` and ``std_mean``/``var_mean``.

MindTorch 0.4.0 on mindspore 2.10 raised for calls PyTorch 2.13 documents (found by PyTorch's OpInfo samples,
``run.py conformance --opinfo``, issue 35):

* ``torch.amax(x)`` / ``torch.amin(x)``: ``TypeError: amax() missing 1 required positional argument: 'dim'``;
  PyTorch's ``dim`` defaults to ``()``, every dimension;
* ``torch.std(x, True)`` / ``torch.var(x, False)`` (the ``(input, unbiased)`` overload, also ``x.std(False)``):
  ``TypeError`` (the bool taken as ``dim``);
* every ``torch.std_mean`` / ``torch.var_mean`` call: ``TypeError: Failed calling std with "std(int, bool, bool)"``
  (MindTorch passes ``unbiased`` positionally to mindspore 2.10's ``Tensor.std(dim, *, correction, keepdim)``), and
  ``var_mean(x, True)`` took the bool as ``dim``.

Replaces ``torch.amax``/``amin`` (and ``torch.functional``'s): ``dim`` defaults to ``()`` and an empty ``dim`` means
every dimension, then the function this patch replaced. ``torch.std``/``var`` and ``Tensor.std``/``var`` (and
``torch.functional``'s): a bool in ``dim``'s place is ``unbiased`` (with another positional argument after it:
PyTorch's ``TypeError``), then the replaced function. ``torch.std_mean``/``var_mean`` (and ``torch.functional``'s):
``(torch.std(...), torch.mean(...))`` over the same dimensions, both through the patched functions (so
``correction=``, empty inputs and dtype errors behave as there); ``dim=None`` with ``keepdim=True`` keeps every
dimension as size 1. Plain functions, so a compiled graph parses them too. Must come after ``op_arguments`` (the
``std``/``var`` it wraps) and ``empty_reductions`` (``amax``/``amin``).
"""
from . import Patch, get_replaced, patch_attr

NAME = "reduction_overloads"
_OWNERS = ("torch", "torch.functional", "torch.Tensor")

torch = None  # mindtorch.torch, set by apply() (an import inside a function does not compile in graph mode)
# the functions this patch replaced, set by apply() (module globals: a compiled graph resolves them)
_torch_amax = _torch_amin = _functional_amax = _functional_amin = None
_torch_std = _torch_var = _functional_std = _functional_var = _tensor_std = _tensor_var = None


def _all_dims(input, dim):
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(input.ndim))
    return dim


def _extremum_dims(name, input, dim):
    """``dim`` of ``amax``/``amin``; PyTorch's error for no dim on an input with no elements."""
    if (dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)) and 0 in tuple(input.shape):
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           f"reduction dim with the 'dim' argument.")
    return _all_dims(input, dim)


def amax(input, dim=(), keepdim=False, *, out=None):  # noqa: A002 (PyTorch's names)
    """``torch.amax``; ``dim`` defaults to every dimension (module docstring)."""
    if out is None:
        return _torch_amax(input, _extremum_dims("amax", input, dim), keepdim)
    return _torch_amax(input, _extremum_dims("amax", input, dim), keepdim, out=out)


def amin(input, dim=(), keepdim=False, *, out=None):  # noqa: A002
    """``torch.amin``; ``dim`` defaults to every dimension (module docstring)."""
    if out is None:
        return _torch_amin(input, _extremum_dims("amin", input, dim), keepdim)
    return _torch_amin(input, _extremum_dims("amin", input, dim), keepdim, out=out)


def functional_amax(input, dim=(), keepdim=False, *, out=None):  # noqa: A002
    """``torch.functional.amax``: as :func:`amax`."""
    if out is None:
        return _functional_amax(input, _extremum_dims("amax", input, dim), keepdim)
    return _functional_amax(input, _extremum_dims("amax", input, dim), keepdim, out=out)


def functional_amin(input, dim=(), keepdim=False, *, out=None):  # noqa: A002
    """``torch.functional.amin``: as :func:`amin`."""
    if out is None:
        return _functional_amin(input, _extremum_dims("amin", input, dim), keepdim)
    return _functional_amin(input, _extremum_dims("amin", input, dim), keepdim, out=out)


def _unbiased_form(name, dim, args, kwargs):
    """``(dim, kwargs)`` with a bool ``dim`` moved to ``unbiased`` (PyTorch's ``(input, unbiased)`` overload) and a
    list ``dim`` as the tuple MindTorch takes (``x.std(dim=[0, 2, 3])``, per-channel statistics of a dataset: MindTorch
    passed the list on to MindSpore, ``TypeError: tensor_var() takes from 1 to 2 positional arguments``)."""
    if isinstance(dim, list):
        dim = tuple(dim)
    if isinstance(dim, bool):
        if args or "unbiased" in kwargs or "keepdim" in kwargs or "correction" in kwargs:
            raise TypeError(f"{name}() received an invalid combination of arguments: got a bool in dim's place "
                            f"with further arguments; expected ({name}(input, unbiased) or {name}(input, dim, "
                            f"unbiased, keepdim))")
        kwargs = dict(kwargs)
        kwargs["unbiased"] = dim
        return None, kwargs
    return dim, kwargs


def std(input, dim=None, *args, **kwargs):  # noqa: A002
    """``torch.std``; also ``torch.std(input, unbiased)`` (module docstring)."""
    dim, kwargs = _unbiased_form("std", dim, args, kwargs)
    return _torch_std(input, dim, *args, **kwargs)


def var(input, dim=None, *args, **kwargs):  # noqa: A002
    """``torch.var``; also ``torch.var(input, unbiased)`` (module docstring)."""
    dim, kwargs = _unbiased_form("var", dim, args, kwargs)
    return _torch_var(input, dim, *args, **kwargs)


def functional_std(input, dim=None, *args, **kwargs):  # noqa: A002
    """``torch.functional.std``: as :func:`std`."""
    dim, kwargs = _unbiased_form("std", dim, args, kwargs)
    return _functional_std(input, dim, *args, **kwargs)


def functional_var(input, dim=None, *args, **kwargs):  # noqa: A002
    """``torch.functional.var``: as :func:`var`."""
    dim, kwargs = _unbiased_form("var", dim, args, kwargs)
    return _functional_var(input, dim, *args, **kwargs)


def tensor_std(self, dim=None, *args, **kwargs):
    """``Tensor.std``; also ``x.std(unbiased)`` (module docstring)."""
    dim, kwargs = _unbiased_form("std", dim, args, kwargs)
    return _tensor_std(self, dim, *args, **kwargs)


def tensor_var(self, dim=None, *args, **kwargs):
    """``Tensor.var``; also ``x.var(unbiased)`` (module docstring)."""
    dim, kwargs = _unbiased_form("var", dim, args, kwargs)
    return _tensor_var(self, dim, *args, **kwargs)


def _with_mean(deviation, input, dim, unbiased, keepdim, correction):
    dims = _all_dims(input, tuple(dim) if isinstance(dim, list) else dim)
    if correction is not None:
        if unbiased is not None:
            raise TypeError("std_mean()/var_mean() received both unbiased and correction")
        spread = deviation(input, dims, keepdim=keepdim, correction=correction)
    else:
        spread = deviation(input, dims, True if unbiased is None else unbiased, keepdim)
    return spread, torch.mean(input, dims, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """``torch.std_mean``: ``(torch.std(...), torch.mean(...))`` (module docstring)."""
    if isinstance(dim, bool):
        dim, unbiased = None, _only_unbiased("std_mean", dim, unbiased, keepdim, correction)
    return _with_mean(torch.std, input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """``torch.var_mean``: ``(torch.var(...), torch.mean(...))`` (module docstring)."""
    if isinstance(dim, bool):
        dim, unbiased = None, _only_unbiased("var_mean", dim, unbiased, keepdim, correction)
    return _with_mean(torch.var, input, dim, unbiased, keepdim, correction)


def _only_unbiased(name, flag, unbiased, keepdim, correction):
    if unbiased is not None or keepdim or correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: got a bool in dim's place with "
                        f"further arguments; expected {name}(input, unbiased) or {name}(input, dim, unbiased, "
                        f"keepdim)")
    return flag


def apply() -> None:
    global torch
    import mindtorch.torch
    torch = mindtorch.torch
    import mindtorch.torch.functional as functional
    from mindtorch.torch.tensor import Tensor
    g = globals()
    for prefix, owner in (("torch", torch), ("functional", functional)):
        for name in ("amax", "amin", "std", "var"):
            g[f"_{prefix}_{name}"] = get_replaced(owner, name, NAME)
            patch_attr(owner, name, g[name if prefix == "torch" else f"functional_{name}"])
        for name in ("std_mean", "var_mean"):
            patch_attr(owner, name, g[name])
    for name in ("std", "var"):
        g[f"_tensor_{name}"] = get_replaced(Tensor, name, NAME)
        patch_attr(Tensor, name, g[f"tensor_{name}"])


PATCH = Patch(NAME, "PyTorch's call forms: amax/amin without dim, std/var(input, unbiased), std_mean/var_mean "
                    "(every call raised TypeError on mindspore 2.10)", "post-import", apply,
              replaces=tuple(f"{owner}.{name}" for owner in ("torch", "torch.functional")
                             for name in ("amax", "amin", "std", "var", "std_mean", "var_mean"))
              + ("torch.Tensor.std", "torch.Tensor.var"),
              after=("op_arguments", "empty_reductions"))
