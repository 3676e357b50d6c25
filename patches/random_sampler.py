"""``torch.utils.data.RandomSampler`` (``DataLoader(shuffle=True)``) draws from the global RNG as PyTorch's does: once
per epoch, when its iteration starts.

PyTorch 2.13 (``torch/utils/data/sampler.py``) draws one int64 seed from the global generator at the first
``next()`` of ``__iter__`` and takes every index of the epoch from a local ``torch.Generator`` seeded with it. MindTorch
0.4.0 draws the indices themselves from numpy's *global* RNG, lazily: one ``np.random.choice(n, n)`` at the start,
one more, wasted, when the sampler runs out (``[:num_samples % n]`` of a fresh permutation, also when the remainder
is 0), and with ``replacement=True`` one draw per 32 indices. When those draws happen depends on how far ahead the
loader reads the sampler: a worker iterator (``num_workers > 0``) primes ``2 * num_workers`` batches, so it runs the
sampler out before the script has seen the first batch, while ``num_workers=0`` does so at the end of the epoch.
Every ``np.random`` draw of the script in between (a mixup ``np.random.beta`` per batch) then got another value with
workers than without, and so did the next epoch's order (measured: ``tests/test_dataloader_workers.py``).

Here ``__iter__`` draws one seed from numpy's global RNG (the stream MindTorch's loader uses: ``torch.manual_seed``
seeds it through ``mindspore.set_seed``) at its first ``next()``, and the epoch's indices from a local
``numpy.random.RandomState(seed)``: permutations (``replacement=False``) or uniform integers in ``[0, n)``, drawn 32
at a time as PyTorch's (the same numbers as one draw of them all: numpy's legacy ``randint`` takes each from the
stream in turn); before, all ``num_samples`` at once, and ``RandomSampler(replacement=True, num_samples=int(1e10))``
(karpathy/makemore's endless loader) raised ``MemoryError`` (74.5 GiB) at its first batch. The
global stream then moves by one draw per epoch whoever reads the sampler and when; ``num_workers=0`` and ``> 0`` give
the same batches and leave the script the same random numbers. The order is not PyTorch's: its seed comes from
torch's generator, whose state here (MindSpore's) differs.

With ``generator=`` (a ``torch.Generator``, ``patches/generator.py``) the indices are PyTorch's own: permutations
or ints drawn from that generator as PyTorch's ``RandomSampler.__iter__`` draws them, and the global RNG is not used.

Replaces: ``torch.utils.data.RandomSampler.__iter__``.
"""
import numpy as np

from . import Patch, patch_attr


def _iter(self):
    """``RandomSampler.__iter__``: int indices in ``[0, len(data_source))``, ``num_samples`` of them."""
    n = len(self.data_source)
    from .generator import Generator, sampler_indices
    if isinstance(self.generator, Generator):
        yield from sampler_indices(self.generator, n, self.num_samples, self.replacement)
        return
    rng = np.random.RandomState(np.random.randint(0, 2 ** 31))  # the one global draw of this epoch
    if self.replacement:  # 32 at a time, as PyTorch: num_samples may be huge (an "infinite" loader's 1e10)
        for _ in range(self.num_samples // 32):
            yield from rng.randint(0, n, size=32).tolist()
        yield from rng.randint(0, n, size=self.num_samples % 32).tolist()
        return
    for _ in range(self.num_samples // n):
        yield from rng.permutation(n).tolist()
    if self.num_samples % n:
        yield from rng.permutation(n)[:self.num_samples % n].tolist()


def apply() -> None:
    from mindtorch.torch.utils.data import sampler
    patch_attr(sampler.RandomSampler, "__iter__", _iter)


PATCH = Patch("random_sampler", "RandomSampler (shuffle=True) draws from the global RNG once per epoch, as PyTorch: "
              "the same batches and script random numbers with or without DataLoader workers", "post-import", apply,
              replaces=("torch.utils.data.RandomSampler.__iter__",))
