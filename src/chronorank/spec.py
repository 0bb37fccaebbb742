"""The spec grammar shared by kernels, configs, the CLI and benchmark logs.

A spec is ``name`` or ``name(key=value, ...)``, for example
``weibull(half_life_days=90, shape=2)``. Values are numbers (``3``, ``-0.5``, ``1e-3``,
``inf``, ``nan``), quoted strings, ``true`` / ``false`` / ``none`` (any case), and lists or
tuples of values (``points=[(0, 1), (30, 1), (180, 0.3)]``).

Specs are parsed with :mod:`ast` and a whitelist of node types; nothing is evaluated.
:func:`format_spec` writes a spec that :func:`parse_spec` reads back to equal values.
"""

from __future__ import annotations

import ast
import keyword
import math
import re
from collections.abc import Mapping
from typing import Any

from chronorank.errors import InvalidInput

__all__ = ["parse_spec", "format_spec"]

_MAX_SPEC_CHARS = 10_000
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_WORDS: dict[str, Any] = {
    "true": True,
    "false": False,
    "none": None,
    "null": None,
    "inf": math.inf,
    "infinity": math.inf,
    "nan": math.nan,
}
_EXAMPLE = "weibull(half_life_days=90, shape=2)"


def _bad(text: str, why: str) -> InvalidInput:
    shown = text if len(text) <= 200 else text[:200] + "..."
    return InvalidInput(
        f"malformed spec {shown!r}: {why}. Write it as name(key=value, ...), e.g. {_EXAMPLE!r}"
    )


def _value(node: ast.AST, text: str) -> Any:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (bool, int, float, str)) or node.value is None:
            return node.value
        raise _bad(text, f"unsupported value {ast.unparse(node)!r}")
    if isinstance(node, ast.Name):
        word = node.id.lower()
        if word in _WORDS:
            return _WORDS[word]
        raise _bad(
            text,
            f"bare word {node.id!r} is not a value; quote strings ('{node.id}') "
            "or use a number, true, false or none",
        )
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _value(node.operand, text)
        if isinstance(inner, bool) or not isinstance(inner, (int, float)):
            raise _bad(text, f"sign applied to a non-number in {ast.unparse(node)!r}")
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.List):
        return [_value(e, text) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_value(e, text) for e in node.elts)
    raise _bad(text, f"unsupported value {ast.unparse(node)!r}")


def parse_spec(text: str) -> tuple[str, dict[str, Any]]:
    """Parse ``"name(key=value, ...)"`` into ``(name, {key: value})``.

    >>> parse_spec("weibull(half_life_days=90, shape=2)")
    ('weibull', {'half_life_days': 90, 'shape': 2})
    >>> parse_spec("exponential")
    ('exponential', {})

    Raises :class:`~chronorank.errors.InvalidInput` showing the text when it is malformed
    (positional arguments, repeated keys, expressions, unbalanced brackets).
    """
    if not isinstance(text, str):
        raise InvalidInput(
            f"spec must be a string like {_EXAMPLE!r}, got {type(text).__name__} {text!r}"
        )
    stripped = text.strip()
    if not stripped:
        raise _bad(text, "it is empty")
    if len(stripped) > _MAX_SPEC_CHARS:
        raise _bad(text, f"it is longer than {_MAX_SPEC_CHARS} characters")
    if "(" not in stripped and _NAME_RE.match(stripped):
        return stripped, {}
    try:
        tree = ast.parse(stripped, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        raise _bad(text, f"it is not valid syntax ({type(exc).__name__})") from None
    call = tree.body
    if isinstance(call, ast.Name):
        return call.id, {}
    if not isinstance(call, ast.Call):
        raise _bad(text, "expected a name followed by (key=value, ...)")
    func = call.func
    if isinstance(func, ast.Name):
        name = func.id
    elif isinstance(func, ast.Attribute):
        name = ast.unparse(func)
    else:
        raise _bad(text, "the name before '(' must be a plain identifier")
    if call.args:
        raise _bad(
            text,
            f"positional value {ast.unparse(call.args[0])!r} needs a key (key=value)",
        )
    params: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise _bad(text, "'**' expansion is not allowed")
        if kw.arg in params:
            raise _bad(text, f"key {kw.arg!r} is given twice")
        try:
            params[kw.arg] = _value(kw.value, text)
        except RecursionError:
            raise _bad(text, "values are nested too deeply") from None
    return name, params


def _format_value(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_format_value(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(_format_value(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    # numpy scalars and other number-likes
    if hasattr(value, "item") and callable(value.item):
        item = value.item()
        if isinstance(item, (bool, int, float, str)):
            return _format_value(item)
    raise InvalidInput(
        f"spec value {value!r} of type {type(value).__name__} cannot be written in a spec; "
        "use numbers, strings, true/false/none or lists/tuples of them"
    )


def format_spec(name: str, params: Mapping[str, Any] | None = None) -> str:
    """Write ``name(key=value, ...)`` so that :func:`parse_spec` reads back the same values.

    >>> format_spec("weibull", {"half_life_days": 90, "shape": 2.0})
    'weibull(half_life_days=90, shape=2.0)'
    """
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise InvalidInput(
            f"spec name {name!r} must be an identifier such as 'exponential'"
        )
    if not params:
        return name
    parts = []
    for key, value in params.items():
        if not isinstance(key, str) or not key.isidentifier() or keyword.iskeyword(key):
            raise InvalidInput(f"spec key {key!r} must be an identifier such as 'half_life_days'")
        parts.append(f"{key}={_format_value(value)}")
    return f"{name}({', '.join(parts)})"
