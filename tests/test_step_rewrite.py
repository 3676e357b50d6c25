"""``adapter/step_rewrite.py`` on source text alone: the rewritten training loop, asserted as ``ast.unparse`` output
(Python 3.10's spelling: ``for (x, y) in loader:``, ``lambda :``). Nothing runs: no MindSpore, milliseconds each.

What the rewrite must do is in the module docstring: a ``<loss>.backward()`` with the statements computing the loss
just before it becomes one ``__adapter_step__(K, {free names}[, optimizer])`` call; ``optimizer.step()`` right after
it (past up to 3 statements that read only the loss, one ``clip_grad_norm_``, a GradScaler's ``unscale_``) becomes
``__adapter_optimizer_step__``; everything else keeps its place and its line number. The end-to-end tests of the
same rules (the rewritten step trains as PyTorch does) are in test_compiled_step.py, test_step_overhead.py,
test_trailing_if_site.py, test_two_models.py and test_step_rewrite_order.py.
"""
import ast
import textwrap

import pytest

from adapter.step_rewrite import CLIP_FN, OPT_STEP_FN, STEP_FN, UNSCALE_FN, rewrite


# the site call of `loss = crit(model(x), y); loss.backward()` when the step after it is not fused
UNFUSED = "(loss,) = __adapter_step__(0, {'crit': crit, 'model': model, 'x': x, 'y': y})"


def _rewrite(source, first_key=0):
    """(the rewritten module as ``ast.unparse`` text, the sites, the rewritten tree)."""
    tree, sites = rewrite(textwrap.dedent(source), "t.py", first_key)
    return ast.unparse(tree), sites, tree


def _same_text(source):
    """``source`` as ``ast.unparse`` spells it: what the rewrite gives for a file it leaves alone."""
    return ast.unparse(ast.parse(textwrap.dedent(source)))


def test_the_generated_names_are_the_runtime_hooks():
    """launcher.py installs these builtins (compiled_step.py's functions); the strings below depend on them."""
    assert (STEP_FN, OPT_STEP_FN, CLIP_FN, UNSCALE_FN) == ("__adapter_step__", "__adapter_optimizer_step__",
                                                           "__adapter_clip_grad_norm__", "__adapter_unscale__")


# -- the site call, and what stays as it was ------------------------------------------------------------------------

NESTED = """\
import torch

def train_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        loss = model(x).sub(y).pow(2).mean()
        loss.backward()
        optimizer.step()
    return loss.item()

def evaluate(model, x):
    with torch.no_grad():
        return model(x)
"""


def test_a_site_in_a_function_becomes_one_call_and_the_rest_of_the_file_is_unchanged():
    text, (site,), tree = _rewrite(NESTED, first_key=5)
    assert text == textwrap.dedent("""\
        import torch

        def train_epoch(model, loader, optimizer):
            model.train()
            for (x, y) in loader:
                (loss,) = __adapter_step__(5, {'model': model, 'x': x, 'y': y}, optimizer)
                __adapter_optimizer_step__(5, optimizer)
            return loss.item()

        def evaluate(model, x):
            with torch.no_grad():
                return model(x)""")
    assert (site.key, site.filename, site.lineno, site.optimizer_line, site.clip_line, site.scaler) == \
        (5, "t.py", 7, 8, None, None)
    assert [ast.unparse(s) for s in site.region] == ["loss = model(x).sub(y).pow(2).mean()"]
    assert ast.unparse(site.loss) == "loss"
    assert site.free_names == ["model", "x", "y"] and site.outputs == ["loss"]
    # line numbers: the site call has backward()'s, the optimizer stand-in step()'s, the rest their own
    loop = tree.body[1].body[1]
    assert [s.lineno for s in loop.body] == [7, 8]
    assert [s.lineno for s in tree.body[1].body] == [4, 5, 9] and tree.body[2].lineno == 11


def test_sites_are_numbered_from_first_key_in_source_order():
    source = """\
        for x, y in loader:
            loss = crit(model(x), y)
            loss.backward()
        for x, y in loader:
            loss2 = crit(model(x), y)
            loss2.backward()
        """
    _, sites, _ = _rewrite(source, first_key=3)
    assert [(s.key, s.lineno) for s in sites] == [(3, 3), (4, 6)]


@pytest.mark.parametrize("source", [
    # backward() first in its block: no statement computes the loss there (the eager bridge, adapter/tape.py, serves it)
    """\
    def train(loss):
        loss.backward()
    """,
    """\
    for x, y in loader:
        if cond:
            loss.backward()
    """,
    # backward() with arguments (retain_graph, a gradient): left to the eager bridge
    """\
    for x, y in loader:
        loss = crit(model(x), y)
        loss.backward(retain_graph=True)
    """,
    """\
    for x, y in loader:
        out = model(x)
        out.backward(torch.ones_like(out))
    """,
    # the statement before backward() does not compute the loss
    """\
    for x, y in loader:
        out = model(x)
        loss.backward()
    """,
    # a call between the loss and backward() that may touch gradients (yunjey's GAN `reset_grad()`) ends the window
    """\
    for x, y in loader:
        loss = crit(model(x), y)
        reset_grad()
        loss.backward()
        optimizer.step()
    """,
    # no backward() at all
    """\
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    """,
])
def test_what_is_left_alone(source):
    text, sites, _ = _rewrite(source)
    assert sites == []
    assert text == _same_text(source)


def test_a_syntax_error_is_pythons_with_the_users_file_and_line():
    with pytest.raises(SyntaxError) as info:
        rewrite("x = 1\ny = (\n", "train.py")
    assert (info.value.filename, info.value.lineno) == ("train.py", 2)


# -- optimizer.step() placement ---------------------------------------------------------------------------------

def test_step_right_after_backward_is_fused():
    source = """\
        for x, y in loader:
            optimizer.zero_grad()
            loss = crit(model(x), y)
            loss.backward()
            optimizer.step()
            scheduler.step()
        """
    text, (site,), _ = _rewrite(source)
    assert text == textwrap.dedent("""\
        for (x, y) in loader:
            optimizer.zero_grad()
            (loss,) = __adapter_step__(0, {'crit': crit, 'model': model, 'x': x, 'y': y}, optimizer)
            __adapter_optimizer_step__(0, optimizer)
            scheduler.step()""")
    assert site.optimizer_line == 5


@pytest.mark.parametrize("between", [
    "log(loss)",  # any other call: it runs where the script has it, before the update
    "torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)",  # a clip with keywords is not recognized
    "optimizer.zero_grad()",
])
def test_step_after_another_statement_is_not_fused(between):
    source = f"""\
        for x, y in loader:
            loss = crit(model(x), y)
            loss.backward()
            {between}
            optimizer.step()
        """
    text, (site,), _ = _rewrite(source)
    assert text == textwrap.dedent(f"""\
        for (x, y) in loader:
            (loss,) = __adapter_step__(0, {{'crit': crit, 'model': model, 'x': x, 'y': y}})
            {between}
            optimizer.step()""")
    assert site.optimizer_line is None and site.clip_line is None


def test_step_with_arguments_is_not_fused():
    """``optimizer.step(closure)`` (LBFGS): the closure runs the forward again; the script's own call stays."""
    source = """\
        for x, y in loader:
            loss = crit(model(x), y)
            loss.backward()
            optimizer.step(closure)
        """
    text, (site,), _ = _rewrite(source)
    assert text.splitlines()[1:] == [f"    {UNFUSED}", "    optimizer.step(closure)"]
    assert site.optimizer_line is None


def test_whatever_steps_right_after_backward_is_the_candidate_the_runtime_checks():
    """The rewrite does not know types: ``scheduler.step()`` right after backward() is passed as the optimizer;
    compiled_step.py fuses only an optimizer and otherwise calls the object's own ``step()``."""
    source = """\
        for x, y in loader:
            loss = crit(model(x), y)
            loss.backward()
            scheduler.step()
            optimizer.step()
        """
    text, (site,), _ = _rewrite(source)
    assert text.splitlines()[1:] == [
        "    (loss,) = __adapter_step__(0, {'crit': crit, 'model': model, 'x': x, 'y': y}, scheduler)",
        "    __adapter_optimizer_step__(0, scheduler)",
        "    optimizer.step()"]
    assert site.optimizer_line == 4


def test_clip_between_backward_and_step_is_fused_and_kept_as_a_thunk():
    """The clip's arguments go to the site call (the graph clips); the user's call stays as a thunk, made only when
    the step was not fused, and its result (the total norm) is still assigned."""
    source = """\
        for x, y in loader:
            loss = crit(model(x), y)
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        """
    text, (site,), tree = _rewrite(source)
    assert text == textwrap.dedent("""\
        for (x, y) in loader:
            (loss,) = __adapter_step__(0, {'crit': crit, 'model': model, 'x': x, 'y': y}, optimizer, lambda : (model.parameters(), 1.0))
            norm = __adapter_clip_grad_norm__(0, lambda : torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
            __adapter_optimizer_step__(0, optimizer)""")
    assert (site.optimizer_line, site.clip_line) == (5, 4)
    assert [s.lineno for s in tree.body[0].body] == [3, 4, 5]


# -- fusion past statements that read only the loss ------------------------------------------------------------

def test_up_to_three_loss_only_statements_run_after_the_site_call_before_the_stand_in():
    source = """\
        for x, y in loader:
            optimizer.zero_grad()
            loss = crit(model(x), y)
            loss.backward()
            total += loss.item()
            n += 1
            print(f'{loss.item():.4f}')
            optimizer.step()
        """
    text, (site,), tree = _rewrite(source)
    assert text == textwrap.dedent("""\
        for (x, y) in loader:
            optimizer.zero_grad()
            (loss,) = __adapter_step__(0, {'crit': crit, 'model': model, 'x': x, 'y': y}, optimizer)
            total += loss.item()
            n += 1
            print(f'{loss.item():.4f}')
            __adapter_optimizer_step__(0, optimizer)""")
    assert site.optimizer_line == 8
    assert [s.lineno for s in tree.body[0].body] == [2, 4, 5, 6, 7, 8]


def test_a_fourth_loss_only_statement_leaves_the_step_unfused():
    source = """\
        for x, y in loader:
            loss = crit(model(x), y)
            loss.backward()
            total += loss.item()
            n += 1
            last = float(loss)
            print(loss.item())
            optimizer.step()
        """
    text, (site,), _ = _rewrite(source)
    assert text.splitlines()[1:] == [f"    {UNFUSED}", "    total += loss.item()", "    n += 1",
                                     "    last = float(loss)", "    print(loss.item())", "    optimizer.step()"]
    assert site.optimizer_line is None


@pytest.mark.parametrize("between", [
    "total += round(loss.item())",  # round(nan) raises: the script stops before its update, a fused step after it
    "loss = loss.item()",  # reassigns the loss
    "total += loss.item() * scale",  # reads another name
    "x = loss.item()",  # a name the region reads
    "print(loss.item(), file=log)",  # keywords
    "total += loss.grad_fn.name()",  # an attribute other than .item()
])
def test_a_statement_that_is_not_a_pure_loss_read_leaves_the_step_unfused(between):
    source = f"""\
        for x, y in loader:
            loss = crit(model(x), y)
            loss.backward()
            {between}
            optimizer.step()
        """
    text, (site,), _ = _rewrite(source)
    assert site.optimizer_line is None, between
    assert text.splitlines()[-2:] == [f"    {between}", "    optimizer.step()"]


# -- GradScaler ------------------------------------------------------------------------------------------------

def test_grad_scaler_site_with_autocast_unscale_and_clip_is_fused():
    source = """\
        for x, y in loader:
            optimizer.zero_grad()
            with autocast():
                out = model(x)
                loss = crit(out, y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
        """
    text, (site,), _ = _rewrite(source)
    assert text == textwrap.dedent("""\
        for (x, y) in loader:
            optimizer.zero_grad()
            (loss, out) = __adapter_step__(0, {'autocast': autocast, 'crit': crit, 'model': model, 'x': x, 'y': y}, optimizer, lambda : (model.parameters(), 1.0), scaler=scaler)
            __adapter_unscale__(0, lambda : scaler.unscale_(optimizer))
            __adapter_clip_grad_norm__(0, lambda : torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
            __adapter_optimizer_step__(0, optimizer, scaler)
            scaler.update()""")
    assert ast.unparse(site.loss) == "loss" and ast.unparse(site.scaler) == "scaler"
    assert [ast.unparse(s) for s in site.region] == ["with autocast():\n    out = model(x)\n    loss = crit(out, y)"]
    assert (site.optimizer_line, site.clip_line) == (9, 8)


@pytest.mark.parametrize("after", [
    ["optimizer.step()"],  # scaled grads stepped as the script asked: not fused
    ["scaler.unscale_(other)", "scaler.step(optimizer)"],  # unscale_ of another optimizer
])
def test_grad_scaler_site_is_not_fused_unless_unscale_and_step_name_one_optimizer(after):
    lines = "\n".join(f"            {a}" for a in after)
    source = f"""\
        for x, y in loader:
            loss = crit(model(x), y)
            scaler.scale(loss).backward()
{lines}
        """
    text, (site,), _ = _rewrite(source)
    assert text.splitlines()[1:] == [
        "    (loss,) = __adapter_step__(0, {'crit': crit, 'model': model, 'x': x, 'y': y}, scaler=scaler)",
        *(f"    {a}" for a in after)]
    assert site.optimizer_line is None and ast.unparse(site.scaler) == "scaler"


# -- trailing `if` blocks ---------------------------------------------------------------------------------------

def test_a_logging_if_before_backward_runs_after_the_site_call():
    source = """\
        for t in range(100):
            y_pred = model(x)
            loss = loss_fn(y_pred, y)
            if t % 100 == 99:
                print(t, loss.item())
            else:
                skipped += 1
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        """
    text, (site,), tree = _rewrite(source)
    assert text == textwrap.dedent("""\
        for t in range(100):
            (y_pred, loss) = __adapter_step__(0, {'model': model, 'x': x, 'loss_fn': loss_fn, 'y': y}, optimizer, after=lambda : (t,))
            if t % 100 == 99:
                print(t, loss.item())
            else:
                skipped += 1
            __adapter_optimizer_step__(0, optimizer)
            optimizer.zero_grad()""")
    assert site.optimizer_line == 9
    assert [s.lineno for s in tree.body[0].body] == [8, 4, 9, 10]


@pytest.mark.parametrize("block", [
    "if t % 2 == 0:\n            loss = loss * 2",  # assigns the loss: it must run before backward()
    "if t % 2 == 0:\n            reset_grad()",  # a call that may touch gradients
])
def test_an_if_that_must_run_before_backward_leaves_the_site_alone(block):
    source = f"""\
    for t in range(100):
        loss = loss_fn(model(x), y)
        {block}
        loss.backward()
        optimizer.step()
    """
    text, sites, _ = _rewrite(source)
    assert sites == [] and text == _same_text(source)


# -- where the region starts, and what is moved around it -------------------------------------------------------

def test_data_fetch_stays_before_zero_grad_and_in_place_calls_are_hoisted():
    """dcgan's D step: ``label.fill_(...)`` between the region's statements runs before the region; ``D_x`` (reads
    the first site's ``output`` before the second region reassigns it) stays between the two site calls; the second
    region starts after the first site."""
    source = """\
        for data in loader:
            netD.zero_grad()
            label.fill_(real_label)
            output = netD(real)
            errD_real = criterion(output, label)
            errD_real.backward()
            D_x = output.mean().item()
            noise = torch.randn(b, nz, 1, 1)
            fake = netG(noise)
            label.fill_(fake_label)
            output = netD(fake.detach())
            errD_fake = criterion(output, label)
            errD_fake.backward()
            optimizerD.step()
        """
    text, (first, second), _ = _rewrite(source)
    assert text == textwrap.dedent("""\
        for data in loader:
            netD.zero_grad()
            label.fill_(real_label)
            (output, errD_real) = __adapter_step__(0, {'netD': netD, 'real': real, 'criterion': criterion, 'label': label})
            D_x = output.mean().item()
            label.fill_(fake_label)
            (noise, fake, output, errD_fake) = __adapter_step__(1, {'b': b, 'nz': nz, 'torch': torch, 'netG': netG, 'netD': netD, 'criterion': criterion, 'label': label}, optimizerD)
            __adapter_optimizer_step__(1, optimizerD)""")
    assert first.optimizer_line is None and second.optimizer_line == 14
    assert second.outputs == ["noise", "fake", "output", "errD_fake"]


def test_a_call_that_can_move_neither_way_starts_the_region_after_it():
    source = """\
        for x, y in loader:
            out = model(x)
            adjust(model)
            loss = crit(out, y)
            loss.backward()
            optimizer.step()
        """
    text, (site,), _ = _rewrite(source)
    # what runs before the region and the loss needs opens the recording when it reads a tensor that requires grad
    # (tests/test_grad_before_region.py): here `model` (a module call opens it itself) and `x`
    assert text.splitlines()[1:] == ["    __adapter_record_from__(0, ((2, lambda : model), (2, lambda : x)))",
                                     "    out = model(x)", "    adjust(model)",
                                     "    (loss,) = __adapter_step__(0, {'crit': crit, 'out': out, 'y': y}, optimizer)",
                                     "    __adapter_optimizer_step__(0, optimizer)"]
    assert site.free_names == ["crit", "out", "y"]
