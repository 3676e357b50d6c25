"""Train a ResNet on CIFAR-10 or Fashion-MNIST: the PyTorch recipe of the ResNet50 CIFAR-10 migration example
(RandomCrop(32, padding=4), RandomHorizontalFlip, Resize, Normalize; Adam lr 1e-3, weight_decay 1e-5; batch 32;
CrossEntropyLoss). Plain PyTorch: runs as ``python train_resnet.py`` with real PyTorch + torchvision, and unchanged
on MindSpore with ``python run.py --original pt_original/train_resnet.py``.

Fashion-MNIST (28x28 grey) is fed as 3x32x32 (pad 2, grey repeated on 3 channels) so the same ResNet runs on both.
Nothing is downloaded: the data must be on disk under --data-root.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as transforms

from resnet import resnet18, resnet50

CIFAR_MEAN, CIFAR_STD = [0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010]
FMNIST_MEAN, FMNIST_STD = [0.2860] * 3, [0.3530] * 3


def parse_args():
    p = argparse.ArgumentParser(description="ResNet training on CIFAR-10 / Fashion-MNIST")
    p.add_argument("--data-root", default="./data", help="directory holding cifar-10-batches-py/ or FashionMNIST/raw/")
    p.add_argument("--dataset", choices=["cifar10", "fashion-mnist"], default="fashion-mnist")
    p.add_argument("--arch", choices=["resnet18", "resnet50"], default="resnet18")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--test-batch-size", type=int, default=500)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--weight-decay", type=float, default=1e-5)
    p.add_argument("--image-size", type=int, default=32, help="input side in pixels (the seed recipe used 224)")
    p.add_argument("--max-steps", type=int, default=0, help="training steps per epoch, 0 = the whole epoch")
    p.add_argument("--max-test-batches", type=int, default=0, help="test batches to evaluate, 0 = the whole test set")
    p.add_argument("--num-workers", type=int, default=0)
    p.add_argument("--log-interval", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--save", default="", help="save the model's state_dict to this path")
    return p.parse_args()


def build_datasets(args):
    resize = [transforms.Resize(args.image_size)] if args.image_size != 32 else []
    if args.dataset == "cifar10":
        if not os.path.isdir(os.path.join(args.data_root, "cifar-10-batches-py")):
            sys.exit(f"CIFAR-10 not found: expected {args.data_root}/cifar-10-batches-py/ (the python version of "
                     "https://www.cs.toronto.edu/~kriz/cifar.html). Put it there or pass --data-root.")
        train_tf = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(0.5),
                                       *resize, transforms.ToTensor(), transforms.Normalize(CIFAR_MEAN, CIFAR_STD)])
        test_tf = transforms.Compose([*resize, transforms.ToTensor(), transforms.Normalize(CIFAR_MEAN, CIFAR_STD)])
        train = torchvision.datasets.CIFAR10(args.data_root, train=True, transform=train_tf)
        test = torchvision.datasets.CIFAR10(args.data_root, train=False, transform=test_tf)
    else:
        raw = os.path.join(args.data_root, "FashionMNIST", "raw")
        if not os.path.isfile(os.path.join(raw, "train-images-idx3-ubyte")):
            sys.exit(f"Fashion-MNIST not found: expected the unpacked IDX files in {raw}/. On Debian: "
                     "'apt-get install dataset-fashion-mnist', then 'make data' (gunzips them there).")
        common = [transforms.Pad(2), transforms.Grayscale(num_output_channels=3), *resize, transforms.ToTensor(),
                  transforms.Normalize(FMNIST_MEAN, FMNIST_STD)]
        train_tf = transforms.Compose([transforms.RandomHorizontalFlip(0.5)] + common)
        test_tf = transforms.Compose(common)
        train = torchvision.datasets.FashionMNIST(args.data_root, train=True, transform=train_tf)
        test = torchvision.datasets.FashionMNIST(args.data_root, train=False, transform=test_tf)
    return train, test


def train_epoch(epoch, model, device, loader, optimizer, criterion, args):
    model.train()
    steps = len(loader) if args.max_steps <= 0 else min(args.max_steps, len(loader))
    t0 = time.time()
    for batch_idx, (data, target) in enumerate(loader):
        if batch_idx >= steps:
            break
        data, target = data.to(device, non_blocking=True), target.to(device, non_blocking=True)
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0 or batch_idx == steps - 1:
            rate = (batch_idx + 1) / (time.time() - t0)
            print("Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}\t({:.2f} steps/s)".format(
                epoch, batch_idx, steps, 100.0 * batch_idx / steps, loss.item(), rate), flush=True)
    return steps, time.time() - t0


def test_epoch(model, device, loader, criterion, args):
    model.eval()
    test_loss, correct, seen = 0.0, 0, 0
    with torch.no_grad():
        for i, (data, target) in enumerate(loader):
            if args.max_test_batches and i >= args.max_test_batches:
                break
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += criterion(output, target).item() * target.size(0)
            pred = output.max(1)[1]
            correct += pred.eq(target).sum().item()
            seen += target.size(0)
    test_loss /= seen
    print("\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.2f}%)\n".format(
        test_loss, correct, seen, 100.0 * correct / seen), flush=True)
    return correct / seen


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    use_cuda = torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")
    torch.backends.cudnn.benchmark = True

    train_set, test_set = build_datasets(args)
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                                               num_workers=args.num_workers, pin_memory=use_cuda, drop_last=True)
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=args.test_batch_size, shuffle=False,
                                              num_workers=args.num_workers, pin_memory=use_cuda)

    model = (resnet50 if args.arch == "resnet50" else resnet18)(num_classes=10).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), args.lr, weight_decay=args.weight_decay)
    print(f"{args.arch} on {args.dataset} ({len(train_set)} train / {len(test_set)} test images, "
          f"{args.image_size}x{args.image_size}), device {device}, batch {args.batch_size}, lr {args.lr}", flush=True)

    start = time.time()
    for epoch in range(args.epochs):
        steps, seconds = train_epoch(epoch, model, device, train_loader, optimizer, criterion, args)
        print(f"Epoch {epoch}: {steps} steps in {seconds:.1f} s ({seconds / steps:.3f} s/step)", flush=True)
        accuracy = test_epoch(model, device, test_loader, criterion, args)
    print(f"Final test accuracy: {100.0 * accuracy:.2f}%  (total {time.time() - start:.1f} s)", flush=True)
    if args.save:
        torch.save(model.state_dict(), args.save)
        print(f"Saved state_dict to {args.save}")


if __name__ == "__main__":
    main()
