"""RSS of torch.optim.SGD's (or Adam's / AdamW's) construction and first steps on 4x Linear(4096, 4096) (256 MB of
float32 weights).

    .venv/bin/python run.py --mode pynative --original bench/sgd_slots_rss.py [--momentum 0.9]
    .venv/bin/python run.py --mode pynative --original bench/sgd_slots_rss.py --optimizer adam [--amsgrad]

Prints one JSON line: RSS (MB, /proc/self/status VmRSS) after the model, after ``torch.optim.SGD(...)``, after 2
steps, the peak (VmHWM), and the bytes held by the optimizer's own Parameters (the weights, lrs, slots).
docs/memory.md, "SGD slots" and "Adam slots" (patches/sgd.py, patches/adam_slots.py).
"""
import argparse
import json

import torch


def rss_mb(field: str = "VmRSS") -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


parser = argparse.ArgumentParser()
parser.add_argument("--momentum", type=float, default=0.0, help="SGD's momentum")
parser.add_argument("--optimizer", choices=("sgd", "adam", "adamw"), default="sgd")
parser.add_argument("--amsgrad", action="store_true", help="Adam's / AdamW's amsgrad")
args = parser.parse_args()
torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096, bias=False) for _ in range(4)])
x = torch.randn(8, 4096)
out = {"optimizer": args.optimizer, "momentum": args.momentum, "amsgrad": args.amsgrad, "model": rss_mb()}
if args.optimizer == "sgd":
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=args.momentum)
else:
    cls = torch.optim.Adam if args.optimizer == "adam" else torch.optim.AdamW
    opt = cls(model.parameters(), lr=0.001, amsgrad=args.amsgrad)
out["after_optimizer"] = rss_mb()
for _ in range(2):
    opt.zero_grad()
    model(x).square().mean().backward()
    opt.step()
out["after_2_steps"] = rss_mb()
out["peak"] = rss_mb("VmHWM")
out["optimizer_param_bytes"] = sum(int(p.nbytes) for p in opt.get_parameters())
out["state_keys"] = sorted(opt.state_dict()["state"])
print(json.dumps(out))
