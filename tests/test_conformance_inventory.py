"""The API inventory (``app/tools/conformance/inventory.py``): the committed
``tests/fixtures/conformance/inventory.json`` was built under real PyTorch 2.13
(``CORPUS_EXAMPLES=DIR .venv-ref/bin/python -m app.tools.conformance.inventory``; pytorch/examples' files are named
``pytorch/examples/<file>``: they are not in this repository); these tests read it without torch, and check the AST
part on a small script."""
import json
import os

from app.tools.conformance import inventory
from app.tools.conformance.signature import parse, signature


def _by_sig():
    return {e["signature"]: e for e in inventory.load()}


def test_file_is_compact_and_says_what_made_it():
    assert os.path.getsize(inventory.OUT) < 300 * 1024
    with open(inventory.OUT) as f:
        doc = json.load(f)
    assert doc["torch"].startswith("2.13") and doc["torchvision"].startswith("0.28")
    runs = {r["name"]: r for r in doc["runs"]}
    assert runs["mnist"]["exit"] == 0 and runs["torchvision_models"]["exit"] == 0
    assert runs["siamese_network"]["exit"] == 1  # PyTorch's own failure at siamese_network/main.py:108
    entries = doc["entries"]
    assert len({e["signature"] for e in entries}) == len(entries)  # distinct (API, signature) pairs
    for e in entries:
        api, n, kws = parse(e["signature"])
        assert api == e["api"] and signature(api, n, kws) == e["signature"]
        assert e["source"] in ("ast", "trace", "both") and e["count"] >= 1 and 1 <= len(e["examples"]) <= 3


def test_mnist_constructor_from_ast_and_trace():
    e = _by_sig()["torch.nn.Conv2d(4)"]  # nn.Conv2d(1, 32, 3, 1)
    assert "pytorch/examples/mnist/main.py:13" in e["examples"]
    assert e["source"] == "both"


def test_log_softmax_with_dim_keyword():
    e = _by_sig()["torch.nn.functional.log_softmax(1;dim)"]  # F.log_softmax(x, dim=1)
    assert "pytorch/examples/mnist/main.py:32" in e["examples"]
    assert e["dtypes"] == ["float32"] and e["source"] == "both"


def test_tensor_methods_come_from_the_trace_with_their_receivers():
    sigs = _by_sig()
    views = [e for s, e in sigs.items() if s.startswith("torch.Tensor.view(")]
    assert views and all(e["source"] == "trace" for e in views)
    assert any("pytorch/examples/vae/main.py:124" in e["examples"] for e in views)  # x.view(...)
    # mnist_forward_forward's self.weight.T: a Parameter receiver
    assert sigs["torch.Tensor.T.__get__(0)"]["receivers"] == ["Parameter"]
    assert sigs["torch.Tensor.item(0)"]["receivers"] == ["Tensor"]
    # operators and protocol calls count the dispatch's arguments: f"{loss:.4f}" is __format__ with one
    assert "torch.Tensor.__format__(1)" in sigs


def test_methods_are_named_by_their_defining_public_class():
    sigs = _by_sig()
    for s in ("torch.nn.Module.train(0)", "torch.nn.Module.eval(0)", "torch.nn.Module.__call__(1)",
              "torch.optim.Optimizer.zero_grad(0)", "torch.optim.SGD.step(0)",
              "torch.optim.lr_scheduler.LRScheduler.step(0)", "torch.utils.data.DataLoader.__iter__(0)",
              "torch.nn.Module.parameters(0)"):
        assert s in sigs, s
    # super().__init__() in a user's Module is Module.__init__, not a constructor of the user's class
    assert "pytorch/examples/mnist/main.py:12" in sigs["torch.nn.Module.__init__(0)"]["examples"]
    # torchvision's models: nn.Sequential(*layers) counted with what *layers held
    assert "torchvision/models/vgg.py:87" in sigs["torch.nn.Sequential(29)"]["examples"]


def test_every_namespace_is_represented():
    counts = {}
    for e in inventory.load():
        counts[inventory.namespace(e["api"])] = counts.get(inventory.namespace(e["api"]), 0) + 1
    for ns in ("torch", "torch.Tensor", "torch.nn.functional", "torch.nn", "torch.optim", "torch.utils.data",
               "torchvision"):
        assert counts.get(ns, 0) >= 5, (ns, counts)
    assert "total" in inventory.summary(inventory.load())


FIXTURE = '''\
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR
from torchvision import transforms as T

layers = [nn.Conv2d(1, 32, 3, 1), nn.ReLU(inplace=True)]
model = nn.Sequential(*layers)
x = torch.randn(2, 1, 8, 8)
y = F.relu(model(x), inplace=False).view(-1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = StepLR(opt, step_size=1, gamma=0.7)
tf = T.Compose([T.ToTensor()])
torch.save(model.state_dict(), "m.pt", **{})
np.zeros(3)
'''


def test_scan_source_yields_exactly_the_qualified_calls():
    got = inventory.scan_source(FIXTURE, "fixture.py")
    assert got == [
        ("torch.nn.Conv2d", "torch.nn.Conv2d(4)", "fixture.py:8"),
        ("torch.nn.ReLU", "torch.nn.ReLU(0;inplace)", "fixture.py:8"),
        ("torch.nn.Sequential", "torch.nn.Sequential(0;*)", "fixture.py:9"),
        ("torch.randn", "torch.randn(4)", "fixture.py:10"),
        ("torch.nn.functional.relu", "torch.nn.functional.relu(1;inplace)", "fixture.py:11"),
        ("torch.optim.SGD", "torch.optim.SGD(1;lr)", "fixture.py:12"),
        ("torch.optim.lr_scheduler.StepLR", "torch.optim.lr_scheduler.StepLR(1;gamma,step_size)", "fixture.py:13"),
        ("torchvision.transforms.Compose", "torchvision.transforms.Compose(1)", "fixture.py:14"),
        ("torchvision.transforms.ToTensor", "torchvision.transforms.ToTensor(0)", "fixture.py:14"),
        ("torch.save", "torch.save(2;**)", "fixture.py:15"),
    ]


def test_coverage():
    entries = inventory.load()
    everything = {e["signature"] for e in entries}
    assert inventory.coverage(everything) == (1.0, [])
    frac, missing = inventory.coverage(set())
    assert frac == 0.0 and missing == entries
    frac, missing = inventory.coverage({"torch.nn.Conv2d(4)", "not.an.api(0)"}, entries)
    assert len(missing) == len(entries) - 1 and abs(frac - 1 / len(entries)) < 1e-12
    assert inventory.coverage(set(), []) == (1.0, [])


def test_cases_cover_the_inventory():
    """Issue 14's bar: the cases exercise >= 95 % of the distinct (API, signature) pairs that pt_original/ and
    torchvision's classification models use (``run.py conformance --coverage`` lists the rest)."""
    from app.tools.conformance.cli import case_coverage
    fraction, missing = case_coverage()
    assert fraction >= 0.95, f"{fraction:.1%}; not covered: {[e['signature'] for e in missing]}"
