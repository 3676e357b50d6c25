"""``copy.copy`` / ``copy.deepcopy`` / ``pickle`` of an ``nn.Parameter`` without building a Parameter per attribute.

MindTorch 0.4.0's ``Parameter.__getstate__`` (``mindtorch/torch/nn/parameter.py``) is
``{key: value for key, value in self.__dict__.items() if key not in Parameter().__dict__}``: the condition builds a
new empty ``Parameter`` (a MindSpore tensor, its ``ParamInfo``, a unique name) for every attribute of the parameter,
about 30 per call. MindSpore's optimizers create their state with ``Parameter.clone`` (``copy(self)``, which calls
it), so ``torch.optim.Adam(resnet50.parameters())`` took 1.61 s (483 clones) and ``SGD(momentum=0.9)`` 1.19 s,
before the first step; ``copy.deepcopy(model)`` (EMA, model averaging) paid the same per parameter. PyTorch creates
optimizer state lazily, in microseconds.

Here the names of an empty Parameter's attributes are found once, at the first call (after every patch is in
place), and the same dictionary is returned: the same keys, the same values. Measured (``run.py`` on a script that
builds torchvision's ResNet50, 2026-11-26, 2.5-dev): Adam 1.61 -> 0.33 s, SGD(momentum) 1.19 -> 0.46 s.

Replaces: ``torch.nn.Parameter.__getstate__``.
"""
from . import Patch, patch_attr

_empty_keys = None  # frozenset: the attribute names of an empty Parameter, found at the first call


def __getstate__(self):
    """MindTorch's ``Parameter.__getstate__``: the instance attributes an empty ``Parameter()`` does not have
    (a dict, names to values), with the empty Parameter built once per process."""
    global _empty_keys
    if _empty_keys is None:
        from mindtorch.torch.nn.parameter import Parameter
        _empty_keys = frozenset(Parameter().__dict__)
    return {key: value for key, value in self.__dict__.items() if key not in _empty_keys}


def apply() -> None:
    from mindtorch.torch.nn.parameter import Parameter
    patch_attr(Parameter, "__getstate__", __getstate__)


PATCH = Patch("parameter_state", "copy/deepcopy/pickle of nn.Parameter (optimizer state creation: Adam(resnet50) "
                                 "1.6 -> 0.3 s) without an empty Parameter built per attribute",
              "post-import", apply, replaces=("torch.nn.Parameter.__getstate__",))
