"""Run a script under real PyTorch as ``python SCRIPT args`` would, for golden records (``record_corpus_goldens.py``)
and the corpus benchmark. Run it with the reference environment's Python (``.venv-ref``)::

    .venv-ref/bin/python scripts/run_under_torch.py [--torch-seed S] [--cuda-as-cpu] SCRIPT [args...]

* torchvision's two operator schemas are declared first (``app/tools/parity/reference.py``: the CPU reference
  environment's torchvision has no C++ extension).
* ``--torch-seed S``: ``torch.manual_seed(S)``, ``random.seed(S)``, ``numpy.random.seed(S)`` before the script runs,
  for scripts that have no seed option of their own (PyTorch's default seed is fixed, so without it every run is
  the same run; this gives "PyTorch's spread over seeds").
* ``--cuda-as-cpu``: what this adapter does with a script's CUDA calls ("a script's 'cuda' means this device"), for
  scripts that cannot run on a CPU-only PyTorch at all (ddp-tutorial-series: ``torch.cuda.set_device(rank)``,
  ``model.to(rank)``, ``DDP(device_ids=[rank])``, the nccl backend): ``torch.cuda.set_device`` does nothing,
  ``Module.to(int)`` / ``Tensor.to(int)`` stay on the CPU, ``DistributedDataParallel`` drops ``device_ids``,
  ``init_process_group(backend="nccl")`` uses gloo. ``torch.cuda.device_count()`` is left alone (0).
* ``--timing FILE``: write a JSON list of the wall time (s) of every ``optimizer.step()`` call's end, for
  ``bench/corpus_bench.py``.
"""
from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cuda_as_cpu() -> None:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.cuda.set_device = lambda device: None
    module_to, tensor_to = torch.nn.Module.to, torch.Tensor.to

    def _strip(args, kwargs):
        if args and isinstance(args[0], int) and not isinstance(args[0], bool):
            args = ("cpu",) + tuple(args[1:])
        if isinstance(kwargs.get("device"), int):
            kwargs = dict(kwargs, device="cpu")
        return args, kwargs

    def m_to(self, *args, **kwargs):
        args, kwargs = _strip(args, kwargs)
        return module_to(self, *args, **kwargs)

    def t_to(self, *args, **kwargs):
        args, kwargs = _strip(args, kwargs)
        return tensor_to(self, *args, **kwargs)

    torch.nn.Module.to, torch.Tensor.to = m_to, t_to
    ddp_init = DistributedDataParallel.__init__

    def ddp(self, module, device_ids=None, *args, **kwargs):
        kwargs.pop("output_device", None)
        ddp_init(self, module, None, *args, **kwargs)

    DistributedDataParallel.__init__ = ddp
    init_pg = dist.init_process_group

    def init_process_group(backend=None, *args, **kwargs):
        return init_pg("gloo" if backend in ("nccl", None) else backend, *args, **kwargs)

    dist.init_process_group = init_process_group
    import torch.distributed.distributed_c10d as c10d
    c10d.init_process_group = init_process_group


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--torch-seed", type=int)
    p.add_argument("--cuda-as-cpu", action="store_true")
    p.add_argument("--timing", metavar="FILE")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    opts = p.parse_args(argv)
    sys.path.insert(0, ROOT)
    from app.tools.parity.reference import declare_torchvision_ops
    sys.path.remove(ROOT)
    declare_torchvision_ops()
    import torch
    if opts.torch_seed is not None:
        import random
        import numpy as np
        torch.manual_seed(opts.torch_seed)
        random.seed(opts.torch_seed)
        np.random.seed(opts.torch_seed)
    if opts.cuda_as_cpu:
        cuda_as_cpu()
    times = []
    if opts.timing:
        from torch.optim.optimizer import register_optimizer_step_post_hook
        register_optimizer_step_post_hook(lambda opt, args, kwargs: times.append(time.perf_counter()))
    path = os.path.abspath(opts.script)
    sys.argv = [opts.script] + list(opts.args)
    sys.path.insert(0, os.path.dirname(path))
    code = 0
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        if opts.timing:
            with open(opts.timing, "w") as f:
                json.dump(times, f)
    return code


if __name__ == "__main__":
    sys.exit(main())
