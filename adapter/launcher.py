"""``run.py``: run an unchanged PyTorch script on MindSpore through MindTorch and the patch layer.

Order matters and is the whole point of this module:

1. parse our own options (everything before ``--original FILE``; everything after FILE belongs to the script);
2. configure MindSpore (device target, PyNative mode) before any tensor exists;
3. install the pre-import patches, enable MindTorch's import hook (``mindtorch.tools.mstorch_enable``) so that
   ``import torch`` / ``torchvision`` resolve to MindTorch, import it, install the post-import patches;
4. make ``sys.argv``, ``sys.path[0]`` and ``__file__`` what ``python FILE args...`` would have given, and run the
   script with ``runpy`` as ``__main__``;
5. exit with the script's exit code; on an exception, print the traceback without our frames and end with the
   user's ``file:line``.
"""
from __future__ import annotations

from adapter.startup_marks import mark as _mark

_mark("launcher")
import argparse
import os
import runpy
import sys
import traceback
from typing import List, Optional, Tuple

EXIT_USAGE = 2


def split_argv(argv: List[str]) -> Tuple[List[str], Optional[str], List[str]]:
    """Split ``run.py``'s argv into (our options, script path or None, the script's own arguments).

    ``--original FILE`` (or ``--original=FILE``) ends our options; every argument after FILE is the script's. A ``--``
    right after FILE is dropped (``run.py --original t.py -- --help`` passes ``--help`` to the script).
    """
    for i, arg in enumerate(argv):
        if arg == "--":
            break  # a bare -- before --original: leave it to argparse (it will complain)
        if arg == "--original":
            if i + 1 >= len(argv):
                return argv[:i] + ["--original"], None, []
            script, rest = argv[i + 1], argv[i + 2:]
        elif arg.startswith("--original="):
            script, rest = arg.split("=", 1)[1], argv[i + 1:]
        else:
            continue
        if rest[:1] == ["--"]:
            rest = rest[1:]
        return argv[:i], script, rest
    return argv, None, []


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="run.py",
        usage="python run.py [options] --original SCRIPT [script args...]",
        description="Run an unchanged PyTorch training script on MindSpore (through MindTorch and our patches).",
        epilog="Everything after '--original SCRIPT' is passed to the script unchanged.")
    parser.add_argument("--original", metavar="SCRIPT", help="the PyTorch script to run, as 'python SCRIPT' would")
    parser.add_argument("--device", choices=["CPU", "GPU", "Ascend"], default="CPU",
                        help="MindSpore device target (default: CPU). A script's 'cuda' means this device.")
    parser.add_argument("--mode", choices=["auto", "graph", "pynative"], default="auto",
                        help="auto (default): compile each training step to MindSpore graph mode, falling back to "
                             "PyNative per step with a one-line reason; graph: compile or fail; pynative: never compile")
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--compile-cache", dest="compile_cache", action="store_true", default=True,
                       help="(the default) reuse the graphs an earlier run of the same script, arguments, sources, "
                            "versions and options compiled: each graph is loaded only where a digest of its model "
                            "(classes, parameter shapes and dtypes, module settings, inputs) matches, and a loaded "
                            "training step is checked against the eager reference step on its first call (a "
                            "mismatch recompiles); steps that draw random numbers are compiled, not loaded. Folder: "
                            "$ADAPTER_COMPILE_CACHE_DIR or $XDG_CACHE_HOME/mindtorch_adapter/compile (~/.cache), least "
                            "recently used folders evicted beyond 2 GiB or 64 folders (adapter/compile_cache.py)")
    cache.add_argument("--no-compile-cache", dest="compile_cache", action="store_false",
                       help="compile every graph afresh; read and write no cache (also ADAPTER_COMPILE_CACHE=0)")
    parser.add_argument("--explain", action="store_true",
                        help="at exit, print for each captured training step whether it was compiled, and why not")
    parser.add_argument("--detect-anomaly", action="store_true",
                        help="name the first module (e.g. layer3.2.bn2) whose output or gradient is NaN/Inf, and the "
                             "step (torch.autograd.detect_anomaly for the whole run; every step runs in PyNative)")
    parser.add_argument("--amp-level", choices=["device", "O0", "auto", "O2", "O3"], default="device",
                        help="how the script's autocast regions run: device (default): O3 on Ascend, O2 on GPU, "
                             "O0 (float32) on CPU, where float16 is slower; auto: MindSpore's op-list level, the "
                             "closest to torch.autocast; O2/O3: MindSpore's levels (patches/amp.py)")
    parser.add_argument("--verbose", action="store_true",
                        help="show MindSpore's and MindTorch's own log lines (warnings, exit-time messages), which "
                             "run.py otherwise keeps out of the script's output (patches/log_noise.py)")
    parser.add_argument("--report", action="store_true",
                        help="print what the script needs from this adapter (torch APIs MindTorch lacks, calls our "
                             "patches handle, graph-mode blockers, each with file:line) by reading its code; "
                             "the script is not run")
    parity = parser.add_argument_group("parity with real PyTorch (adapter/parity)")
    parity.add_argument("--compare", action="store_true",
                        help="run the script under real PyTorch (.venv-ref, made on first use) and here from the "
                             "same initial weights and batches; write a parity report (text, JSON, PNG)")
    parity.add_argument("--compare-steps", type=int, default=50, metavar="N",
                        help="optimizer steps to compare (default 50)")
    parity.add_argument("--compare-out", default="parity_report", metavar="DIR",
                        help="folder for the report and both runs' records (default ./parity_report)")
    parity.add_argument("--reference-python", metavar="PYTHON",
                        help="Python of a real-PyTorch environment (default .venv-ref/bin/python)")
    parity.add_argument("--no-noise-floor", action="store_true",
                        help="skip the second PyTorch run (from weights perturbed by 1e-7) that measures how far "
                             "PyTorch drifts from itself")
    parity.add_argument("--compare-seeds", type=int, metavar="N",
                        help="with --compare: the script under N seeds on both sides (numpy-drawn initial weights "
                             "and shuffling per seed, --compare-steps each); verdict: MindSpore's mean final loss "
                             "within 2 std of PyTorch's over the seeds; plot of both distributions")
    parity.add_argument("--reference-record", metavar="DIR",
                        help="compare against this PyTorch record (e.g. a golden one) instead of running PyTorch")
    parser.add_argument("--list-patches", action="store_true", help="list the patches and what each does, then exit")
    from adapter import distributed  # --nproc-per-node, --nnodes, --node-rank, --master-addr, --master-port
    distributed.add_arguments(parser)
    return parser


def list_patches() -> None:
    from patches import listing  # generated from the patches' declarations
    sys.stdout.write(listing.text())


def setup_mindspore(device: str, verbose: bool = False) -> None:
    """Select the device and PyNative mode, then make ``import torch`` resolve to patched MindTorch.

    ``verbose`` (``--verbose``, or ``ADAPTER_VERBOSE=1`` inherited from a parent run.py): MindSpore logs warnings
    (``GLOG_v=2``, its default) and patches/log_noise.py hides nothing."""
    from patches.log_noise import VERBOSE_ENV
    if verbose:
        os.environ[VERBOSE_ENV] = "1"  # children (workers, mp.spawn, DataLoader workers) inherit it
    verbose = os.environ.get(VERBOSE_ENV) == "1"
    # MindSpore C++ logs: critical only. Errors reach the user as Python exceptions (or, for a step that falls back
    # to PyNative, as our one-line reason), not as multi-page analyzer dumps.
    os.environ.setdefault("GLOG_v", "2" if verbose else "4")
    # MindSpore writes rank_0/om/analyze_fail.ir for every graph that fails to compile, by default into the working
    # directory: a step that falls back to PyNative left that folder in the user's project. Here: the temp folder.
    import tempfile
    os.environ.setdefault("MS_OM_PATH", os.path.join(tempfile.gettempdir(), "mindtorch_adapter_om"))
    import patches
    patches.install("pre-mindspore")  # before MindSpore's extension modules look numpy's helpers up
    try:
        import mindspore as ms
    except ImportError as exc:
        raise SystemExit(f"run.py: MindSpore is not importable from {sys.executable} ({exc}).\n"
                         "Set up the environment with 'make setup' and run '.venv/bin/python run.py ...'.")
    _mark("mindspore")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_device(device)
    if device == "CPU":
        # PyNative's asynchronous pipeline keeps two queue threads spinning; on a 2-core CPU they take most of the
        # cores from the kernels (measured: ResNet18 compiled step 1.2-2.5 s/step async vs 0.26 s synchronous,
        # equal to native MindSpore's 0.25 s). Synchronous launch costs nothing on CPU, where kernels run on the host.
        ms.set_context(pynative_synchronize=True)
        quiet_pipeline()
        os.register_at_fork(after_in_parent=quiet_pipeline)  # a fork may rebuild the queues (spinning again)
    _mark("context")
    patches.install("pre-import")
    _mark("pre_import")
    from mindtorch.tools import mstorch_enable  # noqa: F401  (import hook: torch -> mindtorch.torch)
    import torch  # noqa: F401  (imports MindTorch now, under the pre-import patches)
    _mark("torch")
    patches.install("post-import")
    _mark("post_import")


def quiet_pipeline() -> None:
    """Make PyNative's ``frontend_queue`` thread wait for work instead of spinning (CPU).

    ``pynative_synchronize`` does not cover it: the first call of a ``mindspore.jit`` function from PyNative (MindTorch
    optimizers' ``implementation``, run by every ``optimizer.step()`` that is not fused into a compiled step, e.g.
    dcgan's) starts that thread, and its queue (``runtime/pipeline/ring_queue.h``) busy-waits for tasks for the rest
    of the run: a core taken from the kernels. Measured with ``bench/kernel_gap.py`` (thread CPU seconds, which the
    machine's load does not change): pytorch/examples dcgan burned 0.95-1.03 CPU s per iteration in
    ``frontend_queue`` against 0.4 s in the graphs' kernel threads; mnist (update fused, no such call) none.
    ``PyNativeExecutor::SetAsyncForGraph(false)`` (``_pynative_executor.set_async_for_graph``, effective only in
    GRAPH_MODE) turns the queue's spin off: it waits for tasks (this build; ``tests/test_run.py``). Runs the queued
    work first; the mode is restored."""
    import mindspore as ms
    from mindspore.common.api import _pynative_executor
    mode = ms.get_context("mode")
    if mode != ms.GRAPH_MODE:
        ms.set_context(mode=ms.GRAPH_MODE)
    try:
        _pynative_executor.set_async_for_graph(False)
    finally:
        if mode != ms.GRAPH_MODE:
            ms.set_context(mode=mode)


def _map_generated_frames(tb: traceback.TracebackException) -> None:
    """Frames in generated forward_fn files (same line numbers as the user's file) are shown as the user's."""
    from adapter.compiled_step import GENERATED_TO_USER
    import linecache
    frames = []
    for f in tb.stack:
        user_file = GENERATED_TO_USER.get(f.filename)
        if user_file is not None:
            f = traceback.FrameSummary(user_file, f.lineno, f.name,
                                       line=linecache.getline(user_file, f.lineno).strip())
        frames.append(f)
    tb.stack = traceback.StackSummary.from_list(frames)
    if tb.__cause__ is not None:
        _map_generated_frames(tb.__cause__)
    if tb.__context__ is not None:
        _map_generated_frames(tb.__context__)


def _user_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` from the script's first frame on, ending with the user's file:line."""
    from adapter.userframe import _is_internal, display_path
    tb = traceback.TracebackException.from_exception(exc)
    _map_generated_frames(tb)
    # Drop the launcher's frames (run.py, adapter/, runpy) that come before the script's first frame.
    first_user = next((i for i, f in enumerate(tb.stack) if not _is_internal(os.path.abspath(f.filename))), 0)
    frames = [] if isinstance(exc, SyntaxError) else list(tb.stack)[first_user:]  # as `python FILE` shows it
    tb.stack = traceback.StackSummary.from_list(frames)
    from adapter import ms_errors
    text = ms_errors.without_cpp_stack("".join(tb.format()))
    user = [f for f in frames if not _is_internal(os.path.abspath(f.filename))]
    if isinstance(exc, SyntaxError) and exc.filename:
        where = f"{display_path(exc.filename)}:{exc.lineno}"
    elif user:
        where = f"{display_path(user[-1].filename)}:{user[-1].lineno}"
    else:
        where = None
    if where:
        text += f"run.py: the script failed at {where}: {type(exc).__name__}: {ms_errors.summary(str(exc))}\n"
    return text


def enable_compile_cache(script: str, script_args: List[str], options: Optional[dict] = None) -> Optional[str]:
    """Turn on the checked compile cache for ``script`` (``adapter/compile_cache.py``); return the cache folder, or
    None when it stays off (``ADAPTER_COMPILE_CACHE=0``, a distributed worker, or the same script with the same
    arguments running now in another process).

    On by default: the folder is keyed by the script's arguments, the ``.py`` files of its folder, this adapter's
    sources, the MindSpore/MindTorch/Python versions and ``options``; each graph is loaded only when its own digest
    (model structure, parameter shapes and dtypes, input signature, generated source) is the one recorded for it, and
    a loaded compiled step is checked against the eager reference step on its first call (a mismatch recompiles and
    deletes the stale folder). A cached graph writes back only the Parameters its Cell owns:
    ``patches/optimizer_graph.py`` (optimizer lrs) and ``adapter/compiled_step.py`` (BatchNorm statistics) make the
    step Cell own all it updates (``docs/compile_cache_bug/repro.py``).
    Steps that cannot be checked (random draws, recomputed inputs, GradScaler, DDP) are compiled outside the cache.
    Location: ``$ADAPTER_COMPILE_CACHE_DIR/<hash>``, else ``$XDG_CACHE_HOME/mindtorch_adapter/compile/<hash>``
    (default ``~/.cache/...``); least recently used folders are evicted beyond 2 GiB or 64 folders.
    """
    from adapter import compile_cache
    return compile_cache.enable(script, script_args, dict(options or {}))


def run_script(script: str, script_args: List[str], mode: str = "pynative") -> int:
    """Run ``script`` as ``__main__`` with ``script_args``; return its exit code.

    ``mode`` is ``pynative`` (run the file as it is, every step on the eager bridge) or ``auto``/``graph`` (rewrite
    its training steps so that they are compiled, ``adapter/compiled_step.py``).
    """
    path = os.path.abspath(script)
    sys.argv = [script] + list(script_args)
    sys.path[0] = os.path.dirname(path)
    try:
        if mode == "pynative":
            runpy.run_path(path, run_name="__main__")
        else:
            from adapter.script_loader import run_main
            run_main(path)
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:  # the user's error: report it like Python would, pointing at their code
        sys.stderr.write(_user_traceback(exc))
        from adapter.migration_report import missing_api_hint
        hint = missing_api_hint(exc, path)
        if hint:
            sys.stderr.write("run.py: MindTorch may lack a torch API this script uses (all findings: run.py --report)\n"
                             + hint)
        from adapter.migration_report import failure_hint
        risks = failure_hint(exc, path)
        if risks:
            sys.stderr.write(risks)
        return 1
    return 0


def print_explain() -> None:
    """``--explain``'s block: one per process that ran the script's work. A process whose mp.spawn children did the
    training (and explained it) and that ran no step itself prints none; a child's block names it."""
    from adapter import compiled_step, distributed
    if distributed.spawned_children() and not compiled_step.steps_run():
        return
    lines = compiled_step.explain_lines() or ["no training step (x.backward() after its forward in the same "
                                              "block) was found; every backward() ran on the eager bridge"]
    label = distributed.process_label()
    print(f"run.py --explain{f' ({label})' if label else ''}:", *lines, sep="\n  ", file=sys.stderr)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("convert", "export"):  # run.py convert|export ... (adapter/convert.py, adapter/export.py)
        import importlib
        return importlib.import_module(f"adapter.{argv[0]}").main(argv[1:])
    if argv and argv[0] == "conformance":  # run.py conformance ... (adapter/conformance/cli.py)
        from adapter.conformance import cli
        return cli.main(argv[1:])
    ours, script, script_args = split_argv(argv)
    from adapter import distributed
    # a child of run.py's launcher or mp.spawn records its script's exit code there (not inherited further)
    exit_file = os.environ.pop(distributed.EXIT_FILE_ENV, None)
    parser = build_parser()
    opts = parser.parse_args(ours + (["--original", script] if script is not None else []))
    if opts.list_patches:
        list_patches()
        return 0
    if opts.original is None:
        parser.error("missing the script to run: python run.py --original SCRIPT [script args...]")
    if not os.path.isfile(opts.original):
        parser.error(f"--original {opts.original}: no such file")
    if opts.verbose:
        from patches.log_noise import VERBOSE_ENV
        os.environ[VERBOSE_ENV] = "1"  # this process's children (workers, mp.spawn, scheduler) too
    if opts.nproc_per_node is not None:  # torchrun-style: start the scheduler and workers, watch them
        return distributed.launch(opts, ours, script_args, parser)
    if opts.detect_anomaly:
        if opts.mode == "graph":
            parser.error("--detect-anomaly checks every module call in PyNative; it cannot be used with --mode graph")
        opts.mode = "pynative"  # the script runs as written, every step on the eager bridge
    setup_mindspore(opts.device, opts.verbose)
    if opts.report:
        from adapter.migration_report import build_report, format_report
        print(format_report(build_report(opts.original)), end="")
        return 0
    from adapter import compiled_step
    compiled_step.set_mode(opts.mode)
    from patches import amp
    amp.set_level(opts.amp_level)
    if opts.detect_anomaly:
        from patches import anomaly
        anomaly.enable()
    if opts.mode != "pynative" and opts.compile_cache:
        enable_compile_cache(opts.original, script_args,
                             {"device": opts.device, "mode": opts.mode, "amp_level": opts.amp_level})
    if opts.compare or opts.reference_record:
        if opts.compare_steps < 1:
            parser.error("--compare-steps must be at least 1")
        from adapter.parity import compare
        if opts.compare_seeds:
            if opts.compare_seeds < 2 or opts.reference_record:
                parser.error("--compare-seeds needs N >= 2, and runs PyTorch itself (no --reference-record)")
            return compare.main_seeds(opts.original, script_args, opts.compare_steps, opts.compare_out,
                                      opts.compare_seeds, opts.reference_python, ["--mode", opts.mode])
        return compare.main(opts.original, script_args, opts.compare_steps, opts.compare_out, opts.mode,
                            opts.reference_python, opts.reference_record, not opts.no_noise_floor)
    try:
        code = run_script(opts.original, script_args, opts.mode)
    finally:
        if opts.explain:
            print_explain()
    distributed.record_exit(exit_file, code)  # before the interpreter's (and MindSpore's) exit-time teardown
    return code
