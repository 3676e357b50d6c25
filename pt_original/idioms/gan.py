"""Idioms of pytorch/examples dcgan: a generator of ConvTranspose2d + BatchNorm2d + ReLU + Tanh and a discriminator of
Conv2d + LeakyReLU(inplace=True) + BatchNorm2d + Sigmoid, ``model.apply(weights_init)`` with ``nn.init.constant_`` /
``zeros_``, BCELoss on labels made with ``torch.full`` / ``fill_``, D trained on real then on ``fake.detach()``, G
through D's output for ``fake``, two Adam optimizers with betas (0.5, 0.999): three backward() sites per iteration.
"""
import numpy as np
import torch
import torch.nn as nn

from _idiom_common import digits, numpy_init, report


class Generator(nn.Module):
    def __init__(self, nz=8, ngf=8):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 1, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, ndf=8):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, x):
        return self.main(x).view(-1, 1).squeeze(1)


def weights_init(m):
    name = m.__class__.__name__
    if name.find("BatchNorm") != -1:
        nn.init.constant_(m.weight, 1.0)
        nn.init.zeros_(m.bias)


def run_gan(images):
    net_g, net_d = numpy_init(Generator(), 3), numpy_init(Discriminator(), 4)
    net_g.apply(weights_init)
    net_d.apply(weights_init)
    criterion = nn.BCELoss()
    opt_d = torch.optim.Adam(net_d.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_g = torch.optim.Adam(net_g.parameters(), lr=2e-4, betas=(0.5, 0.999))
    rng = np.random.RandomState(5)
    real_all = torch.from_numpy(images[:, 6:22, 6:22].astype(np.float32) / 127.5 - 1.0).unsqueeze(1)
    for step in range(5):
        real = real_all[step * 16:(step + 1) * 16]
        b = real.size(0)
        net_d.zero_grad()
        label = torch.full((b,), 1.0, dtype=real.dtype)
        err_d_real = criterion(net_d(real), label)
        err_d_real.backward()
        noise = torch.from_numpy(rng.standard_normal((b, 8, 1, 1)).astype(np.float32))
        fake = net_g(noise)
        label.fill_(0.0)
        err_d_fake = criterion(net_d(fake.detach()), label)
        err_d_fake.backward()
        opt_d.step()
        net_g.zero_grad()
        label.fill_(1.0)
        err_g = criterion(net_d(fake), label)
        err_g.backward()
        opt_g.step()
        report("gan_d", step, (err_d_real + err_d_fake).item())
        report("gan_g", step, err_g.item())


def main():
    images, _ = digits(128, 7)
    run_gan(images)


if __name__ == "__main__":
    main()
