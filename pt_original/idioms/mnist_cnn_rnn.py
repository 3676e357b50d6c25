"""Idioms of the MNIST classifiers (pytorch/examples mnist, mnist_rnn): torchvision's MNIST dataset read from raw
IDX files, ToTensor + Normalize, DataLoader; a CNN (Conv2d, ReLU, max_pool2d, Dropout, flatten, Linear,
log_softmax) trained with F.nll_loss, Adadelta and StepLR; an LSTM over the image rows (batch_first) with the last
step's output classified; the test loop under torch.no_grad() with nll_loss(reduction='sum') and argmax accuracy.
Prints every training loss and the test metrics (``_idiom_common.report`` / ``metric``)."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torchvision import datasets, transforms

from _idiom_common import digits, metric, numpy_init, report, write_idx


class ConvNet(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 8, 3, 1)
        self.drop = nn.Dropout(dropout)
        self.fc1 = nn.Linear(8 * 12 * 12, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(self.drop(x), 1)
        x = self.drop(F.relu(self.fc1(x)))
        return F.log_softmax(self.fc2(x), dim=1)


class RowLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(input_size=28, hidden_size=16, batch_first=True)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        out, _ = self.rnn(x.view(-1, 28, 28))
        return F.log_softmax(self.fc(out[:, -1, :]), dim=1)


def train(name, model, loader, optimizer, scheduler, epochs):
    step = 0
    for epoch in range(epochs):
        model.train()
        for data, target in loader:
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            report(name, step, loss.item())
            step += 1
        scheduler.step()
    metric(name, "lr", optimizer.param_groups[0]["lr"])


def test(name, model, loader):
    model.eval()
    total, correct = 0.0, 0
    with torch.no_grad():
        for data, target in loader:
            out = model(data)
            total += F.nll_loss(out, target, reduction="sum").item()
            correct += out.argmax(dim=1, keepdim=True).eq(target.view_as(out.argmax(dim=1, keepdim=True))).sum().item()
    metric(name, "test_loss", total / len(loader.dataset))
    metric(name, "accuracy", 100.0 * correct / len(loader.dataset))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--dropout", type=float, default=0.0)  # 0: losses comparable step by step with PyTorch's
    args = p.parse_args()
    raw = "./data/MNIST/raw"
    write_idx(raw, "train", *digits(128, 0))
    write_idx(raw, "t10k", *digits(64, 1))
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    train_set = datasets.MNIST("./data", train=True, download=False, transform=tf)
    test_set = datasets.MNIST("./data", train=False, download=False, transform=tf)
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=False)
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=64, shuffle=False)
    for name, model, opt in (("cnn", ConvNet(args.dropout), optim.Adadelta), ("rnn", RowLSTM(), optim.Adadelta)):
        numpy_init(model, 0)
        optimizer = opt(model.parameters(), lr=1.0)
        scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
        train(name, model, train_loader, optimizer, scheduler, args.epochs)
        test(name, model, test_loader)


if __name__ == "__main__":
    main()
