"""patches/torchscript.py and patches/nn_fusion.py: the torch.jit markers and torch.nn.utils.fusion that
``import timm`` needs (MindTorch 0.4.0: no ``torch.jit.annotations``, no ``torch.nn.utils.fusion``). Expected
values: PyTorch's documented behaviour for code that is not scripted (the marker returns its argument), and the
closed form of an eval BatchNorm after a layer (the fused layer gives the same output)."""
import typing

import numpy as np
import pytest


def test_jit_markers_return_their_argument_as_unscripted_pytorch():
    import torch
    from torch.jit.annotations import List, Optional, Tuple  # timm/models/densenet.py:16

    assert (List, Optional, Tuple) == (typing.List, typing.Optional, typing.Tuple)

    def f(x):
        return x * 2

    assert torch.jit.ignore(f) is f and torch.jit.ignore(drop=True)(f) is f and torch.jit.unused(f) is f
    assert torch.jit.script(f) is f
    layer = torch.nn.Linear(2, 2)
    assert torch.jit.script(layer) is layer
    assert torch.jit.annotate(List[int], [1]) == [1]
    assert torch.jit.is_scripting() is False


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_eval_equals_conv_then_bn(transpose):
    import torch
    from torch.nn.utils.fusion import fuse_conv_bn_eval
    rng = np.random.RandomState(0)
    conv = torch.nn.ConvTranspose2d(3, 4, 3) if transpose else torch.nn.Conv2d(3, 4, 3)
    bn = torch.nn.BatchNorm2d(4)
    bn.load_state_dict({"weight": torch.tensor(rng.uniform(0.5, 1.5, 4).astype(np.float32)),
                        "bias": torch.tensor(rng.normal(0, 0.1, 4).astype(np.float32)),
                        "running_mean": torch.tensor(rng.normal(0, 0.3, 4).astype(np.float32)),
                        "running_var": torch.tensor(rng.uniform(0.5, 2.0, 4).astype(np.float32)),
                        "num_batches_tracked": torch.tensor(3)})
    conv.eval(), bn.eval()
    x = torch.tensor(rng.standard_normal((2, 3, 6, 6)).astype(np.float32))
    fused = fuse_conv_bn_eval(conv, bn, transpose=transpose)
    assert isinstance(fused.weight, torch.nn.Parameter) and fused is not conv
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    bn.train()
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        fuse_conv_bn_eval(conv, bn)


def test_fuse_linear_bn_eval_equals_linear_then_bn():
    import torch
    from torch.nn.utils.fusion import fuse_linear_bn_eval
    rng = np.random.RandomState(1)
    linear, bn = torch.nn.Linear(5, 3, bias=False), torch.nn.BatchNorm1d(3)
    bn.running_mean.copy_(torch.tensor(rng.normal(0, 0.3, 3).astype(np.float32)))
    bn.running_var.copy_(torch.tensor(rng.uniform(0.5, 2.0, 3).astype(np.float32)))
    linear.eval(), bn.eval()
    x = torch.tensor(rng.standard_normal((4, 5)).astype(np.float32))
    fused = fuse_linear_bn_eval(linear, bn)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(linear(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(AssertionError, match="out_features"):
        fuse_linear_bn_eval(linear, torch.nn.BatchNorm1d(2).eval())
