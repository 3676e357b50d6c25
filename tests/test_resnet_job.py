"""The default job's script, unchanged, a few steps on real Fashion-MNIST through run.py: the loss falls."""
import os
import re

import pytest

from support import ROOT, run_py

DATA = os.path.join(ROOT, "data")


@pytest.mark.skipif(not os.path.isfile(os.path.join(DATA, "FashionMNIST", "raw", "train-images-idx3-ubyte")),
                    reason="real Fashion-MNIST not staged: run 'make data'")
def test_resnet18_fashion_mnist_loss_falls(tmp_path):
    save = tmp_path / "model.pth"
    proc = run_py("--original", os.path.join(ROOT, "pt_original", "train_resnet.py"), "--data-root", DATA,
                  "--arch", "resnet18", "--max-steps", "16", "--log-interval", "1", "--test-batch-size", "200",
                  "--max-test-batches", "2", "--save", save, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    losses = [float(x) for x in re.findall(r"Loss: ([0-9.]+)", proc.stdout)]
    assert len(losses) == 16
    first, last = sum(losses[:4]) / 4, sum(losses[-4:]) / 4
    assert last < 0.75 * first, losses  # chance level is ln(10) = 2.30
    accuracy = float(re.search(r"Accuracy: \d+/400 \(([0-9.]+)%\)", proc.stdout).group(1))
    assert accuracy > 25.0  # 10 classes: chance is 10 %
    import torch
    state = torch.load(str(save))
    assert {"conv1.weight", "bn1.running_mean", "fc.bias", "layer4.1.bn2.running_var"} <= set(state)
