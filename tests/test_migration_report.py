"""``run.py --report`` predicts the failures seen on the unchanged pytorch/examples corpus (issue 13 item 5).

Each test runs the report (``app/tools/migration_report.py`` + ``app/tools/report_risks.py``; AST only, nothing of the
script runs) on a script of ``tests/fixtures/migration_report/`` (ours: each shows, at known lines, an idiom on which
a pytorch/examples script failed or went silently wrong before the fixes, ``docs/facts.md``, "The pytorch/examples
corpus before issue 13"; the third-party scripts left the repository in issue 32) and asserts the finding at its
``file:line``: regression's ``param.data.add_``, vae's ``loss.item()`` after ``optimizer.step()``, dcgan's two
models, its ``fake`` reused by a later step, its DataLoader workers and FakeData, the ``torch.accelerator`` calls of
mnist, vae, imagenet and ddp_example, imagenet's ``--dummy`` FakeData, mnist_rnn's ``Dropout2d``, forward_forward's
``range`` index, ``self.forward(x)`` and ``Lambda`` after ``ToTensor``, siamese's ``.data.fill_`` and
``np.array(copy=None)``, time_sequence's LBFGS, float64 and ``torch.load``.

Whether a finding says "handled by ..." depends on the live, patched process, so the fixes that are on this branch
are asserted as handled, and the handled/not-handled decision itself is tested by disabling a patch or making a
live object look patched (the finding's line stays the same either way).
"""
import os
import sys
import textwrap

import pytest

import patches
from app.tools import migration_report as mr
from app.tools import report_risks

from support import ROOT, run_py

SCRIPTS_DIR = os.path.join(ROOT, "tests", "fixtures", "migration_report")
SCRIPTS = ["regression.py", "vae.py", "dcgan.py", "mnist.py", "imagenet.py", "mnist_rnn.py", "forward_forward.py",
           "siamese.py", "time_sequence.py", "ddp_example.py"]


@pytest.fixture(scope="module")
def reports():
    return {name: mr.build_report(os.path.join(SCRIPTS_DIR, name)) for name in SCRIPTS}


def risks(report, key):
    """[(line, what)] of the report's findings of kind ``key`` (all in the script itself here)."""
    return [(f.line, f.name) for k, f in zip(report.risk_keys, report.risks) if k == key]


def note(report, key):
    notes = {f.note for k, f in zip(report.risk_keys, report.risks) if k == key}
    assert len(notes) == 1, notes
    return notes.pop()


def handled_by(report, key, *files):
    text = note(report, key)
    assert text.startswith(f"{report_risks.RISKS[key].title}: handled by {', '.join(files)}: "), text
    return text


def test_regression_write_through_data(reports):
    report = reports["regression.py"]
    assert risks(report, "data_write") == [(34, "param.data.add_()")]
    handled_by(report, "data_write", "patches/parameter_methods.py", "patches/inplace.py")


def test_siamese_data_fill_and_numpy2_copy(reports):
    report = reports["siamese.py"]
    assert risks(report, "data_write") == [(21, "m.bias.data.fill_()")]  # not `self.data = ...` (line 29)
    assert risks(report, "numpy_copy_none") == [(42, "np.array(..., copy=None)")]
    import numpy
    assert note(report, "numpy_copy_none").startswith(
        f"np.array/np.asarray(..., copy=None): no fix: copy=None needs numpy >= 2; this environment has numpy "
        f"{numpy.__version__}")


def test_vae_value_read_after_the_compiled_step(reports):
    report = reports["vae.py"]
    # line 39's loss.item() comes before optimizer.step() (it was right); line 41's after (in pytorch/examples' vae
    # this read printed 0.0025)
    assert risks(report, "stale_output") == [
        (41, "loss (from the compiled step of line 38, read after optimizer.step() (line 40))")]
    handled_by(report, "stale_output", "adapter/graph_semantics.py")


def test_dcgan_two_models_fake_reused_workers_fake_data(reports):
    report = reports["dcgan.py"]
    assert risks(report, "several_models") == [
        (37, "netG = Generator(...)"), (38, "netD = Discriminator(...)"),
        (40, "optimizerD = torch.optim.Adam(...)"), (41, "optimizerG = torch.optim.Adam(...)")]
    assert "get unique MindSpore names" in handled_by(report, "several_models", "adapter/param_names.py",
                                                      "adapter/step_binding.py", "patches/module_attributes.py")
    # errG's step (line 62) differentiates through `fake`, made by netG in errD_fake's step
    assert risks(report, "recomputed") == [(60, "fake (made by netG at line 51; the step of line 62)")]
    assert "BatchNorm statistics are restored" in handled_by(report, "recomputed", "adapter/provenance.py")
    assert risks(report, "recomputed_dropout") == []  # Generator has no dropout
    assert risks(report, "dataloader_workers") == [(16, "num_workers=int(opt.workers)")]
    assert risks(report, "fake_data") == [(15, "torchvision.datasets.FakeData")]
    assert [line for line, _ in risks(report, "stale_output")] == [56, 60, 61, 64, 64]
    assert (64, "errG (from the compiled step of line 62, read after optimizerG.step() (line 63))") in \
        risks(report, "stale_output")


def _named_at(report, qualname, line):
    """``qualname`` at ``line``: in "missing APIs" without a patch providing it, else in "calls the adapter
    handles" as handled by a patch."""
    import torch
    missing = [(f.line, f.name) for f in report.missing_apis]
    handled = [(f.line, f.name, f.note) for f in report.handled_calls]
    if not hasattr(torch, qualname.split(".")[1]):
        assert (line, qualname) in missing, missing
    else:
        assert any(l == line and n == qualname and note.startswith("handled by patches/") for l, n, note in handled)


@pytest.mark.parametrize("script, line", [("mnist.py", 22), ("vae.py", 6), ("imagenet.py", 35),
                                          ("ddp_example.py", 16)])
def test_torch_accelerator(reports, script, line):
    _named_at(reports[script], "torch.accelerator.is_available", line)


def test_imagenet_dummy_workers_spawn(reports):
    report = reports["imagenet.py"]
    assert risks(report, "fake_data") == [(22, "torchvision.datasets.FakeData"),
                                          (23, "torchvision.datasets.FakeData")]
    assert risks(report, "dataloader_workers") == [(29, "num_workers=args.workers"), (30, "num_workers=args.workers"),
                                                   (54, "num_workers=args.workers")]
    assert risks(report, "spawn") == [(60, "torch.multiprocessing.spawn")]
    handled_by(report, "spawn", "patches/spawn.py")
    assert risks(report, "compose_after_totensor") == []  # `normalize` is transforms.Normalize(...)


def test_mnist_rnn_channel_dropout(reports):
    report = reports["mnist_rnn.py"]
    assert risks(report, "channel_dropout") == [(11, "torch.nn.Dropout2d"), (12, "torch.nn.Dropout2d")]
    handled_by(report, "channel_dropout", "patches/dropout.py")


def test_mnist_forward_forward(reports):
    report = reports["forward_forward.py"]
    assert risks(report, "sequence_index") == [(14, "x_[range(x.shape[0]), y]")]
    handled_by(report, "sequence_index", "patches/indexing.py")
    assert risks(report, "direct_forward") == [(30, "self.forward()"), (31, "self.forward()")]
    assert risks(report, "direct_forward_outside") == [(36, "self.forward()")]  # two calls on line 36: one finding
    assert risks(report, "compose_after_totensor") == [(8, "transforms.Lambda(lambda x:...")]
    # one Adam per Layer (nn.Linear: every Layer owns `weight` and `bias`)
    assert risks(report, "several_models") == [(22, "self.opt = torch.optim.Adam(...) (one per Layer instance)"),
                                               (51, "net = Net(...)")]
    assert "a layer-wise `self.opt`" in handled_by(report, "several_models", "adapter/param_names.py",
                                                   "adapter/step_binding.py", "patches/module_attributes.py")


def test_time_sequence_prediction(reports):
    report = reports["time_sequence.py"]
    assert [(f.line, f.name, f.note.split(":")[0]) for f in report.handled_calls if f.name == "torch.optim.LBFGS"] \
        == [(45, "torch.optim.LBFGS", "handled by patches/lbfgs.py")]
    assert risks(report, "closure_step") == [(54, "optimizer.step(closure): backward() at line 50")]
    assert risks(report, "float64") == [(17, "torch.double"), (18, "torch.double"), (19, "torch.double"),
                                        (20, "torch.double"), (43, "seq.double()")]
    handled_by(report, "float64", "patches/float64_precision.py")
    assert risks(report, "torch_load") == [(40, "torch.load('waves.pt')")]
    assert note(report, "torch_load").startswith("torch.load without weights_only=: as PyTorch 2.6+: ")


# ---------------------------------------------------------------------------------------------------------------
# Missing APIs: the live, patched modules decide


def test_missing_api_when_the_patch_is_absent(monkeypatch):
    """Without patches/lbfgs.py's torch.optim.LBFGS, time_sequence's line 45 is a missing API; without
    torch.accelerator (this branch, or a patch removed), mnist's line 22 is one."""
    import torch
    script = os.path.join(SCRIPTS_DIR, "time_sequence.py")
    monkeypatch.delattr(torch.optim, "LBFGS")
    report = mr.build_report(script)
    assert [(f.line, f.name, f.note) for f in report.missing_apis] == [
        (45, "torch.optim.LBFGS", "not provided by MindTorch 0.4.0")]
    assert not [f for f in report.handled_calls if f.name == "torch.optim.LBFGS"]
    monkeypatch.delattr(torch, "accelerator", raising=False)
    monkeypatch.delitem(sys.modules, "mindtorch.torch.accelerator", raising=False)
    report = mr.build_report(os.path.join(SCRIPTS_DIR, "mnist.py"))
    assert [(f.line, f.name, f.note) for f in report.missing_apis] == [
        (22, "torch.accelerator.is_available", "not provided by MindTorch 0.4.0 (no torch.accelerator)"),
        (24, "torch.accelerator.current_accelerator", "not provided by MindTorch 0.4.0 (no torch.accelerator)")]


def test_a_disabled_patch_is_reported_in_a_fresh_process():
    """``ADAPTER_DISABLE_PATCHES`` (patches/__init__.py) leaves the patch out: the report says so."""
    out = {}
    for name in ("time_sequence.py", "regression.py"):
        proc = run_py("--report", "--original", os.path.join(SCRIPTS_DIR, name), cwd=SCRIPTS_DIR,
                      env=dict(ADAPTER_DISABLE_PATCHES="lbfgs,inplace"), timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        out[name] = proc.stdout.splitlines()
    tsp = out["time_sequence.py"]
    at = tsp.index("  not provided by MindTorch 0.4.0")
    assert tsp[at + 1] == "    time_sequence.py:45  torch.optim.LBFGS"
    regression = out["regression.py"]
    at = regression.index(f"  {report_risks.RISKS['data_write'].title}: NOT handled (no patches/inplace.py): "
                          f"{report_risks.RISKS['data_write'].unhandled}")
    assert regression[at + 1] == "    regression.py:34  param.data.add_()"


def test_status_follows_the_live_objects(monkeypatch):
    """A live object whose code lies in patches/ is 'handled by' that file, whatever the patch is called: here a
    stand-in for a FakeData fix, compiled as if it were patches/fake_data.py."""
    import torchvision
    risk = report_risks.RISKS["fake_data"]
    enabled = {p.name for p in patches.enabled()}
    report_risks.clear_cache()
    if report_risks.provider("torchvision.datasets.FakeData.__getitem__") is None:
        assert report_risks.status(risk, enabled) == (
            f"{risk.title}: NOT handled (no patch: MindTorch's own FakeData.__getitem__ runs): {risk.unhandled}")
        namespace = {}
        exec(compile("def __getitem__(self, index):\n    return index\n",
                     os.path.join(ROOT, "patches", "fake_data.py"), "exec"), namespace)
        monkeypatch.setattr(torchvision.datasets.FakeData, "__getitem__", namespace["__getitem__"])
        report_risks.clear_cache()
    assert report_risks.status(risk, enabled) == f"{risk.title}: handled by patches/fake_data.py: {risk.handled}"
    assert report_risks.status(report_risks.RISKS["channel_dropout"], enabled - {"dropout"}).startswith(
        "Dropout1d/2d/3d (channel dropout): NOT handled (no patches/dropout.py): ")
    report_risks.clear_cache()
    from adapter import param_names  # an adapter component is present when its function is
    monkeypatch.delattr(param_names, "unique")
    assert report_risks.status(report_risks.RISKS["several_models"], enabled) == (
        "several models/optimizers in one process: NOT handled (no adapter/param_names.py unique): MindSpore "
        "refuses a parameter name twice in one gradient ('main.0.weight already exists'); a step run with a second "
        "model or optimizer reuses the first one's graph")


# ---------------------------------------------------------------------------------------------------------------
# Kinds the corpus does not show, and the run-time side


def _write(folder, name, text):
    path = os.path.join(str(folder), name)
    with open(path, "w") as f:
        f.write(textwrap.dedent(text).lstrip("\n"))
    return path


GAN_WITH_DROPOUT = """
    import torch
    import torch.nn as nn


    class G(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(4, 4), nn.Dropout2d(0.5))

        def forward(self, x):
            return self.net(x)


    g = G()
    d = nn.Linear(4, 1)
    opt_g = torch.optim.SGD(g.parameters(), lr=0.1)
    opt_d = torch.optim.SGD(d.parameters(), lr=0.1)
    for step in range(2):
        fake = g(torch.randn(8, 4))
        loss_d = d(nn.functional.dropout2d(fake.detach(), 0.0)).mean()
        loss_d.backward()
        opt_d.step()
        loss_g = -d(fake).mean()
        loss_g.backward()
        opt_g.step()
        for p in g.parameters():
            with torch.no_grad():
                p -= 0.01 * p.grad
        d.weight.data = d.weight.data * 0.5
        d.bias.detach().zero_()
"""


def test_recomputed_through_a_model_with_dropout_has_no_fix(tmp_path):
    script = _write(tmp_path, "gan.py", GAN_WITH_DROPOUT)
    report = mr.build_report(script)
    assert risks(report, "recomputed_dropout") == [(23, "fake (made by g at line 19; the step of line 24)")]
    assert note(report, "recomputed_dropout").startswith(
        f"{report_risks.RISKS['recomputed_dropout'].title}: no fix: recomputed inside the step")
    assert risks(report, "recomputed") == []
    assert risks(report, "several_models") == [(14, "g = G(...)"), (15, "d = Linear(...)"),
                                               (16, "opt_g = torch.optim.SGD(...)"), (17, "opt_d = torch.optim.SGD(...)")]
    assert risks(report, "data_write") == [(28, "p -= ..."), (29, "d.weight.data = ..."),
                                           (30, "d.bias.detach().zero_()")]
    assert risks(report, "channel_dropout") == [(8, "torch.nn.Dropout2d"), (20, "torch.nn.functional.dropout2d")]
    # the not-handled and no-fix kinds come first in the section
    assert report.risk_keys[0] == "recomputed_dropout"


def test_run_time_warnings_name_the_users_line(tmp_path):
    """What has no fix is also said at run time with the script's file:line, from a compiled step's eager call too
    (its statements run from a generated file: the warnings named that file before adapter.userframe.user_file)."""
    _write(tmp_path, "gan.py", GAN_WITH_DROPOUT)
    proc = run_py("--original", "gan.py", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "run.py: warning: gan.py:23: gradients through an output of G made in an earlier step recompute it, and " \
           "its dropout draws a new mask (PyTorch reuses the first one)" in proc.stderr
    assert f"{tmp_path}/gan.py:11: UserWarning: dropout2d: Received a 2-D input to dropout2d" in proc.stderr
    assert f"{tmp_path}/gan.py:20: UserWarning: dropout2d: Received a 2-D input to dropout2d" in proc.stderr
    assert "mindtorch_adapter_steps" not in proc.stderr


def test_failed_run_names_the_risk_at_its_line(tmp_path):
    script = _write(tmp_path, "np_copy.py", """
        import numpy as np
        import torch
        x = torch.zeros(3)
        a = np.array(x.numpy(), dtype=None, copy=None)
    """)
    proc = run_py("--original", script, cwd=tmp_path, timeout=300)
    assert proc.returncode == 1
    assert "run.py: the script failed at np_copy.py:4: ValueError: NoneType copy mode not allowed" in proc.stderr
    tail = proc.stderr.splitlines()[-3:]
    assert tail[0] == "run.py: known risks at the lines of this traceback (run.py --report lists all):"
    assert tail[1].startswith("  np.array/np.asarray(..., copy=None): no fix: copy=None needs numpy >= 2")
    assert tail[2] == "    np_copy.py:4  np.array(..., copy=None)"


def test_failure_hint_only_for_lines_of_the_traceback():
    script = os.path.join(SCRIPTS_DIR, "siamese.py")
    assert mr.failure_hint(ValueError("not raised: no traceback"), script) is None
    for line, expected in ((42, True), (41, False)):  # an error raised at siamese's line 42, or at 41
        try:
            exec(compile("\n" * (line - 1) + "raise ValueError('NoneType copy mode not allowed.')", script, "exec"), {})
        except ValueError as exc:
            hint = mr.failure_hint(exc, script)
        if expected:
            assert hint.splitlines()[-1] == f"    {mr.display_path(script)}:42  np.array(..., copy=None)"
        else:
            assert hint is None
