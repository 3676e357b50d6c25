"""Are two checkouts' torch.optim.Adam / AdamW updates the same bits? (a change to patches/adam.py must keep them)

Runs each configuration below for 3 steps of seeded random gradients (scaled 1, 0.1, 0.01), eagerly (``opt(grads)``
in PyNative: the jit'd ``implementation``) and compiled (a Cell calling the optimizer under
``adapter.graph_semantics.run_cell``, as the fused step compiles it), in a child process per checkout (``run.py
--no-compile-cache``), and compares every parameter and slot (``exp_avg``, ``exp_avg_sq``, ``max_exp_avg_sq``) byte
for byte. Configurations: plain, weight decay, four groups (weight decay / amsgrad / maximize with beta1 0.3 / own
lr + amsgrad), float64 parameters (one group with amsgrad), a group mixing float64 and float32 parameters,
amsgrad everywhere, beta1 0.4 (the other lerp branch), AdamW plain and in groups.

    .venv/bin/python bench/adam_bits.py --before-root DIR [--python .venv-mindspore-2.10.0/bin/python] [--counted]

``--counted``: this checkout's optimizers are switched to per-parameter step counts before their first step
(``patches/adam_steps.py``, ``_adapter_steps_diverge``; every parameter is updated every step, so each count equals
the global one): the per-parameter update must give the other checkout's bits.

Prints "identical" or the differing arrays; exit status 0 when identical. Used for patches/adam.py's compile-time
change (2026-11-26): identical on MindSpore 2.5 and 2.10 (736 arrays each). patches/adam_steps.py (2026-11-26, vs
main): identical, and with ``--counted`` identical too (736 arrays; MindSpore 2.5 and 2.10).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
torch = None  # MindTorch's, imported by the child under run.py


def model():
    """Six layers of distinct parameter shapes (conv, BatchNorm, 1x1 conv, three linears)."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.Conv2d(8, 8, 1, bias=False),
                            torch.nn.Linear(5, 7), torch.nn.Linear(7, 7), torch.nn.Linear(7, 3))
    return m


CONFIGS = {  # name: make(model) -> optimizer
    "plain": lambda m: torch.optim.Adam(m.parameters(), 1e-3),
    "wd": lambda m: torch.optim.Adam(m.parameters(), 1e-2, weight_decay=1e-2),
    "groups": lambda m: torch.optim.Adam([
        {"params": list(m[0].parameters()) + list(m[1].parameters()), "weight_decay": 0.1},
        {"params": list(m[2].parameters()), "amsgrad": True, "weight_decay": 1e-3},
        {"params": list(m[3].parameters()), "maximize": True, "betas": (0.3, 0.9)},
        {"params": list(m[4].parameters()) + list(m[5].parameters()), "lr": 0.05, "amsgrad": True}], 1e-3),
    "f64": lambda m: torch.optim.Adam([{"params": list(m.double()[3:].parameters()), "weight_decay": 0.01},
                                       {"params": list(m[:3].parameters()), "amsgrad": True}], 0.1),
    "mixed": lambda m: torch.optim.Adam([{"params": list(m[3].double().parameters()) + list(m[4].parameters()),
                                          "weight_decay": 0.01}], 0.1),
    "amsgrad_all": lambda m: torch.optim.Adam(m.parameters(), 1e-3, amsgrad=True, weight_decay=1e-4),
    "beta_low": lambda m: torch.optim.Adam(m.parameters(), 1e-3, betas=(0.4, 0.99), eps=1e-6, weight_decay=1e-5),
    "adamw": lambda m: torch.optim.AdamW(m.parameters(), 1e-3),
    "adamw_groups": lambda m: torch.optim.AdamW([
        {"params": list(m[:3].parameters()), "amsgrad": True},
        {"params": list(m[3:].parameters()), "maximize": True, "weight_decay": 0.3}], 1e-2),
}


def _child(path: str, counted: bool = False) -> None:
    """Run every configuration, eager and compiled; save the arrays to ``path`` (npz). ``counted``: per-parameter
    step counts from the start (module docstring)."""
    global torch
    import numpy as np
    import mindspore as ms
    import torch
    from adapter.graph_semantics import run_cell

    class Update(ms.nn.Cell):
        def __init__(self, opt):
            super().__init__()
            self.opt = opt

        def construct(self, g):
            return self.opt(g)

    out = {}
    for name, make in CONFIGS.items():
        for how in ("eager", "graph"):
            m = model()
            opt = make(m)
            if counted:
                opt._adapter_steps_diverge()
            rng = np.random.default_rng(1)
            params = list(opt.parameters)
            update = Update(opt)
            for step in range(3):
                grads = tuple(ms.Tensor(rng.standard_normal(p.shape).astype(ms.dtype_to_nptype(p.dtype))
                                        * (10.0 ** -step)) for p in params)
                if how == "eager":
                    opt(grads)
                else:
                    run_cell(update, grads)
            for i, p in enumerate(params):
                out[f"{name}/{how}/p{i}"] = p.asnumpy()
                for slot in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
                    if hasattr(opt, slot):
                        out[f"{name}/{how}/{slot}{i}"] = getattr(opt, slot)[i].asnumpy()
    np.savez(path, **out)


def main():
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--child":
        sys.path.insert(0, ROOT)
        return _child(sys.argv[2], sys.argv[3:] == ["--counted"])
    import numpy as np
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before-root", required=True, help="the other checkout (e.g. main)")
    p.add_argument("--python", default=stack.python())
    p.add_argument("--counted", action="store_true", help="this checkout's optimizers count per parameter")
    args = p.parse_args()
    dumps = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, root in (("before", os.path.abspath(args.before_root)), ("ours", ROOT)):
            dumps[name] = os.path.join(tmp, name + ".npz")
            proc = subprocess.run([os.path.abspath(args.python), "run.py", "--no-compile-cache", "--original",
                                   os.path.abspath(__file__), "--child", dumps[name]]
                                  + (["--counted"] if args.counted and name == "ours" else []), cwd=root,
                                  capture_output=True, text=True, env=dict(os.environ, GLOG_v="4"))
            if proc.returncode:
                print(f"{name}: failed: {proc.stderr[-2000:]}")
                return 2
        a, b = np.load(dumps["before"]), np.load(dumps["ours"])
        if set(a.files) != set(b.files):
            print("different arrays:", sorted(set(a.files) ^ set(b.files)))
            return 1
        bad = [k for k in a.files if a[k].dtype != b[k].dtype or a[k].shape != b[k].shape
               or a[k].tobytes() != b[k].tobytes()]
        print(f"{len(a.files)} arrays: " + ("identical" if not bad else f"{len(bad)} differ: {bad[:20]}"))
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
