"""``sort`` / ``argsort`` / ``msort``: exact for integer and float64 tensors, and ``stable=True``, as PyTorch.

MindTorch 0.4.0 sorts integer tensors by casting them to float32, and MindSpore's CPU ``Sort`` kernel rounds
float64 to float32 as well, so sorting silently went wrong beyond 2**24: ``torch.tensor([16777217, 16777216,
3]).sort()`` gave values ``[3, 16777216, 16777216]`` and ``argsort`` the indices ``[2, 0, 1]`` (PyTorch: ``[3,
16777216, 16777217]``, ``[2, 1, 0]``). Token ids, sample indices and large counts are sorted that way. MindTorch's
``sort``/``argsort`` also had no ``stable=`` argument (TypeError), which PyTorch has had since 1.9.

In PyNative (eager code: data preparation, metrics, the eager bridge) the order is computed on the host with numpy
(``np.lexsort``, stable), which is exact for every dtype, and:

* integer/bool tensors: values and indices from numpy (they have no gradient);
* float tensors with ``stable=True`` or float64: the indices from numpy, the values ``gather``-ed from the input, so
  gradients flow as in PyTorch;
* other float tensors: MindTorch's MindSpore sort (its ties may be ordered differently: PyTorch leaves the order of
  equal elements unspecified unless ``stable=True``), unless they hold a NaN: MindSpore's ``Sort`` put it among the
  numbers (``[3, nan, 1, inf, -2]`` sorted to ``[1, 3, nan, -2, inf]`` on 2.10's CPU, silently), so those are sorted
  on the host too.

NaN sorts as PyTorch's: last in ascending order, first in descending order. ``descending=True`` with
``stable=True`` keeps equal elements in their input order, as PyTorch's. Inside a compiled (graph-mode) function the
MindTorch path runs (MindSpore's own kernels; integers beyond 2**24 are not exact there), with int64 indices: the
replacements carry no ``__wrapped__`` (MindSpore's graph parser compiles ``inspect.unwrap(fn)``: with it, compiled
code ran MindTorch's function and got int32 indices) and take that path first when ``graph_mode_condition()``.

Indices are int64 (PyTorch's dtype; MindSpore's ``Sort`` gives int32, which MindTorch passed on for float inputs).

Replaces: ``torch.sort``, ``torch.argsort``, ``torch.msort`` (and ``mindtorch.torch.functional``'s), ``Tensor.sort``,
``Tensor.argsort``, ``Tensor.msort``.
"""
import numpy as np

from . import Patch, get_original, patch_attr


def _order(values: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Stable sort order along ``dim`` (int64), PyTorch's NaN placement."""
    moved = np.moveaxis(values, dim, -1)
    if moved.dtype.kind == "f":
        nan = np.isnan(moved)
        key = np.where(nan, 0, -moved if descending else moved)
        rank = ~nan if descending else nan  # lexsort's last key is the primary one
        order = np.lexsort((key, rank), axis=-1)
    else:
        if moved.dtype == np.bool_:
            moved = moved.astype(np.int8)
        key = np.invert(moved) if descending else moved  # ~x reverses integer order without overflow
        order = np.argsort(key, axis=-1, kind="stable")
    return np.moveaxis(order, -1, dim).astype(np.int64)


def _host_sorted(tensor, stable: bool) -> bool:
    import mindtorch.torch as torch
    if (not tensor.is_floating_point()) or stable or tensor.dtype == torch.float64:
        return True
    # MindSpore's Sort places NaN among the numbers (`[3, nan, 1, inf, -2]` -> `[1, 3, nan, -2, inf]`, 2.10's CPU):
    # a tensor holding one is sorted here (one reduction and a host read per call, only in PyNative)
    return tensor.numel() > 0 and bool(torch.isnan(tensor).any())


def sort(input, dim=-1, descending=False, stable=False, *, out=None, _original=None):
    """``torch.sort(input, dim=-1, descending=False, stable=False)`` -> ``(values, indices)``; see the module
    docstring for which path runs."""
    import mindtorch.torch as torch
    if out is not None:
        return _original(input, dim, descending, out=out)
    if not _host_sorted(input, stable):
        values, indices = _original(input, dim, descending)
        return values, indices.long()  # MindSpore's Sort gives int32 indices
    if input.dim() == 0:
        return input.clone(), torch.zeros((), dtype=torch.int64)
    host = input.detach().numpy()
    indices = torch.tensor(_order(host, dim, descending))
    if input.is_floating_point():
        return torch.gather(input, dim, indices), indices
    return torch.tensor(np.take_along_axis(host, indices.numpy(), axis=dim), dtype=input.dtype), indices


# MindTorch's functions and methods, set by apply() from get_original (the wrappers below call them); MindTorch's
# graph_mode_condition and MindSpore's int64 (compiled graphs read module globals; an import does not compile)
_torch_sort = _tensor_sort = _torch_argsort = _tensor_argsort = _tensor_msort = None
graph_mode_condition = _int64 = None


def sort_function(input, dim=-1, descending=False, stable=False, *, out=None):  # noqa: A002 (PyTorch's names)
    if graph_mode_condition():  # parsed by the graph compiler: MindTorch's sort, int64 indices
        values, indices = _torch_sort(input, dim, descending)
        return values, indices.astype(_int64)
    return sort(input, dim, descending, stable, out=out, _original=_torch_sort)


def _tensor_sort_3(x, dim, descending):
    return _tensor_sort(x, dim, descending)


def sort_method(self, dim=-1, descending=False, stable=False):
    if graph_mode_condition():
        values, indices = _tensor_sort(self, dim, descending)
        return values, indices.astype(_int64)
    return sort(self, dim, descending, stable, _original=_tensor_sort_3)


def argsort_function(input, dim=-1, descending=False, stable=False):  # noqa: A002
    if graph_mode_condition():
        return _torch_argsort(input, dim, descending).astype(_int64)
    if _host_sorted(input, stable):
        return sort(input, dim, descending, stable)[1]
    return _torch_argsort(input, dim, descending).long()


def argsort_method(self, dim=-1, descending=False, stable=False):
    if graph_mode_condition():
        return _tensor_argsort(self, dim, descending).astype(_int64)
    if _host_sorted(self, stable):
        return sort(self, dim, descending, stable)[1]
    return _tensor_argsort(self, dim, descending).long()


def msort(input, *, out=None):  # noqa: A002
    if graph_mode_condition():
        return _tensor_msort(input)
    if out is None and _host_sorted(input, False):
        return sort(input, 0)[0]
    result = _tensor_msort(input)
    return result if out is None else out.copy_(result)


def msort_method(self):
    return msort(self)


def apply() -> None:
    global _torch_sort, _tensor_sort, _torch_argsort, _tensor_argsort, _tensor_msort, graph_mode_condition, _int64
    import mindspore
    import mindtorch.torch as torch
    from mindtorch.utils import graph_mode_condition
    _int64 = mindspore.int64
    import mindtorch.torch.functional as functional
    from mindtorch.torch.tensor import Tensor
    _torch_sort, _tensor_sort = get_original(torch, "sort"), get_original(Tensor, "sort")
    _torch_argsort, _tensor_argsort = get_original(torch, "argsort"), get_original(Tensor, "argsort")
    _tensor_msort = get_original(Tensor, "msort")

    for fn, original in ((sort_function, _torch_sort), (sort_method, _tensor_sort),
                         (argsort_function, _torch_argsort), (argsort_method, _tensor_argsort),
                         (msort, _tensor_msort)):
        # no __wrapped__: MindSpore's graph parser compiles inspect.unwrap(fn), which would be MindTorch's function
        # with int32 indices in compiled code (measured: argsort, sort(...)[1] gave int32 in a graph)
        fn.__doc__ = sort.__doc__ if fn in (sort_function, sort_method) else original.__doc__
    sort_function.__name__ = sort_method.__name__ = "sort"
    argsort_function.__name__ = argsort_method.__name__ = "argsort"
    for owner in (torch, functional):
        patch_attr(owner, "sort", sort_function)
        patch_attr(owner, "argsort", argsort_function)
        patch_attr(owner, "msort", msort)
    patch_attr(Tensor, "sort", sort_method)
    patch_attr(Tensor, "argsort", argsort_method)
    patch_attr(Tensor, "msort", msort_method)


PATCH = Patch("sort", "sort/argsort/msort exact for integers and float64 and with stable=True (MindTorch sorted "
                      "them as float32: wrong beyond 2**24), NaN placed as PyTorch", "post-import", apply,
              replaces=("torch.sort", "torch.argsort", "torch.msort", "torch.functional.sort",
                        "torch.functional.argsort", "torch.functional.msort", "torch.Tensor.sort",
                        "torch.Tensor.argsort", "torch.Tensor.msort"))
