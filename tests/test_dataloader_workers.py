"""DataLoader worker processes (patches/dataloader.py, patches/mp_start.py, the MNIST arrays of vision_data.py).

``tests/fixtures/dataloader_workers.py`` runs through run.py as a user script: for a dataset holding view tensors made
in the parent (read with ``.numpy()`` per item, as MindTorch's MNIST does) and for real Fashion-MNIST with
ToTensor + Normalize, two epochs of ``DataLoader(shuffle=True, num_workers=2, pin_memory=True,
persistent_workers=True)`` must equal two epochs of ``num_workers=0`` after the same ``torch.manual_seed``: same
order, same values. The reference is the adapter's own single-process loader, itself tested against torchvision's
values (tests/test_vision_data.py). Two workers must also draw different random numbers (PyTorch seeds each
worker with base_seed + worker_id).
"""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tests", "fixtures", "dataloader_workers.py")
DATA = os.path.join(ROOT, "data")


@pytest.mark.parametrize("context", ["default", "fork", "spawn"])
def test_workers_yield_the_single_process_batches(context, tmp_path):
    root = DATA if os.path.isdir(os.path.join(DATA, "FashionMNIST", "raw")) else "-"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "run.py"), "--mode", "pynative", "--original", SCRIPT,
                           context, root], capture_output=True, text=True, timeout=240, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["views"] == {"equal": True, "batches": [3, 3], "epochs_differ": True}
    if root != "-":
        assert result["fashion_mnist"] == {"equal": True, "batches": [6, 6], "epochs_differ": True}
    assert result["workers_draw_different_numbers"] is True
