"""Two models and optimizers in one script (GANs, teacher/student): clashing parameter names
(adapter/param_names.py), gradients through a tensor made in an earlier step (adapter/provenance.py), and the step
rewrite keeping each statement's order (adapter/step_rewrite.py), against real PyTorch 2.13 values recorded in
tests/fixtures/gan/gan_two_models.torch.json."""
import ast
import json
import os

import numpy as np
import pytest
import torch

from support import ROOT, run_json

GAN = os.path.join(ROOT, "tests", "fixtures", "gan", "gan_two_models.py")


@pytest.mark.parametrize("mode", ["pynative", "auto"])
def test_gan_trains_both_models_as_pytorch(mode):
    """Per iteration errD, errG, D(x), D(G(z)) x2 and sum |grad G| equal real PyTorch's (measured 7.5e-7 rel.), G's
    BatchNorm running mean too (2.4e-8: it moved once per real forward, not again when `fake` was recomputed).
    Before: errD_fake.backward() failed on `main.0.weight` twice; with distinct names G got no gradient (grad_G 0);
    compiled, site 2's region swallowed site 1's step and ran `label.fill_(0)` after its forward (errD 1.49 vs 1.38)."""
    with open(os.path.join(ROOT, "tests", "fixtures", "gan", "gan_two_models.torch.json")) as f:
        golden = json.load(f)["result"]
    got, err = run_json("--explain", "--mode", mode, "--original", GAN)
    np.testing.assert_allclose(got["rows"], golden["rows"], rtol=1e-5)
    np.testing.assert_allclose(got["running_mean"], golden["running_mean"], rtol=1e-4, atol=1e-6)
    assert min(row[5] for row in got["rows"]) > 1.0  # G's gradients are real
    if mode == "auto":
        # one graph each (the batch list `data` recompiled errD_real's step every call before it became a tuple input)
        assert "gan_two_models.py:61: backward() of errD_real — compiled (graph mode); 1 graph(s)" in err, err
        assert "gan_two_models.py:68: backward() of errD_fake — compiled (graph mode); 1 graph(s)" in err, err
        # netG(noise) is recomputed at the top of errG's graph: G's gradients flow, its BN statistics are restored
        assert "gan_two_models.py:77: backward() of errG — compiled (graph mode); 1 graph(s)" in err, err


def test_clashing_names_are_made_unique_once(monkeypatch):
    import weakref
    from adapter import param_names
    # a registry of our own: parameters of earlier tests in this process, still alive, hold 'weight' and 'bias'
    monkeypatch.setattr(param_names, "_claimed", weakref.WeakValueDictionary())
    a, b, c = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    params = list(a.parameters()) + list(b.parameters())
    assert [p.name for p in params] == ["weight", "bias", "weight", "bias"]
    param_names.unique(params)
    names = [p.name for p in params]
    assert len(set(names)) == 4 and names[:2] == ["weight", "bias"] or names[2:] == ["weight", "bias"]
    param_names.unique(params)  # stable
    assert [p.name for p in params] == names
    param_names.unique(list(c.parameters()))  # a third model: a new suffix, the first two keep theirs
    assert len({p.name for p in params + list(c.parameters())}) == 6
    assert [p.name for p in params] == names


def _rewrite(body: str):
    from adapter.step_rewrite import rewrite
    source = "for data, noise in loader:\n" + "".join("    " + line + "\n" for line in body.strip().splitlines())
    tree, sites = rewrite(source, "t.py")
    return [ast.unparse(s) for s in tree.body[0].body], sites


def test_rewrite_keeps_the_order_of_three_steps():
    """dcgan's loop: each region stops at the previous step; label.fill_ runs before the region that reads label;
    D_x reads site 1's `output`, not site 2's."""
    body, sites = _rewrite("""
netD.zero_grad()
label = torch.full((8,), 1.0)
output = netD(data)
errD_real = criterion(output, label)
errD_real.backward()
D_x = output.mean().item()
fake = netG(noise)
label.fill_(0)
output = netD(fake.detach())
errD_fake = criterion(output, label)
errD_fake.backward()
D_G_z1 = output.mean().item()
optimizerD.step()
netG.zero_grad()
label.fill_(1)
output = netD(fake)
errG = criterion(output, label)
errG.backward()
optimizerG.step()
""")
    first, second, third = sites
    assert [ast.unparse(s) for s in second.region] == ["fake = netG(noise)", "output = netD(fake.detach())",
                                                       "errD_fake = criterion(output, label)"]
    assert [ast.unparse(s) for s in third.region] == ["output = netD(fake)", "errG = criterion(output, label)"]
    step1 = next(i for i, s in enumerate(body) if s.startswith("(label, output, errD_real) = __adapter_step__(0"))
    assert body[step1 + 1] == "D_x = output.mean().item()"
    assert body[step1 + 2] == "label.fill_(0)"
    assert body[step1 + 3].startswith("(fake, output, errD_fake) = __adapter_step__(1")
    assert body.index("label.fill_(1)") < next(i for i, s in enumerate(body) if "__adapter_step__(2" in s)


def test_rewrite_starts_the_region_after_a_call_it_cannot_move():
    """`optimizer.step()` between two forward statements changes what the second reads: nothing moves across it."""
    body, sites = _rewrite("""
h = encoder(data)
aux_optimizer.step()
out = head(h)
loss = criterion(out, noise)
loss.backward()
""")
    assert [ast.unparse(s) for s in sites[0].region] == ["out = head(h)", "loss = criterion(out, noise)"]
    assert body[:2] == ["h = encoder(data)", "aux_optimizer.step()"]


def test_rewrite_keeps_a_reader_of_an_overwritten_name_before_the_overwrite():
    body, sites = _rewrite("""
out = model(data)
first_norm = out.norm()
out = model(out)
loss = out.sum()
loss.backward()
""")
    # first_norm reads the first `out`: it cannot run after the region, which reassigns out. `out = model(out)`
    # reassigns its argument, so it is also a candidate host call (adapter/host_values.py): two sites, chosen at run
    # time (a model reaches parameters: the second, with the call in its region); in both, `out = model(out)` comes
    # after first_norm
    assert [ast.unparse(s) for s in sites[-1].region] == ["out = model(out)", "loss = out.sum()"]
    assert [ast.unparse(s) for s in sites[0].host_stmts] == ["out = model(out)"]
    # (each branch may open the recording before `out = model(data)`: __adapter_record_from__, step_rewrite._record_from)
    text = "\n".join(body)
    assert text.index("out = model(data)") < text.index("first_norm = out.norm()") < text.index("out = model(out)")


def test_rewrite_runs_statements_after_the_last_region_statement_after_it():
    """time_sequence_prediction's closure prints the loss between the forward and backward()."""
    body, sites = _rewrite("""
optimizer.zero_grad()
out = seq(data)
loss = criterion(out, noise)
print('loss:', loss.item())
loss.backward()
""")
    assert [ast.unparse(s) for s in sites[0].region] == ["out = seq(data)", "loss = criterion(out, noise)"]
    assert body[1].startswith("(out, loss) = __adapter_step__(0") and body[2] == "print('loss:', loss.item())"


def test_gradient_through_a_tensor_made_before_the_previous_backward_reaches_its_model():
    """adapter/provenance.py: on MindSpore 2.5 the user's ``fake`` takes over the recomputed tensor's history; on
    MindSpore >= 2.10 it cannot (a MindTorch tensor is its C++ tensor) and the module call gets the recomputed tensor
    instead. Before that, on 2.10, G's gradient through ``fake`` was all zeros, silently."""
    got, _ = run_json("--mode", "pynative", "--original", os.path.join(ROOT, "tests", "fixtures", "gan",
                                                                      "grad_through_fake.py"))
    assert max(abs(v) for v in got["direct"]) > 0.01
    np.testing.assert_allclose(got["through_fake"], got["direct"], rtol=1e-6)
