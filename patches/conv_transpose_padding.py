"""``F.conv_transpose1d/2d/3d`` with ``output_padding``, an unbatched input, or a dilation MindSpore's kernel refuses.

MindTorch 0.4.0's functional transposed convolutions raise ``NotImplementedError: for
nn.functional.conv_transpose2d, `output_padding` not support yet.`` (1d and 2d) for any non-zero ``output_padding``
(the usual way a decoder or a GAN generator gets back an even size: ``stride=2, padding=1, output_padding=1``), raise
``ValueError: the rank of inputs tensor should be 3/4/5`` for PyTorch's unbatched ``(C_in, *spatial)`` input, and
``conv_transpose3d`` raises ``For 'Conv3DTranspose', the depth of parameter 'dilation' must be 1`` on CPU. Found by
PyTorch's OpInfo samples (``nn.functional.conv_transpose1d/2d/3d``, ``run.py conformance --opinfo``, issue 35).

PyTorch's definition (its ``ConvTranspose`` documentation): per spatial dimension of input length ``L``, the full
transposed convolution has ``(L - 1) * stride + dilation * (kernel - 1) + 1`` positions; the result keeps
``(L - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1`` of them, starting at ``padding``
(``output_padding`` only adds positions at the high end, where no input contributes beyond the full length: zeros,
plus the bias). Here such a call runs MindTorch's own transposed convolution with ``padding=0`` and
``output_padding=0`` and no bias (the full result), then keeps PyTorch's window of each spatial dimension (``narrow``),
appends zeros where the window passes the full length, and adds the bias: the same values, and gradients that flow
through the slicing exactly. An unbatched input runs as a batch of one (``unsqueeze(0)``, then ``squeeze(0)``); a
dilation MindSpore's kernel refuses (3d: depth dilation > 1) runs as one transposed convolution per depth tap of the
kernel, each shifted by its dilated offset and summed (a kernel dilated by inserted zeros would pass MindSpore's
kernel-size limit of 343 taps). Calls MindTorch already runs (batched, no ``output_padding``, a dilation it takes)
go to MindTorch unchanged.

The modules: MindTorch's ``nn.ConvTranspose1d``/``nn.ConvTranspose2d`` raise ``ValueError: output_padding '1' is not
currently supported.`` when built with an ``output_padding``, and their ``forward`` raises for ``output_size``. Here
they are built with MindTorch's ``__init__`` (``output_padding=0``) and then hold PyTorch's ``output_padding`` tuple;
their ``forward`` calls ``F.conv_transpose1d/2d`` above with it, or with the ``output_padding`` that PyTorch derives
from ``output_size`` (the requested size minus the smallest one, which must lie within ``stride - 1``; PyTorch's
``ValueError`` otherwise). (``nn.ConvTranspose3d`` passes ``output_padding`` to MindSpore's ``Conv3DTranspose``,
which takes it.)

The functional replacements and the module ``forward`` are plain functions (no ``__wrapped__``), so a compiled graph
compiles them too (the shapes are constants there; measured: op_db's ``conv_transpose1d/2d`` ``output_padding``
samples pass compiled).

Replaces: ``torch.nn.functional.conv_transpose1d``, ``torch.nn.functional.conv_transpose2d``,
``torch.nn.functional.conv_transpose3d``, ``torch.nn.ConvTranspose1d.__init__/forward``,
``torch.nn.ConvTranspose2d.__init__/forward``.
"""
import functools

from . import Patch, patch_attr
from ._wrap_once import wrap_attr

NAME = "conv_transpose_padding"
_DIMS = {"conv_transpose1d": 1, "conv_transpose2d": 2, "conv_transpose3d": 3}
torch = None  # mindtorch.torch, bound by apply()


def _tuple(value, n: int, what: str):
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return tuple(int(value[0]) for _ in range(n))
        if len(value) != n:
            raise RuntimeError(f"expected {what} to be a single integer value or a list of {n} values to match the "
                               f"convolution dimensions, but got {what}={list(value)}")
        return tuple(int(v) for v in value)
    return tuple(int(value) for _ in range(n))


def _depth_dilated(original, input, weight, strides, groups, dil):  # noqa: A002 (PyTorch's name)
    """The full (no padding) 3d transposed convolution with depth dilation ``dil[0]`` > 1, which MindSpore's kernel
    refuses: one transposed convolution per depth tap ``j`` of the kernel (depth 1, height/width dilation as given),
    each placed ``j * dil[0]`` positions down the depth axis and summed (the same sum PyTorch's kernel forms, taken
    tap by tap)."""
    taps = weight.shape[2]
    out = None
    for j in range(taps):
        part = original(input, weight.narrow(2, j, 1), None, strides, 0, 0, groups, (1, dil[1], dil[2]))
        part = _zeros_around(part, 2, j * dil[0], (taps - 1 - j) * dil[0])
        out = part if out is None else out + part
    return out


def _zeros_around(x, axis, before, after):
    """``x`` with ``before`` zeros prepended and ``after`` appended along ``axis``."""
    pieces = []
    if before:
        pieces.append(torch.zeros(x.shape[:axis] + (before,) + x.shape[axis + 1:], dtype=x.dtype))
    pieces.append(x)
    if after:
        pieces.append(torch.zeros(x.shape[:axis] + (after,) + x.shape[axis + 1:], dtype=x.dtype))
    return torch.cat(pieces, dim=axis) if len(pieces) > 1 else x


def _needs_us(name, input, weight, output_padding, dilation) -> bool:  # noqa: A002 (PyTorch's name)
    n = _DIMS[name]
    if input.dim() == weight.dim() - 1:
        return True
    if any(_tuple(output_padding, n, "output_padding")):
        return True
    return n == 3 and _tuple(dilation, n, "dilation")[0] != 1


def _transposed(name, original):
    n = _DIMS[name]

    def conv_transpose(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,  # noqa: A002
                       dilation=1):
        if not (isinstance(input, torch.Tensor) and isinstance(weight, torch.Tensor)) \
                or not _needs_us(name, input, weight, output_padding, dilation):
            return original(input, weight, bias, stride, padding, output_padding, groups, dilation)
        unbatched = input.dim() == weight.dim() - 1
        if unbatched:
            input = input.unsqueeze(0)  # noqa: A001
        pad = _tuple(padding, n, "padding")
        extra = _tuple(output_padding, n, "output_padding")
        strides = _tuple(stride, n, "stride")
        dil = _tuple(dilation, n, "dilation")
        for e, s, d in zip(extra, strides, dil):
            if e >= s and e >= d:
                raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                                   f"output_padding: {list(extra)}, stride: {list(strides)}, dilation: {list(dil)}")
        if n == 3 and dil[0] != 1:
            out = _depth_dilated(original, input, weight, strides, groups, dil)
        else:
            out = original(input, weight, None, strides, 0, 0, groups, dil)
        for i in range(n):
            axis = 2 + i
            full = out.shape[axis]
            keep = full - 2 * pad[i] + extra[i]
            if keep <= 0:
                raise RuntimeError(f"Given input size per channel: {tuple(input.shape[2:])}. Calculated output size "
                                   f"per channel is too small")
            inside = min(keep, full - pad[i])
            out = out.narrow(axis, pad[i], inside)
            out = _zeros_around(out, axis, 0, keep - inside)
        if bias is not None:
            out = out + bias.reshape((1, -1) + (1,) * n)
        return out.squeeze(0) if unbatched else out
    conv_transpose.__name__ = name
    conv_transpose.__doc__ = original.__doc__
    return conv_transpose


def _requested_padding(module, input, output_size, n: int):  # noqa: A002 (PyTorch's name)
    """PyTorch's ``output_padding`` of ``module(input, output_size)``: the module's own where ``output_size`` is None;
    else what makes the result ``output_size`` (its last ``n`` entries), each within ``[0, stride - 1]`` of the
    smallest size (``ValueError`` with PyTorch's wording otherwise)."""
    if output_size is None:
        return module.output_padding
    sizes = [int(s) for s in output_size]
    if len(sizes) == n + (2 if input.dim() == n + 2 else 1):
        sizes = sizes[-n:]
    if len(sizes) != n:
        raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or "
                         f"{n + (2 if input.dim() == n + 2 else 1)} elements (got {len(output_size)})")
    lengths = tuple(input.shape[-n:])
    smallest = [(lengths[d] - 1) * module.stride[d] - 2 * module.padding[d]
                + module.dilation[d] * (module.kernel_size[d] - 1) + 1 for d in range(n)]
    largest = [smallest[d] + module.stride[d] - 1 for d in range(n)]
    for d in range(n):
        if not smallest[d] <= sizes[d] <= largest[d]:
            raise ValueError(f"requested an output size of {sizes}, but valid sizes range from {smallest} to "
                             f"{largest} (for an input of {list(lengths)})")
    return tuple(sizes[d] - smallest[d] for d in range(n))


def _module_init(original, n: int):
    @functools.wraps(original)
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        original(self, in_channels, out_channels, kernel_size, stride, padding, 0, groups, bias, dilation,
                 padding_mode, device, dtype)
        self.output_padding = _tuple(output_padding, n, "output_padding")
    return __init__


def _module_forward(n: int):
    name = f"conv_transpose{n}d"

    def forward(self, input, output_size=None):  # noqa: A002 (PyTorch's name)
        extra = _requested_padding(self, input, output_size, n)
        return getattr(F, name)(input, self.weight, self.bias, self.stride, self.padding, extra, self.groups,
                                self.dilation)
    forward.__name__ = "forward"
    forward.__doc__ = f"``nn.ConvTranspose{n}d.forward``: ``F.{name}`` with the module's ``output_padding`` or the " \
                      f"one ``output_size`` asks for (module docstring)."
    return forward


_FORWARDS = {1: _module_forward(1), 2: _module_forward(2)}
F = None  # mindtorch.torch.nn.functional, bound by apply()


def apply() -> None:
    global torch, F
    import mindtorch.torch as mt
    import mindtorch.torch.nn.functional as functional
    torch, F = mt, functional
    for name in _DIMS:
        wrap_attr(functional, name, NAME, functools.partial(_transposed, name))
    for n, cls in ((1, mt.nn.ConvTranspose1d), (2, mt.nn.ConvTranspose2d)):
        wrap_attr(cls, "__init__", NAME, functools.partial(_module_init, n=n))
        patch_attr(cls, "forward", _FORWARDS[n])


PATCH = Patch(NAME, "F.conv_transpose1d/2d/3d with output_padding, an unbatched input, or depth dilation (3d) as "
                    "PyTorch (MindTorch raised 'output_padding not support yet' / 'rank should be' / 'dilation must "
                    "be 1')", "post-import", apply,
              replaces=tuple(f"torch.nn.functional.{n}" for n in _DIMS)
              + tuple(f"torch.nn.ConvTranspose{n}d.{a}" for n in (1, 2) for a in ("__init__", "forward")))
