"""The PyNative eager bridge (``adapter/tape.py``) against MindSpore's own PyNative ``value_and_grad``, on the same
model, interleaved step by step in one process (issue 15: what of the PyNative fallback is ours).

    .venv/bin/python run.py --mode pynative --original bench/pynative_bridge.py [--model mnist vae resnet18]
        [--steps 12] [--batch-size 64] [--profile] [--out bench/pynative_bridge.json]

Per model (the classes of our idiom scripts ``pt_original/idioms/mnist_cnn_rnn.py`` (``ConvNet``, dropout 0, batch
64, 1x28x28, nll_loss), ``pt_original/idioms/vae.py`` (``VAE`` + ``vae_loss``, batch 128, 196, its noise ``eps``
fixed per model) and ``pt_original/resnet.py`` (``resnet18``, batch 32, 3x32x32, cross entropy), taken from the
files' AST so that their scripts do not run), one random batch, and in alternation. (The committed
``bench/pynative_bridge.json`` was measured before issue 32 on pytorch/examples' mnist ``Net`` and vae ``VAE``, which
left the repository: rerun before comparing.)

* ``bridge``: what the script runs: ``zero_grad()``; ``loss = lossfn(model(x), y)``; ``loss.backward()``; under
  ``run.py --mode pynative`` this is the eager bridge (patched ``Module.__call__`` opens the recording, the patched
  ``backward`` differentiates it and accumulates ``.grad``);
* ``native``: ``mindspore.value_and_grad(lambda x, y: lossfn(model(x), y), None, weights)(x, y)`` with MindTorch's
  own ``Module.__call__`` (our patch's wrapper removed for these steps): MindSpore's PyNative autodiff alone;
* ``bridge_step``: ``bridge`` + ``optimizer.step()`` (Adam) as a script does it: the optimizer's eager cost.

Each ends with ``loss.item()`` (a sync). Prints the median step times and the ratio bridge/native; ``--profile``
adds cProfile's top functions of ours (``adapter/``, ``patches/``) in the bridge steps, calls per step; writes
JSON. The gradients of bridge and native are compared (max abs difference), so the bench also checks that both
compute the same thing.
"""
import argparse
import ast
import cProfile
import json
import os
import pstats
import statistics
import sys
import time

import mindspore as ms
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IDIOMS = os.path.join(ROOT, "pt_original", "idioms")


def _definitions(path, names):
    """The top-level classes/functions ``names`` of ``path``, executed without running the file."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    body = [n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name in names]
    ns = {"torch": torch, "nn": nn, "F": F}
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), ns)
    return ns


def build(name, batch):
    torch.manual_seed(0)
    if name == "mnist":
        ConvNet = _definitions(os.path.join(IDIOMS, "mnist_cnn_rnn.py"), {"ConvNet"})["ConvNet"]
        model = ConvNet(0.0)
        x, y = torch.randn(batch, 1, 28, 28), torch.randint(0, 10, (batch,))
        return model, (lambda out, y: F.nll_loss(out, y)), x, y
    if name == "vae":
        ns = _definitions(os.path.join(IDIOMS, "vae.py"), {"VAE", "vae_loss"})

        class VAEFixedNoise(ns["VAE"]):  # the script passes its numpy-drawn noise; here one draw per model
            def __init__(self):
                super().__init__()
                self.eps = torch.randn(batch, 4)

            def forward(self, x):
                return super().forward(x, self.eps)

        model = VAEFixedNoise()
        x = torch.rand(batch, 196)
        return model, (lambda out, y: ns["vae_loss"](out[0], y, out[1], out[2])), x, x
    sys.path.insert(0, os.path.join(ROOT, "pt_original"))
    from resnet import resnet18
    model = resnet18(num_classes=10)
    x, y = torch.randn(batch, 3, 32, 32), torch.randint(0, 10, (batch,))
    return model, (lambda out, y: F.cross_entropy(out, y)), x, y


def ours(filename):
    return filename.startswith(os.path.join(ROOT, "adapter")) or filename.startswith(os.path.join(ROOT, "patches"))


def run_model(name, steps, batch, profile):
    from mindtorch.torch.nn.modules.module import Module
    model, lossfn, x, y = build(name, batch)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), 1e-4)
    weights = [p for p in model.parameters() if p.requires_grad]
    patched_call = Module.__call__
    plain_call = getattr(patched_call, "__wrapped__", patched_call)

    def bridge(step_opt=False):
        optimizer.zero_grad()
        loss = lossfn(model(x), y)
        loss.backward()
        if step_opt:
            optimizer.step()
        return loss.item()

    grad_fn = ms.value_and_grad(lambda x, y: lossfn(model(x), y), None, weights)

    def native():
        Module.__call__ = plain_call
        try:
            loss, grads = grad_fn(x, y)
        finally:
            Module.__call__ = patched_call
        return float(loss.asnumpy()), grads

    # gradients: the same model state, bridge vs native (eval mode: no dropout draws, BatchNorm batch stats unused)
    model.eval()
    torch.manual_seed(1)  # the same draws (vae's randn_like) on both sides
    bridge()
    g_bridge = [p.grad.asnumpy() for p in weights]
    torch.manual_seed(1)
    _, g_native = native()
    max_diff = max(float(np.abs(a - b.asnumpy()).max()) for a, b in zip(g_bridge, g_native))
    model.train()
    times = {"bridge": [], "native": [], "bridge_step": []}
    prof = cProfile.Profile() if profile else None
    for i in range(steps + 2):
        for kind in ("bridge", "native", "bridge_step"):
            t0 = time.perf_counter()
            if kind == "native":
                native()
            else:
                if prof is not None and i >= 2 and kind == "bridge":
                    prof.enable()
                bridge(kind == "bridge_step")
                if prof is not None:
                    prof.disable()
            if i >= 2:  # the first two rounds warm up (graph structure, caches)
                times[kind].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    out = {"batch": batch, "steps": steps, "median_s": med, "bridge_over_native": med["bridge"] / med["native"],
           "optimizer_step_s": med["bridge_step"] - med["bridge"], "grad_max_abs_diff": max_diff}
    if prof is not None:
        stats = pstats.Stats(prof).stats
        rows = [(tt, nc, f"{os.path.relpath(fn, ROOT)}:{line}({func})") for (fn, line, func), (cc, nc, tt, ct, _)
                in stats.items() if ours(fn)]
        rows.sort(reverse=True)
        total = sum(v[2] for v in stats.values())
        out["profile"] = {"ours_share_of_tottime": sum(r[0] for r in rows) / total,
                          "top_ours": [{"where": w, "calls_per_step": nc / steps, "tottime_per_step_s": tt / steps}
                                       for tt, nc, w in rows[:12]]}
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", nargs="+", default=["mnist", "vae", "resnet18"], choices=["mnist", "vae", "resnet18"])
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=None, help="default: mnist 64, vae 128, resnet18 32")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "pynative_bridge.json"))
    args = p.parse_args()
    results = {"date": time.strftime("%Y-%m-%d %H:%M"), "models": {}}
    for name in args.model:
        batch = args.batch_size or {"mnist": 64, "vae": 128, "resnet18": 32}[name]
        r = run_model(name, args.steps, batch, args.profile)
        results["models"][name] = r
        m = r["median_s"]
        print(f"{name:9s} bridge {m['bridge'] * 1e3:8.2f} ms  native value_and_grad {m['native'] * 1e3:8.2f} ms  "
              f"ratio {r['bridge_over_native']:.2f}  optimizer.step {r['optimizer_step_s'] * 1e3:7.2f} ms  "
              f"grad max |diff| {r['grad_max_abs_diff']:.2e}")
        if "profile" in r:
            print(f"          ours: {r['profile']['ours_share_of_tottime']:.0%} of profiled tottime")
            for row in r["profile"]["top_ours"][:8]:
                print(f"          {row['tottime_per_step_s'] * 1e3:7.3f} ms/step {row['calls_per_step']:6.1f} calls  "
                      f"{row['where']}")
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
