"""Checkpoints across both frameworks (issue 6): save/load, resume, interop with real PyTorch, convert, export,
atomic saves, weights_only loads, EMA.

References: PyTorch-produced golden files and numbers in tests/fixtures/checkpoint/ (made by make_golden.py under
real torch 2.13, see the README there), the uninterrupted run for resume, numpy for EMA, real PyTorch (.venv-ref,
tests skipped without it) for loading what the adapter writes.
"""
import json
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import zipfile

import numpy as np
import pytest

from support import ROOT, last_json, run_py, start_py

# also on CI's second MindSpore (pytest.ini: stack): checkpoints: MindSpore's Parameter/Tensor storage and serialization
pytestmark = pytest.mark.stack

FIX = os.path.join(ROOT, "tests", "fixtures", "checkpoint")
RESUME = os.path.join(FIX, "resume_train.py")
REF_PY = os.path.join(ROOT, ".venv-ref", "bin", "python")
GOLDEN = json.load(open(os.path.join(FIX, "golden.json")))
needs_torch = pytest.mark.skipif(not os.path.exists(REF_PY), reason="no real-PyTorch env (.venv-ref: make reference)")
sys.path.insert(0, FIX)


def run(*args, timeout=300):
    """``run.py ARGS`` in a subprocess, as a user runs it; returns the CompletedProcess (asserts exit 0)."""
    proc = run_py(*args, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def resume_run(*args, mode=()):
    return last_json(run(*mode, "--original", RESUME, *args).stdout)


def max_abs(a, b):
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def tiny_model():
    from tiny_net import Net  # its `import torch` is MindTorch here (conftest)
    return Net()


def logits_of(model, x):
    import torch
    model.eval()
    with torch.no_grad():
        return model(torch.tensor(x)).numpy()


# --------------------------------------------------------------------------------------------------- resume

@pytest.fixture(scope="module")
def adam_runs(tmp_path_factory):
    """resume_train.py (Adam + StepLR) through run.py, compiled step: 10 steps; 5 + save; load + 5; the control
    (weights only); and 5 more from PyTorch's golden step-5 checkpoint."""
    tmp = tmp_path_factory.mktemp("adam")
    ckpt = str(tmp / "ms_adam_step5.pth")
    return {
        "full": resume_run("--steps", "10"),
        "first": resume_run("--steps", "5", "--save", ckpt),
        "resumed": resume_run("--steps", "10", "--resume", ckpt),
        "control": resume_run("--steps", "10", "--resume", ckpt, "--weights-only-resume"),
        "from_pytorch": resume_run("--steps", "10", "--resume", os.path.join(FIX, "pt_resume_adam_step5.pth")),
        "ckpt": ckpt,
    }


def test_resume_compiled_adam_gives_the_same_losses_as_not_stopping(adam_runs):
    full, first, resumed = adam_runs["full"], adam_runs["first"], adam_runs["resumed"]
    assert first["losses"] == full["losses"][:5]
    assert resumed["start"] == 5 and len(resumed["losses"]) == 5
    # measured: bit-identical (0.0): moments, step count, lr and BN statistics all restored
    assert max_abs(resumed["losses"], full["losses"][5:]) <= 1e-6
    assert resumed["lrs"] == full["lrs"][5:] == [0.005, 0.0025, 0.0025, 0.0025, 0.00125]
    # the control restores the weights only (fresh Adam moments, step 0, initial lr): the test can tell
    control = adam_runs["control"]
    assert control["losses"][0] == pytest.approx(full["losses"][5], abs=1e-6)  # same weights, same first loss
    assert max_abs(control["losses"][1:], full["losses"][6:]) > 1e-3  # measured 8.9e-2
    assert control["lrs"][0] == 0.01


def test_resume_from_a_pytorch_checkpoint_continues_like_pytorch(adam_runs):
    """PyTorch's step-5 checkpoint (net, Adam state, StepLR) loads into the script here and steps 5..9 follow
    PyTorch's own resumed losses."""
    got, ref = adam_runs["from_pytorch"], GOLDEN["resume"]["adam"]
    assert got["start"] == 5
    assert got["lrs"] == ref["resumed_lrs"]
    rel = max_abs(got["losses"], ref["resumed_losses"]) / max(ref["resumed_losses"])
    assert rel <= 2e-5, (got["losses"], ref["resumed_losses"])  # measured 3.3e-7 (abs 4.8e-7)


def test_resume_pynative_sgd_momentum(tmp_path):
    ckpt = str(tmp_path / "sgd5.pth")
    mode = ("--mode", "pynative")
    full = resume_run("--steps", "10", "--optimizer", "sgd", mode=mode)
    resume_run("--steps", "5", "--optimizer", "sgd", "--save", ckpt, mode=mode)
    resumed = resume_run("--steps", "10", "--optimizer", "sgd", "--resume", ckpt, mode=mode)
    assert max_abs(resumed["losses"], full["losses"][5:]) <= 1e-6  # measured 0.0
    assert resumed["lrs"] == full["lrs"][5:]
    from_pt = resume_run("--steps", "10", "--optimizer", "sgd", "--resume",
                         os.path.join(FIX, "pt_resume_sgd_step5.pth"), mode=mode)
    ref = GOLDEN["resume"]["sgd"]["resumed_losses"]
    assert max_abs(from_pt["losses"], ref) / max(ref) <= 2e-5


@needs_torch
def test_pytorch_resumes_from_the_adapters_checkpoint(adam_runs):
    """The whole checkpoint saved here (net, optimizer, scheduler, step, acc) loads in real PyTorch with its default
    weights_only=True, and PyTorch's continued losses equal the uninterrupted run here."""
    proc = subprocess.run([REF_PY, RESUME, "--steps", "10", "--resume", adam_runs["ckpt"]], capture_output=True,
                          text=True, timeout=300, cwd=FIX)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got, full = last_json(proc.stdout), adam_runs["full"]
    assert got["lrs"] == full["lrs"][5:]
    assert max_abs(got["losses"], full["losses"][5:]) / max(full["losses"]) <= 2e-5  # measured 3.7e-7


def test_saved_file_is_pytorchs_zip_format(adam_runs):
    from adapter import torchfile
    path = adam_runs["ckpt"]
    assert set(torchfile.globals_in(path)) <= torchfile.WEIGHTS_ONLY_GLOBALS
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        assert names[0] == "archive/data.pkl" and "archive/version" in names and "archive/byteorder" in names
        data = [i for i in zf.infolist() if i.filename.startswith("archive/data/")]
        assert data and all(i.compress_type == zipfile.ZIP_STORED for i in data)
        with open(path, "rb") as f:
            for info in data:  # 64-byte aligned storages (what torch.load(mmap=True) needs)
                f.seek(info.header_offset + 26)
                name_len, extra_len = np.frombuffer(f.read(4), "<u2")
                assert (info.header_offset + 30 + int(name_len) + int(extra_len)) % 64 == 0
    ckpt = torchfile.read(path)
    assert ckpt["step"] == 5 and set(ckpt) == {"net", "optimizer", "scheduler", "step", "acc"}
    opt = ckpt["optimizer"]
    assert set(opt["state"][0]) == {"step", "exp_avg", "exp_avg_sq"} and float(opt["state"][0]["step"]) == 5.0
    assert opt["param_groups"][0]["lr"] == 0.005 and opt["param_groups"][0]["params"] == list(range(8))
    assert ckpt["scheduler"]["last_epoch"] == 5 and ckpt["scheduler"]["_last_lr"] == [0.005]


# ------------------------------------------------------------------------------------- PyTorch files here

def test_golden_pytorch_state_dict_gives_pytorchs_logits():
    import torch
    model = tiny_model()
    result = model.load_state_dict(torch.load(os.path.join(FIX, "pt_tiny_state.pth")))
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert max_abs(logits_of(model, _probe()), GOLDEN["tiny_logits"]) <= 1e-5  # measured 4.5e-8


def _probe():
    from tiny_net import probe_input
    return probe_input()


def test_dataparallel_prefix_fails_with_the_fix_then_loads():
    import torch
    from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present
    sd = torch.load(os.path.join(FIX, "pt_tiny_dataparallel.pth"), map_location=torch.device("cpu"))
    assert all(k.startswith("module.") for k in sd)
    model = tiny_model()
    with pytest.raises(RuntimeError) as err:
        model.load_state_dict(sd)
    message = str(err.value)
    assert 'Unexpected key(s) in state_dict: "module.conv1.weight"' in message
    assert "consume_prefix_in_state_dict_if_present" in message and "test_checkpoint.py:" in message
    consume_prefix_in_state_dict_if_present(sd, "module.")
    model.load_state_dict(sd)
    assert max_abs(logits_of(model, _probe()), GOLDEN["tiny_logits"]) <= 1e-5


def test_load_state_dict_size_mismatch_and_strict_false_keys():
    import torch
    from tiny_net import Net
    sd = torch.load(os.path.join(FIX, "pt_tiny_state.pth"))
    model = Net(num_classes=3)
    with pytest.raises(RuntimeError, match=r"size mismatch for fc.weight: copying a param with shape "
                                           r"torch.Size\(\[4, 8\]\) from checkpoint, the shape in current model "
                                           r"is torch.Size\(\[3, 8\]\)"):
        model.load_state_dict(sd)
    del sd["fc.bias"]
    sd["extra"] = torch.zeros(1)
    result = tiny_model().load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc.bias"] and result.unexpected_keys == ["extra"]


def test_optimizer_state_from_pytorch_round_trips():
    """PyTorch's Adam state (step 5) loads into the optimizer's MindSpore Parameters and comes back out equal."""
    import torch
    ckpt = torch.load(os.path.join(FIX, "pt_resume_adam_step5.pth"))
    model = tiny_model()
    model.load_state_dict(ckpt["net"])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
    optimizer.load_state_dict(ckpt["optimizer"])
    assert int(optimizer.state_step.asnumpy()) == 5
    assert optimizer.param_groups[0]["lr"] == 0.005
    out = optimizer.state_dict()
    saved = ckpt["optimizer"]
    assert out["param_groups"] == saved["param_groups"]
    assert sorted(out["state"]) == sorted(saved["state"]) == list(range(8))
    for i, state in saved["state"].items():
        for name in ("exp_avg", "exp_avg_sq", "step"):
            assert max_abs(out["state"][i][name].numpy(), state[name].numpy()) == 0.0
    bad = {"state": {0: {"step": torch.tensor(1.0), "exp_avg": torch.zeros(3), "exp_avg_sq": torch.zeros(3)}},
           "param_groups": saved["param_groups"]}
    with pytest.raises(ValueError, match=r"state 'exp_avg' of parameter 0 has shape \(3,\), the parameter has "
                                         r"\(8, 3, 3, 3\)"):
        optimizer.load_state_dict(bad)


@needs_torch
def test_what_the_adapter_saves_loads_into_real_pytorch(tmp_path):
    import torch
    model = tiny_model()
    with torch.no_grad():  # non-trivial BatchNorm statistics
        for name, buf in model.named_buffers():
            if name.endswith("running_mean"):
                buf.copy_(torch.tensor(np.linspace(-0.5, 0.5, buf.shape[0]).astype(np.float32)))
            elif name.endswith("running_var"):
                buf.copy_(torch.tensor(np.linspace(0.5, 2.0, buf.shape[0]).astype(np.float32)))
    expected = logits_of(model, _probe())
    path = str(tmp_path / "adapter_tiny.pth")
    torch.save({"net": model.state_dict(), "epoch": 3, "acc": 0.5, "shape": torch.Size([4, 3, 8, 8]),
                "dtype": torch.float32}, path)
    code = ("import json, sys, torch; sys.path.insert(0, sys.argv[2]); from tiny_net import Net, probe_input\n"
            "ckpt = torch.load(sys.argv[1], weights_only=True); m = Net(); m.load_state_dict(ckpt['net']); m.eval()\n"
            "out = m(torch.tensor(probe_input())).detach().numpy().tolist()\n"
            "print(json.dumps({'logits': out, 'epoch': ckpt['epoch'], 'shape': list(ckpt['shape']),"
            " 'dtype': str(ckpt['dtype'])}))")
    proc = subprocess.run([REF_PY, "-c", code, path, FIX], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = last_json(proc.stdout)
    assert got["epoch"] == 3 and got["shape"] == [4, 3, 8, 8] and got["dtype"] == "torch.float32"
    assert max_abs(got["logits"], expected) <= 1e-5  # measured 1.2e-7


# ------------------------------------------------------------------------------------------ weights_only

class _Evil:
    """A pickle that creates a file when loaded (``open(path, 'w')``)."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_weights_only_default_refuses_a_malicious_pickle(tmp_path):
    import torch
    from adapter import torchfile
    target = tmp_path / "pwned"
    legacy = tmp_path / "evil_legacy.pth"          # a bare pickle (torch.load's legacy path)
    legacy.write_bytes(pickle.dumps({"w": _Evil(str(target))}, protocol=2))
    zipped = tmp_path / "evil_zip.pth"             # PyTorch's zip layout around the same payload
    with open(zipped, "wb") as f:
        torchfile.write({"w": _Evil(str(target))}, f)
    for path in (legacy, zipped):
        with pytest.raises(pickle.UnpicklingError) as err:
            torch.load(str(path))
        message = str(err.value)
        assert "GLOBAL io.open was not an allowed global" in message and "`weights_only` set to `False`" in message \
            and "add_safe_globals" in message
        assert f"{path.name}" in message and "test_checkpoint.py:" in message
        assert not target.exists()
        with pytest.raises(pickle.UnpicklingError):
            torch.load(str(path), weights_only=True)
        assert not target.exists()
    torch.load(str(zipped), weights_only=False)  # the control: it really is malicious
    assert target.exists()


def test_weights_only_allowlist_and_safe_globals(tmp_path):
    import argparse
    import torch
    path = str(tmp_path / "with_args.pth")
    torch.save({"args": argparse.Namespace(lr=0.1), "w": torch.ones(2)}, path)
    with pytest.raises(pickle.UnpicklingError, match="argparse.Namespace"):
        torch.load(path)
    with torch.serialization.safe_globals([argparse.Namespace]):
        assert torch.load(path)["args"].lr == 0.1
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path)  # the context manager's allowlist ended with the block
    assert torch.load(path, weights_only=False)["args"].lr == 0.1
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        torch.load(path, weights_only=True, pickle_module=pickle)


# ---------------------------------------------------------------------------------------------- atomic save

def test_killed_mid_save_leaves_the_previous_checkpoint_whole(tmp_path):
    """A writer saving 16 MB checkpoints in a loop is SIGKILLed while a temporary file is being written: the
    checkpoint path still holds a complete earlier version."""
    from adapter import torchfile
    path = tmp_path / "ckpt.pth"
    proc = start_py("--original", os.path.join(FIX, "atomic_writer.py"), path, "4000000",
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    printed = []
    threading.Thread(target=lambda: printed.extend(proc.stdout), daemon=True).start()
    caught, deadline = None, time.time() + 120
    try:
        while time.time() < deadline and caught is None:
            if printed:
                for name in os.listdir(tmp_path):
                    if name.endswith(".tmp") and os.path.getsize(tmp_path / name) > 0:
                        proc.send_signal(signal.SIGKILL)
                        caught = tmp_path / name
                        break
            time.sleep(0.0005)
    finally:
        proc.kill()
        proc.wait()
    assert caught is not None, "never saw a save in progress"
    last_saved = int(printed[-1].split()[1])
    assert not zipfile.is_zipfile(caught)  # the kill did interrupt a write
    ckpt = torchfile.read(path)
    assert ckpt["version"] in (last_saved, last_saved + 1)
    assert ckpt["w"].shape == (4000000,) and np.all(ckpt["w"] == ckpt["version"])


# ------------------------------------------------------------------------------------------------------ EMA

def _numpy_ema(states, decay, kind):
    ema = {k: v.copy() for k, v in states[0].items()}
    for state in states[1:]:
        for k, m in state.items():
            e = ema[k]
            if kind == "v2":  # decay * e + (1 - decay) * m, copied into e's dtype (ints truncate, as copy_)
                ema[k] = (np.float32(decay) * e.astype(np.float32) + np.float32(1 - decay) * m.astype(np.float32)
                          ).astype(e.dtype)
            elif np.issubdtype(e.dtype, np.floating):  # lerp: e + w * (m - e), w = 1 - decay
                ema[k] = (e + np.float32(1 - decay) * (m - e)).astype(e.dtype)
            else:
                ema[k] = m.copy()
    return ema


def test_ema_v2_v3_match_numpy_and_evaluate(tmp_path):
    """timm's ModelEmaV2 (copy_) and ModelEmaV3 (_foreach_lerp_, and lerp_) in an unchanged script (compiled
    training step): the saved EMA weights equal a numpy EMA over the model's weight sequence, and the EMA models'
    evaluation (compiled no_grad forward, after step 3 and at the end) equals a forward with those weights."""
    import torch
    from adapter import torchfile
    proc = run("--original", os.path.join(FIX, "ema_train.py"), "--steps", "6", "--out", str(tmp_path))
    assert "runs in PyNative" not in proc.stderr  # the deep-copied EMA models compile
    logits = last_json(proc.stdout)
    z = np.load(tmp_path / "model_states.npz")
    keys = [k.split("/", 1)[1] for k in z.files if k.startswith("0/")]
    states = [{k: z[f"{t}/{k}"] for k in keys} for t in range(7)]
    saved = torchfile.read(tmp_path / "ema.pth")
    for name, decay, kind in (("v2", 0.9, "v2"), ("v3", 0.8, "v3"), ("v3_lerp", 0.7, "v3")):
        ref = _numpy_ema(states, decay, kind)
        assert max(max_abs(saved[name][k], ref[k]) for k in keys) <= 1e-6  # measured 0.0
        assert max(max_abs(saved[name][k], states[-1][k]) for k in keys) > 1e-2  # not just the model's weights
        for when, upto in (("after_step3", 4), ("end", 7)):
            weights = _numpy_ema(states[:upto], decay, kind)
            model = tiny_model()
            model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
            assert max_abs(logits[when][name], logits_of(model, _probe())) <= 1e-5, (name, when)


# ------------------------------------------------------------------------------------------ convert / export

def test_convert_golden_pth_to_ckpt_for_a_native_cell_and_back(tmp_path):
    import mindspore as ms
    from adapter import torchfile
    from tiny_net import native_cell
    ckpt, back = str(tmp_path / "tiny.ckpt"), str(tmp_path / "tiny.pth")
    proc = run("convert", os.path.join(FIX, "pt_tiny_dataparallel.pth"), "--to", ckpt)
    assert "'module.' prefix stripped" in proc.stdout and "2 BatchNorm layers renamed" in proc.stdout
    params = ms.load_checkpoint(ckpt)
    assert {"bn1.gamma", "bn1.beta", "bn1.moving_mean", "bn1.moving_variance"} <= set(params)
    assert not any("num_batches_tracked" in k or "running" in k for k in params)
    net = native_cell()
    not_loaded, unused = ms.load_param_into_net(net, params, strict_load=True)
    assert not_loaded == [] and unused == []
    net.set_train(False)
    out = net(ms.Tensor(_probe())).asnumpy()
    assert max_abs(out, GOLDEN["tiny_logits"]) <= 1e-5  # native MindSpore Cell vs PyTorch: measured 4.5e-8

    run("convert", ckpt, "--to", back)
    original, restored = torchfile.read(os.path.join(FIX, "pt_tiny_state.pth")), torchfile.read(back)
    assert list(restored) == list(original)
    for key, value in original.items():
        if key.endswith("num_batches_tracked"):
            assert restored[key].dtype == np.int64 and restored[key].shape == () and int(restored[key]) == 0
        else:
            assert restored[key].dtype == value.dtype and np.array_equal(restored[key], value), key


def test_convert_picks_the_state_dict_of_a_whole_checkpoint(tmp_path, capsys):
    import mindspore as ms
    from app.tools import convert
    out = str(tmp_path / "net.ckpt")
    assert convert.main([os.path.join(FIX, "pt_resume_adam_step5.pth"), "--to", out]) == 0
    assert "state_dict from key 'net'" in capsys.readouterr().out
    assert len(ms.load_checkpoint(out)) == 12  # 14 entries - 2 num_batches_tracked
    assert convert.main([os.path.join(FIX, "pt_resume_adam_step5.pth"), "--key", "nope", "--to", out]) == 1
    assert "no key 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        convert.main([os.path.join(FIX, "pt_tiny_state.pth"), "--to", str(tmp_path / "x.onnx")])


def test_convert_resnet18_logits_seed000(tmp_path):
    """Seed 000's check: pt_original/resnet.py ResNet18 (PyTorch layout, here on MindTorch) -> .pth -> run.py
    convert -> bench/native_resnet.py ResNet18 (native mindspore.nn.Cell): same logits."""
    import importlib.util
    import mindspore as ms
    import torch
    from app.tools import convert
    spec = importlib.util.spec_from_file_location("pt_resnet", os.path.join(ROOT, "pt_original", "resnet.py"))
    pt_resnet = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pt_resnet)
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import native_resnet
    torch.manual_seed(0)
    model = pt_resnet.resnet18(num_classes=10)
    rng = np.random.default_rng(0)
    with torch.no_grad():  # trained-like BatchNorm statistics and affine parameters
        for name, tensor in model.state_dict().items():
            if name.endswith(("running_mean", "bias")):
                tensor.copy_(torch.tensor(rng.normal(0, 0.1, tensor.shape).astype(np.float32)))
            elif name.endswith("running_var") or (name.endswith("weight") and tensor.ndim == 1):
                tensor.copy_(torch.tensor(rng.uniform(0.5, 1.5, tensor.shape).astype(np.float32)))
    x = rng.standard_normal((2, 3, 32, 32)).astype(np.float32)
    expected = logits_of(model, x)
    pth, ckpt = str(tmp_path / "r18.pth"), str(tmp_path / "r18.ckpt")
    torch.save(model.state_dict(), pth)
    assert convert.main([pth, "--to", ckpt]) == 0
    net = native_resnet.ResNet(native_resnet.BasicBlock, [2, 2, 2, 2], num_classes=10)
    not_loaded, unused = ms.load_param_into_net(net, ms.load_checkpoint(ckpt), strict_load=True)
    assert not_loaded == [] and unused == []
    net.set_train(False)
    diff = max_abs(net(ms.Tensor(x)).asnumpy(), expected)
    assert diff <= 1e-5, diff  # measured 0.0 (same MindSpore kernels on both sides; PyTorch's: next test)
    assert np.abs(expected).max() > 0.1


@needs_torch
def test_convert_pytorch_resnet18_logits_seed000(tmp_path):
    """Seed 000's check across frameworks: a ResNet18 made and saved by real PyTorch (pt_original/resnet.py, random
    BatchNorm statistics), converted with run.py convert, loaded into the native MindSpore ResNet18
    (bench/native_resnet.py): its logits equal PyTorch's."""
    import mindspore as ms
    from app.tools import convert
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import native_resnet
    pth, ckpt, logits = str(tmp_path / "r18.pth"), str(tmp_path / "r18.ckpt"), str(tmp_path / "logits.npy")
    code = ("import sys, numpy as np, torch; sys.path.insert(0, sys.argv[1]); import resnet\n"
            "torch.manual_seed(0); m = resnet.resnet18(num_classes=10); g = torch.Generator().manual_seed(0)\n"
            "with torch.no_grad():\n"
            "    for n, t in m.state_dict().items():\n"
            "        if n.endswith(('running_mean', 'bias')): t.normal_(0, 0.1, generator=g)\n"
            "        elif n.endswith('running_var') or (n.endswith('weight') and t.ndim == 1): t.uniform_(0.5, 1.5, "
            "generator=g)\n"
            "m.eval(); x = torch.tensor(np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32))\n"
            "torch.save(m.state_dict(), sys.argv[2]); np.save(sys.argv[3], m(x).detach().numpy())")
    proc = subprocess.run([REF_PY, "-c", code, os.path.join(ROOT, "pt_original"), pth, logits], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert convert.main([pth, "--to", ckpt]) == 0
    net = native_resnet.ResNet(native_resnet.BasicBlock, [2, 2, 2, 2], num_classes=10)
    not_loaded, unused = ms.load_param_into_net(net, ms.load_checkpoint(ckpt), strict_load=True)
    assert not_loaded == [] and unused == []
    net.set_train(False)
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    expected = np.load(logits)
    diff = max_abs(net(ms.Tensor(x)).asnumpy(), expected)
    assert diff <= 1e-5, diff  # seed 000 measured 2.86e-6 (224x224); here measured 1.7e-6
    assert np.abs(expected).max() > 0.1


def test_export_mindir_reloads_with_the_same_outputs(tmp_path):
    import mindspore as ms
    from adapter.graph_semantics import graph_mode
    out = str(tmp_path / "tiny.mindir")
    proc = run("export", "--model", os.path.join(FIX, "tiny_net.py") + ":Net", "--weights",
               os.path.join(FIX, "pt_tiny_state.pth"), "--input-shape", "4,3,8,8", "--mindir", out)
    line = next(l for l in proc.stdout.splitlines() if "mindspore.load check" in l)
    assert float(line.split("max abs diff ")[1].split()[0]) <= 1e-5  # measured 0
    graph = ms.load(out)
    probe = ms.Tensor(_probe())  # host numpy draws outside graph_mode (which refuses them: compile-time constants)
    with graph_mode():
        got = ms.nn.GraphCell(graph)(probe).asnumpy()
    assert max_abs(got, GOLDEN["tiny_logits"]) <= 1e-5  # the MindIR of PyTorch's weights gives PyTorch's logits


def test_export_usage_errors(tmp_path):
    proc = run_py("export", "--model", "nofile.py:Net", "--input-shape", "1,3,8,8", "--mindir", tmp_path / "x",
                  timeout=300)
    assert proc.returncode == 1 and "no such file nofile.py" in proc.stderr
