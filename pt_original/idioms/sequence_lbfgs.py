"""Idioms of pytorch/examples time_sequence_prediction: sine waves generated with numpy and saved with ``torch.save``;
``torch.load`` of that numpy array refused by default (``weights_only=True`` since PyTorch 2.6: an
``UnpicklingError``), then loaded with ``weights_only=False``; two ``nn.LSTMCell`` unrolled by hand over
``input.split(1, dim=1)`` with ``h_t``/``c_t`` from ``torch.zeros(..., dtype=torch.double)``, predictions fed back
for ``future`` steps, ``torch.stack(outputs, 1).squeeze(2)``; the model in float64 (``.double()``); ``optim.LBFGS``
stepped with a closure that zeroes the gradients, computes the MSE loss, prints it and calls backward.
"""
# corpus: {"compiled": false}
import pickle

import numpy as np
import torch
import torch.nn as nn

from _idiom_common import metric, numpy_init, report


class Sequence(nn.Module):
    def __init__(self, hidden=8):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        c_t = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.stack(outputs, 1).squeeze(2)


def main():
    rng = np.random.RandomState(50)
    x = np.arange(16)[None, :] + rng.randint(-8, 8, (6, 1))
    torch.save(np.sin(x / 2.0).astype("float64"), "traindata.pt")
    try:
        data = torch.load("traindata.pt")
        metric("load", "refused", 0)
    except pickle.UnpicklingError:
        metric("load", "refused", 1)
        data = torch.load("traindata.pt", weights_only=False)
    inp = torch.from_numpy(data[2:, :-1])
    target = torch.from_numpy(data[2:, 1:])
    test_input = torch.from_numpy(data[:2, :-1])
    test_target = torch.from_numpy(data[:2, 1:])
    seq = numpy_init(Sequence(), 51).double()
    criterion = nn.MSELoss()
    optimizer = torch.optim.LBFGS(seq.parameters(), lr=0.8, max_iter=4)
    calls = [0]

    def closure():
        optimizer.zero_grad()
        out = seq(inp)
        loss = criterion(out, target)
        report("lbfgs", calls[0], loss.item())
        calls[0] += 1
        loss.backward()
        return loss

    for step in range(2):
        optimizer.step(closure)
        with torch.no_grad():
            future = 4
            pred = seq(test_input, future=future)
            metric("lbfgs", f"test_loss_{step}", criterion(pred[:, :-future], test_target).item())


if __name__ == "__main__":
    main()
