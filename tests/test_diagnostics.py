"""Fallback kinds (adapter/diagnostics.py, issue 16): one registry shared by the runtime, --explain, --explain-json
and --report.

``tests/fixtures/fallback_kinds.py`` has one small step per kind, its ``backward()`` line marked ``# kind: <id>``;
one run of it (``--explain --explain-json``) must record exactly those kinds, its JSON must validate against
``docs/explain_schema.json``, and ``--report`` on the same file must predict the same kind at the same line where it
predicts a fallback. The JSON Schema is checked with the small structural validator below (the subset of draft 2020-12
the schema uses: type, enum, const, properties, required, additionalProperties, propertyNames, items, minimum,
pattern, $ref to $defs), not the ``jsonschema`` package: that would add four packages (attrs, referencing,
rpds-py with a compiled extension, jsonschema-specifications) to the shared environment for one test.
"""
import json
import os
import re
import subprocess
import sys

import pytest

from support import ROOT

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "fallback_kinds.py")
SCHEMA = os.path.join(ROOT, "docs", "explain_schema.json")
REL = "tests/fixtures/fallback_kinds.py"
#: kinds no small script produces: a guard that StepBuilder.can_fuse makes unreachable, and a chain of three steps'
#: recomputations (dcgan-like, two models and a tensor carried over two steps) that no test here builds; module-hooks
#: is produced (and its record checked) by tests/test_forward_hooks.py, in process
NOT_PRODUCED = {"optimizer-parameter-outside-step", "recomputation-chain", "module-hooks"}


# -- a structural JSON Schema validator (module docstring) ----------------------------------------------------------

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is_type(value, name):
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def validate(value, schema, root=None, path="$"):
    """The errors of ``value`` against ``schema`` (a list of 'path: message'; empty when valid)."""
    root = root if root is not None else schema
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/$defs/"), ref
        return validate(value, root["$defs"][ref[len("#/$defs/"):]], root, path)
    errors = []
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, t) for t in types):
            return [f"{path}: {value!r} is not of type {types}"]
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: {value!r} != {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in {schema['enum']}")
    if "minimum" in schema and _is_type(value, "number") and value < schema["minimum"]:
        errors.append(f"{path}: {value!r} < {schema['minimum']}")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        errors.append(f"{path}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        errors += [f"{path}: missing {k!r}" for k in schema.get("required", []) if k not in value]
        for key, item in value.items():
            if "propertyNames" in schema:
                errors += validate(key, schema["propertyNames"], root, f"{path}.{key}(name)")
            if key in props:
                errors += validate(item, props[key], root, f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path}: unexpected {key!r}")
            elif isinstance(schema.get("additionalProperties"), dict):
                errors += validate(item, schema["additionalProperties"], root, f"{path}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += validate(item, schema["items"], root, f"{path}[{i}]")
    return errors


# -- the registry and its generated docs ----------------------------------------------------------------------------

def test_committed_docs_are_generated_from_the_registry():
    from adapter import diagnostics
    with open(os.path.join(ROOT, "docs", "fallback_kinds.md"), encoding="utf-8") as f:
        assert f.read() == diagnostics.markdown(), "run: .venv/bin/python -m adapter.diagnostics > docs/fallback_kinds.md"
    with open(SCHEMA, encoding="utf-8") as f:
        assert json.load(f) == diagnostics.json_schema(), \
            "run: .venv/bin/python -m adapter.diagnostics --schema > docs/explain_schema.json"


def test_every_kind_has_an_explanation_and_a_hint():
    from adapter import diagnostics
    for kind in diagnostics.KINDS.values():
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", kind.id), kind.id
        assert kind.title and kind.explanation.endswith((".", ")")) and kind.hint, kind
        assert set(kind.scopes) <= {"step", "forward"} and kind.scopes, kind
    with pytest.raises(KeyError, match="unknown fallback kind 'nope'"):
        diagnostics.record("nope", "x", "f.py:1")


def test_classify_reads_the_adapter_exception_kind_then_mindspore_message():
    from adapter import diagnostics
    from adapter.fallback import Uncompilable
    from adapter.graph_semantics import HostRandomDraw
    assert diagnostics.classify(Uncompilable("x", "custom-grad-scaler")) == "custom-grad-scaler"
    with pytest.raises(KeyError):
        Uncompilable("x", "no-such-kind")
    assert diagnostics.classify(HostRandomDraw("np.random.beta", None, "beta")) == "host-random-draw"
    assert diagnostics.classify(RuntimeError("Type Join Failed: dtype1 = Object")) == "compile-error"


def test_a_real_kernel_failure_is_classified_kernel_failure():
    """MindSpore's own error text (an SGD kernel given a gradient of the wrong shape, compiled)."""
    from adapter import diagnostics
    from test_compile_coverage import _kernel_failure
    exc = _kernel_failure()
    assert diagnostics.classify(exc, diagnostics.short_reason(exc)) == "kernel-failure"


def test_location_of_a_reason():
    from adapter.diagnostics import location
    assert location("tests/f.py:9: AttributeError: x") == "tests/f.py:9"
    assert location("Uncompilable: tests/f.py:130: `torch.distributions.Normal(...)` ...") == "tests/f.py:130"
    assert location("/tmp/a b/f.py:3: TypeError: x") == "/tmp/a b/f.py:3"
    assert location("Uncompilable: `with contextlib.ExitStack():` in the step") is None


def test_json_path_per_process():
    from adapter.diagnostics import json_path_for
    assert json_path_for("out/explain.json", "") == "out/explain.json"
    assert json_path_for("out/explain.json", "rank 1") == "out/explain.rank-1.json"
    assert json_path_for("explain", "mp.spawn process 0") == "explain.mp-spawn-process-0"
    assert json_path_for("-", "rank 1") == "-"


def test_the_validator_rejects_what_the_schema_forbids():
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    good = {"schema": "mindtorch-adapter/explain", "version": 1, "process": "", "mode": "auto", "steps": [],
            "forwards": [], "fallbacks": [], "compile_cache": None, "kinds": {}}
    assert validate(good, schema) == []
    step = {"where": "a.py:3", "loss": "loss", "state": "eager", "calls": 2, "kind": "nope", "reason": "r",
            "fused": False, "optimizer_line": None, "clip_line": None, "graphs": None, "model_sets": None,
            "first_compiled_s": None, "median_step_s": None, "steps_timed": None}
    assert any("'nope' not in" in e for e in validate({**good, "steps": [step]}, schema))
    assert any("missing 'kinds'" in e for e in validate({k: v for k, v in good.items() if k != "kinds"}, schema))
    assert any("unexpected 'extra'" in e for e in validate({**good, "extra": 1}, schema))


# -- one run of the fixture -----------------------------------------------------------------------------------------

def _marked(pattern):
    """``{line: kind}`` of the fixture's lines ending with ``# <pattern>: <kind>``."""
    with open(FIXTURE, encoding="utf-8") as f:
        return {i: m.group(1) for i, text in enumerate(f, 1)
                for m in [re.search(rf"# {pattern}: ([a-z-]+)$", text.rstrip())] if m}


@pytest.fixture(scope="module")
def explained(tmp_path_factory):
    out = tmp_path_factory.mktemp("explain") / "explain.json"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "run.py"), "--explain", "--explain-json", str(out),
                           "--no-compile-cache", "--original", FIXTURE], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr[-3000:]
    with open(out, encoding="utf-8") as f:
        return json.load(f), proc.stderr


def test_each_step_records_its_kind(explained):
    data, _ = explained
    ran = [s for s in data["steps"] if s["calls"]]  # every site of the file is listed: anomaly()'s did not run
    assert {int(s["where"].rpartition(":")[2]): s["kind"] for s in ran} == _marked("kind")
    assert all(s["where"].startswith(REL) and s["state"] == "eager" and s["reason"] for s in ran)
    forwards = {int(f["where"].rpartition(":")[2]): f["kind"] for f in data["forwards"] if f["state"] == "eager"}
    assert forwards == _marked("forward kind")
    # one record per fallback, the same kind as the entry, at the same place
    records = {(r["scope"], r["where"]): r["kind"] for r in data["fallbacks"]}
    entries = {("step", s["where"]): s["kind"] for s in ran}
    entries.update({("forward", f["where"]): f["kind"] for f in data["forwards"] if f["state"] == "eager"})
    assert records == entries
    assert sorted(data["kinds"]) == sorted(set(entries.values()))


def test_explain_json_validates_against_the_documented_schema(explained):
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    assert validate(explained[0], schema) == []


def test_explain_text_names_each_kind_with_its_hint(explained):
    from adapter import diagnostics
    data, err = explained
    block = err[err.index("run.py --explain:"):]
    for kind in data["kinds"]:
        assert f"  fallback kind {kind}: {diagnostics.KINDS[kind].title}; hint: {diagnostics.KINDS[kind].hint}" \
               in block, kind
    # the site lines are the words of before (tests/test_compile_coverage.py checks them exactly)
    site = next(line for line, kind in _marked("kind").items() if kind == "host-sync")
    read = next(line for line, kind in _marked("predicted").items() if kind == "host-sync")
    assert f"{REL}:{site}: backward() of loss — eager (PyNative): {REL}:{read}: AttributeError: In JIT strict " \
           "mode" in block


def test_every_kind_is_produced_by_a_real_fallback(explained):
    """The fixture's kinds, plus kernel-failure (test above) and pynative-mode (the fixture's anomaly(): the script
    turns anomaly detection on, and the steps run in PyNative from then on)."""
    from adapter import diagnostics
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "run.py"), "--explain-json", "-", "--original", FIXTURE,
                           "anomaly"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    anomaly = json.loads(proc.stdout[proc.stdout.index("{"):])
    line, kind = next(iter(_marked("anomaly kind").items()))
    assert [(s["where"], s["kind"]) for s in anomaly["steps"] if s["calls"]] == [(f"{REL}:{line}", kind)]
    assert [(r["where"], r["kind"]) for r in anomaly["fallbacks"]] == [(f"{REL}:{line}", kind)]
    assert "run.py --explain" not in proc.stderr  # --explain-json alone prints no text block
    produced = set(explained[0]["kinds"]) | {"kernel-failure", kind}
    assert produced == set(diagnostics.KINDS) - NOT_PRODUCED


def test_report_predicts_the_kind_the_run_records(explained):
    """--report's graph-mode findings that predict a fallback: the same kind, at the line the run's reason names;
    the registry's ``reported`` kinds are those --report predicts."""
    from adapter import diagnostics
    from app.tools.migration_report import build_report, format_report
    report = build_report(FIXTURE)
    predicted = {(f.line, f.kind) for f in report.graph_mode if f.kind}
    assert predicted == set(_marked("predicted").items()), predicted
    assert {k for _, k in predicted} == {k.id for k in diagnostics.KINDS.values() if k.reported}
    data = explained[0]
    recorded = {(int(r["at"].rpartition(":")[2]), r["kind"]) for r in data["fallbacks"] if r["at"]}
    assert predicted <= recorded, (predicted, recorded)
    text = format_report(report)
    assert "[fallback kind: host-sync]" in text and "[fallback kind: inplace-tensor-method]" in text


def test_report_predicts_a_with_block_only_when_its_context_is_known(tmp_path):
    """A context named through torch or contextlib is judged (autocast and no-ops compile, others do not); a local
    name (amp_train.py's ``amp_autocast = torch.cuda.amp.autocast if amp else contextlib.suppress``) is not: it may be
    either at run time."""
    from app.tools.migration_report import build_report
    script = tmp_path / "contexts.py"
    script.write_text(
        "import contextlib, torch, torch.nn as nn\n"
        "net = nn.Linear(2, 1); opt = torch.optim.SGD(net.parameters(), lr=0.1); x = torch.ones(3, 2)\n"
        "amp_autocast = contextlib.suppress\n"
        "for step in range(3):\n"
        "    opt.zero_grad()\n"
        "    with amp_autocast():\n"
        "        out = net(x)\n"
        "    with torch.autocast('cpu'):\n"
        "        out = out * 2\n"
        "    with contextlib.ExitStack():\n"
        "        loss = out.sum()\n"
        "    loss.backward()\n"
        "    opt.step()\n")
    found = [(f.line, f.name, f.kind) for f in build_report(str(script)).graph_mode if f.kind]
    assert found == [(10, "with contextlib.ExitStack()", "unsupported-context-manager")], found
