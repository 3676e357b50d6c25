"""``run.py convert``: PyTorch ``.pth`` <-> MindSpore ``.ckpt`` weights, with seed 000's BatchNorm name map.

    python run.py convert model.pth --to model.ckpt      # PyTorch state_dict -> MindSpore checkpoint
    python run.py convert model.ckpt --to model.pth      # and back

For users who move on from the PyTorch script to a native ``mindspore.nn.Cell`` port (seed 000): parameter names
stay the same except BatchNorm's, which MindSpore names differently::

    <bn>.weight        <-> <bn>.gamma
    <bn>.bias          <-> <bn>.beta
    <bn>.running_mean  <-> <bn>.moving_mean
    <bn>.running_var   <-> <bn>.moving_variance
    <bn>.num_batches_tracked  dropped (pth -> ckpt); restored as 0, int64 (ckpt -> pth; --num-batches-tracked N)

A BatchNorm layer is recognised by its keys (``<prefix>.running_mean`` and ``<prefix>.running_var`` in a .pth,
``<prefix>.moving_mean`` and ``<prefix>.moving_variance`` in a .ckpt); tensors keep their shapes and dtypes
(Conv2d ``weight`` [out, in, kh, kw] and Linear/Dense ``weight`` [out, in] have the same layout in both).

The .pth side:
* read without PyTorch and without unpickling code (only the ``weights_only`` allowlist; ``adapter/torchfile.py``);
* a whole training checkpoint (``{'net': state_dict, 'optimizer': ..., 'epoch': ...}``) is accepted: ``--key net``
  picks the state_dict; without ``--key`` the only dict of tensors in it is taken (an error lists the candidates
  when there are several);
* a ``module.`` prefix on every key (``nn.DataParallel`` / DDP) is stripped (``--keep-prefix`` keeps it);
* written (ckpt -> pth) in PyTorch's own zip format: real PyTorch loads it with ``torch.load(weights_only=True)``.

The .ckpt side: ``mindspore.save_checkpoint`` / ``mindspore.load_checkpoint``; optimizer state that MindSpore keeps in
training checkpoints (``moment1.*``, ``moment2.*``, ``learning_rate``, ``global_step``, ``beta1_power``...) is left out
of the .pth (``--keep-all`` keeps it).

Other layers whose names differ between the frameworks (LayerNorm ``weight``/``bias`` vs ``gamma``/``beta``,
Embedding ``weight`` vs ``embedding_table``) cannot be told from the keys alone: ``--rename OLD=NEW`` (repeatable,
applied to the key suffix after the BatchNorm map, e.g. ``--rename ln.weight=ln.gamma``) handles them.

Exit status: 0 on success, 2 on a usage error, 1 when the input cannot be converted (message on stderr).
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
from typing import Dict, List, Mapping, Optional, Tuple

import numpy as np

BN_TO_MS = {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean", "running_var": "moving_variance"}
BN_TO_PT = {v: k for k, v in BN_TO_MS.items()}
PT_EXTS = (".pth", ".pt", ".bin", ".tar", ".pkl")
MS_OPTIMIZER_PREFIXES = ("moment1.", "moment2.", "moments.", "accum.", "adam_m.", "adam_v.", "exp_avg.",
                         "exp_avg_sq.", "max_exp_avg_sq.", "stat.", "velocity.")
MS_OPTIMIZER_NAMES = {"learning_rate", "global_step", "beta1_power", "beta2_power", "current_iterator_step",
                      "last_overflow_iterator_step", "epoch_num", "step_num", "scale_sense", "state_step"}


class ConvertError(Exception):
    """The input cannot be converted (not a state_dict, ambiguous, unreadable)."""


def _is_state(obj) -> bool:
    return isinstance(obj, Mapping) and len(obj) > 0 and all(isinstance(v, np.ndarray) for v in obj.values())


def pick_state_dict(obj, key: Optional[str], source: str) -> Tuple[Dict[str, np.ndarray], Optional[str]]:
    """The state_dict inside a loaded .pth: ``obj`` itself, ``obj[key]``, or the only dict of tensors in ``obj``.

    Returns:
        (state_dict, the key it was found under or None).
    Raises:
        ConvertError: ``key`` missing, no state_dict, or several candidates and no ``key``.
    """
    if key is not None:
        if not isinstance(obj, Mapping) or key not in obj:
            keys = list(obj.keys()) if isinstance(obj, Mapping) else []
            raise ConvertError(f"{source}: no key {key!r} (top-level keys: {keys})")
        if not _is_state(obj[key]):
            raise ConvertError(f"{source}: {key!r} is not a state_dict (a dict of tensors)")
        return dict(obj[key]), key
    if _is_state(obj):
        return dict(obj), None
    if isinstance(obj, Mapping):
        candidates = [k for k, v in obj.items() if _is_state(v)]
        if len(candidates) == 1:
            return dict(obj[candidates[0]]), candidates[0]
        if candidates:
            raise ConvertError(f"{source}: several state_dicts in this checkpoint ({candidates}): choose one with "
                               "--key NAME")
        raise ConvertError(f"{source}: no state_dict (dict of tensors) in it; top-level keys: {list(obj.keys())}")
    raise ConvertError(f"{source}: holds a {type(obj).__name__}, not a state_dict")


def _bn_prefixes(keys, mean: str, var: str) -> set:
    keys = set(keys)
    return {k[: -len(mean) - 1] for k in keys if k.endswith("." + mean) and k[: -len(mean)] + var in keys}


def _split(key: str) -> Tuple[str, str]:
    prefix, _, leaf = key.rpartition(".")
    return prefix, leaf


def _apply_renames(name: str, renames: List[Tuple[str, str]]) -> str:
    for old, new in renames:
        if name == old or name.endswith("." + old):
            return name[: len(name) - len(old)] + new
    return name


def pt_to_ms(state: Dict[str, np.ndarray], renames=()) -> Tuple["collections.OrderedDict[str, np.ndarray]", dict]:
    """Rename a PyTorch state_dict to MindSpore names (module docstring). Returns (new dict, counts)."""
    bn = _bn_prefixes(state.keys(), "running_mean", "running_var")
    out, dropped = collections.OrderedDict(), 0
    for key, value in state.items():
        prefix, leaf = _split(key)
        if prefix in bn and leaf == "num_batches_tracked":
            dropped += 1
            continue
        if prefix in bn and leaf in BN_TO_MS:
            key = f"{prefix}.{BN_TO_MS[leaf]}" if prefix else BN_TO_MS[leaf]
        out[_apply_renames(key, list(renames))] = value
    return out, {"batchnorm": len(bn), "num_batches_tracked_dropped": dropped}


def ms_to_pt(params: Dict[str, np.ndarray], renames=(), num_batches_tracked: int = 0, keep_all: bool = False
             ) -> Tuple["collections.OrderedDict[str, np.ndarray]", dict]:
    """Rename a MindSpore checkpoint to PyTorch names, restoring ``num_batches_tracked``. Returns (dict, counts)."""
    skipped = [k for k in params if not keep_all and (k in MS_OPTIMIZER_NAMES or k.startswith(MS_OPTIMIZER_PREFIXES))]
    params = {k: v for k, v in params.items() if k not in skipped}
    bn = _bn_prefixes(params.keys(), "moving_mean", "moving_variance")
    out = collections.OrderedDict()
    for key, value in params.items():
        prefix, leaf = _split(key)
        if prefix in bn and leaf in BN_TO_PT:
            key = f"{prefix}.{BN_TO_PT[leaf]}" if prefix else BN_TO_PT[leaf]
        out[_apply_renames(key, list(renames))] = value
        if prefix in bn and leaf == "moving_variance":
            out[f"{prefix}.num_batches_tracked" if prefix else "num_batches_tracked"] = \
                np.array(num_batches_tracked, dtype=np.int64)
    return out, {"batchnorm": len(bn), "skipped": skipped}


def _ms_checkpoint_arrays(path: str) -> "collections.OrderedDict[str, np.ndarray]":
    import mindspore as ms
    return collections.OrderedDict((name, param.asnumpy()) for name, param in ms.load_checkpoint(path).items())


def _save_ms_checkpoint(arrays: Mapping[str, np.ndarray], path: str) -> None:
    import mindspore as ms
    ms.save_checkpoint([{"name": name, "data": ms.Tensor(value)} for name, value in arrays.items()], path)


def _save_pth(arrays: Mapping[str, np.ndarray], path: str) -> None:
    from adapter import torchfile

    def hook(obj):
        return torchfile.tensor_data_from_numpy(obj) if isinstance(obj, np.ndarray) else None

    state = collections.OrderedDict(arrays)
    with torchfile.atomic_write(path) as fh:
        torchfile.write(state, fh, tensor_hook=hook)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="run.py convert",
        description="Convert PyTorch .pth weights to a MindSpore .ckpt and back, renaming BatchNorm parameters "
                    "(weight/bias/running_mean/running_var <-> gamma/beta/moving_mean/moving_variance; "
                    "num_batches_tracked dropped, or restored as 0).",
        epilog="examples:\n  python run.py convert model.pth --to model.ckpt\n"
               "  python run.py convert checkpoint.pth --key net --to model.ckpt\n"
               "  python run.py convert model.ckpt --to model.pth",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", help="a .pth/.pt (PyTorch zip checkpoint) or a .ckpt (MindSpore checkpoint)")
    p.add_argument("--to", required=True, metavar="PATH", help="output: .ckpt for a .pth source, .pth for a .ckpt")
    p.add_argument("--key", help="in a whole checkpoint dict, the key of the state_dict (e.g. net, state_dict)")
    p.add_argument("--keep-prefix", action="store_true", help="keep a 'module.' prefix present on every key")
    p.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                   help="also rename keys ending in OLD to end in NEW (repeatable), e.g. ln.weight=ln.gamma")
    p.add_argument("--num-batches-tracked", type=int, default=0, metavar="N",
                   help="ckpt -> pth: the value of the restored BatchNorm num_batches_tracked (default 0)")
    p.add_argument("--keep-all", action="store_true",
                   help="ckpt -> pth: keep optimizer entries (moment1.*, learning_rate, global_step, ...)")
    return p


def _direction(source: str, target: str) -> Optional[str]:
    s, t = os.path.splitext(source)[1].lower(), os.path.splitext(target)[1].lower()
    if s in PT_EXTS and t == ".ckpt":
        return "pt2ms"
    if s == ".ckpt" and t in PT_EXTS:
        return "ms2pt"
    return None


def main(argv: Optional[List[str]] = None) -> int:
    """``run.py convert`` (module docstring). Returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    direction = _direction(args.source, args.to)
    if direction is None:
        parser.error(f"convert {args.source} --to {args.to}: give a .pth/.pt source and a .ckpt target, or a .ckpt "
                     "source and a .pth target")
    if not os.path.isfile(args.source):
        parser.error(f"{args.source}: no such file")
    os.environ.setdefault("GLOG_v", "4")  # MindSpore's C++ log: errors reach the user as exceptions
    renames = []
    for item in args.rename:
        if "=" not in item:
            parser.error(f"--rename {item}: expected OLD=NEW")
        renames.append(tuple(item.split("=", 1)))
    try:
        if direction == "pt2ms":
            from adapter import torchfile
            obj = torchfile.read(args.source)
            state, found = pick_state_dict(obj, args.key, args.source)
            notes = [f"state_dict from key {found!r}"] if found else []
            if not args.keep_prefix and all(k.startswith("module.") for k in state):
                state = {k[len("module."):]: v for k, v in state.items()}
                notes.append("'module.' prefix stripped")
            out, counts = pt_to_ms(state, renames)
            _save_ms_checkpoint(out, args.to)
            notes.append(f"{counts['batchnorm']} BatchNorm layers renamed, "
                         f"{counts['num_batches_tracked_dropped']} num_batches_tracked dropped")
        else:
            params = _ms_checkpoint_arrays(args.source)
            out, counts = ms_to_pt(params, renames, args.num_batches_tracked, args.keep_all)
            _save_pth(out, args.to)
            notes = [f"{counts['batchnorm']} BatchNorm layers renamed, num_batches_tracked restored as "
                     f"{args.num_batches_tracked}"]
            if counts["skipped"]:
                notes.append(f"{len(counts['skipped'])} optimizer entries left out (--keep-all keeps them)")
    except (ConvertError, ValueError, OSError) as exc:
        print(f"run.py convert: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # unpickling refusals and MindSpore's checkpoint errors
        print(f"run.py convert: {args.source}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"run.py convert: {args.source} -> {args.to}: {len(out)} tensors; " + "; ".join(notes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
