"""patches/parser_debug_log.py: MindSpore's graph parser resolves a name without formatting the resolved object
(for a Parameter, its full value text) when its log level drops debug messages; the same results as MindSpore's."""
import mindspore as ms
import numpy as np
import pytest

import patches


class Counted:
    """Counts how often the parser formats it (``str``/``format``/``repr``)."""
    formatted = 0

    def __format__(self, spec):
        Counted.formatted += 1
        return "counted"

    __str__ = __repr__ = lambda self: format(self, "")


@pytest.fixture
def parse():
    from adapter import backend
    return backend.internal("parse")


def _namespace(parse, **values):
    """A MindSpore namespace object over ``values`` (the parser's own class for a function's globals)."""
    from adapter import backend
    return backend.internal("parse.Namespace")("user_globals", dict(values))


def test_resolving_does_not_format_the_resolved_object(parse):
    assert patches.is_patched(parse, "resolve_symbol")
    ns = _namespace(parse, obj=Counted())
    Counted.formatted = 0
    assert isinstance(parse.resolve_symbol(ns, "obj"), Counted)
    assert Counted.formatted == 0
    patches.get_original(parse, "resolve_symbol")(ns, "obj")  # MindSpore's own formats it for a debug line
    assert Counted.formatted >= 1


@pytest.mark.parametrize("symbol", ["obj", "lst", "np", "abs", "missing", "Tensor"])
def test_same_result_as_mindspore(parse, symbol):
    ns = _namespace(parse, obj=Counted(), lst=[1, 2], np=np, abs=abs, Tensor=ms.Tensor)
    ours, theirs = parse.resolve_symbol(ns, symbol), patches.get_original(parse, "resolve_symbol")(ns, symbol)
    assert ours is theirs or ours == theirs


def test_a_compiled_function_resolves_through_it(parse, monkeypatch):
    calls = []
    ours = parse.resolve_symbol
    monkeypatch.setattr(parse, "resolve_symbol", lambda ns, s: calls.append(s) or ours(ns, s))
    weight = ms.Tensor(np.ones(3, np.float32))

    @ms.jit
    def f(x):
        return x * weight

    assert f(ms.Tensor(np.full(3, 2, np.float32))).asnumpy().tolist() == [2, 2, 2]
    assert "weight" in calls
