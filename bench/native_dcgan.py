"""Hand-written native MindSpore DCGAN (pytorch/examples dcgan/main.py's Generator/Discriminator with nc=1, 64 px)
and its three training graphs, the reference run.py's compiled dcgan step is measured against
(``bench/kernel_gap.py``).

    python bench/native_dcgan.py [--ngf 16] [--ndf 16] [--batch 64] [--steps 6] [--mode graph|pynative]
                                 [--threads N] [--profile DIR]

Graphs (as the script's three ``backward()`` sites, each a ``value_and_grad`` + Adam in one Cell, GRAPH_MODE):
  d_real: ``criterion(netD(real), 1)`` -> grads of netD (returned);
  d_fake: ``fake = netG(noise)``; ``criterion(netD(fake.detach()), 0)`` -> grads of netD, plus d_real's, then
          one Adam update of netD (the script's ``optimizerD.step()`` after both backward calls);
  g:      ``criterion(netD(netG(noise)), 1)`` -> grads of netG, then Adam on netG: netG's forward runs again
          (a graph cannot reuse d_fake's activations), as in run.py's graph of that site; netD's weight gradients
          are computed too (PyTorch's ``errG.backward()`` fills netD's ``.grad``), not applied.
Prints one JSON line: per graph the median seconds per call after one warm-up, and the whole iteration.
"""
import argparse
import json
import statistics
import time

import numpy as np

import stack  # bench/stack.py, beside this file

stack.native_environment()  # our pre-import settings (oneDNN ISA cap on 2.10), before MindSpore loads
import mindspore as ms  # noqa: E402
from mindspore import nn, ops


def generator(nz, ngf, nc):
    def bn(c):  # PyTorch BatchNorm2d defaults: eps 1e-5, momentum 0.1 (MindSpore's momentum = 1 - PyTorch's)
        return nn.BatchNorm2d(c, eps=1e-5, momentum=0.9)
    return nn.SequentialCell([
        nn.Conv2dTranspose(nz, ngf * 8, 4, 1, pad_mode="valid", has_bias=False), bn(ngf * 8), nn.ReLU(),
        nn.Conv2dTranspose(ngf * 8, ngf * 4, 4, 2, pad_mode="pad", padding=1, has_bias=False), bn(ngf * 4), nn.ReLU(),
        nn.Conv2dTranspose(ngf * 4, ngf * 2, 4, 2, pad_mode="pad", padding=1, has_bias=False), bn(ngf * 2), nn.ReLU(),
        nn.Conv2dTranspose(ngf * 2, ngf, 4, 2, pad_mode="pad", padding=1, has_bias=False), bn(ngf), nn.ReLU(),
        nn.Conv2dTranspose(ngf, nc, 4, 2, pad_mode="pad", padding=1, has_bias=False), nn.Tanh()])


class Discriminator(nn.Cell):
    def __init__(self, ndf, nc):
        super().__init__()
        def bn(c):
            return nn.BatchNorm2d(c, eps=1e-5, momentum=0.9)
        self.main = nn.SequentialCell([
            nn.Conv2d(nc, ndf, 4, 2, pad_mode="pad", padding=1, has_bias=False), nn.LeakyReLU(0.2),
            nn.Conv2d(ndf, ndf * 2, 4, 2, pad_mode="pad", padding=1, has_bias=False), bn(ndf * 2), nn.LeakyReLU(0.2),
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, pad_mode="pad", padding=1, has_bias=False), bn(ndf * 4),
            nn.LeakyReLU(0.2),
            nn.Conv2d(ndf * 4, ndf * 8, 4, 2, pad_mode="pad", padding=1, has_bias=False), bn(ndf * 8),
            nn.LeakyReLU(0.2),
            nn.Conv2d(ndf * 8, 1, 4, 1, pad_mode="valid", has_bias=False), nn.Sigmoid()])

    def construct(self, x):
        return self.main(x).view(-1, 1).squeeze(1)


def bce(p, y):
    return ops.binary_cross_entropy(p, y, reduction="mean")


class DReal(nn.Cell):
    def __init__(self, netD, opt):
        super().__init__(auto_prefix=False)
        self.netD, self.opt = netD, opt
        self.grad = ms.value_and_grad(self.forward, None, opt.parameters, has_aux=True)

    def forward(self, real, label):
        out = self.netD(real)
        return bce(out, label), out

    def construct(self, real, label):
        (loss, out), grads = self.grad(real, label)
        return loss, out, grads  # accumulated with d_fake's, then one update (the script's optimizerD.step())


class DFake(nn.Cell):
    def __init__(self, netG, netD, opt):
        super().__init__(auto_prefix=False)
        self.netG, self.netD, self.opt = netG, netD, opt
        self.grad = ms.value_and_grad(self.forward, None, opt.parameters, has_aux=True)

    def forward(self, noise, label):
        fake = self.netG(noise)
        out = self.netD(ops.stop_gradient(fake))
        return bce(out, label), out, fake

    def construct(self, noise, label, *real_grads):  # *: a tuple argument would be a constant (a compile per call)
        (loss, out, fake), grads = self.grad(noise, label)
        total = ()
        for g, r in zip(grads, real_grads):
            total = total + (g + r,)
        self.opt(total)
        return loss, out, fake


class GStep(nn.Cell):
    """netG's forward again + netD + backward, Adam on netG. Gradients of netD's weights too (returned, unused), as
    ``errG.backward()`` computes them in PyTorch and in run.py's graph."""

    def __init__(self, netG, netD, opt):
        super().__init__(auto_prefix=False)
        self.netG, self.netD, self.opt = netG, netD, opt
        self.n = len(opt.parameters)
        self.grad = ms.value_and_grad(self.forward, None, ms.ParameterTuple(
            list(opt.parameters) + list(netD.trainable_params())), has_aux=True)

    def forward(self, noise, label):
        out = self.netD(self.netG(noise))
        return bce(out, label), out

    def construct(self, noise, label):
        (loss, out), grads = self.grad(noise, label)
        self.opt(grads[:self.n])
        return loss, out, grads[self.n:]


def build(ngf, ndf, nz=100, nc=1):
    ms.set_seed(1)
    netG, netD = generator(nz, ngf, nc), Discriminator(ndf, nc)
    optD = nn.Adam(netD.trainable_params(), learning_rate=2e-4, beta1=0.5, beta2=0.999)
    optG = nn.Adam(netG.trainable_params(), learning_rate=2e-4, beta1=0.5, beta2=0.999)
    for net in (netG, netD):
        net.set_train(True)
    return netG, netD, DReal(netD, optD), DFake(netG, netD, optD), GStep(netG, netD, optG)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--ngf", type=int, default=16)
    p.add_argument("--ndf", type=int, default=16)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--mode", choices=("graph", "pynative"), default="graph")
    p.add_argument("--threads", type=int, default=0, help="mindspore.set_context(... runtime_num_threads) if > 0")
    p.add_argument("--profile", default="", help="a folder: run mindspore.Profiler over the timed steps")
    args = p.parse_args(argv)
    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE, device_target="CPU")
    if args.threads:
        ms.set_context(runtime_num_threads=args.threads)
    netG, netD, d_real, d_fake, g_step = build(args.ngf, args.ndf)
    rng = np.random.default_rng(0)
    real = ms.Tensor(rng.uniform(-1, 1, (args.batch, 1, args.size, args.size)).astype(np.float32))
    ones = ms.Tensor(np.ones(args.batch, np.float32))
    zeros = ms.Tensor(np.zeros(args.batch, np.float32))
    times = {"d_real": [], "d_fake": [], "g": [], "iteration": []}
    profiler = None
    for i in range(args.steps + 1):
        if i == 1 and args.profile:
            profiler = ms.Profiler(output_path=args.profile)
        noise = ms.Tensor(rng.standard_normal((args.batch, 100, 1, 1)).astype(np.float32))
        t0 = time.perf_counter()
        loss, _, grads = d_real(real, ones)
        loss.asnumpy()
        t1 = time.perf_counter()
        loss, _, fake = d_fake(noise, zeros, *grads)
        loss.asnumpy()
        t2 = time.perf_counter()
        loss, _, _ = g_step(noise, ones)
        loss.asnumpy()
        t3 = time.perf_counter()
        if i:  # the first iteration compiles
            for k, v in zip(times, (t1 - t0, t2 - t1, t3 - t2, t3 - t0)):
                times[k].append(v)
    if profiler is not None:
        profiler.analyse()
    print(json.dumps({"native_ms_" + k: statistics.median(v) for k, v in times.items()}))


if __name__ == "__main__":
    main()
