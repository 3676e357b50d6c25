"""Hand-written native MindSpore port of pt_original/resnet.py (seed 000 style: nn.Cell, TrainOneStepCell), the
reference the compiled step is measured against.

    python native_resnet.py [--arch resnet18|resnet50] [--mode graph|pynative] [--steps 8]

Prints one JSON line like bench/train_step.py: first_step_s, median_step_s, step_s, step_cpu_s, losses,
peak_rss_mb.
"""
import argparse
import json
import os
import resource
import statistics
import time

import numpy as np

import stack  # bench/stack.py, beside this file

stack.native_environment()  # our pre-import settings (oneDNN ISA cap on 2.10), before MindSpore loads
import mindspore as ms  # noqa: E402
from mindspore import nn, ops


class BasicBlock(nn.Cell):
    expansion = 1

    def __init__(self, inp, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inp, planes, 3, stride=stride, pad_mode="pad", padding=1, has_bias=False)
        self.bn1 = nn.BatchNorm2d(planes, momentum=0.9)
        self.conv2 = nn.Conv2d(planes, planes, 3, pad_mode="pad", padding=1, has_bias=False)
        self.bn2 = nn.BatchNorm2d(planes, momentum=0.9)
        self.relu = nn.ReLU()
        self.down = stride != 1 or inp != planes
        if self.down:
            self.downsample = nn.SequentialCell([nn.Conv2d(inp, planes, 1, stride=stride, has_bias=False),
                                                 nn.BatchNorm2d(planes, momentum=0.9)])

    def construct(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.down:
            identity = self.downsample(x)
        return self.relu(out + identity)


class Bottleneck(nn.Cell):
    expansion = 4

    def __init__(self, inp, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inp, planes, 1, has_bias=False)
        self.bn1 = nn.BatchNorm2d(planes, momentum=0.9)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, pad_mode="pad", padding=1, has_bias=False)
        self.bn2 = nn.BatchNorm2d(planes, momentum=0.9)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, has_bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4, momentum=0.9)
        self.relu = nn.ReLU()
        self.down = stride != 1 or inp != planes * 4
        if self.down:
            self.downsample = nn.SequentialCell([nn.Conv2d(inp, planes * 4, 1, stride=stride, has_bias=False),
                                                 nn.BatchNorm2d(planes * 4, momentum=0.9)])

    def construct(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.down:
            identity = self.downsample(x)
        return self.relu(out + identity)


class ResNet(nn.Cell):
    def __init__(self, block, layers, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, pad_mode="pad", padding=3, has_bias=False)
        self.bn1 = nn.BatchNorm2d(64, momentum=0.9)
        self.relu = nn.ReLU()
        self.pad = nn.Pad(((0, 0), (0, 0), (1, 1), (1, 1)))
        self.maxpool = nn.MaxPool2d(3, 2)
        stages, inp = [], 64
        for planes, n, stride in zip((64, 128, 256, 512), layers, (1, 2, 2, 2)):
            blocks = []
            for i in range(n):
                blocks.append(block(inp, planes, stride if i == 0 else 1))
                inp = planes * block.expansion
            stages.append(nn.SequentialCell(blocks))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.mean = ops.ReduceMean(keep_dims=False)
        self.fc = nn.Dense(512 * block.expansion, num_classes)

    def construct(self, x):
        x = self.maxpool(self.pad(self.relu(self.bn1(self.conv1(x)))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.mean(x, (2, 3)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--arch", choices=["resnet18", "resnet50"], default="resnet50")
    p.add_argument("--mode", choices=["graph", "pynative"], default="graph")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--image-size", type=int, default=32)
    p.add_argument("--steps", type=int, default=8)
    args = p.parse_args()
    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE)
    ms.set_device("CPU")
    ms.set_seed(0)
    net = ResNet(BasicBlock, [2, 2, 2, 2]) if args.arch == "resnet18" else ResNet(Bottleneck, [3, 4, 6, 3])
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Adam(net.trainable_params(), 1e-3, weight_decay=1e-5)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
    train.set_train()
    rng = np.random.default_rng(0)
    batches = [(ms.Tensor(rng.standard_normal((args.batch_size, 3, args.image_size, args.image_size)).astype(np.float32)),
                ms.Tensor(rng.integers(0, 10, args.batch_size).astype(np.int32))) for _ in range(4)]  # as train_step.py
    times, cpu, losses = [], [], []
    for step in range(args.steps):
        x, y = batches[step % len(batches)]
        t0, c0 = time.perf_counter(), time.process_time()
        loss = train(x, y)
        losses.append(float(loss.asnumpy()))
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    print(json.dumps({"arch": args.arch, "batch": args.batch_size, "image_size": args.image_size,
                      "first_step_s": times[0], "median_step_s": statistics.median(times[1:]), "step_s": times,
                      "step_cpu_s": cpu, "losses": losses,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA")}))


if __name__ == "__main__":
    main()
