"""``torch.nn.functional``: the functions the corpus calls (``F.relu``, ``F.log_softmax``, ``F.nll_loss``,
``F.cross_entropy``, ``F.binary_cross_entropy``, ``F.smooth_l1_loss``, ``F.max_pool2d``, ``F.adaptive_avg_pool2d``,
``F.interpolate``, ``F.dropout``...) and their neighbours, with keyword forms, reduction variants, 0-d and empty
inputs, float16 where PyTorch's CPU kernels take it, in-place forms, and PyTorch's errors."""
from app.tools.conformance.spec import Known
from app.tools.conformance.spec import C, T

X = T(2, 3, 8, 8)
LOGITS = T(4, 5)
TARGET = T(4, dtype="int64", high=5)

CASES = [
    # ------------------------------------------------------------------ activations
    C("F.relu(x)", x=T(2, 5)),                                                       # mnist, vae
    C("F.relu(x)", x=X),
    C("F.relu(x)", x=T()),
    C("F.relu(x)", x=T(0, 3)),
    C("F.relu(x)", x=T(2, 5, dtype="float16"), grad=False),
    C("F.relu(x)", x=T(2, 5, dtype="int64", low=-5, high=5)),
    C("F.relu(x * 1, inplace=True)", x=T(2, 5)),
    C("(F.relu(x, inplace=True), x)", x=T(2, 5), grad=False, sig="torch.nn.functional.relu(1;inplace)"),
    C("F.relu(input=x)", x=T(2, 5)),
    C("F.relu6(x * 4)", x=T(2, 5)),
    C("F.leaky_relu(x, 0.2)", x=T(2, 5)),
    C("F.leaky_relu(x, negative_slope=0.2, inplace=False)", x=T(2, 5)),
    C("F.hardswish(x * 4)", x=T(2, 5)),
    C("F.hardsigmoid(x * 4)", x=T(2, 5)),
    C("F.silu(x)", x=T(2, 5)),
    C("F.gelu(x)", x=T(2, 5)),
    C("F.gelu(x, approximate='tanh')", x=T(2, 5)),
    C("F.elu(x)", x=T(2, 5)),
    C("F.softplus(x)", x=T(2, 5)),
    C("F.logsigmoid(x)", x=T(2, 5)),
    C("F.sigmoid(x)", x=T(2, 5)),
    C("F.tanh(x)", x=T(2, 5)),
    # ------------------------------------------------------------------ softmax family
    C("F.log_softmax(x, dim=1)", x=T(4, 10)),                                          # mnist, mnist_rnn
    C("F.log_softmax(x, 1)", x=T(4, 10)),
    C("F.log_softmax(x, dim=-1)", x=T(2, 3, 4)),
    C("F.log_softmax(x, dim=0)", x=T()),
    C("F.log_softmax(x, dim=1)", x=T(0, 10)),
    C("F.log_softmax(x * 100, dim=1)", x=T(4, 10)),                                    # large logits: stable
    C("F.log_softmax(x, dim=1)", x=T(4, 10, dtype="float16"), grad=False),
    C("F.log_softmax(x, dim=2)", x=T(4, 10)),                                          # bad dim: raises
    C("F.log_softmax(x, dim=1, dtype=torch.float64)", x=T(4, 10)),
    C("F.softmax(x, dim=1)", x=T(4, 10)),
    C("F.softmax(x, dim=-1)", x=T(2, 3, 4)),
    C("F.softmax(x, 0)", x=T(5)),
    C("F.softmax(x, dim=1)", x=T(4, 10, dtype="float16"), grad=False),
    C("F.softmin(x, dim=1)", x=T(4, 10)),
    # ------------------------------------------------------------------ losses
    C("F.nll_loss(F.log_softmax(x, dim=1), t)", x=LOGITS, t=TARGET),                   # mnist
    C("F.nll_loss(x, t)", x=LOGITS, t=TARGET),
    C("F.nll_loss(x, t, reduction='sum')", x=LOGITS, t=TARGET),                        # mnist test loop
    C("F.nll_loss(x, t, reduction='none')", x=LOGITS, t=TARGET),
    C("F.nll_loss(x, t, reduction='sum').item()", x=LOGITS, t=TARGET, grad=False, graph=False,
      sig="torch.nn.functional.nll_loss(2;reduction)"),
    C("F.nll_loss(x, t, ignore_index=2)", x=LOGITS, t=T(4, dtype="int64", high=3)),
    C("F.nll_loss(x, t, weight=w)", x=LOGITS, t=TARGET, w=T(5, kind="pos", grad=False)),
    C("F.nll_loss(x, t)", x=T(2, 3, 4), t=T(2, 4, dtype="int64", high=3)),
    C("F.nll_loss(x, t)", x=LOGITS, t=T(4, dtype="int64", low=3, high=8)),             # target out of range
    C("F.nll_loss(x, t)", x=LOGITS, t=T(3, dtype="int64", high=5)),                    # batch mismatch: raises
    C("F.nll_loss(x, t)", x=T(0, 5), t=T(0, dtype="int64")),                           # empty: nan
    C("F.cross_entropy(x, t)", x=LOGITS, t=TARGET),                                     # ddp tutorial
    C("F.cross_entropy(x, t, reduction='sum')", x=LOGITS, t=TARGET),
    C("F.cross_entropy(x, t, reduction='none')", x=LOGITS, t=TARGET),
    C("F.cross_entropy(x, t, label_smoothing=0.1)", x=LOGITS, t=TARGET),
    C("F.cross_entropy(x, t.softmax(1))", x=LOGITS, t=T(4, 5, grad=False)),
    C("F.cross_entropy(x, t)", x=T(5), t=T(dtype="int64", high=5)),                    # unbatched
    C("F.cross_entropy(x, t)", x=LOGITS, t=T(4, dtype="int64", low=-3, high=0)),       # negative target
    C("F.cross_entropy(x, t)", x=LOGITS, t=T(4, 5, dtype="int64", high=5)),            # shape mismatch: raises
    C("F.mse_loss(x, y)", x=T(3, 4), y=T(3, 4)),
    C("F.mse_loss(x, y, reduction='sum')", x=T(3, 4), y=T(3, 4, grad=False)),
    C("F.mse_loss(x, y, reduction='none')", x=T(3, 4), y=T(3, 4, grad=False)),
    C("F.mse_loss(x, y)", x=T(), y=T(grad=False)),
    C("F.mse_loss(x, y)", x=T(0, 4), y=T(0, 4, grad=False)),
    C("F.mse_loss(x * b, y, reduction='sum')", x=T(0, 3), y=T(0, 3, grad=False), b=T(3, param=True)),  # 0, b's grad 0
    C("F.l1_loss(x, y)", x=T(0, 4), y=T(0, 4, grad=False)),
    C("F.mse_loss(x, y)", x=T(3, 4, dtype="float16"), y=T(3, 4, dtype="float16"), grad=False),
    C("F.l1_loss(x, y)", x=T(3, 4), y=T(3, 4)),
    C("F.l1_loss(x, y, reduction='sum')", x=T(3, 4), y=T(3, 4, grad=False)),
    C("F.smooth_l1_loss(x, y)", x=T(4, 1), y=T(4, 1, grad=False)),                     # regression
    C("F.smooth_l1_loss(x * 2, y)", x=T(4, 3), y=T(4, 3)),
    C("F.smooth_l1_loss(x, y, beta=0.5)", x=T(4, 3), y=T(4, 3, grad=False)),
    C("F.smooth_l1_loss(x, y, reduction='sum')", x=T(4, 3), y=T(4, 3, grad=False)),
    C("F.smooth_l1_loss(x, y)", x=T(4, 1), y=T(4, grad=False)),                        # broadcast (warns)
    C("F.huber_loss(x * 2, y, delta=0.5)", x=T(4, 3), y=T(4, 3, grad=False)),
    C("F.binary_cross_entropy(x, y, reduction='sum')", x=T(4, 6, kind="rand"), y=T(4, 6, kind="rand", grad=False)),
    C("F.binary_cross_entropy(torch.sigmoid(x), y, reduction='sum')", x=T(4, 6), y=T(4, 6, kind="rand", grad=False)),
    C("F.binary_cross_entropy(x, y)", x=T(4, 6, kind="rand"), y=T(4, 6, kind="rand", grad=False)),
    C("F.binary_cross_entropy(x, y, reduction='none')", x=T(4, 6, kind="rand"), y=T(4, 6, kind="rand", grad=False)),
    C("F.binary_cross_entropy(x, y, weight=w)", x=T(4, 6, kind="rand"), y=T(4, 6, kind="rand", grad=False),
      w=T(6, kind="pos", grad=False)),
    C("F.binary_cross_entropy(x, y)", x=T(4, 6, kind="rand"), y=T(4, 6, kind="rand")),   # target gradient
    C("F.binary_cross_entropy(x * 0, y, reduction='sum')", x=T(4, kind="rand"), y=T(4, kind="rand", grad=False)),
    C("F.binary_cross_entropy(x, y)", x=T(4, kind="pos"), y=T(4, kind="rand", grad=False)),  # x > 1: raises
    C("F.binary_cross_entropy(x, y)", x=T(4, 2, kind="rand"), y=T(4, kind="rand", grad=False)),  # shapes: raises
    C("F.binary_cross_entropy_with_logits(x, y)", x=T(4, 3), y=T(4, 3, kind="rand", grad=False)),
    C("F.binary_cross_entropy_with_logits(x, y, reduction='sum')", x=T(4, 3), y=T(4, 3, kind="rand", grad=False)),
    C("F.binary_cross_entropy_with_logits(x, y, pos_weight=p)", x=T(4, 3), y=T(4, 3, kind="rand", grad=False),
      p=T(3, kind="pos", grad=False)),
    C("F.binary_cross_entropy_with_logits(x * 50, y)", x=T(4, 3), y=T(4, 3, kind="rand", grad=False)),
    C("F.kl_div(x.log_softmax(1), y.softmax(1), reduction='batchmean')", x=T(3, 4), y=T(3, 4, grad=False)),
    C("F.kl_div(x.log_softmax(1), y.softmax(1), reduction='sum')", x=T(3, 4), y=T(3, 4, grad=False)),
    C("F.cosine_similarity(x, y)", x=T(3, 4), y=T(3, 4)),
    C("F.cosine_similarity(x, y, dim=0)", x=T(3, 4), y=T(3, 4)),
    C("F.pairwise_distance(x, y)", x=T(3, 4), y=T(3, 4)),
    C("F.margin_ranking_loss(x, y, t)", x=T(4), y=T(4), t=T(4, dtype="float32", kind="bool", grad=False)),
    # ------------------------------------------------------------------ dropout
    C("F.dropout(x, 0.5, training=False)", x=X),
    C("F.dropout(x, p=0.5, training=True)", x=X, values=False),
    C("F.dropout(x, 0.5)", x=X, values=False),                                          # training defaults True
    C("(lambda y: ((y == 0) | (y == x * 2)).all())(F.dropout(x, 0.5))", x=X, grad=False, graph=False,
      sig="torch.nn.functional.dropout(2)"),
    C("F.dropout(x, p=0.0)", x=X),
    C("F.dropout(x, p=1.0)", x=X),
    C("F.dropout(x, p=1.5)", x=X),                                                       # p out of range: raises
    C("F.dropout(x * 1, 0.2, True, True)", x=X, values=False),
    C("F.dropout2d(x, 0.5, training=False)", x=X),
    C("F.dropout2d(x, 0.5)", x=X, values=False),
    C("(lambda y: ((y == 0).flatten(2).all(2) | (y == x * 2).flatten(2).all(2)).all())(F.dropout2d(x, 0.5))",
      x=T(4, 8, 3, 3), grad=False, graph=False, sig="torch.nn.functional.dropout2d(2)"),
    C("F.alpha_dropout(x, 0.5, training=False)", x=X),
    # ------------------------------------------------------------------ pooling
    C("F.max_pool2d(x, 2)", x=X),                                                       # mnist
    C("F.max_pool2d(x, 2)", x=T(2, 3, 7, 7)),
    C("F.max_pool2d(x, kernel_size=3, stride=2, padding=1)", x=X),
    C("F.max_pool2d(x, 2, 2)", x=T(3, 6, 6)),
    C("F.max_pool2d(x, 2, ceil_mode=True)", x=T(2, 3, 7, 7)),
    C("F.max_pool2d(x, 2, return_indices=True)", x=T(1, 2, 4, 4)),
    C("F.max_pool2d(x, 2)", x=T(1, 2, 4, 4, dtype="float16"), grad=False),
    C("F.max_pool2d(x, 3, padding=2)", x=X),                                            # pad > k/2: raises
    C("F.avg_pool2d(x, 2)", x=X),
    C("F.avg_pool2d(x, 3, stride=2, padding=1)", x=T(2, 3, 7, 7)),
    C("F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)", x=T(2, 3, 7, 7)),
    C("F.adaptive_avg_pool2d(x, (1, 1))", x=X),                                         # mobilenetv2
    C("F.adaptive_avg_pool2d(x, 1)", x=X),
    C("F.adaptive_avg_pool2d(x, (3, 2))", x=T(1, 2, 7, 5)),
    C("F.adaptive_avg_pool2d(x, 1).flatten(1)", x=X, sig="torch.nn.functional.adaptive_avg_pool2d(2)"),
    C("F.adaptive_max_pool2d(x, (1, 1))", x=X),
    C("F.adaptive_avg_pool1d(x, 1)", x=T(2, 3, 5)),
    # ------------------------------------------------------------------ convolution / linear / norm
    C("F.conv2d(x, w)", x=X, w=T(4, 3, 3, 3)),
    C("F.conv2d(x, w, b, stride=2, padding=1)", x=X, w=T(4, 3, 3, 3), b=T(4)),
    C("F.conv2d(x, w, None, 1, 1, 1, 3)", x=X, w=T(3, 1, 3, 3)),
    C("F.conv_transpose2d(x, w, stride=2, padding=1)", x=T(1, 4, 3, 3), w=T(4, 2, 4, 4)),
    C("F.linear(x, w, b)", x=T(2, 4), w=T(3, 4), b=T(3)),
    C("F.linear(x, w)", x=T(2, 5, 4), w=T(3, 4)),
    C("F.linear(x, w, b)", x=T(0, 4), w=T(3, 4), b=T(3)),                             # empty batch: w, b grads 0
    C("F.linear(x, w, b)", x=T(2, 0), w=T(3, 0), b=T(3)),                             # no features: the bias
    C("F.linear(x, w)", x=T(2, 0, 4), w=T(3, 4)),
    C("F.batch_norm(x, rm, rv, w, b, training=False)", x=T(2, 3, 4, 4), rm=T(3, grad=False),
      rv=T(3, kind="pos", grad=False), w=T(3), b=T(3)),
    C("(F.batch_norm(x, rm, rv, training=True, momentum=0.1), rm, rv)", x=T(2, 3, 4, 4), rm=T(3, grad=False),
      rv=T(3, kind="pos", grad=False), sig="torch.nn.functional.batch_norm(3;momentum,training)"),
    C("F.layer_norm(x, (4,))", x=T(2, 3, 4)),
    C("F.layer_norm(x, (4,), w, b)", x=T(2, 3, 4), w=T(4), b=T(4)),
    C("F.group_norm(x, 2)", x=T(2, 4, 3, 3)),
    C("F.embedding(t, w)", t=T(2, 3, dtype="int64", high=6), w=T(6, 4)),
    C("F.pixel_shuffle(x, 2)", x=T(1, 8, 3, 3)),
    C("F.pixel_unshuffle(x, 2)", x=T(1, 2, 4, 4)),
    # ------------------------------------------------------------------ interpolate / pad / normalize / one_hot
    C("F.interpolate(x, scale_factor=2, mode='nearest')", x=T(1, 2, 3, 3)),
    C("F.interpolate(x, scale_factor=2)", x=T(1, 2, 3, 3)),
    C("F.interpolate(x, size=(5, 7), mode='nearest')", x=T(1, 2, 3, 3)),
    C("F.interpolate(x, size=(6, 6), mode='bilinear', align_corners=False)", x=T(1, 2, 3, 3)),
    C("F.interpolate(x, size=(6, 6), mode='bilinear', align_corners=True)", x=T(1, 2, 3, 3)),
    C("F.interpolate(x, scale_factor=0.5, mode='bilinear', align_corners=False)", x=T(1, 2, 6, 6)),
    C("F.interpolate(x, size=(5, 4), mode='bicubic', align_corners=False)", x=T(1, 2, 3, 3)),
    C("F.interpolate(x, scale_factor=2, mode='linear')", x=T(1, 2, 3)),
    C("F.interpolate(x, size=(4, 4), scale_factor=2)", x=T(1, 2, 3, 3)),               # both given: raises
    C("F.pad(x, (1, 1))", x=T(2, 3, 4)),
    C("F.pad(x, (1, 1, 2, 0))", x=X),
    C("F.pad(x, (1, 1, 2, 0), value=0.5)", x=X),
    C("F.pad(x, (1, 1, 1, 1), mode='constant', value=-1.0)", x=X),
    C("F.pad(x, (2, 2, 2, 2), mode='reflect')", x=T(1, 2, 4, 4)),
    C("F.pad(x, (2, 1, 1, 2), mode='replicate')", x=T(1, 2, 4, 4)),
    C("F.pad(x, (1, 1, 1, 1), mode='circular')", x=T(1, 2, 4, 4)),
    C("F.pad(x, (-1, -1))", x=T(2, 3, 4)),                                                # negative: crop
    C("F.pad(x, (1, 1, 1))", x=T(2, 3, 4)),                                               # odd length: raises
    C("F.pad(x, (1, 1))", x=T(2, 3, dtype="int64")),
    C("F.normalize(x)", x=T(3, 4)),
    C("F.normalize(x, dim=1)", x=T(3, 4)),
    C("F.normalize(x, p=2, dim=1)", x=T(2, 3, 4)),
    C("F.normalize(x, p=1, dim=0)", x=T(3, 4)),
    C("F.normalize(x * 0, dim=1)", x=T(3, 4)),                                            # eps guards 0/0
    C("F.one_hot(t, 5)", t=T(4, dtype="int64", high=5)),
    C("F.one_hot(t, num_classes=5)", t=T(2, 3, dtype="int64", high=5)),
    C("F.one_hot(t)", t=T(6, dtype="int64", high=4)),
    C("F.one_hot(t, 5)", t=T(dtype="int64", high=5)),
    C("F.one_hot(t, 5)", t=T(0, dtype="int64", high=5)),
    C("F.one_hot(t, 3)", t=T(4, dtype="int64", low=3, high=6)),                          # out of range: raises
    C("F.one_hot(t, 3)", t=T(4, dtype="float32", kind="int", high=3), grad=False),        # float index: raises
    C("F.one_hot(t, 5).float()", t=T(4, dtype="int64", high=5), sig="torch.nn.functional.one_hot(2)"),
    # ------------------------------------------------------------------ misc
    C("F.unfold(x, 2)", x=T(1, 2, 3, 3)),
    C("F.softsign(x)", x=T(2, 5)),
    C("F.hardtanh(x * 2)", x=T(2, 5)),
    C("F.threshold(x, 0.1, 20.0)", x=T(2, 5)),
    C("F.glu(x)", x=T(2, 6)),
    C("F.mish(x)", x=T(2, 5)),
]

_ULP = ("float32 rounding: MindSpore's CPU kernel sums in another order; {n} differ by up to {rel} relative "
        "(tolerance 1e-5), all others equal")
_BOTH = ("pynative", "graph")
KNOWN = [
    Known("c6878124ef0c", "torch.nn.functional.log_softmax", _BOTH, _ULP.format(n="3 of 40 gradients", rel="3.6e-5"), rounding=True),
    Known("f15b5973518b", "torch.nn.functional.log_softmax", _BOTH, _ULP.format(n="1 of 40 gradients", rel="1.4e-5"), rounding=True),
    Known("bfbec565c79d", "torch.nn.functional.log_softmax", _BOTH, _ULP.format(n="5 of 24 gradients", rel="3.9e-5"), rounding=True),
    Known("dfbd22852fe8", "torch.nn.functional.log_softmax", _BOTH, _ULP.format(n="1 of 40 values", rel="1.4e-5"), rounding=True),
    Known("23ed0b8302d5", "torch.nn.functional.layer_norm", _BOTH, _ULP.format(n="1 of 24 gradients", rel="4.8e-5"), rounding=True),
    Known("a1320148b77d", "torch.nn.functional.log_softmax", _BOTH,
          "dtype=torch.float64 on a float32 input: the result is float64 but computed to float32 precision "
          "(2e-6 relative; float64 tolerance 1e-10)"),
    Known("e3164c4ee8cc", "torch.nn.functional.nll_loss", ("pynative",),
          "empty batch (0, 5): MindSpore's NLLLoss raises 'The inner_size is zero' where PyTorch returns nan "
          "(mean over no elements); not silent"),
    Known("a7c8854a8b05", "torch.nn.functional.cross_entropy", _BOTH,
          "negative class index: PyTorch raises IndexError 'Target -2 is out of bounds'; MindSpore's NLLLoss reads "
          "out of range and returns a number (checking needs a host sync per call; not done)"),
    Known("fc509a45e6d6", "torch.nn.functional.cross_entropy", _BOTH,
          "int64 target of the input's shape: PyTorch takes it as class probabilities and raises (must be "
          "floating); MindTorch takes it as probabilities and returns a loss"),
    Known("c4acdc50de86", "torch.nn.functional.one_hot", _BOTH,
          "class value >= num_classes: PyTorch raises RuntimeError; MindSpore's OneHot gives an all-zero row "
          "(checking needs a host sync)"),
    Known("4dbc6328f0bc", "torch.nn.functional.smooth_l1_loss", ("pynative",),
          "input (4, 1) vs target (4,): PyTorch broadcasts to (4, 4) with a UserWarning; MindSpore's SmoothL1Loss "
          "raises ValueError (shapes must be equal); not silent"),
    Known("1f5f971ba27e", "torch.nn.functional.binary_cross_entropy", ("graph",),
          "inputs outside [0, 1]: PyTorch raises; patches/bce.py checks in PyNative only, the compiled graph "
          "returns a finite loss"),
    Known("ce8f673526d7", "torch.nn.functional.max_pool2d", ("pynative",),
          "padding > kernel_size / 2: PyTorch raises RuntimeError; here a result is returned (the graph form "
          "raises at compile time)"),
    Known("6f88dc52e32c", "torch.nn.functional.batch_norm", ("pynative",),
          "training=True with running_mean/running_var given: the input gradient is wrong (96 of 96 values, "
          "relative 0.17) though the forward and the updated statistics match PyTorch's"),
    Known("5f2edc0fcc2f", "torch.nn.functional.one_hot", ("pynative",),
          "empty index tensor: MindSpore's OneHot raises 'Shape of input should not contain 0' where PyTorch "
          "returns shape (0, 5); not silent"),
]
