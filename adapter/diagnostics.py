"""Why a training step or ``no_grad`` forward runs in PyNative instead of compiled: stable fallback *kinds*.

Modelled on ``torch._dynamo``'s graph-break registry (``unimplemented(gb_type, context, explanation, hints)``) and
its ``explain()``, which returns data (``ExplainOutput``), not text. Three places speak of fallbacks, and all three
use the kinds registered here (:data:`KINDS`):

* the runtime (``adapter/compiled_step.py``, ``adapter/compiled_forward.py``): every decision that a site or forward
  runs eagerly goes through one call, ``adapter.fallback.run_eagerly``, which prints its one line when the user is
  told at run time, and records ``(kind, reason, user file:line)`` with :func:`record`; the kind comes from the
  decider, or from the exception (:func:`classify`: a ``fallback_kind`` attribute, else MindSpore's message);
* ``--explain`` / ``--explain-json [PATH]`` (``app/launcher.py``): :class:`ExplainOutput`, built from the
  runtime's state (``adapter.compiled_step.explain_output``), printed as text (:meth:`ExplainOutput.format`) or
  written as JSON (:meth:`ExplainOutput.to_json`; schema: ``docs/explain_schema.json``);
* ``--report`` (``app/tools/migration_report.py``): its graph-mode findings that predict a fallback carry the kind
  they predict (``Finding.kind``), and say it in their note.

``docs/fallback_kinds.md`` is generated from :data:`KINDS` (:func:`markdown`; ``python -m adapter.diagnostics``);
``tests/test_diagnostics.py`` checks that the committed file equals the generated one.

Layering: this module imports only the standard library, and, lazily in :func:`short_reason`, ``adapter/ms_errors``
(itself standard library + ``adapter/userframe``, both without adapter imports beyond that): it sits below
``compiled_step`` and ``compiled_forward``, which both use it (``short_reason`` and :func:`log` used to live in
``compiled_step``, which made ``compiled_forward`` import it).
"""
from __future__ import annotations

import dataclasses
import json
import re
import sys
from typing import Dict, List, Optional, Tuple

SCHEMA_ID = "mindtorch-adapter/explain"
SCHEMA_VERSION = 1

#: generated ``forward_fn`` file of a compiled step -> the user's file it was made from (same line numbers); filled
#: by ``adapter/step_graph.py`` (``adapter/compiled_step.py`` re-exports it), read by :func:`short_reason`
GENERATED_TO_USER: Dict[str, str] = {}


@dataclasses.dataclass(frozen=True)
class FallbackKind:
    """One stable kind of fallback.

    Attributes:
        id: stable identifier (kebab-case), the value of ``kind`` in ``--explain-json`` and ``--report``.
        title: a few words; for the kinds ``--report`` predicts, the first words of its note.
        explanation: what happens and why, on this MindSpore build (2.5.0.dev20250119, graph syntax STRICT).
        hint: what the script's author can do.
        scopes: where it occurs: ``"step"`` (a compiled training step site), ``"forward"`` (a compiled ``no_grad``
            forward).
        decided_by: the code that decides it (for the docs: where to look).
        reported: ``run.py --report`` predicts it from the script's code (``app/tools/migration_report.py``;
            ``tests/test_diagnostics.py`` checks that the two agree).
    """
    id: str
    title: str
    explanation: str
    hint: str
    scopes: Tuple[str, ...]
    decided_by: str
    reported: bool = False


_BOTH = ("step", "forward")
_STEP = ("step",)

_KINDS = [
    # -- MindSpore's graph compiler rejects the code (adapter/ms_errors.py extracts the cause) --------------------
    FallbackKind(
        "host-sync", "reads a tensor's value in Python",
        "`.numpy()`, `.tolist()` or `.asnumpy()` in the step or in a forward it calls: graph mode (STRICT syntax) "
        "cannot hand a tensor's value to Python while the graph runs (MindSpore: \"In JIT strict mode, cannot get "
        "attributes asnumpy\").",
        "Compute with torch ops instead of numpy, or read the value after the step (after backward() and "
        "optimizer.step(), e.g. for logging). `.item()` compiles.",
        _BOTH, "MindSpore's message (classify)", reported=True),
    FallbackKind(
        "inplace-tensor-method", "in-place tensor method",
        "`x.add_(y)` and the like on a plain tensor inside the step or a forward (a `register_buffer` tensor, a "
        "value computed in the step): MindSpore's static graph mode rejects in-place Tensor methods (\"is an "
        "in-place operation ... not supported to use in MindSpore static graph mode\"). Not affected: the same "
        "methods on a Parameter (BatchNorm's `num_batches_tracked.add_(1)`, an `nn.Parameter(..., "
        "requires_grad=False)` buffer: written with `mindspore.ops.assign`), `nn.ReLU(inplace=True)` and in-place "
        "dropout (swapped for their functional forms while compiling; adapter/graph_semantics.py), and a "
        "statement `t.scatter_(...)` / `t.add_(...)` (`_REBOUND_METHODS`) on a name the function binds only to new "
        "tensors (`t = torch.full_like(x, v)`, `t = x.clone()`): rebound to `t = t.scatter(...)` while compiling "
        "(adapter/graph_syntax.py).",
        "Use the out-of-place form: `x = x.add(y)`.",
        _BOTH, "MindSpore's message (classify)", reported=True),
    FallbackKind(
        "python-object-call", "Python class or function called with tensors",
        "The graph calls a Python class or function that MindSpore runs only with constant inputs (a user class "
        "built inside the step from a tensor): \"the inputs should be constant, but found variable\".",
        "Build the object outside the step, or write the computation with torch ops or as an nn.Module.",
        _BOTH, "MindSpore's message (classify; adapter/ms_errors.py rewords it)"),
    FallbackKind(
        "unsupported-python-syntax", "Python construct graph mode does not compile",
        "MindSpore's graph compiler (STRICT syntax) rejects a Python construct in the step or in a forward it "
        "calls: a variable assigned in a `for` loop's body and read after the loop; a lambda MindSpore cannot "
        "locate in its source (\"Parse Lambda Function Fail\", a lambda as a default argument); an attribute "
        "read of a dictionary (a ModuleDict or ParameterDict reached other than through `self.<chain>`); "
        "`inplace=True` left where it cannot be rebound; a ParameterDict's `.items()`/`.values()`/`.keys()`/"
        "`.get()`, iteration or `in` (2.10 compiled them to constants; 2.5-dev: \"local_dict_cnode is null\"). Lambdas inside "
        "calls, `self.<chain>.<key>` / `self.<chain>[key]` reads of ModuleDicts and ParameterDicts and `inplace=True` "
        "on a plain name compile (adapter/graph_syntax.py); other rejected constructs are `compile-error`.",
        "Rewrite the construct at the line the reason names (e.g. define the variable before the loop).",
        _BOTH, "MindSpore's message (classify)"),
    FallbackKind(
        "kernel-failure", "a MindSpore kernel failed to build or run",
        "A MindSpore kernel of the compiled graph could not be built or resized on this device (\"CPU kernel op "
        "[...] resize failed\", \"Kernel build failed\").",
        "Run with --mode pynative to check that the eager step works, and report the op and the line: it is a "
        "MindSpore or adapter limitation, not the script's.",
        _BOTH, "MindSpore's message (classify)"),
    FallbackKind(
        "compile-error", "other graph compile error",
        "MindSpore's graph compiler, or the graph's first run, raised an error that is none of the kinds above "
        "(e.g. \"Type Join Failed\").",
        "The reason gives MindSpore's cause and, when it can, the user's line; ADAPTER_DEBUG=1 prints the whole "
        "traceback. The step still runs, eagerly, with the same values.",
        _BOTH, "the default of classify"),
    # -- the adapter rules the step out before compiling (adapter/step_binding.py, step_graph.py, graph_semantics.py)
    FallbackKind(
        "host-random-draw", "random draw on the host",
        "`np.random.*`, Python's `random.*` or `torch.rand*/randn*/randperm(generator=...)` in the step where the "
        "step cannot split it out: inside a function or method that also calls the model or reads a weight, inside "
        "a module's forward, or inside an expression that also computes on tensors. The graph compiler would run the "
        "draw once, at compile time, and freeze its value into the graph. A draw in its own statement of the step "
        "(`lam = np.random.beta(a, a)`), or in a function, a method or a callable object that computes on data only "
        "(mixup-cifar10's `x, y_a, y_b, lam = mixup_data(x, y, alpha)`, a trainer's `self.mixup(x, y)`, timm's "
        "`x, y = mixup_fn(x, y)`), is not a fallback: it runs on the host every step and enters the graph as an "
        "input (adapter/host_values.py).",
        "Draw in its own statement of the loop (`lam = np.random.beta(a, a)`), or in a function, method or callable "
        "object that mixes the batch before the model call (`x, y_a, y_b, lam = mixup_data(x, y, alpha)`, `x, y = "
        "mixup_fn(x, y)`) and reads no weight: the step compiles with its results as inputs; or draw with "
        "torch.rand/torch.randn without generator= (a new draw at every step inside the graph).",
        _STEP, "graph_semantics.HostRandomDraw, graph_semantics._graph_rand*(generator=)", reported=True),
    FallbackKind(
        "torch-distributions", "torch.distributions object in the step",
        "A `torch.distributions` object is built or used in the step (or passed in): its constructor runs "
        "Python-side checks that graph mode cannot construct, and one made before the step would be frozen into "
        "the graph as constants.",
        "Write the log-probability with torch ops (e.g. Normal's formula), or accept the eager step (same values).",
        _STEP, "step_graph.StepBuilder.python_objects", reported=True),
    FallbackKind(
        "unsupported-context-manager", "`with` block other than autocast or a no-op",
        "A `with` statement in the step whose context is neither `autocast` nor a no-op (`nullcontext()`, "
        "`suppress()`): its enter/exit side effects cannot run inside a graph.",
        "Move the `with` block outside the statements that compute the loss, or use autocast / nullcontext.",
        _STEP, "step_graph.StepBuilder.regions", reported=True),
    FallbackKind(
        "new-objects-every-call", "objects new at every call",
        "The step's non-tensor inputs (a model, a loss module, a trainer) or the modules and parameters they reach "
        "are new at every call (`nn.MSELoss()` built per step): each would need its own reference step and graph.",
        "Create the objects once, outside the loop.",
        _STEP, "step_binding.Bindings.select"),
    FallbackKind(
        "non-tensor-inputs-change", "Python numbers or objects that change every step",
        "A Python object or int the step reads changes at every call (a step counter), or a float the graph cannot "
        "take as an input: a graph holds it as a constant, so each value would compile a new graph. Floats that "
        "change (an lr or warm-up factor computed by hand) are graph inputs instead (adapter/host_values.py).",
        "Pass the changing value as a tensor (`torch.tensor(x)`), or keep it constant.",
        _STEP, "step_graph.StepBuilder.build"),
    FallbackKind(
        "optimizer-hyperparameters-change", "optimizer hyper-parameters other than the lr change",
        "A fused update holds the optimizer's hyper-parameters other than the learning rate (momentum, betas, "
        "weight decay) as constants; they changed between steps more often than the graphs kept for them.",
        "Keep them fixed (OneCycleLR/CyclicLR: cycle_momentum=False); the learning rate may change freely.",
        _STEP, "step_graph.StepBuilder.build"),
    FallbackKind(
        "optimizer-parameter-outside-step", "optimizer updates a parameter the step does not use",
        "A fused update would have to update a parameter that the step's forward does not use (a guard: "
        "StepBuilder.can_fuse normally rules the fusion out first, and the step then compiles without it).",
        "None needed in practice; report it if you see it.",
        _STEP, "step_graph._optimizer_order"),
    FallbackKind(
        "recomputation-chain", "tensor made two steps back",
        "An input made by a model in an earlier step (recomputed inside the graph so that its model gets "
        "gradients, adapter/provenance.py) was itself made from a tensor of a step before that.",
        "`.detach()` the older tensor if its model need not be trained through this step, or compute it inside "
        "the step.",
        _STEP, "compiled_step.SiteRuntime._recomputations"),
    FallbackKind(
        "non-parameter-leaf", "requires_grad tensor that is not a Parameter",
        "The loss depends on a tensor made with requires_grad=True that is not an nn.Parameter: the compiled step "
        "differentiates Parameters only, so its `.grad` would stay empty.",
        "Make it an nn.Parameter of a module (or accept the eager step: its .grad is computed there).",
        _STEP, "compiled_step.SiteRuntime._eager"),
    FallbackKind(
        "custom-grad-scaler", "scaler that is not torch's GradScaler",
        "`scaler.scale(loss).backward()` with a scaler object that is not torch's GradScaler: the compiled step "
        "can only fuse GradScaler's own scaling and unscaling.",
        "Use torch.amp.GradScaler (torch.cuda.amp.GradScaler).",
        _STEP, "compiled_step.SiteRuntime.run"),
    FallbackKind(
        "backward-call-unrecognised", "the call the loss is handed to runs another backward()",
        "A step whose loss is handed to a call of the script's (`_backward(loss)`, timm's `loss_scaler(loss, "
        "optimizer)`: adapter/backward_through.py) compiles when that call's reference step ran exactly one "
        "backward(), of the loss itself or of a GradScaler's `scale(loss)`: the graph computes those gradients and "
        "the call's backward() takes them. This call ran several, or one of another tensor made from the loss "
        "(`(loss * w).backward()`): the step runs eagerly.",
        "Call backward() (or `scaler.scale(loss).backward()`) on the loss the call is given, once.",
        _STEP, "compiled_step.SiteRuntime.through_done"),
    FallbackKind(
        "loss-built-before-step", "loss built from module calls made before the step",
        "When the step's statements start, a recording is already open: the loss is built from module calls made "
        "before them (outside the region: log-probabilities saved over an episode, an in-place call or a loop "
        "between the forward and the loss, or a model called in grad mode outside the step whose output is kept: "
        "`hist.append(model(xv))`, or never read), or from statements the region cannot start at that read a Parameter or "
        "a tensor with requires_grad=True (`y = x * w; show(y)`, `y[:, 0] = v`: the recording opens at the first of "
        "them, else their gradient would be lost); the eager bridge differentiates that recording, and the reason "
        "names the module call or statement that opened it. A call whose outputs are only read for their value (`.item()`, "
        "`float()`, `print`, an `if` test) opens none (adapter/step_rewrite.py).",
        "Compute the forward and the loss in the same block as backward(), with no loop or other call between them; "
        "run a metric or validation forward under torch.no_grad(), or read its output with .item().",
        _STEP, "compiled_step.SiteRuntime._eager_state"),
    FallbackKind(
        "graph-differs", "compiled graph differs from the eager step",
        "The first compiled graph of a step, run on its eager reference step's inputs from that step's starting "
        "state, gave another loss, gradient, BatchNorm statistic or update (the tolerances of "
        "adapter/step_cache_check.py verify_loaded: float32 rounding passes, a different computation does not). "
        "Graph mode computed something else than PyTorch's order of operations, e.g. an in-place write the graph "
        "drops (`F.relu(t, inplace=True)` in a plain function whose caller reads `t` again). The step runs in "
        "PyNative, which follows the script's order. Steps that draw random numbers, scale their loss with "
        "GradScaler, average gradients with DDP, or hold more than 512 MB of state are not checked.",
        "Nothing to change for correctness. To compile it, find the construct (run.py --compare names the first "
        "differing step): write the in-place call out of place (`t = F.relu(t)`).",
        _STEP, "step_cache_check.check_graph"),
    FallbackKind(
        "module-hooks", "forward hooks on a module",
        "A module the forward calls (or a submodule of it) has forward or forward-pre hooks "
        "(`register_forward_hook`, `register_forward_pre_hook`, or global ones from "
        "`torch.nn.modules.module.register_module_forward_hook`): a MindSpore graph calls the submodules' "
        "`construct` without their hooks, so the hooks would silently not run (measured on 2.10: a hook on the "
        "first layer of a compiled no_grad forward ran 0 times in 3 calls; in a compiled training step a hook ran on "
        "the eager first step only, 2 times where PyTorch runs it 8). The step or forward runs in PyNative while a "
        "hook is registered, and compiles again once they are all removed.",
        "Nothing to change for correctness; remove the hooks (handle.remove()) where the forward should compile.",
        ("step", "forward"), "compiled_forward.wants, SiteRuntime.run (step_binding.hooked)"),
    FallbackKind(
        "pynative-mode", "--mode pynative",
        "The steps run in PyNative on purpose: run.py --mode pynative, --detect-anomaly, or the script's "
        "torch.autograd.set_detect_anomaly(True) (anomaly detection checks every module call eagerly, "
        "patches/anomaly.py); --explain says \"--mode pynative\" for all three.",
        "Run without --mode pynative, and turn anomaly detection off once it found the problem.",
        _STEP, "compiled_step.SiteRuntime._eager_state"),
]

#: the registry: id -> kind, in documentation order
KINDS: Dict[str, FallbackKind] = {k.id: k for k in _KINDS}


def get(kind_id: str) -> FallbackKind:
    """The kind ``kind_id``.

    Raises:
        KeyError: ``kind_id`` is not registered (names the known ids).
    """
    try:
        return KINDS[kind_id]
    except KeyError:
        raise KeyError(f"unknown fallback kind {kind_id!r}; known: {', '.join(KINDS)}") from None


# MindSpore's messages (2.5.0.dev20250119; measured with tests/fixtures/fallback_kinds.py, and kernel-failure with
# tests/test_compile_coverage.py's SGD kernel given a wrong-shaped gradient) -> kind; the first match wins
_PATTERNS: List[Tuple[str, "re.Pattern[str]"]] = [
    ("host-sync", re.compile(r"cannot get attributes (asnumpy|numpy|tolist)|has no attribute: '(asnumpy|numpy|tolist)'")),
    ("inplace-tensor-method", re.compile(r"is an in-place operation")),
    ("host-random-draw", re.compile(r"draws PyTorch's numbers on the host|draws on the host")),
    ("python-object-call", re.compile(r"the inputs should be constant, but found variable|graph mode cannot call this "
                                      r"Python class or function")),
    ("unsupported-python-syntax", re.compile(r"cannot be used outside of the loop body|Parse Lambda Function Fail|"
                                             r"positional information of the lambda expression|"
                                             r"Dictionary\[.*has no attribute|`inplace` in `\w+` should not be True|"
                                             r"local_dict_cnode\] is null|graph mode cannot read an nn\.ParameterDict")),
    ("kernel-failure", re.compile(r"kernel op \[.*\] (resize|launch|init) failed|Kernel build failed")),
]


def classify(exc: BaseException, reason: Optional[str] = None) -> str:
    """The kind id of a fallback caused by ``exc``: its ``fallback_kind`` attribute when it has one (the adapter's
    own exceptions: ``fallback.Uncompilable``, ``graph_semantics.HostRandomDraw``), else the first of
    :data:`_PATTERNS` that matches its text (or ``reason``, its :func:`short_reason`), else ``"compile-error"``."""
    kind = getattr(exc, "fallback_kind", None)
    if kind is not None:
        return get(kind).id
    text = f"{exc}\n{reason or ''}"
    for kind_id, pattern in _PATTERNS:
        if pattern.search(text):
            return kind_id
    return "compile-error"


def short_reason(exc: BaseException, generated: Optional[str] = None, user_file: Optional[str] = None) -> str:
    """One line: the user's ``file:line`` the error points at (when it does) and MindSpore's own cause, generated
    file names mapped back to the user's (:data:`GENERATED_TO_USER`, plus ``generated`` -> ``user_file``;
    ``adapter/ms_errors.py``)."""
    from adapter import ms_errors  # standard library + adapter/userframe only (module docstring)
    mapping = dict(GENERATED_TO_USER)
    if generated and user_file:
        mapping[generated] = user_file
    return ms_errors.one_line(exc, mapping)


def location(reason: str) -> Optional[str]:
    """The ``file:line`` a :func:`short_reason` starts with (after an exception type: ``Uncompilable: f.py:3: ...``),
    or None."""
    match = re.match(r"^(?:\w+: )?(.+?\.py:\d+): ", reason)
    return match.group(1) if match else None


def log(message: str) -> None:
    """``run.py: message`` on stderr (the runtime's one-line notes: fallbacks, compile times)."""
    print(f"run.py: {message}", file=sys.stderr, flush=True)


@dataclasses.dataclass
class FallbackRecord:
    """One fallback as the runtime decided it.

    Attributes:
        kind: a :data:`KINDS` id. scope: ``"step"`` or ``"forward"``.
        where: the user's ``file:line`` of the step site (its ``backward()``) or of the forward's call.
        at: the user's ``file:line`` the reason points at (the line graph mode stopped at), when known.
        reason: the one-line reason the runtime printed.
    """
    kind: str
    scope: str
    where: str
    at: Optional[str]
    reason: str


_records: List[FallbackRecord] = []


def record(kind: str, context: str, where: str, scope: str = "step", at: Optional[str] = None) -> FallbackRecord:
    """Record a fallback of this process (``--explain-json``'s ``fallbacks``).

    Args:
        kind: a :data:`KINDS` id (KeyError otherwise). context: the one-line reason. where: the user's
            ``file:line`` of the site or call. scope: ``"step"`` or ``"forward"``. at: the user's ``file:line``
            the reason points at; default: the one it starts with (:func:`location`).
    """
    found = FallbackRecord(get(kind).id, scope, where, at if at is not None else location(context), context)
    _records.append(found)
    return found


def records() -> List[FallbackRecord]:
    """The fallbacks recorded in this process so far, in order."""
    return list(_records)


# -- --explain's data ----------------------------------------------------------------------------------------------

@dataclasses.dataclass
class StepExplain:
    """One training step site in ``--explain``.

    Attributes:
        where: the user's ``file:line`` of its ``backward()``. loss: the differentiated expression, as written.
        state: ``"compiled"``, ``"eager"`` or ``"not-compiled-yet"`` (the first call is the eager reference step).
        calls: calls of the site so far.
        kind, reason: for ``"eager"``: the :data:`KINDS` id and the one-line reason; else None.
        fused: compiled with ``optimizer.step()`` (at ``optimizer_line``) in the graph, and the clip at
            ``clip_line`` when that was fused too (else None).
        graphs: graphs compiled for it; model_sets: distinct sets of models it ran with (shown when > 1).
        first_compiled_s: seconds of the first compiled call (compile included); median_step_s: median seconds of
            the later compiled calls (None: none yet), over ``steps_timed`` calls.
        host_inputs: for ``"compiled"``: the graph breaks, values computed on the host each step and passed to the
            graph as inputs (``"lam (train.py:43)"``: a host statement split out of the region; ``"warm"``: a Python
            float that changes between steps; ``adapter/host_values.py``); None when none.
    """
    where: str
    loss: str
    state: str
    calls: int
    kind: Optional[str] = None
    reason: Optional[str] = None
    fused: bool = False
    optimizer_line: Optional[int] = None
    clip_line: Optional[int] = None
    graphs: Optional[int] = None
    model_sets: Optional[int] = None
    first_compiled_s: Optional[float] = None
    median_step_s: Optional[float] = None
    steps_timed: Optional[int] = None
    host_inputs: Optional[List[str]] = None

    def format(self) -> str:
        """``--explain``'s line for the site (the words of issue 13's one-line reasons)."""
        if self.state == "eager":
            state = f"eager (PyNative): {self.reason}"
        elif self.state == "not-compiled-yet":
            state = "not compiled yet (first call runs eagerly as the reference step)"
        else:
            clip = f" and clip_grad_norm_ at line {self.clip_line}" if self.clip_line is not None else ""
            fused = f", fused with optimizer.step() at line {self.optimizer_line}{clip}" if self.fused else ""
            median = f"{self.median_step_s:.3f} s" if self.median_step_s is not None else "n/a"
            models = f" for {self.model_sets} sets of models" if (self.model_sets or 0) > 1 else ""
            state = f"compiled (graph mode{fused}); {self.graphs} graph(s){models}, first compiled step " \
                    f"{self.first_compiled_s:.1f} s, steady-state median {median} over {self.steps_timed} steps"
            if self.host_inputs:
                state += f"; graph break: computed on the host each step, graph inputs: {', '.join(self.host_inputs)}"
        return f"{self.where}: backward() of {self.loss} — {state}; {self.calls} calls"


@dataclasses.dataclass
class ForwardExplain:
    """One module whose ``no_grad`` forward went through the compiled-forward path.

    Attributes:
        module: its class name. state: ``"compiled"`` or ``"eager"``.
        input_shapes: distinct input signatures compiled. kind, reason, where: for ``"eager"``: the :data:`KINDS`
            id, the one-line reason, and the user's ``file:line`` of the call that failed to compile.
        eager_calls: calls of a compiled one that ran eagerly, each with an input shape new then (past the first
            few, a shape compiles at its second call: ``adapter/compiled_forward.py``).
    """
    module: str
    state: str
    input_shapes: int = 0
    kind: Optional[str] = None
    reason: Optional[str] = None
    where: Optional[str] = None
    eager_calls: int = 0

    def format(self) -> str:
        if self.state == "eager":
            return f"no_grad forward of {self.module}: PyNative: {self.reason}"
        once = (f"; {self.eager_calls} call(s) with a shape seen for the first time ran eagerly (a new shape compiles at "
                "its second call)") if self.eager_calls else ""
        return f"no_grad forward of {self.module}: compiled (graph mode) for {self.input_shapes} input shape(s)" + once


_NO_STEP = "no training step (x.backward() after its forward in the same block) was found; every backward() ran " \
           "on the eager bridge"


@dataclasses.dataclass
class ExplainOutput:
    """What ``--explain`` says about one process, as data (``--explain-json`` writes it; ``docs/explain_schema.json``).

    Attributes:
        process: which process of a data-parallel job (``"rank 1"``, ``"mp.spawn process 0"``), or ``""``.
        mode: ``--mode`` (``auto``, ``graph``, ``pynative``).
        steps, forwards: per step site and per compiled ``no_grad`` forward, in the order first seen.
        fallbacks: every fallback recorded (:func:`record`), in order.
        compile_cache: the compile cache's line (``adapter.compile_cache.explain_line``), or None.
    """
    process: str = ""
    mode: str = "auto"
    steps: List[StepExplain] = dataclasses.field(default_factory=list)
    forwards: List[ForwardExplain] = dataclasses.field(default_factory=list)
    fallbacks: List[FallbackRecord] = dataclasses.field(default_factory=list)
    compile_cache: Optional[str] = None

    def kinds_seen(self) -> List[str]:
        """The kind ids of the eager steps and forwards and of the records, each once, in registry order."""
        seen = {x.kind for x in [*self.steps, *self.forwards, *self.fallbacks] if x.kind}
        return [k for k in KINDS if k in seen]

    def format(self) -> str:
        """The ``--explain`` block: a header, one line per site and forward (or one saying none was found), the
        compile cache's line, then one line per fallback kind seen, with its hint."""
        lines = [s.format() for s in self.steps] + [f.format() for f in self.forwards]
        if lines and self.compile_cache:
            lines.append(self.compile_cache)
        if not lines:
            lines = [_NO_STEP]
        lines += [f"fallback kind {k}: {KINDS[k].title}; hint: {KINDS[k].hint} (docs/fallback_kinds.md)"
                  for k in self.kinds_seen()]
        header = f"run.py --explain{f' ({self.process})' if self.process else ''}:"
        return "\n  ".join([header] + lines)

    def to_dict(self) -> dict:
        """The JSON object (``docs/explain_schema.json``): these fields, plus ``schema``, ``version`` and ``kinds``
        (id -> title, explanation, hint of each kind that appears)."""
        out = {"schema": SCHEMA_ID, "version": SCHEMA_VERSION}
        out.update(dataclasses.asdict(self))
        out["kinds"] = {k: {"title": KINDS[k].title, "explanation": KINDS[k].explanation, "hint": KINDS[k].hint}
                        for k in self.kinds_seen()}
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n"


def json_path_for(path: str, process: str) -> str:
    """Where a process writes ``--explain-json PATH``: ``PATH`` itself, or for a process of a data-parallel job
    ``PATH`` with the process before the extension (``explain.rank-1.json``), so processes do not overwrite each
    other. ``-``: standard output (every process)."""
    if path == "-" or not process:
        return path
    stem, dot, ext = path.rpartition(".")
    tag = re.sub(r"[^A-Za-z0-9]+", "-", process).strip("-")
    return f"{stem}.{tag}.{ext}" if dot and "/" not in ext else f"{path}.{tag}"


def write_json(output: ExplainOutput, path: str) -> None:
    """Write ``output`` as JSON to ``path`` (``-``: stdout), or, for a process of a data-parallel job, to
    :func:`json_path_for`."""
    text = output.to_json()
    target = json_path_for(path, output.process)
    if target == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with open(target, "w", encoding="utf-8") as f:
        f.write(text)


# -- docs/fallback_kinds.md ----------------------------------------------------------------------------------------

def markdown() -> str:
    """``docs/fallback_kinds.md``: every kind, generated from :data:`KINDS`."""
    out = ["# Fallback kinds",
           "",
           "Generated from `adapter/diagnostics.py` (`KINDS`) by `.venv/bin/python -m adapter.diagnostics > "
           "docs/fallback_kinds.md`; `tests/test_diagnostics.py` checks that this file is up to date.",
           "",
           "A training step site (`loss.backward()` and the statements that compute the loss) or a `no_grad` forward "
           "that does not compile runs in PyNative (eager) instead, with the same values, and `run.py` says so once, "
           "with the user's `file:line`. Each such fallback has one of these kinds: in the runtime's records, in "
           "`run.py --explain` (one `fallback kind` line per kind seen) and `--explain-json` (`kind` fields; schema "
           "`docs/explain_schema.json`), and in `run.py --report`'s graph-mode findings that predict a fallback.",
           "",
           "| kind | what | where | `--report` predicts it |",
           "|---|---|---|---|"]
    out += [f"| `{k.id}` | {k.title} | {', '.join(k.scopes)} | {'yes' if k.reported else ''} |" for k in _KINDS]
    for k in _KINDS:
        out += ["", f"## `{k.id}`: {k.title}", "", k.explanation, "", f"**Hint:** {k.hint}", "",
                f"Occurs in: {', '.join(k.scopes)}. Decided by: {k.decided_by}." +
                (" `run.py --report` predicts it from the script's code." if k.reported else "")]
    return "\n".join(out) + "\n"


# -- docs/explain_schema.json -------------------------------------------------------------------------------------

def _nullable(kind: str) -> dict:
    return {"type": [kind, "null"]}


def json_schema() -> dict:
    """``docs/explain_schema.json``: the JSON Schema (draft 2020-12) of :meth:`ExplainOutput.to_dict`, its kind ids
    from :data:`KINDS`."""
    kind = {"enum": list(KINDS) + [None]}
    string, integer, number = {"type": "string"}, {"type": "integer", "minimum": 0}, {"type": "number", "minimum": 0}
    line = {"type": ["integer", "null"], "minimum": 1}
    where = {"type": "string", "pattern": r"^.+:\d+$"}

    def obj(properties: dict, required=None) -> dict:
        return {"type": "object", "properties": properties, "required": list(required or properties),
                "additionalProperties": False}

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "docs/explain_schema.json",
        "title": "run.py --explain-json",
        "description": "What run.py --explain says about one process, as data (adapter/diagnostics.py, "
                       "ExplainOutput.to_dict). Generated by `.venv/bin/python -m adapter.diagnostics --schema`. "
                       "Fallback kinds: docs/fallback_kinds.md.",
        "type": "object",
        "properties": {
            "schema": {"const": SCHEMA_ID},
            "version": {"const": SCHEMA_VERSION},
            "process": {"type": "string", "description": "'rank N', 'mp.spawn process N', or '' (one process)"},
            "mode": {"enum": ["auto", "graph", "pynative"]},
            "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}},
            "forwards": {"type": "array", "items": {"$ref": "#/$defs/forward"}},
            "fallbacks": {"type": "array", "items": {"$ref": "#/$defs/fallback"}},
            "compile_cache": _nullable("string"),
            "kinds": {"type": "object", "propertyNames": {"enum": list(KINDS)},
                      "additionalProperties": {"$ref": "#/$defs/kind"},
                      "description": "id -> title, explanation, hint of each kind that appears above"},
        },
        "required": ["schema", "version", "process", "mode", "steps", "forwards", "fallbacks", "compile_cache",
                     "kinds"],
        "additionalProperties": False,
        "$defs": {
            "step": obj({
                "where": where, "loss": string,
                "state": {"enum": ["compiled", "eager", "not-compiled-yet"]},
                "calls": integer, "kind": kind, "reason": _nullable("string"), "fused": {"type": "boolean"},
                "optimizer_line": line, "clip_line": line, "graphs": {"type": ["integer", "null"], "minimum": 0},
                "model_sets": {"type": ["integer", "null"], "minimum": 0},
                "first_compiled_s": {"type": ["number", "null"], "minimum": 0},
                "median_step_s": {"type": ["number", "null"], "minimum": 0},
                "steps_timed": {"type": ["integer", "null"], "minimum": 0},
                "host_inputs": {"type": ["array", "null"], "items": string}}),
            "forward": obj({
                "module": string, "state": {"enum": ["compiled", "eager"]}, "input_shapes": integer,
                "kind": kind, "reason": _nullable("string"), "where": _nullable("string"),
                "eager_calls": integer}),
            "fallback": obj({
                "kind": {"enum": list(KINDS)}, "scope": {"enum": ["step", "forward"]}, "where": string,
                "at": _nullable("string"), "reason": string}),
            "kind": obj({"title": string, "explanation": string, "hint": string}),
        },
    }


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m adapter.diagnostics``: docs/fallback_kinds.md on stdout; ``--schema``: docs/explain_schema.json."""
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--schema"]:
        sys.stdout.write(json.dumps(json_schema(), indent=1) + "\n")
    elif not argv:
        sys.stdout.write(markdown())
    else:
        sys.stderr.write("usage: python -m adapter.diagnostics [--schema]\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
