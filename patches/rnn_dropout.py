"""``nn.RNN`` / ``nn.GRU`` / ``nn.LSTM(dropout=p)``: the dropout between layers only in training mode, as PyTorch.

MindTorch 0.4.0's ``RNNBase._run_recurrent`` and ``LSTM._run_recurrent`` (``mindtorch/torch/nn/modules/rnn.py``)
drop the outputs of every layer but the last with ``ms.ops.dropout(output, self.dropout)``, whose ``training``
argument defaults to True: a multi-layer recurrent module with ``dropout > 0`` kept dropping (and rescaling by
``1/(1-p)``) after ``model.eval()`` and under ``torch.no_grad()``. Evaluation was random and wrong, silently:
two eval calls of a 3-layer LSTM(dropout=0.5) on the same input differed by 0.70 (summed |difference|; PyTorch:
0). Found running pytorch/examples word_language_model (2-layer LSTM, dropout 0.2), whose ``evaluate()`` runs the
LSTM in eval mode; there, after one training step, the effect is small (valid ppl 2763.22 -> 2763.16, PyTorch
2762.91; the rest is the random training-mode dropout of that step, which no two frameworks draw alike).
PyTorch (``torch/nn/modules/rnn.py``: ``_VF.lstm(..., self.dropout, self.training, ...)``) applies it only when
``self.training``.

Here both methods are ours (``patches/_rnn_layers.py``), over MindTorch's cells and weights; each inter-layer
dropout passes ``training=self.training``. In training mode the values are MindTorch's as before (same draws);
in eval mode a layer's output goes to the next layer unchanged, as PyTorch's. Compiled (graph-mode) forwards read
``self.training`` as a constant of the graph, like every other module's.

Replaces: ``torch.nn.modules.rnn.RNNBase._run_recurrent`` (RNN, GRU) and ``torch.nn.LSTM._run_recurrent``.
"""
from __future__ import annotations

from . import Patch, patch_attr


def apply() -> None:
    from adapter import backend

    from ._rnn_layers import lstm_run_recurrent, rnn_run_recurrent
    patch_attr(*backend.internal_slot("RNNBase.run_recurrent"), rnn_run_recurrent)
    patch_attr(*backend.internal_slot("LSTM.run_recurrent"), lstm_run_recurrent)


PATCH = Patch("rnn_dropout", "nn.RNN/GRU/LSTM(dropout=p): the inter-layer dropout only in training mode (MindTorch "
              "dropped after model.eval() too: random, wrong evaluation)", "post-import", apply,
              replaces=("torch.nn.modules.rnn.RNNBase._run_recurrent", "torch.nn.LSTM._run_recurrent"))
