"""``run.py --report`` (app/tools/migration_report.py): a static scan of a script and its sibling modules.

The fixture ``tests/fixtures/report_script`` is a train.py importing model.py; the line numbers asserted here are
those files' lines. Nothing here trains: the report only reads the files (a test checks that no user code runs).
"""
import os
import textwrap

import pytest

import patches
from app.tools import migration_report as mr
from adapter.userframe import display_path

from support import ROOT, run_py

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "report_script")
TRAIN = os.path.join(FIXTURE, "train.py")
MODEL = os.path.join(FIXTURE, "model.py")


def where(findings):
    return [(os.path.basename(f.path), f.line, f.name) for f in findings]


def by_name(findings, name):
    found = [f for f in findings if f.name == name]
    assert len(found) == 1, (name, where(findings))
    return found[0]


@pytest.fixture(scope="module")
def report():
    return mr.build_report(TRAIN)


def test_scans_the_script_and_the_sibling_it_imports(report):
    assert report.script == TRAIN
    assert report.files == [TRAIN, MODEL]
    assert report.unparsed == []


def test_missing_apis_with_file_and_line(report):
    import torch
    # the premise: MindTorch 0.4.0 really lacks these (PyTorch has both)
    assert not hasattr(torch.cuda, "CUDAGraph")
    assert not hasattr(torch.Tensor, "exp2")
    assert where(report.missing_apis) == [("train.py", 8, "torch.cuda.CUDAGraph"),
                                          ("model.py", 16, "Tensor.exp2")]
    assert report.missing_apis[0].note == "not provided by MindTorch 0.4.0"
    assert report.missing_apis[1].note == "a PyTorch Tensor method MindTorch 0.4.0's Tensor does not have " \
                                          "(if `h` is a tensor)"


def test_calls_the_adapter_handles(report):
    assert where(report.handled_calls) == [
        ("train.py", 9, "torch.cuda.is_available"), ("train.py", 9, "torch.device"), ("train.py", 10, "Net().to()"),
        ("train.py", 11, "torch.optim.SGD"), ("train.py", 12, "torch.optim.lr_scheduler.StepLR"),
        ("train.py", 13, "torch.cuda.amp.GradScaler"), ("train.py", 18, "optimizer.zero_grad()"),
        ("train.py", 19, "x.to()"), ("train.py", 21, "loss.backward()"),
        ("train.py", 22, "torch.nn.utils.clip_grad_norm_"), ("train.py", 23, "optimizer.step()"),
        ("train.py", 24, "scheduler.step()"), ("train.py", 26, "torch.save")]
    calls = report.handled_calls
    registered = {p.name: p for p in patches.registry()}
    assert by_name(calls, "loss.backward()").note == (
        f"patch `backward`: {registered['backward'].summary}; step site: forward lines 19-20 + backward compiled as "
        "one graph, fused with optimizer.step() at line 23 and the clip at line 22 (adapter/compiled_step.py; falls "
        "back to PyNative if it does not compile)")
    assert by_name(calls, "optimizer.step()").note == \
        f"patch `optimizer`: {registered['optimizer'].summary}; fused into the compiled step of line 21"
    assert by_name(calls, "torch.nn.utils.clip_grad_norm_").note.startswith("patch `clip_grad`: ")
    assert by_name(calls, "torch.nn.utils.clip_grad_norm_").note.endswith("; fused into the compiled step of line 21")
    assert by_name(calls, "scheduler.step()").note.startswith("patch `lr_scheduler`: ")
    assert by_name(calls, "x.to()").note == f"patch `device`: {registered['device'].summary}"
    # AMP: the patch whose declared replaces covers GradScaler/autocast decides the note (derived, never stale)
    amp = by_name(calls, "torch.cuda.amp.GradScaler").note
    handler = mr.handling_patch("amp", registered)
    assert amp == (f"patch `{handler.name}`: {handler.summary}" if handler is not None else
                   "MindTorch's own GradScaler/autocast run unpatched (no patch in patches/ replaces "
                   "torch.amp.GradScaler; see run.py --list-patches)")


def test_concept_without_patch_says_so(monkeypatch):
    kept = [p for p in patches.registry() if p.name != "backward"]
    monkeypatch.setattr(patches, "registry", lambda: kept)
    call = by_name(mr.build_report(TRAIN).handled_calls, "loss.backward()")
    assert call.note.startswith("MindTorch's own Tensor.backward runs (it does not fill p.grad) (no patch in patches/ "
                                "replaces torch.Tensor.backward; see run.py --list-patches); step site:")


def test_concept_table_follows_the_declarations():
    """The patch named for a concept is the one whose ``replaces`` covers the concept's torch names, whatever it is
    called: exactly, through a module or class it replaces (``.*``), a member of the concept's class, or the same
    live attribute under another path (torch.optim.SGD.step is _Optimizer.step)."""
    def stub(name, *replaces):
        return patches.Patch(name, f"{name} summary", "post-import", lambda: None, replaces=replaces)
    assert mr.handling_patch("amp", {"x": stub("x", "torch.amp.*")}).name == "x"
    assert mr.handling_patch("amp", {"x": stub("x", "torch.cuda.amp.GradScaler.scale")}).name == "x"
    assert mr.handling_patch("ddp", {"y": stub("y", "torch.nn.parallel")}).name == "y"
    assert mr.handling_patch("optimizer", {"z": stub("z", "mindtorch.torch.optim.optimizer._Optimizer.step")}).name \
        == "z"
    assert mr.handling_patch("amp", {"w": stub("w", "torch.nn.functional.gelu")}) is None
    # the registry as it is: every concept a converted patch declares is named by that patch
    registered = {p.name: p for p in patches.registry()}
    for concept, name in [("backward", "backward"), ("optimizer", "optimizer"), ("lr_scheduler", "lr_scheduler"),
                          ("clip_grad", "clip_grad"), ("device", "device"), ("max_pool", "max_pool"),
                          ("vision_data", "vision_data"), ("module_call", "module_call")]:
        assert mr.handling_patch(concept, registered).name == name


def test_graph_mode_findings_in_forward(report):
    assert where(report.graph_mode) == [("model.py", 14, ".item()"), ("model.py", 15, ".add_()")]
    item, inplace = report.graph_mode
    assert item.note.startswith("in forward(): compiles: ")
    assert inplace.note.startswith("in forward(): in-place tensor method: the training steps and no_grad forwards "
                                   "that run this forward() fall back to PyNative (eager)")


def test_format_report(report):
    text = mr.format_report(report)
    lines = text.splitlines()
    assert lines[0] == f"run.py --report: {display_path(TRAIN)} (+ {display_path(MODEL)}): static scan (AST), " \
                       "nothing was run"
    assert "torch APIs that MindTorch 0.4.0 does not provide (2):" in lines
    # grouped: each note once, then one `path:line  name` line per finding under it
    at = lines.index("  not provided by MindTorch 0.4.0")
    assert lines[at + 1] == f"    {display_path(TRAIN)}:8  torch.cuda.CUDAGraph"
    at = lines.index(f"  {report.graph_mode[1].note}")
    assert lines[at + 1] == f"    {display_path(MODEL)}:15  .add_()"
    assert "calls the adapter handles (patch or component) (13):" in lines
    at = lines.index(f"  {report.handled_calls[0].note}")  # patch `device`: three calls, one note
    assert lines[at + 1:at + 4] == [f"    {display_path(TRAIN)}:9  torch.cuda.is_available",
                                    f"    {display_path(TRAIN)}:9  torch.device", f"    {display_path(TRAIN)}:10  Net().to()"]
    assert "graph mode: forward() methods and compiled step regions (2):" in lines
    assert f"{mr.RISKS_TITLE} (1):" in lines  # loss.item() after the fused step: see test_migration_report.py


def _write(folder, name, text):
    path = os.path.join(str(folder), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(textwrap.dedent(text).lstrip("\n"))
    return path


def test_aliases_packages_relative_imports_and_heuristics(tmp_path):
    script = _write(tmp_path, "main.py", """
        import numpy as np
        import torch
        import torch.nn as nn
        from torchvision import transforms
        import pkg.sub
        torch.backends.cudnn.benchmark = True
        d = {"a": np.zeros(3)}
        for v in d.values():
            v.put(0, 1.0)
        aug = transforms.v2.JPEG(90)
        bag = nn.EmbeddingBag(5, 3)
    """)
    _write(tmp_path, "pkg/__init__.py", "")
    _write(tmp_path, "pkg/sub.py", """
        from . import helpers
        from .helpers import Block
    """)
    _write(tmp_path, "pkg/helpers.py", """
        import torch.nn.functional as F
        from torch import nn
        from torch.func import vmap


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.prelu = nn.PReLU()

            def forward(self, x):
                out = F.gelu(self.prelu(x))
                if out.sum() > 0:
                    out = out * 2
                print(out)
                flag = out.detach().numpy()
                out.mul_(2)
                return out
    """)
    report = mr.build_report(script)
    helpers = os.path.join(str(tmp_path), "pkg", "helpers.py")
    assert report.files == [script, os.path.join(str(tmp_path), "pkg", "__init__.py"),
                            os.path.join(str(tmp_path), "pkg", "sub.py"), helpers]
    # numpy's d.values()/v.put(), self.prelu (the user's own attribute), F.gelu, a store to cudnn: not reported
    assert where(report.missing_apis) == [("main.py", 10, "torchvision.transforms.v2.JPEG"),
                                          ("main.py", 11, "torch.nn.EmbeddingBag"), ("helpers.py", 3, "torch.func")]
    assert report.missing_apis[0].note == "not provided by MindTorch 0.4.0"  # v2 exists (patches/transforms_v2.py), JPEG not
    assert where(report.graph_mode) == [("helpers.py", 13, "if out.sum() > 0"), ("helpers.py", 15, "print()"),
                                        ("helpers.py", 16, ".numpy()"), ("helpers.py", 17, ".mul_()")]
    notes = [f.note for f in report.graph_mode]
    assert notes[0].startswith("in forward(): compiles: graph control flow")
    assert notes[2].startswith("in forward(): reads a tensor's value in Python: the training steps and no_grad "
                               "forwards that run this forward() fall back to PyNative (eager)")


def test_step_region_findings_and_non_site_backward(tmp_path):
    script = _write(tmp_path, "loop.py", """
        import torch
        model = torch.nn.Linear(4, 2)
        opt = torch.optim.Adam(model.parameters())
        x = torch.randn(8, 4)
        for i in range(3):
            out = model(x)
            loss = out.pow(2).mean() * out.abs().max().item()
            loss.backward()
            opt.step()
            if i:
                model(x).sum().backward()
    """)
    report = mr.build_report(script)
    assert where(report.graph_mode) == [("loop.py", 7, ".item()")]
    assert report.graph_mode[0].note.startswith("in the step of line 8: compiles: ")
    late = [f for f in report.handled_calls if f.line == 11]
    assert where(late) == [("loop.py", 11, "model(x).sum().backward()")]
    assert late[0].note.endswith("not a step site (no forward statements before it in its block, or arguments): "
                                 "runs on the eager bridge (adapter/tape.py), not compiled")
    assert where(f for f in report.handled_calls if f.line == 9) == [("loop.py", 9, "opt.step()")]


def test_user_code_never_runs_and_unparsable_files_are_listed(tmp_path):
    sentinel = tmp_path / "ran"
    script = _write(tmp_path, "s.py", f"""
        open({str(sentinel)!r}, "w").close()
        import broken
    """)
    _write(tmp_path, "broken.py", "def f(:\n")
    report = mr.build_report(script)
    assert not sentinel.exists()
    assert where(report.unparsed) == [("broken.py", 1, "broken.py")]
    assert report.unparsed[0].note.startswith("not scanned: SyntaxError: ")
    text = mr.format_report(report)
    assert "torch APIs that MindTorch 0.4.0 does not provide (0):\n  none found\n" in text
    assert "files not scanned (1):" in text


def test_missing_api_hint_for_failed_runs(tmp_path):
    import torch
    with pytest.raises(AttributeError) as info:
        torch.cuda.CUDAGraph()
    hint = mr.missing_api_hint(info.value, TRAIN)
    assert hint == mr.format_missing(mr.build_report(TRAIN))
    assert hint.splitlines()[0] == "torch APIs that MindTorch 0.4.0 does not provide (2):"
    assert f"{display_path(TRAIN)}:8  torch.cuda.CUDAGraph" in hint
    # MindTorch's import hook words a missing module this way (seen for `from torch import compile`)
    assert mr.missing_api_hint(ModuleNotFoundError("KeyError('torch.compile')"), TRAIN) == hint
    with pytest.raises(AttributeError) as tensor_info:
        torch.zeros(2).exp2()
    assert mr.missing_api_hint(tensor_info.value, TRAIN) == hint
    # not about torch, or not that kind of error: no hint
    assert mr.missing_api_hint(AttributeError("'NoneType' object has no attribute 'shape'"), TRAIN) is None
    assert mr.missing_api_hint(ValueError("module 'mindtorch.torch' says no"), TRAIN) is None
    # about torch, but the script uses no missing API: nothing to add
    clean = _write(tmp_path, "clean.py", "import torch\nx = torch.zeros(2)\n")
    assert mr.missing_api_hint(AttributeError("module 'mindtorch.torch' has no attribute 'foo'"), clean) is None
    # the hint never raises, even for a script that is gone
    assert mr.missing_api_hint(AttributeError("module 'mindtorch.torch' has no attribute 'foo'"),
                               str(tmp_path / "gone.py")) is None


def _launcher_has_report():
    from app.launcher import build_parser
    return any("--report" in action.option_strings for action in build_parser()._actions)


needs_launcher = pytest.mark.skipif(not _launcher_has_report(),
                                    reason="run.py --report is not wired into app/launcher.py yet")


@needs_launcher
def test_run_py_report_prints_the_report_and_runs_nothing(report, monkeypatch):
    monkeypatch.chdir(ROOT)  # paths show relative to the working directory, here as in the subprocess
    proc = run_py("--report", "--original", TRAIN, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == mr.format_report(report)
    assert not os.path.exists(os.path.join(ROOT, "net.pt"))  # the script's torch.save never ran


@needs_launcher
def test_failed_run_ends_with_the_missing_apis(report, monkeypatch):
    monkeypatch.chdir(ROOT)
    proc = run_py("--original", TRAIN, timeout=300)
    assert proc.returncode == 1
    assert f"run.py: the script failed at {display_path(TRAIN)}:8: AttributeError: module 'mindtorch.torch.cuda' " \
           "has no attribute 'CUDAGraph'" in proc.stderr
    assert proc.stderr.endswith(mr.format_missing(report))
