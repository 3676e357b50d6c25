"""The device-agnostic torch API of current scripts (patches/accelerator.py, device.py, backends.py, amp.py).

References: real PyTorch 2.13 CPU-only, observed with ``.venv-ref/bin/python`` (2026-11-23) and written here as
constants: on a machine without accelerator ``torch.accelerator.is_available()`` is False, ``current_accelerator()``
None, ``device_count()`` 0, and every call that needs a device index raises
``RuntimeError("Cannot access accelerator device when none is available.")`` (a ``torch.device``/str argument:
"Accelerator expected"). GPU/Ascend targets cannot run here; their semantics (the accelerator is "cuda", one
device per process) are checked by pointing ``patches.device`` at a GPU target.
"""
import os
import textwrap

import pytest
import torch

from patches import device as device_patch

from support import run_py

NO_ACC = "Cannot access accelerator device when none is available."


@pytest.fixture
def gpu_target(monkeypatch):
    """MindSpore's device target reads as GPU for the patches (nothing runs on a GPU)."""
    monkeypatch.setattr(device_patch, "_device_target", lambda: "GPU")
    device_patch._refresh()
    yield
    monkeypatch.undo()
    device_patch._refresh()


def test_accelerator_on_cpu_is_pytorch_without_accelerator():
    acc = torch.accelerator
    assert acc.is_available() is False
    assert acc.current_accelerator() is None
    assert acc.current_accelerator(check_available=True) is None
    assert acc.device_count() == 0
    for call in (acc.current_device_index, lambda: acc.set_device_index(0), acc.synchronize,
                 lambda: acc.synchronize(0), acc.empty_cache, acc.memory_allocated, acc.max_memory_allocated,
                 lambda: acc.device_index(0).__enter__()):
        with pytest.raises(RuntimeError, match=NO_ACC):
            call()
    for call in (lambda: acc.set_device_index("cuda:0"), lambda: acc.synchronize("cpu")):
        with pytest.raises(RuntimeError, match="Accelerator expected"):
            call()
    with pytest.warns(FutureWarning, match="current_device_index"):
        with pytest.raises(RuntimeError, match=NO_ACC):
            acc.current_device_idx()
    with acc.device_index(None):  # no-op, as PyTorch
        pass


def test_import_forms():
    import torch.accelerator
    from torch.accelerator import current_accelerator
    assert torch.accelerator.current_accelerator is current_accelerator
    assert "synchronize" in torch.accelerator.__all__


def test_accelerator_on_a_gpu_target_is_cuda(gpu_target):
    acc = torch.accelerator
    assert acc.is_available() is True
    assert acc.current_accelerator() == torch.device("cuda")
    assert acc.current_accelerator().type == "cuda" and str(acc.current_accelerator()) == "cuda"
    assert acc.device_count() == 1
    assert acc.current_device_index() == 0
    acc.set_device_index(1)  # a DDP script's rank: each process already owns its device
    try:
        assert acc.current_device_index() == 1
        with acc.device_index(0):
            assert acc.current_device_index() == 0
        assert acc.current_device_index() == 1
        acc.set_device_index(-1)  # negative: no-op (PyTorch)
        assert acc.current_device_index() == 1
        with pytest.raises(ValueError, match="cpu doesn't match the current accelerator"):
            acc.set_device_index("cpu")
        with pytest.raises(ValueError, match="Expected a torch.device with a specified index"):
            acc.set_device_index("cuda")
        acc.set_device_index("cuda:0")
        assert acc.current_device_index() == 0
    finally:
        acc.set_device_index(0)
    # tensors live on the device: what scripts read back after .to(device)
    x = torch.ones(2).to(acc.current_accelerator())
    assert x.is_cuda is True and x.is_cpu is False
    assert x.device == torch.device("cuda", 0) and x.device.type == "cuda"
    assert torch.cuda.is_available() and torch.get_device_module() is torch.cuda


def test_tensor_device_attributes_as_pytorch_cpu():
    x = torch.zeros(2)
    # PyTorch 2.13 CPU: (False, False, True, False, False, device(type='cpu'), 'cpu')
    assert (x.is_cuda, x.is_xpu, x.is_cpu, x.is_mps, x.is_meta) == (False, False, True, False, False)
    assert repr(x.device) == "device(type='cpu')" and str(x.device) == "cpu" and x.device.type == "cpu"
    assert x.device == torch.device("cpu") and x.device.index is None
    p = torch.nn.Linear(2, 2).weight
    assert p.is_cuda is False and p.device == torch.device("cpu")
    if p.is_cuda:  # MindTorch's is_cuda was a method: always true in an `if`
        pytest.fail("is_cuda is truthy on CPU")


def test_torch_device_object():
    assert repr(torch.device("cuda:1")) == "device(type='cuda', index=1)"
    assert str(torch.device("cuda", 1)) == "cuda:1"
    assert (torch.device("cpu") == "cpu", torch.device("cpu") == torch.device("cpu")) == (False, True)
    assert hash(torch.device("cpu")) == hash(torch.device("cpu"))
    assert len({torch.device("cuda", 0), torch.device("cuda:0"), torch.device("cuda")}) == 2


def test_default_device():
    assert torch.get_default_device() == torch.device("cpu")
    try:
        torch.set_default_device("cuda")
        assert repr(torch.get_default_device()) == "device(type='cuda', index=0)"  # PyTorch's documented example
        torch.set_default_device("cuda:1")
        assert torch.get_default_device() == torch.device("cuda", 1)
        torch.set_default_device(None)
        assert torch.get_default_device() == torch.device("cpu")
        with torch.device("cuda"):
            assert torch.get_default_device() == torch.device("cuda", 0)
        assert torch.get_default_device() == torch.device("cpu")
    finally:
        torch.set_default_device(None)


def test_device_modules_and_backends():
    assert torch.get_device_module("cpu") is torch.cpu and torch.get_device_module("cuda") is torch.cuda
    assert torch.get_device_module() is torch.cpu
    assert torch.xpu.is_available() is False and torch.xpu.device_count() == 0
    assert torch.backends.mps.is_available() is False
    cudnn = torch.backends.cudnn
    # PyTorch 2.13's defaults: benchmark False, deterministic False, enabled True, allow_tf32 True
    assert (cudnn.benchmark, cudnn.deterministic, cudnn.enabled, cudnn.allow_tf32) == (False, False, True, True)
    assert torch.backends.cuda.matmul.allow_tf32 is False
    with cudnn.flags(enabled=True, benchmark=True, deterministic=True):
        assert cudnn.benchmark and cudnn.deterministic
    assert not cudnn.benchmark and not cudnn.deterministic


def test_determinism_and_precision_switches_as_pytorch(monkeypatch):
    """MindTorch raised RuntimeError("... not supported on GPU or CPU") at use_deterministic_algorithms(True) and
    had no set_float32_matmul_precision / get_num_threads. Expected values: PyTorch 2.13 CPU, observed."""
    from patches import backends
    monkeypatch.setattr(backends, "_STATE", dict(backends._STATE))
    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", False)
    assert not torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    assert (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
            torch.get_deterministic_debug_mode()) == (True, True, 1)
    torch.set_deterministic_debug_mode("error")
    assert (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()) == \
        (True, False)
    with pytest.raises(RuntimeError, match="invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                                           "but got x"):
        torch.set_deterministic_debug_mode("x")
    with pytest.raises(TypeError, match="argument 'mode' \\(position 1\\) must be bool, not str"):
        torch.use_deterministic_algorithms("yes")
    assert torch.get_float32_matmul_precision() == "highest"
    torch.set_float32_matmul_precision("high")
    assert (torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32) == ("high", True)
    with pytest.warns(UserWarning, match="bad is not one of 'highest', 'high', or 'medium'"):
        torch.set_float32_matmul_precision("bad")
    assert torch.get_float32_matmul_precision() == "high"
    assert torch.get_num_threads() == len(os.sched_getaffinity(0))


def test_cuda_memory_statistics(monkeypatch):
    """MindTorch had no torch.cuda.max_memory_allocated & co. (AttributeError on GPU/Ascend, where
    cuda.is_available() is True). PyTorch 2.13's CPU build answers 0 (observed); on a device target they are
    MindSpore's allocator counters."""
    import mindspore as ms
    from patches import cuda_memory
    assert (torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated(0), torch.cuda.memory_reserved(),
            torch.cuda.max_memory_reserved(), torch.cuda.memory_stats()) == (0, 0, 0, 0, {})
    assert torch.cuda.reset_peak_memory_stats() is None
    calls = []
    monkeypatch.setattr(cuda_memory, "_on_device", lambda: True)
    monkeypatch.setattr(ms.runtime, "max_memory_allocated", lambda: calls.append("max") or 1536)
    assert torch.cuda.max_memory_allocated() == 1536 and calls == ["max"]


def test_amp_device_type_api():
    assert torch.amp.is_autocast_available("cuda") and torch.amp.is_autocast_available("cpu")
    assert torch.amp.is_autocast_available("meta") is False
    with pytest.raises(RuntimeError, match="device type at start of device string: npu"):
        torch.amp.is_autocast_available("npu")
    assert torch.GradScaler is torch.amp.GradScaler
    with torch.amp.autocast(device_type="cpu"):
        assert torch.is_autocast_enabled()


def test_device_attributes_compile_in_a_step(tmp_path):
    """``x.device``/``x.is_cuda`` read inside forward(): the compiled step and the no_grad forward compile, and the
    branch on ``is_cuda`` is not taken on CPU (MindTorch's bound method made it always taken)."""
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import torch, torch.nn as nn
        class M(nn.Module):
            def __init__(self):
                super().__init__(); self.fc = nn.Linear(4, 2)
                nn.init.constant_(self.fc.weight, 0.5); nn.init.constant_(self.fc.bias, 0.0)
            def forward(self, x):
                z = torch.zeros(x.shape[0], 2, device=x.device)
                if x.is_cuda:
                    z = z + 100.0
                return self.fc(x) + z
        m = M(); opt = torch.optim.SGD(m.parameters(), lr=0.0)
        x = torch.ones(3, 4); y = torch.zeros(3, 2)
        for i in range(3):
            opt.zero_grad()
            loss = ((m(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            print("loss", loss.item())
    """))
    proc = run_py("--explain", "--original", script, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    losses = [float(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("loss")]
    assert losses == [4.0, 4.0, 4.0]  # fc(x) = 4 * 0.5 = 2 per output, squared: 4; with the +100 branch: 10404
    assert "compiled (graph mode, fused" in proc.stdout + proc.stderr
