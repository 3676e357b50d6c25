"""The layer loop of ``nn.RNN`` / ``nn.GRU`` / ``nn.LSTM`` over MindTorch's cells, with PyTorch's inter-layer dropout
(only when ``self.training``); installed by ``patches/rnn_dropout.py`` (imported there lazily: this module imports
MindSpore).

Layout (PyTorch's, ``torch.nn.RNNBase`` docs): ``h_0`` / ``c_0`` have shape ``(num_layers * num_directions, N, H)``
with the directions of a layer next to each other (index ``layer * num_directions + direction``); a bidirectional
layer's output is ``concat(forward, backward)`` on the feature axis (2), the backward pass running over the time axis
(0; MindTorch's cells take time-major input) reversed, or, with ``length`` (packed sequences), reversed within each
sequence's length. Weights per direction come from MindTorch's ``_get_weight_and_bias`` (4 tensors, or 5 with an
LSTM projection; ``None`` for missing biases). Written to run in MindSpore graph mode too: loops over Python ints,
tuples, no closures.
"""
import mindspore as ms


def _time_reversed(x, length):
    """``x`` ``(T, N, F)`` reversed over time; with ``length`` (``(N,)`` ints) each column within its length."""
    if length is None:
        return ms.ops.reverse(x, [0])
    return ms.ops.reverse_sequence(x, length, 0, 1)


def _next_input(self, output, layer):
    """What layer ``layer + 1`` reads: ``output``, dropped with probability ``self.dropout`` in training mode only
    (PyTorch: ``_VF.rnn(..., dropout, train, ...)``; no dropout after the last layer)."""
    if self.dropout == 0 or layer == self.num_layers - 1:
        return output
    return ms.ops.dropout(output, self.dropout, training=self.training)


def rnn_run_recurrent(self, input, hx, length=None):
    """``RNNBase._run_recurrent`` (RNN, GRU): ``input`` ``(T, N, F)``, ``hx`` ``(L * D, N, H)`` ->
    ``(output (T, N, D * H), h_n (L * D, N, H))``."""
    both = self.bidirectional
    directions = 2 if both else 1
    x = input
    finals = ()
    output = None
    for layer in range(self.num_layers):
        weights = self._get_weight_and_bias(directions, layer, self.bias)
        if both:
            half = len(weights) // 2
            ahead, h_ahead = self.rnn_cell(x, hx[2 * layer], length, *weights[:half])
            behind, h_behind = self.rnn_cell(_time_reversed(x, length), hx[2 * layer + 1], length, *weights[half:])
            output = ms.ops.concat((ahead, _time_reversed(behind, length)), 2)
            finals = finals + (h_ahead, h_behind)
        else:
            output, h_last = self.rnn_cell(x, hx[layer], length, *weights)
            finals = finals + (h_last,)
        x = _next_input(self, output, layer)
    return output, ms.ops.concat(finals, 0).view(hx.shape)


def _lstm_direction(self, x, state, length, weights):
    """One direction of one LSTM layer: ``(output, (h, c))`` from MindTorch's cell (with projection if any)."""
    if self.proj_size > 0:
        return self.lstm_cell_proj(x, state, length, *weights)
    return self.lstm_cell(x, state, length, *weights)


def lstm_run_recurrent(self, input, hx, length=None):
    """``LSTM._run_recurrent``: ``input`` ``(T, N, F)``, ``hx = (h_0, c_0)`` -> ``(output, h_n, c_n)``, shapes as
    in :func:`rnn_run_recurrent` (``h_n`` has the projection size when ``proj_size > 0``)."""
    both = self.bidirectional
    directions = 2 if both else 1
    h0, c0 = hx[0], hx[1]
    x = input
    hs = ()
    cs = ()
    output = None
    for layer in range(self.num_layers):
        weights = self._get_weight_and_bias(directions, layer, self.bias, self.proj_size > 0)
        if both:
            half = len(weights) // 2
            k = 2 * layer
            ahead, (h_a, c_a) = _lstm_direction(self, x, (h0[k], c0[k]), length, weights[:half])
            behind, (h_b, c_b) = _lstm_direction(self, _time_reversed(x, length), (h0[k + 1], c0[k + 1]), length,
                                                 weights[half:])
            output = ms.ops.concat((ahead, _time_reversed(behind, length)), 2)
            hs = hs + (h_a, h_b)
            cs = cs + (c_a, c_b)
        else:
            output, (h_last, c_last) = _lstm_direction(self, x, (h0[layer], c0[layer]), length, weights)
            hs = hs + (h_last,)
            cs = cs + (c_last,)
        x = _next_input(self, output, layer)
    return output, ms.ops.concat(hs, 0).view(h0.shape), ms.ops.concat(cs, 0).view(c0.shape)
