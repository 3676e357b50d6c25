"""Idioms of pytorch/examples vae: Linear encoder to (mu, logvar), the reparameterisation ``mu + eps * exp(0.5 *
logvar)`` (eps drawn with numpy outside the model and passed in, so that both frameworks see the same noise;
``torch.randn`` draws the final samples only), sigmoid decoder, loss ``binary_cross_entropy(recon, x,
reduction='sum')`` + KL divergence, Adam, ``loss.item() / len(data)`` printed after ``optimizer.step()``, a no_grad
test loss, ``torchvision.utils.save_image``.
"""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.utils import save_image

from _idiom_common import digits, metric, numpy_init, report


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(196, 32)
        self.fc_mu = nn.Linear(32, 4)
        self.fc_logvar = nn.Linear(32, 4)
        self.fc3 = nn.Linear(4, 32)
        self.fc4 = nn.Linear(32, 196)

    def encode(self, x):
        h = F.relu(self.fc1(x))
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x, eps):
        mu, logvar = self.encode(x.view(-1, 196))
        return self.decode(self.reparameterize(mu, logvar, eps)), mu, logvar


def vae_loss(recon, x, mu, logvar):
    bce = F.binary_cross_entropy(recon, x.view(-1, 196), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def run_vae(images):
    model = numpy_init(VAE(), 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.RandomState(2)
    data_all = torch.from_numpy(images[:, ::2, ::2].astype(np.float32) / 255.0)
    for step in range(6):
        data = data_all[step * 16:(step + 1) * 16]
        eps = torch.from_numpy(rng.standard_normal((len(data), 4)).astype(np.float32))
        model.train()
        optimizer.zero_grad()
        recon, mu, logvar = model(data, eps)
        loss = vae_loss(recon, data, mu, logvar)
        loss.backward()
        optimizer.step()
        report("vae", step, loss.item() / len(data))
    model.eval()
    with torch.no_grad():
        data = data_all[96:128]
        eps = torch.from_numpy(rng.standard_normal((len(data), 4)).astype(np.float32))
        recon, mu, logvar = model(data, eps)
        metric("vae", "test_loss", vae_loss(recon, data, mu, logvar).item() / len(data))
        sample = model.decode(torch.randn(8, 4))
        os.makedirs("results", exist_ok=True)
        save_image(sample.view(8, 1, 14, 14), "results/sample.png")
        metric("vae", "sample_in_01", float(bool(((sample >= 0) & (sample <= 1)).all())))


def main():
    images, _ = digits(128, 7)
    run_vae(images)


if __name__ == "__main__":
    main()
