"""reinforce.py's per-time-step policy work and its end-of-episode backward, timed: run it through run.py
(MindSpore) or with real PyTorch.

    .venv/bin/python run.py --original bench/distributions_policy.py      # default mode: the step runs eagerly
    .venv-ref/bin/python bench/distributions_policy.py

Per time step (median over 50 after 10 warm-up): ``policy(state)`` (reinforce.py's Policy: Linear(4, 128), Dropout,
ReLU, Linear(128, 2), softmax), ``Categorical(probs)`` (argument validation on, PyTorch's default), ``m.sample()``,
``m.log_prob(action)``; then ``torch.cat(log_probs).sum().backward()`` over the 60 steps. Prints one JSON line, ms.
"""
import json
import statistics
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=0.6)
        self.affine2 = nn.Linear(128, 2)

    def forward(self, x):
        return F.softmax(self.affine2(F.relu(self.dropout(self.affine1(x)))), dim=1)


torch.manual_seed(0)
policy = Policy()
state = np.linspace(-0.05, 0.05, 4).astype(np.float32)
times = {"forward": [], "Categorical": [], "sample": [], "log_prob": []}
log_probs = []
for i in range(60):
    t0 = time.perf_counter()
    probs = policy(torch.from_numpy(state).float().unsqueeze(0))
    t1 = time.perf_counter()
    m = Categorical(probs)
    t2 = time.perf_counter()
    action = m.sample()
    t3 = time.perf_counter()
    log_probs.append(m.log_prob(action))
    t4 = time.perf_counter()
    action.item()
    if i >= 10:
        for key, dt in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            times[key].append(dt * 1e3)
t0 = time.perf_counter()
torch.cat(log_probs).sum().backward()
backward_ms = (time.perf_counter() - t0) * 1e3
print(json.dumps({**{f"{k}_ms": round(statistics.median(v), 3) for k, v in times.items()},
                  "backward_60_steps_ms": round(backward_ms, 1)}))
