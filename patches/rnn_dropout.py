"""``nn.RNN`` / ``nn.GRU`` / ``nn.LSTM(dropout=p)``: the dropout between layers only in training mode, as PyTorch.

MindTorch 0.4.0's ``RNNBase._run_recurrent`` and ``LSTM._run_recurrent`` (``mindtorch/torch/nn/modules/rnn.py``)
drop the outputs of every layer but the last with ``ms.ops.dropout(output, self.dropout)``, whose ``training``
argument defaults to True: a multi-layer recurrent module with ``dropout > 0`` kept dropping (and rescaling by
``1/(1-p)``) after ``model.eval()`` and under ``torch.no_grad()``. Evaluation was random and wrong, silently:
pytorch/examples word_language_model (2-layer LSTM, dropout 0.2) printed "valid loss 6.26" where PyTorch printed
6.60 from the same weights and batches (``run.py --compare``), and two eval calls on the same input differed.
PyTorch (``torch/nn/modules/rnn.py``: ``_VF.lstm(..., self.dropout, self.training, ...)``) applies it only when
``self.training``.

Here both methods are MindTorch's code (``patches/_rnn_mindtorch.py``) (Apache-2.0, MindTorch 0.4.0), unchanged except that each inter-layer
dropout passes ``training=self.training``. In training mode the values are MindTorch's as before (same draws);
in eval mode a layer's output goes to the next layer unchanged, as PyTorch's. Compiled (graph-mode) forwards read
``self.training`` as a constant of the graph, like every other module's.

Replaces: ``torch.nn.modules.rnn.RNNBase._run_recurrent`` (RNN, GRU) and ``torch.nn.LSTM._run_recurrent``.
"""
from __future__ import annotations

from . import Patch, patch_attr


def apply() -> None:
    from adapter import backend

    from ._rnn_mindtorch import lstm_run_recurrent, rnn_run_recurrent
    patch_attr(*backend.internal_slot("RNNBase.run_recurrent"), rnn_run_recurrent)
    patch_attr(*backend.internal_slot("LSTM.run_recurrent"), lstm_run_recurrent)


PATCH = Patch("rnn_dropout", "nn.RNN/GRU/LSTM(dropout=p): the inter-layer dropout only in training mode (MindTorch "
              "dropped after model.eval() too: random, wrong evaluation)", "post-import", apply,
              replaces=("torch.nn.modules.rnn.RNNBase._run_recurrent", "torch.nn.LSTM._run_recurrent"))
