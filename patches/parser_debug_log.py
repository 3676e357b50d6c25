"""MindSpore's graph parser: symbol resolution without formatting a debug message nobody reads.

MindSpore 2.5's ``mindspore._extends.parse.parser.resolve_symbol``, which the graph compiler calls (from C++, by
looking the name up on ``mindspore._extends.parse`` at each call) once per name a compiled function reads, ends with
``logger.debug(f"Found '{symbol}' in {namespace.__str__()}, resolved: {resolve_} / {type(resolve_)}")``: the f-string
is built before ``debug`` checks the level, so every resolution formats the resolved object. For a Parameter that is
its full value text (``tensor_repr``: a device-to-host copy and numpy formatting). Measured: ~0.4 s of a ResNet18
cold compile, and 4,536 calls on a compile-cache re-run (issue 15's notes).

Here ``resolve_symbol`` is the same function without that message while MindSpore's log level is above DEBUG
(``GLOG_v`` != 0); at DEBUG, MindSpore's own runs, messages included. Feature-detected: applied only when the
installed ``resolve_symbol`` has the eager f-string (its source is read once at start-up); a no-op otherwise.

Replaces: ``mindspore._extends.parse.resolve_symbol`` (the name the compiler calls).
"""
import inspect

from . import Patch, get_original, patch_attr

# The eager message of MindSpore 2.5's resolve_symbol (the feature detected in its source).
_EAGER_MESSAGE = 'logger.debug(f"Found \''


_parse_module = None  # mindspore._extends.parse, looked up once (apply or first call)


def _parse():
    """``mindspore._extends.parse``, looked up once: ``backend.internal`` runs ``importlib.import_module`` at each
    call, and the compiler calls :func:`resolve_symbol` once per name a compiled function reads (3,991 times in a
    ResNet18 step's compile: 0.12 s of import machinery)."""
    global _parse_module
    if _parse_module is None:
        from adapter import backend
        _parse_module = backend.internal("parse")
    return _parse_module


def resolve_symbol(namespace, symbol):
    """MindSpore 2.5's ``resolve_symbol`` (``mindspore/_extends/parse/parser.py``) less its debug messages, run while
    MindSpore logs above DEBUG; at DEBUG MindSpore's own. Same returns and the same exceptions (NotImplementedError
    passes through, any other makes the symbol ``mstype._null``)."""
    parser = _parse().parser
    if parser.logger.get_level() == "0":
        return get_original(_parse(), "resolve_symbol")(namespace, symbol)
    try:
        resolve_ = namespace[symbol]
        if isinstance(resolve_, (tuple, list, dict)):
            return resolve_
        if hasattr(resolve_, "__self__") and isinstance(resolve_.__self__, (tuple, list, dict)):
            return resolve_
        if getattr(resolve_, "__hash__") is None:
            return resolve_
        convert_map = parser._convert_map()
        if resolve_ in convert_map:
            resolve_ = convert_map.get(resolve_)
    except Exception as e:  # as MindSpore's: every exception but NotImplementedError makes the symbol null
        if isinstance(e, NotImplementedError):
            raise e
        resolve_ = parser.mstype._null
    if isinstance(resolve_, parser._MindsporeFunctionExecutor):
        resolve_ = resolve_.fn
    return resolve_


def apply() -> None:
    parse = _parse()
    original = get_original(parse, "resolve_symbol")
    try:
        source = inspect.getsource(original)
    except (OSError, TypeError):
        return
    if _EAGER_MESSAGE in source and original is parse.parser.resolve_symbol:
        patch_attr(parse, "resolve_symbol", resolve_symbol)


PATCH = Patch("parser_debug_log", "MindSpore's graph parser resolves names without formatting a debug message "
                                  "(the resolved object's full text) that its log level drops",
              "post-import", apply, replaces=("mindspore._extends.parse.resolve_symbol",),
              optional=("mindspore._extends.parse.resolve_symbol",))  # MindSpore 2.10.0: no eager message
