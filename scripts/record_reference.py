"""Record a named reference under real PyTorch: the one entry point for the recorded values the tests compare with.

    python scripts/record_reference.py NAME [NAME ...] [--python PYTHON] [-- EXTRA ARGS]
    python scripts/record_reference.py --list

Each NAME (``--list`` shows them with their files) is one recording, run exactly as its fixture's docstring said
before this entry point existed, so its output is byte-for-byte what that command wrote:

* ``stdout``: ``PYTHON tests/fixtures/<script> <args> > tests/fixtures/<output>`` (most ``*_cases.py`` fixtures);
* ``self``: ``PYTHON tests/fixtures/<script> <args>``, the script writing its own file(s) (``--record`` modes and the
  recorder scripts of ``tests/fixtures/eager_bridge/`` and ``tests/fixtures/vision/``);
* ``constant_pad``: ``constant_pad_train.py`` under PYTHON, its last stdout line plus ``{"torch": <version>}``,
  written with ``json.dump(indent=1)`` and a newline (was ``tests/fixtures/record_constant_pad.py``);
* ``corpus``: ``scripts/record_corpus_goldens.py`` (run by this interpreter, as before: it starts PYTHON itself),
  with the EXTRA ARGS (``-- --only mnist vae``).

PYTHON defaults to ``.venv-ref/bin/python`` (real PyTorch 2.13 CPU, ``make reference``). The working folder is the
project root. Exit status: the first failing recording's, after printing its command; 2 for an unknown NAME.

References not listed here were assembled by hand from per-case runs (``grad_order_reference.json``,
``stray_recording_reference.json``, ``dataloader_workers_reference.json``, ``loss_read_before_step_reference.json``)
or pasted into their test (``module_children.py``, ``sdpa_linear_grad.py``); their fixtures say how.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Dict, NamedTuple, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
REF_PYTHON = os.path.join(ROOT, ".venv-ref", "bin", "python")


class Recording(NamedTuple):
    """One named recording: ``kind`` (module docstring), the fixture ``script`` (relative to tests/fixtures), its
    ``args``, and ``output``: the file it makes (relative to tests/fixtures; for ``self`` what the script writes)."""
    kind: str
    script: str
    args: Tuple[str, ...] = ()
    output: str = ""


def _stdout(script: str, output: str, *args: str) -> Recording:
    return Recording("stdout", script, args, output)


RECORDINGS: Dict[str, Recording] = {
    "activation_kinks": _stdout("activation_kinks_cases.py", "activation_kinks_reference.json"),
    "kthvalue_mode": _stdout("kthvalue_mode_cases.py", "kthvalue_mode_reference.json"),
    "backward_through": _stdout("backward_through_train.py", "backward_through_reference.json"),
    "bce": _stdout("bce_cases.py", "bce_reference.json"),
    "inplace_views": _stdout("inplace_views_cases.py", "inplace_views_reference.json"),
    "conv_transpose": _stdout("conv_transpose_train.py", "conv_transpose_reference.json"),
    "distributions": _stdout("distributions_cases.py", "distributions_reference.json"),
    "distributions_more": _stdout("distributions_more_cases.py", "distributions_more_reference.json"),
    "einsum": _stdout("einsum_cases.py", "einsum_reference.json"),
    "tensor_op_forms": _stdout("tensor_op_forms_cases.py", "tensor_op_forms_reference.json"),
    "vision_idioms": _stdout("vision_idioms_train.py", "vision_idioms_reference.json"),
    "grad_assign": _stdout("grad_assign_cases.py", "grad_assign.json"),
    "graph_lean": _stdout("graph_lean_cases.py", "graph_lean_reference.json"),
    "graph_methods": _stdout("graph_methods_cases.py", "graph_methods_reference.json"),
    "graph_syntax": _stdout("graph_syntax_train.py", "graph_syntax_reference.json"),
    "host_calls": _stdout("host_calls_train.py", "host_calls_torch.json"),
    "host_calls_timm": _stdout("host_calls_timm.py", "host_calls_timm_torch.json", "--record"),
    "indexing": _stdout("indexing_cases.py", "indexing_reference.json"),
    "inplace_activation_grads": _stdout("inplace_activation_grads.py", "inplace_activation_grads_reference.json",
                                        "--record"),
    "inplace_alias": _stdout("inplace_alias.py", "inplace_alias_reference.json"),
    "inplace_buffers": _stdout("inplace_buffers.py", "inplace_buffers_reference.json"),
    "inplace_idioms": _stdout("inplace_idioms.py", "inplace_idioms_reference.json"),
    "inplace_keeps_grad": _stdout("inplace_keeps_grad_cases.py", "inplace_keeps_grad.json"),
    "internal_cells": _stdout("internal_cells_cases.py", "internal_cells.json"),
    "late_first_update": _stdout("late_first_update_cases.py", "late_first_update_reference.json"),
    "lbfgs": _stdout("lbfgs_cases.py", "lbfgs_reference.json"),
    "lr_scheduler": _stdout("lr_scheduler_cases.py", "lr_scheduler_reference.json"),
    "lr_scheduler_more": _stdout("lr_scheduler_more_cases.py", "lr_scheduler_more_reference.json"),
    "lr_scheduler_train": _stdout("lr_scheduler_train.py", "lr_scheduler_train_reference.json"),
    "module_repr": _stdout("module_repr_cases.py", "module_repr.json"),
    "onnx": _stdout("onnx_import.py", "onnx_reference.json"),
    "optim_float64": _stdout("optim_float64_cases.py", "optim_float64_reference.json"),
    "optim_mindtorch_layout": _stdout("optim_mindtorch_layout_cases.py", "optim_mindtorch_layout_reference.json"),
    "optim_same_names": _stdout("optim_same_names_cases.py", "optim_same_names_reference.json"),
    "output_alias": _stdout("output_alias_script.py", "output_alias_reference.json"),
    "pow_square": _stdout("pow_square_script.py", "pow_square_reference.json"),
    "quantizable_linear": _stdout("quantizable_linear_cases.py", "quantizable_linear_reference.json"),
    "rnn_dropout": _stdout("rnn_dropout_cases.py", "rnn_dropout_reference.json"),
    "rprop": _stdout("rprop_cases.py", "rprop_reference.json"),
    "second_loop": _stdout("second_loop_script.py", "second_loop_reference.json"),
    "step_after_module_call": _stdout("step_after_module_call.py", "step_after_module_call_reference.json"),
    "tensor_iterable": _stdout("tensor_iterable_cases.py", "tensor_iterable_reference.json"),
    "tensor_transpose": _stdout("tensor_transpose_cases.py", "tensor_transpose_reference.json"),
    "torch_errors": _stdout("torch_errors_cases.py", "torch_errors_reference.json"),
    "tensorboard": _stdout("tensorboard_calls.py", "tensorboard_reference.json", "/tmp/tbref"),
    "timm_models": _stdout("timm_models.py", "timm_models_reference.json", "--record"),
    "timm_pieces": _stdout("timm_pieces.py", "timm_pieces_reference.json", "--record"),
    "uncalled_submodule_grads": _stdout("uncalled_submodule_grads.py", "uncalled_submodule_grads_reference.json"),
    "unique": _stdout("unique_script.py", "unique_reference.json"),
    "unpickler_refusal": _stdout("unpickler_refusal_cases.py", "unpickler_refusal_reference.json"),
    "weights_only": _stdout("weights_only_cases.py", "weights_only_reference.json"),
    "whole_model_save": _stdout("whole_model_save.py", "whole_model_save_reference.json"),
    "attention_pieces": Recording("self", "attention_pieces.py",
                                  ("--record", "tests/fixtures/attention_pieces_reference.json"),
                                  "attention_pieces_reference.json"),
    "bptt": Recording("self", "bptt_lm.py", ("--record",), "bptt_lm.json"),
    "normalization": Recording("self", "normalization_cases.py", ("--record",), "normalization_reference.json"),
    "transforms_v2": Recording("self", "transforms_v2_cases.py", ("--record",), "transforms_v2_reference.json"),
    "eager_bridge": Recording("self", "eager_bridge/record_eager_bridge.py", (),
                              "eager_bridge/eager_bridge_reference.json"),
    "vision_golden": Recording("self", "vision/make_golden.py", (), "vision/golden.npz"),
    "pil_modes": Recording("self", "vision/record_pil_modes.py", (), "vision/pil_modes.json"),
    "constant_pad": Recording("constant_pad", "constant_pad_train.py", (), "constant_pad_reference.json"),
    "corpus": Recording("corpus", os.path.join("..", "..", "scripts", "record_corpus_goldens.py"), (), "corpus/"),
}


def _run(argv, **kwargs) -> subprocess.CompletedProcess:
    print("record_reference:", " ".join(argv), file=sys.stderr)
    return subprocess.run(argv, cwd=ROOT, **kwargs)


def record(name: str, python: str = REF_PYTHON, extra: Tuple[str, ...] = ()) -> int:
    """Run recording ``name`` (module docstring); returns its exit status (0: the output file written). Raises
    KeyError for an unknown ``name``."""
    rec = RECORDINGS[name]
    script = os.path.normpath(os.path.join(FIXTURES, rec.script))
    output = os.path.join(FIXTURES, rec.output)
    if rec.kind == "corpus":
        return _run([sys.executable, script, *extra]).returncode
    if rec.kind == "self":
        return _run([python, script, *rec.args, *extra]).returncode
    proc = _run([python, script, *rec.args, *extra], stdout=subprocess.PIPE)
    if proc.returncode != 0:
        return proc.returncode
    if rec.kind == "stdout":
        data = proc.stdout
    else:  # constant_pad
        version = _run([python, "-c", "import torch; print(torch.__version__)"], stdout=subprocess.PIPE,
                       check=True, text=True).stdout.strip()
        last = proc.stdout.decode().strip().splitlines()[-1]
        data = (json.dumps(dict(json.loads(last), torch=version), indent=1) + "\n").encode()
    with open(output, "wb") as f:
        f.write(data)
    print(f"record_reference: wrote {os.path.relpath(output, ROOT)}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: Tuple[str, ...] = ()
    if "--" in argv:
        extra, argv = tuple(argv[argv.index("--") + 1:]), argv[:argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME")
    parser.add_argument("--python", default=REF_PYTHON, help="the real-PyTorch interpreter (default .venv-ref)")
    parser.add_argument("--list", action="store_true", help="list the names and their files")
    args = parser.parse_args(argv)
    if args.list or not args.names:
        for name, rec in sorted(RECORDINGS.items()):
            print(f"{name:26s} {rec.kind:12s} tests/fixtures/{rec.output}  <- {' '.join((rec.script,) + rec.args)}")
        return 0
    unknown = [n for n in args.names if n not in RECORDINGS]
    if unknown:
        print(f"record_reference: unknown name(s) {', '.join(unknown)}; --list shows them", file=sys.stderr)
        return 2
    for name in args.names:
        status = record(name, args.python, extra)
        if status:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
