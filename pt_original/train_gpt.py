"""Train a small character-level GPT (a decoder-only transformer) on a text file, in plain PyTorch.

Written for this project as a transformer workload of today's style (issue 31, section 6): it runs as
``python train_gpt.py`` with real PyTorch, and unchanged on MindSpore with
``python run.py --original pt_original/train_gpt.py``. Nothing is downloaded: the text is a local file
(``scripts/stage_text_data.py`` builds ``data/text/input.txt`` from licence texts found on every Debian machine).

What it exercises:
* token and position embeddings held in an ``nn.ModuleDict`` and reached by attribute (``self.transformer.wte``);
* the token embedding tied to the output layer (one Parameter under two names);
* causal self-attention through ``F.scaled_dot_product_attention(is_causal=True, dropout_p=...)``, or, with
  ``--manual-attention``, through a lower-triangular mask buffer sliced to the sequence length, ``masked_fill`` with
  ``-inf`` and a softmax;
* AdamW with a weight-decay group (matrices) and a no-decay group (biases, LayerNorm weights);
* ``GradScaler`` (``--grad-scaler``; disabled it passes everything through), ``clip_grad_norm_``, gradient
  accumulation, a cosine learning rate with linear warm-up written into ``param_groups`` by hand;
* evaluation under ``no_grad`` every ``--eval-interval`` iterations, ``torch.save`` / ``torch.load`` checkpoints and
  resuming, sampling with ``multinomial`` over the top-k logits.

Printed lines (parsed by the tests): ``iter N: loss X, lr Y, Z ms``, ``eval N: train X, val Y``, ``sample: ...``.
"""
import argparse
import math
import os
import time

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="character-level GPT training on a local text file")
    p.add_argument("--data", default="data/text/input.txt", help="the training text (UTF-8)")
    p.add_argument("--out-dir", default="", help="write ckpt.pt here at each eval (empty: no checkpoint)")
    p.add_argument("--resume", action="store_true", help="continue from OUT_DIR/ckpt.pt")
    p.add_argument("--n-layer", type=int, default=2)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=64)
    p.add_argument("--block-size", type=int, default=32, help="context length in characters")
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--bias", type=int, default=1, help="1: Linear and LayerNorm layers have biases")
    p.add_argument("--manual-attention", action="store_true",
                   help="masked softmax attention instead of F.scaled_dot_product_attention")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--grad-accum", type=int, default=1, help="micro-batches per optimizer step")
    p.add_argument("--max-iters", type=int, default=300)
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    p.add_argument("--min-lr", type=float, default=1e-4)
    p.add_argument("--warmup-iters", type=int, default=20)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--beta2", type=float, default=0.99)
    p.add_argument("--grad-clip", type=float, default=1.0, help="0: no clipping")
    p.add_argument("--grad-scaler", action="store_true", help="scale the loss with torch.amp.GradScaler")
    p.add_argument("--eval-interval", type=int, default=100)
    p.add_argument("--eval-iters", type=int, default=10)
    p.add_argument("--log-interval", type=int, default=10)
    p.add_argument("--batch-rng", choices=["torch", "numpy"], default="torch",
                   help="where batch offsets are drawn: torch.randint, or numpy (same batches on any framework)")
    p.add_argument("--sample-chars", type=int, default=100, help="characters sampled at the end (0: none)")
    p.add_argument("--top-k", type=int, default=10)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1337)
    return p.parse_args(argv)


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention where position t sees positions <= t. Input and output (B, T, C)."""

    def __init__(self, n_embd, n_head, block_size, dropout, bias, manual):
        super().__init__()
        assert n_embd % n_head == 0, "n_embd must be a multiple of n_head"
        self.n_head = n_head
        self.dropout = dropout
        self.manual = manual
        self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=bias)  # queries, keys and values in one matmul
        self.c_proj = nn.Linear(n_embd, n_embd, bias=bias)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        if manual:
            ones = torch.ones(block_size, block_size)
            self.register_buffer("causal", torch.tril(ones).view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        head = C // self.n_head
        q, k, v = self.c_attn(x).split(C, dim=2)
        # (B, T, C) -> (B, heads, T, head size)
        q = q.view(B, T, self.n_head, head).transpose(1, 2)
        k = k.view(B, T, self.n_head, head).transpose(1, 2)
        v = v.view(B, T, self.n_head, head).transpose(1, 2)
        if self.manual:
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(head))
            scores = scores.masked_fill(self.causal[:, :, :T, :T] == 0, float("-inf"))
            weights = F.softmax(scores, dim=-1)
            weights = self.attn_dropout(weights)
            y = weights @ v
        else:
            p = self.dropout if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=p, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class FeedForward(nn.Module):
    def __init__(self, n_embd, dropout, bias):
        super().__init__()
        self.fc = nn.Linear(n_embd, 4 * n_embd, bias=bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.fc(x))))


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, n_embd, n_head, block_size, dropout, bias, manual):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd, bias=bias)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, dropout, bias, manual)
        self.ln_2 = nn.LayerNorm(n_embd, bias=bias)
        self.mlp = FeedForward(n_embd, dropout, bias)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class CharGPT(nn.Module):
    def __init__(self, vocab_size, n_layer, n_head, n_embd, block_size, dropout, bias, manual):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            drop=nn.Dropout(dropout),
            h=nn.ModuleList([Block(n_embd, n_head, block_size, dropout, bias, manual) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd, bias=bias),
        ))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied: one Parameter, two names
        self.apply(self._init_weights)
        # residual projections start smaller, by 1/sqrt(2 * layers) (GPT-2 paper, section 2.3)
        for name, param in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(param, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        B, T = idx.size()
        assert T <= self.block_size, f"sequence of {T} longer than the block size {self.block_size}"
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, new_tokens, temperature=1.0, top_k=None):
        """Append ``new_tokens`` sampled tokens to ``idx`` (B, T) and return it, (B, T + new_tokens)."""
        for _ in range(new_tokens):
            context = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
            logits, _ = self(context)
            logits = logits[:, -1, :] / temperature
            if top_k:
                kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, [-1]]
                logits = logits.masked_fill(logits < kth, float("-inf"))
            probs = F.softmax(logits, dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx


def make_optimizer(model, args):
    """AdamW; matrices and embeddings decay, vectors (biases, LayerNorm) do not."""
    params = {name: p for name, p in model.named_parameters() if p.requires_grad}
    decay = [p for p in params.values() if p.dim() >= 2]
    no_decay = [p for p in params.values() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    print(f"decay: {len(decay)} tensors, {sum(p.numel() for p in decay)} values; "
          f"no decay: {len(no_decay)} tensors, {sum(p.numel() for p in no_decay)} values")
    return torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, args.beta2))


def lr_at(it, args):
    """Linear warm-up to --lr over --warmup-iters, then a half cosine down to --min-lr at --max-iters."""
    if it < args.warmup_iters:
        return args.lr * (it + 1) / (args.warmup_iters + 1)
    if it >= args.max_iters:
        return args.min_lr
    progress = (it - args.warmup_iters) / max(1, args.max_iters - args.warmup_iters)
    return args.min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (args.lr - args.min_lr)


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)

    with open(args.data, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)
    n = int(0.9 * len(data))
    splits = {"train": data[:n], "val": data[n:]}
    print(f"{len(text)} characters, vocabulary {len(chars)}; train {n}, val {len(data) - n}")

    def get_batch(split):
        src = splits[split]
        if args.batch_rng == "numpy":
            ix = torch.from_numpy(rng.integers(0, len(src) - args.block_size, size=args.batch_size))
        else:
            ix = torch.randint(len(src) - args.block_size, (args.batch_size,))
        x = torch.stack([src[i:i + args.block_size] for i in ix.tolist()])
        y = torch.stack([src[i + 1:i + 1 + args.block_size] for i in ix.tolist()])
        return x, y

    model_args = dict(vocab_size=len(chars), n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd,
                      block_size=args.block_size, dropout=args.dropout, bias=bool(args.bias),
                      manual=args.manual_attention)
    model = CharGPT(**model_args)
    print(f"{sum(p.numel() for p in model.parameters())} parameters")
    optimizer = make_optimizer(model, args)
    scaler = torch.amp.GradScaler("cpu", enabled=args.grad_scaler)

    start_iter, best_val = 0, float("inf")
    ckpt_path = os.path.join(args.out_dir, "ckpt.pt") if args.out_dir else ""
    if args.resume:
        ckpt = torch.load(ckpt_path, map_location="cpu")
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start_iter, best_val = ckpt["iter"], ckpt["best_val"]
        print(f"resumed from {ckpt_path} at iteration {start_iter}")

    @torch.no_grad()
    def estimate_loss():
        model.eval()
        out = {}
        for split in ("train", "val"):
            total = 0.0
            for _ in range(args.eval_iters):
                x, y = get_batch(split)
                _, loss = model(x, y)
                total += loss.item()
            out[split] = total / args.eval_iters
        model.train()
        return out

    t0 = time.time()
    it = start_iter
    x, y = get_batch("train")  # the first batch; each next one is fetched while the current step's forward ran
    while True:
        lr = lr_at(it, args)
        for group in optimizer.param_groups:
            group["lr"] = lr
        if it % args.eval_interval == 0 or it == args.max_iters:
            losses = estimate_loss()
            print(f"eval {it}: train {losses['train']:.4f}, val {losses['val']:.4f}", flush=True)
            if ckpt_path and it > start_iter and losses["val"] < best_val:
                best_val = losses["val"]
                os.makedirs(args.out_dir, exist_ok=True)
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "iter": it,
                            "best_val": best_val, "model_args": model_args, "chars": chars}, ckpt_path)
                print(f"saved {ckpt_path}", flush=True)
        if it >= args.max_iters:
            break
        for _ in range(args.grad_accum):
            _, loss = model(x, y)
            loss = loss / args.grad_accum
            x, y = get_batch("train")
            scaler.scale(loss).backward()
        if args.grad_clip > 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        if it % args.log_interval == 0:
            t1 = time.time()
            print(f"iter {it}: loss {loss.item() * args.grad_accum:.6f}, lr {lr:.3e}, {(t1 - t0) * 1000:.1f} ms",
                  flush=True)
            t0 = t1
        it += 1

    if args.sample_chars > 0:
        model.eval()
        start = torch.tensor([[stoi.get("\n", 0)]], dtype=torch.long)
        out = model.generate(start, args.sample_chars, temperature=args.temperature, top_k=args.top_k)
        print("sample: " + repr("".join(chars[i] for i in out[0].tolist())), flush=True)


if __name__ == "__main__":
    main()
