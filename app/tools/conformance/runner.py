"""Running one case on either side. Imports no framework itself: each function takes the ``torch`` it runs on (real
PyTorch in :mod:`app.tools.conformance.record`, MindTorch in :mod:`app.tools.conformance.replay`).

:func:`namespace` builds the scope a case's ``setup`` and ``expr`` run in (inputs as tensors, ``init``);
:func:`init_module` gives a module's floating parameters and buffers the same values on both sides (drawn per
state-dict key from the case's seed, standard normal * 0.5; ``running_var`` uniform [0.5, 1.5)).
"""
from __future__ import annotations

import ast
import warnings
from typing import Dict, List, Tuple

import numpy as np

from app.tools.conformance.spec import FLOATING, Case, dtype_name, encode, inputs_written

BASE_NAMES = ("torch", "nn", "F", "optim", "np", "init", "math")


def module_arrays(case: Case, state: Dict[str, tuple]) -> Dict[str, np.ndarray]:
    """Values for a module's floating state-dict entries ``{key: (shape, dtype name)}``."""
    out = {}
    for key, (shape, dtype) in state.items():
        if dtype not in FLOATING:
            continue
        rs = np.random.RandomState(case.seed("param:" + key) % (2 ** 32))
        if key.endswith("running_var"):
            v = rs.uniform(0.5, 1.5, shape)
        else:
            v = rs.standard_normal(shape) * 0.5
        out[key] = v.astype("float32" if dtype == "bfloat16" else dtype)
    return out


def init_module(module, case: Case, torch) -> None:
    """Load :func:`module_arrays`'s values into ``module`` (strict: every other entry keeps its value)."""
    state = module.state_dict()
    shapes = {k: (tuple(v.shape), dtype_name(v.dtype)) for k, v in state.items()}
    new = dict(state)
    for key, arr in module_arrays(case, shapes).items():
        new[key] = torch.tensor(arr, dtype=state[key].dtype)
    module.load_state_dict(new)


def namespace(case: Case, torch, arrays: Dict[str, np.ndarray], requires_grad: bool) -> Tuple[dict, list]:
    """The scope for ``case``: ``torch``, ``nn``, ``F``, ``optim``, ``np``, ``math``, ``init(module)`` (returns the
    module, :func:`init_module`'d and remembered), and each input as a tensor (a ``Parameter`` for ``param=True``;
    requiring grad where :meth:`Case.grad_inputs` says, when ``requires_grad``). Returns (scope, the list ``init``
    appends modules to)."""
    import math
    modules: list = []

    def init(module):
        init_module(module, case, torch)
        modules.append(module)
        return module

    ns = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional, "optim": torch.optim, "np": np, "math": math,
          "init": init}
    grads = set(case.grad_inputs()) if requires_grad else set()
    for name, spec in case.inputs.items():
        t = torch.tensor(arrays[name])
        if spec.dtype == "bfloat16":
            t = t.to(torch.bfloat16)
        if spec.param:
            t = torch.nn.Parameter(t, requires_grad=name in grads or spec.floating())
        elif name in grads:
            t.requires_grad_(True)
        ns[name] = t
    return ns, modules


def setup_names(case: Case, ns: dict) -> List[str]:
    """Names ``expr`` reads that the setup defined (modules, numbers...) or that are parameter inputs: they become
    attributes of the compiled module in graph mode."""
    used = {n.id for n in ast.walk(ast.parse(case.expr, mode="eval")) if isinstance(n, ast.Name)}
    params = {n for n, s in case.inputs.items() if s.param}
    return sorted(n for n in used if n in ns and n not in BASE_NAMES and (n not in case.inputs or n in params))


def evaluate(case: Case, torch, to_numpy):
    """Run ``case`` eagerly on ``torch``: (scope, modules ``init`` built, the result, its encoded tree with what the
    call wrote to its inputs under ``"written"``, the arrays the tree refers to). Raises what the case raises."""
    store: Dict[str, np.ndarray] = {}
    arrays = case.arrays()
    ns, modules = namespace(case, torch, arrays, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case.setup:
            exec(case.setup, ns)
        out = eval(case.expr, ns)
    tree = encode(out, torch, store, f"{case.id}/out", to_numpy)
    written = inputs_written(case, ns, arrays, torch, store, to_numpy)
    if written:
        tree["written"] = written
    return ns, modules, out, tree, store
