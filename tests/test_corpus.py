"""The pytorch/examples corpus (a checkout at commit 77f55b9 named by ``CORPUS_EXAMPLES``; ``make corpus
EXAMPLES=DIR``; not in this repository: third-party code) through ``run.py``, judged against golden
records made under real PyTorch 2.13 (``tests/fixtures/corpus/``, ``scripts/record_corpus_goldens.py``).

Each test runs its script as a user would: a subprocess ``run.py --explain [opts] --original SCRIPT ARGS``, its working
folder beside data staged from the real Fashion-MNIST (``scripts/stage_corpus_data.py``), with the script's default
arguments plus size-reducing ones only (``scripts/corpus_specs.py``). It asserts:

* the exit code PyTorch gives (0, or PyTorch's own error at the same file:line);
* where inputs and weights can be made identical on both sides (``Spec.compare``: numpy-drawn initial weights and
  shuffling, dropout off; ``app/tools/parity``), the first losses within rel. diff 1e-4 of PyTorch's and the same data
  (batch checksums);
* the script's own metrics within PyTorch's spread over 5 seeds: the 99 % prediction interval of one more run,
  ``mean +- t(0.995, 4) * s * sqrt(6/5)`` = ``mean +- 5.04 s`` (``corpus_specs.tolerance_band``: one more PyTorch
  run leaves [min, max] of 5 a third of the time), at least a floor per metric (one test image; metrics equal for
  all seeds); over 20 seeds for mnist_forward_forward (``mean +- 2.93 s``), which runs seeded here (``run.py --seed
  1``, ``corpus_specs.Spec.seed_opts``): one fixed draw per run, not a new one;
* ``--explain``: every training step site of the script compiled (what should hold once issue 13's fixes are in);
* no MindSpore log line (``[INFO] PS(...)``, ``[WARNING] ME(...)``) in the output, one ``--explain`` block per process.

Plus the issue's targets: regression converges (loss < 1e-3) within 2x PyTorch's batch count; vae's printed
per-batch losses within 1 % of ``--mode pynative``'s; dcgan's D and G losses move as PyTorch's.
"""
import json
import os
import re
import signal
import subprocess
import sys

import pytest

from support import ROOT, command, run_py

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import corpus_specs as cs  # noqa: E402
import stage_corpus_data as staging  # noqa: E402

# every test here runs a pytorch/examples script (tens of seconds to minutes each): `make test-quick` skips them
pytestmark = pytest.mark.slow
# the scripts are not in this repository: each test but the staging one needs a checkout
needs_examples = pytest.mark.skipif(not os.path.isdir(os.environ.get(cs.EXAMPLES_ENV) or "/nonexistent"), reason=(
    "needs a pytorch/examples checkout (commit 77f55b9): make corpus EXAMPLES=DIR, or CORPUS_EXAMPLES=DIR; "
    "our own scripts for the same idioms: tests/test_idioms.py"))
# the corpus smoke tests that CI's second MindSpore runs too (pytest.ini: stack): whole scripts, compiled end to end
stack_smoke = pytest.mark.stack
# each test is a whole script run (the module fixture only stages a few MB): spread them over the xdist workers
XDIST_PER_TEST = True

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "corpus")
LOSS_REL_TOL = 1e-4
MS_LOG_LINE = re.compile(r"^\[(INFO|WARNING|ERROR|DEBUG)\] [A-Z]+\(\d+,", re.MULTILINE)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """Data staged once for this module (a few MB, < 1 s)."""
    return staging.stage(str(tmp_path_factory.mktemp("corpus")))


def golden(name):
    with open(os.path.join(FIXTURES, f"{name}.json")) as f:
        return json.load(f)


def _script(path):
    return cs.script_path(path)


def run_here(spec, run_dir, opts=(), args=None, timeout=None, explain=True):
    """``run.py [--explain] [spec.run_opts] [opts] --original SCRIPT ARGS`` in ``run_dir``; the CompletedProcess.
    The spec's ``pre`` scripts run first, the same way. A run past its timeout fails the test (not a hang).
    Python's faulthandler is on and stdout unbuffered: a run killed by a signal (test_ddp_single_gpu once ended with
    -11 and empty output in a full-suite run, not reproduced in 40 runs) shows how far the script got and every
    thread's Python stack at the crash. Not for a spec whose processes print to one stdout (``spec.lines``: the
    distributed ones): unbuffered, ``print`` writes its text and its newline in two ``write`` calls, and two ranks'
    lines interleave ("...Exiting.Unable to locate...Exiting." then two newlines: test_ddp_example in a CI run);
    buffered, each rank writes its few lines in one call at exit, as in the PyTorch runs the goldens come from.
    A script without a seed option runs with ``run.py --seed 1`` where its goldens were seeded
    (``Spec.seed_opts``), so that its metrics are one fixed draw, not a new one each run."""
    env = dict(PYTHONFAULTHANDLER="1", **spec.env)
    unset = ("PYTHONUNBUFFERED",) if spec.lines else ()  # nor inherited from the test's own environment
    if not unset:
        env["PYTHONUNBUFFERED"] = "1"
    for pre, pre_args in spec.pre:
        proc = run_py("--original", _script(pre), *pre_args, cwd=run_dir, env=env, unset=unset)
        assert proc.returncode == 0, f"{pre} failed:\n{proc.stderr[-3000:]}"
    run_args = (["--explain"] if explain else []) + list(spec.run_opts) + spec.seed_opts(1) + list(opts) \
        + ["--original", _script(spec.script)] + list(spec.script_args(1) if args is None else args)
    try:
        return run_py(*run_args, cwd=run_dir, env=env, unset=unset, timeout=timeout or spec.timeout)
    except subprocess.TimeoutExpired as exc:
        cmd = command(*run_args)
        out = (exc.stdout or b"")[-2000:]
        pytest.fail(f"{spec.name}: still running after {exc.timeout} s: {' '.join(cmd)}\nlast output:\n"
                    f"{out.decode(errors='replace') if isinstance(out, bytes) else out}")


def fresh(base, name):
    run = staging.make_run_dir(base, f"run_{name}")
    os.makedirs(os.path.join(run, "results"))  # vae saves its images there (upstream ships vae/results/)
    return run


def tail(proc, n=3000):
    return f"\n--- stdout ---\n{proc.stdout[-n:]}\n--- stderr ---\n{proc.stderr[-n:]}"


def check_exit(spec, proc):
    killed = f" (killed by {signal.Signals(-proc.returncode).name})" if proc.returncode < 0 else ""
    assert proc.returncode == spec.expect_exit, f"{spec.name}: exit {proc.returncode}{killed}" + tail(proc)


def check_explain(spec, proc, processes=1):
    """Every site in ``spec.explain`` reported compiled (in each of ``processes`` --explain blocks), one block per
    process."""
    text = proc.stderr
    blocks = re.findall(r"^run\.py --explain( \(rank \d+\))?:$", text, re.MULTILINE)  # a rank's block names it
    assert len(blocks) == processes, f"--explain blocks: expected {processes}" + tail(proc)
    for site in spec.explain:
        lines = [line for line in text.splitlines() if f"{site}: backward()" in line]
        assert len(lines) == processes, f"{site}: no --explain line" + tail(proc)
        for line in lines:
            assert "— compiled" in line, f"{site} is not compiled: {line.strip()}"


def check_quiet(proc):
    """No MindSpore log line reaches the user (issue 13: only with --verbose)."""
    found = MS_LOG_LINE.findall(proc.stdout + proc.stderr)
    assert not found, "MindSpore log lines in the output:\n" + "\n".join(
        line for line in (proc.stdout + proc.stderr).splitlines() if MS_LOG_LINE.match(line))[:2000]


def check_metrics(spec, proc, names=None):
    """The script's metrics within PyTorch's band (module docstring)."""
    g = golden(spec.name)
    ours = cs.parse_metrics(spec, proc.stdout)
    for name, entry in g["metrics"].items():
        if names is not None and name not in names:
            continue
        lo, hi = entry["band"]
        assert ours[name] is not None, f"{spec.name}: metric {name} not printed" + tail(proc)
        assert lo <= ours[name] <= hi, (f"{spec.name}: {name} = {ours[name]:.6g}, PyTorch over seeds "
                                        f"{entry['values']} -> band [{lo:.6g}, {hi:.6g}]")
    return ours


def check_compare(spec, base):
    """The first ``spec.compare.first_losses`` losses within LOSS_REL_TOL of PyTorch's, from the same numpy-drawn
    weights and the same data (batch checksums equal), compiled as usual (``run.py --reference-record``)."""
    run = fresh(base, f"{spec.name}_compare")
    record = os.path.join(FIXTURES, f"{spec.name}.compare")
    out = os.path.join(run, "parity")
    proc = run_here(spec, run, opts=["--reference-record", record, "--compare-steps", str(spec.compare.steps),
                                     "--compare-out", out], explain=False)
    report = os.path.join(out, "report.json")
    assert os.path.exists(report), f"{spec.name}: the comparison did not complete" + tail(proc)
    with open(report) as f:
        r = json.load(f)
    assert r["first_different_batch"] is None, f"{spec.name}: the data differs from PyTorch's from batch " \
                                               f"{r['first_different_batch']} on"
    n = spec.compare.first_losses
    assert len(r["losses_mindspore"]) >= n, f"{spec.name}: {len(r['losses_mindspore'])} losses recorded" + tail(proc)
    rel = r["loss_rel_diff"][:n]
    assert max(rel) <= LOSS_REL_TOL, (f"{spec.name}: first losses PyTorch {r['losses_torch'][:n]}, here "
                                      f"{r['losses_mindspore'][:n]}: rel. diff {rel}")
    return r


def _plain(spec_name, base, **kw):
    """The common test: run, exit code, --explain, quiet output, metrics (and the exact comparison)."""
    spec = cs.SPECS[spec_name]
    proc = run_here(spec, fresh(base, spec_name), **kw)
    check_exit(spec, proc)
    check_explain(spec, proc)
    check_quiet(proc)
    ours = check_metrics(spec, proc)
    if spec.compare:
        check_compare(spec, base)
    return spec, proc, ours


def test_stage_corpus_data_is_idempotent_and_real(base):
    """The staged MNIST files are Fashion-MNIST's first images (the same bytes), and a second staging writes nothing."""
    raw = os.path.join(base, "data", "MNIST", "raw")
    images = staging.read_idx(os.path.join(raw, "train-images-idx3-ubyte"))
    source = staging.load_fashion_mnist()
    assert images.shape == (staging.DEFAULT_SIZES["train"], 28, 28)
    assert (images == source["train_images"][:len(images)]).all()
    stamp = os.path.getmtime(os.path.join(base, staging.STAMP))
    staging.stage(base)
    assert os.path.getmtime(os.path.join(base, staging.STAMP)) == stamp
    classes = sorted(os.listdir(os.path.join(base, "imagenet", "train")))
    assert len(classes) == 10 and all(len(os.listdir(os.path.join(base, "imagenet", "train", c))) == 4 for c in classes)


@needs_examples
@stack_smoke
def test_mnist(base):
    _plain("mnist", base)


@needs_examples
@stack_smoke
def test_vae_printed_losses_match_pynative(base):
    """Compiled: the per-batch losses printed after optimizer.step() (loss.item() / len(data)) equal the eager
    bridge's within 1 % (the issue saw 0.0025, 0.0009, 0.0 ... instead of 431, 376 ...)."""
    spec, proc, _ = _plain("vae", base)
    eager = run_here(spec, fresh(base, "vae_pynative"), opts=["--mode", "pynative"], explain=False)
    check_exit(spec, eager)
    ours, ref = cs.parse_losses(spec, proc.stdout), cs.parse_losses(spec, eager.stdout)
    assert len(ours) == len(ref) == 16, tail(proc)
    bad = [(i, a, b) for i, (a, b) in enumerate(zip(ours, ref)) if abs(a - b) > 0.01 * abs(b)]
    assert not bad, f"vae: printed losses (batch, compiled, pynative) differ by > 1 %: {bad}"


@needs_examples
def test_dcgan_trains_both_models_as_pytorch(base):
    """Two models (netD, netG) whose parameter names clash, G trained through ``fake`` made in an earlier step site:
    both losses move as PyTorch's (first 4 / last 8 iterations within PyTorch's band); D's first loss exact."""
    _plain("dcgan", base)


@needs_examples
def test_dcgan_fake_data(base):
    _plain("dcgan_fake", base)


@needs_examples
@stack_smoke
def test_regression_converges(base):
    """``param.data.add_(-0.1 * param.grad)``: converges (loss < 1e-3, the script's stop) within 2x the largest batch
    count of PyTorch's 8 runs (no seed, and seeds 1-7)."""
    spec = cs.SPECS["regression"]
    proc = run_here(spec, fresh(base, "regression"))
    check_exit(spec, proc)
    check_explain(spec, proc)
    check_quiet(proc)
    ours = cs.parse_metrics(spec, proc.stdout)
    batches = [r["metrics"]["batches"] for r in golden("regression")["seeds"].values()]
    assert ours["loss"] is not None and ours["loss"] < 1e-3, tail(proc)
    assert ours["batches"] <= 2 * max(batches), f"regression: {ours['batches']} batches, PyTorch {batches}"


@needs_examples
def test_imagenet(base):
    _plain("imagenet", base)


@needs_examples
def test_siamese_network_fails_as_pytorch(base):
    """``np.array(..., copy=None)`` (main.py:108) needs numpy >= 2; PyTorch with this environment's numpy 1.26 (which
    MindSpore 2.5 requires) fails there the same way. The adapter must not hide or change that failure.
    Behind it (checked with line 108 as ``np.asarray(...)``, not committed): both sides train one step and test;
    the printed test loss is 0.0500 on both (seeds 1-3; it was 0.0138 here before patches/bce.py: MindSpore's
    BCE clamps at 1e-12, PyTorch's logs at -100, and every test output saturates)."""
    spec = cs.SPECS["siamese_network"]
    proc = run_here(spec, fresh(base, "siamese"))
    check_exit(spec, proc)
    name, where = cs.parse_error(proc.stderr, spec.script)
    assert [name, where] == golden(spec.name)["seeds"]["1"]["error"] == list(spec.expect_error), tail(proc)
    assert f"run.py: the script failed at {cs.CORPUS}/{spec.script}" in proc.stderr or \
           f"{spec.script}:108: ValueError" in proc.stderr, tail(proc)


@needs_examples
@stack_smoke
def test_super_resolution(base):
    _plain("super_resolution", base)


@needs_examples
def test_mnist_forward_forward(base):
    """Exit code, quiet output and metrics as PyTorch's; the step site at main.py:81 compiles for both layers. Each
    Layer keeps its own optimizer as ``self.opt`` (a plain attribute since ``patches/module_attributes.py``; before, a
    MindSpore sub-cell renaming the layer's parameters ``opt.weight``), and the site trains one layer after the other:
    each layer gets its own reference step and graph (``adapter/compiled_step.py``, bindings). Before: the second
    layer's compiled call clashed on ``opt.weight`` and the site ran eagerly."""
    spec = cs.SPECS["mnist_forward_forward"]
    proc = run_here(spec, fresh(base, "mnist_forward_forward"))
    check_exit(spec, proc)
    check_quiet(proc)
    check_metrics(spec, proc)
    check_explain(spec, proc)
    assert "main.py:81: backward() of loss — compiled (graph mode, fused with optimizer.step() at line 82); " \
           "2 graph(s) for 2 sets of models" in proc.stderr, tail(proc)


@needs_examples
def test_mnist_rnn(base):
    _plain("mnist_rnn", base)


@needs_examples
def test_time_sequence_prediction_data_and_refusal(base):
    """generate_sine_wave.py writes the same array as under PyTorch; train.py's ``torch.load`` of it is refused as
    PyTorch >= 2.6 refuses it (weights_only=True: a numpy global), at train.py:47."""
    spec = cs.SPECS["time_sequence_prediction_refuses"]
    run = fresh(base, "tsp_refuses")
    proc = run_here(spec, run)
    check_exit(spec, proc)
    name, where = cs.parse_error(proc.stderr, spec.script)
    g = golden(spec.name)["seeds"]["1"]
    assert g["error"] == ["UnpicklingError", "time_sequence_prediction/train.py:47"]
    assert [name, where] == g["error"], tail(proc)
    assert "WeightsUnpickler error: Unsupported global: GLOBAL numpy.core.multiarray._reconstruct was not an " \
           "allowed global by default." in proc.stderr, tail(proc)  # PyTorch's text (its stderr_tail: the end)
    assert g["stderr_tail"] in proc.stderr, tail(proc)
    import numpy as np
    import torch
    data = torch.load(os.path.join(run, "traindata.pt"), weights_only=False)
    assert isinstance(data, np.ndarray) and data.dtype == np.float64
    got = [float(np.sum(data, dtype=np.float64)), float(np.sum(np.square(data), dtype=np.float64)), *data.shape]
    assert got == g["traindata"]


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("ADAPTER_LONG_TESTS"), reason="15-20 min here: LBFGS's 20 closures, each "
                    "999 LSTMCell steps in float64 on PyNative (~30-60 s a closure; the forward's loop does not compile); "
                    "set ADAPTER_LONG_TESTS=1 to run it")
@needs_examples
def test_time_sequence_prediction_trains(base):
    """With TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 (PyTorch's documented switch): LBFGS, 1 step (up to 20 closure
    evaluations over 999 time steps, float64); the first closure's loss exact from the same weights."""
    _plain("time_sequence_prediction", base)


def _check_lines(spec, proc):
    assert cs.parse_lines(spec, proc.stdout) == golden(spec.name)["seeds"]["1"]["lines"], \
        f"{spec.name}: stdout lines are not PyTorch's" + tail(proc)


@needs_examples
def test_ddp_multigpu_torchrun(base):
    """``run.py --nproc-per-node 2`` (torchrun): 2 ranks x 32 steps, snapshot saved by rank 0, both compiled."""
    spec = cs.SPECS["ddp_multigpu_torchrun"]
    run = fresh(base, "ddp_torchrun")
    proc = run_here(spec, run)
    check_exit(spec, proc)
    check_explain(spec, proc, processes=2)
    check_quiet(proc)
    _check_lines(spec, proc)
    import torch
    snap = torch.load(os.path.join(run, "snapshot.pt"))
    assert snap["EPOCHS_RUN"] == 0 and tuple(snap["MODEL_STATE"]["weight"].shape) == (1, 20)


@needs_examples
def test_ddp_multigpu_spawn(base):
    """multigpu.py spawns ``torch.cuda.device_count()`` processes: 0 on a CPU machine, in PyTorch too (no output)."""
    spec = cs.SPECS["ddp_multigpu_spawn"]
    proc = run_here(spec, fresh(base, "ddp_spawn"))
    check_exit(spec, proc)
    check_explain(spec, proc)  # one block: the parent's
    check_quiet(proc)
    _check_lines(spec, proc)


@needs_examples
def test_ddp_single_gpu(base):
    spec = cs.SPECS["ddp_single_gpu"]
    proc = run_here(spec, fresh(base, "ddp_single"))
    check_exit(spec, proc)
    check_explain(spec, proc)
    check_quiet(proc)
    _check_lines(spec, proc)


@needs_examples
def test_ddp_example(base):
    """ddp/example.py under ``--nproc-per-node 2``: on a CPU machine ``torch.accelerator`` finds no GPU, so each rank
    prints "Unable to locate sufficient 2 gpus" and exits 0, as under torchrun with PyTorch."""
    spec = cs.SPECS["ddp_example"]
    proc = run_here(spec, fresh(base, "ddp_example"))
    check_exit(spec, proc)
    check_explain(spec, proc, processes=2)
    check_quiet(proc)
    _check_lines(spec, proc)


def test_gpt(base):
    """``pt_original/train_gpt.py`` (ours; issue 31 section 6), shrunk (``corpus_specs.GPT_ARGS``): a character GPT
    with its embeddings in an ``nn.ModuleDict``, tied weights, SDPA causal attention, AdamW with two groups,
    GradScaler (disabled: a pass-through), clipping, 2 micro-batches per step, a hand-set cosine lr, evaluation under
    no_grad, a checkpoint, top-k sampling. One run: PyTorch's exit, the step compiled and no line saying anything runs
    in PyNative (evaluation and sampling forwards included), the losses and evaluations in PyTorch's 5-seed band, the
    sample printed and the checkpoint written. A second run from the same numpy-drawn weights and batches: the first
    2 steps' 4 micro-batch losses within rel. 1e-5 of PyTorch's (the issue's target).
    Needs h-syntax's ModuleDict attribute access (``self.transformer.drop``; issue 31 section 1) to compile on 2.10,
    and h-bridge's transpose backward on 2.5-dev (``Unsupported op [TransposeExt] on CPU`` in the eager reference
    step): on main without them it fails at ``check_explain`` (2.10) or ``check_exit`` (2.5-dev)."""
    spec = cs.SPECS["gpt"]
    run = fresh(base, "gpt")
    proc = run_here(spec, run)
    check_exit(spec, proc)
    check_explain(spec, proc)
    check_quiet(proc)
    eager = [line for line in proc.stderr.splitlines() if "PyNative" in line or "not compiled" in line]
    assert not eager, "gpt: parts run eagerly:\n" + "\n".join(eager)
    check_metrics(spec, proc)
    assert re.search(r"^sample: '.+'$", proc.stdout, re.MULTILINE), tail(proc)
    assert os.path.isfile(os.path.join(run, "ckpt", "ckpt.pt")), tail(proc)
    r = check_compare(spec, base)
    assert max(r["loss_rel_diff"][:spec.compare.first_losses]) <= 1e-5, r["loss_rel_diff"]
