"""``print(tensor)`` / ``repr(tensor)`` / ``str(tensor)`` in PyTorch's format: ``tensor([1.5000, 2.0000])``.

MindTorch 0.4.0 defines no ``__repr__``/``__str__`` of its own, so scripts printed MindSpore's: ``str(t)`` was numpy's
``[1.5 2. ]`` and ``repr(t)`` ``Tensor(shape=[], dtype=Int64, value= 3)``; ``print(x.grad)``, ``print(loss)``,
``print(model.weight)`` in tutorials showed numbers in another layout than the script's author saw (found running
yunjey/pytorch-tutorial 01-basics and PyTorch's tutorials' idioms, ``docs/wild_triage.md``).

Replaces: ``torch.Tensor.__repr__``/``__str__`` and ``torch.nn.Parameter``'s (``Parameter
containing:`` + the tensor). The layout is PyTorch 2.13's at its default print options (precision 4, threshold
1000, edgeitems 3, linewidth 80; the behaviour read from its ``torch/_tensor_str.py``), written here on the tensor's
numpy values: a formatter (int mode when every finite non-zero value is integral, scientific mode when
max/min > 1000, max > 1e8 or min < 1e-4), line wrapping of each row, summarization with ``...``, the
``dtype=torch.X`` suffix for dtypes other than float32/int64/bool/complex64, ``size=`` for empty tensors not of
shape (0,), ``requires_grad=True`` for tensors that require grad. Not reproduced: ``grad_fn=<...>`` (MindTorch
tracks no autograd nodes), ``device=`` (every tensor prints as a CPU tensor), ``torch.set_printoptions``.
"""
from __future__ import annotations

import math

import numpy as np

from . import Patch, get_replaced, patch_attr

PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 4, 1000, 3, 80
_DEFAULT_DTYPES = ("float32", "int64", "bool", "complex64")


class _Formatter:
    """The number format PyTorch's printing picks for a numpy array (real dtypes): int, fixed or scientific."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = values.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        flat = flat.astype(np.float64)
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return
        absv = np.abs(vals)
        vmin, vmax = float(absv.min()), float(absv.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        self.sci_mode = vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4
        for v in vals.tolist():
            if self.sci_mode:
                width = len(f"{v:.{PRECISION}e}")
            elif self.int_mode:
                width = len(f"{v:.0f}") + 1
            else:
                width = len(f"{v:.{PRECISION}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value) -> str:
        if self.floating:
            value = float(value)
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{PRECISION}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{PRECISION}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _summarized(a: np.ndarray) -> np.ndarray:
    """PyTorch's ``get_summarized_data``: the edge items along every dimension."""
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:EDGEITEMS], a[-EDGEITEMS:])) if a.shape[0] > 2 * EDGEITEMS else a
    rows = list(range(EDGEITEMS)) + list(range(a.shape[0] - EDGEITEMS, a.shape[0])) \
        if a.shape[0] > 2 * EDGEITEMS else range(a.shape[0])
    return np.stack([_summarized(a[i]) for i in rows])


def _vector_str(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, math.floor((LINEWIDTH - indent) / (fmt.max_width + 2)))
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        data = [fmt.format(v) for v in a[:EDGEITEMS].tolist()] + [" ..."] + \
               [fmt.format(v) for v in a[-EDGEITEMS:].tolist()]
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        slices = [_tensor_str_with_formatter(a[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)] + \
                 ["..."] + [_tensor_str_with_formatter(a[i], indent + 1, summarize, fmt)
                            for i in range(a.shape[0] - EDGEITEMS, a.shape[0])]
    else:
        slices = [_tensor_str_with_formatter(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(tensor_str: str, suffixes, indent: int) -> str:
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def format_array(a: np.ndarray, requires_grad: bool = False, dtype_name: str = None) -> str:
    """PyTorch's ``repr`` of a tensor holding ``a``. ``dtype_name``: the torch dtype's name (``float32``...), numpy's
    when None. Complex arrays are printed by numpy (not PyTorch's layout)."""
    dtype_name = dtype_name or a.dtype.name
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if a.size == 0:
        if a.ndim != 1:
            suffixes.append("size=" + str(tuple(a.shape)))
        if dtype_name != "float32":
            suffixes.append("dtype=torch." + dtype_name)
        body = "[]"
    else:
        if dtype_name not in _DEFAULT_DTYPES:
            suffixes.append("dtype=torch." + dtype_name)
        if a.dtype.kind == "c":
            body = np.array2string(a, separator=", ")
        else:
            summarize = a.size > THRESHOLD
            fmt = _Formatter(_summarized(a) if summarize else a)
            body = _tensor_str_with_formatter(a, indent, summarize, fmt)
    if requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)


def _dtype_name(tensor) -> str:
    return str(tensor.dtype).split(".")[-1].lower()


_original_repr = None  # MindTorch's Tensor.__repr__ (MindSpore's), set by apply()


def tensor_repr(self) -> str:
    """PyTorch's ``repr(tensor)`` (:func:`format_array`); MindSpore's text for a tensor without host values."""
    try:
        values = self.asnumpy() if hasattr(self, "asnumpy") else np.asarray(self)
    except Exception:  # an uninitialised or non-host tensor: MindSpore's own text
        return _original_repr(self)
    name = _dtype_name(self)
    if name == "bfloat16":
        values = values.astype(np.float32)
    return format_array(values, bool(getattr(self, "requires_grad", False)), name)


def parameter_repr(self) -> str:
    """PyTorch's ``repr(parameter)``: ``Parameter containing:`` and the tensor."""
    return "Parameter containing:\n" + tensor_repr(self)


def apply() -> None:
    global _original_repr
    from mindtorch.torch.tensor import Tensor
    from mindtorch.torch.nn.parameter import Parameter

    _original_repr = get_replaced(Tensor, "__repr__", NAME)
    for name in ("__repr__", "__str__"):
        patch_attr(Tensor, name, tensor_repr)
        patch_attr(Parameter, name, parameter_repr)


NAME = "tensor_repr"
PATCH = Patch(NAME, "print(tensor) / repr / str in PyTorch's layout (tensor([1.5000, 2.0000]), dtype and "
              "requires_grad suffixes, summarization) instead of MindSpore's", "post-import", apply,
              replaces=("torch.Tensor.__repr__", "torch.Tensor.__str__", "torch.nn.Parameter.__repr__",
                        "torch.nn.Parameter.__str__"))
