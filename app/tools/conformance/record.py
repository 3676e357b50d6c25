"""Record the cases' golden results under real PyTorch: per case module ``tests/fixtures/conformance/<group>.json``
(result trees, torch version) and ``<group>.npz`` (the tensors' values), read by :mod:`app.tools.conformance.replay`
without PyTorch.

    .venv-ref/bin/python -m app.tools.conformance.record [--group tensor_methods ...] [--only ID_OR_API ...]

``--only`` re-records the named cases (by id, or every case of an API) and keeps the others' records; cases no longer
in :func:`app.tools.conformance.cases.all_cases` are dropped. The gradient of each case is that of
``sum_i (out_i * W_i).sum()`` (:func:`app.tools.conformance.spec.loss_weights`) with respect to its floating inputs and
the parameters of the modules its setup ``init``ed, by ``torch.autograd.grad`` (``None`` where unused).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys

import numpy as np

from app.tools.conformance.spec import GOLDEN_DIR, ROOT



def _to_numpy(t):
    import torch
    t = t.detach()
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.cpu().numpy() if not t.is_complex() else t.cpu().numpy()


def run_case(case):
    """(result tree, gradient trees or None, arrays) of ``case`` under real PyTorch."""
    import torch
    from app.tools.conformance.runner import evaluate
    from app.tools.conformance.spec import encode, error, float_leaves, leaf, loss_weights

    torch.manual_seed(0)
    try:
        ns, modules, out, tree, store = evaluate(case, torch, _to_numpy)
    except Exception as exc:  # PyTorch's error is the expected result
        return error(exc), None, {}
    if not case.grad:
        return tree, None, store
    targets = [ns[n] for n in case.grad_inputs()] + [p for m in modules for p in m.parameters()]
    terms = []
    for i, (path, node) in enumerate(float_leaves(tree)):
        t = leaf(out, path)
        if t.requires_grad:
            w = torch.tensor(loss_weights(node["shape"], case.seed(f"w{i}")), dtype=t.dtype)
            terms.append((t * w).sum())
    if not terms or not targets:
        return tree, None, store
    grads = torch.autograd.grad(sum(terms), targets, allow_unused=True)
    gtrees = []
    for i, g in enumerate(grads):
        gtrees.append(None if g is None else encode(g, torch, store, f"{case.id}/g{i}", _to_numpy))
    return tree, gtrees, store


def main(argv=None) -> int:
    import torch
    from app.tools.parity.reference import declare_torchvision_ops

    declare_torchvision_ops()  # torchvision's CUDA-built extension is removed in .venv-ref (setup_reference.sh)
    import torchvision
    from app.tools.conformance.cases import all_cases
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="case ids or APIs to re-record")
    parser.add_argument("--group", nargs="*", default=None, help="case modules to record (default: all)")
    args = parser.parse_args(argv)
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    groups: dict = {}
    for case in all_cases():
        groups.setdefault(case.group, []).append(case)
    for group, cases in groups.items():
        if args.group is not None and group not in args.group:
            continue
        json_path = os.path.join(GOLDEN_DIR, f"{group}.json")
        npz_path = os.path.join(GOLDEN_DIR, f"{group}.npz")
        old, old_arrays = {"cases": {}}, {}
        if args.only is not None and os.path.exists(json_path):
            with open(json_path) as f:
                old = json.load(f)
            with np.load(npz_path) as z:
                old_arrays = {k: z[k] for k in z.files}
        records, arrays = {}, {}
        for case in cases:
            if args.only is not None and case.id not in args.only and case.api not in args.only \
                    and case.id in old["cases"]:
                records[case.id] = old["cases"][case.id]
                arrays.update({k: v for k, v in old_arrays.items() if k.split("/")[0] == case.id})
                continue
            tree, grads, store = run_case(case)
            records[case.id] = {"api": case.api, "sig": case.sig, "expr": case.expr, "out": tree, "grads": grads}
            arrays.update(store)
        meta = {"torch": torch.__version__, "torchvision": torchvision.__version__,
                "python": platform.python_version(), "numpy": np.__version__,
                "date": datetime.date.today().isoformat(), "cases": records}
        with open(json_path, "w") as f:
            json.dump(meta, f, separators=(",", ":"), sort_keys=True)
        np.savez_compressed(npz_path, **arrays)
        errors = sum(1 for r in records.values() if r["out"]["t"] == "error")
        print(f"{group}: recorded {len(records)} cases ({errors} raise under PyTorch) with torch {torch.__version__}: "
              f"{os.path.relpath(json_path, ROOT)}, {os.path.getsize(npz_path) // 1024} KB of arrays", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
