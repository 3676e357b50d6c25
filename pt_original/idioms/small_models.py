"""Idioms of three small pytorch/examples scripts, one section each.

regression: polynomial features built with ``torch.cat``, a single Linear, ``F.smooth_l1_loss``, ``fc.zero_grad()``,
``backward()`` and a manual update with no optimizer, ``param.data.add_(-lr * param.grad)``; stops once the loss is
under a threshold (or after 40 batches).

forward_forward: each layer (a subclass of nn.Linear) keeps its own Adam as ``self.opt`` and trains itself with a
layer-local loss ``log(1 + exp(cat([threshold - g_pos, g_neg - threshold]))).mean()`` on the goodness
``h.pow(2).mean(1)`` of L2-normalised inputs; layers train one after another on the previous layer's detached
output; prediction overlays each label on the input and takes the argmax of summed goodness.

siamese: a custom ``Dataset`` returning (image, image, float target) pairs, one shared tower applied to both images,
``torch.cat`` of the two embeddings, a sigmoid head with ``nn.BCELoss``, Adadelta with StepLR.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, Dataset

from _idiom_common import digits, metric, numpy_init, report

POLY_DEGREE = 4


def make_features(x):
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def regression():
    rng = np.random.RandomState(11)
    w_target = torch.from_numpy(rng.standard_normal((POLY_DEGREE, 1)).astype(np.float32))
    b_target = torch.from_numpy(rng.standard_normal(1).astype(np.float32))
    fc = numpy_init(nn.Linear(POLY_DEGREE, 1), 12)
    for batch in range(40):
        x = make_features(torch.from_numpy(rng.standard_normal(32).astype(np.float32)))
        y = x.mm(w_target) + b_target.item()
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(x), y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
        report("regression", batch, loss)
        if loss < 1e-3:
            break
    metric("regression", "batches", batch + 1)


class FFLayer(nn.Linear):
    def __init__(self, in_features, out_features):
        super().__init__(in_features, out_features)
        self.opt = torch.optim.Adam(self.parameters(), lr=0.03)
        self.threshold = 2.0

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return F.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train_layer(self, name, x_pos, x_neg, epochs):
        for i in range(epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = torch.log(1 + torch.exp(torch.cat([-g_pos + self.threshold, g_neg - self.threshold]))).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            report(name, i, loss.item())
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


def overlay(x, y):
    x = x.clone()
    x[:, :10] *= 0.0
    x[range(x.shape[0]), y] = x.max()
    return x


def forward_forward(images, labels):
    x = torch.from_numpy(images[:, ::2, ::2].reshape(len(images), -1).astype(np.float32) / 255.0)
    y = torch.from_numpy(labels.astype(np.int64))
    layers = [FFLayer(196, 32), FFLayer(32, 32)]
    for k, layer in enumerate(layers):
        numpy_init(layer, 20 + k)
        layer.opt = torch.optim.Adam(layer.parameters(), lr=0.03)
    x_pos = overlay(x, y)
    x_neg = overlay(x, (y + 1 + torch.from_numpy(np.arange(len(y)) % 9)) % 10)
    h_pos, h_neg = x_pos, x_neg
    for k, layer in enumerate(layers):
        h_pos, h_neg = layer.train_layer(f"ff_layer{k}", h_pos, h_neg, 6)
    with torch.no_grad():
        goodness_per_label = []
        for label in range(10):
            h = overlay(x, torch.full((len(x),), label, dtype=torch.int64))
            goodness = 0
            for layer in layers:
                h = layer(h)
                goodness = goodness + h.pow(2).mean(1)
            goodness_per_label.append(goodness.unsqueeze(1))
        pred = torch.cat(goodness_per_label, 1).argmax(1)
    metric("ff", "train_error", 1.0 - pred.eq(y).float().mean().item())


class PairDataset(Dataset):
    def __init__(self, images, labels):
        self.images = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)
        self.labels = labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        other = (index * 7 + 3) % len(self.labels)
        target = torch.tensor(float(self.labels[index] == self.labels[other]), dtype=torch.float)
        return self.images[index], self.images[other], target


class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.tower = nn.Sequential(nn.Conv2d(1, 4, 5, 2), nn.ReLU(inplace=True), nn.Conv2d(4, 8, 5, 2),
                                   nn.ReLU(inplace=True), nn.Flatten())
        self.head = nn.Sequential(nn.Linear(2 * 8 * 4 * 4, 16), nn.ReLU(inplace=True), nn.Linear(16, 1))
        self.sigmoid = nn.Sigmoid()

    def forward(self, a, b):
        return self.sigmoid(self.head(torch.cat((self.tower(a), self.tower(b)), 1)))


def siamese(images, labels):
    model = numpy_init(Siamese(), 30)
    loader = DataLoader(PairDataset(images, labels), batch_size=16, shuffle=False)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    criterion = nn.BCELoss()
    step = 0
    for epoch in range(2):
        model.train()
        for a, b, target in loader:
            optimizer.zero_grad()
            loss = criterion(model(a, b).squeeze(), target)
            loss.backward()
            optimizer.step()
            report("siamese", step, loss.item())
            step += 1
        scheduler.step()


def main():
    regression()
    images, labels = digits(64, 13)
    forward_forward(images, labels)
    siamese(images, labels)


if __name__ == "__main__":
    main()
