"""Host values as graph inputs (adapter/host_values.py, issue 31 item 2): a step whose region draws on the host in
statements of its own (``lam = np.random.beta(alpha, alpha)``, ``coin = random.random()``) or reads a Python number
that changes every step (the loop counter) is compiled, not run eagerly, and each step's graph takes that step's
values as inputs.

Reference: real PyTorch 2.13's per-step draws and losses for the same script from the same weights
(``tests/fixtures/host_values_torch.json``, recorded by running ``tests/fixtures/host_values_mixup.py`` under
.venv-ref; the mixup permutation there is a fixed tensor, the same on both sides). Without the split (2026-11-29,
scratch copy) both mixup sites ran eagerly ("np.random.beta ... draws on the host, once per compile"); with the split
but the host values held as graph constants, each step compiled its own graph (5 graphs, ~6 s a step) and the
"2 graph(s)" assertion fails; without patches/indexing.py's numpy slice bounds the CutMix loop crashed ("Slice index
type must be int, tensor or none", also under --mode pynative); with ints passed as int64 tensors, CutMix's lam was
1.0 from the second step.
"""
import ast
import json
import os

import numpy as np

from support import run_json

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "host_values_mixup.py")
GOLDEN = os.path.join(HERE, "fixtures", "host_values_torch.json")


def test_mixup_with_host_draws_compiles_and_matches_pytorch_per_step():
    log, stderr = run_json("--explain", "--original", FIXTURE)
    with open(GOLDEN) as f:
        torch_log = json.load(f)
    # compiled, no fallback line; --explain names the split (the host values and their lines)
    # 2 graphs: the first compiled call's (warm a constant), then the warm-up factor is an input too (lam and coin
    # are inputs from the first: held as constants, each step would compile its own graph)
    assert "host_values_mixup.py:39: backward() of loss — compiled (graph mode, fused with optimizer.step() at line " \
           "40); 2 graph(s)" in stderr, stderr[-3000:]
    assert "host_values_mixup.py:49: backward() of loss — compiled" in stderr, stderr[-3000:]
    assert "host_values_mixup.py:83: backward() of loss — compiled" in stderr, stderr[-3000:]
    assert "PyNative" not in stderr, stderr[-3000:]
    assert "graph break: computed on the host each step, graph inputs: coin (tests/fixtures/host_values_mixup.py:34), " \
           "lam (tests/fixtures/host_values_mixup.py:33), warm" in stderr, stderr[-3000:]
    ours, ref = log["mixup"], torch_log["mixup"]
    # the host RNG streams advance as in PyTorch: the same draws, step for step
    assert [s["lam"] for s in ours] == [s["lam"] for s in ref]
    assert [s["coin"] for s in ours] == [s["coin"] for s in ref]
    lams = [s["lam"] for s in ours]
    assert len(set(lams)) == len(lams), lams  # lam varies per step ...
    # ... and the compiled losses follow it (steps 2.. are compiled graphs): PyTorch's, to float32 rounding
    np.testing.assert_allclose([s["loss"] for s in ours], [s["loss"] for s in ref], rtol=2e-6)
    # torch.randperm in the step: a graph op, a new permutation every step. The site's first call (the eager
    # reference step) runs MindTorch's eager randperm, which draws with numpy (np.random.permutation): from there on
    # numpy's stream is not PyTorch's (as under --mode pynative); the first lam is still PyTorch's
    perms = log["randperm"]
    assert perms[0]["lam"] == torch_log["randperm_lams"][0]
    assert len({p["lam"] for p in perms}) == len(perms), perms
    assert all(sorted(p["index"]) == list(range(8)) for p in perms)
    assert len({tuple(p["index"]) for p in perms}) == len(perms), perms
    # each loss is the mixup loss of that step's lam and permutation: lam * CE(y) + (1 - lam) * CE(y[index]) with
    # CE(y) and CE(y[index]) bounded by the losses of pure batches: check lam changes the loss (no frozen lam)
    assert len({round(p["loss"], 7) for p in perms}) == len(perms)
    # CutMix: the box from numpy draws (numpy-integer slice bounds: patches/indexing.py), lam adjusted by the box
    # area in the step (ints are constants of each graph: passed as int64 tensors, 4 / 6 gave 0 and lam 1.0)
    cut, cut_ref = log["cutmix"], torch_log["cutmix"]
    assert [c["box"] for c in cut] == [c["box"] for c in cut_ref]
    assert [c["lam"] for c in cut] == [c["lam"] for c in cut_ref]
    np.testing.assert_allclose([c["loss"] for c in cut], [c["loss"] for c in cut_ref], rtol=2e-6)


def test_host_statements_are_split_out_in_order():
    """The rewrite (adapter/step_rewrite.py + host_values.split_region): host statements run before the site call,
    in the script's order; a draw inside an expression that also calls the model, or after a graph statement it
    reads, stays in the region."""
    from adapter.step_rewrite import rewrite
    source = (
        "for x, y in data:\n"
        "    opt.zero_grad()\n"
        "    lam = np.random.beta(a, a)\n"
        "    coin = random.random()\n"
        "    h = model(x)\n"
        "    w = float(np.sqrt(1.0 - lam)) + coin\n"
        "    late = np.random.rand() * h.mean()\n"
        "    loss = crit(h * w + late, y) * np.random.uniform()\n"
        "    loss.backward()\n"
        "    opt.step()\n")
    tree, sites = rewrite(source, "train.py")
    site = sites[0]
    assert [ast.unparse(s) for s in site.region] == [
        "h = model(x)", "late = np.random.rand() * h.mean()",
        "loss = crit(h * w + late, y) * np.random.uniform()"]
    assert site.host_values == ["w"] and site.host_lines == [6]
    body = [ast.unparse(s) for s in tree.body[0].body]
    assert body[:4] == ["opt.zero_grad()", "lam = np.random.beta(a, a)", "coin = random.random()",
                        "w = float(np.sqrt(1.0 - lam)) + coin"], body
    assert body[4].startswith("(h, late, loss) = __adapter_step__(0, {")


def test_no_split_when_a_statement_moved_after_the_step_draws_first():
    """``a = np.random.rand()`` between two region statements (not needed by the loss: run after the site call)
    before ``lam = ...``: splitting lam out would draw it before ``a``, against the script's order; the region keeps
    it (the step runs eagerly). Without the check, lam was split out."""
    from adapter.step_rewrite import rewrite
    source = (
        "for x, y in data:\n"
        "    h = model(x)\n"
        "    a = np.random.rand()\n"
        "    lam = np.random.beta(1.0, 1.0)\n"
        "    loss = crit(h * lam, y)\n"
        "    loss.backward()\n")
    _, sites = rewrite(source, "train.py")
    assert sites[0].host_values == []
    assert [ast.unparse(s) for s in sites[0].region][1] == "lam = np.random.beta(1.0, 1.0)"
    # the same with `a` drawn before the region's first statement: it stays there, before the split-out lam
    _, sites = rewrite(source.replace("    h = model(x)\n    a = np.random.rand()\n",
                                      "    a = np.random.rand()\n    h = model(x)\n"), "train.py")
    assert sites[0].host_values == ["lam"]


GENERATORS = os.path.join(HERE, "fixtures", "host_values_generators.py")


def _generator_losses(noises):
    """The fixture's loss for each noise (4, 3): mean((x + noise) @ W.T + b) ** 2) with its fixed weights, float32."""
    w = np.array([[0.5, -1.0, 0.25], [1.5, 0.75, -0.5]], np.float32)
    b = np.array([0.1, -0.2], np.float32)
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 12
    return [float((((x + n) @ w.T + b) ** 2).mean()) for n in noises]


def test_generator_object_draws_are_fresh_every_compiled_step():
    """A ``RandomState`` object's draw: split out of the step when in its own statement (compiled, an input each
    step); inside a function the step calls, caught while compiling (its state put back) and run eagerly, naming the
    draw's line. Either way each step sees numpy's next draw. Before (2026-12-06), both loops compiled with the first
    compiled step's noise as a constant of the graph, silently: steps 2 and 3 repeated step 1's noise and loss
    (pt_original/idioms/gan.py's D and G losses left PyTorch's from its third iteration)."""
    log, stderr = run_json("--explain", "--original", GENERATORS)
    stream = np.random.RandomState(7)
    noises = [stream.standard_normal((4, 3)).astype(np.float32) for _ in range(8)]
    own = log["own_statement"]
    np.testing.assert_array_equal([s["noise"] for s in own], noises[:4])
    np.testing.assert_allclose([s["loss"] for s in own], _generator_losses(noises[:4]), rtol=1e-5)
    np.testing.assert_allclose([s["loss"] for s in log["in_function"]], _generator_losses(noises[4:]), rtol=1e-5)
    assert "host_values_generators.py:25: backward() of loss — compiled" in stderr, stderr[-3000:]
    assert "graph break: computed on the host each step, graph inputs: noise (tests/fixtures/host_values_generators.py:22)" in stderr, stderr[-3000:]
    assert "host_values_generators.py:38: backward() of loss — eager (PyNative): RandomState.standard_normal at " \
           "tests/fixtures/host_values_generators.py:31 draws on the host" in stderr, stderr[-3000:]


HELPERS = os.path.join(HERE, "fixtures", "host_values_helpers.py")
HELPERS_GOLDEN = os.path.join(HERE, "fixtures", "host_values_helpers_torch.json")


def test_draws_inside_helper_functions_are_split_out_and_match_pytorch():
    """``inputs, targets_a, targets_b, lam = mixup_data(inputs, targets, alpha)`` (a function of the script that draws
    with numpy) and ``cutmix_batch(...)`` imported from a module next to the script (its box drawn in a second
    function): the call runs on the host each step (a graph break), the graph takes its results as inputs, and the
    losses are PyTorch 2.13's step by step. Before (2026-12-06), both steps ran eagerly ("np.random.beta at
    host_values_helpers.py:33 draws on the host"), and ``map(Variable, ...)`` crashed (MindTorch's Variable:
    "requires_grad property value must be a boolean"). A function that draws and also calls the model stays in the
    step: eager, with PyTorch's values."""
    log, stderr = run_json("--explain", "--original", HELPERS)
    with open(HELPERS_GOLDEN) as f:
        ref = json.load(f)
    assert "host_values_helpers.py:59: backward() of loss — compiled (graph mode, fused with optimizer.step() at " \
           "line 60); 1 graph(s)" in stderr, stderr[-3000:]
    assert "graph inputs: inputs (tests/fixtures/host_values_helpers.py:54), targets_a " \
           "(tests/fixtures/host_values_helpers.py:54), targets_b (tests/fixtures/host_values_helpers.py:54), lam " \
           "(tests/fixtures/host_values_helpers.py:54)" in stderr, stderr[-3000:]
    assert "host_values_helpers.py:87: backward() of loss — compiled" in stderr, stderr[-3000:]
    assert "host_values_helpers.py:103: backward() of loss — eager (PyNative): np.random.beta at " \
           "tests/fixtures/host_values_helpers.py:94 draws on the host" in stderr, stderr[-3000:]
    for loop in ("mixup", "cutmix", "model_call"):
        assert [s["lam"] for s in log[loop]] == [s["lam"] for s in ref[loop]], loop
        np.testing.assert_allclose([s["loss"] for s in log[loop]], [s["loss"] for s in ref[loop]], rtol=2e-6,
                                   err_msg=loop)
    assert [s["correct"] for s in log["mixup"]] == [s["correct"] for s in ref["mixup"]]
    # torch.randperm in the helper: MindTorch's eager randperm draws from numpy's stream (PyTorch's does not), so
    # lams part from PyTorch's after the first step; each step still draws afresh (no value frozen in the graph)
    perm = log["randperm"]
    assert perm[0]["lam"] == ref["randperm"][0]["lam"]
    assert len({s["lam"] for s in perm}) == len(perm) and len({round(s["loss"], 7) for s in perm}) == len(perm)


def _drawing(source, name="train.py", tmp_path=None, **files):
    from adapter.host_values import DrawingFunctions
    folder = tmp_path
    for filename, text in files.items():
        (folder / f"{filename}.py").write_text(text)
    return DrawingFunctions(ast.parse(source), str(folder / name))


def test_drawing_functions_follow_the_script_and_modules_next_to_it(tmp_path):
    """Which calls :class:`adapter.host_values.DrawingFunctions` splits out: functions that draw and compute on data
    only, in the script or in a file next to it, through helper calls; not a function that calls a parameter, a
    global object or an unknown method (it may be the model), nor one that does not draw."""
    lib = ("import numpy as np\n"
           "def box(n):\n"
           "    return np.random.randint(n)\n"
           "def cut(x, y):\n"
           "    b = box(x.size(0))\n"
           "    return x.clone(), y, b\n")
    source = ("import numpy as np\nimport torch\nimport mylib\nfrom mylib import cut\nfrom mylib import box as bx\n"
              "def mix(x, y, a):\n"
              "    lam = np.random.beta(a, a)\n"
              "    return lam * x + (1 - lam) * x.flip(0), y, lam\n"
              "def forward_mix(model, x):\n"
              "    lam = np.random.beta(1.0, 1.0)\n"
              "    return model(lam * x)\n"
              "def uses_net(x):\n"
              "    return net(x) * np.random.rand()\n"
              "def method(x):\n"
              "    return x.encode() * np.random.rand()\n"
              "def plain(x):\n"
              "    return torch.flip(x, [0])\n")
    fns = _drawing(source, tmp_path=tmp_path, mylib=lib)

    def draw(expr):
        return fns.draw(ast.parse(expr, mode="eval").body)

    assert draw("mix") == "np.random.beta at train.py:7"
    assert draw("cut") == "np.random.randint at mylib.py:3"
    assert draw("mylib.cut") == "np.random.randint at mylib.py:3"
    assert draw("bx") == "np.random.randint at mylib.py:3"
    for name in ("forward_mix", "uses_net", "method", "plain", "np.random.beta", "unknown"):
        assert draw(name) is None, name
    from adapter.step_rewrite import rewrite
    loop = ("for x, y in data:\n"
            "    x, y, lam = mix(x, y, 0.4)\n"
            "    out = forward_mix(net, x)\n"
            "    loss = crit(out, y) * lam\n"
            "    loss.backward()\n")
    (tmp_path / "mylib.py").write_text(lib)
    _, sites = rewrite(source + loop, str(tmp_path / "train.py"))
    assert sites[0].host_values == ["lam", "x", "y"] or sorted(sites[0].host_values) == ["lam", "x", "y"]
    assert [ast.unparse(s) for s in sites[0].region] == ["out = forward_mix(net, x)", "loss = crit(out, y) * lam"]


COUNTERS = os.path.join(HERE, "fixtures", "host_values_counters.py")


def test_int_counters_the_step_computes_with_are_graph_inputs():
    """``beta = min(1.0, epoch / 10)`` and ``1e-3 * step`` in the step, over 24 steps of 12 epochs: the ints are
    float32 graph inputs once they change (2 graphs, PyTorch's losses); before (2026-12-06) each value compiled its
    own graph and the site ran eagerly after 8 ("its non-tensor inputs ... change every step"). Builtin ``min`` of a
    tensor compiles through graph_syntax's min/max form (MindSpore: "the inputs should be constant"). An int used as
    a slice bound stays a constant of each graph (one graph per value)."""
    log, stderr = run_json("--explain", "--original", COUNTERS)
    with open(os.path.join(HERE, "fixtures", "host_values_counters_torch.json")) as f:
        ref = json.load(f)
    assert "host_values_counters.py:26: backward() of loss — compiled (graph mode, fused with optimizer.step() at " \
           "line 27); 2 graph(s)" in stderr, stderr[-3000:]
    assert "graph inputs: epoch, step; 24 calls" in stderr, stderr[-3000:]
    assert "host_values_counters.py:35: backward() of loss — compiled (graph mode, fused with optimizer.step() at " \
           "line 36); 3 graph(s)" in stderr, stderr[-3000:]
    for loop in ("anneal", "sliced"):
        np.testing.assert_allclose(log[loop], ref[loop], rtol=2e-6, err_msg=loop)


def test_counters_are_names_the_region_only_computes_with():
    """adapter/host_values.counters: reads under arithmetic, comparisons, min/max/abs/float/math.* up to a tensor
    computation or a scalar assignment (followed); any other read keeps the name a constant."""
    from adapter.host_values import counters

    def names(body, free):
        tree = ast.parse(body)
        return counters(tree.body[:-1], tree.body[-1].value, free)

    assert names("beta = min(1.0, e / 10)\nw = beta * 2\nloss = crit(out) * w + 1e-3 * s", ["e", "s", "out"]) == \
        ["e", "s"]
    assert names("loss = crit(out[:, :k]) * k", ["k", "out"]) == []  # a slice bound
    assert names("h = model(x, step)\nloss = h.sum() * step", ["step", "x", "model"]) == []  # a call argument
    assert names("b = e / 10\nloss = torch.full((2,), b).sum()", ["e"]) == []  # derived name passed to a call
    assert names("loss = crit(out) * (0.5 if e > 3 else 1.0)", ["e", "out"]) == ["e"]
    assert names("n = range(e)\nloss = crit(out) * e", ["e", "out"]) == []
    assert names("loss = crit(out) * math.cos(math.pi * t / T)", ["t", "T", "out"]) == ["t", "T"]


CALLS = os.path.join(HERE, "fixtures", "host_calls_train.py")


def test_draws_inside_methods_and_callable_objects_are_split_out_and_match_pytorch():
    """``inputs, targets_a, targets_b, lam = self.mixup_data(inputs, targets, self.alpha)`` (a trainer's method) and
    ``images, soft = mixer(images, labels)`` (a callable object of a module next to the script that mixes the batch
    in place: ``x.mul_(lam).add_(...)``, a pasted box): the call runs on the host each step, decided at run time
    from the callee's source (adapter/host_values.host_call), and the graph takes the mixed batch (as changed in
    place) and the targets as inputs: compiled, PyTorch 2.13's losses, draws and batches step by step
    (``scripts/record_reference.py host_calls``). A method that draws and calls the model, or reads a weight
    (``self.model[0].weight``: its gradient flows through the result), stays in the step: eager, PyTorch's values.
    Before (2026-12-06), all four steps ran eagerly ("np.random.beta at host_calls_train.py:35 draws on the
    host")."""
    log, stderr = run_json("--explain", "--original", CALLS)
    with open(os.path.join(HERE, "fixtures", "host_calls_torch.json")) as f:
        ref = json.load(f)
    assert "host_calls_train.py:56: backward() of loss — compiled (graph mode, fused with optimizer.step() at line " \
           "57); 1 graph(s)" in stderr, stderr[-3000:]
    assert "graph inputs: inputs (tests/fixtures/host_calls_train.py:52), lam (tests/fixtures/host_calls_train.py:52)" \
        in stderr, stderr[-3000:]
    assert "host_calls_train.py:103: backward() of loss — compiled (graph mode, fused with optimizer.step() at line " \
           "104); 1 graph(s)" in stderr, stderr[-3000:]
    assert "graph inputs: images (tests/fixtures/host_calls_train.py:99), soft (tests/fixtures/host_calls_train.py:99)" \
        in stderr, stderr[-3000:]
    assert "host_calls_train.py:67: backward() of loss — eager (PyNative): np.random.beta at " \
           "tests/fixtures/host_calls_train.py:40 draws on the host" in stderr, stderr[-3000:]
    assert "host_calls_train.py:79: backward() of loss — eager (PyNative): np.random.beta at " \
           "tests/fixtures/host_calls_train.py:45 draws on the host" in stderr, stderr[-3000:]
    # a drawing function of the script that reads a global weight (`x * (lam + WEIGHT.mean())`): before, split out
    # by its source alone and compiled with that gradient lost (losses off PyTorch's by 3e-6 at step 2, 5e-5 later)
    assert "host_calls_train.py:127: backward() of loss — eager (PyNative): np.random.beta at " \
           "tests/fixtures/host_calls_train.py:117 draws on the host" in stderr, stderr[-3000:]
    for loop in ("method", "mixer", "model_call", "weight_read", "global_weight"):
        assert len(log[loop]) == len(ref[loop]), loop
        np.testing.assert_allclose([s["loss"] for s in log[loop]], [s["loss"] for s in ref[loop]], rtol=2e-6,
                                   err_msg=loop)
    for loop in ("method", "model_call"):
        assert [s["lam"] for s in log[loop]] == [s["lam"] for s in ref[loop]], loop
    # the batch the step saw is the one mixed in place (CutMix's box or mixup's scaling), and the soft targets
    np.testing.assert_allclose([s["batch"] for s in log["mixer"]], [s["batch"] for s in ref["mixer"]], rtol=1e-6)
    np.testing.assert_allclose([s["soft"] for s in log["mixer"]], [s["soft"] for s in ref["mixer"]], rtol=1e-6)


def test_timm_mixup_in_the_step_compiles_and_matches_pytorch():
    """timm.data.Mixup (mixup and CutMix switched per batch, label smoothing) called in the step: its ``__call__``,
    methods and module functions are read at run time and run on the host (numpy draws, ``x.mul_(lam).add_(...)``,
    the pasted box), the step compiles, and the 8 losses are PyTorch 2.13's with timm 1.0.31 given the same numpy
    stream (``scripts/record_reference.py host_calls_timm``). Before (2026-12-06): eager ("np.random.rand draws on
    the host")."""
    import importlib.util
    if importlib.util.find_spec("timm") is None:
        import pytest
        pytest.skip("timm is not installed in this venv (scripts/setup.sh installs it)")
    log, stderr = run_json("--explain", "--original", os.path.join(HERE, "fixtures", "host_calls_timm.py"))
    with open(os.path.join(HERE, "fixtures", "host_calls_timm_torch.json")) as f:
        ref = json.load(f)["steps"]
    assert "host_calls_timm.py:39: backward() of loss — compiled (graph mode, fused with optimizer.step() at line " \
           "40); 1 graph(s)" in stderr, stderr[-3000:]
    assert "graph inputs: inputs (tests/fixtures/host_calls_timm.py:35), targets " \
           "(tests/fixtures/host_calls_timm.py:35)" in stderr, stderr[-3000:]
    assert "PyNative" not in stderr, stderr[-3000:]
    steps = log["steps"]
    assert len(steps) == len(ref) == 8
    np.testing.assert_allclose([s["loss"] for s in steps], [s["loss"] for s in ref], rtol=2e-6)
    np.testing.assert_allclose([s["batch"] for s in steps], [s["batch"] for s in ref], rtol=1e-6)
    np.testing.assert_allclose([s["target"] for s in steps], [s["target"] for s in ref], rtol=1e-6)


def test_method_and_object_calls_are_guarded_by_a_run_time_check():
    """The rewrite of a step whose statement calls a method or an object that may draw: a site with the call split
    out, taken when ``__adapter_host_calls__`` says so at run time, and a twin site with the call in its region
    (adapter/step_rewrite.py ``_make_site``). A model call that does not rebind its argument is no candidate."""
    from adapter.step_rewrite import rewrite
    source = (
        "for x, y in data:\n"
        "    opt.zero_grad()\n"
        "    x, y = mix(x, y)\n"
        "    h = model(x)\n"
        "    loss = crit(h, y)\n"
        "    loss.backward()\n"
        "    opt.step()\n")
    tree, sites = rewrite(source, "train.py")
    assert len(sites) == 2
    assert sites[0].host_values == ["x", "y"] and [ast.unparse(s) for s in sites[0].region] == [
        "h = model(x)", "loss = crit(h, y)"]
    assert sites[1].host_values == [] and [ast.unparse(s) for s in sites[1].region][0] == "(x, y) = mix(x, y)"
    body = [ast.unparse(s) for s in tree.body[0].body]
    assert body[0] == "opt.zero_grad()" and len(body) == 2, body
    assert body[1].startswith("if __adapter_host_calls__(0, lambda : ((mix, (x, y)),)):\n"), body[1]
    assert "__adapter_step__(0, " in body[1] and "__adapter_step__(1, " in body[1]
    _, sites = rewrite(source.replace("x, y = mix(x, y)", "z = mix(x, y)").replace("model(x)", "model(z)"),
                       "train.py")
    assert len(sites) == 1 and sites[0].host_values == []
    # `self.<m>()` not rebinding anything: a candidate when a method of that name in the script draws
    method = ("import numpy as np\n"
              "class T:\n"
              "    def lam(self):\n"
              "        return np.random.beta(1.0, 1.0)\n"
              "    def size(self):\n"
              "        return 3\n"
              "    def fit(self, data):\n"
              "        for x, y in data:\n"
              "            a = self.lam()\n"
              "            b = self.size()\n"
              "            loss = crit(model(x) * a * b, y)\n"
              "            loss.backward()\n")
    _, sites = rewrite(method, "train.py")
    assert len(sites) == 2 and sites[0].host_values == ["a"], [s.host_values for s in sites]


def test_host_call_takes_only_callees_that_draw_and_reach_no_weight():
    """adapter/host_values.host_call, on the running program's objects (tests/fixtures/host_calls_decisions.py): a
    callable object and methods that draw and read only numbers of their object are host calls (a trainer's method
    may read ``self.alpha`` while ``self.model`` is there); a callee that calls or reads a module or a Parameter
    (through ``self``, a global, a closure cell, an argument, or ``self`` handed to a function), a module, a
    callee without a draw, and callees whose source cannot be read alone (a lambda, a ``functools.partial``) are
    not: their call stays in the step, where its gradient is the graph's."""
    log, _ = run_json("--original", os.path.join(HERE, "fixtures", "host_calls_decisions.py"))
    host = {name for name, draw in log.items() if draw is not None}
    assert host == {"mixer", "method", "method_of_trainer_with_model", "hands_self_on_without_model", "via_static"}, log
    assert log["mixer"] == "np.random.beta at host_calls_lib.py:34"
    assert log["via_static"] == "np.random.rand at host_calls_decisions.py:38"
