"""Patches stacked on one attribute keep wrapping each other after the conversion to ``patch_attr``.

Before ``adapter/patching.py`` every patch wrapped the *current* value of what it replaced, so a patch applied
after another one wrapped that one's replacement (``generator`` over ``random_draws``' ``torch.rand``,
``return_types`` over ``sort``'s ``torch.sort``, ``result_dtypes`` over ``float64_precision``'s ``torch.div``...).
A converted patch that takes ``get_original`` there gets MindTorch's function instead and silently drops the earlier
patch (``torch.sort`` of int64 beyond 2**24 wrong again); ``get_replaced`` keeps it. This test installs the patches
in a child process (tests/fixtures/patch_layers.py), finds every attribute two or more post-import patches replace,
and checks the later one still reaches the earlier one's replacement.

``_REPLACED_NOT_WRAPPED``: the pairs where the later patch does not reach the earlier one's value, measured the same
at 0c3ad3b (before any conversion, when every patch read the current value) -- reimplementations, or a wrapper
that holds the value where the fixture's search does not look. A new pair there is a conversion that dropped a layer.
"""
import json
import os
import subprocess
import sys

import pytest

XDIST_FIRST = True  # patch-stacking runs (~1 min): started first under xdist (tests/conftest.py)

from support import ROOT

_REPLACED_NOT_WRAPPED = {
    ("mindtorch.torch.functional.logsumexp", "empty_reductions", "result_dtypes"),
    ("mindtorch.torch.logsumexp", "empty_reductions", "result_dtypes"),
    ("mindtorch.torch.tensor.Tensor.logsumexp", "empty_reductions", "result_dtypes"),
    ("mindtorch.torch.functional.norm", "empty_reductions", "op_arguments"),
    ("mindtorch.torch.nn.parameter.Parameter.__iadd__", "parameter_methods", "inplace"),
    ("mindtorch.torch.nn.parameter.Parameter.__isub__", "parameter_methods", "inplace"),
    # on MindSpore 2.10 (the default stack since 2026-11-29) its Tensor defines these too, so parameter_methods copies
    # MindTorch's onto Parameter as it does __iadd__ / __isub__ on both stacks (found by the first 2.10 run of this test)
    ("mindtorch.torch.nn.parameter.Parameter.__imul__", "parameter_methods", "inplace"),
    ("mindtorch.torch.nn.parameter.Parameter.__imod__", "parameter_methods", "inplace"),
    ("mindtorch.torch.nn.parameter.Parameter.__ifloordiv__", "parameter_methods", "inplace"),
    ("mindtorch.torchvision.datasets.fakedata.FakeData.__getitem__", "vision_data", "fake_data"),
    ("mindtorch.torchvision.datasets.fakedata.FakeData.__init__", "vision_data", "fake_data"),
    ("mindtorch.torchvision.transforms.transforms.Compose.__call__", "vision_data", "vision_transforms"),
}


@pytest.mark.slow
def test_a_patch_stacked_on_another_still_wraps_it():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "fixtures", "patch_layers.py")],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    layers = json.loads(proc.stdout.strip().splitlines()[-1])
    pairs = {(layer["attribute"], layer["below"], layer["above"]) for layer in layers}
    assert ("mindtorch.torch.rand", "random_draws", "generator") in pairs  # the probe sees stacks at all
    dropped = {(layer["attribute"], layer["below"], layer["above"]) for layer in layers if not layer["wraps"]}
    disabled = {n.strip() for n in os.environ.get("ADAPTER_DISABLE_PATCHES", "").split(",") if n.strip()}
    assert not disabled, "run without ADAPTER_DISABLE_PATCHES"
    assert dropped - _REPLACED_NOT_WRAPPED == set(), "a patch no longer wraps the one below it (get_original " \
        "where get_replaced was needed?)"
