"""Hand-written native MindSpore port of pt_original/train_gpt.py's model and step (nn.Cell, ``value_and_grad``,
the global-norm clip and ``nn.AdamWeightDecay`` in one ``mindspore.jit`` step), the anchor the compiled GPT step is measured
against: what MindSpore itself takes per training step on this CPU for the same shapes.

    python native_gpt.py [--n-layer 2 --n-head 4 --n-embd 64 --block-size 32 --batch-size 16] [--steps 60]
                         [--mode graph|pynative]

Same architecture as train_gpt.py's defaults: token + position embeddings (tied head), pre-norm blocks with causal
attention (matmul, a lower-triangular mask filled with -inf, softmax) and a GELU MLP, cross entropy over the
vocabulary (82 characters, as data/text/input.txt). Batches: random token ids from numpy (speed only; the losses are
not compared with anything). Prints one JSON line: first_step_s, median_step_s (wall), median_step_cpu_s, losses.
"""
import argparse
import json
import math
import statistics
import time

import numpy as np

import stack  # bench/stack.py, beside this file

stack.native_environment()
import mindspore as ms  # noqa: E402
from mindspore import nn, ops  # noqa: E402


class Attention(nn.Cell):
    def __init__(self, c, heads, block):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Dense(c, 3 * c)
        self.proj = nn.Dense(c, c)
        self.mask = ms.Tensor(np.tril(np.ones((block, block), np.float32)) == 0)
        self.scale = 1.0 / math.sqrt(c // heads)

    def construct(self, x):
        b, t, c = x.shape
        h = self.heads
        q, k, v = ops.split(self.qkv(x), c, 2)
        q = q.view(b, t, h, c // h).transpose(0, 2, 1, 3)
        k = k.view(b, t, h, c // h).transpose(0, 2, 1, 3)
        v = v.view(b, t, h, c // h).transpose(0, 2, 1, 3)
        scores = ops.matmul(q, k.transpose(0, 1, 3, 2)) * self.scale
        scores = ops.masked_fill(scores, self.mask[:t, :t], float("-inf"))
        y = ops.matmul(ops.softmax(scores, -1), v)
        return self.proj(y.transpose(0, 2, 1, 3).view(b, t, c))


class Block(nn.Cell):
    def __init__(self, c, heads, block):
        super().__init__()
        self.ln_1 = nn.LayerNorm((c,), epsilon=1e-5)
        self.attn = Attention(c, heads, block)
        self.ln_2 = nn.LayerNorm((c,), epsilon=1e-5)
        self.fc = nn.Dense(c, 4 * c)
        self.out = nn.Dense(4 * c, c)
        self.gelu = nn.GELU(approximate=False)

    def construct(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.out(self.gelu(self.fc(self.ln_2(x))))


class GPT(nn.Cell):
    def __init__(self, vocab, layers, heads, c, block):
        super().__init__()
        self.wte = nn.Embedding(vocab, c)
        self.wpe = nn.Embedding(block, c)
        self.h = nn.CellList([Block(c, heads, block) for _ in range(layers)])
        self.ln_f = nn.LayerNorm((c,), epsilon=1e-5)

    def construct(self, idx, targets):
        b, t = idx.shape
        x = self.wte(idx) + self.wpe(ops.arange(t))
        for block in self.h:
            x = block(x)
        logits = ops.matmul(self.ln_f(x), self.wte.embedding_table.T)  # the tied head
        return ops.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n-layer", type=int, default=2)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=64)
    p.add_argument("--block-size", type=int, default=32)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--vocab", type=int, default=82)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--mode", choices=["graph", "jit", "pynative"], default="jit",
                   help="jit: PyNative context, the step under mindspore.jit (as run.py compiles); graph: GRAPH_MODE "
                        "context and mindspore.jit; pynative: no jit")
    p.add_argument("--parts", choices=["step", "grad"], default="step",
                   help="step: forward, backward, clip and AdamW; grad: forward and backward only")
    p.add_argument("--context", default="", help="extra mindspore.set_context settings as JSON (experiments)")
    args = p.parse_args()
    if args.context:
        ms.set_context(**json.loads(args.context))
    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE)
    ms.set_device("CPU")
    ms.set_seed(0)
    net = GPT(args.vocab, args.n_layer, args.n_head, args.n_embd, args.block_size)
    params = net.trainable_params()
    decay = [q for q in params if len(q.shape) >= 2]
    rest = [q for q in params if len(q.shape) < 2]
    opt = nn.AdamWeightDecay([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                   learning_rate=1e-3, beta1=0.9, beta2=0.99, eps=1e-8)
    grad_fn = ms.value_and_grad(net, None, opt.parameters)

    def train_step(x, y):
        loss, grads = grad_fn(x, y)
        if args.parts == "grad":
            return loss, grads
        grads = ops.clip_by_global_norm(grads, 1.0)
        opt(grads)
        return loss

    step = train_step if args.mode == "pynative" else ms.jit(train_step)
    net.set_train()
    rng = np.random.default_rng(0)
    times, cpu, losses = [], [], []
    for _ in range(args.steps):
        x = ms.Tensor(rng.integers(0, args.vocab, (args.batch_size, args.block_size)).astype(np.int32))
        y = ms.Tensor(rng.integers(0, args.vocab, (args.batch_size, args.block_size)).astype(np.int32))
        t0, c0 = time.perf_counter(), time.process_time()
        out = step(x, y)
        losses.append(float((out[0] if isinstance(out, tuple) else out).asnumpy()))
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    print(json.dumps({"mode": args.mode, "config": vars(args), "first_step_s": times[0],
                      "median_step_s": statistics.median(times[1:]),
                      "median_step_cpu_s": statistics.median(cpu[1:]), "losses": losses[:5] + losses[-2:]}))


if __name__ == "__main__":
    main()
