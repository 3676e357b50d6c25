"""``run.py``'s command line: parse our options, then dispatch (issue 16: this module is the command line only).

Order matters and is the whole point of a run:

1. parse our own options (everything before ``--original FILE``; everything after FILE belongs to the script:
   ``adapter/script_run.py`` ``split_argv``); ``--nproc-per-node`` hands over to ``adapter/distributed`` (workers);
2. configure MindSpore (device target, PyNative mode) before any tensor exists, install the pre-import patches,
   enable MindTorch's import hook (``mindtorch.tools.mstorch_enable``) so that ``import torch`` / ``torchvision``
   resolve to MindTorch, import it, install the post-import patches (``app/bootstrap.py`` ``setup_mindspore``);
3. make ``sys.argv``, ``sys.path[0]`` and ``__file__`` what ``python FILE args...`` would have given, and run the
   script as ``__main__`` (``adapter/script_run.py`` ``run_script``);
4. exit with the script's exit code; on an exception, print the traceback without our frames and end with the
   user's ``file:line``.

Subcommands: ``run.py convert|export`` (``app/tools/convert.py``, ``app/tools/export.py``), ``run.py conformance``
(``app/tools/conformance/cli.py``), ``run.py corpus`` (``app/tools/corpus.py``). No other adapter module imports this
one. Modules that import MindSpore are
imported inside the functions that need them, after :func:`app.bootstrap.setup_mindspore`.
"""
from __future__ import annotations

from adapter.startup_marks import mark as _mark

_mark("launcher")
import argparse
import os
import sys
from typing import List, Optional

from adapter import amp_state, compile_cache, distributed
from app.bootstrap import VERBOSE_ENV, setup_mindspore
# script_run.run_script is looked up at each run: patches/spawn.py replaces it in an mp.spawn child
from adapter import hooks, script_run
from adapter.script_run import split_argv

EXIT_USAGE = 2


def failure_hints(exc: BaseException, script: str) -> str:
    """What ``adapter/script_run.py`` prints after the user's traceback (handed down: ``adapter/hooks.py``
    ``failure_hints``): a torch API MindTorch may lack, and the known risks at the traceback's lines, from
    ``app/tools/migration_report.py``; ``""`` for nothing."""
    from app.tools.migration_report import failure_hint, missing_api_hint  # deferred: only on a failure
    text = ""
    hint = missing_api_hint(exc, script)
    if hint:
        text += "run.py: MindTorch may lack a torch API this script uses (all findings: run.py --report)\n" + hint
    return text + (failure_hint(exc, script) or "")


hooks.provide("failure_hints", failure_hints)


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
    parser.add_argument("--explain-json", nargs="?", const="explain.json", metavar="PATH",
                        help="at exit, write --explain's content as JSON to PATH (default explain.json; '-': stdout; "
                             "a rank's or spawned process's file gets its name before the extension), with each "
                             "fallback's kind (docs/explain_schema.json, docs/fallback_kinds.md)")
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
    parser.add_argument("--seed", type=int, metavar="S",
                        help="torch.manual_seed(S), random.seed(S) and numpy.random.seed(S) before the script runs "
                             "(each rank's, under --nproc-per-node): a reproducible run of a script that seeds "
                             "nothing itself, as scripts/run_under_torch.py --torch-seed S does under PyTorch. "
                             "Default: no seed, as 'python SCRIPT' (PyTorch's default generator starts from a random "
                             "seed in each process)")
    parser.add_argument("--report", action="store_true",
                        help="print what the script needs from this adapter (torch APIs MindTorch lacks, calls our "
                             "patches handle, graph-mode blockers, each with file:line) by reading its code; "
                             "the script is not run")
    parity = parser.add_argument_group("parity with real PyTorch (app/tools/parity)")
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
    distributed.add_arguments(parser)  # --nproc-per-node, --nnodes, --node-rank, --master-addr, --master-port
    return parser


def list_patches() -> None:
    from patches import listing  # the registry's listing, generated from the patches' declarations
    sys.stdout.write(listing.text())


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
    return compile_cache.enable(script, script_args, dict(options or {}))


def print_explain(text: bool = True, json_path: Optional[str] = None) -> None:
    """``--explain``'s block (``text``) and ``--explain-json``'s file (``json_path``), from one
    ``adapter.diagnostics.ExplainOutput``: one per process that ran the script's work. A process whose mp.spawn
    children did the training (and explained it) and that ran no step itself gives none; a child's names it."""
    from adapter import compiled_step, diagnostics  # deferred: compiled_step imports MindSpore
    if distributed.spawned_children() and not compiled_step.steps_run():
        return
    output = compiled_step.explain_output(distributed.process_label())
    if text:
        print(output.format(), file=sys.stderr)
    if json_path:
        diagnostics.write_json(output, json_path)


def seed_all(seed: int) -> None:
    """``run.py --seed S``: seed the three generators a script draws from, as ``scripts/run_under_torch.py
    --torch-seed S`` does under PyTorch: ``torch.manual_seed`` (MindTorch's: MindSpore's global seed, which its
    random ops and parameter initialisers derive their seeds from), ``random.seed`` and ``numpy.random.seed``. Two
    runs with the same S draw the same numbers here (not the numbers PyTorch draws for S: another generator).
    ``seed``: 0 to 2**32 - 1 (``numpy.random.seed``'s range; ``main`` checks it)."""
    import random

    import numpy as np
    import torch  # MindTorch (after setup_mindspore)
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("convert", "export"):  # run.py convert|export ... (app/tools/convert.py, export.py)
        import importlib  # the subcommand's module only (they import MindSpore)
        return importlib.import_module(f"app.tools.{argv[0]}").main(argv[1:])
    if argv and argv[0] == "corpus":  # run.py corpus ... (app/tools/corpus.py: scripts vs PyTorch goldens)
        from app.tools import corpus  # deferred: imports no MindSpore itself (it runs run.py in subprocesses)
        return corpus.main(argv[1:])
    if argv and argv[0] == "conformance":  # run.py conformance ... (app/tools/conformance/cli.py)
        from app.tools.conformance import cli  # deferred: the subcommand's modules only
        return cli.main(argv[1:])
    ours, script, script_args = split_argv(argv)
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
    if opts.seed is not None and not 0 <= opts.seed < 2 ** 32:
        parser.error(f"--seed {opts.seed}: must be in [0, 2**32 - 1] (numpy.random.seed's range)")
    if opts.verbose:
        os.environ[VERBOSE_ENV] = "1"  # this process's children (workers, mp.spawn, scheduler) too
    if opts.nproc_per_node is not None:  # torchrun-style: start the scheduler and workers, watch them
        return distributed.launch(opts, ours, script_args, parser)
    if opts.detect_anomaly:
        if opts.mode == "graph":
            parser.error("--detect-anomaly checks every module call in PyNative; it cannot be used with --mode graph")
        opts.mode = "pynative"  # the script runs as written, every step on the eager bridge
    setup_mindspore(opts.device, opts.verbose)
    if opts.report:
        from app.tools.migration_report import build_report, format_report  # deferred: only --report needs it
        print(format_report(build_report(opts.original)), end="")
        return 0
    from adapter import compiled_step  # deferred: imports MindSpore
    compiled_step.set_mode(opts.mode)
    amp_state.set_level(opts.amp_level)
    if opts.detect_anomaly:
        import torch  # MindTorch: set_detect_anomaly is patches/anomaly.py's (MindTorch has none)
        if not hasattr(torch.autograd, "set_detect_anomaly"):
            parser.error("--detect-anomaly needs the 'anomaly' patch, which ADAPTER_DISABLE_PATCHES turns off")
        torch.autograd.set_detect_anomaly(True)  # for the whole run
    if opts.mode != "pynative" and opts.compile_cache:
        enable_compile_cache(opts.original, script_args,
                             {"device": opts.device, "mode": opts.mode, "amp_level": opts.amp_level})
    if opts.seed is not None:
        seed_all(opts.seed)
    if opts.compare or opts.reference_record:
        if opts.compare_steps < 1:
            parser.error("--compare-steps must be at least 1")
        from app.tools.parity import compare  # deferred: only --compare needs it
        if opts.compare_seeds:
            if opts.compare_seeds < 2 or opts.reference_record:
                parser.error("--compare-seeds needs N >= 2, and runs PyTorch itself (no --reference-record)")
            return compare.main_seeds(opts.original, script_args, opts.compare_steps, opts.compare_out,
                                      opts.compare_seeds, opts.reference_python, ["--mode", opts.mode])
        return compare.main(opts.original, script_args, opts.compare_steps, opts.compare_out, opts.mode,
                            opts.reference_python, opts.reference_record, not opts.no_noise_floor)
    try:
        code = script_run.run_script(opts.original, script_args, opts.mode)
    finally:
        if opts.explain or opts.explain_json:
            print_explain(opts.explain, opts.explain_json)
    distributed.record_exit(exit_file, code)  # before the interpreter's (and MindSpore's) exit-time teardown
    return code
