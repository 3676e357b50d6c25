"""Graph build, a phase of the compiled step (``adapter/compiled_step.py``): a step site's ``forward_fn`` made from
the region's source, and the step Cell compiled from it (:class:`_StepCell`: ``value_and_grad(forward_fn)``, with
the optimizer's update, ``clip_grad_norm_`` and GradScaler's unscaling fused in when the script allows).

:class:`StepBuilder` holds one site's build: the generated source (:meth:`StepBuilder.forward_fn`: each region
statement on its line in the user's file, so errors name the user's lines), the checks that rule a region out before
compiling (:meth:`StepBuilder.regions`, :meth:`StepBuilder.python_objects`: they raise
:class:`adapter.fallback.Uncompilable`), whether the update is fused (:meth:`StepBuilder.can_fuse`,
:meth:`StepBuilder.after_reads_weights`, :meth:`StepBuilder.clip_spec`), and the step Cells, keyed per binding
(:meth:`StepBuilder.build`).
"""
from __future__ import annotations

import ast
import contextlib
import copy
import hashlib
import math
import os
import sys
import tempfile
import types
from typing import Dict, List, Optional

import mindspore as ms

from adapter import amp_state, backend, diagnostics, grad_sync, hooks, param_names, tape, torchfile
from adapter.fallback import Uncompilable
from adapter.graph_compile import release_eager_caches
from adapter.step_binding import _Binding, _is_number, _is_tensor_arg, _structure
from adapter.step_rewrite import StepSite
from adapter.userframe import display_path

_GEN_DIR = os.path.join(tempfile.gettempdir(), "mindtorch_adapter_steps")
_MADE_BY = "__adapter_made_by_"  # forward_fn's names for a recomputed input's producing call (_recomputations)
# generated forward_fn file -> the user's file (same line numbers); the dict is diagnostics' (short_reason reads it)
GENERATED_TO_USER: Dict[str, str] = diagnostics.GENERATED_TO_USER
_log = diagnostics.log  # "run.py: message" on stderr


def _graph_input(value):
    """A step input as the graph takes it: a list of tensors (a DataLoader batch ``[images, labels]``) as a tuple.
    MindSpore compiles a list argument as a constant, and a tuple one too unless the Cell broadens tuples
    (``_StepCell.enable_tuple_broaden``): dcgan's ``data`` recompiled its step on every call (0.9 s per step instead
    of 0.04 s). Indexing reads the same."""
    if isinstance(value, list):
        return tuple(_graph_input(v) for v in value)
    return value

class _StepCell(ms.nn.Cell):
    """``value_and_grad(forward_fn)`` (+ ``optimizer(grads)``) as one Cell, compiled and run in GRAPH_MODE.

    Measured (ResNet18, batch 32, CPU): the same graph costs 0.50 s/step as ``mindspore.jit`` inside PyNative and
    0.25 s/step as a Cell run in GRAPH_MODE, equal to a hand-written TrainOneStepCell; hence
    :func:`adapter.graph_semantics.graph_mode`.
    """

    def __init__(self, forward_fn, weights, optimizer, has_aux: bool, clip=None, scaled: bool = False,
                 reducer=None):
        super().__init__(auto_prefix=False)
        # tuple inputs (a DataLoader batch `data`, indexed in the region) are graph inputs, not constants: without it
        # MindSpore keyed every call's tuple anew and recompiled the step each time (dcgan: 0.9 s vs 0.04 s a step)
        self.enable_tuple_broaden = True
        # reducer (DistributedDataParallel): averages the grads of DDP parameters over the workers, in the graph
        # (adapter/collectives.py GradAllReduce, from adapter/grad_sync.py); None without DDP or under no_sync()
        self.reducer = reducer
        self.reduce = reducer is not None
        # adapter/compile_cache.py loads this Cell's graph only while step_cache_check.verify_loaded checks it; only its
        # first compile goes through the cache (cache_once), and none when cache_exempt says why it cannot be checked
        self.loadable = False
        self.cache_once = True
        self.cache_exempt: Optional[str] = None
        # scaled (a GradScaler is on): the first input is the loss scale; gradients are those of loss * scale, and
        # the loss itself comes back as the first aux output (patches/amp.py)
        self.scaled = scaled
        self.grad_sizes = tuple(int(math.prod(w.shape)) for w in weights)
        self.grad_shapes = tuple(tuple(w.shape) for w in weights)
        fn = _scaled_forward(forward_fn) if scaled else forward_fn
        self.grad_fn = ms.value_and_grad(fn, None, ms.ParameterTuple(param_names.unique(weights)),
                                         has_aux=has_aux or scaled)
        self.optimizer = optimizer
        self.fused = optimizer is not None
        self.identity = ms.ops.Identity()
        # optimizer(grads) pairs grads[i] with optimizer.parameters[i]: the weights (first-call order of the modules,
        # adapter/tape.py) in the optimizer's order (model.parameters(): registration order), when they differ
        self.opt_index = _optimizer_order(weights, optimizer) if self.fused else None
        self.reorder = self.opt_index is not None
        # clip: (mask over weights, max_norm, norm_type) of a fused clip_grad_norm_, or None
        self.clip = clip is not None
        self.clip_mask, self.max_norm, self.inf_norm = (clip[0], clip[1], clip[2] == float("inf")) if clip \
            else ((), 0.0, False)

    def _check_construct_args(self, *args):
        """MindSpore's ``Cell.__call__`` checks the argument count against ``inspect.signature(self.construct)`` on
        every graph-mode call (~0.1 ms) and returns at once for a ``*args`` construct like this one: the same
        verdict, without the signature."""
        return

    def construct(self, *args):
        values, grads = self.grad_fn(*args)
        if isinstance(values, tuple):
            # The region's outputs are the script's values from before the update (PyTorch). Each tensor one is
            # copied (Identity): MindSpore simplifies `w * 1.0` (and views of w) to the Parameter's Load, and that
            # output would share the Parameter's buffer, updated in place by the optimizer below or by the
            # script's own step() (tests/test_output_alias.py). A view of w is a copy too, as in eager MindTorch
            # (its reshape/view/t/slices share no storage); a name bound to w itself gets w
            # (compiled_step: SiteRuntime._handed_back)
            copied = values[:2] if self.scaled else values[:1]
            for v in values[len(copied):]:
                copied = copied + ((self.identity(v),) if isinstance(v, ms.Tensor) else (v,))
            values = copied
        if self.reduce:
            grads = self.reducer(grads)
        total_norm = ms.ops.zeros((), ms.float32)
        found_inf = ms.ops.zeros((), ms.bool_)
        if self.scaled and self.fused:  # GradScaler.unscale_ + the inf/NaN check of GradScaler.step, in the graph
            grads, found_inf = self.unscale(grads, ms.ops.reciprocal(args[0]))
        if self.clip:
            grads, total_norm = self.clip_grad_norm(grads)
        if self.fused:
            opt_grads = grads
            if self.reorder:
                opt_grads = ()
                for i in self.opt_index:
                    opt_grads = opt_grads + (grads[i],)
            # the update runs after the outputs are computed: the auto-monad orders the optimizer's Assign after
            # the Loads of the Parameters only, and the CPU backend's Load is a no-op, so a kernel reading w for an
            # output alone (`p = w.pow(2)`) could run after the Assign and see the new w (tests/test_output_alias.py)
            opt_grads = ms.ops.depend(opt_grads, values)
            if self.scaled:
                if not found_inf:  # GradScaler.step skips the update (weights and optimizer state) on inf/NaN
                    self.optimizer(opt_grads)
            else:
                self.optimizer(opt_grads)
        return values, grads, total_norm, found_inf

    def unscale(self, grads, inv_scale):
        """``grads * inv_scale`` and whether any is inf/NaN (``torch._amp_foreach_non_finite_check_and_unscale_``),
        over one flat vector: a few kernels instead of two per parameter. Float32 grads (PyTorch refuses to unscale
        float16 ones)."""
        flat = ()
        for g in grads:
            flat = flat + (g.reshape(-1),)
        flat = ms.ops.concat(flat) * inv_scale
        found_inf = ms.ops.logical_not(ms.ops.isfinite(flat).all())
        parts = ms.ops.split(flat, self.grad_sizes)
        unscaled = ()
        for i in range(len(grads)):
            unscaled = unscaled + (parts[i].reshape(self.grad_shapes[i]),)
        return unscaled, found_inf

    def clip_grad_norm(self, grads):
        """``torch.nn.utils.clip_grad_norm_`` in the graph (formula: ``patches/clip_grad.py``)."""
        norms = ()
        for i in range(len(grads)):
            if self.clip_mask[i]:
                g = grads[i]
                if self.inf_norm:
                    norms = norms + (ms.ops.abs(g).max(),)
                else:
                    norms = norms + (ms.ops.sqrt((g * g).sum()),)
        stacked = ms.ops.stack(norms)
        total = stacked.max() if self.inf_norm else ms.ops.sqrt((stacked * stacked).sum())
        coef = ms.ops.minimum(self.max_norm / (total + 1e-6), 1.0)
        clipped = ()
        for i in range(len(grads)):
            if self.clip_mask[i]:
                clipped = clipped + (grads[i] * coef.astype(grads[i].dtype),)
            else:
                clipped = clipped + (grads[i],)
        return clipped, total


# tensor attributes that make a new tensor (PyTorch: a view): a chain through one is not the object it starts from
def _optimizer_order(weights, optimizer) -> Optional[tuple]:
    """Index into ``weights`` of each of ``optimizer.parameters``, or None when they are the same sequence.

    Raises:
        Uncompilable: an optimizer parameter is not among ``weights`` (:meth:`StepBuilder.can_fuse` rules that out).
    """
    index = {id(w): i for i, w in enumerate(weights)}
    params = list(optimizer.parameters)
    if len(params) == len(weights) and all(index.get(id(p)) == i for i, p in enumerate(params)):
        return None
    try:
        return tuple(index[id(p)] for p in params)
    except KeyError:
        raise Uncompilable("the optimizer updates a parameter the step's forward does not use",
                           "optimizer-parameter-outside-step") from None


def _scaled_forward(forward_fn):
    """``(scale, *args) -> (loss * scale, loss, *outputs)``: what ``scaler.scale(loss)`` differentiates."""
    def scaled_forward(scale, *args):
        out = forward_fn(*args)
        return (out[0] * scale.astype(out[0].dtype),) + out

    return scaled_forward


class _DirectForward(ast.NodeTransformer):
    """``<expr>.forward(args)`` -> ``__adapter_forward__(<expr>, args)`` in the eager forward_fn: a model whose
    ``forward`` is called directly (pytorch/examples mnist_forward_forward's ``self.forward(x_pos)``) takes part in
    the recording as if it had been called."""
    FN = "__adapter_forward__"

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "forward":
            return ast.copy_location(ast.Call(ast.Name(self.FN, ast.Load()), [node.func.value] + node.args,
                                              node.keywords), node)
        return node


def module_forward(obj, *args, **kwargs):
    """``obj.forward(*args, **kwargs)``; when ``obj`` is a module, the eager bridge counts it as called."""
    from mindtorch.torch.nn.modules.module import Module
    if isinstance(obj, Module):
        tape.on_module_call(obj)
    return obj.forward(*args, **kwargs)


def amp_outputs_to_float32(values):
    """An autocast block's assigned values, float16/bfloat16 tensors cast to float32 (``patches/amp.py``); graph
    code: the dtype tests are resolved at compile time."""
    out = ()
    for v in values:
        if isinstance(v, ms.Tensor) and (v.dtype == ms.float16 or v.dtype == ms.bfloat16):
            out = out + (v.astype(ms.float32),)
        else:
            out = out + (v,)
    return out


def _hyperparameters(optimizer) -> tuple:
    """The optimizer's per-group hyper-parameters other than the lr (``momentum``, ``betas``, ``weight_decay``,
    ``eps``...): Python values that MindSpore's optimizers read in ``construct``, so a compiled update holds them as
    constants; part of the key of a fused step's graph. (The lr is a Parameter, a graph input: patches/optimizer.py.)
    CyclicLR / OneCycleLR (``cycle_momentum=True``) write ``momentum`` or ``betas`` every step."""
    out = []
    for group in optimizer.param_groups:
        items = []
        for key, value in dict.items(group):
            if key in ("params", "lr", "initial_lr"):
                continue
            if isinstance(value, (bool, int, float, str, type(None))) or (
                    isinstance(value, tuple) and all(isinstance(v, (int, float)) for v in value)):
                items.append((key, value))
        out.append(tuple(items))
    return tuple(out)


def _has_graph_update(optimizer) -> bool:
    """Whether ``optimizer``'s class has a graph form of its update: a ``construct`` of its own or of a MindTorch
    optimizer, not only the abstract one of MindSpore's base class (it raises NotImplementedError when compiled). A
    ``torch.optim.Optimizer`` subclass that writes only ``step()`` (timm's Lamb) has none: its step is not fused."""
    from mindspore.experimental.optim import Optimizer as abstract
    owner = next((k for k in type(optimizer).__mro__ if "construct" in vars(k)), None)
    return owner is not None and owner is not abstract


# distinct hyper-parameter sets (_hyperparameters) a fused site compiles for before it runs eagerly
_MAX_HYPERPARAMETER_SETS = 3


class StepBuilder:
    """One step site's graph build: its ``forward_fn`` source and module, and its step Cells (per binding, in the
    binding's ``graphs``).

    Attributes:
        site, user_globals: the site and the namespace of the module it is in.
        hyperparameter_sets: ``id(optimizer)`` -> the :func:`_hyperparameters` compiled for.
        generated_path, generated_source: the last generated ``forward_fn`` file and its source (blocks included).
    """

    def __init__(self, site: StepSite, user_globals: dict):
        self.site = site
        self.user_globals = user_globals
        self.hyperparameter_sets: Dict[int, set] = {}
        self.generated_path: Optional[str] = None
        self.generated_source: Optional[str] = None
        self._calls_checked = False  # python_objects found no torch.distributions call in the region
        self._after_logged = False

    @property
    def where(self) -> str:
        return f"{display_path(self.site.filename)}:{self.site.lineno}"

    @property
    def returned(self) -> List[str]:
        """The region's names that forward_fn returns after the loss: all but the loss itself when the loss is one
        of them (``loss = ...; loss.backward()``). A graph that returns one node twice gives two tensors sharing one
        buffer, which MindSpore frees when the first of them dies (``adapter/graph_semantics.py``, ``run_cell``)."""
        loss = self.site.loss
        return [n for n in self.site.outputs if not (isinstance(loss, ast.Name) and n == loss.id)]

    # -- code generation ----------------------------------------------------------------------------------------
    def source(self, tensor_names: List[str], graph: bool = False, prologue=()):
        """forward_fn's source, each region statement on its line number in the user's file; and, for ``graph``,
        the source of one function per ``with`` block (autocast regions), each in its own file at the user's lines,
        called from forward_fn as ``(a, b,) = amp_outputs_to_float32(__adapter_amp_block_I(x, ...))``.
        ``prologue``: statements run first, on the line before the region's first (``SiteRuntime._recomputations``,
        adapter/compiled_step.py).
        Returns ``(source, [(block name, block source), ...])``."""
        from adapter.step_rewrite import _reads, _writes
        site = self.site
        returns = ast.unparse(ast.Tuple([site.loss] + [ast.Name(n, ast.Load()) for n in self.returned], ast.Load()))
        first = site.region[0].lineno
        lines = [f"# forward_fn of {site.filename}:{site.lineno} (generated by adapter/compiled_step.py)"]
        def_line = max(first - (2 if prologue else 1), 2)
        lines += [""] * (def_line - 1 - len(lines))
        lines.append(f"def forward_fn({', '.join(tensor_names)}):")
        if prologue:
            lines.append("    " + "; ".join(prologue))
        local_names = set(tensor_names)
        blocks = []

        def place(target: List[str], lineno: int, text: List[str], indent: str = "    ") -> None:
            target += [""] * max(0, lineno - 1 - len(target))
            target += [indent + t for t in text]

        for stmt in site.region:
            if not graph:  # `layer.forward(x)` called directly counts as a module call (its parameters get grads)
                stmt = _DirectForward().visit(copy.deepcopy(stmt))
            if graph and isinstance(stmt, ast.With):
                name = f"__adapter_amp_block_{len(blocks)}"
                body_reads = _reads(ast.With(items=[], body=stmt.body))
                params = [n for n in sorted(body_reads) if n in local_names]
                outs = sorted(set().union(*(_writes(b) for b in stmt.body)))
                block = [f"# autocast block of {site.filename}:{stmt.lineno} (generated by adapter/compiled_step.py)"]
                place(block, stmt.lineno, [f"def {name}({', '.join(params)}):"], "")
                for inner in stmt.body:
                    place(block, inner.lineno, ast.unparse(inner).splitlines())
                block.append(f"    return ({''.join(o + ', ' for o in outs)})")
                blocks.append((name, "\n".join(block) + "\n"))
                call = f"{name}({', '.join(params)})"
                place(lines, stmt.lineno, [f"({''.join(o + ', ' for o in outs)}) = amp_outputs_to_float32({call})"
                                           if outs else call])
                local_names |= set(outs)
                continue
            place(lines, stmt.lineno, ast.unparse(stmt).splitlines())
            local_names |= _writes(stmt)
        lines.append(f"    return {returns}")
        return "\n".join(lines) + "\n", blocks

    def write(self, source: str, suffix: str = "") -> str:
        digest = hashlib.sha1(source.encode()).hexdigest()[:12]
        os.makedirs(_GEN_DIR, exist_ok=True)
        stem = os.path.splitext(os.path.basename(self.site.filename))[0]
        path = os.path.join(_GEN_DIR, f"{stem}_site{self.site.key}_{digest}{suffix}.py")
        if not os.path.exists(path):  # data-parallel workers may write the same file at once: atomically
            with torchfile.atomic_write(path) as f:
                f.write(source.encode())
        GENERATED_TO_USER[path] = self.site.filename
        return path

    def forward_fn(self, env: dict, tensor_names: List[str], graph: bool = False, regions=(), prologue=()):
        """forward_fn from :meth:`_source`, in a fresh module whose globals are the user's module's plus the
        non-tensor free names; ``regions`` (one ``(enabled, dtype)`` per ``with`` block, for ``graph``) gives each
        enabled autocast block MindSpore's AMP strategy (its ``amp_strategy`` attribute, read by the compiler)."""
        source, blocks = self.source(tensor_names, graph, prologue)
        path = self.write(source)
        # MindSpore's parser resolves a function's globals through sys.modules[fn.__module__]: a real module
        module = types.ModuleType(f"adapter_generated.{os.path.splitext(os.path.basename(path))[0]}")
        namespace = module.__dict__
        namespace.update({k: v for k, v in self.user_globals.items() if not k.startswith("__")})
        namespace.update({k: v for k, v in env.items() if k not in tensor_names})
        namespace["__file__"] = path
        namespace["amp_outputs_to_float32"] = amp_outputs_to_float32
        namespace[_DirectForward.FN] = module_forward
        sys.modules[module.__name__] = module
        for i, (name, block_source) in enumerate(blocks):
            exec(compile(block_source, self.write(block_source, f"_block{i}"), "exec"), namespace)
            enabled, dtype = regions[i]
            if enabled:
                create_amp_strategy = backend.internal("create_amp_strategy")
                args = amp_state.strategy_args(dtype, graph=True)
                if args is not None:
                    namespace[name].amp_strategy = create_amp_strategy(*args)
                    # the AMP pass deepens MindSpore's call simulation: ResNet50 exceeds the default 1000
                    # ("Exceed function call depth limit"); 4000 compiles it (measured)
                    ms.set_recursion_limit(4000)
        exec(compile(source, path, "exec"), namespace)
        self.generated_path = path
        self.generated_source = source + "".join(b for _, b in blocks)
        return namespace["forward_fn"], namespace

    def regions(self, env: dict):
        """``(enabled, dtype)`` of each ``with`` block of the region, from its context evaluated now.

        Raises:
            Uncompilable: a context that is neither an autocast nor a no-op (``nullcontext()``, ``suppress()``).
        """
        if not any(isinstance(stmt, ast.With) for stmt in self.site.region):
            return ()  # no context to evaluate: spares a copy of the user's globals per call
        regions = []
        namespace = {**self.user_globals, **env}
        for stmt in self.site.region:
            if not isinstance(stmt, ast.With):
                continue
            region = (False, None)
            for item in stmt.items:
                expr = ast.Expression(item.context_expr)
                ctx = eval(compile(expr, self.site.filename, "eval"), namespace)  # noqa: S307 (the user's code)
                if isinstance(ctx, amp_state.AutocastRegion):
                    region = ctx.region()
                elif not isinstance(ctx, (contextlib.nullcontext, contextlib.suppress)):
                    raise Uncompilable(f"`with {ast.unparse(item.context_expr)}:` in the step (only autocast and "
                                       "no-op contexts compile)", "unsupported-context-manager",
                                       f"{display_path(self.site.filename)}:{stmt.lineno}")
            regions.append((region[0], region[1] if region[0] else None))
        return tuple(regions)

    def python_objects(self, env: dict) -> None:
        """Rule out a region that builds or uses ``torch.distributions`` objects (``patches/distributions.py``).

        A distribution is a Python object whose constructor runs Python-side logic (argument checks, broadcasting,
        lazy properties); MindSpore's graph compiler (STRICT syntax) cannot construct it and stops with "the inputs
        should be constant, but found variable" at that line, and a distribution made before the region would be
        baked into the graph as constants. Checking the region's calls and inputs up front names the cause and
        spares the failed compilation.

        Raises:
            Uncompilable: a call in the region whose callee (a name or attribute chain, evaluated without calling it)
                belongs to ``torch.distributions`` (a distribution class, ``kl_divergence``), or an input of the
                region that is a distribution object.
        """
        package = "mindtorch.torch.distributions"
        for name in self.site.free_names:
            value = env.get(name)
            if type(value).__module__.startswith(package):
                raise Uncompilable(f"`{name}` is a torch.distributions.{type(value).__name__} object (made before the "
                                   "step), which graph mode cannot take as an input", "torch-distributions")
        if self._calls_checked:
            return
        namespace = {**self.user_globals, **env}  # a copy of the user's globals: built only for the first check
        for stmt in self.site.region:
            for node in ast.walk(stmt):
                if not isinstance(node, ast.Call):
                    continue
                callee = node.func
                chain = callee
                while isinstance(chain, ast.Attribute):
                    chain = chain.value
                if not isinstance(chain, ast.Name) or chain.id not in namespace:
                    continue
                try:
                    target = eval(compile(ast.Expression(callee), self.site.filename, "eval"),  # noqa: S307
                                  namespace)  # a name or attribute chain of the user's: no call
                except Exception:  # noqa: BLE001 -- not resolvable now (e.g. an attribute set later): no verdict
                    continue
                owner = target if isinstance(target, type) else getattr(target, "__self__", None)
                module = getattr(target, "__module__", None) or ""
                if module.startswith(package) or type(owner).__module__.startswith(package):
                    raise Uncompilable(
                        f"{display_path(self.site.filename)}:{node.lineno}: `{ast.unparse(callee)}(...)` builds or "
                        "uses a torch.distributions object (a Python object with Python-side checks), which graph "
                        "mode cannot construct; same values eagerly", "torch-distributions")
        self._calls_checked = True  # the region's code does not change: its calls are checked once per site

    def clip_spec(self, clip_args, weights):
        """(mask over ``weights``, max_norm, norm_type) for a fusable clip, or None (unsupported norm type)."""
        params, max_norm, *rest = clip_args()
        norm_type = float(rest[0]) if rest else 2.0
        if norm_type not in (2.0, float("inf")):
            return None
        from mindtorch.torch.tensor import Tensor
        params = [params] if isinstance(params, Tensor) else list(params)
        ids = {id(p) for p in params}
        return tuple(id(w) in ids for w in weights), float(max_norm), norm_type

    def build(self, env: dict, binding: _Binding, optimizer, fused: bool, clip=None, scaled: bool = False,
              regions=(), reduce_mask=None, prologue=()):
        """The step Cell of ``binding`` for this call's inputs and options, built once per key (fused or not, the
        optimizer and its hyper-parameters other than the lr, the clip, the scaler, the autocast regions, the DDP
        mask, the tensor inputs' names, the other inputs' identities and the numbers' values), and the names of
        its tensor inputs, in order.

        Raises:
            Uncompilable: the optimizer's hyper-parameters changed more than ``_MAX_HYPERPARAMETER_SETS`` times, or
                the non-tensor inputs gave 8 keys already.
        """
        assigned = set(self.site.outputs)  # a free name the region also assigns must be a parameter of forward_fn
        tensor_names = [n for n in self.site.free_names if n in env and (_is_tensor_arg(env[n]) or n in assigned)]
        tensor_names += [n for n in env if n.startswith(_MADE_BY) and _is_tensor_arg(env[n])]
        # the optimizer a fused graph updates is part of the key: a script that replaces its optimizer (a new
        # `optimizer = SGD(model.parameters(), lr=...)` for a second phase) must not keep updating with the old one;
        # so are its hyper-parameters other than the lr, which a compiled update holds as constants
        if fused and hooks.get(optimizer, "before_update") is not None:
            hooks.get(optimizer, "before_update")()  # patches/sgd.py: slots of a momentum switched on, before compiling
        hyper = _hyperparameters(optimizer) if fused else None
        if fused:
            seen = self.hyperparameter_sets.setdefault(id(optimizer), set())
            seen.add(hyper)
            if len(seen) > _MAX_HYPERPARAMETER_SETS:
                changed = sorted({k for i, group in enumerate(hyper) for k, _ in group
                                  if len({dict(h[i]).get(k) for h in seen if i < len(h)}) > 1})
                raise Uncompilable(f"optimizer hyper-parameter(s) {'/'.join(changed) or '?'} changed between steps "
                                   "(a scheduler with cycle_momentum=True?): a compiled update holds them as "
                                   "constants", "optimizer-hyperparameters-change")
        # an optimizer's own graph variant (patches/adam_steps.py: per-parameter step counts) compiles anew
        variant = hooks.get(optimizer, "graph_variant") if fused else None
        key = (fused, id(optimizer) if fused else None, variant, clip, scaled, hyper,
               tuple((e, str(d)) for e, d in regions), reduce_mask, tuple(tensor_names),
               tuple((n, id(v)) for n, v in env.items() if n not in tensor_names and not _is_number(v)),
               tuple((n, type(v), v) for n, v in env.items() if _is_number(v)))
        graphs = binding.graphs
        fn = graphs.get(key)
        if fn is None:
            if len(graphs) >= 8:
                raise Uncompilable("its non-tensor inputs (Python numbers or objects) change every step; "
                                   "pass them as tensors to compile it", "non-tensor-inputs-change")
            release_eager_caches()  # the reference step's kernels: not run again once the step runs compiled
            forward_fn, _ = self.forward_fn(env, tensor_names, graph=True, regions=regions, prologue=prologue)
            reducer = grad_sync.graph_reducer(binding.weights, reduce_mask) if reduce_mask else None
            fn = _StepCell(forward_fn, binding.weights, optimizer if fused else None, bool(self.returned), clip,
                           scaled, reducer)
            # what shapes this graph beyond its Cell's parameters and inputs (adapter/compile_cache.py signature)
            fn.cache_signature = repr((self.generated_source,
                                       [(w.name, tuple(w.shape), str(w.dtype)) for w in binding.weights],
                                       type(optimizer).__qualname__ if fused else None, variant, clip, scaled, hyper,
                                       tuple((e, str(d)) for e, d in regions), reduce_mask, tuple(tensor_names),
                                       key[-1], self.site.key))
            if ms.get_context("enable_compile_cache"):
                # A graph loaded from MindSpore's compile cache writes back only the Parameters its Cell owns
                # (docs/compile_cache_bug/repro.py): own the BN statistics too, so they keep moving.
                fn.buffers = ms.ParameterTuple(param_names.unique(tape.buffers(binding.modules)))
            graphs[key] = fn
        return fn, tensor_names

    def can_fuse(self, optimizer, weights) -> bool:
        """Whether the update can run in the graph: a MindSpore optimizer with a graph form of its update, updating
        only parameters of ``weights``, none of which holds a ``.grad`` (no accumulation)."""
        if optimizer is None or not isinstance(optimizer, backend.internal("Optimizer")):
            return False
        if not _has_graph_update(optimizer):
            return False  # a torch-style subclass with only step() (timm's Lamb): it steps eagerly, after the grads
        weight_ids = {id(w) for w in weights}
        if not all(id(p) in weight_ids for p in optimizer.parameters):
            return False  # a parameter without a grad must be skipped by step(): eager step does that
        return all(w.grad is None for w in weights)

    def after_reads_weights(self, after, weights) -> bool:
        """Whether the statements that the rewrite moved after the site call (``adapter/step_rewrite.py``,
        ``StepSite.after_reads``) read one of the binding's weights: directly (``q = w * 1.0``) or through a module
        or object that reaches it (``h = model(x)``, :func:`_structure`). In the script they run before
        ``optimizer.step()``, so a fused step (which updates the weights in the site call) would show them the
        updated weights: such a step is not fused (the optimizer steps eagerly, after them). A thunk that fails
        (a name not defined yet) counts as reading them."""
        if after is None:
            return False
        try:
            values = after()
        except Exception:
            return True
        ids = {id(w) for w in weights}
        hit = any(id(v) in ids for v in values) or any(id(v) in ids for v in _structure(values))
        if hit and not self._after_logged:
            self._after_logged = True
            if os.environ.get("ADAPTER_DEBUG"):
                _log(f"the step at {self.where} is not fused: statements of the region that run after it read "
                     f"the weights ({', '.join(self.site.after_reads)}), as in the script before step()")
        return hit

