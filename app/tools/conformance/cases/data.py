"""``torch.utils.data`` as pt_original/ uses it: datasets (``TensorDataset``, ``Subset``, a user ``Dataset``
subclass), ``DataLoader`` (batch_size, ``shuffle=False`` order, ``drop_last``, samplers, collation of tuples, dicts
and Python numbers), ``random_split`` with a seeded ``torch.Generator``, ``SequentialSampler`` and
``DistributedSampler`` (num_replicas, rank, shuffle, ``set_epoch``) indices.

The scripts' forms: train_resnet ``DataLoader(ds, batch_size=, shuffle=, num_workers=, pin_memory=, drop_last=)``;
imagenet ``DataLoader(ds, batch_size=, shuffle=, num_workers=, pin_memory=, sampler=)``, ``Subset(ds, range(..))``,
``DistributedSampler(ds)`` / ``(ds, shuffle=False, drop_last=True)``; mnist & co ``DataLoader(ds, **kwargs)``;
super_resolution ``DataLoader(dataset=, num_workers=, batch_size=, shuffle=)``; ddp-tutorial ``DataLoader(ds,
batch_size=, pin_memory=, shuffle=False, sampler=DistributedSampler(ds))``. Shuffled orders come from PyTorch's
global generator, not reproduced here (patches/random_sampler.py): those cases compare the multiset of samples.
Everything is eager (``graph=False``): data loading is not compiled.
"""
from app.tools.conformance.spec import Known
from app.tools.conformance.spec import C, T, api_of, used_signatures

_D = dict(x=T(10, 3, grad=False), y=T(10, dtype="int64", low=0, high=5))
_TDS = "ds = torch.utils.data.TensorDataset(x, y)\n"

# a map-style Dataset subclass whose items are (tensor, Python int) or dicts
_PAIRS = ("class Pairs(torch.utils.data.Dataset):\n"
          "    def __init__(self, x):\n        self.x = x\n"
          "    def __len__(self):\n        return len(self.x)\n"
          "    def __getitem__(self, i):\n        return self.x[i], i % 3\n"
          "ds = Pairs(x)\n")
_DICTS = ("class Dicts(torch.utils.data.Dataset):\n"
          "    def __init__(self, x):\n        self.x = x\n"
          "    def __len__(self):\n        return len(self.x)\n"
          "    def __getitem__(self, i):\n        return {'image': self.x[i], 'label': i % 3, 'scale': 0.5 * i}\n"
          "ds = Dicts(x)\n")
# single-process, as the scripts' --workers 0 / CPU runs (worker processes: tests/test_dataloader_workers.py)


def _L(expr, setup="", **kw):
    """An eager case; where ``expr`` wraps the call (``list(DataLoader(...))``), its signature is that of the first
    torch call in ``expr``."""
    if "sig" not in kw:
        inputs = {k for k, v in kw.items() if isinstance(v, T)}
        try:
            api = api_of(expr, inputs, setup)[0]
        except ValueError:
            api = ""
        if not api.startswith("torch."):
            kw["sig"] = used_signatures(expr, "", ())[0]
    return C(expr, setup, graph=False, grad=False, **kw)


CASES = [
    # ---- TensorDataset, Subset, Dataset subclass
    _L("ds[3]", _TDS, sig="torch.utils.data.TensorDataset(2)", **_D),
    _L("[len(ds), ds[-1], ds[2:4]]", _TDS, sig="torch.utils.data.TensorDataset(2)", **_D),
    _L("torch.utils.data.TensorDataset(x, z)", x=T(10, 3, grad=False), z=T(9, grad=False)),  # size mismatch raises
    _L("[len(sub), sub[0], sub[3], [sub[i][1] for i in range(len(sub))]]",
       _TDS + "sub = torch.utils.data.Subset(ds, range(6, 10))\n", sig="torch.utils.data.Subset(2)", **_D),
    _L("[len(sub), sub[1]]", _TDS + "sub = torch.utils.data.Subset(ds, [9, 0, 4])\n",
       sig="torch.utils.data.Subset(2)", **_D),
    # ---- DataLoader in order: batches, last partial batch, drop_last, len
    _L("list(torch.utils.data.DataLoader(ds, batch_size=4, shuffle=False))", _TDS, **_D),
    _L("[len(loader), list(loader)]", _TDS + "loader = torch.utils.data.DataLoader(ds, batch_size=4, shuffle=False, "
       "num_workers=0, pin_memory=False, drop_last=True)\n",
       sig="torch.utils.data.DataLoader(1;batch_size,drop_last,num_workers,pin_memory,shuffle)", **_D),
    _L("[len(loader), list(loader)]", _TDS + "loader = torch.utils.data.DataLoader(ds, batch_size=3)\n",
       sig="torch.utils.data.DataLoader(1;batch_size)", **_D),
    _L("list(torch.utils.data.DataLoader(ds))", _TDS, **_D),
    _L("list(torch.utils.data.DataLoader(dataset=ds, num_workers=0, batch_size=5, shuffle=False))", _TDS, **_D),
    _L("list(torch.utils.data.DataLoader(ds, **kw))", _TDS + "kw = {'batch_size': 4}\nkw.update({'shuffle': False})\n",
       **_D),
    _L("[len(loader), list(loader)]", _TDS + "loader = torch.utils.data.DataLoader(ds, batch_size=4, shuffle=False, "
       "num_workers=0, pin_memory=False, sampler=torch.utils.data.SequentialSampler(ds))\n",
       sig="torch.utils.data.DataLoader(1;batch_size,num_workers,pin_memory,sampler,shuffle)", **_D),
    _L("[b for b in torch.utils.data.DataLoader(ds, batch_size=4)]",
       _TDS + "ds = torch.utils.data.Subset(ds, range(3, 10))\n", **_D),
    # ---- collation: Python ints -> int64 tensor, floats -> float64, dicts stay dicts, tuple items -> list
    _L("[[type(b).__name__, b] for b in torch.utils.data.DataLoader(ds, batch_size=4)]", _PAIRS,
       x=T(6, 2, 2, grad=False)),
    _L("[[type(b).__name__, sorted(b), b['image'], b['label'], b['scale']] "
       "for b in torch.utils.data.DataLoader(ds, batch_size=4)]", _DICTS, x=T(6, 3, grad=False)),
    _L("torch.utils.data.default_collate([(a[0], 1), (a[1], 2)])", a=T(2, 3, grad=False)),
    _L("torch.utils.data.default_collate([a[0], a[1], a[2]])", a=T(3, 2, dtype="int64")),
    # a user's collate_fn calling default_collate, and default_collate given explicitly
    _L("list(torch.utils.data.DataLoader(ds, batch_size=4, collate_fn=lambda b: torch.utils.data.default_collate(b)))",
       _PAIRS, x=T(6, 2, grad=False)),
    _L("list(torch.utils.data.DataLoader(ds, batch_size=4, collate_fn=torch.utils.data.default_collate))",
       _TDS, **_D),
    # ---- shuffle=True: same samples, each once (the order is the global generator's)
    _L("[len(batches), [len(b[1]) for b in batches], sorted(torch.cat([b[1] for b in batches]).tolist())]",
       "torch.manual_seed(0)\nds = torch.utils.data.TensorDataset(x, torch.arange(10))\n"
       "batches = list(torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True))\n",
       sig="torch.utils.data.DataLoader(1;batch_size,shuffle)", x=T(10, 3, grad=False)),
    _L("[len(batches), [len(b[1]) for b in batches], len(set(torch.cat([b[1] for b in batches]).tolist()))]",
       "torch.manual_seed(0)\nds = torch.utils.data.TensorDataset(x, torch.arange(10))\n"
       "batches = list(torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True, drop_last=True))\n",
       sig="torch.utils.data.DataLoader(1;batch_size,drop_last,shuffle)", x=T(10, 3, grad=False)),
    # a seeded generator: PyTorch's order exactly (patches/generator.py)
    _L("[b[1] for b in torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True, "
       "generator=torch.Generator().manual_seed(0))]",
       "ds = torch.utils.data.TensorDataset(x, torch.arange(10))\n", x=T(10, 3, grad=False)),
    # ---- random_split with a seeded torch.Generator: PyTorch's permutation bit for bit
    _L("[s.indices for s in torch.utils.data.random_split(ds, [6, 4], generator=torch.Generator().manual_seed(0))]",
       _TDS, **_D),
    _L("[s.indices for s in torch.utils.data.random_split(ds, [7, 3], generator=torch.Generator().manual_seed(42))]",
       _TDS, **_D),
    _L("[s.indices for s in torch.utils.data.random_split(ds, [0.8, 0.2], generator=torch.Generator().manual_seed(0))]",
       _TDS, **_D),
    _L("[[len(s), s[0]] for s in "
       "torch.utils.data.random_split(ds, [5, 5], generator=torch.Generator().manual_seed(1))]",
       _TDS, **_D),
    _L("torch.utils.data.random_split(ds, [6, 5], generator=torch.Generator().manual_seed(0))", _TDS, **_D),
    _L("[len(s) for s in torch.utils.data.random_split(ds, [6, 4])]", "torch.manual_seed(0)\n" + _TDS, **_D),
    # ---- samplers
    _L("list(torch.utils.data.SequentialSampler(ds))", _TDS, **_D),
    _L("[len(s), list(s)]", _TDS + "s = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(ds), "
       "batch_size=4, drop_last=False)\n", sig="torch.utils.data.BatchSampler(1;batch_size,drop_last)", **_D),
    _L("[len(s), list(s)]", _TDS + "s = torch.utils.data.distributed.DistributedSampler(ds, num_replicas=3, rank=1, "
       "shuffle=False)\n", sig="torch.utils.data.distributed.DistributedSampler(1;num_replicas,rank,shuffle)", **_D),
    _L("[len(s), list(s)]", _TDS + "s = torch.utils.data.distributed.DistributedSampler(ds, num_replicas=3, rank=2, "
       "shuffle=False, drop_last=True)\n",
       sig="torch.utils.data.distributed.DistributedSampler(1;drop_last,num_replicas,rank,shuffle)", **_D),
    _L("[list(s), (s.set_epoch(1), list(s))[1]]", _TDS + "s = torch.utils.data.distributed.DistributedSampler(ds, "
       "num_replicas=2, rank=0)\n", sig="torch.utils.data.distributed.DistributedSampler(1;num_replicas,rank)", **_D),
    _L("list(s)", _TDS + "s = torch.utils.data.distributed.DistributedSampler(ds, num_replicas=4, rank=3, "
       "shuffle=True, "
       "seed=7)\n", sig="torch.utils.data.distributed.DistributedSampler(1;num_replicas,rank,seed,shuffle)", **_D),
    _L("torch.utils.data.distributed.DistributedSampler(ds, num_replicas=2, rank=2)", _TDS, **_D),
    _L("[len(loader), [b[1] for b in loader]]", _TDS + "loader = torch.utils.data.DataLoader(ds, batch_size=2, "
       "pin_memory=False, shuffle=False, sampler=torch.utils.data.distributed.DistributedSampler(ds, num_replicas=2, "
       "rank=1))\n", sig="torch.utils.data.DataLoader(1;batch_size,pin_memory,sampler,shuffle)", **_D),
    # PyTorch refuses shuffle=True together with a sampler
    _L("torch.utils.data.DataLoader(ds, batch_size=2, shuffle=True, sampler=torch.utils.data.SequentialSampler(ds))",
       _TDS, **_D),
]

KNOWN = []
