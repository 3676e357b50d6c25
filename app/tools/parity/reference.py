"""The reference side of ``run.py --compare``: run a script under real PyTorch, recording it (``recorder.py``).

Run with the reference environment's Python (``.venv-ref``, made by ``make reference``)::

    .venv-ref/bin/python app/tools/parity/reference.py --out DIR --steps N -- SCRIPT [script args...]

Hooks on real PyTorch: ``nn.Module.__call__`` (outermost calls: the model), ``Tensor.backward`` (the loss), the
global optimizer step pre/post hooks, ``DataLoader.__iter__`` (batches are stored). The script runs as ``__main__``
with ``sys.argv`` and ``sys.path[0]`` as ``python SCRIPT args`` gives them; it is stopped after N optimizer steps.
"""
from __future__ import annotations

import argparse
import functools
import os
import runpy
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def declare_torchvision_ops() -> None:
    """Declare the two operators whose fake kernels torchvision registers at import (``torchvision::nms``, ``qnms``)
    when its C++ extension is absent (the CPU reference env: ``scripts/setup_reference.sh`` explains why). Calling
    them then raises "no kernel"; datasets, transforms and models, all pure Python, work."""
    import importlib.util
    import torch
    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return
    if any(os.path.exists(os.path.join(d, "_C.so")) for d in spec.submodule_search_locations):
        return  # a working torchvision with its own operators
    lib = torch.library.Library("torchvision", "DEF")
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    declare_torchvision_ops.library = lib  # keep it alive


def install_hooks(recorder) -> None:
    """Feed ``recorder`` from real PyTorch."""
    import torch
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    module_call = torch.nn.Module.__call__
    depth = [0]

    @functools.wraps(module_call)
    def __call__(self, *args, **kwargs):
        if depth[0] == 0:
            recorder.on_module_call(self)
        depth[0] += 1
        try:
            return module_call(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    torch.nn.Module.__call__ = __call__

    backward = torch.Tensor.backward

    @functools.wraps(backward)
    def tensor_backward(self, *args, **kwargs):
        recorder.on_backward(self)
        return backward(self, *args, **kwargs)

    torch.Tensor.backward = tensor_backward
    register_optimizer_step_pre_hook(lambda opt, args, kwargs: recorder.on_step_begin(opt))
    register_optimizer_step_post_hook(lambda opt, args, kwargs: recorder.on_step_end(opt))

    loader_iter = torch.utils.data.DataLoader.__iter__

    @functools.wraps(loader_iter)
    def dataloader_iter(self):
        recorder.begin_iteration()
        return recorder.wrap_iterator(loader_iter(self))

    torch.utils.data.DataLoader.__iter__ = dataloader_iter
    from app.tools.parity.recorder import install_sampler_hook
    install_sampler_hook(recorder)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="record folder to write")
    parser.add_argument("--steps", type=int, default=50, help="optimizer steps to run (default 50)")
    parser.add_argument("--no-batches", action="store_true", help="do not store the batches (checksums only)")
    parser.add_argument("--no-arrays", action="store_true", help="fingerprints only, no arrays.npz")
    parser.add_argument("--replay", metavar="DIR", help="start from DIR's init.pth and batches (noise-floor run)")
    parser.add_argument("--perturb", type=float, default=0.0,
                        help="with --replay: multiply initial weights by 1 + PERTURB * N(0,1)")
    parser.add_argument("--seeded-init", type=int, metavar="SEED",
                        help="draw every model's initial weights from numpy with this seed, the same way on the "
                             "replay side (recorder.py), instead of saving init.pth")
    parser.add_argument("--fixed-shuffle", type=int, metavar="SEED",
                        help="DataLoader(shuffle=True) orders drawn from numpy with this seed on both sides")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opts = parser.parse_args(argv)
    script_args = opts.args[1:] if opts.args[:1] == ["--"] else opts.args
    sys.path.insert(0, ROOT)
    from app.tools.parity.recorder import ComparisonDone, Recorder
    sys.path.remove(ROOT)
    declare_torchvision_ops()
    recorder = Recorder(opts.out, opts.steps, replay_dir=opts.replay, save_batches=not opts.no_batches and not opts.replay,
                        full_arrays=not opts.no_arrays, perturb=opts.perturb, seeded_init=opts.seeded_init,
                        fixed_shuffle=opts.fixed_shuffle)
    install_hooks(recorder)
    path = os.path.abspath(opts.script)
    sys.argv = [opts.script] + script_args
    sys.path.insert(0, os.path.dirname(path))
    code = 0
    try:
        runpy.run_path(path, run_name="__main__")
    except ComparisonDone:
        pass
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        recorder.finish()
    return code


if __name__ == "__main__":
    sys.exit(main())
