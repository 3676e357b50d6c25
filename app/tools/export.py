"""``run.py export``: the trained PyTorch model as MindIR, for MindSpore Lite / Serving (seed 001).

    python run.py export --model pt_original/resnet.py:resnet18 --weights model.pth \\
        --input-shape 1,3,32,32 --mindir resnet18.mindir

* ``--model FILE.py:FACTORY`` builds the model as the PyTorch script does: ``FILE.py`` is imported with ``import torch``
  resolving to MindTorch (its folder on ``sys.path``, so its sibling modules import), and ``FACTORY`` is a class or
  function in it, called with ``--kwargs`` (JSON, e.g. ``'{"num_classes": 10}'``).
* ``--weights`` is what the script saved with ``torch.save`` (``model.state_dict()``, or a whole checkpoint dict:
  ``--key net`` picks the state_dict, otherwise the only dict of tensors in it); a ``module.`` prefix on every key
  (DataParallel/DDP) is stripped. Loaded with ``weights_only=True``. Without ``--weights`` the factory's initial
  weights are exported.
* The model is put in ``eval()`` mode (BatchNorm uses running statistics, dropout is off), as for deployment.
* ``--input-shape`` (comma-separated; repeat the option for a model with several inputs) and ``--input-dtype``
  (default float32) describe the inputs; the graph is exported for exactly these shapes (MindIR is static-shape).
* After ``mindspore.export`` the file is loaded back with ``mindspore.load`` and run (``nn.GraphCell``) on a random
  input (numpy seed 0); its outputs are compared with the in-memory model's (PyNative, eager). The max abs
  difference is printed; exit status 1 when it exceeds ``--atol`` (default 1e-5), 0 otherwise; 2 on a usage
  error.

The file written is ``--mindir`` with a ``.mindir`` suffix added when missing (MindSpore's rule).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from typing import List, Optional, Sequence

import numpy as np

from app.bootstrap import setup_mindspore


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="run.py export",
        description="Export a PyTorch model (built by FILE.py:FACTORY, weights from a torch.save file) to MindIR "
                    "for MindSpore Lite / Serving, then reload the file with mindspore.load and check its outputs "
                    "against the in-memory model.",
        epilog="example:\n  python run.py export --model pt_original/resnet.py:resnet18 --weights model.pth "
               "--input-shape 1,3,32,32 --mindir resnet18.mindir",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, metavar="FILE.py:FACTORY",
                   help="the file that defines the model and the class or function that builds it")
    p.add_argument("--kwargs", default="{}", metavar="JSON", help="keyword arguments for FACTORY, as JSON")
    p.add_argument("--weights", metavar="PATH", help="state_dict (or whole checkpoint) saved with torch.save")
    p.add_argument("--key", help="in a whole checkpoint dict, the key of the state_dict (e.g. net)")
    p.add_argument("--input-shape", action="append", required=True, metavar="N,C,H,W",
                   help="input shape, comma-separated; repeat for each input of a multi-input model")
    p.add_argument("--input-dtype", default="float32", help="numpy dtype of the inputs (default float32)")
    p.add_argument("--mindir", required=True, metavar="PATH", help="the MindIR file to write")
    p.add_argument("--atol", type=float, default=1e-5, help="max abs difference allowed in the check (1e-5)")
    p.add_argument("--device", choices=["CPU", "GPU", "Ascend"], default="CPU", help="MindSpore device (CPU)")
    return p


def _shape(text: str, parser) -> tuple:
    try:
        shape = tuple(int(d) for d in text.replace("x", ",").split(",") if d.strip())
    except ValueError:
        parser.error(f"--input-shape {text}: expected integers separated by commas, e.g. 1,3,32,32")
    if not shape or any(d <= 0 for d in shape):
        parser.error(f"--input-shape {text}: every dimension must be a positive integer")
    return shape


def load_factory(spec: str):
    """``path/to/file.py:NAME`` -> the object NAME of that file, imported under MindTorch.

    Raises:
        ValueError: malformed spec; FileNotFoundError: no such file; AttributeError: no NAME in it.
    """
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise ValueError(f"--model {spec}: expected FILE.py:FACTORY, e.g. pt_original/resnet.py:resnet18")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"--model {spec}: no such file {path}")
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module_name = os.path.splitext(os.path.basename(path))[0]
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules.setdefault(module_name, module)
    module_spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise AttributeError(f"--model {spec}: {os.path.basename(path)} defines no {name!r}")
    return getattr(module, name)


def _state_dict_from(obj, key: Optional[str], source: str):
    from adapter import backend

    def is_state(d):
        return isinstance(d, dict) and d and all(backend.is_tensor(v) for v in d.values())

    if key is not None:
        if not isinstance(obj, dict) or key not in obj:
            raise KeyError(f"{source}: no key {key!r} (top-level keys: {list(obj) if isinstance(obj, dict) else []})")
        obj = obj[key]
    elif not is_state(obj) and isinstance(obj, dict):
        candidates = [k for k, v in obj.items() if is_state(v)]
        if len(candidates) != 1:
            raise KeyError(f"{source}: choose the state_dict with --key (candidates: {candidates})")
        obj = obj[candidates[0]]
    if not is_state(obj):
        raise TypeError(f"{source}: not a state_dict (a dict of tensors)")
    if all(k.startswith("module.") for k in obj):
        obj = {k[len("module."):]: v for k, v in obj.items()}
    return obj


def _flatten(out) -> List[np.ndarray]:
    if isinstance(out, (list, tuple)):
        return [a for item in out for a in _flatten(item)]
    if isinstance(out, dict):
        return [a for item in out.values() for a in _flatten(item)]
    return [np.asarray(out.asnumpy())]


class _Export:  # built lazily: mindspore.nn.Cell needs MindSpore imported
    @staticmethod
    def cell(model):
        import mindspore as ms

        class ForwardCell(ms.nn.Cell):
            def __init__(self, module):
                super().__init__(auto_prefix=False)
                self.module = module

            def construct(self, *args):
                return self.module(*args)

        return ForwardCell(model)


def export(model, inputs: Sequence[np.ndarray], path: str) -> str:
    """Export ``model`` (a MindTorch ``nn.Module``, already in eval mode) for ``inputs`` to MindIR at ``path``.

    Returns:
        the file written (``path`` + ``.mindir`` when it had no such suffix).
    Raises:
        RuntimeError / TypeError from MindSpore's graph compiler when the forward cannot be compiled.
    """
    import mindspore as ms
    from adapter.graph_semantics import graph_mode
    base = path[: -len(".mindir")] if path.endswith(".mindir") else path
    folder = os.path.dirname(os.path.abspath(base))
    os.makedirs(folder, exist_ok=True)
    with graph_mode():
        ms.export(_Export.cell(model), *[ms.Tensor(x) for x in inputs], file_name=base, file_format="MINDIR")
    return base + ".mindir"


def run_mindir(path: str, inputs: Sequence[np.ndarray]) -> List[np.ndarray]:
    """Load a MindIR file with ``mindspore.load`` and run it on ``inputs``; the outputs, flattened, as numpy."""
    import mindspore as ms
    from adapter.graph_semantics import graph_mode
    graph = ms.load(path)
    with graph_mode():
        out = ms.nn.GraphCell(graph)(*[ms.Tensor(x) for x in inputs])
    return _flatten(out)


def main(argv: Optional[List[str]] = None) -> int:
    """``run.py export`` (module docstring). Returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    shapes = [_shape(s, parser) for s in args.input_shape]
    try:
        kwargs = json.loads(args.kwargs)
    except json.JSONDecodeError as exc:
        parser.error(f"--kwargs: not JSON ({exc})")
    if not isinstance(kwargs, dict):
        parser.error("--kwargs: expected a JSON object, e.g. '{\"num_classes\": 10}'")
    try:
        dtype = np.dtype(args.input_dtype)
    except TypeError:
        parser.error(f"--input-dtype {args.input_dtype}: not a numpy dtype")
    if args.weights and not os.path.isfile(args.weights):
        parser.error(f"--weights {args.weights}: no such file")

    setup_mindspore(args.device)
    import mindtorch.torch as torch
    from adapter import compiled_step

    try:
        factory = load_factory(args.model)
        model = factory(**kwargs)
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"--model {args.model} returned a {type(model).__name__}, not a torch.nn.Module")
        if args.weights:
            obj = torch.load(args.weights, map_location="cpu", weights_only=True)
            model.load_state_dict(_state_dict_from(obj, args.key, args.weights))
    except (ValueError, FileNotFoundError, AttributeError, KeyError, TypeError, RuntimeError) as exc:
        print(f"run.py export: {exc}", file=sys.stderr)
        return 1
    model.eval()
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(shape).astype(dtype) if dtype.kind == "f" else
              rng.integers(0, 10, shape).astype(dtype) for shape in shapes]

    previous = compiled_step.get_mode()
    compiled_step.set_mode("pynative")  # the in-memory reference runs eagerly, not through a compiled forward
    try:
        with torch.no_grad():
            expected = _flatten(model(*[torch.tensor(x) for x in inputs]))
    finally:
        compiled_step.set_mode(previous)
    try:
        written = export(model, inputs, args.mindir)
    except Exception as exc:  # MindSpore's compiler errors are long: first lines only
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"run.py export: the forward of {type(model).__name__} cannot be exported to MindIR: {reason}",
              file=sys.stderr)
        return 1
    got = run_mindir(written, inputs)
    if len(got) != len(expected) or any(g.shape != e.shape for g, e in zip(got, expected)):
        print(f"run.py export: {written}: outputs {[g.shape for g in got]} differ in shape from the model's "
              f"{[e.shape for e in expected]}", file=sys.stderr)
        return 1
    diff = max(float(np.max(np.abs(g.astype(np.float64) - e.astype(np.float64)))) if g.size else 0.0
               for g, e in zip(got, expected))
    size = os.path.getsize(written)
    print(f"run.py export: wrote {written} ({size / 1e6:.2f} MB), inputs {[list(s) for s in shapes]} "
          f"{dtype}; mindspore.load check: max abs diff {diff:.3g} vs the in-memory model (atol {args.atol:g})")
    if not diff <= args.atol:
        print(f"run.py export: the MindIR outputs differ from the model's by {diff:.3g} > {args.atol:g}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
