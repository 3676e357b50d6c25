"""A CIFAR PreAct-ResNet18 training step with SGD (momentum 0.9, weight decay 5e-4), for timing.

The model is written as the common CIFAR recipes write it (kuangliu/pytorch-cifar's PreActBlock): each block calls
its ``shortcut`` before ``conv1`` although ``__init__`` registers it after, so the modules run in another order than
``model.parameters()`` lists them. Before the fix of the fused step's gradient order (adapter/compiled_step.py,
``_optimizer_order``) this step did not compile ("CPU kernel op [Default/optimizer-SGD/SGD-op...] resize failed")
and ran on the eager bridge.

    python preact_step.py --steps 8     # through run.py (MindSpore) or with real PyTorch

Prints one JSON line: {"batch", "first_step_s", "median_step_s", "step_s": [...], "losses": [...]}.
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class PreActBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(in_planes)
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride, bias=False))

    def forward(self, x):
        out = F.relu(self.bn1(x))
        shortcut = self.shortcut(out) if hasattr(self, "shortcut") else x
        out = self.conv1(out)
        out = self.conv2(F.relu(self.bn2(out)))
        return out + shortcut


class PreActResNet18(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.in_planes = 64
        self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        self.layer1 = self._make_layer(64, 1)
        self.layer2 = self._make_layer(128, 2)
        self.layer3 = self._make_layer(256, 2)
        self.layer4 = self._make_layer(512, 2)
        self.bn = nn.BatchNorm2d(512)
        self.linear = nn.Linear(512, num_classes)

    def _make_layer(self, planes, stride):
        layers = []
        for s in [stride, 1]:
            layers.append(PreActBlock(self.in_planes, planes, s))
            self.in_planes = planes
        return nn.Sequential(*layers)

    def forward(self, x):
        out = self.layer4(self.layer3(self.layer2(self.layer1(self.conv1(x)))))
        out = F.adaptive_avg_pool2d(F.relu(self.bn(out)), 1)
        return self.linear(torch.flatten(out, 1))


p = argparse.ArgumentParser()
p.add_argument("--batch-size", type=int, default=32)
p.add_argument("--steps", type=int, default=8)
args = p.parse_args()

torch.manual_seed(0)
model = PreActResNet18()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
criterion = nn.CrossEntropyLoss()
batches = [(torch.randn(args.batch_size, 3, 32, 32), torch.randint(0, 10, (args.batch_size,))) for _ in range(4)]
model.train()
times, losses = [], []
for step in range(args.steps):
    x, y = batches[step % len(batches)]
    t0 = time.perf_counter()
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())  # waits for the step
    times.append(time.perf_counter() - t0)
print(json.dumps({"batch": args.batch_size, "first_step_s": times[0], "median_step_s": statistics.median(times[2:]),
                  "step_s": times, "losses": losses}))
