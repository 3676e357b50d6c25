"""How compiled code runs: :func:`graph_mode` = GRAPH_MODE (STRICT syntax) + functional in-place helpers + lean
convolution and batch-norm forwards + random tensors drawn by the graph.

MindTorch implements ``inplace=True`` (``nn.ReLU(inplace=True)``, ``F.relu(x, inplace=True)``, ``nn.Dropout(inplace)``,
...) through ``mindtorch.torch.common._inner._inplace_assign*``, which call ``Tensor.assign_value`` in PyNative and
raise in graph mode ("`inplace` should not be True"). Inside a compiled function the result is consumed through the
return value (``x = self.relu(x)``), so returning the output without the assignment computes the same values.
:func:`graph_semantics` swaps these helpers for their functional forms in every MindTorch module that imported them,
for the duration of a graph compile, and restores them after. In-place Tensor methods (``x.add_(1)``: MindTorch's
``mindtorch.torch.tensor._tensor_inplace_assign``, which raised in graph mode) write into a Parameter with
``mindspore.ops.assign`` (:func:`_tensor_inplace_assign`: BatchNorm's ``num_batches_tracked.add_(1)`` in timm's
``BatchNormAct2d.forward``, a ``requires_grad=False`` EMA); on a plain tensor they still raise, and the step runs
eagerly. ``Module.children()`` (a generator function in MindTorch: graph mode rejects ``yield``) is the tuple of the
module's submodules (:func:`_graph_children`: timm's ``RegStage.forward`` loops over it).

When. Every replacement below is made only while MindSpore builds a graph: :func:`graph_mode` arms a hook on the
graph executor's ``compile`` (:func:`_compile_hook`; ``GraphExecutor_.compile`` and, on 2.10, ``JitExecutor_.compile``,
the C++ entry points that ``_CellGraphExecutor.compile`` and jit functions call only when the input signature has no
graph yet: a Cell's first call, a recompile for a new input shape or dtype, a load from the compile cache), and the
hook enters :func:`graph_semantics` around that compile. A call that runs a graph built before swaps nothing: when
the swaps (120 on 2.5-dev: 52 names, 68 ``numpy.random`` / ``random`` guards; 123 on 2.10) were made around every
compiled call, each compiled step paid ~240 ``setattr`` and 621 Python-level calls for them (issue 17;
``bench/step_overhead.py --only mnist vae --before <tree>``: calls per step mnist 2756 -> 2135, vae 3376 -> 2755). A graph compiled under :func:`graph_mode` cannot miss the swaps: the hook sits on the
class, below every caller (Cells, jit functions, ``adapter/compile_cache.py``'s gate), and :func:`graph_mode`
reinstalls it if something put MindSpore's method back. Python that a graph runs at run time (a JIT fallback node)
runs MindTorch's eager code, as in PyNative.

Lean forwards. MindTorch's ``nn.Conv2d.forward`` reaches MindSpore's ``Conv2D`` primitive through five Python
functions (``_conv_forward``, ``F.conv2d``, ``_get_conv2d_const``, ``ms.ops.conv2d`` with its argument checks,
``_get_cache_prim``), and ``BatchNorm*d.forward`` builds its ``BatchNorm`` primitive in the graph; MindSpore's graph
compiler parses and type-infers that code once per layer. While compiling, :func:`graph_semantics` replaces the two
forwards with ones that call the same primitive with the same arguments, built once in Python
(:class:`_LeanConv2d`, :class:`_LeanBatchNorm`; the latter only when ``patches/normalization.py`` is disabled: that
patch's BatchNorm forward picks its primitive the same way and is kept); other cases (``padding_mode`` other than zeros, string padding,
unbatched or float64 input) take MindTorch's own forward. Both convert between MindTorch and MindSpore tensors with the
two primitives themselves (``convert_to_ms_tensor`` / ``convert_to_adapter_tensor``), not through MindTorch's
``cast_to_*`` functions, whose isinstance chains (tensor, tuple, list, dict) are graph code too. Measured on CPU (batch 32, 3x32x32, Adam, one step =
forward + backward + update): ResNet18's step compiles in 5.2 s instead of 6.2 s, ResNet50's in 11.0 s instead of
12.9 s (forward alone, ResNet18: 1.7 s instead of 3.8 s; native ``mindspore.nn`` ResNet18: 0.95 s). Same
kernels, so the same numbers (tests/test_compiled_step.py compares compiled and eager steps).

More lean forms (``adapter/graph_lean.py``, the same mechanism): ReLU / ``F.relu``, Linear, MaxPool2d,
AdaptiveAvgPool2d, ``torch.flatten``, ``F.cross_entropy``'s plain case and ``+`` of two MindTorch tensors (registered
for (Tensor, Tensor) on MindSpore's ``add`` while compiling); :func:`_collect` takes them from
``graph_lean.forms()`` / ``multitype_forms()`` and swaps a class's forward or a module's function only where it is
still MindTorch's own code (:func:`_from_mindtorch`: a patch's replacement keeps its fix).

Module calls. MindTorch's ``Module.construct`` is ``return self.forward(*inputs, **kwargs)``, and MindSpore's graph
compiler enters a Cell through ``construct``: every module call was two function graphs, the second through an
unpacking call, specialized per call site. While compiling, ``Module.construct`` reads as the module's ``forward``
(:class:`_ConstructIsForward`; a class with its own ``construct`` keeps it). Together with the lean forwards' direct
conversions and ``patches/adam.py``'s direct Mul/Add, ResNet18's compiled step (batch 32, Adam) went from 1358
function graphs / 3264 nodes after type inference to 954 / 2630 (native MindSpore: 642 / 1719;
``bench/compile_phases.py --ir``).

Random tensors. MindTorch's ``torch.randn`` / ``rand`` / ``randn_like`` / ``rand_like`` draw with numpy
(``np.random.randn`` in ``mindtorch/torch/functional.py``); the graph compiler runs such a call once, when it compiles,
so the draw became a constant of the graph and every compiled step reused it, silently: pytorch/examples' dcgan
(``noise = torch.randn(batch_size, nz, 1, 1)`` in its D step) trained G on one noise batch all run long (D's loss over
the last 8 iterations 0.43, PyTorch's 0.17-0.26), vae's ``reparameterize`` used one ``eps``. While compiling, they are
MindSpore's random ops (``standard_normal``, ``uniform``: a new draw at every run of the graph, from MindSpore's
seed, which ``torch.manual_seed`` sets; other numbers than numpy's in PyNative) (``_GRAPH_RANDOM``;
``tests/test_graph_random.py``); likewise ``torch.randperm`` (the order that sorts uniform draws).

Host draws. Any other ``numpy.random`` / Python ``random`` call while compiling (the user's mixup
``np.random.beta``, ``random.random()`` coin flips, MindTorch's numpy-drawn ``Tensor.exponential_`` /
``geometric_`` / ``bernoulli_`` on Ascend, ``torch.poisson``) would run once, at compile time, and freeze its value
into the graph. :func:`graph_semantics` swaps every drawing function of both modules for a guard that raises
:class:`HostRandomDraw` (MindSpore calls it in Python, as the third-party function it stands for, and re-raises the
exception as it is); the site then runs eagerly (``adapter/compiled_step.py``), and :func:`locate_host_draws` names
the user's ``file:line`` of each draw during that eager step. Not seen: ``from numpy.random import beta`` bound before
the run (the name is not looked up in ``numpy.random``).

Generator objects. A ``np.random.RandomState(seed)`` / ``np.random.default_rng()`` / ``random.Random(seed)`` object's
methods (``rng.standard_normal(...)`` in a GAN's D step) cannot be swapped (numpy's are methods of C types), and the
compiler froze their draw too, silently: pytorch/examples-style dcgan with ``rng.standard_normal`` noise trained every
compiled step on the first compiled step's noise (step 2: D 1.1015 vs PyTorch's 1.1320). So every compile under
:func:`graph_mode` compares the state of each such object alive before it (:func:`_stream_states`, a ``gc`` scan,
~40 ms for 200k objects) with its state after: one that moved was drawn from at compile time; its state is put back
(the eager step then draws PyTorch's numbers, in PyTorch's order) and :class:`HostRandomDraw` is raised, as for a
module function. :func:`locate_host_draws` names the user's line of such a method call too (a profile hook sees the
call). A draw in its own statement of the step is split out of the graph instead (``adapter/host_values.py``).
Not seen: ``random.SystemRandom`` (no state), and tempfile's name generator (excluded: the compile cache's files).

Patches' graph forms. A patch's ``functools.wraps`` wrapper does nothing in compiled code (MindSpore's parser
compiles ``inspect.unwrap`` of it, MindTorch's original). A patch that needs its fix compiled registers plain
functions with :func:`register_graph_forms`, swapped in here while compiling: ``patches/empty_reductions.py``'s sums,
means and products of empty tensors (MindSpore's kernels left them uninitialised: the weight gradient of
``nn.Linear`` over an empty batch was the freed memory's last values).

:func:`graph_mode` is what the compiled training step and compiled forwards run under: MindSpore's GRAPH_MODE
(measured on ResNet18: a Cell run in GRAPH_MODE 0.25 s/step, the same graph as ``mindspore.jit`` inside PyNative
0.50 s/step) with ``jit_syntax_level=STRICT`` (code that reads tensor values in Python fails to compile instead of
being folded into a constant), plus :func:`graph_semantics`; PyNative and LAX again on exit.

:func:`run_cell` runs a Cell that way and hands back outputs that each own their memory. On this MindSpore build a
graph that returns one node twice (``return loss, loss``; MindSpore's optimizations can also merge two outputs)
gives two output tensors sharing one device buffer, and the buffer is freed when the first of them is
garbage-collected while the other still reads it: pytorch/examples' vae printed ``loss.item()`` after
``optimizer.step()`` as 0.81, 0.0547, 0.6561 (the next graph's ``beta1**t``, ``sqrt(1 - beta2**t)``) instead of
~8800 (``tests/test_compiled_step.py::test_outputs_stay_valid*``; seen with shape-(1,) outputs). Outputs sharing a
buffer are copied before any of them can die.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Dict, Tuple

from adapter import hooks, patching
from adapter.graph_lean import PythonAttribute


def _inplace_assign_pynative(input, inplace, output, op_name):  # noqa: A002 (MindTorch's signature)
    return output


def _inplace_assign(input, inplace, output):  # noqa: A002
    return output


def _nn_functional_inplace_assign(input, output, op_name, replace_op):  # noqa: A002
    return output


def _inplace_limit_pynative(inplace, op_name):
    # MindTorch's check in nn.ReLU/Dropout/...'s __init__, which raises in graph mode: a module built inside a
    # compiled forward (`nn.ReLU(inplace=True)(x)`) is constructed while compiling; its forward then takes the
    # functional helpers above, and adapter/graph_syntax.py rebinds its input to the result
    return None


def _tensor_inplace_assign(input, output, op_name, replace_op):  # noqa: A002 (MindTorch's signature)
    """MindTorch's ``_tensor_inplace_assign`` (the end of every in-place Tensor method: ``x.add_(1)``, ``x.mul_(m)``)
    while compiling. Into a MindSpore Parameter (a buffer the compiled step holds: BatchNorm's
    ``num_batches_tracked`` and running statistics, a module's ``nn.Parameter(..., requires_grad=False)``) the
    result is written with ``mindspore.ops.assign``, as PyTorch writes the tensor: later reads in the graph and the
    next step see it, and the method returns the tensor itself (``x.mul_(a).add_(b)`` chains). ``requires_grad`` cannot
    be read in a graph; a trainable Parameter reaches here only where PyTorch raises (an in-place write into a leaf
    that requires grad) or under ``torch.no_grad()``, which does not compile (the step runs eagerly). The result
    takes the tensor's dtype where PyTorch casts it (same category or lower: an int into a float tensor); a float
    result into an integer or bool tensor raises PyTorch's "result type ... can't be cast" RuntimeError, and a
    shape other than the tensor's raises too (PyTorch: "output with shape ... doesn't match the broadcast shape").
    Anything else (a plain tensor: a ``register_buffer`` tensor or a graph value, which a graph cannot write) raises
    MindTorch's "is an in-place operation" RuntimeError, so the step runs eagerly (kind ``inplace-tensor-method``)."""
    if isinstance(input, ms.Parameter):
        value = cast_to_ms_tensor(output)
        _check_inplace_result(value.dtype, input.dtype, value.shape, input.shape, op_name)
        if value.dtype != input.dtype:
            value = value.astype(input.dtype)
        ms.ops.assign(input, value)
        return input
    raise RuntimeError("`Tensor." + op_name + "` is an in-place operation and \"x." + op_name + "()\" is not "
                       "supported to use in MindSpore static graph mode. Please use \"x = x." + replace_op +
                       "()\" or other API instead.")


def dtype_category(dtype) -> int:
    """PyTorch's type categories of a MindSpore dtype, for in-place result casts and ``torch.can_cast``: 0 bool,
    1 integer, 2 floating, 3 complex (a result may be written into a tensor of its category or a higher one). Used
    here while compiling and by ``patches/inplace.py`` in PyNative."""
    import mindspore
    if dtype == mindspore.bool_:
        return 0
    if dtype in (mindspore.complex64, mindspore.complex128):
        return 3
    if dtype in (mindspore.float16, mindspore.float32, mindspore.float64, mindspore.bfloat16):
        return 2
    return 1


def _check_inplace_result_python(value_dtype, target_dtype, value_shape, target_shape, op_name):
    """PyTorch's checks of an in-place result (a ``constexpr`` while compiling: dtypes and shapes are constants).
    Returns True; raises RuntimeError as PyTorch does."""
    if dtype_category(value_dtype) > dtype_category(target_dtype):
        raise RuntimeError(f"{op_name}: result type {value_dtype} can't be cast to the desired output type "
                           f"{target_dtype}")
    if tuple(value_shape) != tuple(target_shape):
        raise RuntimeError(f"{op_name}: output with shape {list(target_shape)} doesn't match the broadcast shape "
                           f"{list(value_shape)}")
    return True


_check_inplace_result = None  # the constexpr form of the function above, made by _lean_forwards()


def _children_tuple(module) -> tuple:
    """``module``'s immediate submodules, in registration order, each once (what ``Module.children()`` yields)."""
    return tuple(child for _, child in module.named_children())


def _graph_children(self):
    """``Module.children()`` while compiling: the tuple of the module's immediate submodules, read in Python
    (:func:`_children_tuple` through a :class:`PythonAttribute`). MindTorch's ``children`` is a generator function,
    which graph mode rejects ("Unsupported expression 'Yield'"): timm's ``RegStage.forward`` runs ``for block in
    self.children(): x = block(x)``; over the tuple the loop is unrolled, the same calls in the same order."""
    return self._adapter_children


_FUNCTIONAL = {
    "_inplace_assign_pynative": _inplace_assign_pynative,
    "_inplace_assign": _inplace_assign,
    "_nn_functional_inplace_assign": _nn_functional_inplace_assign,
    "_inplace_limit_pynative": _inplace_limit_pynative,
}
# What this module replaces (for --list-patches, patches/listing.py); the swaps go through patching.swapped.
DECLARED = (
    patching.Declared(
        "graph_semantics", "compiled code gets graph semantics: functional in-place helpers (in every MindTorch module "
        "that imported them), in-place Tensor methods on Parameter buffers as mindspore.ops.assign, lean "
        "Conv2d/BatchNorm forwards, a module's construct is its forward, children() a tuple, torch.rand/randn"
        "(_like) drawn by the graph, numpy.random/random calls detected as host draws",
        "while a compiled step or no_grad forward is compiled (graph_semantics())",
        replaces=("mindtorch.torch.common._inner._inplace_assign_pynative", "mindtorch.torch.common._inner._inplace_assign",
                  "mindtorch.torch.common._inner._nn_functional_inplace_assign",
                  "mindtorch.torch.common._inner._inplace_limit_pynative",
                  "mindtorch.torch.tensor._tensor_inplace_assign", "torch.nn.Module.children",
                  "torch.nn.Conv2d.forward",
                  "torch.nn.BatchNorm2d.forward", "torch.nn.Module.construct", "torch.randn", "torch.rand",
                  "torch.randn_like", "torch.rand_like", "numpy.random.*", "random.*"),
        effects=("adds Conv2d._adapter_conv2d and _BatchNorm._adapter_batch_norm (the lean forwards' primitives) "
                 "and Module._adapter_children (children() as a tuple), once, through patch_attr",)),
    patching.Declared(
        "graph_semantics:graph_forms", "patches' plain-function graph forms swapped in while compiling "
        "(register_graph_forms): sum/mean/prod/std/var/norm/logsumexp/mm/bmm/matmul and x @ y of empty tensors as "
        "PyTorch, compiled (patches/empty_reductions.py)", "while a compiled step or no_grad forward is compiled "
        "(graph_semantics()), with the empty_reductions patch applied",
        replaces=tuple(f"{owner}.{name}" for owner in ("torch", "torch.functional", "torch.Tensor")
                       for name in ("sum", "mean", "prod", "std", "var", "norm", "logsumexp", "mm", "bmm", "matmul"))
        + ("torch.Tensor.__matmul__", "torch.Tensor.__rmatmul__",
           "mindtorch.torch._register.register_standard_method.matmul_fn")),
    patching.Declared(
        "graph_semantics:compile_hook", "the swaps above are made only while a graph compiles: a hook on the graph "
        "executor's compile (also JitExecutor_.compile where MindSpore has it), which enters graph_semantics() for "
        "compiles made under graph_mode()", "installed at the first graph_mode(), again if put back",
        replaces=("mindspore._c_expression.GraphExecutor_.compile",)),
    patching.Declared(
        "graph_semantics:locate_host_draws", "names the user's file:line of each numpy.random/random draw in a step "
        "that drew on the host while compiling", "while that step runs eagerly once (locate_host_draws())",
        replaces=("numpy.random.*", "random.*")),
)
_sites: Dict[Tuple[object, str], Tuple[object, object]] = {}
_graph_form_providers: list = []  # register_graph_forms(): patches' graph forms (patches/empty_reductions.py)
_host_sites: list = []  # [(module, attr, original, guard)]: numpy.random / random while compiling (_host_random_sites)
_method_swaps: list = []  # adapter/graph_methods.py's Parser.parse wrapper, where MindSpore needs it
_multitype_swaps: list = []  # adapter/graph_lean.py: [(MultitypeFuncGraph, types, lean, registered)]


class _LeanConv2d:
    """``nn.Conv2d.forward`` while compiling: MindSpore's ``Conv2D`` primitive with MindTorch's arguments
    (``mindtorch/torch/nn/functional.py`` ``conv2d`` -> ``mindspore.ops.conv2d``: mode 1, pad_mode "pad", padding
    (top, bottom, left, right) = (p_h, p_h, p_w, p_w), NCHW), then ``bias_add``. Input (N, C_in, H, W), any float
    dtype but float64; output (N, C_out, H_out, W_out), a MindTorch tensor as MindTorch returns."""

    @staticmethod
    def primitive(module):
        """The ``Conv2D`` primitive for ``module`` (cached by MindSpore's ``_get_cache_prim`` per arguments), or None
        when MindTorch's own forward must run (padding_mode other than zeros, string padding, a subclass with its
        own ``_conv_forward``)."""
        from mindspore.ops import operations as P
        from mindtorch.torch.nn.modules.conv import Conv2d
        from adapter import backend
        padding = module.padding
        if module.padding_mode != "zeros" or isinstance(padding, str) or \
                type(module)._conv_forward is not Conv2d._conv_forward:
            return None
        pad = (padding[0], padding[0], padding[1], padding[1]) if len(padding) == 2 else (padding[0],) * 4
        return backend.cached_primitive(P.Conv2D, module.out_channels, tuple(module.kernel_size), 1, "pad", pad,
                                        tuple(module.stride), tuple(module.dilation), module.groups, "NCHW")

    @staticmethod
    def forward(self, input):  # noqa: A002 (PyTorch's name); graph code: module globals set by _lean_forwards()
        x = _to_ms(input)  # MindSpore's ndim/dtype below, not MindTorch's Tensor properties (more graph code)
        if self._adapter_conv2d is None or x.ndim != 4 or x.dtype == ms.float64:
            return _conv2d_original(self, input)
        output = self._adapter_conv2d(x, self.weight)
        if self.bias is not None:
            bias = self.bias
            if bias.dtype != output.dtype:
                bias = bias.astype(output.dtype)
            output = ms.ops.bias_add(output, bias)
        return _to_adapter(output)  # what cast_to_adapter_tensor does with one tensor, without its type dispatch


class _LeanBatchNorm:
    """``BatchNorm{1,2,3}d.forward`` while compiling: MindTorch's ``BatchNorm`` primitive call
    (``mindtorch/torch/nn/modules/batchnorm.py`` ``_BatchNorm.forward``: is_training = training or not
    track_running_stats, its epsilon and momentum, NCHW) with the primitive built once in Python. Input (N, C, ...)
    as MindTorch accepts; output the same shape, a MindTorch tensor."""

    @staticmethod
    def primitive(module):
        from mindspore.ops import operations as P
        from adapter import backend
        if module.training or not module.track_running_stats:
            return backend.cached_primitive(P.BatchNorm, is_training=True, epsilon=module.eps,
                                            momentum=module.momentum, data_format="NCHW")
        return backend.cached_primitive(P.BatchNorm, is_training=False, epsilon=module.eps, data_format="NCHW")

    @staticmethod
    def forward(self, input):  # noqa: A002; graph code: module globals set by _lean_forwards()
        output = self._adapter_batch_norm(cast_to_ms_tensor(input), self.weight, self.bias, self.running_mean,
                                          self.running_var)[0]
        return cast_to_adapter_tensor(output)


def _graph_size(size):
    """``torch.randn(2, 3)`` / ``torch.randn((2, 3))`` / ``torch.randn([2, 3])``: the shape tuple (graph code)."""
    if isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def _graph_randn(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, generator=None):
    """``torch.randn`` in a compiled step: MindSpore's ``standard_normal`` op, a new draw at every run of the graph
    (module docstring, "Random tensors"). float32 unless ``dtype``; ``out`` is not supported in a graph. With
    ``generator=`` (``patches/generator.py``: PyTorch's own numbers, drawn on the host) the step cannot be compiled:
    it raises, and the site runs eagerly, where the generator's draws are PyTorch's."""
    if generator is not None:
        raise TypeError("torch.randn(generator=...) draws PyTorch's numbers on the host, which a graph cannot")
    output = ms.ops.standard_normal(_graph_size(size))
    if dtype is not None:
        output = output.astype(dtype)
    return cast_to_adapter_tensor(output)


def _graph_rand(*positional_size, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
                pin_memory=False, generator=None):
    """``torch.rand`` in a compiled step: MindSpore's ``UniformReal`` op on [0, 1), a new draw at every run (with
    ``generator=``: raises, as :func:`_graph_randn`)."""
    if generator is not None:
        raise TypeError("torch.rand(generator=...) draws PyTorch's numbers on the host, which a graph cannot")
    shape = _graph_size(positional_size) if size is None else tuple(size)
    output = ms.ops.uniform(shape, ms.Tensor(0.0, ms.float32), ms.Tensor(1.0, ms.float32))
    if dtype is not None:
        output = output.astype(dtype)
    return cast_to_adapter_tensor(output)


def _graph_randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,  # noqa: A002
                      memory_format=None):
    """``torch.randn_like`` in a compiled step: ``standard_normal`` of ``input``'s shape, its dtype unless ``dtype``."""
    input_ms = cast_to_ms_tensor(input)
    output = ms.ops.standard_normal(input_ms.shape)
    if dtype is None:
        output = output.astype(input_ms.dtype)
    else:
        output = output.astype(dtype)
    return cast_to_adapter_tensor(output)


def _graph_rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,  # noqa: A002
                     memory_format=None):
    """``torch.rand_like`` in a compiled step: uniform on [0, 1) of ``input``'s shape and dtype (unless ``dtype``)."""
    input_ms = cast_to_ms_tensor(input)
    output = ms.ops.uniform(input_ms.shape, ms.Tensor(0.0, ms.float32), ms.Tensor(1.0, ms.float32))
    if dtype is None:
        output = output.astype(input_ms.dtype)
    else:
        output = output.astype(dtype)
    return cast_to_adapter_tensor(output)


def _graph_randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    """``torch.randperm(n)`` in a compiled step: the order that sorts ``n`` draws of U(0, 1) (MindSpore's
    ``UniformReal``), a uniformly random permutation of ``0..n-1`` drawn anew at every run of the graph; int64
    unless ``dtype``. (MindSpore's own ``ops.randperm`` gave the same, unshuffled-looking order at every run on
    CPU, measured 2026-11-23.) With ``generator=``: raises, as :func:`_graph_randn`."""
    if generator is not None:
        raise TypeError("torch.randperm(generator=...) draws PyTorch's numbers on the host, which a graph cannot")
    keys = ms.ops.uniform((n,), ms.Tensor(0.0, ms.float32), ms.Tensor(1.0, ms.float32))
    output = ms.ops.argsort(keys).astype(ms.int64)
    if dtype is not None:
        output = output.astype(dtype)
    return cast_to_adapter_tensor(output)


# MindTorch draws these with numpy (mindtorch/torch/functional.py: np.random.randn ...), which the graph compiler
# runs once, at compile time: the draw became a constant of the graph. Swapped while compiling (module docstring).
_GRAPH_RANDOM = {"randn": _graph_randn, "rand": _graph_rand, "randn_like": _graph_randn_like,
                 "rand_like": _graph_rand_like, "randperm": _graph_randperm}


class HostRandomDraw(RuntimeError):
    """A compiled step called a host random number generator (``np.random.*``, Python's ``random.*``): the graph
    compiler would run it once, at compile time, and freeze its value into the graph. Raised while compiling, so
    the site runs eagerly (``adapter/compiled_step.py``); the message says which function.

    Attributes:
        label: the function as the user writes it, e.g. ``"np.random.beta"``.
        module, attr: where it lives (``numpy.random``, ``"beta"``), as it names it.
        fallback_kind: its ``adapter.diagnostics`` kind.
    """

    fallback_kind = "host-random-draw"

    def __init__(self, label: str, module, attr: str):
        super().__init__(f"{label} draws on the host, once per compile (its value would be a constant of the graph): "
                         f"the step runs eagerly")
        self.label, self.module, self.attr = label, module, attr


# numpy.random's and Python random's module-level functions that do not draw (state handling, classes)
_HOST_NOT_DRAWS = frozenset({"seed", "get_state", "set_state", "getstate", "setstate", "get_bit_generator",
                             "set_bit_generator"})


def _host_draw_guard(label: str, module, attr: str):
    """A stand-in for ``label`` (e.g. ``np.random.beta``) that raises :class:`HostRandomDraw`. Its ``__module__`` is
    the real module's, so MindSpore's graph compiler treats it as the third-party function it replaces and calls it
    in Python, at compile time (``mindspore/_extends/parse/parser.py``, ``is_third_party_module_or_function``); the
    exception reaches the compile's caller as it is (measured: MindSpore re-raises the same object)."""
    def guard(*args, **kwargs):
        raise HostRandomDraw(label, module, attr)
    guard.__module__ = module.__name__
    guard.__label__ = label
    guard.__name__ = guard.__qualname__ = label.rsplit(".", 1)[-1]
    return guard


def _stream_objects() -> list:
    """Every numpy ``RandomState`` / ``Generator`` and Python ``random.Random`` object alive now (a ``gc`` scan by
    exact type, over those classes and their subclasses, at C speed: ~40 ms for 200k objects; not ``isinstance``: a
    dead weak proxy raises there), but ``SystemRandom`` (no state) and tempfile's name generator (it draws while the
    compile cache writes its files)."""
    import gc
    import itertools
    import random
    import tempfile

    import numpy.random as npr
    kinds, stack = set(), [npr.RandomState, npr.Generator, random.Random]
    while stack:
        cls = stack.pop()
        if cls not in kinds and cls is not random.SystemRandom:
            kinds.add(cls)
            stack.extend(cls.__subclasses__())
    skip = {id(vars(seq).get("_rng")) for seq in (getattr(tempfile, "_name_sequence", None),) if seq is not None}
    objects = gc.get_objects()
    return [o for o in itertools.compress(objects, map(kinds.__contains__, map(type, objects))) if id(o) not in skip]


def _stream_state(obj):
    """``(state, comparable)`` of a generator object (:func:`_stream_objects`): what :func:`_set_stream_state` puts
    back, and a value that differs once it has drawn."""
    import pickle
    import random
    if isinstance(obj, random.Random):
        state = obj.getstate()
        return state, state
    import numpy.random as npr
    state = obj.get_state(legacy=False) if isinstance(obj, npr.RandomState) else obj.bit_generator.state
    return state, pickle.dumps(state)


def _set_stream_state(obj, state) -> None:
    import random
    if isinstance(obj, random.Random):
        obj.setstate(state)
        return
    import numpy.random as npr
    if isinstance(obj, npr.RandomState):
        obj.set_state(state)
    else:
        obj.bit_generator.state = state


@contextlib.contextmanager
def _stream_states():
    """Around a compile: a generator object (:func:`_stream_objects`) that drew meanwhile had its draw frozen into the
    graph (module docstring, "Generator objects"): its state is put back, and :class:`HostRandomDraw` raised.

    Raises:
        HostRandomDraw: naming the object's type (``"a numpy RandomState object's method"``)."""
    before = [(obj,) + _stream_state(obj) for obj in _stream_objects()]
    moved = []
    try:
        yield
    finally:  # put back also when the compile failed otherwise: the eager step then draws what PyTorch draws
        moved = [(obj, state) for obj, state, seen in before if _stream_state(obj)[1] != seen]
        for obj, state in moved:
            _set_stream_state(obj, state)
    if moved:
        kind = type(moved[0][0])
        raise HostRandomDraw(f"a method of a {kind.__module__.split('.')[0]} {kind.__name__} object",
                             sys.modules[kind.__module__], kind.__name__)


def _host_random_sites():
    """[(module, attribute, original, guard)] for every drawing function of ``numpy.random`` and ``random``."""
    import random

    import numpy.random as npr
    sites = []
    for module, prefix, names in ((npr, "np.random", npr.__all__), (random, "random", random.__all__)):
        for attr in names:
            original = getattr(module, attr, None)
            if attr in _HOST_NOT_DRAWS or attr.startswith("_") or isinstance(original, type) or not callable(original):
                continue
            sites.append((module, attr, original, _host_draw_guard(f"{prefix}.{attr}", module, attr)))
    return sites


@contextlib.contextmanager
def _host_sites_replaced(wrap):
    """While the context lasts, every ``numpy.random`` / ``random`` drawing function (``_host_sites``) is
    ``wrap(label, original)`` (label: ``"np.random.beta"``); the originals are put back after."""
    with patching.swapped((module, attr, wrap(guard.__label__, original))
                          for module, attr, original, guard in _host_sites):
        yield


@contextlib.contextmanager
def locate_host_draws():
    """While a site's step runs eagerly after a :class:`HostRandomDraw`: every ``numpy.random`` / ``random``
    function records the user's ``file:line`` of its first call (the compile-time call has no user frame on the
    Python stack: MindSpore's compiler makes it, and not necessarily in program order). Yields a list of
    ``"np.random.beta at train.py:37"``, in the order of the calls; only calls made by user code are listed
    (MindTorch's eager ``torch.randperm`` calls ``np.random.permutation``, but is a graph op when compiled). A
    generator object's method (``"RandomState.standard_normal at gan.py:62"``) is seen by a profile hook
    (``sys.setprofile``, unless another profiler holds it): numpy's are C methods, Python's ``random.Random`` ones
    Python functions of ``random.py``.
    """
    import random

    import numpy.random as npr

    from adapter.userframe import display_path, is_user_frame, user_file, user_frame
    if not _sites:
        _collect()
    found = []
    kinds = (npr.RandomState, npr.Generator, random.Random)

    def note(label, frame):
        entry = f"{label} at {display_path(user_file(frame.f_code.co_filename))}:{frame.f_lineno}"
        if entry not in found:
            found.append(entry)

    def profile(frame, event, arg):
        if event == "c_call":
            owner = getattr(arg, "__self__", None)
            if issubclass(type(owner), kinds) and is_user_frame(frame):
                note(f"{type(owner).__name__}.{arg.__name__}", frame)
        elif event == "call" and frame.f_code.co_filename == random.__file__ and frame.f_back is not None \
                and issubclass(type(frame.f_locals.get("self")), random.Random) and is_user_frame(frame.f_back):
            note(f"{type(frame.f_locals['self']).__name__}.{frame.f_code.co_name}", frame.f_back)

    def recorder(label, original):
        def record(*args, **kwargs):
            caller = sys._getframe(1)
            if user_frame(2) is caller:  # the user's own call (MindTorch's eager randperm is a graph op compiled)
                note(label, caller)
            return original(*args, **kwargs)
        return record
    hook = sys.getprofile() is None
    with _host_sites_replaced(recorder):
        if hook:
            sys.setprofile(profile)
        try:
            yield found
        finally:
            if hook:
                sys.setprofile(None)


def _primitive_classes_with_call() -> list:
    """MindSpore's ``Primitive`` and every subclass of it (loaded now) that defines its own ``__call__``."""
    from mindspore.ops.primitive import Primitive
    found, stack, seen = [], [Primitive], set()
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        if "__call__" in cls.__dict__:
            found.append(cls)
        stack.extend(cls.__subclasses__())
    return found


@contextlib.contextmanager
def random_draws():
    """While a step runs eagerly (its reference step, ``adapter/compiled_step.py``): yields a list that collects the
    random number draws the step makes, by name, each once: calls of MindSpore primitives marked
    ``side_effect_hidden`` (MindSpore's mark of its random ops: ``Dropout``, ``DropoutExt``, ``StandardNormal``,
    ``UniformReal``, ``RandpermV2``, ... in ``mindspore/ops/operations/random_ops.py`` and
    ``ops/auto_generate/gen_ops_prim.py``; what ``nn.Dropout``, ``F.dropout``, ``patches/dropout.py``'s channel
    dropout and ``ms.numpy.rand`` run) and of ``numpy.random`` / ``random`` functions (MindTorch's eager
    ``torch.randn`` / ``rand`` / ``randperm`` draw with numpy; compiled, they are MindSpore's random ops,
    ``_GRAPH_RANDOM``). A compiled step that draws gives other numbers than its eager reference step, so its graph
    cannot be checked against it (``adapter/compile_cache.py``). Not seen: a ``numpy.random.Generator``'s or
    ``RandomState``'s methods (their draws would be host draws, frozen into a graph anyway)."""
    if not _sites:
        _collect()
    found: list = []

    def primitive_call(original):
        def __call__(self, *args, **kwargs):
            if (getattr(self, "attrs", None) or {}).get("side_effect_hidden"):
                name = getattr(self, "name", type(self).__name__)
                if name not in found:
                    found.append(name)
            return original(self, *args, **kwargs)
        __call__.__wrapped__ = original
        return __call__

    def host_call(label, original):
        def record(*args, **kwargs):
            if label not in found:
                found.append(label)
            return original(*args, **kwargs)
        return record
    import types
    classes = [(cls, cls.__dict__["__call__"]) for cls in _primitive_classes_with_call()
               if isinstance(cls.__dict__["__call__"], types.FunctionType)]
    for cls, original in classes:
        cls.__call__ = primitive_call(original)
    try:
        with _host_sites_replaced(host_call):
            yield found
    finally:
        for cls, original in classes:
            cls.__call__ = original


# Module globals the lean forwards (graph code: no imports there) read; set by _lean_forwards() once MindTorch is
# imported (this module is imported before the patches that must precede MindTorch).
ms = cast_to_adapter_tensor = cast_to_ms_tensor = _conv2d_original = _to_ms = _to_adapter = None


def _lean_forwards():
    """[(class, attribute, lean function)] for the swap, with the properties the lean forwards read installed."""
    global ms, cast_to_adapter_tensor, cast_to_ms_tensor, _conv2d_original, _to_ms, _to_adapter
    import importlib

    import mindspore
    tensor = importlib.import_module("mindtorch.torch.tensor")  # the module; ``mindtorch.torch.tensor`` is a function
    from mindtorch.torch.nn.modules.conv import Conv2d
    from adapter import backend
    BatchNorm = backend.internal("BatchNorm")  # MindTorch's _BatchNorm, base of BatchNorm{1,2,3}d
    if _conv2d_original is None:
        ms, cast_to_adapter_tensor, cast_to_ms_tensor = mindspore, tensor.cast_to_adapter_tensor, tensor.cast_to_ms_tensor
        # the two primitives MindTorch's cast_to_ms_tensor / cast_to_adapter_tensor apply to a single tensor
        inner = backend.internal("inner_ops")
        _to_ms, _to_adapter = inner.convert_to_ms_tensor, inner.convert_to_adapter_tensor
        _conv2d_original = Conv2d.forward
        global _check_inplace_result
        _check_inplace_result = mindspore.ops.constexpr(_check_inplace_result_python)
        with patching.applying("graph_semantics"):
            patching.patch_attr(Conv2d, "_adapter_conv2d", PythonAttribute(_LeanConv2d.primitive))
            patching.patch_attr(BatchNorm, "_adapter_batch_norm", PythonAttribute(_LeanBatchNorm.primitive))
            from mindtorch.torch.nn.modules.module import Module
            patching.patch_attr(Module, "_adapter_children", PythonAttribute(_children_tuple))
    if hooks.attr("bn_primitive") in BatchNorm.__dict__:
        return [(Conv2d, "forward", _LeanConv2d.forward)]  # patches/normalization.py's forward is lean already
    return [(Conv2d, "forward", _LeanConv2d.forward), (BatchNorm, "forward", _LeanBatchNorm.forward)]


class _ConstructIsForward:
    """``Module.construct`` while compiling: the module's ``forward`` itself. MindTorch's ``Module.construct`` is
    ``return self.forward(*inputs, **kwargs)`` (``mindtorch/torch/nn/modules/module.py``); MindSpore's graph compiler
    reaches a Cell's code through ``construct`` (``mindspore/_extends/parse/parser.py``
    ``get_parse_method_of_class``: ``getattr(cell, "construct")``), so every module call became two function graphs,
    the second through a ``*inputs, **kwargs`` unpacking call, each type-inferred per call site. Subclasses that
    define their own ``construct`` keep it, and so does a module whose ``forward`` is not a method bound to it (one
    replaced on the instance: a lambda is no Cell method to the parser, "Parse Resolve convert failed"); outside a
    compile, the class attribute is MindTorch's function again."""

    def __init__(self, original):
        self.original = original

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.original
        forward = obj.forward
        if getattr(forward, "__self__", None) is obj and getattr(forward, "__func__", None) is not None:
            return forward  # the class's forward (or a method bound to this module)
        # a forward replaced on the instance (`m.forward = lambda x: ...`, a wrapper): MindTorch's construct calls it
        return self.original.__get__(obj, owner)


def _wraps(fn, target) -> bool:
    """``fn`` is ``target`` or a wrapper of it (``functools.wraps``-style ``__wrapped__`` chain)."""
    for _ in range(16):
        if fn is target:
            return True
        fn = getattr(fn, "__wrapped__", None)
        if fn is None:
            return False
    return False


def _from_mindtorch(fn) -> bool:
    """``fn`` (unwrapped) is MindTorch's own code, not a patch's replacement (whose graph form it would drop)."""
    import inspect
    return inspect.unwrap(fn).__module__.startswith("mindtorch.") if callable(fn) else False


def _collect() -> None:
    import importlib
    from adapter import backend
    inner = backend.internal("common_inner")
    creators = importlib.import_module("mindtorch.torch.functional")  # randn, rand, ... (_GRAPH_RANDOM)
    for cls, attr, lean in _lean_forwards():
        _sites[(cls, attr)] = (cls.__dict__[attr], lean)
    from adapter import graph_lean
    lean_classes, lean_functions = graph_lean.forms()
    for cls, attr, lean in lean_classes:  # adapter/graph_lean.py: kept where a patch replaced MindTorch's forward
        if _from_mindtorch(cls.__dict__.get(attr)):
            _sites[(cls, attr)] = (cls.__dict__[attr], lean)
    from mindtorch.torch.nn.modules.module import Module
    _sites[(Module, "construct")] = (Module.__dict__["construct"], _ConstructIsForward(Module.__dict__["construct"]))
    _sites[(Module, "children")] = (Module.__dict__["children"], _graph_children)
    _host_sites.extend(_host_random_sites())
    for provider in _graph_form_providers:
        for owner, attr, form in provider():
            _sites[(owner, attr)] = (getattr(owner, attr), form)
    _multitype_swaps.extend(graph_lean.multitype_forms())
    from adapter import graph_methods
    from adapter import graph_syntax
    # graph_methods: MindSpore >= 2.7 only, [] on 2.5-dev; graph_syntax's parse rewrite below it, on every version
    _method_swaps.extend(graph_syntax.swaps(graph_methods.swaps()))
    tensor_module = importlib.import_module("mindtorch.torch.tensor")  # the module (torch.tensor is a function)
    _sites[(tensor_module, "_tensor_inplace_assign")] = (tensor_module._tensor_inplace_assign, _tensor_inplace_assign)
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("mindtorch.torch"):
            continue
        for attr, functional in _FUNCTIONAL.items():
            original = getattr(inner, attr)
            if module.__dict__.get(attr) is original:
                _sites[(module, attr)] = (original, functional)
        for attr, graph_random in _GRAPH_RANDOM.items():
            original = getattr(creators, attr)
            value = module.__dict__.get(attr)
            if value is not None and _wraps(value, original):  # also through patches' wrappers (leaf_grad, generator)
                _sites[(module, attr)] = (value, graph_random)
        for original, lean in lean_functions:
            value = module.__dict__.get(original.__name__)
            if value is not None and _wraps(value, original) and _from_mindtorch(original):
                _sites[(module, original.__name__)] = (value, lean)


def register_graph_forms(provider) -> None:
    """Have :func:`graph_semantics` also swap in ``provider()``'s ``[(owner, attribute, graph form)]`` while
    compiling: a patch's plain-function forms for code the graph compiler would otherwise take unwrapped from a
    ``functools.wraps`` wrapper (``patches/empty_reductions.py``: sums and products of empty tensors). The provider is
    called when the swaps are next collected (the next compile); registering one again changes nothing."""
    if provider not in _graph_form_providers:
        _graph_form_providers.append(provider)
    _sites.clear()  # collected again, with the provider, at the next compile
    _host_sites.clear()
    _method_swaps.clear()
    _multitype_swaps.clear()


_active = 0  # graph_semantics() depth: its swaps are in place
_armed = 0  # graph_mode() depth: a graph compiled now gets graph_semantics() (_compile_hook)
_hooked: list = []  # [(executor class, its compile hook)] installed by _install_compile_hooks()


@contextlib.contextmanager
def graph_semantics():
    """Within this context, MindTorch's in-place helpers return their output instead of assigning it, Conv2d /
    BatchNorm forwards are the lean ones, a module's ``construct`` is its ``forward``, randn / rand / randn_like /
    rand_like are MindSpore's random ops, and registered graph forms replace their patches' wrappers (module
    docstring). Entered by :func:`_compile_hook` around each graph compile made under :func:`graph_mode`; a nested
    entry swaps nothing more."""
    global _active
    if _active:
        _active += 1
        try:
            yield
        finally:
            _active -= 1
        return
    if not _sites:
        _collect()
    swaps = [(module, attr, functional) for (module, attr), (_, functional) in _sites.items()]
    swaps += [(module, attr, guard) for module, attr, _, guard in _host_sites]
    swaps += _method_swaps
    with patching.swapped(swaps), _multitype_registered(_multitype_swaps):
        _active = 1
        try:
            yield
        finally:
            _active = 0


@contextlib.contextmanager
def _multitype_registered(items):
    """Within the context, each ``(multitype, types, lean, registered)``'s ``lean`` is what the graph compiler
    calls for ``types`` (``MultitypeFuncGraph.register_fn``); ``registered`` again on exit."""
    done = []
    try:
        for multitype, types, lean, registered in items:
            multitype.register_fn(types, lean)
            done.append((multitype, types, registered))
        yield
    finally:
        for multitype, types, registered in reversed(done):
            multitype.register_fn(types, registered)


def _compile_hook(original):
    """``GraphExecutor_.compile`` (and ``JitExecutor_.compile``) with :func:`graph_semantics` around it while
    :func:`graph_mode` is active. MindSpore calls it only when a graph is to be built: on a Cell's first call and on
    every recompile (a new input shape, dtype or other signature: ``_CellGraphExecutor.compile`` returns early, without
    calling it, when its phase, keyed by ``generate_arguments_key`` of the inputs, already has a graph), also when the
    compile cache (``adapter/compile_cache.py``, whose gate calls the executor's ``compile``) loads the graph from a
    file. The parser, its resolver and everything the compiler calls in Python run inside it, so every graph built
    under :func:`graph_mode` sees the swaps, and a call that runs a graph built before swaps nothing (module docstring,
    "When")."""
    def compile(self, *args, **kwargs):
        if not _armed or _active:
            return original(self, *args, **kwargs)
        with graph_semantics(), _stream_states():
            return original(self, *args, **kwargs)
    compile.__wrapped__ = original
    compile.__doc__ = original.__doc__
    return compile


def _install_compile_hooks() -> None:
    """Hook every executor class's ``compile`` (:func:`_compile_hook`), once; again when something put the original
    back (``patching.restore`` in tests): :func:`graph_mode` checks before each use, so no graph compiles under it
    without :func:`graph_semantics`."""
    from adapter import backend
    _hooked.clear()
    with patching.applying("graph_semantics:compile_hook"):
        for cls in backend.graph_executor_classes():
            current = cls.__dict__["compile"]
            original = getattr(current, "__wrapped__", current) if getattr(current, "_adapter_compile_hook", False) \
                else current
            hook = _compile_hook(original)
            hook._adapter_compile_hook = True
            patching.patch_attr(cls, "compile", hook)
            _hooked.append((cls, hook))
    if not _hooked:
        raise RuntimeError("adapter/graph_semantics.py: this MindSpore has no GraphExecutor_.compile to hook; graphs "
                           "would compile without graph semantics")


def _set_mode(mode: int, syntax_level: int) -> None:
    """``mindspore.set_context(mode=mode, jit_syntax_level=syntax_level)``, through the two setters ``set_context``
    itself calls for these keys (``context.py``: ``ctx.setters[key](ctx, value)``), without its per-call argument
    validation (~30 us of the ~45 us a pair of switches costs, measured; once per compiled step call); the public
    function where this MindSpore has no such setters."""
    import mindspore as ms
    from adapter import backend
    ctx, setters = backend.context_setters()
    if "mode" in setters and "jit_syntax_level" in setters:
        setters["mode"](ctx, mode)
        setters["jit_syntax_level"](ctx, syntax_level)
    else:
        ms.set_context(mode=mode, jit_syntax_level=syntax_level)


@contextlib.contextmanager
def graph_mode():
    """Compile and run Cells in GRAPH_MODE with STRICT syntax; each graph compiled inside gets
    :func:`graph_semantics` (functional in-place helpers, lean forwards, ...; module docstring) for the duration of
    its compile (:func:`_compile_hook`); running an already compiled graph swaps nothing."""
    global _armed
    import mindspore as ms
    if not _hooked or _hooked[0][0].__dict__.get("compile") is not _hooked[0][1]:
        _install_compile_hooks()
    _set_mode(ms.GRAPH_MODE, ms.STRICT)
    _armed += 1
    try:
        yield
    finally:
        _armed -= 1
        _set_mode(ms.PYNATIVE_MODE, ms.LAX)


def _tensors(value, tensor_cls, out: list) -> None:
    if isinstance(value, (tuple, list)):
        for v in value:
            _tensors(v, tensor_cls, out)
    elif isinstance(value, tensor_cls):
        out.append(value)


def _replace(value, copies: dict):
    if isinstance(value, tuple):
        return tuple(_replace(v, copies) for v in value)
    if isinstance(value, list):
        return [_replace(v, copies) for v in value]
    return copies.get(id(value), value)


def separate_shared_outputs(outputs):
    """``outputs`` (a tensor or nested tuples/lists of them, a graph's result) with every tensor that shares its
    device buffer with another output replaced by a copy (module docstring: MindSpore frees a shared buffer when
    the first sharer dies). Parameters are left as they are. Costs one ``data_ptr`` read per output; a copy only
    for shared ones."""
    import mindspore
    from adapter import backend
    tensors: list = []
    _tensors(outputs, mindspore.Tensor, tensors)
    by_ptr: dict = {}
    for t in tensors:
        if isinstance(t, mindspore.Parameter) or t.size == 0:
            continue
        by_ptr.setdefault(backend.data_ptr(t), {})[id(t)] = t
    copies = {}
    for group in by_ptr.values():
        if len(group) > 1:
            for key, t in group.items():
                copies[key] = t.copy()
    return _replace(outputs, copies) if copies else outputs


def run_cell(cell, *args):
    """``cell(*args)`` compiled and run under :func:`graph_mode`; its outputs as :func:`separate_shared_outputs`
    returns them. Raises what MindSpore raises when the Cell does not compile or fails to run."""
    with graph_mode():
        out = cell(*args)
    return separate_shared_outputs(out)
