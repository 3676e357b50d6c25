"""Cost of ``torch.einsum`` (patches/einsum.py) against the same computation written with bmm/matmul, one process.

(a) eager (PyNative) time per call of ``einsum("bqd,bkd->bqk")`` on (8, 16, 32) float32 operands vs
    ``torch.bmm(q, k.transpose(1, 2))``, 500 calls after 20 warm-up ones;
(b) graph-mode compile of forward+gradient of tests/fixtures/einsum_train.py's model (8 einsum calls: projections,
    attention, a diagonal, three operands, ellipsis, implicit output) vs the same model written with matmul /
    diagonal / sum, compiled first in the same process: process CPU seconds (these machines are shared; CPU time
    varies less than wall time).

    .venv/bin/python bench/einsum_bench.py        # prints one JSON line
"""
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main():
    from app.bootstrap import setup_mindspore
    setup_mindspore("CPU")
    from patches import install
    install("pre-import")
    import mindtorch.tools.mstorch_enable  # noqa: F401 (the import hook)
    import torch
    install("post-import")
    import mindspore as ms
    import numpy as np
    from adapter.graph_semantics import run_cell

    result = {}
    q, k = torch.rand(8, 16, 32), torch.rand(8, 16, 32)
    for name, call in (("einsum", lambda: torch.einsum("bqd,bkd->bqk", q, k)),
                       ("bmm", lambda: torch.bmm(q, k.transpose(1, 2)))):
        for _ in range(20):
            call()
        t = time.perf_counter()
        for _ in range(500):
            call()
        result[f"eager_us_per_call_{name}"] = round((time.perf_counter() - t) / 500 * 1e6, 1)

    class Net(torch.nn.Module):
        def __init__(self, plain, d=4):
            super().__init__()
            rng = np.random.RandomState(0)

            def param(*shape):
                return torch.nn.Parameter(torch.tensor(rng.uniform(-0.5, 0.5, shape), dtype=torch.float32))

            self.plain = plain
            self.wq, self.wk, self.wv, self.mix, self.head = (param(d, d), param(d, d), param(d, d), param(d, d),
                                                              param(d))

        def forward(self, x):
            if self.plain:
                q, k, v = x @ self.wq, x @ self.wk, x @ self.wv
                h = ((q @ k.transpose(1, 2)) / 2.0).softmax(-1) @ v
                h = h + torch.diagonal(self.mix)
                g = ((h @ self.mix) * h).sum(-1)
                return (h * self.head).sum(-1) + 0.1 * g
            q = torch.einsum("bnd,de->bne", x, self.wq)
            k = torch.einsum("bnd,de->bne", x, self.wk)
            v = torch.einsum("bnd,de->bne", x, self.wv)
            h = torch.einsum("bqk,bkd->bqd", (torch.einsum("bqd,bkd->bqk", q, k) / 2.0).softmax(-1), v)
            h = h + torch.einsum("ii->i", self.mix)
            g = torch.einsum("bnd,de,bne->bn", h, self.mix, h)
            return torch.einsum("...d,d->...", h, self.head) + 0.1 * torch.einsum("bn", g)

    class Grad(ms.nn.Cell):
        def __init__(self, net):
            super().__init__()
            self.net = net
            self.grad = ms.ops.GradOperation(get_by_list=True)
            self.weights = ms.ParameterTuple(net.trainable_params())

        def construct(self, x):
            return self.grad(self.net, self.weights)(x)

    x = torch.rand(2, 3, 4)
    for name, plain in (("plain", True), ("einsum", False)):
        cpu = time.process_time()
        run_cell(Grad(Net(plain)), x)
        result[f"compile_cpu_s_{name}"] = round(time.process_time() - cpu, 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
