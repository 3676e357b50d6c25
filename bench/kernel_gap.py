"""Where the in-graph time of small corpus models goes: run.py's compiled graph vs a hand-written native MindSpore
graph of the same nets vs real PyTorch CPU, with the top kernels of each side, from one invocation.

    .venv/bin/python bench/kernel_gap.py [--models dcgan mnist super_resolution mnist_forward_forward]
                                         [--out bench/kernel_gap_results.json]
                                         [--torch-python .venv-ref/bin/python] [--threads N] [--ab-disable PATCH]

Per model (dcgan: pytorch/examples dcgan/main.py with the corpus arguments, --ngf 16 --ndf 16, MNIST at 64 px,
batch 64, nc=1; mnist: mnist/main.py's Net, batch 64, Adadelta; super_resolution: main.py --upscale_factor 3
--batchSize 8, 85 px inputs, 255 px targets, Adam; mnist_forward_forward: main.py's first Layer(784, 500) step on
500 examples, Adam; ``--skip 3 --window 5`` for super_resolution, whose staged data gives 16 steps):

(a) run.py: the corpus script through ``run.py --explain`` (``scripts/corpus_specs.py`` arguments, data staged by
    ``bench/corpus_bench.py``'s staging); from the ``--skip``-th iteration
    to ``--window`` steps later (``adapter/events.py`` "step_end") timed, then as many with ``mindspore.Profiler``;
    reported: the iteration time, the time in ``run_cell`` (the compiled Cell's call alone, per iteration), the
    per-site steady-state graph time of ``--explain`` (the site's whole compiled path) and the profiled kernels.
    Kernels of eager ops between the graphs (PyNative) are included.
(b) native MindSpore: ``bench/native_dcgan.py`` / :func:`native_mnist` (mindspore.nn Cells, ``value_and_grad`` +
    optimizer in one Cell, GRAPH_MODE), timed, then profiled.
(c) PyTorch (``--torch-python``): the same nets and step order in real torch, timed, then ``torch.profiler``.

``--threads 1`` also sets (a)'s ``runtime_num_threads`` (before run.py's bootstrap, which sets none): one kernel
thread on every side, the least load-sensitive comparison. ``--ab-disable PATCH`` also runs (a) with
``ADAPTER_DISABLE_PATCHES=PATCH`` (the compile cache keys on it), for an A/B of that patch in one invocation.

Each side also reports CPU seconds per thread (and per child process) over its timed window (``/proc``): the load
does not change them, so a thread burning a core (a spinning queue, a worker) shows. ``--pipeline-spin`` also runs
(a) without ``app/bootstrap.py``'s ``quiet_pipeline`` (the behaviour before it): an A/B in one invocation.
Findings: ``bench/kernel_gap.md``.

Kernel times are per training iteration (dcgan: the three graphs / D, D, G updates; the others: one step), in ms, summed
by kernel type over the profiled window. Timings on a shared 2-core machine are noisy: compare sides of one
invocation; the kernel *mix* (which types dominate) is the stable part. Written to ``--out`` as JSON.
"""
from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PY = stack.python()
REF_PY = os.path.join(ROOT, ".venv-ref", "bin", "python")
SR_INPUT, SR_TARGET = (8, 1, 85, 85), (8, 1, 255, 255)  # super_resolution --upscale_factor 3 --batchSize 8 (crop 255)
FF_DIMS, FF_N = (784, 500), 500  # mnist_forward_forward's first Layer, --train_size 500
STEPS_PER_ITER = {"dcgan": 2, "mnist": 1, "super_resolution": 1, "mnist_forward_forward": 1}  # optimizer steps per training iteration


# ---------------------------------------------------------------------------------------------------- profiles --
def ms_kernels(folder: str, iterations: int) -> dict:
    """Kernel type -> ms per iteration, from a mindspore.Profiler (CPU) output folder: for each kernel instance
    (full name), its median duration times its calls per iteration, summed by type. The median keeps one stall of
    a loaded machine (seen: one 0.9 s call of a 10 ms kernel) from standing for the kernel."""
    paths = glob.glob(os.path.join(folder, "**", "cpu_op_execute_timestamp_*.txt"), recursive=True)
    if not paths:
        return {}
    table = {}
    with open(paths[0]) as f:
        for line in f:
            parts = line.strip().split(";")
            if len(parts) < 3:
                continue
            durations = [float(ev.split(",")[1]) for ev in parts[2].split()]
            kind = re.sub(r"-op\d+$", "", parts[0].split("/")[-1])
            table[kind] = table.get(kind, 0.0) + statistics.median(durations) * len(durations) / iterations
    return dict(sorted(table.items(), key=lambda kv: -kv[1]))


def ms_kernel_counts(folder: str, iterations: int) -> dict:
    """Kernel type -> launches per iteration (load-independent), from the same profile."""
    paths = glob.glob(os.path.join(folder, "**", "cpu_op_execute_timestamp_*.txt"), recursive=True)
    counts = {}
    for path in paths[:1]:
        with open(path) as f:
            for line in f:
                parts = line.strip().split(";")
                if len(parts) >= 3:
                    kind = re.sub(r"-op\d+$", "", parts[0].split("/")[-1])
                    counts[kind] = counts.get(kind, 0) + len(parts[2].split()) / iterations
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def cpu_snapshot() -> dict:
    """CPU seconds (user + system) so far: per thread of this process, by thread name (``/proc/self/task/*/stat``),
    and per child process (DataLoader workers), by name. Load changes wall times, much less CPU times: which threads
    burn the cores (spinning pools, workers) shows here."""
    tick = os.sysconf("SC_CLK_TCK")

    def stat(path):
        with open(path) as f:
            text = f.read()
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        return name, fields

    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            name, fields = stat(f"/proc/self/task/{tid}/stat")
        except OSError:
            continue
        key = "thread:" + re.sub(r"\d+$", "#", name)
        out[key] = out.get(key, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    me = str(os.getpid())
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            name, fields = stat(f"/proc/{pid}/stat")
        except OSError:
            continue
        if fields[1] == me:
            key = "child:" + name
            out[key] = out.get(key, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def timed(iteration, warmup: int, window: int) -> dict:
    """``iteration()`` ``warmup`` times untimed, then ``window`` times: the median wall seconds and the threads' CPU
    seconds per iteration (:func:`cpu_delta`)."""
    for _ in range(warmup):
        iteration()
    times = []
    before = cpu_snapshot()
    for _ in range(window):
        t = time.perf_counter()
        iteration()
        times.append(time.perf_counter() - t)
    return {"iteration_s": statistics.median(times), "cpu_s_per_iteration": cpu_delta(before, cpu_snapshot(), window)}


def cpu_delta(before: dict, after: dict, iterations: int) -> dict:
    keys = set(before) | set(after)
    delta = {k: (after.get(k, 0.0) - before.get(k, 0.0)) / iterations for k in keys}
    return {k: round(v, 4) for k, v in sorted(delta.items(), key=lambda kv: -kv[1]) if v > 0}


def explain_sites(text: str) -> dict:
    """``run.py --explain``'s per-site steady-state graph seconds ("script.py:line" -> s, None when not compiled)."""
    sites = {}
    for line in text.splitlines():
        m = re.search(r"([\w./-]+:\d+): backward\(\) of .*? — (.*)$", line.strip())
        if m:
            med = re.search(r"steady-state median ([\d.]+) s", m.group(2))
            sites["/".join(m.group(1).split("/")[-2:])] = float(med.group(1)) if med else None
    return sites


def ms_profiler(folder: str):
    import mindspore as ms
    return ms.Profiler(output_path=folder, start_profile=False)


# ------------------------------------------------------------------------------------------------- (a) run.py --
def side_runpy(args) -> dict:
    """Run inside .venv: the corpus script through run.py with the profiler on a window of optimizer steps."""
    sys.path.insert(0, ROOT)
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import corpus_specs as cs
    import stage_corpus_data as staging
    from adapter import events
    from app import bootstrap, launcher
    spec = cs.SPECS[args.model]
    base = os.path.join(ROOT, "runs", "corpus_bench")
    staging.stage(base, {"imagenet_train": 12, "bsds_train": 64})
    run = staging.make_run_dir(base, f"kernel_gap_{args.model}")
    os.makedirs(os.path.join(run, "results"), exist_ok=True)
    os.chdir(run)
    prof_dir = os.path.join(args.work, "runpy_prof")
    state = {"steps": 0, "times": [], "profiler": None, "run_cell": []}
    skip, window = args.skip * STEPS_PER_ITER[args.model], args.window * STEPS_PER_ITER[args.model]
    from adapter import compiled_step
    run_cell = compiled_step.run_cell

    def timed_run_cell(cell, *cell_args):  # the graph's own call (compile + run), without the site's Python around it
        start = time.perf_counter()
        try:
            return run_cell(cell, *cell_args)
        finally:
            state["run_cell"].append((state["steps"], time.perf_counter() - start))

    compiled_step.run_cell = timed_run_cell

    def on_step(_optimizer):
        state["steps"] += 1
        state["times"].append(time.perf_counter())
        if state["steps"] in (skip, skip + window):
            state.setdefault("cpu", []).append(cpu_snapshot())
        if args.profile and state["steps"] == skip + window:  # timed window first, then the profiled one
            state["profiler"] = ms_profiler(prof_dir)
            state["profiler"].start()
        elif state["profiler"] is not None and state["steps"] == skip + 2 * window:
            state["profiler"].stop()
            state["profiler"].analyse()
            state["profiler"] = None
            state["profiled"] = True

    events.subscribe("step_end", on_step)
    if args.threads:  # MindSpore keeps a context set before run.py's bootstrap (which sets no thread count)
        import mindspore as ms
        ms.set_context(runtime_num_threads=args.threads)
    if args.pipeline_spin:  # the behaviour before bootstrap.quiet_pipeline, for an A/B of that fix
        bootstrap.quiet_pipeline = lambda: None
    script = cs.script_path(spec.script)
    import io
    import contextlib
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = launcher.main(["--explain", *spec.run_opts, "--original", script, *spec.script_args(1),
                              *args.script_arg])
    text = err.getvalue()
    sites = explain_sites(text)
    per = STEPS_PER_ITER[args.model]
    iters = [b - a for a, b in zip(state["times"][::per], state["times"][per::per])][args.skip:args.skip + args.window]
    cells = {}  # iteration -> seconds in run_cell, over the timed window
    for step, seconds in state["run_cell"]:
        if skip <= step < skip + window:
            cells[step // per] = cells.get(step // per, 0.0) + seconds
    out = {"exit": code, "graph_s_per_site": sites, "graph_s_per_iteration": sum(v or 0 for v in sites.values()),
           "run_cell_s_per_iteration": statistics.median(cells.values()) if cells else None,
           "cpu_s_per_iteration": cpu_delta(*state["cpu"], args.window) if len(state.get("cpu", ())) == 2 else None,
           "iteration_s": statistics.median(iters) if iters else None}
    if state.get("profiled"):
        out["kernels_ms"] = ms_kernels(prof_dir, args.window)
        out["kernel_counts"] = ms_kernel_counts(prof_dir, args.window)
    if code:
        out["stderr_tail"] = text[-2000:]
    return out


# ---------------------------------------------------------------------------------------------- (b) native MS --
def native_mnist(ms, nn, ops):
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1, pad_mode="valid", has_bias=True)
            self.conv2 = nn.Conv2d(32, 64, 3, 1, pad_mode="valid", has_bias=True)
            self.pool = nn.MaxPool2d(2, 2)
            self.drop1, self.drop2 = nn.Dropout(p=0.25), nn.Dropout(p=0.5)
            self.fc1, self.fc2 = nn.Dense(9216, 128), nn.Dense(128, 10)
            self.relu = nn.ReLU()

        def construct(self, x):
            x = self.pool(self.relu(self.conv2(self.relu(self.conv1(x)))))
            x = self.drop1(x).reshape(x.shape[0], -1)
            x = self.fc2(self.drop2(self.relu(self.fc1(x))))
            return ops.log_softmax(x, 1)

    class Step(nn.Cell):
        def __init__(self, net, opt):
            super().__init__(auto_prefix=False)
            self.net, self.opt = net, opt
            self.grad = ms.value_and_grad(self.forward, None, opt.parameters)

        def forward(self, x, y):
            return ops.nll_loss(self.net(x), y)

        def construct(self, x, y):
            loss, grads = self.grad(x, y)
            self.opt(grads)
            return loss

    net = Net()
    net.set_train(True)
    return Step(net, nn.Adadelta(net.trainable_params(), learning_rate=1.0, rho=0.9, epsilon=1e-6))


class _native_step:
    """``value_and_grad(forward)`` + optimizer in one Cell (what a native MindSpore port writes)."""

    @staticmethod
    def build(ms, nn, net, forward, opt):
        class Step(nn.Cell):
            def __init__(self):
                super().__init__(auto_prefix=False)
                self.net, self.opt = net, opt
                self.grad = ms.value_and_grad(forward, None, opt.parameters)

            def construct(self, a, b):
                loss, grads = self.grad(a, b)
                self.opt(grads)
                return loss

        return Step()


def native_super_resolution(ms, nn, ops):
    """super_resolution/model.py's Net(upscale_factor=3) in mindspore.nn, MSELoss, Adam(lr=0.01)."""
    class Net(nn.Cell):
        def __init__(self, r=3):
            super().__init__()
            conv = lambda i, o, k: nn.Conv2d(i, o, k, 1, pad_mode="pad", padding=k // 2, has_bias=True)
            self.conv1, self.conv2, self.conv3, self.conv4 = conv(1, 64, 5), conv(64, 64, 3), conv(64, 32, 3), \
                conv(32, r * r, 3)
            self.relu, self.shuffle = nn.ReLU(), nn.PixelShuffle(r)

        def construct(self, x):
            x = self.relu(self.conv3(self.relu(self.conv2(self.relu(self.conv1(x))))))
            return self.shuffle(self.conv4(x))

    net = Net()
    loss_fn = nn.MSELoss()

    def forward(x, y):
        return loss_fn(net(x), y)

    return _native_step.build(ms, nn, net, forward, nn.Adam(net.trainable_params(), learning_rate=0.01))


def native_forward_forward(ms, nn, ops):
    """mnist_forward_forward/main.py's Layer(784, 500).train step in mindspore ops, Adam(lr=0.03)."""
    class Layer(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(*FF_DIMS)

        def construct(self, x):
            x_direction = x / (ops.norm(x, 2, 1, keepdim=True) + 1e-4)
            return ops.relu(ops.matmul(x_direction, self.fc.weight.T) + self.fc.bias.expand_dims(0))

    net = Layer()

    def forward(x_pos, x_neg):
        g_pos = net(x_pos).pow(2).mean(1)
        g_neg = net(x_neg).pow(2).mean(1)
        return ops.log1p(ops.exp(ops.cat([-g_pos + 2.0, g_neg - 2.0]))).mean()

    return _native_step.build(ms, nn, net, forward, nn.Adam(net.trainable_params(), learning_rate=0.03))


def side_native(args) -> dict:
    import numpy as np
    import mindspore as ms
    from mindspore import nn, ops
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    if args.threads:
        ms.set_context(runtime_num_threads=args.threads)
    ms.set_seed(1)
    rng = np.random.default_rng(0)
    if args.model == "dcgan":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import native_dcgan
        _, _, d_real, d_fake, g_step = native_dcgan.build(16, 16)
        real = ms.Tensor(rng.uniform(-1, 1, (64, 1, 64, 64)).astype(np.float32))
        ones, zeros = ms.Tensor(np.ones(64, np.float32)), ms.Tensor(np.zeros(64, np.float32))

        def iteration():
            noise = ms.Tensor(rng.standard_normal((64, 100, 1, 1)).astype(np.float32))
            loss, _, grads = d_real(real, ones)
            loss.asnumpy()
            d_fake(noise, zeros, *grads)[0].asnumpy()
            g_step(noise, ones)[0].asnumpy()
    elif args.model == "super_resolution":
        step = native_super_resolution(ms, nn, ops)
        x = ms.Tensor(rng.uniform(0, 1, SR_INPUT).astype(np.float32))
        y = ms.Tensor(rng.uniform(0, 1, SR_TARGET).astype(np.float32))

        def iteration():
            step(x, y).asnumpy()
    elif args.model == "mnist_forward_forward":
        step = native_forward_forward(ms, nn, ops)
        x_pos = ms.Tensor(rng.uniform(0, 1, (FF_N, FF_DIMS[0])).astype(np.float32))
        x_neg = ms.Tensor(rng.uniform(0, 1, (FF_N, FF_DIMS[0])).astype(np.float32))

        def iteration():
            step(x_pos, x_neg).asnumpy()
    else:
        step = native_mnist(ms, nn, ops)
        x = ms.Tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
        y = ms.Tensor(rng.integers(0, 10, 64).astype(np.int32))

        def iteration():
            step(x, y).asnumpy()
    out = timed(iteration, 2, args.window)  # the first 2: compile
    if args.profile:
        prof_dir = os.path.join(args.work, "native_prof")
        profiler = ms_profiler(prof_dir)
        profiler.start()
        for _ in range(args.window):
            iteration()
        profiler.stop()
        profiler.analyse()
        out["kernels_ms"] = ms_kernels(prof_dir, args.window)
        out["kernel_counts"] = ms_kernel_counts(prof_dir, args.window)
    return out


# ---------------------------------------------------------------------------------------------- (c) PyTorch --
def side_torch(args) -> dict:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    torch.manual_seed(1)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.model == "dcgan":
        nz, ngf, ndf, nc = 100, 16, 16, 1
        netG = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh())
        netD = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 4), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 8), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False), nn.Sigmoid())
        crit = nn.BCELoss()
        optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
        optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
        real = torch.rand(64, 1, 64, 64) * 2 - 1

        def iteration():
            netD.zero_grad()
            label = torch.full((64,), 1.0)
            crit(netD(real).view(-1), label).backward()
            noise = torch.randn(64, nz, 1, 1)
            fake = netG(noise)
            label.fill_(0.0)
            crit(netD(fake.detach()).view(-1), label).backward()
            optD.step()
            netG.zero_grad()
            label.fill_(1.0)
            crit(netD(fake).view(-1), label).backward()
            optG.step()
    elif args.model == "super_resolution":  # super_resolution/model.py's Net(3), MSELoss, Adam(lr=0.01), batch 8
        class SRNet(nn.Module):
            def __init__(self, r=3):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 64, 5, 1, 2)
                self.conv2 = nn.Conv2d(64, 64, 3, 1, 1)
                self.conv3 = nn.Conv2d(64, 32, 3, 1, 1)
                self.conv4 = nn.Conv2d(32, r * r, 3, 1, 1)
                self.shuffle = nn.PixelShuffle(r)

            def forward(self, x):
                x = F.relu(self.conv3(F.relu(self.conv2(F.relu(self.conv1(x))))))
                return self.shuffle(self.conv4(x))

        model, crit = SRNet(), nn.MSELoss()
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        x, y = torch.rand(*SR_INPUT), torch.rand(*SR_TARGET)

        def iteration():
            opt.zero_grad()
            loss = crit(model(x), y)
            loss.item()
            loss.backward()
            opt.step()
    elif args.model == "mnist_forward_forward":  # main.py's Layer(784, 500).train step, 500 examples, Adam(0.03)
        layer = nn.Linear(*FF_DIMS)
        opt = torch.optim.Adam(layer.parameters(), lr=0.03)
        x_pos, x_neg = torch.rand(FF_N, FF_DIMS[0]), torch.rand(FF_N, FF_DIMS[0])

        def forward(x):
            x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
            return torch.relu(torch.mm(x_direction, layer.weight.T) + layer.bias.unsqueeze(0))

        def iteration():
            g_pos = forward(x_pos).pow(2).mean(1)
            g_neg = forward(x_neg).pow(2).mean(1)
            loss = torch.log1p(torch.exp(torch.cat([-g_pos + 2.0, g_neg - 2.0]))).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    else:
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1, self.conv2 = nn.Conv2d(1, 32, 3, 1), nn.Conv2d(32, 64, 3, 1)
                self.dropout1, self.dropout2 = nn.Dropout(0.25), nn.Dropout(0.5)
                self.fc1, self.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)

            def forward(self, x):
                x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
                x = torch.flatten(self.dropout1(x), 1)
                x = self.fc2(self.dropout2(F.relu(self.fc1(x))))
                return F.log_softmax(x, dim=1)

        model = Net()
        opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
        x, y = torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))

        def iteration():
            opt.zero_grad()
            F.nll_loss(model(x), y).backward()
            opt.step()
    out = dict(timed(iteration, 3, args.window), threads=torch.get_num_threads())
    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(args.window):
                iteration()
        table = {}
        for e in prof.key_averages():
            if e.key.startswith("aten::") and e.self_cpu_time_total > 0:
                table[e.key] = e.self_cpu_time_total / 1000.0 / args.window
        out["kernels_ms"] = dict(sorted(table.items(), key=lambda kv: -kv[1]))
    return out


# ----------------------------------------------------------------------------------------------------- driver --
def run_side(python, side, model, args, work, disable: str = "") -> dict:
    cmd = [python, os.path.abspath(__file__), "--side", side, "--model", model, "--work", work,
           "--skip", str(args.skip), "--window", str(args.window), "--threads", str(args.threads)]
    if not args.no_profile:
        cmd.append("--profile")
    cmd += [f"--script-arg={a}" for a in args.script_arg] + (["--pipeline-spin"] if args.pipeline_spin else [])
    env = dict(os.environ, GLOG_v="4")
    if disable:  # the launch key includes it: graphs compiled with the patch are not reused
        env["ADAPTER_DISABLE_PATCHES"] = ",".join(filter(None, (env.get("ADAPTER_DISABLE_PATCHES"), disable)))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    for line in reversed(proc.stdout.strip().splitlines()):
        if line.startswith("{"):
            result = json.loads(line)
            if side == "runpy" and not result.get("graph_s_per_site"):  # --explain wrote to the process's stderr
                result["graph_s_per_site"] = explain_sites(proc.stderr + proc.stdout)
                result["graph_s_per_iteration"] = sum(v or 0 for v in result["graph_s_per_site"].values())
            return result
    return {"error": (proc.stderr or proc.stdout)[-1500:], "exit": proc.returncode}


def top(kernels: dict, n: int) -> str:
    return ", ".join(f"{k} {v:.1f}" for k, v in list(kernels.items())[:n])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=["dcgan", "mnist"], choices=sorted(STEPS_PER_ITER))
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "kernel_gap_results.json"))
    p.add_argument("--torch-python", default=os.environ.get("TORCH_PYTHON", REF_PY))
    p.add_argument("--skip", type=int, default=4, help="iterations before the timed/profiled window (run.py)")
    p.add_argument("--window", type=int, default=6, help="iterations timed, then profiled")
    p.add_argument("--threads", type=int, default=0, help="threads for (b) and (c) (0: each framework's default)")
    p.add_argument("--no-profile", action="store_true")
    p.add_argument("--pipeline-spin", action="store_true",
                   help="(a) without app/bootstrap.py's quiet_pipeline (PyNative's frontend_queue spins, as "
                        "before): also run (a) so, for an A/B of that fix in one invocation")
    p.add_argument("--ab-disable", default="", metavar="PATCH",
                   help="also run (a) with ADAPTER_DISABLE_PATCHES=PATCH (before that fix): an A/B in one invocation")
    p.add_argument("--script-arg", action="append", default=[],
                   help="an extra argument for (a)'s script, e.g. --script-arg=--workers --script-arg=0 (repeat)")
    p.add_argument("--top", type=int, default=8)
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--side", choices=("runpy", "native", "torch"), help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--work", help=argparse.SUPPRESS)
    p.add_argument("--profile", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.side:
        fn = {"runpy": side_runpy, "native": side_native, "torch": side_torch}[args.side]
        result = fn(args)
        sys.stdout.flush()
        print("\n" + json.dumps(result), flush=True)
        return
    work = tempfile.mkdtemp(prefix="kernel_gap_")
    results = {"date": time.strftime("%Y-%m-%d %H:%M"), "window_iterations": args.window, "models": {}}
    for model in args.models:
        r = {}
        if args.pipeline_spin:
            r["a_run_py_spinning"] = run_side(VENV_PY, "runpy", model, args, os.path.join(work, model + "_spin"))
        if args.ab_disable:
            r["a_run_py_without_" + args.ab_disable] = run_side(VENV_PY, "runpy", model, args,
                                                                 os.path.join(work, model + "_ab"), args.ab_disable)
        args.pipeline_spin, spin = False, args.pipeline_spin
        r.update({"a_run_py": run_side(VENV_PY, "runpy", model, args, os.path.join(work, model)),
             "b_native_ms": run_side(VENV_PY, "native", model, args, os.path.join(work, model)),
             "c_torch": run_side(args.torch_python, "torch", model, args, os.path.join(work, model))})
        args.pipeline_spin = spin
        a, b, c = (r[k].get("iteration_s") for k in ("a_run_py", "b_native_ms", "c_torch"))
        g = r["a_run_py"].get("graph_s_per_iteration")
        r["ratios"] = {"runpy_graph_over_native": g / b if g and b else None,
                       "native_over_torch": b / c if b and c else None,
                       "runpy_iteration_over_torch": a / c if a and c else None}
        results["models"][model] = r
        rc = r["a_run_py"].get("run_cell_s_per_iteration")
        print(f"== {model}: s per iteration: run.py {a and round(a, 4)} (run_cell {rc and round(rc, 4)}; "
              f"--explain graphs {g and round(g, 4)}: "
              f"{r['a_run_py'].get('graph_s_per_site')}), native MindSpore {b and round(b, 4)}, "
              f"PyTorch {c and round(c, 4)}; ratios {json.dumps({k: v and round(v, 2) for k, v in r['ratios'].items()})}")
        if "a_run_py_spinning" in r:
            sp = r["a_run_py_spinning"]
            print(f"   without quiet_pipeline: s per iteration {sp.get('iteration_s')}, run_cell "
                  f"{sp.get('run_cell_s_per_iteration')}, thread CPU s {sp.get('cpu_s_per_iteration')}")
        if args.ab_disable:
            ab = r["a_run_py_without_" + args.ab_disable]
            print(f"   without {args.ab_disable}: s per iteration {ab.get('iteration_s')}, run_cell "
                  f"{ab.get('run_cell_s_per_iteration')}, --explain graphs {ab.get('graph_s_per_site')}, thread CPU s "
                  f"{ab.get('cpu_s_per_iteration')}; kernel launches {ab.get('kernel_counts')}")
            print(f"   with it: kernel launches {r['a_run_py'].get('kernel_counts')}")
            if ab.get("kernels_ms"):
                print(f"   without {args.ab_disable} top kernels (ms/iteration): {top(ab['kernels_ms'], args.top)}")
        for key in ("a_run_py", "b_native_ms", "c_torch"):
            print(f"   {key} thread CPU s per iteration: {r[key].get('cpu_s_per_iteration')}")
            if "error" in r[key]:
                print(f"   {key}: error {r[key]['error'][-400:]}")
            else:
                print(f"   {key} top kernels (ms/iteration): {top(r[key].get('kernels_ms', {}), args.top)}")
    shutil.rmtree(work, ignore_errors=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
