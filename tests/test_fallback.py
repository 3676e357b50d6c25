"""The one call that decides a step site or compiled forward runs eagerly (adapter/fallback.py, ``run_eagerly``;
issue 32 §5): what it records, prints and raises, on each kind of decision. End to end, tests/test_diagnostics.py
runs one step per kind through it (tests/fixtures/fallback_kinds.py) and checks ``--explain``'s records."""
import pytest

from adapter import diagnostics, fallback


@pytest.fixture
def records(monkeypatch):
    """This process's fallback records, emptied for the test and put back after it; the mode put back too."""
    monkeypatch.setattr(diagnostics, "_records", [])
    monkeypatch.setattr(fallback, "_mode", "auto")
    return diagnostics._records


def test_a_decision_without_an_exception_is_recorded_and_not_printed(records, capsys):
    got = fallback.run_eagerly("train.py:12", kind="custom-grad-scaler", reason="MyScaler.scale(loss) is not "
                               "torch's GradScaler")
    assert got == ("custom-grad-scaler", "MyScaler.scale(loss) is not torch's GradScaler")
    assert [(r.kind, r.scope, r.where, r.at, r.reason) for r in records] == [
        ("custom-grad-scaler", "step", "train.py:12", None, "MyScaler.scale(loss) is not torch's GradScaler")]
    assert capsys.readouterr().err == ""


def test_a_failure_takes_its_kind_and_line_from_the_exception_and_says_it_once(records, capsys):
    exc = fallback.Uncompilable("`with lock:` in the step (only autocast and no-op contexts compile)",
                                "unsupported-context-manager", "train.py:9")
    kind, reason = fallback.run_eagerly("train.py:12", exc=exc, said="the training step runs in PyNative (eager), "
                                                                     "not compiled")
    assert kind == "unsupported-context-manager"
    assert reason == "Uncompilable: `with lock:` in the step (only autocast and no-op contexts compile)"
    assert [(r.kind, r.where, r.at) for r in records] == [("unsupported-context-manager", "train.py:12",
                                                           "train.py:9")]
    assert capsys.readouterr().err == f"run.py: train.py:12: the training step runs in PyNative (eager), not " \
                                      f"compiled: {reason}\n"


def test_mindspore_messages_are_classified_and_a_given_line_wins(records):
    exc = RuntimeError("Type Join Failed: dtype1 = Object")
    assert fallback.run_eagerly("t.py:3", exc=exc, at="t.py:2") == ("compile-error",
                                                                     "RuntimeError: Type Join Failed: dtype1 = Object")
    assert records[-1].at == "t.py:2"
    assert fallback.describe(exc) == ("compile-error", "RuntimeError: Type Join Failed: dtype1 = Object")


def test_graph_mode_records_the_failure_then_raises_without_printing(records, capsys):
    fallback.set_mode("graph")
    exc = RuntimeError("Type Join Failed: dtype1 = Object")
    with pytest.raises(fallback.GraphModeError) as raised:
        fallback.run_eagerly("m.py:5", exc=exc, scope="forward", what="the forward of Net", said="not said")
    assert str(raised.value) == "m.py:5: the forward of Net cannot be compiled (--mode graph): RuntimeError: Type " \
                                "Join Failed: dtype1 = Object"
    assert raised.value.__cause__ is exc
    assert [(r.kind, r.scope) for r in records] == [("compile-error", "forward")]
    assert capsys.readouterr().err == ""
    # a decision made without a failure does not stop a --mode graph run (a custom scaler steps eagerly)
    assert fallback.run_eagerly("m.py:9", kind="non-parameter-leaf", reason="r")[0] == "non-parameter-leaf"


def test_unknown_kinds_and_modes_are_refused(records):
    with pytest.raises(KeyError, match="unknown fallback kind 'nope'"):
        fallback.run_eagerly("t.py:1", kind="nope", reason="r")
    with pytest.raises(KeyError):
        fallback.Uncompilable("x", "nope")
    with pytest.raises(ValueError, match="mode must be one of"):
        fallback.set_mode("eager")
    assert records == []
