"""Memory of one training run per phase: run.py (compiled) vs native MindSpore graph vs PyTorch CPU, in one invocation.

    .venv/bin/python bench/memory_phases.py [--arch resnet18 resnet50] [--steps 4] [--torch-python .venv-ref/bin/python]
        [--kept] [--warm] [--only-run-py] [--out bench/memory_results.json]

Each run is a separate process, ResNet batch 32, 3x32x32, Adam (as bench/run_bench.py), with RSS read from
/proc/self/status after ``gc.collect()`` at phase boundaries:

* ``start``: the framework imported (run.py: MindSpore + MindTorch + our patches);
* ``model``: model, optimizer, loss and four batches made;
* ``step1``: after the first step (run.py: the eager reference step; native: compile + first step);
* ``step2``: after the second (run.py: compile + the first compiled call);
* ``stepN``: after the last.

Per phase: ``rss_mb`` (VmRSS), ``hwm_mb`` (VmHWM, the peak so far), ``anon_mb`` (RssAnon: heap, pools, tensors),
``file_mb`` (RssFile: mapped shared libraries, clean pages). (a) is bench/memory_step.py through run.py, (d) the same
file under real PyTorch, (c) the native MindSpore port of bench/native_resnet.py (``--native`` runs it in-process).
Prints a table with the ratios of peak RSS a/c and a/d (issue 15's targets: <= 1.1 and <= 1.5 for ResNet50) and
writes everything to ``--out``.
"""
import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PY = stack.python()


def memory(phase):
    """RSS figures of this process now (after a gc), in MB."""
    gc.collect()
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                fields[key] = int(value.split()[0]) / 1024
    return {"phase": phase, "rss_mb": round(fields["VmRSS"], 1), "hwm_mb": round(fields["VmHWM"], 1),
            "anon_mb": round(fields["RssAnon"], 1), "file_mb": round(fields["RssFile"], 1)}


def native(arch, steps):
    """(c): bench/native_resnet.py's ResNet, TrainOneStepCell, GRAPH_MODE on CPU; prints one JSON line."""
    import numpy as np
    import mindspore as ms
    from mindspore import nn
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import native_resnet as nr
    phases = [memory("start")]
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU")
    ms.set_seed(0)
    net = nr.ResNet(nr.BasicBlock, [2, 2, 2, 2]) if arch == "resnet18" else nr.ResNet(nr.Bottleneck, [3, 4, 6, 3])
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Adam(net.trainable_params(), 1e-3, weight_decay=1e-5)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
    train.set_train()
    rng = np.random.default_rng(0)
    batches = [(ms.Tensor(rng.standard_normal((32, 3, 32, 32)).astype(np.float32)),
                ms.Tensor(rng.integers(0, 10, 32).astype(np.int32))) for _ in range(4)]
    phases.append(memory("model"))
    losses = []
    for step in range(steps):
        x, y = batches[step % len(batches)]
        losses.append(float(train(x, y).asnumpy()))
        if step < 2 or step == steps - 1:
            phases.append(memory(f"step{step + 1}"))
    print(json.dumps({"arch": arch, "phases": phases, "losses": losses,
                      "peak_rss_mb": max(p["hwm_mb"] for p in phases)}))


def _run(cmd, cache=None, **env):
    """``cmd``'s JSON line. ``cache``: the compile-cache folder run.py uses (``--warm`` passes one folder to the
    compiling run and then to the run that loads from it); None: an empty folder of its own, deleted after (run.py
    compiles)."""
    own = cache is None
    cache = tempfile.mkdtemp(prefix="memory_phases_cache_") if own else cache
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800,
                              env=dict(os.environ, GLOG_v="4", ADAPTER_COMPILE_CACHE_DIR=cache, **env))
    finally:
        if own:
            shutil.rmtree(cache, ignore_errors=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = proc.stderr.strip().splitlines()
        return {"error": tail[-1] if tail else f"exit {proc.returncode}"}
    return json.loads(lines[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", nargs="+", default=["resnet18", "resnet50"], choices=["resnet18", "resnet50"])
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--torch-python", default=os.environ.get("TORCH_PYTHON",
                                                            os.path.join(ROOT, ".venv-ref", "bin", "python")))
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "memory_results.json"))
    p.add_argument("--kept", action="store_true",
                   help="also (a0): run.py with ADAPTER_KEEP_EAGER_CACHES=1 ADAPTER_NO_MALLOC_TRIM=1, the behaviour "
                        "before adapter/compiled_step.py's release_eager_caches and compile_and_trim")
    p.add_argument("--warm", action="store_true",
                   help="also (a2): run.py again on (a)'s compile-cache folder, loading its graph from the cache and "
                        "checking it against the eager reference step (adapter/compiled_step.py _verify_loaded)")
    p.add_argument("--only-run-py", action="store_true", help="skip (c) native and (d) PyTorch")
    p.add_argument("--native", metavar="ARCH", help=argparse.SUPPRESS)  # child process of (c)
    args = p.parse_args()
    if args.native:
        return native(args.native, args.steps)
    step = os.path.join("bench", "memory_step.py")
    results = {}
    for arch in args.arch:
        common = ["--arch", arch, "--steps", str(args.steps)]
        if args.warm:  # (a) compiles into a folder, (a2) is the same command again: it loads from that folder
            cache = tempfile.mkdtemp(prefix="memory_phases_cache_")
            try:
                r = {"a_compiled": _run([VENV_PY, "run.py", "--original", step, *common], cache),
                     "a2_warm_cache": _run([VENV_PY, "run.py", "--original", step, *common], cache)}
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        else:
            r = {"a_compiled": _run([VENV_PY, "run.py", "--original", step, *common])}
        if args.kept:
            r["a0_nothing_freed"] = _run([VENV_PY, "run.py", "--original", step, *common],
                                         ADAPTER_KEEP_EAGER_CACHES="1", ADAPTER_NO_MALLOC_TRIM="1")
        if not args.only_run_py:
            r.update({"c_native_graph": _run([VENV_PY, os.path.abspath(__file__), "--native", arch, "--steps",
                                         str(args.steps)])})
        if args.torch_python and os.path.exists(args.torch_python) and not args.only_run_py:
            r["d_torch_eager"] = _run([args.torch_python, step, *common])
        peaks = {k: v["peak_rss_mb"] for k, v in r.items() if "peak_rss_mb" in v}
        r["ratios"] = {f"a/{k.split('_')[0]}": peaks["a_compiled"] / peaks[k] for k in peaks if k != "a_compiled"} \
            if "a_compiled" in peaks else {}
        results[arch] = r
        print(f"\n{arch}, batch 32, 3x32x32, Adam, {args.steps} steps: RSS MB per phase (anon in brackets)")
        names = ["start", "model", "step1", "step2", f"step{args.steps}"]
        print(f"  {'run':16s}" + "".join(f"{n:>16s}" for n in names) + f"{'peak':>8s}")
        for name, v in r.items():
            if name == "ratios":
                continue
            if "error" in v:
                print(f"  {name:16s} error: {v['error']}")
                continue
            by = {ph["phase"]: ph for ph in v["phases"]}
            cells = "".join(f"{by[n]['rss_mb']:>8.0f} ({by[n]['anon_mb']:>4.0f})" if n in by else f"{'':>16s}"
                            for n in names)
            print(f"  {name:16s}{cells}{v['peak_rss_mb']:>8.0f}")
        print("  peak RSS ratios: " + ", ".join(f"{k} = {v:.2f}" for k, v in r["ratios"].items()))
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
