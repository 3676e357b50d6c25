"""Idioms of pytorch/examples imagenet and super_resolution, one section each.

imagenet: an ImageFolder of PNG files (written here with Pillow) read with ``datasets.ImageFolder`` and
Resize + CenterCrop + ToTensor + Normalize, ``torchvision.models.resnet18(num_classes=...)``, CrossEntropyLoss, SGD
with momentum and weight decay, StepLR, an ``accuracy(output, target, topk=(1, 3))`` helper built on ``topk``, ``t()``,
``eq``, ``expand_as``; ``model.train()`` / ``model.eval()`` around a no_grad validation.

super_resolution: the luminance channel of PIL images (``convert('YCbCr').split()``), low-resolution inputs made with
transforms (CenterCrop, Resize), a Conv2d net ending in ``nn.PixelShuffle``, ``init.orthogonal_`` with
``init.calculate_gain('relu')`` (checked orthogonal, then replaced by the shared numpy draw so both frameworks start
from the same weights), MSELoss, Adam, PSNR ``10 log10(1 / mse)`` in a no_grad test.
"""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.init as init
from PIL import Image
from torchvision import datasets, models, transforms

from _idiom_common import digits, metric, numpy_init, report


def write_image_folder(root, images, labels, classes):
    for i, (img, c) in enumerate(zip(images, labels)):
        folder = os.path.join(root, f"class_{classes[c]}")
        os.makedirs(folder, exist_ok=True)
        Image.fromarray(img).save(os.path.join(folder, f"{i}.png"))


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        return [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / target.size(0)) for k in topk]


def imagenet():
    images, labels = digits(48, 21)
    labels = labels % 4
    write_image_folder("imagefolder/train", images[:32], labels[:32], range(4))
    write_image_folder("imagefolder/val", images[32:], labels[32:], range(4))
    tf = transforms.Compose([transforms.Resize(36), transforms.CenterCrop(32), transforms.ToTensor(),
                             transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
    train_loader = torch.utils.data.DataLoader(datasets.ImageFolder("imagefolder/train", tf), batch_size=8)
    val_loader = torch.utils.data.DataLoader(datasets.ImageFolder("imagefolder/val", tf), batch_size=8)
    model = numpy_init(models.resnet18(num_classes=4), 22)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), 0.001, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    model.train()
    for i, (images_b, target) in enumerate(train_loader):
        output = model(images_b)
        loss = criterion(output, target)
        acc1, acc3 = accuracy(output, target, topk=(1, 3))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        report("imagenet", i, loss.item())
    scheduler.step()
    model.eval()
    top1, top3, n = 0.0, 0.0, 0
    with torch.no_grad():
        for images_b, target in val_loader:
            acc1, acc3 = accuracy(model(images_b), target, topk=(1, 3))
            top1 += acc1[0].item() * target.size(0)
            top3 += acc3[0].item() * target.size(0)
            n += target.size(0)
    metric("imagenet", "acc1", top1 / n)
    metric("imagenet", "acc3", top3 / n)


class SuperResolutionNet(nn.Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(16, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv2.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv3.weight)

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        return self.pixel_shuffle(self.conv3(x))


def super_resolution():
    upscale, crop = 3, 24
    model = SuperResolutionNet(upscale)
    w = model.conv2.weight.detach().reshape(16, -1)
    gain = init.calculate_gain("relu")
    metric("sr", "orthogonal_err", round(float((w @ w.t() / gain ** 2 - torch.eye(16)).abs().max()), 3))
    numpy_init(model, 40)
    images, _ = digits(24, 41)
    to_lr = transforms.Compose([transforms.CenterCrop(crop), transforms.Resize(crop // upscale), transforms.ToTensor()])
    to_hr = transforms.Compose([transforms.CenterCrop(crop), transforms.ToTensor()])
    inputs, targets = [], []
    for img in images:
        y, _, _ = Image.fromarray(img).convert("RGB").convert("YCbCr").split()
        inputs.append(to_lr(y))
        targets.append(to_hr(y))
    x, t = torch.stack(inputs), torch.stack(targets)
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, t), batch_size=4)
    for i, (lr_batch, hr_batch) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(lr_batch), hr_batch)
        loss.backward()
        optimizer.step()
        report("sr", i, loss.item())
    with torch.no_grad():
        mse = criterion(model(x), t)
        metric("sr", "psnr", 10 * np.log10(1 / mse.item()))


def main():
    imagenet()
    super_resolution()


if __name__ == "__main__":
    main()
