"""Record PyTorch's OpInfo database (``op_db``) under real PyTorch (``.venv-ref``) into ``tests/fixtures/opinfo/``
(:mod:`app.tools.conformance.opinfo_spec` describes the files).

    .venv-ref/bin/python -m app.tools.conformance.opinfo_record [--only NAME ...]

Per entry (its ``name`` and ``variant_test_name``):

* the dtype: float32 where the entry supports it on CPU, else the first of int64, bool it supports;
* the first :data:`~app.tools.conformance.opinfo_spec.SAMPLES_PER_ENTRY` samples of its own ``sample_inputs`` that
  encode as an expression (tensors, numbers, strings, dtypes, lists and tuples of them, slices; no complex values) and
  hold at most :data:`~app.tools.conformance.opinfo_spec.MAX_NUMEL` tensor elements; ``requires_grad=True`` where the
  entry ``supports_autograd`` and the dtype is floating;
* each sample's result, and for a differentiable one the gradient of ``sum_i (out_i * W_i).sum()`` (the existing
  harness's loss, :func:`app.tools.conformance.record.run_case`) with respect to every input that requires grad;
* the first :data:`~app.tools.conformance.opinfo_spec.ERRORS_PER_ENTRY` of its ``error_inputs``: the error class and
  message PyTorch raises (checked against the class and pattern the entry expects; a case whose expression form does
  not raise so is left out).

The API an entry calls is its public function (the entry's ``op`` is ``torch.<name>``) or, where ``op`` is a wrapper,
its method variant (``torch.Tensor.<name>``); an entry with neither is recorded as ``skipped`` with the reason.
"""
from __future__ import annotations

import argparse
import datetime
import itertools
import json
import math
import os
import platform
import sys
import time

import numpy as np

from app.tools.conformance.opinfo_spec import (ERRORS_PER_ENTRY, GOLDEN_JSON, GOLDEN_NPZ, MAX_NUMEL, OPINFO_DIR,
                                               SAMPLES_PER_ENTRY, OpCase, namespace_of_entry, slug)
from app.tools.conformance.signature import signature
from app.tools.conformance.spec import ROOT


class Unsupported(Exception):
    """A sample holds a value the expression form cannot write (complex, a generator, a sparse tensor...)."""


_DTYPES = ("float32", "float16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool")


#: Entries whose ``op`` is a wrapper around a public API, written as that API's call: {name: (API, template)}; the
#: template gets the sample's ``input``, ``args`` and ``kwargs`` as source text (``kw``: ", k=v, ..." or "").
WRAPPED = {
    "einsum": ("torch.einsum", lambda i, a, kw: f"torch.einsum({a[0]}, {i})"),  # op(tensors, equation)
    "nn.functional.embedding": ("torch.nn.functional.embedding",  # op(weight, idx)
                                lambda i, a, kw: f"torch.nn.functional.embedding({a[0]}, {i}{kw})"),
    "nn.functional.embedding_bag": ("torch.nn.functional.embedding_bag",
                                    lambda i, a, kw: f"torch.nn.functional.embedding_bag({a[0]}, {i}{kw})"),
    "T": ("torch.Tensor.T", lambda i, a, kw: f"{i}.T"),
    "mT": ("torch.Tensor.mT", lambda i, a, kw: f"{i}.mT"),
    "H": ("torch.Tensor.H", lambda i, a, kw: f"{i}.H"),
    "mH": ("torch.Tensor.mH", lambda i, a, kw: f"{i}.mH"),
    "item": ("torch.Tensor.item", lambda i, a, kw: f"{i}.item()"),
    "zero_": ("torch.Tensor.zero_", lambda i, a, kw: f"{i}.clone().zero_()"),  # op(x) = torch.zero_(x.clone())
    "resize_": ("torch.Tensor.resize_", lambda i, a, kw: f"{i}.clone().resize_({a[0]})"),
    "nn.functional.scaled_dot_product_attention": (  # op seeds the dropout; the samples kept have dropout_p=0
        "torch.nn.functional.scaled_dot_product_attention",
        lambda i, a, kw: f"torch.nn.functional.scaled_dot_product_attention({', '.join([i, *a])}{kw})"),
}
#: Entries that draw random numbers (``op`` seeds them): the public function called directly, compared by dtype and
#: shape only (``values=False``), no gradient.
RANDOM = ("nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d", "nn.functional.alpha_dropout",
          "nn.functional.rrelu", "bernoulli", "multinomial", "normal", "rand_like", "randn_like", "randint_like",
          "randint", "randn")


def _resolve(torch, op):
    """(form, API, call prefix) of an op_db entry, or raise Unsupported. ``function``: ``op.op`` is the public
    function ``torch.<op.name>``; ``method``: the entry's method variant ``torch.Tensor.<name>``; ``wrapped``:
    :data:`WRAPPED`; ``random``: :data:`RANDOM`."""
    if op.name in WRAPPED and not op.variant_test_name:
        return "wrapped", WRAPPED[op.name][0], op.name
    obj = torch
    try:
        for part in op.name.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        obj = None
    if obj is not None and obj is op.op:
        return "function", f"torch.{op.name}", f"torch.{op.name}"
    if obj is not None and op.name in RANDOM:
        return "random", f"torch.{op.name}", f"torch.{op.name}"
    method = op.method_variant
    name = getattr(method, "__name__", None)
    if method is not None and name and getattr(torch.Tensor, name, None) is method:
        return "method", f"torch.Tensor.{name}", name
    raise Unsupported("its op is a wrapper (no public function or method variant of the same name)")


def _source(torch, value, tensors: list) -> str:
    """Python source for ``value``; each tensor becomes ``t<i>`` (appended to ``tensors``, one name per object)."""
    if isinstance(value, torch.Tensor):
        if value.layout != torch.strided or value.is_complex() or str(value.dtype).replace("torch.", "") not in _DTYPES:
            raise Unsupported(f"a {value.dtype} {value.layout} tensor")
        for i, t in enumerate(tensors):
            if t is value:
                return f"t{i}"
        tensors.append(value)
        return f"t{len(tensors) - 1}"
    if isinstance(value, torch.Size):
        return f"torch.Size({[int(v) for v in value]!r})"
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "float('-inf')"
        return repr(value)
    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, torch.device):
        return repr(str(value))
    if isinstance(value, (torch.memory_format, torch.layout)):
        return str(value)
    if isinstance(value, slice):
        return f"slice({_source(torch, value.start, tensors)}, {_source(torch, value.stop, tensors)}, " \
               f"{_source(torch, value.step, tensors)})"
    if value is Ellipsis:
        return "..."
    if isinstance(value, list):
        return "[" + ", ".join(_source(torch, v, tensors) for v in value) + "]"
    if isinstance(value, tuple) and type(value) is tuple:
        items = [_source(torch, v, tensors) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    raise Unsupported(f"a {type(value).__name__} argument")


def sample_record(torch, op, form: str, api: str, prefix: str, sample, key: str):
    """(record, input arrays) of one SampleInput: ``expr`` calls the API on ``t0, t1, ...``. Raises Unsupported."""
    tensors: list = []
    if form == "wrapped":
        src = lambda v: _source(torch, v, tensors)  # noqa: E731
        if prefix == "nn.functional.scaled_dot_product_attention" and sample.kwargs.get("dropout_p", 0):
            raise Unsupported("dropout_p > 0 (random)")
        i, a = src(sample.input), [src(v) for v in sample.args]
        kw = "".join(f", {k}={src(v)}" for k, v in sample.kwargs.items())
        if sum(t.numel() for t in tensors) > MAX_NUMEL:
            raise Unsupported("too large")
        expr = WRAPPED[prefix][1](i, a, kw)
        return _finish(key, expr, signature(api, 1 + len(sample.args), sample.kwargs), tensors, values=True)
    if form == "method":
        if not isinstance(sample.input, torch.Tensor):
            raise Unsupported("the method's receiver is not a tensor")
        head = f"{_source(torch, sample.input, tensors)}.{prefix}("
        npos = len(sample.args)
        parts = []
    else:
        head = f"{prefix}("
        npos = 1 + len(sample.args)
        parts = [_source(torch, sample.input, tensors)]
    parts += [_source(torch, a, tensors) for a in sample.args]
    kwargs = dict(sample.kwargs)
    for k, v in kwargs.items():
        if not k.isidentifier():
            raise Unsupported(f"keyword {k!r}")
        parts.append(f"{k}={_source(torch, v, tensors)}")
    if sum(t.numel() for t in tensors) > MAX_NUMEL:
        raise Unsupported("too large")
    expr = head + ", ".join(parts) + ")"
    return _finish(key, expr, signature(api, npos, kwargs), tensors, values=form != "random")


def _finish(key: str, expr: str, sig: str, tensors: list, values: bool):
    inputs, arrays = {}, {}
    for i, t in enumerate(tensors):
        name = f"t{i}"
        rg = bool(t.requires_grad and t.is_floating_point() and values)
        inputs[name] = [list(t.shape), str(t.dtype).replace("torch.", ""), rg]
        arrays[f"{key}/x.{name}"] = t.detach().cpu().numpy().copy()
    grad = any(rg for _, _, rg in inputs.values())
    rec = {"id": key, "expr": expr, "sig": sig, "inputs": inputs, "grad": grad}
    if not values:
        rec["values"] = False
    return rec, arrays


def record_entry(torch, op, device="cpu"):
    """(entry record, arrays) of one op_db entry (module docstring)."""
    from app.tools.conformance.opinfo_spec import case_from_record
    from app.tools.conformance.record import run_case
    name = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
    entry = {"name": op.name, "variant": op.variant_test_name, "samples": [], "errors": []}
    arrays: dict = {}
    try:
        form, api, prefix = _resolve(torch, op)
    except Unsupported as exc:
        entry.update(skipped=str(exc), namespace=namespace_of_entry(op.name, "function"), api=f"torch.{op.name}")
        return name, entry, arrays
    entry.update(form=form, api=api,
                 namespace="torch.Tensor" if api.startswith("torch.Tensor.") else namespace_of_entry(op.name, form))
    dtype = next((d for d in (torch.float32, torch.int64, torch.bool) if op.supports_dtype(d, device)), None)
    if dtype is None:
        entry["skipped"] = "supports none of float32, int64, bool on CPU"
        return name, entry, arrays
    entry["dtype"] = str(dtype).replace("torch.", "")
    requires_grad = bool(op.supports_autograd and dtype.is_floating_point)
    entry["differentiable"] = requires_grad
    unsupported: dict = {}
    torch.manual_seed(0)
    try:
        samples = op.sample_inputs(device, dtype, requires_grad=requires_grad)
        for sample in itertools.islice(samples, 40):
            if len(entry["samples"]) >= SAMPLES_PER_ENTRY:
                break
            key = f"{slug(name)}:s{len(entry['samples'])}"
            try:
                rec, arr = sample_record(torch, op, form, api, prefix, sample, key)
            except Unsupported as exc:
                unsupported[str(exc)] = unsupported.get(str(exc), 0) + 1
                continue
            case = case_from_record(rec, arr)
            tree, grads, store = run_case(case)
            if tree["t"] == "error":  # the expression form raises where the op's own call does not: not a case
                unsupported[f"raises {tree['type']}"] = unsupported.get(f"raises {tree['type']}", 0) + 1
                continue
            rec.update(out=tree, grads=grads)
            entry["samples"].append(rec)
            arrays.update(arr)
            arrays.update(store)
    except Exception as exc:  # a generator that fails on CPU
        entry["sample_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    if unsupported:
        entry["left_out"] = unsupported
    if op.error_inputs_func is not None:
        try:
            for err in itertools.islice(op.error_inputs(device), 20):
                if len(entry["errors"]) >= ERRORS_PER_ENTRY:
                    break
                key = f"{slug(name)}:e{len(entry['errors'])}"
                try:
                    rec, arr = sample_record(torch, op, form, api, prefix, err.sample_input, key)
                except Unsupported:
                    continue
                rec["grad"] = False
                tree, _, _ = run_case(case_from_record(rec, arr))
                if tree["t"] != "error" or tree["type"] != err.error_type.__name__:
                    continue  # the expression form does not raise what the entry expects
                rec.update(out=tree, grads=None, regex=str(err.error_regex))
                entry["errors"].append(rec)
                arrays.update(arr)
        except Exception as exc:
            entry["error_inputs_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    return name, entry, arrays


def main(argv=None) -> int:
    import warnings
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="op_db names to record (default: all)")
    args = parser.parse_args(argv)
    os.makedirs(OPINFO_DIR, exist_ok=True)
    entries, arrays = {}, {}
    start = time.time()
    for op in op_db:
        if args.only and op.name not in args.only:
            continue
        name, entry, arr = record_entry(torch, op)
        if name in entries:
            name = f"{name}#{sum(1 for n in entries if n.split('#')[0] == name)}"
        entries[name] = entry
        arrays.update(arr)
    meta = {"torch": torch.__version__, "python": platform.python_version(), "numpy": np.__version__,
            "date": datetime.date.today().isoformat(), "op_db": len(op_db), "samples_per_entry": SAMPLES_PER_ENTRY,
            "errors_per_entry": ERRORS_PER_ENTRY, "max_numel": MAX_NUMEL, "entries": entries}
    with open(GOLDEN_JSON, "w") as f:
        json.dump(meta, f, separators=(",", ":"), sort_keys=True)
    np.savez_compressed(GOLDEN_NPZ, **arrays)
    n_samples = sum(len(e["samples"]) for e in entries.values())
    n_errors = sum(len(e["errors"]) for e in entries.values())
    skipped = sum(1 for e in entries.values() if e.get("skipped") or not e["samples"])
    print(f"opinfo: recorded {len(entries)} entries ({skipped} without a sample), {n_samples} samples, {n_errors} "
          f"error inputs with torch {torch.__version__} in {time.time() - start:.0f} s: "
          f"{os.path.relpath(GOLDEN_JSON, ROOT)} {os.path.getsize(GOLDEN_JSON) // 1024} KB, "
          f"{os.path.getsize(GOLDEN_NPZ) // 1024} KB of arrays", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
