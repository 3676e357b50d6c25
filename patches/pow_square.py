"""``x.pow(2)``, ``torch.pow(x, 2)``, ``x ** 2`` of a float32/float64 tensor: MindSpore's ``Square``, PyTorch's value.

PyTorch's CPU ``pow`` with the scalar exponent 2 computes ``x * x`` (``aten/src/ATen/native/Pow.cpp``,
``pow_tensor_scalar_optimized_kernel``: exponents 2, 3, 0.5, -0.5, -1, -2 are special-cased; real PyTorch 2.13:
``x.pow(2) == x * x`` for every element of 10**6 standard-normal float32 values). MindTorch 0.4.0 calls MindSpore's
generic ``Pow`` kernel, which on the CPU (MindSpore 2.5-dev) is (1) 1 ulp off ``x * x`` for 0.07% of those values
(relative error up to 1.2e-7) and (2) ~8x slower than ``Square`` (500x500 float32, one thread-pool, graph mode: 0.8
vs 0.1 ms per launch, ``bench/kernel_gap.md``), and its gradient launches ``Pow`` again (``x ** 1``).

Here a Python number exponent equal to 2 (``2`` or ``2.0``; not ``True``) on a float32 or float64 tensor calls
``mindspore.ops.square``: the forward is ``x * x`` rounded once (bit-identical to PyTorch), and its gradient is
``grad * (2 * x)`` (measured: equal to PyTorch's ``pow`` backward, ``grad * (2 * x.pow(1))``, for every element; equal
to MindSpore's ``Pow`` gradient too). Other exponents, tensor exponents and other dtypes (integers, float16,
bfloat16, complex) call MindTorch's method unchanged. The method keeps PyTorch's argument name: ``x.pow(exponent=3)``
works (patches/float64_precision.py's wrapper, which this one wraps, names it ``other``: TypeError before).

Inside compiled graphs: ``torch.pow(x, 2)`` is replaced; ``x.pow(2)`` only where the graph compiler resolves the
method to MindTorch's ``Tensor`` class. On MindSpore 2.5-dev (``set_adapter_config``) that is a value it types as a
MindTorch tensor (a parameter, a step input, the result of their arithmetic operators: ``(w * 1.5).pow(2)``), not the
result of a MindTorch function or module (mnist_forward_forward's ``self.forward(x_pos).pow(2)`` compiles to
MindSpore's own ``Tensor.pow``: its step keeps 4 ``Pow`` launches, measured in ``bench/kernel_gap.md``); on MindSpore
>= 2.7 ``adapter/graph_methods.py`` sends every ``x.pow(...)`` call of user code to MindTorch's method. The ``**``
operator is never replaced in a graph (the graph compiler does not call the Python one).

Replaces: ``torch.Tensor.pow``, ``torch.Tensor.__pow__`` (``pow_`` calls ``pow``; patches/parameter_methods.py, applied
later, gives ``nn.Parameter`` these), ``torch.pow``. Wraps what
patches/float64_precision.py installed (applied after it: ``_wrap_once.wrap_attr``), so a float64 tensor's
``x.pow(2.0)`` squares in float64 and other float64 exponents keep that patch's float64 scalar.
"""
from __future__ import annotations

from . import Patch
from ._wrap_once import wrap_attr

ms = cast_to_ms_tensor = cast_to_adapter_tensor = None  # set by apply(); graph code reads module globals
_SQUARE_IDS = frozenset()  # ids of float32 / float64 as MindSpore and MindTorch name them
_SQUARE_DTYPES = ()
_squares = None  # constexpr(_squares_python), set by apply()


def _squares_python(dtype) -> bool:
    """Whether ``dtype`` is float32 or float64 (a ``constexpr``: folded at compile time inside graphs)."""
    return id(dtype) in _SQUARE_IDS or dtype in _SQUARE_DTYPES


def _pow_method(original):
    def method(self, exponent):
        if isinstance(exponent, (int, float)) and exponent == 2:  # a tensor exponent costs one isinstance
            x = cast_to_ms_tensor(self)
            if _squares(x.dtype):
                return cast_to_adapter_tensor(ms.ops.square(x))
        return original(self, exponent)
    # not functools.wraps: MindSpore's graph compiler unwraps __wrapped__ and would compile the original
    method.__name__ = method.__qualname__ = original.__name__
    method.__doc__ = original.__doc__
    return method


def _pow_function(original):
    def pow(input, exponent, *, out=None):  # noqa: A001,A002 (PyTorch's names)
        if out is None and isinstance(exponent, (int, float)) and exponent == 2 and isinstance(input, ms.Tensor):
            x = cast_to_ms_tensor(input)
            if _squares(x.dtype):
                return cast_to_adapter_tensor(ms.ops.square(x))
        return original(input, exponent) if out is None else original(input, exponent, out=out)
    pow.__doc__ = original.__doc__
    return pow


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, _SQUARE_IDS, _SQUARE_DTYPES, _squares
    import mindspore
    import mindtorch.torch as torch
    from mindspore.ops.primitive import constexpr
    from mindtorch.torch.tensor import Tensor, cast_to_adapter_tensor as to_adapter, cast_to_ms_tensor as to_ms
    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    _SQUARE_DTYPES = (mindspore.float32, mindspore.float64, torch.float32, torch.float64)
    _SQUARE_IDS = frozenset(id(d) for d in _SQUARE_DTYPES)
    if _squares is None:
        _squares = constexpr(_squares_python)
    for name in ("pow", "__pow__"):  # patches/parameter_methods.py (later) copies them onto nn.Parameter
        wrap_attr(Tensor, name, "pow_square", _pow_method)
    wrap_attr(torch, "pow", "pow_square", _pow_function)


PATCH = Patch("pow_square", "x.pow(2) / torch.pow(x, 2) / x ** 2 of float32/float64: MindSpore's Square, PyTorch's "
                            "x * x (MindSpore's Pow: 1 ulp off in 0.07% of values, ~8x slower on the CPU)",
              "post-import", apply,
              replaces=("torch.Tensor.pow", "torch.Tensor.__pow__", "torch.pow"),
              after=("float64_precision",))
