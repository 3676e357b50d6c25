"""``torch.utils.data.DistributedSampler``: rank and world size from the process group; PyTorch's shuffle order.

MindTorch 0.4.0's sampler reads rank/size from ``mindspore.communication`` directly (no check that
``init_process_group`` ran) and shuffles with ``numpy.random.RandomState.choice``, so each worker sees other samples
than under PyTorch for the same seed and epoch. Here ``__iter__`` reproduces PyTorch's
``torch.randperm(n, generator=torch.Generator().manual_seed(seed + epoch))`` exactly: PyTorch's CPU generator is a
32-bit MT19937 seeded like ``numpy.random.RandomState(seed & 0xffffffff)`` and its ``randperm`` (n < 2**32 / 20)
is the Fisher-Yates shuffle ``swap(r[i], r[i + random() % (n - i)])`` (ATen ``randperm_cpu``); checked equal to
torch 2.13's for n = 10 ... 2**20 (``tests/test_distributed.py``). Padding (``drop_last=False``), truncation
(``drop_last=True``) and the ``rank::num_replicas`` subsampling are PyTorch's.

Replaces: ``torch.utils.data.DistributedSampler`` and ``torch.utils.data.distributed.DistributedSampler`` (a subclass
of MindTorch's).
"""
import math

from . import Patch, get_replaced, patch_attr


def torch_randperm(n: int, seed: int) -> list:
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()``: PyTorch's permutation, drawn by
    ``patches/generator.py``'s ``Generator`` (the same MT19937 and Fisher-Yates, in numpy).

    Raises:
        ValueError: n too large for PyTorch's 32-bit path (n >= 2**32 / 20).
    """
    if n >= (1 << 32) // 20:
        raise ValueError(f"DistributedSampler: a dataset of {n} samples needs PyTorch's 64-bit randperm path")
    from .generator import Generator
    return Generator().manual_seed(seed).randperm(n).tolist()


_CLASS = None  # the DistributedSampler class, built once by apply()


def _build_class(original):
    """PyTorch's DistributedSampler as a subclass of MindTorch's (``original``)."""
    class DistributedSampler(original):
        """PyTorch's ``DistributedSampler(dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
        drop_last=False)``; yields int indices.

        Raises:
            RuntimeError: ``num_replicas``/``rank`` omitted and the process group is not initialized.
            ValueError: ``rank`` not in ``[0, num_replicas - 1]``.
        """

        def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
            import mindtorch.torch.distributed as dist
            if num_replicas is None or rank is None:
                if not dist.is_initialized():
                    from adapter.userframe import user_location
                    raise RuntimeError(f"DistributedSampler at {user_location(2)}: Default process group has not "
                                       "been initialized, please make sure to call init_process_group (or pass "
                                       "num_replicas= and rank=).")
                num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
                rank = dist.get_rank() if rank is None else rank
            super().__init__(dataset, num_replicas=num_replicas, rank=rank, shuffle=shuffle, seed=seed,
                             drop_last=drop_last)

        def __iter__(self):
            n = len(self.dataset)
            indices = torch_randperm(n, self.seed + self.epoch) if self.shuffle else list(range(n))
            if not self.drop_last:
                padding = self.total_size - len(indices)
                if padding <= len(indices):
                    indices += indices[:padding]
                else:
                    indices += (indices * math.ceil(padding / len(indices)))[:padding]
            else:
                indices = indices[:self.total_size]
            indices = indices[self.rank:self.total_size:self.num_replicas]
            return iter(indices)

    DistributedSampler.__name__ = DistributedSampler.__qualname__ = "DistributedSampler"
    return DistributedSampler


def apply() -> None:
    global _CLASS
    import mindtorch.torch.utils.data as data
    import mindtorch.torch.utils.data.distributed as distributed
    if _CLASS is None:  # one class for the process (isinstance checks)
        _CLASS = _build_class(get_replaced(distributed, "DistributedSampler", NAME))
    patch_attr(distributed, "DistributedSampler", _CLASS)
    patch_attr(data, "DistributedSampler", _CLASS)


NAME = "distributed_sampler"
PATCH = Patch(NAME, "DistributedSampler takes rank/world size from the process group and shuffles "
                    "in PyTorch's order (same shards as PyTorch for a seed and epoch)",
              "post-import", apply, replaces=("torch.utils.data.distributed.DistributedSampler",
                                              "torch.utils.data.DistributedSampler"))
