"""Replay the recorded cases here (MindTorch on MindSpore, set up as ``run.py`` sets up a script) in PyNative and
inside a compiled graph, and compare each with PyTorch's golden result.

PyNative: ``setup`` and ``expr`` run as a script's line would; gradients by ``mindspore.grad`` of the case's loss
(:mod:`app.tools.conformance.spec`) with respect to the floating inputs and the ``init``ed modules' parameters.
Graph: ``expr`` is the body of a generated ``nn.Module.forward`` (its source written to a file, as MindSpore's
compiler parses source), compiled and run under :func:`adapter.graph_semantics.graph_mode`, the mode ``run.py``
compiles training steps in; setup-built objects and parameter inputs are attributes of that module. Its gradients
come from a ``GradOperation`` compiled into the same graph.

Verdicts per case and mode (:class:`Result`):

* ``pass``: same result type and structure, dtypes, shapes; integer/bool values exact; floating values within
  :data:`TOLERANCES` for the dtype; gradients likewise; or both raise.
* ``fail``: anything else, with what differed and by how much.
* ``fallback`` (graph only): the call does not compile; ``run.py`` then runs that step or forward in PyNative, whose
  verdict applies. Not a silent difference.
* ``skip``: the case declares it has no graph form (``graph=False``), or has no golden record.

Tolerances (the issue's thresholds, after msprobe's fp32 pass criteria, tightened): float32 ``|ours - torch| <= 1e-6
+ 1e-5 |torch|`` element-wise and cosine similarity >= 0.99999 (where some ``|torch|`` exceeds the 1e-6: values
all within the absolute tolerance of zero are rounding noise, their direction meaningless); float16 ``1e-3 + 1e-3 |torch|``; bfloat16
``1e-2 + 1e-2 |torch|``; float64 ``1e-12 + 1e-10 |torch|``.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import sys
import tempfile
import warnings
from typing import Dict, List, Optional, Tuple

import numpy as np

from app.bootstrap import setup_mindspore
from app.tools.conformance.runner import evaluate, namespace, setup_names
from app.tools.conformance.spec import GOLDEN_DIR, ROOT, Case, encode, error, float_leaves, leaf, loss_weights

# dtype -> (atol, rtol)
TOLERANCES = {"float32": (1e-6, 1e-5), "float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float64": (1e-12, 1e-10)}
COSINE_MIN = 0.99999
_COMPLEX_PARTS = {"complex64": "float32", "complex128": "float64"}
# cases per worker process of run_isolated: a fresh process now and then keeps the memory of hundreds of compiled
# graphs from adding up (a worker reached 24 GB and was OOM-killed after ~140 graph cases on a loaded machine)
WORKER_CASES = 150


@dataclasses.dataclass
class Result:
    """One case's verdicts: ``pynative``/``graph`` in pass/fail/fallback/skip, with the reason where not pass."""
    id: str
    api: str
    sig: str
    expr: str
    pynative: str
    graph: str
    pynative_why: str = ""
    graph_why: str = ""
    max_rel: float = 0.0

    @property
    def namespace(self) -> str:
        return namespace_of(self.api)


def namespace_of(api: str) -> str:
    """``torch.Tensor``, ``torch.nn.functional``, ``torch.nn``, ``torch.optim``, ``torch.utils.data``,
    ``torchvision``, else ``torch``."""
    for prefix in ("torch.Tensor", "torch.nn.functional", "torch.nn", "torch.optim", "torch.utils.data",
                   "torchvision"):
        if api == prefix or api.startswith(prefix + "."):
            return prefix
    return "torch"


def load_golden(directory: str = GOLDEN_DIR) -> Tuple[dict, Dict[str, np.ndarray]]:
    """Every group's golden records merged: ({"cases": {id: record}, "torch": version}, {key: array})."""
    meta: dict = {"cases": {}}
    arrays: Dict[str, np.ndarray] = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".json") and os.path.exists(os.path.join(directory, name[:-5] + ".npz")):
            with open(os.path.join(directory, name)) as f:
                part = json.load(f)
            meta["cases"].update(part.pop("cases"))
            meta.update(part)
            with np.load(os.path.join(directory, name[:-5] + ".npz")) as z:
                arrays.update({k: z[k] for k in z.files})
    return meta, arrays


def _to_numpy(t):
    import mindspore as ms
    from mindtorch.torch.tensor import cast_to_ms_tensor
    t = cast_to_ms_tensor(t)
    if t.dtype == ms.bfloat16:
        t = t.astype(ms.float32)
    # a copy: asnumpy() can share the tensor's memory, and the gradient step below runs the expression again (an
    # in-place update such as instance_norm's running statistics would then change what the forward recorded)
    return np.array(t.asnumpy(), copy=True)


# ---------------------------------------------------------------- comparison

def compare_arrays(want: np.ndarray, got: np.ndarray, dtype: str) -> Tuple[bool, str, float]:
    """(equal within the dtype's tolerance, what differs, max relative error) of two arrays of one shape. A complex
    array is compared as its real and imaginary parts, each at its float dtype's tolerance (an FFT's values are sums
    rounded in another order, as a real reduction's)."""
    if dtype in _COMPLEX_PARTS and want.shape == got.shape:
        parts = lambda a: np.stack([a.real, a.imag])  # noqa: E731
        return compare_arrays(parts(want), parts(got), _COMPLEX_PARTS[dtype])
    if dtype not in TOLERANCES:
        if want.shape == got.shape and np.array_equal(want, got):
            return True, "", 0.0
        bad = int(np.sum(want != got)) if want.shape == got.shape else -1
        return False, f"{bad} of {want.size} {dtype} values differ", float("inf")
    atol, rtol = TOLERANCES[dtype]
    w, g = want.astype(np.float64), got.astype(np.float64)
    if not np.array_equal(np.isnan(w), np.isnan(g)):
        return False, "NaN at other places", float("inf")
    fin = ~np.isnan(w)
    if not np.array_equal(np.isinf(w) & fin, np.isinf(g) & fin) or np.any(w[np.isinf(w)] != g[np.isinf(w)]):
        return False, "inf at other places", float("inf")
    ok = np.isfinite(w)
    err = np.abs(w[ok] - g[ok])
    rel = float(np.max(err / np.maximum(np.abs(w[ok]), atol / rtol))) if err.size else 0.0
    if err.size and np.any(err > atol + rtol * np.abs(w[ok])):
        n = int(np.sum(err > atol + rtol * np.abs(w[ok])))
        return False, f"{n} of {w.size} values off, max abs {float(err.max()):.3g}, max rel {rel:.3g}", rel
    # the cosine only where PyTorch's values rise above the absolute tolerance: a result (a gradient) that is zero
    # within atol everywhere is rounding noise whose direction means nothing (corrcoef of two-sample rows is +-1 for
    # every input: its gradient, exactly 0, was 1e-7 noise on both sides, cosine 0.105)
    if dtype in ("float32", "float64") and err.size > 1 and float(np.max(np.abs(w[ok]))) > atol:
        nw, ng = np.linalg.norm(w[ok]), np.linalg.norm(g[ok])
        if nw > 0 and ng > 0:
            cos = float(np.dot(w[ok], g[ok]) / (nw * ng))
            if cos < COSINE_MIN:
                return False, f"cosine {cos:.6f}", rel
    return True, "", rel


def compare(want: dict, want_arrays, got: dict, got_arrays, where: str = "result",
            graph: bool = False, values: bool = True) -> Tuple[bool, str, float]:
    """Compare two encoded results (:func:`app.tools.conformance.spec.encode`): (equal, the first difference, max
    relative error over the floating values). ``graph``: the result left a compiled graph, where every named tuple
    is a plain tuple (MindSpore's graph outputs have no user tuple types; inside the graph, indexing and unpacking
    read both alike), so PyTorch's named tuple and a tuple of the same items are equal, and so are a ``torch.Size``
    and a tuple of the same ints. ``values=False``: tensors'
    dtypes and shapes only (random draws)."""
    if graph and want["t"] == "namedtuple" and got["t"] == "tuple":
        got = dict(got, t="namedtuple", name=want["name"], fields=want["fields"])
    if graph and want["t"] == "Size" and got["t"] == "tuple" and all(i["t"] == "int" for i in got["items"]):
        got = {"t": "Size", "v": [i["v"] for i in got["items"]]}  # a torch.Size leaves a graph as a tuple
    if want["t"] == "error" or got["t"] == "error":
        if want["t"] == got["t"]:
            return True, "", 0.0
        if want["t"] == "error":
            return False, f"PyTorch raises {want['type']}: {want['msg']}; here {where} returns", 0.0
        return False, f"raises {got['type']}: {got['msg']}", 0.0
    if want["t"] != got["t"]:
        return False, f"{where} is {_kind(got)}, PyTorch's is {_kind(want)}", 0.0
    if not graph and ("written" in want or "written" in got):  # in-place writes to the inputs (PyNative)
        ok, why = _compare_written(want.get("written", {}), want_arrays, got.get("written", {}), got_arrays, values)
        if not ok:
            return False, why, float("inf")
    t = want["t"]
    if t == "tensor" or t == "ndarray":
        if want["dtype"] != got["dtype"]:
            return False, f"{where} dtype {got['dtype']}, PyTorch's {want['dtype']}", 0.0
        if list(want["shape"]) != list(got["shape"]):
            return False, f"{where} shape {tuple(got['shape'])}, PyTorch's {tuple(want['shape'])}", 0.0
        if not values:
            return True, "", 0.0
        ok, why, rel = compare_arrays(want_arrays[want["key"]], got_arrays[got["key"]], want["dtype"])
        return ok, (f"{where}: {why}" if why else ""), rel
    if t in ("tuple", "list", "namedtuple"):
        if t == "namedtuple" and (want["name"] != got["name"] or want["fields"] != got["fields"]):
            return False, f"{where} is {_kind(got)}, PyTorch's is {_kind(want)}", 0.0
        if len(want["items"]) != len(got["items"]):
            return False, f"{where} has {len(got['items'])} items, PyTorch's {len(want['items'])}", 0.0
        worst = 0.0
        for i, (w, g) in enumerate(zip(want["items"], got["items"])):
            ok, why, rel = compare(w, want_arrays, g, got_arrays, f"{where}[{i}]", graph, values)
            worst = max(worst, rel)
            if not ok:
                return False, why, worst
        return True, "", worst
    if t == "float":
        w, g = want["v"], got["v"]
        if w == g or (np.isnan(w) and np.isnan(g)):
            return True, "", 0.0
        rel = abs(w - g) / max(abs(w), 1e-6 / 1e-5)
        return (rel <= 1e-5), (f"{where} {g!r}, PyTorch's {w!r}" if rel > 1e-5 else ""), rel
    if t == "object":
        return want["type"] == got["type"], (f"{where} is a {got['type']}, PyTorch's a {want['type']}"
                                             if want["type"] != got["type"] else ""), 0.0
    if want.get("v") != got.get("v"):
        return False, f"{where} {got.get('v')!r}, PyTorch's {want.get('v')!r}", 0.0
    return True, "", 0.0


def _compare_written(want: dict, want_arrays, got: dict, got_arrays, values: bool) -> Tuple[bool, str]:
    """The inputs the call wrote (:func:`app.tools.conformance.spec.inputs_written`): the same names, equal values."""
    for name in sorted(set(want) | set(got)):
        if name not in want:
            return False, f"input `{name}` was changed in place here; PyTorch leaves it as it was"
        if name not in got:
            return False, f"input `{name}` was not written in place here, as PyTorch writes it"
        ok, why, _ = compare(want[name], want_arrays, got[name], got_arrays, f"input `{name}` after the call",
                             values=values)
        if not ok:
            return False, why
    return True, ""


def _kind(tree: dict) -> str:
    if tree["t"] == "namedtuple":
        return f"{tree['name']}({', '.join(tree['fields'])})"
    if tree["t"] in ("tensor", "ndarray"):
        return f"a {tree['dtype']} {tree['t']}"
    return tree["t"]


def compare_grads(want: Optional[list], want_arrays, got: Optional[list], got_arrays) -> Tuple[bool, str, float]:
    """Gradients: PyTorch's ``None`` (input unused) equals zeros here (``mindspore.grad`` gives zeros)."""
    if want is None:
        return True, "", 0.0
    if got is None:
        return False, "no gradient here", 0.0
    worst = 0.0
    for i, (w, g) in enumerate(zip(want, got)):
        if w is None:
            if g is not None and np.any(got_arrays[g["key"]] != 0):
                return False, f"gradient {i}: nonzero where PyTorch's is None", worst
            continue
        if g is None:
            return False, f"gradient {i}: none here", worst
        ok, why, rel = compare(w, want_arrays, g, got_arrays, f"gradient {i}")
        worst = max(worst, rel)
        if not ok:
            return False, why, worst
    return True, "", worst


# ---------------------------------------------------------------- running here

def _weighted_loss(case: Case, out, golden_tree: dict, torch):
    total = None
    for i, (path, node) in enumerate(float_leaves(golden_tree)):
        t = leaf(out, path)
        w = torch.tensor(loss_weights(node["shape"], case.seed(f"w{i}")), dtype=t.dtype)
        term = (t * w).sum()
        total = term if total is None else total + term
    return total


def _split_targets(case: Case, ns: dict, modules: list):
    names = case.grad_inputs()
    xs = [n for n in names if not case.inputs[n].param]
    params = [ns[n] for n in names if case.inputs[n].param] + [p for m in modules for p in m.parameters()]
    return names, xs, params


def _reorder(case: Case, names, x_grads, p_grads) -> list:
    """Gradients in the recorder's order: the grad inputs in ``inputs`` order, then the modules' parameters."""
    x_iter, p_iter = iter(x_grads), iter(p_grads)
    out = [next(p_iter) if case.inputs[n].param else next(x_iter) for n in names]
    return out + list(p_iter)


def run_pynative(case: Case, golden: dict):
    """(result tree, gradient trees or None, arrays) here in PyNative."""
    import mindspore as ms
    import torch
    from mindtorch.torch.tensor import cast_to_adapter_tensor, cast_to_ms_tensor

    try:
        ns, modules, out, tree, store = evaluate(case, torch, _to_numpy)
    except Exception as exc:
        return error(exc), None, {}
    if golden.get("grads") is None or golden["out"]["t"] == "error":
        return tree, None, store
    names, xs, params = _split_targets(case, ns, modules)
    code = compile(case.expr, "<case>", "eval")
    from adapter import tape
    tape.discard()  # the module calls above opened the eager bridge's recording: mindspore.grad below would run
    # inside it and differentiate its own backward again (second order: "MaxPoolGradGrad does not support on CPU")

    def loss(*args):
        scope = dict(ns)
        scope.update(zip(xs, [cast_to_adapter_tensor(a) for a in args]))
        return cast_to_ms_tensor(_weighted_loss(case, eval(code, scope), golden["out"], torch))

    try:
        grads = ms.grad(loss, grad_position=tuple(range(len(xs))) if xs else None,
                        weights=params if params else None)(*[ns[n] for n in xs])
    except Exception as exc:
        return tree, [error(exc)], store
    x_grads, p_grads = _unpack(grads, bool(xs), bool(params), len(xs))
    gtrees = [encode(cast_to_adapter_tensor(g), torch, store, f"{case.id}/g{i}", _to_numpy)
              for i, g in enumerate(_reorder(case, names, x_grads, p_grads))]
    return tree, gtrees, store


def _unpack(grads, has_x: bool, has_p: bool, nx: int):
    if has_x and has_p:
        x, p = grads
    elif has_x:
        x, p = grads, ()
    else:
        x, p = (), grads
    x = tuple(x) if isinstance(x, (tuple, list)) else (x,)
    p = tuple(p) if isinstance(p, (tuple, list)) else (p,)
    return x[:nx], p


_TEMPLATE = '''\
import math
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
optim = torch.optim


class Net(nn.Module):
    def __init__(self, env):
        super().__init__()
{attrs}
    def forward(self{args}):
{binds}        return {expr}


class Loss(nn.Module):
    def __init__(self, net, weights):
        super().__init__()
        self.net = net
{weights}
    def forward(self{args}):
        out = self.net({call})
        return {loss}
'''
_gen_dir: Optional[str] = None


def graph_source(case: Case, attrs: List[str], xs: List[str], golden_tree: dict) -> str:
    """The generated module for ``case`` (module docstring): ``Net`` (forward = ``expr``) and ``Loss`` (the weighted
    sum of ``Net``'s floating outputs)."""
    terms = []
    for i, (path, _) in enumerate(float_leaves(golden_tree) if golden_tree["t"] != "error" else []):
        terms.append(f"(out{''.join(f'[{j}]' for j in path)} * self.w{i}).sum()")
    return _TEMPLATE.format(
        attrs="".join(f"        self.o_{n} = env[{n!r}]\n" for n in attrs) or "        pass\n",
        args="".join(f", {x}" for x in xs), call=", ".join(xs),
        binds="".join(f"        {n} = self.o_{n}\n" for n in attrs), expr=case.expr,
        weights="".join(f"        self.w{i} = weights[{i}]\n" for i in range(len(terms))),
        loss=" + ".join(terms) or "0")


def _load_generated(case: Case, source: str):
    global _gen_dir
    if _gen_dir is None:
        _gen_dir = tempfile.mkdtemp(prefix="conformance_graphs_")
    path = os.path.join(_gen_dir, f"case_{case.id}.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(f"conformance_case_{case.id}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def run_graph(case: Case, golden: dict):
    """(result tree, gradient trees or None, arrays) with ``expr`` compiled in GRAPH_MODE. Raises what compiling or
    running raises."""
    import mindspore as ms
    import torch
    from mindtorch.torch.tensor import cast_to_adapter_tensor
    from adapter.graph_semantics import graph_mode, separate_shared_outputs

    ns, modules = namespace(case, torch, case.arrays(), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case.setup:
            exec(case.setup, ns)
    attrs = setup_names(case, ns)
    xs = [n for n in case.inputs if n not in attrs]
    gold = golden["out"]
    generated = _load_generated(case, graph_source(case, attrs, xs, gold))
    net = generated.Net({n: ns[n] for n in attrs})
    want_grads = golden.get("grads") is not None and gold["t"] != "error"
    names, gxs, params = _split_targets(case, ns, modules)
    args = [ns[n] for n in xs]
    store: dict = {}
    if not want_grads:
        with graph_mode():
            out = _Both(net, None, None)(*args)
        out = separate_shared_outputs(out)
        return encode(cast_to_adapter_tensor(out), torch, store, f"{case.id}/out", _to_numpy), None, store
    weights = [torch.tensor(loss_weights(node["shape"], case.seed(f"w{i}")), dtype=_dtype(torch, node["dtype"]))
               for i, (_, node) in enumerate(float_leaves(gold))]
    loss = generated.Loss(net, weights)
    both = _Both(net, loss, params)
    with graph_mode():
        out, x_grads, p_grads = both(*args)
    out = separate_shared_outputs(out)
    tree = encode(cast_to_adapter_tensor(out), torch, store, f"{case.id}/out", _to_numpy)
    x_by_name = dict(zip(xs, x_grads))
    grads = _reorder(case, names, [x_by_name[n] for n in gxs], p_grads)
    gtrees = [encode(cast_to_adapter_tensor(g), torch, store, f"{case.id}/g{i}", _to_numpy)
              for i, g in enumerate(grads)]
    return tree, gtrees, store


def _dtype(torch, name: str):
    return getattr(torch, name)


def _Both(net, loss, params):
    """A Cell returning (``net(*xs)``, d loss / d xs, d loss / d params), compiled as one graph; ``net(*xs)`` only
    where ``loss`` is None."""
    import mindspore as ms

    class Forward(ms.nn.Cell):
        def __init__(self):
            super().__init__(auto_prefix=False)
            self.net = net

        def construct(self, *xs):
            return self.net(*xs)

    if loss is None:
        return Forward()

    class Both(ms.nn.Cell):
        def __init__(self):
            super().__init__(auto_prefix=False)
            self.net = net
            self.loss = loss
            self.params = ms.ParameterTuple(params)
            self.grad_all = ms.ops.GradOperation(get_all=True)
            self.grad_both = ms.ops.GradOperation(get_all=True, get_by_list=True)
            self.has_params = bool(params)

        def construct(self, *xs):
            out = self.net(*xs)
            if self.has_params:
                if xs:
                    gx, gp = self.grad_both(self.loss, self.params)(*xs)
                    return out, gx, gp
                gp = ms.ops.GradOperation(get_by_list=True)(self.loss, self.params)()
                return out, (), gp
            return out, self.grad_all(self.loss)(*xs), ()

    return Both()


# ---------------------------------------------------------------- the whole run

def check(case: Case, golden: Optional[dict], golden_arrays, modes=("pynative", "graph")) -> Result:
    """Both verdicts for one case (module docstring)."""
    result = Result(case.id, case.api, case.sig, case.expr, "skip", "skip")
    if golden is None:
        result.pynative_why = result.graph_why = "no golden record (re-record: python -m app.tools.conformance.record)"
        return result
    from adapter import tape
    for mode in modes:
        try:  # no eager-bridge recording left open by the previous case (as tests/conftest.py's _fresh_tape)
            tape.discard()
        except Exception:  # a recording the previous case broke: closed (tape's state is reset) and forgotten
            pass
        if mode == "graph" and not case.graph:
            result.graph_why = "no graph form"
            continue
        try:
            tree, grads, arrays = (run_pynative if mode == "pynative" else run_graph)(case, golden)
        except Exception as exc:
            if golden["out"]["t"] == "error":
                verdict, why = "pass", ""
            else:  # graph: does not compile (run.py runs it eagerly); PyNative: the harness's own step raised
                verdict = "fallback" if mode == "graph" else "fail"
                why = f"{type(exc).__name__}: {_first_line(exc)}"
            setattr(result, mode, verdict)
            setattr(result, mode + "_why", why)
            continue
        ok, why, rel = compare(golden["out"], golden_arrays, tree, arrays, graph=mode == "graph", values=case.values)
        if ok and grads is not None and grads and grads[0] is not None and grads[0].get("t") == "error":
            ok, why = False, f"gradient raises {grads[0]['type']}: {grads[0]['msg']}"
        elif ok and golden["out"]["t"] != "error" and case.values:
            ok, why, grel = compare_grads(golden.get("grads"), golden_arrays, grads, arrays)
            rel = max(rel, grel)
        setattr(result, mode, "pass" if ok else "fail")
        setattr(result, mode + "_why", why)
        result.max_rel = max(result.max_rel, rel if np.isfinite(rel) else 0.0)
    return result


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    return (lines[0] if lines else "")[:200]


def run_all(cases: Optional[List[Case]] = None, modes=("pynative", "graph"), progress=None,
            isolated: bool = False) -> List[Result]:
    """Every case's :class:`Result` against the golden files. ``isolated``: in a child process (:func:`run_isolated`),
    so that a case that aborts the process (MindSpore's graph compiler aborts on ``torch.arange(0, 5, 0)``) fails
    alone instead of ending the run."""
    from app.tools.conformance.cases import all_cases
    cases = list(cases) if cases is not None else all_cases()
    if isolated:
        return run_isolated(cases, modes, progress)
    meta, arrays = load_golden()
    results = []
    for case in cases:
        results.append(check(case, meta["cases"].get(case.id), arrays, modes))
        if progress:
            progress(results[-1])
    return results


def run_isolated(cases: List[Case], modes, progress=None, workers: Optional[int] = None) -> List[Result]:
    """:func:`run_all` in child processes (``python -m app.tools.conformance.replay --worker``), each writing one JSON
    line per mode started and per result; when a child dies, the case and mode it had started fail ("the process
    aborted") and a new child goes on with the next case. A child replays at most :data:`WORKER_CASES` cases.

    ``workers`` children run at once, each on its own contiguous share of the cases (default: ``$CONFORMANCE_WORKERS``,
    else the number of CPUs, at most 4: each child holds hundreds of compiled graphs). The results come back in
    ``cases``' order whatever the number of workers: a case's verdict does not depend on which child replayed it."""
    import threading
    from concurrent.futures import ThreadPoolExecutor
    if workers is None:
        workers = int(os.environ.get("CONFORMANCE_WORKERS") or min(os.cpu_count() or 1, 4))
    workers = max(1, min(workers, len(cases) or 1))
    by_id = {c.id: c for c in cases}
    results: Dict[str, Result] = {}
    lock = threading.Lock()
    ids = [c.id for c in cases]
    size = -(-len(ids) // workers)
    shares = [ids[i:i + size] for i in range(0, len(ids), size)]
    with tempfile.TemporaryDirectory(prefix="conformance_") as tmp:
        jobs = [(share, os.path.join(tmp, str(n))) for n, share in enumerate(shares)]
        with ThreadPoolExecutor(max_workers=len(jobs) or 1) as pool:
            for done in pool.map(lambda job: _replay_share(job[0], job[1], by_id, modes, progress, lock), jobs):
                results.update(done)
    return [results[c.id] for c in cases if c.id in results]


def _replay_share(todo: List[str], tmp: str, by_id: Dict[str, Case], modes, progress, lock) -> Dict[str, Result]:
    """One worker thread of :func:`run_isolated`: the case ids ``todo``, in order, through successive children
    (files in the folder ``tmp``); ``progress`` is called under ``lock``."""
    import subprocess
    os.makedirs(tmp, exist_ok=True)
    results: Dict[str, Result] = {}
    while todo:
        ids_path, out_path = os.path.join(tmp, "ids"), os.path.join(tmp, "out")
        batch, rest = todo[:WORKER_CASES], todo[WORKER_CASES:]
        with open(ids_path, "w") as f:
            f.write("\n".join(batch))
        if os.path.exists(out_path):
            os.remove(out_path)
        proc = subprocess.run([sys.executable, "-m", "app.tools.conformance.replay", "--worker", ids_path,
                               out_path, ",".join(modes)], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        started = None
        with open(out_path) if os.path.exists(out_path) else open(os.devnull) as f:
            for line in f:
                record = json.loads(line)
                if "started" in record:
                    started = record["started"]
                    continue
                mode = record.pop("mode")
                one = Result(**record)
                result = results.setdefault(one.id, one)
                setattr(result, mode, getattr(one, mode))
                setattr(result, mode + "_why", getattr(one, mode + "_why"))
                result.max_rel = max(result.max_rel, one.max_rel)
                started = None
                if progress and mode == modes[-1]:
                    with lock:
                        progress(result)
        if proc.returncode == 0:
            todo = rest
            continue
        if started is None:  # died outside a case: report, do not loop
            raise RuntimeError(f"conformance worker exited {proc.returncode}: {proc.stderr[-2000:]}")
        case_id, mode = started
        case = by_id[case_id]
        result = results.get(case_id) or Result(case.id, case.api, case.sig, case.expr, "skip", "skip")
        setattr(result, mode, "fail")
        setattr(result, mode + "_why", f"the process aborted (exit status {proc.returncode}) in this case")
        results[case_id] = result
        for later in modes[modes.index(mode) + 1:]:
            setattr(result, later + "_why", f"not run: the process aborted in {mode}")
        if progress:
            with lock:
                progress(result)
        todo = batch[batch.index(case_id) + 1:] + rest
    return results


def _worker(ids_path: str, out_path: str, modes: str) -> int:
    """The child of :func:`run_isolated`: set up as ``run.py`` does, replay the listed cases; per case and mode a
    ``{"started": [id, mode]}`` line, then its :class:`Result` with ``"mode"``."""
    setup_mindspore("CPU")
    from app.tools.conformance.cases import all_cases
    with open(ids_path) as f:
        wanted = f.read().split()
    by_id = {c.id: c for c in all_cases()}
    meta, arrays = load_golden()
    with open(out_path, "a") as out:
        for case_id in wanted:
            case = by_id[case_id]
            for mode in modes.split(","):
                out.write(json.dumps({"started": [case_id, mode]}) + "\n")
                out.flush()
                one = check(case, meta["cases"].get(case.id), arrays, (mode,))
                out.write(json.dumps(dict(dataclasses.asdict(one), mode=mode)) + "\n")
                out.flush()
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        sys.exit(_worker(*sys.argv[2:]))
    sys.exit("usage: python -m app.tools.conformance.replay --worker IDS_FILE OUT_FILE MODES (run.py conformance)")
