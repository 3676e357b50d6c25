"""Which part of the ResNet18 training step's compile is slower than native MindSpore's: the forward or Adam.

bench/compile_phases.py times the whole first compiled step. This compiles two parts of it on their own, each in a
fresh process (the first compile of a process, as the step's is), ours and native alternating (--repeat N):

  forward: ResNet18 (pt_original/resnet.py; native: bench/native_resnet.py) in training mode + cross-entropy loss on
           a 32x3x32x32 batch, compiled as one Cell (ours: run.py, ``adapter.graph_semantics.run_cell``)
  adam:    the optimizer's update over ResNet18's 62 parameters, compiled alone, as the fused step compiles it: a
           Cell calling ``optimizer(grads)``, compiled in GRAPH_MODE (ours under ``graph_semantics.graph_mode``):
           ours torch.optim.Adam (patches/adam.py), native mindspore.nn.Adam; both weight_decay=1e-5. Also reports
           ``compile_thread_cpu_s``, the CPU seconds of the compiling thread in ``Cell.compile`` alone (no run).
  adam_amsgrad: the same with amsgrad=True for ours (PyTorch's formula, patches/adam.py); native as in adam.

and prints the medians of MindSpore's compile profiler (``total``, ``type_inference``; seconds) per part, with
--before-root DIR also ours from another checkout. The CPU seconds of the compiling call move least with the load
of a shared machine. Measured 2026-11-26 (2 shared cores, load ~4, medians of 3): forward CPU native 0.67 s, ours
before the BatchNorm fast path (patches/normalization.py) 2.29, after 1.61 (type_inference 3.43 -> 2.18; on a
quieter run 1.50 -> ~0.95, native 0.34). adam (then ``mindspore.jit`` of the update in PyNative): CPU native 0.73,
ours 1.22-1.28 (type_inference 0.40 vs 1.17-1.32). adam after patches/adam.py's per-group decisions and primitives
(its "Compile time"), 2026-11-26, on main 09d688e with and without that change, load ~1, medians of 3,
bench/compile_parts_results.json: compiling-thread CPU native 0.44 s, before 1.12, ours 0.70 (type_inference
0.20 / 0.66 / 0.34); adam_amsgrad (medians of 2): before 4.95, ours 2.12 (type_inference 1.89 -> 0.68; native,
without amsgrad, 0.51).
Forward, then: the lean forms of adapter/graph_lean.py (ReLU, Linear, pooling, flatten, cross-entropy, tensor
``+``; same day, load ~7, medians of 3, ``--before-root`` = main): forward CPU native 0.69 s, before 1.58, ours 0.86
(type_inference 0.69 / 2.28 / 0.88; an earlier invocation at load ~4: CPU 0.66 / 1.50 / 0.85); Python functions the
compiler parses 90 -> 30 (159 -> 94 parses; native 22 / 82), function graphs after type inference 647 -> 354
(native 341), nodes 1199 -> 791 (native 531).

    .venv/bin/python bench/compile_parts.py [--repeat 3] [--parts forward adam] [--before-root DIR] [--out F]
    .venv/bin/python bench/compile_parts.py --parts adam --repeat 3 --before-root /tmp/before   # main checked out there
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = stack.python()
MARK = "COMPILE_PARTS_JSON "


def _child(which: str, part: str) -> None:
    """Build ``part`` (ours under run.py, or native), compile and run it once; print the CPU seconds of that call."""
    import numpy as np
    import mindspore as ms
    sys.path.insert(0, os.path.join(ROOT, "pt_original"))
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    sys.path.insert(0, ROOT)
    from adapter import backend
    backend.internal("compile_config").COMPILE_PROFILE = "1"
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((32, 3, 32, 32)).astype(np.float32), np.arange(32) % 10
    if which == "ours":
        import torch
        from resnet import resnet18
        net = resnet18(num_classes=10)
        net.train()
        loss_fn = torch.nn.CrossEntropyLoss()
        inputs = (torch.tensor(x), torch.tensor(y))
        opt = torch.optim.Adam(net.parameters(), 1e-3, weight_decay=1e-5, amsgrad=part == "adam_amsgrad")
    else:
        import native_resnet
        ms.set_context(mode=ms.GRAPH_MODE)
        net = native_resnet.ResNet(native_resnet.BasicBlock, [2, 2, 2, 2])
        net.set_train()
        loss_fn = ms.nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        inputs = (ms.Tensor(x), ms.Tensor(y.astype(np.int32)))
        opt = ms.nn.Adam(net.trainable_params(), 1e-3, weight_decay=1e-5)
    cpu = time.process_time()
    if part == "forward":
        class Forward(ms.nn.Cell):
            def __init__(self):
                super().__init__()
                self.net = net

            def construct(self, a, b):
                return loss_fn(self.net(a), b)
        if which == "ours":
            from adapter.graph_semantics import run_cell
            run_cell(Forward(), *inputs)
        else:
            Forward()(*inputs)
    else:  # a Cell compiled in GRAPH_MODE, as the fused step compiles the update (ours: under graph_mode())
        grads = tuple(ms.ops.ones(p.shape, p.dtype) * 0.01 for p in opt.parameters)

        class Update(ms.nn.Cell):
            def __init__(self):
                super().__init__()
                self.opt = opt

            def construct(self, g):
                return self.opt(g)
        update = Update()
        thread = time.thread_time()
        if which == "ours":
            from adapter.graph_semantics import graph_mode, run_cell
            with graph_mode():
                update.compile(grads)
            thread = time.thread_time() - thread
            run_cell(update, grads)
        else:
            ms.set_context(mode=ms.GRAPH_MODE)
            update.compile(grads)
            thread = time.thread_time() - thread
            update(grads)
        print(MARK + json.dumps({"call_cpu_s": time.process_time() - cpu, "compile_thread_cpu_s": thread}))
        return
    print(MARK + json.dumps({"call_cpu_s": time.process_time() - cpu}))


def main():
    if len(sys.argv) > 3 and sys.argv[1] == "--child":
        return _child(sys.argv[2], sys.argv[3])
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from compile_phases import _profiles
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--parts", nargs="+", default=["forward", "adam"], choices=["forward", "adam", "adam_amsgrad"])
    p.add_argument("--before-root", help="another checkout of this repository: its run.py is run as 'before'")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "compile_parts_results.json"),
                   help="JSON file; parts not run keep their earlier entry")
    args = p.parse_args()
    script = os.path.abspath(__file__)
    runs = {"native": (ROOT, [PY, script, "--child", "native"])}
    if args.before_root:
        runs["before"] = (os.path.abspath(args.before_root),
                          [PY, "run.py", "--no-compile-cache", "--original", script, "--child", "ours"])
    runs["ours"] = (ROOT, [PY, "run.py", "--no-compile-cache", "--original", script, "--child", "ours"])
    results = {}
    for part in args.parts:
        r = {name: [] for name in runs}
        for _ in range(args.repeat):  # interleaved: the machine's load drifts
            for name, (cwd, cmd) in runs.items():
                proc = subprocess.run(cmd + [part], cwd=cwd, capture_output=True, text=True,
                                      env=dict(os.environ, GLOG_v="4"), timeout=1800)
                marks = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARK)]
                profiles = _profiles(proc.stdout)
                if proc.returncode or not marks or not profiles:
                    r[name].append({"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]})
                    continue
                big = max(profiles, key=lambda prof: prof["total"])
                r[name].append({"total": big["total"], "type_inference": big.get("type_inference", 0.0),
                                **json.loads(marks[-1][len(MARK):])})
        keys = ("total", "type_inference", "call_cpu_s") + (("compile_thread_cpu_s",) if part != "forward" else ())
        median = {name: {k: statistics.median(x[k] for x in xs if "error" not in x) for k in keys}
                  for name, xs in r.items() if any("error" not in x for x in xs)}
        results[part] = {"runs": r, "median": median}
        print(f"\n{part}: median of {args.repeat} (profiler s; CPU s of the compiling call)")
        for name, m in median.items():
            thread = f"compile_thread_cpu {m['compile_thread_cpu_s']:6.2f}  " if "compile_thread_cpu_s" in m else ""
            print(f"  {name:8s} total {m['total']:6.2f}  type_inference {m['type_inference']:6.2f}  "
                  f"call_cpu {m['call_cpu_s']:6.2f}  {thread}type_inference each: "
                  f"{[round(x['type_inference'], 2) for x in r[name] if 'error' not in x]}")
        for name, xs in r.items():
            for x in xs:
                if "error" in x:
                    print(f"  {name}: error: {x['error']}")
    previous = {}
    if os.path.exists(args.out):  # keep the parts not run this time (--parts adam leaves "forward" as it was)
        with open(args.out) as f:
            previous = json.load(f)
    with open(args.out, "w") as f:
        json.dump({**previous, **results}, f, indent=1)
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
