"""``torch.utils.data``'s ``TensorDataset`` items and a user's ``default_collate`` call are tensors, as in PyTorch.

MindTorch 0.4.0 runs its data pipeline in numpy and makes tensors once per batch, in the loader
(``mindtorch/torch/utils/data``): ``TensorDataset`` converts its tensors to numpy arrays at construction
("to accelerate"), and ``default_collate`` stacks into numpy arrays; the loader converts a batch to tensors only when
its ``collate_fn`` *is* that function (``_next_data``: ``self._collate_fn == default_collate``). Against PyTorch 2.13
(``torch/utils/data/dataset.py``, ``_utils/collate.py``; conformance cases in ``app/tools/conformance/cases/data.py``):

* ``ds[i]`` / ``ds[2:4]`` of a ``TensorDataset`` (and of a ``Subset`` or ``random_split`` part of one) returned
  numpy arrays where PyTorch returns tensors (``x, y = ds[0]; x.unsqueeze(0)`` raised AttributeError), and
  ``ds.tensors`` held numpy arrays;
* ``torch.utils.data.default_collate(batch)`` called by the user (in their own ``collate_fn``, which the loader
  then does not convert) returned numpy arrays where PyTorch returns tensors;
* a size mismatch in ``TensorDataset(x, y)`` raised ValueError; PyTorch's is an ``AssertionError`` ("Size mismatch
  between tensors").

Here:

* ``TensorDataset`` keeps the tensors given (``.tensors``, as PyTorch) and numpy arrays of them (MindTorch's, made
  once at construction); ``__getitem__`` returns ``torch.from_numpy`` of the indexed arrays: the same values and
  dtypes as PyTorch's ``tuple(t[index] for t in tensors)``.
* The loader keeps MindTorch's numpy path for the batches it collates itself: ``_MapDatasetFetcher.fetch`` over a
  ``TensorDataset`` (or ``Subset``\\s of one) with the loader's default collation indexes the numpy arrays with the
  batch's indices (``[a[idx] for a in arrays]``, what ``default_collate`` of the rows gives), so per-sample tensors
  are not made and taken apart again (measured: ~60 us per tensor per sample on this CPU) and forked workers make
  no tensors.
* A dataset class with an ``_adapter_collated_batch(dataset, indices)`` function (the MNIST family with plain
  ``ToTensor``/``Normalize``, ``patches/vision_data.py``) gives the collated batch itself, or None to be fetched
  sample by sample.
* ``torch.utils.data.default_collate`` (the public name) is MindTorch's collation followed by its
  ``default_convert``: tensors, dicts/lists/named tuples of tensors, strings unchanged; a loader given it
  explicitly (``collate_fn=default_collate``) uses the numpy collation and converts once, as without it.
  ``torch.utils.data.dataloader.default_collate`` and ``torch.utils.data._utils.collate.default_collate`` stay
  MindTorch's numpy functions (the loader's identity check reads the former); a script importing it from there
  still gets numpy arrays from a direct call.

Replaces: ``TensorDataset.__init__/__getitem__``, ``_MapDatasetFetcher.fetch``, ``torch.utils.data.default_collate``,
``DataLoader.__init__`` (``collate_fn`` mapping only).
"""
from __future__ import annotations

import functools

import numpy as np

from adapter import hooks

from . import Patch, get_original, get_replaced, patch_attr


def _arrays_and_indices(dataset, indices):
    """(numpy arrays, indices into them) when ``dataset`` is a TensorDataset or Subsets of one whose item access
    is the library's own; else None."""
    from mindtorch.torch.utils.data import Subset, TensorDataset
    while type(dataset).__getitem__ is Subset.__getitem__ and isinstance(dataset, Subset):
        indices = [dataset.indices[i] for i in indices]
        dataset = dataset.dataset
    if isinstance(dataset, TensorDataset) and type(dataset).__getitem__ is TensorDataset.__getitem__ \
            and getattr(dataset, "_adapter_arrays", None) is not None:
        return dataset._adapter_arrays, indices
    return None


# set by apply(): mindtorch.torch, its numpy collation (``_utils.collate.default_collate``) and the functions wrapped
_torch = _collate = _numpy_collate = _original_fetch = _loader_init = None


def tensor_dataset_init(self, *tensors):
    """``TensorDataset.__init__``: keeps the tensors (``.tensors``) and numpy arrays of them. Raises AssertionError
    "Size mismatch between tensors" as PyTorch."""
    if not all(tensors[0].shape[0] == t.shape[0] for t in tensors):
        raise AssertionError("Size mismatch between tensors")
    self.tensors = tensors
    self._adapter_arrays = tuple(t.numpy() if isinstance(t, _torch.Tensor) else np.asarray(t) for t in tensors)


def tensor_dataset_getitem(self, index):
    """``TensorDataset.__getitem__``: a tuple of tensors, ``t[index]`` of each (from the numpy arrays)."""
    if isinstance(index, _torch.Tensor):
        index = index.numpy()
    return tuple(_torch.from_numpy(np.array(a[index])) for a in self._adapter_arrays)


def fetch_batch(self, possibly_batched_index):
    """``_MapDatasetFetcher.fetch``: with the loader's numpy collation, a batch a dataset collates itself or one
    indexed from a TensorDataset's arrays; MindTorch's per-sample fetch otherwise."""
    if self.auto_collation and self.collate_fn is _numpy_collate:
        batched = hooks.get(type(self.dataset), "collated_batch")
        if batched is not None:  # a dataset that collates a whole batch itself (patches/vision_data.py)
            out = batched(self.dataset, list(possibly_batched_index))
            if out is not None:
                return out
        found = _arrays_and_indices(self.dataset, list(possibly_batched_index))
        if found is not None:
            arrays, indices = found
            index = np.asarray(indices, dtype=np.int64)
            return [a[index] for a in arrays]
    return _original_fetch(self, possibly_batched_index)


def default_collate(batch):
    return _collate.default_convert(_numpy_collate(batch))


def loader_init(self, *args, **kwargs):
    """``DataLoader.__init__`` (patches/dataloader.py's) with ``collate_fn=default_collate`` (the public one, which
    makes tensors) mapped to the numpy collation: the loader converts its batches once."""
    if kwargs.get("collate_fn") is default_collate:
        kwargs["collate_fn"] = _numpy_collate
    elif len(args) >= 7 and args[6] is default_collate:  # (dataset, batch_size, shuffle, sampler,
        args = args[:6] + (_numpy_collate,) + args[7:]     # batch_sampler, num_workers, collate_fn, ...)
    _loader_init(self, *args, **kwargs)


def apply() -> None:
    global _torch, _collate, _numpy_collate, _original_fetch, _loader_init
    import mindtorch.torch as torch
    import mindtorch.torch.utils.data as data
    from mindtorch.torch.utils.data import TensorDataset, dataloader
    from adapter import backend
    collate = backend.internal("data.collate")

    _torch, _collate = torch, collate
    patch_attr(TensorDataset, "__init__", tensor_dataset_init)
    patch_attr(TensorDataset, "__getitem__", tensor_dataset_getitem)

    _numpy_collate = get_original(collate, "default_collate")
    _original_fetch = get_original(backend.internal("MapDatasetFetcher"), "fetch")
    patch_attr(backend.internal("MapDatasetFetcher"), "fetch", functools.update_wrapper(fetch_batch, _original_fetch))

    functools.update_wrapper(default_collate, _numpy_collate)
    default_collate.__doc__ = ("PyTorch's ``default_collate``: the batch's samples stacked into tensors (dicts, "
                               "sequences and named tuples collated per field; patches/data_tensors.py).")
    patch_attr(data, "default_collate", default_collate)

    # stacked on patches/dataloader.py's DataLoader.__init__ (get_replaced: the value this patch wraps)
    _loader_init = get_replaced(dataloader.DataLoader, "__init__", PATCH.name)
    patch_attr(dataloader.DataLoader, "__init__", functools.update_wrapper(loader_init, _loader_init))


PATCH = Patch("data_tensors", "TensorDataset items and a user's default_collate() are tensors, as in PyTorch "
                              "(MindTorch: numpy arrays); the loader keeps its numpy batching", "post-import", apply,
              replaces=("torch.utils.data.TensorDataset.__init__", "torch.utils.data.TensorDataset.__getitem__",
                        "torch.utils.data._utils.fetch._MapDatasetFetcher.fetch", "torch.utils.data.default_collate",
                        "torch.utils.data.DataLoader.__init__"),
              after=("dataloader",))
