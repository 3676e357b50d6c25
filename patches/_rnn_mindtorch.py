"""MindTorch 0.4.0's ``RNNBase._run_recurrent`` and ``LSTM._run_recurrent`` (``mindtorch/torch/nn/modules/rnn.py``,
Apache-2.0), verbatim but for ``training=self.training`` in their inter-layer dropouts; installed by
``patches/rnn_dropout.py`` (imported there lazily: this module imports MindSpore)."""
import mindspore as ms


def rnn_run_recurrent(self, input, hx, length=None):
    """MindTorch 0.4.0's ``RNNBase._run_recurrent`` (RNN, GRU), verbatim but for ``training=self.training`` in
    the two inter-layer dropouts."""
    num_directions = 2 if self.bidirectional else 1

    pre_layer = input
    h_n = ()
    # For jit
    output = None

    if num_directions == 1:
        for i in range(self.num_layers):
            layer_params = self._get_weight_and_bias(num_directions, i, self.bias)
            output, h_t = self.rnn_cell(pre_layer, hx[i], length, *layer_params)
            h_n += (h_t,)

            pre_layer = ms.ops.dropout(output, self.dropout, training=self.training) \
                if (self.dropout != 0 and i < self.num_layers - 1) else output
    else:
        for i in range(self.num_layers):
            layer_params = \
                self._get_weight_and_bias(num_directions, i, self.bias)

            if length is None:
                x_b = ms.ops.reverse(pre_layer, [0])
            else:
                x_b = ms.ops.reverse_sequence(pre_layer, length, 0, 1)
            output, h_t = self.rnn_cell(pre_layer, hx[2 * i], length, *layer_params[0:4])
            output_b, h_t_b = self.rnn_cell(x_b, hx[2 * i + 1], length, *layer_params[4:])

            if length is None:
                output_b = ms.ops.reverse(output_b, [0])
            else:
                output_b = ms.ops.reverse_sequence(output_b, length, 0, 1)
            output = ms.ops.concat((output, output_b), 2)
            h_n += (h_t,)
            h_n += (h_t_b,)

            pre_layer = ms.ops.dropout(output, self.dropout, training=self.training) \
                if (self.dropout != 0 and i < self.num_layers - 1) else output

    h_n = ms.ops.concat(h_n, 0)
    h_n = h_n.view(hx.shape)

    return output, h_n


def lstm_run_recurrent(self, input, hx, length=None):
    """MindTorch 0.4.0's ``LSTM._run_recurrent``, verbatim but for ``training=self.training`` in the two
    inter-layer dropouts."""
    num_directions = 2 if self.bidirectional else 1

    pre_layer = input
    h_n = ()
    c_n = ()
    # For jit
    output = None

    if num_directions == 1:
        for i in range(self.num_layers):
            if self.proj_size:
                layer_params = self._get_weight_and_bias(num_directions, i, self.bias, True)
            else:
                layer_params = self._get_weight_and_bias(num_directions, i, self.bias, False)

            h_i = (hx[0][i], hx[1][i])

            if self.proj_size:
                output, hc_t = self.lstm_cell_proj(pre_layer, h_i, length, *layer_params)
            else:
                output, hc_t = self.lstm_cell(pre_layer, h_i, length, *layer_params)

            h_t, c_t = hc_t
            h_n += (h_t,)
            c_n += (c_t,)

            pre_layer = ms.ops.dropout(output, self.dropout, training=self.training) \
                if (self.dropout != 0 and i < self.num_layers - 1) else output
    else:
        for i in range(self.num_layers):
            if self.proj_size > 0:
                layer_params = self._get_weight_and_bias(num_directions, i, self.bias, True)
            else:
                layer_params = self._get_weight_and_bias(num_directions, i, self.bias, False)

            x_b = ms.ops.reverse(pre_layer, [0])
            h_i = (hx[0][2 * i], hx[1][2 * i])
            h_b_i = (hx[0][2 * i + 1], hx[1][2 * i + 1])

            if length is None:
                x_b = ms.ops.reverse(pre_layer, [0])
            else:
                x_b = ms.ops.reverse_sequence(pre_layer, length, 0, 1)

            if self.proj_size > 0:
                output, hc_t = self.lstm_cell_proj(
                    pre_layer, h_i, length, *layer_params[:5])
                output_b, hc_t_b = self.lstm_cell_proj(
                    x_b, h_b_i, length, *layer_params[5:])
            else:
                output, hc_t = self.lstm_cell(pre_layer, h_i, length, *layer_params[:4])
                output_b, hc_t_b = self.lstm_cell(x_b, h_b_i, length, *layer_params[4:])

            if length is None:
                output_b = ms.ops.reverse(output_b, [0])
            else:
                output_b = ms.ops.reverse_sequence(output_b, length, 0, 1)

            output = ms.ops.concat((output, output_b), 2)
            h_t, c_t = hc_t
            h_t_b, c_t_b = hc_t_b
            h_n += (h_t,)
            h_n += (h_t_b,)
            c_n += (c_t,)
            c_n += (c_t_b,)

            pre_layer = ms.ops.dropout(output, self.dropout, training=self.training) \
                if (self.dropout != 0 and i < self.num_layers - 1) else output

    h_n = ms.ops.concat(h_n, 0)
    h_n = h_n.view(hx[0].shape)
    c_n = ms.ops.concat(c_n, 0)
    c_n = c_n.view(hx[1].shape)

    return output, h_n, c_n
