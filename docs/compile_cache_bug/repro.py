"""MindSpore 2.5.0.dev20250119 (CPU): a training step loaded from the compile cache loses its parameter updates when
the optimizer is one of ``mindspore.experimental.optim`` (MindTorch's ``torch.optim`` classes); ``mindspore.nn.SGD``
is fine.

    rm -rf /tmp/cc; for i in 1 2; do .venv/bin/python docs/compile_cache_bug/repro.py /tmp/cc experimental; done
    rm -rf /tmp/cc; for i in 1 2; do .venv/bin/python docs/compile_cache_bug/repro.py /tmp/cc nn; done
    rm -rf /tmp/cc; for i in 1 2; do .venv/bin/python docs/compile_cache_bug/repro.py /tmp/cc experimental-owned; done

Measured 2026-11-22: with ``nn`` both runs print [0.812946, 0.646865, 0.568701, 0.520437, 0.484904]. With
``experimental``, the first (compiling) run prints the same and the second (cached) run prints 0.812946 five times:
the weights never change. Cause: the experimental optimizers keep their learning rates as Parameters in a plain list
(``self.lrs``) that the Cell does not own; a graph loaded from the cache then does not write back the updates.
``experimental-owned`` makes ``lrs`` a ``ParameterTuple`` attribute and both runs print the ``nn`` numbers. (A
constant-Tensor lr also works.) The adapter does this in ``patches/optimizer_graph.py``; for the same reason the
compiled step owns the BatchNorm statistics when the cache is on (``adapter/compiled_step.py``).
Ruled out on the way: the ``@jit`` on ``implementation``, ParameterTuple slicing, the per-gradient ``maximize``
expression, ``enable_tuple_broaden``, the param_groups' Parameter lists, switching PyNative <-> GRAPH_MODE.
"""
import sys

import mindspore as ms
import mindspore.experimental.optim as experimental_optim
import numpy as np
from mindspore import nn

cache_path, which = sys.argv[1], sys.argv[2]
ms.set_context(mode=ms.GRAPH_MODE, enable_compile_cache=True, compile_cache_path=cache_path)
ms.set_seed(0)
net = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 2)])
loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")


def forward_fn(x, y):
    return loss_fn(net(x), y)


class Step(nn.Cell):
    def __init__(self, weights, optimizer):
        super().__init__(auto_prefix=False)
        self.grad_fn = ms.value_and_grad(forward_fn, None, ms.ParameterTuple(weights))
        self.optimizer = optimizer

    def construct(self, x, y):
        loss, grads = self.grad_fn(x, y)
        self.optimizer(grads)
        return loss


params = net.trainable_params()
optimizer = experimental_optim.SGD(params, 0.5) if which.startswith("experimental") else nn.SGD(params, 0.5)
if which == "experimental-owned":
    optimizer.lrs = ms.ParameterTuple(optimizer.lrs)
step = Step(params, optimizer)
rng = np.random.default_rng(0)
x = ms.Tensor(rng.standard_normal((16, 4)).astype(np.float32))
y = ms.Tensor(rng.integers(0, 2, 16).astype(np.int32))
print(which, [round(float(step(x, y).asnumpy()), 6) for _ in range(5)])
